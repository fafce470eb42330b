package framework

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// The suite's results are report's model; this file reads them out of a Ginkgo report.

// SpecResultsFromReport turns the It specs of a Ginkgo report into SpecResults; labels that are
// rule ids of cat become Rules. Suite-level node failures are returned separately.
func SpecResultsFromReport(cat *spec.Catalogue, r types.Report) (specs []report.SpecResult, suiteFailures []string) {
	setupFailed := ""
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt && sr.State.Is(types.SpecStateFailureStates) {
			suiteFailures = append(suiteFailures, fmt.Sprintf("%s failed: %s", sr.LeafNodeType, sr.FailureMessage()))
			if sr.LeafNodeType.Is(types.NodeTypeBeforeSuite|types.NodeTypeSynchronizedBeforeSuite) && setupFailed == "" {
				setupFailed = "not run: the suite setup (BeforeSuite) failed"
			}
		}
	}
	if setupFailed == "" && len(r.SpecialSuiteFailureReasons) > 0 {
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
		switch {
		case sr.State.Is(types.SpecStateInterrupted):
			// Stopped by Ctrl-C or the run's timeout: undecided, not failed (the run fails).
			res.State = report.Skipped
			res.Reason = "interrupted: " + report.Sentence(sr.FailureMessage())
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
			if sr.State.Is(types.SpecStatePending) {
				res.Reason = "disabled: pending"
			} else if res.Reason == "" && setupFailed != "" {
				res.Reason = setupFailed
			} else if res.Reason == "" {
				res.Reason = report.NotSelected
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
			case UnjudgedRulesEntry:
				res.Unjudged = strings.Fields(e.StringRepresentation())
			case FailedRulesEntry:
				if res.State == report.Failed {
					res.FailedRules = strings.Fields(e.StringRepresentation())
				}
			}
		}
		specs = append(specs, report.Settle(res))
	}
	return specs, suiteFailures
}

// ginkgoBeforeAllSkip is the message Ginkgo gives every spec of an Ordered container after the first
// when the container's BeforeAll called Skip; only the first spec carries the BeforeAll's reason.
const ginkgoBeforeAllSkip = "Spec skipped because Skip() was called in BeforeAll"

// beforeAllSkips maps the location of each container whose BeforeAll skipped to the reason it gave,
// read from the one spec that carries it (its failure is in that BeforeAll).
func beforeAllSkips(reports types.SpecReports) map[string]string {
	out := map[string]string{}
	for _, sr := range reports {
		f := sr.Failure
		if sr.LeafNodeType != types.NodeTypeIt || !sr.State.Is(types.SpecStateSkipped) ||
			f.FailureNodeType != types.NodeTypeBeforeAll || f.FailureNodeContext != types.FailureNodeInContainer ||
			f.FailureNodeContainerIndex >= len(sr.ContainerHierarchyLocations) {
			continue
		}
		out[sr.ContainerHierarchyLocations[f.FailureNodeContainerIndex].String()] = f.Message
	}
	return out
}

// beforeAllReason is the reason of the innermost enclosing BeforeAll that skipped, for a spec Ginkgo
// skipped with its generic message; "" otherwise.
func beforeAllReason(skips map[string]string, sr types.SpecReport) string {
	if !sr.State.Is(types.SpecStateSkipped) || sr.Failure.Message != ginkgoBeforeAllSkip {
		return ""
	}
	for i := len(sr.ContainerHierarchyLocations) - 1; i >= 0; i-- {
		if reason, ok := skips[sr.ContainerHierarchyLocations[i].String()]; ok {
			return reason
		}
	}
	return ""
}

// BuildResults computes the specs, the rule verdicts and their counts from a Ginkgo report.
func BuildResults(cat *spec.Catalogue, r types.Report) report.Results {
	specs, suiteFailures := SpecResultsFromReport(cat, r)
	suiteFailures = append(suiteFailures, r.SpecialSuiteFailureReasons...)
	res := report.Results{
		Suite:         r.SuiteDescription,
		SuiteFailures: suiteFailures,
		Specs:         specs,
		Rules:         report.Verdicts(Rules(cat), specs),
	}
	res.SpecCounts, res.RuleCounts = report.Count(specs, res.Rules)
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

// RelLocation is a code location relative to the module root (conformance/specs/auth.go:22): no
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

// AreaOf is the area of a spec declared in file: the spec file's name without .go.
func AreaOf(file string) string {
	return strings.TrimSuffix(path.Base(filepath.ToSlash(file)), ".go")
}
