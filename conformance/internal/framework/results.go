package framework

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// The suite's results are report's model; this file reads them out of a Ginkgo report.

// Selection is what a run selected, for telling a spec it left out (not selected) from one it
// selected that did not run (skipped, interrupted). The zero value infers it from the report: a
// spec Ginkgo skipped without a reason was not selected.
type Selection struct {
	// Match reports whether the label filter selects a spec's labels; nil: inferred.
	Match func(labels []string) bool
	// InShare reports whether a spec (by full text) is in this run's share of a split run; nil:
	// every spec is.
	InShare func(text string) bool
	// ShareReason is the reason of a spec the filter selects but another share holds.
	ShareReason string
	// Unjudged, when set, names the rules of ids the run does not judge (strict-only rules on a
	// run that is not strict): every spec carries them as unjudged, whether it ran or was selected
	// or not, so those rules stay outside the counts (report.SpecResult.Unjudged).
	Unjudged func(ids []string) []string
}

// selected reports whether sel selects sr, and the reason when it does not; known is false when
// sel has no Match (then the caller infers).
func (sel Selection) selected(sr types.SpecReport) (ok bool, reason string, known bool) {
	if sel.Match == nil {
		return false, "", false
	}
	if !sel.Match(sr.Labels()) {
		return false, report.NotSelectedReason, true
	}
	if sel.InShare != nil && !sel.InShare(sr.FullText()) {
		return false, sel.ShareReason, true
	}
	return true, "", true
}

// stopReason is how a report says the run was stopped (Ctrl-C, the suite's timeout); "" when it
// was not.
func stopReason(r types.Report) string {
	for _, reason := range r.SpecialSuiteFailureReasons {
		l := strings.ToLower(reason)
		if strings.Contains(l, "timeout") || strings.Contains(l, "interrupt") {
			return reason
		}
	}
	return ""
}

// SpecResultsFromReport turns the It specs of a Ginkgo report into SpecResults with the selection
// inferred (SpecResultsOf).
func SpecResultsFromReport(cat *spec.Catalogue, r types.Report) (specs []report.SpecResult, suiteFailures []string) {
	return SpecResultsOf(cat, r, Selection{})
}

// SpecResultsOf turns the It specs of a Ginkgo report into SpecResults; labels that are rule ids
// of cat become Rules. A spec sel leaves out is not selected; a selected spec a stopped run did
// not finish is interrupted. Suite-level node failures are returned separately.
func SpecResultsOf(cat *spec.Catalogue, r types.Report, sel Selection) (specs []report.SpecResult, suiteFailures []string) {
	setupFailed := ""
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt && sr.State.Is(types.SpecStateFailureStates) {
			suiteFailures = append(suiteFailures, fmt.Sprintf("%s failed: %s", sr.LeafNodeType, sr.FailureMessage()))
			if sr.LeafNodeType.Is(types.NodeTypeBeforeSuite|types.NodeTypeSynchronizedBeforeSuite) && setupFailed == "" {
				setupFailed = "not run: the suite setup (BeforeSuite) failed"
			}
		}
	}
	stopped := stopReason(r)
	if setupFailed == "" && len(r.SpecialSuiteFailureReasons) > 0 && stopped == "" {
		setupFailed = "not run: " + r.SpecialSuiteFailureReasons[0]
	}
	beforeAll := beforeAllSkips(r.SpecReports)
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		res := report.SpecResult{
			Text:     sr.FullText(),
			Leaf:     sr.LeafNodeText,
			Area:     AreaOf(sr.LeafNodeLocation.FileName),
			Labels:   sr.Labels(),
			Location: RelLocation(sr.LeafNodeLocation.FileName, sr.LeafNodeLocation.LineNumber),
			Duration: sr.RunTime,
		}
		for _, l := range res.Labels {
			if _, ok := cat.Get(l); ok {
				res.Rules = append(res.Rules, l)
			}
		}
		in, outReason, known := sel.selected(sr)
		switch {
		case known && !in:
			res.State, res.Reason = report.NotSelected, outReason
		case sr.State.Is(types.SpecStateInterrupted):
			// Stopped by Ctrl-C or the run's timeout: undecided, not failed (the run fails).
			res.State = report.Interrupted
			res.Reason = "stopped while it ran: " + report.Sentence(sr.FailureMessage())
		case sr.State.Is(types.SpecStateFailureStates):
			res.State = report.Failed
			res.Reason = sr.FailureMessage()
			res.FailureLocation = RelLocation(sr.Failure.Location.FileName, sr.Failure.Location.LineNumber)
			for _, af := range sr.AdditionalFailures {
				res.Reason += "\n" + af.Failure.Message
			}
		case sr.State.Is(types.SpecStatePassed):
			res.State = report.Passed
		default: // skipped or pending
			res.State = report.Skipped
			res.Reason = sr.FailureMessage()
			if reason := beforeAllReason(beforeAll, sr); reason != "" {
				res.Reason = reason
			}
			switch {
			case sr.State.Is(types.SpecStatePending):
				res.Reason = "disabled: pending"
			case res.Reason != "":
			case setupFailed != "":
				res.Reason = setupFailed
			case stopped != "" && (known || sr.Failure.Message != ""):
				res.State, res.Reason = report.Interrupted, "not run: the run was stopped before it ("+stopped+")"
			case known:
				res.Reason = "not run: the run ended before it (--fail-fast, or a failure in another process)"
			case stopped != "":
				// Inferred: a stopped run skips what it did not reach without a reason too, so a spec
				// without one may have been selected; say both.
				res.State, res.Reason = report.NotSelected, "not selected, or not run: the run was stopped ("+stopped+")"
			default:
				res.State, res.Reason = report.NotSelected, report.NotSelectedReason
			}
		}
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case TranscriptEntry:
				res.Transcript = e.StringRepresentation()
			case FailedCallEntry:
				res.FailedCall = e.StringRepresentation()
			case LastCallEntry:
				res.LastCall = e.StringRepresentation()
			case OperationEntry:
				res.Operation = e.StringRepresentation()
			case SkipEntry:
				var why report.SkipReason
				if json.Unmarshal([]byte(e.StringRepresentation()), &why) == nil && why.Text == res.Reason {
					res.Skip = &why
				}
			case UnjudgedRulesEntry:
				res.Unjudged = strings.Fields(e.StringRepresentation())
			case FailedRulesEntry:
				if res.State == report.Failed {
					res.FailedRules = strings.Fields(e.StringRepresentation())
				}
			}
		}
		if res.Skip == nil && res.State == report.Skipped {
			if why, ok := beforeAll[beforeAllKey(sr, beforeAll)]; ok && why.Text == res.Reason {
				res.Skip = &why
			}
		}
		switch {
		case res.Skip != nil:
		case res.State == report.Skipped:
			why := report.ParseSkip(res.Reason)
			res.Skip = &why
		case res.State == report.Interrupted:
			why := report.NewSkip(report.SkipNotRun, report.NeedInterrupted, res.Reason)
			res.Skip = &why
		}
		if sel.Unjudged != nil && len(res.Unjudged) == 0 {
			res.Unjudged = sel.Unjudged(res.Rules)
		}
		specs = append(specs, report.Settle(res))
	}
	return specs, suiteFailures
}

// ginkgoBeforeAllSkip is the message Ginkgo gives every spec of an Ordered container after the first
// when the container's BeforeAll called Skip; only the first spec carries the BeforeAll's reason.
const ginkgoBeforeAllSkip = "Spec skipped because Skip() was called in BeforeAll"

// beforeAllSkips maps the location of each container whose BeforeAll skipped to the reason it gave,
// read from the one spec that carries it (its failure is in that BeforeAll), typed when the
// BeforeAll typed it (SkipFor).
func beforeAllSkips(reports types.SpecReports) map[string]report.SkipReason {
	out := map[string]report.SkipReason{}
	for _, sr := range reports {
		f := sr.Failure
		if sr.LeafNodeType != types.NodeTypeIt || !sr.State.Is(types.SpecStateSkipped) ||
			f.FailureNodeType != types.NodeTypeBeforeAll || f.FailureNodeContext != types.FailureNodeInContainer ||
			f.FailureNodeContainerIndex >= len(sr.ContainerHierarchyLocations) {
			continue
		}
		why := report.ParseSkip(f.Message)
		for _, e := range sr.ReportEntries {
			var typed report.SkipReason
			if e.Name == SkipEntry && json.Unmarshal([]byte(e.StringRepresentation()), &typed) == nil && typed.Text == f.Message {
				why = typed
			}
		}
		out[sr.ContainerHierarchyLocations[f.FailureNodeContainerIndex].String()] = why
	}
	return out
}

// beforeAllReason is the reason of the innermost enclosing BeforeAll that skipped, for a spec Ginkgo
// skipped with its generic message; "" otherwise.
func beforeAllReason(skips map[string]report.SkipReason, sr types.SpecReport) string {
	if k := beforeAllKey(sr, skips); k != "" {
		return skips[k].Text
	}
	return ""
}

// beforeAllKey is the location of the innermost enclosing container whose BeforeAll skipped sr with
// Ginkgo's generic message (a key of skips); "" when there is none.
func beforeAllKey(sr types.SpecReport, skips map[string]report.SkipReason) string {
	if !sr.State.Is(types.SpecStateSkipped) || sr.Failure.Message != ginkgoBeforeAllSkip {
		return ""
	}
	for i := len(sr.ContainerHierarchyLocations) - 1; i >= 0; i-- {
		if _, ok := skips[sr.ContainerHierarchyLocations[i].String()]; ok {
			return sr.ContainerHierarchyLocations[i].String()
		}
	}
	return ""
}

// BuildResults computes the specs, the rule verdicts and their counts from a Ginkgo report, with
// the selection inferred (BuildResultsOf).
func BuildResults(cat *spec.Catalogue, r types.Report) report.Results {
	return BuildResultsOf(cat, r, Selection{})
}

// BuildResultsOf computes the specs, the rule verdicts, their counts and the coverage from a Ginkgo
// report of a run that selected sel.
func BuildResultsOf(cat *spec.Catalogue, r types.Report, sel Selection) report.Results {
	specs, suiteFailures := SpecResultsOf(cat, r, sel)
	suiteFailures = append(suiteFailures, r.SpecialSuiteFailureReasons...)
	res := report.Results{
		Suite:         r.SuiteDescription,
		SuiteFailures: suiteFailures,
		Specs:         specs,
		Rules:         report.Verdicts(Rules(cat), specs),
	}
	res.Tally()
	res.Succeeded = r.SuiteSucceeded && res.SpecCounts.Failed+res.SpecCounts.Blocked == 0 && len(suiteFailures) == 0 &&
		res.SpecCounts.Executed() > 0
	return res
}

// Rules is the catalogue's rules as reports show them, in catalogue order.
func Rules(cat *spec.Catalogue) []report.Rule {
	out := make([]report.Rule, len(cat.Rules))
	for i, r := range cat.Rules {
		out[i] = report.Rule(r)
	}
	return out
}

// RelLocation is a code location relative to the module root (conformance/internal/specs/auth.go:22): no
// path of the machine that built the binary.
func RelLocation(file string, line int) string {
	if file == "" {
		return ""
	}
	file = filepath.ToSlash(file)
	if i := strings.LastIndex(file, "/conformance/"); i >= 0 {
		file = file[i+1:]
	} else {
		file = path.Base(file)
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// AreaOf is the area of a spec declared in file: the spec file's name without .go, up to its first
// underscore, so an area's specs may be spread over files named after what they check
// (uploads_finalize.go is of the area uploads).
func AreaOf(file string) string {
	area, _, _ := strings.Cut(strings.TrimSuffix(path.Base(filepath.ToSlash(file)), ".go"), "_")
	return area
}
