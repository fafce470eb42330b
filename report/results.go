package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
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
	Text string `json:"text"`
	// Leaf is the spec's own text, without the texts of its containers.
	Leaf string `json:"leaf_text"`
	// Area is the interface area the spec belongs to: its spec file's name (auth, webhooks, ...).
	Area   string   `json:"area"`
	Labels []string `json:"labels"`
	Rules  []string `json:"rules"`
	State  string   `json:"state"`            // passed, failed or skipped
	Reason string   `json:"reason,omitempty"` // the failure message or why it was skipped
	// Location is the spec's own file and line, relative to the module root.
	Location string        `json:"location,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// FailureLocation is where the failed assertion is (file:line, relative to the module root).
	FailureLocation string `json:"failure_location,omitempty"`
	// FailedRules are the rules the failed assertion checked (Spec.Step); empty when the spec did
	// not say, and then every rule of the spec fails.
	FailedRules []string `json:"failed_rules,omitempty"`
	// LastCall is the failed spec's last call, bodies cut: the shortest transcript that shows it.
	LastCall string `json:"last_call,omitempty"`
	// Transcript is the failed spec's calls, redacted.
	Transcript string `json:"transcript,omitempty"`
}

// Blamed are the rules a failed spec fails: the rules of the step that failed, else all its rules.
func (s SpecResult) Blamed() []string {
	if s.State != Failed {
		return s.Rules
	}
	var out []string
	for _, id := range s.FailedRules {
		if slices.Contains(s.Rules, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return s.Rules
	}
	return out
}

// Rule is a rule of the catalogue (spec/rules.yaml) as reports show it. It has the fields of
// spec.Rule, so a catalogue rule converts to it (report.Rule(r)), without this package linking
// the contract loader (and kin-openapi under it).
type Rule struct {
	ID             string   `json:"id"`
	Level          string   `json:"level"` // MUST, SHOULD or MAY
	Section        string   `json:"section"`
	Statement      string   `json:"statement"`
	Needs          []string `json:"needs"`
	Interpretation string   `json:"interpretation,omitempty"`
	Basis          string   `json:"basis,omitempty"` // of the interpretation: text or reference
	Unobservable   string   `json:"unobservable,omitempty"`
	Audit          string   `json:"audit,omitempty"`
}

// Observable reports whether a black-box test can check the rule.
func (r Rule) Observable() bool { return r.Unobservable == "" }

// RuleVerdict is one rule's verdict over the specs that carry its id.
type RuleVerdict struct {
	Rule    Rule   `json:"rule"`
	Verdict string `json:"verdict"`
	// Reason: for failed, the failure messages; for skipped, why; for unobservable, the catalogue's
	// reason; empty otherwise.
	Reason string   `json:"reason,omitempty"`
	Specs  []string `json:"specs,omitempty"`
}

// Counts are tallies of outcomes.
type Counts struct {
	Passed, Failed, Skipped, NotCovered, Unobservable int
}

// Results is everything a report shows.
type Results struct {
	Suite         string        `json:"suite"`
	Run           RunInfo       `json:"run"`
	Succeeded     bool          `json:"succeeded"`
	SuiteFailures []string      `json:"suite_failures,omitempty"`
	Specs         []SpecResult  `json:"specs"`
	Rules         []RuleVerdict `json:"rules"`
	SpecCounts    Counts        `json:"spec_counts"`
	RuleCounts    Counts        `json:"rule_counts"`
	// Advisories are the run's differences from the reference's own choices (advisory.go): never
	// failures, charged to no rule.
	Advisories []Advisory `json:"advisories,omitempty"`
}

// Verdicts gives every rule of cat its verdict, in catalogue order: unobservable if the catalogue
// says so; otherwise failed if a spec failed an assertion charged to it (Spec.Step; a failed spec
// that charged no step fails every rule it carries), else passed if at least one spec passed, else
// skipped if it has specs (all skipped, or failed on another rule's step first), else not covered.
func Verdicts(rules []Rule, specs []SpecResult) []RuleVerdict {
	byRule := map[string][]SpecResult{}
	for _, s := range specs {
		blamed := s.Blamed()
		for _, id := range s.Rules {
			if s.State == Failed && !slices.Contains(blamed, id) {
				// The spec stopped on another rule's step before deciding this one.
				u := s
				u.State = Skipped
				u.Reason = "undecided: the spec failed first on " + strings.Join(blamed, ", ")
				byRule[id] = append(byRule[id], u)
				continue
			}
			byRule[id] = append(byRule[id], s)
		}
	}
	out := make([]RuleVerdict, 0, len(rules))
	for _, rule := range rules {
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
			// The reason names the failed specs and what each said; their transcripts are in the spec
			// list, once.
			var reasons []string
			for i, s := range failed {
				if i == maxFailuresPerRule {
					reasons = append(reasons, fmt.Sprintf("... and %d more failed specs (see the spec list)", len(failed)-i))
					break
				}
				reasons = append(reasons, s.Text+": "+Sentence(s.Reason))
			}
			v.Reason = strings.Join(reasons, "\n")
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

// Count tallies spec outcomes and rule verdicts.
func Count(specs []SpecResult, rules []RuleVerdict) (spec, rule Counts) {
	for _, s := range specs {
		spec.add(s.State)
	}
	for _, v := range rules {
		rule.add(v.Verdict)
	}
	return spec, rule
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
