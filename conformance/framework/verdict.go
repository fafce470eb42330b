package framework

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/spec"
)

// Spec outcomes and rule verdicts.
const (
	Passed       = "passed"
	Failed       = "failed"
	Skipped      = "skipped"
	NotCovered   = "not covered"
	Unobservable = "unobservable"
)

// maxFailuresPerRule is how many failed specs a rule verdict details; the spec list has them all.
const maxFailuresPerRule = 3

// NotSelected is the reason given for a spec the label filter left out.
const NotSelected = "disabled: not selected by the label filter"

// SpecResult is one spec's outcome.
type SpecResult struct {
	Text     string        `json:"text"`
	Labels   []string      `json:"labels"`
	Rules    []string      `json:"rules"`
	State    string        `json:"state"`            // passed, failed or skipped
	Reason   string        `json:"reason,omitempty"` // the failure message or why it was skipped
	Location string        `json:"location,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Transcript is the failed spec's calls, redacted.
	Transcript string `json:"transcript,omitempty"`
}

// RuleVerdict is one rule's verdict over the specs that carry its id.
type RuleVerdict struct {
	Rule    spec.Rule `json:"rule"`
	Verdict string    `json:"verdict"`
	// Reason: for failed, the failure messages; for skipped, why; for unobservable, the catalogue's
	// reason; empty otherwise.
	Reason     string   `json:"reason,omitempty"`
	Specs      []string `json:"specs,omitempty"`
	Transcript string   `json:"transcript,omitempty"`
}

// Counts are tallies of outcomes.
type Counts struct {
	Passed, Failed, Skipped, NotCovered, Unobservable int
}

// Results is everything a report shows.
type Results struct {
	Suite         string        `json:"suite"`
	Succeeded     bool          `json:"succeeded"`
	SuiteFailures []string      `json:"suite_failures,omitempty"`
	Specs         []SpecResult  `json:"specs"`
	Rules         []RuleVerdict `json:"rules"`
	SpecCounts    Counts        `json:"spec_counts"`
	RuleCounts    Counts        `json:"rule_counts"`
}

// SpecResultsFromReport turns the It specs of a Ginkgo report into SpecResults; labels that are
// rule ids of cat become Rules. Suite-level node failures are returned separately.
func SpecResultsFromReport(cat *spec.Catalogue, r types.Report) (specs []SpecResult, suiteFailures []string) {
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
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		res := SpecResult{
			Text:     sr.FullText(),
			Labels:   sr.Labels(),
			Location: sr.LeafNodeLocation.String(),
			Duration: sr.RunTime,
		}
		for _, l := range res.Labels {
			if _, ok := cat.Get(l); ok {
				res.Rules = append(res.Rules, l)
			}
		}
		switch {
		case sr.State.Is(types.SpecStateFailureStates):
			res.State = Failed
			res.Reason = sr.FailureMessage()
			for _, af := range sr.AdditionalFailures {
				res.Reason += "\n" + af.Failure.Message
			}
		case sr.State.Is(types.SpecStatePassed):
			res.State = Passed
		default: // skipped or pending
			res.State = Skipped
			res.Reason = sr.FailureMessage()
			if sr.State.Is(types.SpecStatePending) {
				res.Reason = "disabled: pending"
			} else if res.Reason == "" && setupFailed != "" {
				res.Reason = setupFailed
			} else if res.Reason == "" {
				res.Reason = NotSelected
			}
		}
		for _, e := range sr.ReportEntries {
			if e.Name == TranscriptEntry {
				res.Transcript = e.StringRepresentation()
			}
		}
		specs = append(specs, res)
	}
	return specs, suiteFailures
}

// Verdicts gives every rule of cat its verdict, in catalogue order: unobservable if the catalogue
// says so; otherwise failed if any spec carrying its id failed, else passed if at least one passed,
// else skipped if it has specs (all skipped), else not covered.
func Verdicts(cat *spec.Catalogue, specs []SpecResult) []RuleVerdict {
	byRule := map[string][]SpecResult{}
	for _, s := range specs {
		for _, id := range s.Rules {
			byRule[id] = append(byRule[id], s)
		}
	}
	out := make([]RuleVerdict, 0, len(cat.Rules))
	for _, rule := range cat.Rules {
		v := RuleVerdict{Rule: rule}
		ss := byRule[rule.ID]
		for _, s := range ss {
			v.Specs = append(v.Specs, s.Text)
		}
		var failed, passed, skipped []SpecResult
		for _, s := range ss {
			switch s.State {
			case Failed:
				failed = append(failed, s)
			case Passed:
				passed = append(passed, s)
			default:
				skipped = append(skipped, s)
			}
		}
		switch {
		case !rule.Observable():
			v.Verdict, v.Reason = Unobservable, rule.Unobservable
		case len(failed) > 0:
			v.Verdict = Failed
			var reasons, transcripts []string
			for i, s := range failed {
				if i == maxFailuresPerRule {
					reasons = append(reasons, fmt.Sprintf("... and %d more failed specs (see the spec list)", len(failed)-i))
					break
				}
				reasons = append(reasons, s.Text+": "+s.Reason)
				if s.Transcript != "" {
					transcripts = append(transcripts, "=== "+s.Text+" ===\n"+s.Transcript)
				}
			}
			v.Reason = strings.Join(reasons, "\n\n")
			v.Transcript = strings.Join(transcripts, "\n")
		case len(passed) > 0:
			v.Verdict = Passed
		case len(skipped) > 0:
			v.Verdict = Skipped
			seen := map[string]bool{}
			var reasons []string
			for _, s := range skipped {
				if !seen[s.Reason] {
					seen[s.Reason] = true
					reasons = append(reasons, s.Reason)
				}
			}
			sort.Strings(reasons)
			v.Reason = strings.Join(reasons, "; ")
		default:
			v.Verdict = NotCovered
		}
		out = append(out, v)
	}
	return out
}

// BuildResults computes the specs, the rule verdicts and their counts from a Ginkgo report.
func BuildResults(cat *spec.Catalogue, r types.Report) Results {
	specs, suiteFailures := SpecResultsFromReport(cat, r)
	suiteFailures = append(suiteFailures, r.SpecialSuiteFailureReasons...)
	res := Results{
		Suite:         r.SuiteDescription,
		SuiteFailures: suiteFailures,
		Specs:         specs,
		Rules:         Verdicts(cat, specs),
	}
	for _, s := range specs {
		res.SpecCounts.add(s.State)
	}
	for _, v := range res.Rules {
		res.RuleCounts.add(v.Verdict)
	}
	res.Succeeded = r.SuiteSucceeded && res.SpecCounts.Failed == 0 && len(suiteFailures) == 0 &&
		res.SpecCounts.Passed+res.SpecCounts.Failed > 0
	return res
}

func (c *Counts) add(state string) {
	switch state {
	case Passed:
		c.Passed++
	case Failed:
		c.Failed++
	case Skipped:
		c.Skipped++
	case NotCovered:
		c.NotCovered++
	case Unobservable:
		c.Unobservable++
	}
}

// RuleLine is the console's rule tally: "rules: N passed, N failed, N skipped, N not covered, N
// unobservable".
func (r Results) RuleLine() string {
	c := r.RuleCounts
	return fmt.Sprintf("rules: %d passed, %d failed, %d skipped, %d not covered, %d unobservable",
		c.Passed, c.Failed, c.Skipped, c.NotCovered, c.Unobservable)
}

// SpecLine is the console's last line, the spec tally: "N passed, N failed, N skipped".
func (r Results) SpecLine() string {
	c := r.SpecCounts
	return fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
}

// Err is nil when the run succeeded, else why it did not: failed specs, a suite node that failed,
// or no spec executed at all.
func (r Results) Err() error {
	switch {
	case r.SpecCounts.Failed > 0:
		return fmt.Errorf("conformance: %d specs failed", r.SpecCounts.Failed)
	case len(r.SuiteFailures) > 0:
		return fmt.Errorf("conformance: the suite failed: %s", strings.Join(r.SuiteFailures, "; "))
	case r.SpecCounts.Passed+r.SpecCounts.Failed == 0:
		return fmt.Errorf("conformance: no spec executed (%d skipped): a run that checks nothing fails", r.SpecCounts.Skipped)
	case !r.Succeeded:
		return fmt.Errorf("conformance: the suite did not succeed")
	}
	return nil
}
