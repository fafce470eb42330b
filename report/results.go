package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// ReportVersion is the version of the JSON report's shape (Results.ReportVersion): 2 has
// snake_case keys throughout, the states below and coverage. Reports without it are of version 1.
const ReportVersion = 2

// Spec outcomes and rule verdicts: one vocabulary for the console, JSON, JUnit and HTML.
const (
	Passed = "passed"
	Failed = "failed"
	// Blocked: a spec stopped on a rule it does not check itself (its setup call broke another
	// rule); a rule whose specs all stopped before deciding it.
	Blocked = "blocked"
	// Skipped: a selected spec that did not run, with the reason (what it needs).
	Skipped = "skipped"
	// NotSelected: a spec the run did not select (the label filter, or another shard's share);
	// counted apart, never among the skips.
	NotSelected = "not_selected"
	// Interrupted: a selected spec that did not run to its end because the run was stopped
	// (Ctrl-C, --timeout).
	Interrupted = "interrupted"
	// StrictOnly: a spec or rule about the reference's own choices (rules.yaml judged
	// strict-only), judged only with --strict: outside the counts of a run that is not strict.
	StrictOnly = "strict_only"
	// PartlyJudged: a rule some of whose specs ran and passed while others did not run.
	PartlyJudged = "partly_judged"
	NotCovered   = "not_covered"
	Unobservable = "unobservable"
)

// maxFailuresPerRule is how many failed specs a rule verdict details; the spec list has them all.
const maxFailuresPerRule = 3

// NotSelectedReason is the reason of a spec the label filter left out (state NotSelected).
const NotSelectedReason = "not selected by the label filter"

// OtherShardReason is the reason of a spec of another shard's share (state NotSelected).
func OtherShardReason(shard string) string {
	return "in another shard's share (this run is shard " + shard + "; merge-reports joins the shards)"
}

// SpecResult is one spec's outcome.
type SpecResult struct {
	Text string `json:"text"` // the spec's full text: its containers' texts, then its own
	// Leaf is the spec's own text, without the texts of its containers.
	Leaf string `json:"leaf_text"`
	// Area is the interface area the spec belongs to: its spec file's name up to an underscore (auth,
	// webhooks, ...: uploads_finalize.go is of uploads).
	Area   string   `json:"area"`
	Labels []string `json:"labels"`           // its Ginkgo labels: rule ids and needs
	Rules  []string `json:"rules"`            // the ids of the rules it checks
	State  string   `json:"state"`            // passed, failed, blocked, skipped, not_selected, interrupted or strict_only
	Reason string   `json:"reason,omitempty"` // the failure message or why it was skipped
	// Skip is the typed reason of a spec that did not run (skipped, strict-only, interrupted, not
	// selected); its Text is Reason. Nil for a spec that ran, and in reports written before skip
	// reasons were typed (SkipReason then types the text).
	Skip *SkipReason `json:"skip,omitempty"`
	// Location is the spec's own file and line, relative to the module root.
	Location string        `json:"location,omitempty"`
	Duration time.Duration `json:"duration_ns"` // how long it ran
	// FailureLocation is where the failed assertion is (file:line, relative to the module root).
	FailureLocation string `json:"failure_location,omitempty"`
	// FailedRules are the rules the failed assertion checked (Spec.Step, or the rule that owns the
	// shape of an answer that broke the REST description); empty when the spec did not say, and
	// then every rule of the spec fails.
	FailedRules []string `json:"failed_rules,omitempty"`
	// BlockedBy are the rules a blocked spec stopped on: rules it does not check itself, failed by
	// a call it needed (they are FailedRules; the spec's own rules stay undecided).
	BlockedBy []string `json:"blocked_by,omitempty"`
	// Operation is the operation of the REST description of FailedCall ("GET /capabilities/{id}");
	// empty when that call was outside it or the failure names no call.
	Operation string `json:"operation,omitempty"`
	// FailedCall is the call whose answer the failed assertion judged (the one its message shows),
	// bodies cut: the shortest transcript that shows the failure. Empty when the failure names no
	// call of the spec (a failure about state, a setup failure).
	FailedCall string `json:"failed_call,omitempty"`
	// LastCall is set when FailedCall is not: the last call the spec made before failing, bodies
	// cut (what it saw last, not a call the failure judged). Calls after the failure are never it.
	LastCall string `json:"last_call,omitempty"`
	// Transcript is the failed spec's calls, redacted.
	Transcript string `json:"transcript,omitempty"`
	// Unjudged are rules of the spec it does not decide on this run: rules whose every assertion is
	// the reference's own choice (rules.yaml judged strict-only), on a run that is not strict. The
	// spec counts for them as skipped (UnjudgedReason), whatever its state.
	Unjudged []string `json:"unjudged,omitempty"`
}

// Why is the spec's typed skip reason: Skip, or when it has none, its Reason typed by its
// words (ParseSkip).
func (s SpecResult) Why() SkipReason {
	if s.Skip != nil {
		return *s.Skip
	}
	return ParseSkip(s.Reason)
}

// UnjudgedReason is why a rule a spec carries is not decided by it (SpecResult.Unjudged).
const UnjudgedReason = "judged only with --strict: the rule is the reference's own choice where the interface text leaves it open " +
	"(rules.yaml basis reference, judged strict-only)"

// Settle decides between failed and blocked for a spec whose assertion failed: when the failed
// step checked only rules the spec does not carry, the spec is blocked by them (its own rules are
// left undecided); otherwise it failed. A failure whose step checked only rules the run does not
// judge (Unjudged) is strict-only with UnjudgedReason: the reference's own choice never fails a
// run that is not strict. A skip whose reason is the reference's own choice (judged only with
// --strict) is strict-only too. Other outcomes are returned as they are.
func Settle(s SpecResult) SpecResult {
	if s.State == Skipped && NeedOf(s) == NeedStrictOnly {
		s.State = StrictOnly
		return s
	}
	if s.State != Failed || len(s.FailedRules) == 0 {
		return s
	}
	if !slices.ContainsFunc(s.FailedRules, func(id string) bool { return !slices.Contains(s.Unjudged, id) }) {
		s.State = StrictOnly
		s.Reason = UnjudgedReason + "; it differs: " + Sentence(s.Reason)
		return s
	}
	for _, id := range s.FailedRules {
		if slices.Contains(s.Rules, id) {
			return s
		}
	}
	s.State = Blocked
	s.BlockedBy = append([]string(nil), s.FailedRules...)
	return s
}

// Selected reports whether the run selected the spec (the label filter and the shard).
func (s SpecResult) Selected() bool { return s.State != NotSelected }

// Counted reports whether the spec is in the run's tallies: selected, and not a strict-only
// spec of a run that is not strict.
func (s SpecResult) Counted() bool { return s.State != NotSelected && s.State != StrictOnly }

// Blamed are the rules a spec's failure is charged to: for a failed spec, the rules of the step
// that failed (else all its rules); for a blocked spec, the rules it was blocked by; for any other
// spec, its rules.
func (s SpecResult) Blamed() []string {
	switch s.State {
	case Blocked:
		return s.BlockedBy
	case Failed:
	default:
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

// Stopped reports whether the spec stopped on a failure: failed or blocked.
func (s SpecResult) Stopped() bool { return s.State == Failed || s.State == Blocked }

// Rule is a rule of the catalogue (spec/rules.yaml) as reports show it. It has the fields of
// spec.Rule, so a catalogue rule converts to it (report.Rule(r)), without this package linking
// the contract loader (and kin-openapi under it).
type Rule struct {
	ID             string   `json:"id"`                       // e.g. AUTH-004
	Level          string   `json:"level"`                    // MUST, SHOULD or MAY
	Section        string   `json:"section"`                  // of the interface text that states the rule
	Statement      string   `json:"statement"`                // what the rule requires, in the text's words
	Needs          []string `json:"needs"`                    // what a spec needs to judge it (control, receiver, ...)
	Interpretation string   `json:"interpretation,omitempty"` // how we read the text where it is silent or open
	Basis          string   `json:"basis,omitempty"`          // of the interpretation: text or reference
	Judged         string   `json:"judged,omitempty"`         // with basis reference: open, text-part or strict-only
	Unobservable   string   `json:"unobservable,omitempty"`   // why no black-box test can check it; empty when one can
	Audit          string   `json:"audit,omitempty"`          // what the mock's client audit checks of a client instead
}

// Observable reports whether a black-box test can check the rule.
func (r Rule) Observable() bool { return r.Unobservable == "" }

// OfText reports a rule the interface text decides (the rules coverage counts): observable, and
// not the reference's own choice through and through (judged strict-only).
func (r Rule) OfText() bool { return r.Observable() && r.Judged != "strict-only" }

// RuleVerdict is one rule's verdict over the specs that carry its id.
type RuleVerdict struct {
	Rule    Rule   `json:"rule"`    // the rule as the catalogue has it
	Verdict string `json:"verdict"` // passed, failed, skipped, not_covered, unobservable, ...
	// Reason: for failed, the failure messages; for skipped, why; for unobservable, the catalogue's
	// reason; empty otherwise.
	Reason string   `json:"reason,omitempty"`
	Specs  []string `json:"specs,omitempty"` // the texts of the specs that carry its id
	// SpecsRun is how many of Specs ran to a verdict on the rule (passed or failed on it).
	SpecsRun int `json:"specs_run"`
	// Needs are what the specs that did not run on the rule lacked (NeedOf), the one that weighs
	// most first (NeedOrder); empty when every spec ran.
	Needs []string `json:"needs,omitempty"`
}

// Counts are tallies of outcomes. NotSelected counts the specs (rules) the run did not select
// (the label filter, another shard); Skipped counts the selected specs that did not run, each with
// its reason; Interrupted those a stopped run did not finish; StrictOnly the specs and rules judged
// only with --strict on a run that is not strict; PartlyJudged the rules some of whose specs did
// not run. None of these is ever among the passed.
type Counts struct {
	Passed       int `json:"passed"`        // specs or rules that passed
	Failed       int `json:"failed"`        // that failed
	Blocked      int `json:"blocked"`       // that stopped on a call another rule failed
	Skipped      int `json:"skipped"`       // selected, did not run: each with its reason
	Interrupted  int `json:"interrupted"`   // a stopped run did not finish them
	NotSelected  int `json:"not_selected"`  // the label filter or another shard left them out
	StrictOnly   int `json:"strict_only"`   // judged only with --strict, on a run that is not
	PartlyJudged int `json:"partly_judged"` // rules some of whose specs did not run
	NotCovered   int `json:"not_covered"`   // rules no spec carries
	Unobservable int `json:"unobservable"`  // rules no black-box test can check
}

// Results is everything a report shows.
type Results struct {
	// ReportVersion is ReportVersion when the report is written (WriteJSON sets it).
	ReportVersion int           `json:"report_version"`
	Suite         string        `json:"suite"`                    // the suite's name
	Run           RunInfo       `json:"run"`                      // the run's header
	Succeeded     bool          `json:"succeeded"`                // true when no spec failed and the suite itself did not
	SuiteFailures []string      `json:"suite_failures,omitempty"` // what failed outside any spec (setup, a run with no spec)
	Specs         []SpecResult  `json:"specs"`                    // every spec, selected or not
	Rules         []RuleVerdict `json:"rules"`                    // every rule of the catalogue with its verdict
	SpecCounts    Counts        `json:"spec_counts"`              // tallies over Specs
	RuleCounts    Counts        `json:"rule_counts"`              // tallies over Rules
	// Coverage is how many of the text rules the run judged, and what the others need.
	Coverage Coverage `json:"coverage"`
	// Advisories are the run's differences from the reference's own choices (advisory.go): never
	// failures, charged to no rule.
	Advisories []Advisory `json:"advisories,omitempty"`
}

// Verdicts gives every rule its verdict, in the order given: unobservable if the catalogue says
// so; otherwise failed if a spec's failure is charged to it (the failed step's rules, Spec.Step;
// a failed spec that charged no step fails every rule it carries; a blocked spec fails the rules it
// was blocked by, whether it carries them or not); else passed if every one of its specs passed,
// partly judged if some passed and others did not run (never passed: a skip is never a pass);
// else, when none ran, blocked, skipped, interrupted, strict-only or not selected, in that order of
// precedence, by what its specs did; else not covered. A strict-only spec counts for a rule of the
// text only when the rule has no other spec (then the rule is skipped, needing --strict).
func Verdicts(rules []Rule, specs []SpecResult) []RuleVerdict {
	byRule := map[string][]SpecResult{}
	for _, s := range specs {
		blamed := s.Blamed()
		for _, id := range s.Rules {
			if slices.Contains(s.Unjudged, id) {
				u := s
				u.State, u.Reason = StrictOnly, UnjudgedReason
				byRule[id] = append(byRule[id], u)
				continue
			}
			if s.Stopped() && !slices.Contains(blamed, id) {
				// The spec stopped on another rule before deciding this one.
				u := s
				u.State = Blocked
				u.Reason = "blocked by " + strings.Join(blamed, ", ") + ": " + Sentence(s.Reason)
				byRule[id] = append(byRule[id], u)
				continue
			}
			byRule[id] = append(byRule[id], s)
		}
		if s.State == Blocked {
			// The rules it was blocked by failed on a call the spec made, though it does not check them.
			for _, id := range blamed {
				if !slices.Contains(s.Rules, id) {
					byRule[id] = append(byRule[id], s)
				}
			}
		}
	}
	out := make([]RuleVerdict, 0, len(rules))
	for _, rule := range rules {
		v := RuleVerdict{Rule: rule}
		ss := byRule[rule.ID]
		if rule.OfText() {
			// A strict-only spec does not judge a text rule on a run that is not strict (it is about
			// the reference's own choice and carries the text rules its calls touch): it is no spec of
			// the rule on this run, unless the rule has no other.
			judging := slices.DeleteFunc(slices.Clone(ss), func(s SpecResult) bool { return s.State == StrictOnly })
			if len(judging) > 0 {
				ss = judging
			}
		}
		for _, s := range ss {
			v.Specs = append(v.Specs, s.Text)
		}
		var failed, passed []SpecResult
		notRun := map[string][]SpecResult{}
		for _, s := range ss {
			switch s.State {
			case Failed:
				failed = append(failed, s)
			case Blocked:
				if slices.Contains(s.BlockedBy, rule.ID) {
					failed = append(failed, s)
				} else {
					notRun[Blocked] = append(notRun[Blocked], s)
				}
			case Passed:
				passed = append(passed, s)
			case StrictOnly:
				if rule.OfText() {
					// A text rule is never strict-only: its spec did not run, for a reason.
					notRun[Skipped] = append(notRun[Skipped], s)
				} else {
					notRun[StrictOnly] = append(notRun[StrictOnly], s)
				}
			case NotSelected, Interrupted:
				notRun[s.State] = append(notRun[s.State], s)
			default:
				notRun[Skipped] = append(notRun[Skipped], s)
			}
		}
		v.SpecsRun = len(failed) + len(passed)
		var all []SpecResult
		for _, state := range []string{Blocked, Skipped, Interrupted, StrictOnly, NotSelected} {
			all = append(all, notRun[state]...)
		}
		v.Needs = needsOf(all)
		switch {
		case !rule.Observable():
			v.Verdict, v.Reason, v.Needs = Unobservable, rule.Unobservable, nil
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
		case len(passed) > 0 && len(all) == 0:
			v.Verdict = Passed
		case len(passed) > 0:
			v.Verdict = PartlyJudged
			v.Reason = fmt.Sprintf("partly judged (%d of %d specs); not run: %s", len(passed), len(ss), distinctReasons(all))
		case len(ss) == 0:
			v.Verdict = NotCovered
		default:
			for _, state := range []string{Blocked, Skipped, Interrupted, StrictOnly, NotSelected} {
				if len(notRun[state]) > 0 {
					v.Verdict, v.Reason = state, distinctReasons(notRun[state])
					break
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// distinctReasons joins the specs' distinct reasons, sorted.
func distinctReasons(specs []SpecResult) string {
	seen := map[string]bool{}
	var reasons []string
	for _, s := range specs {
		if !seen[s.Reason] {
			seen[s.Reason] = true
			reasons = append(reasons, s.Reason)
		}
	}
	sort.Strings(reasons)
	return strings.Join(reasons, "; ")
}

// Count tallies spec outcomes and rule verdicts; a spec the run did not select counts as not
// selected, never as skipped.
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
	case Blocked:
		c.Blocked++
	case Skipped:
		c.Skipped++
	case Interrupted:
		c.Interrupted++
	case NotSelected:
		c.NotSelected++
	case StrictOnly:
		c.StrictOnly++
	case PartlyJudged:
		c.PartlyJudged++
	case NotCovered:
		c.NotCovered++
	case Unobservable:
		c.Unobservable++
	}
}

// Tally computes the counts and the coverage of r from its specs and rule verdicts.
func (r *Results) Tally() {
	r.SpecCounts, r.RuleCounts = Count(r.Specs, r.Rules)
	r.Coverage = CoverageOf(r.Rules)
}

// RuleLine is the console's rule tally over the rules the run counts: "rules: N passed, N
// partly judged, N failed, N skipped, N not covered, N unobservable", with blocked, interrupted
// and not selected when there are any; the strict-only rules of a run that is not strict after a
// semicolon, outside the counts.
func (r Results) RuleLine() string {
	c := r.RuleCounts
	out := fmt.Sprintf("rules: %d passed, %d partly judged, %d failed", c.Passed, c.PartlyJudged, c.Failed)
	if c.Blocked > 0 {
		out += fmt.Sprintf(", %d blocked", c.Blocked)
	}
	out += fmt.Sprintf(", %d skipped", c.Skipped)
	if c.Interrupted > 0 {
		out += fmt.Sprintf(", %d interrupted (not run)", c.Interrupted)
	}
	if c.NotSelected > 0 {
		out += fmt.Sprintf(", %d not selected", c.NotSelected)
	}
	out += fmt.Sprintf(", %d not covered, %d unobservable", c.NotCovered, c.Unobservable)
	if c.StrictOnly > 0 {
		out += fmt.Sprintf("; %d strict-only (not judged against another server)", c.StrictOnly)
	}
	return out
}

// SpecLine is the spec tally of the selected specs: "N passed, N failed, N skipped", with "N
// blocked" after the failed when specs were blocked, "N interrupted (not run)" when the run was
// stopped, then, outside the counts, the strict-only specs and those the run did not select.
func (r Results) SpecLine() string {
	c := r.SpecCounts
	out := fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed)
	if c.Blocked > 0 {
		out += fmt.Sprintf(", %d blocked", c.Blocked)
	}
	out += fmt.Sprintf(", %d skipped", c.Skipped)
	if c.Interrupted > 0 {
		out += fmt.Sprintf(", %d interrupted (not run)", c.Interrupted)
	}
	var apart []string
	if c.StrictOnly > 0 {
		apart = append(apart, fmt.Sprintf("%d strict-only, judged with --strict", c.StrictOnly))
	}
	if c.NotSelected > 0 {
		apart = append(apart, fmt.Sprintf("%d not selected", c.NotSelected))
	}
	if len(apart) > 0 {
		out += " (" + strings.Join(apart, "; ") + ")"
	}
	return out
}

// Executed is how many selected specs ran to a verdict: passed, failed or blocked.
func (c Counts) Executed() int { return c.Passed + c.Failed + c.Blocked }

// Err is nil when the run succeeded, else why it did not: failed or blocked specs, a suite node
// that failed, or no spec executed at all.
func (r Results) Err() error {
	c := r.SpecCounts
	switch {
	case c.Failed > 0 && c.Blocked > 0:
		return fmt.Errorf("conformance: %d specs failed, %d blocked", c.Failed, c.Blocked)
	case c.Failed > 0:
		return fmt.Errorf("conformance: %d specs failed", c.Failed)
	case c.Blocked > 0:
		return fmt.Errorf("conformance: %d specs blocked by failed rules", c.Blocked)
	case len(r.SuiteFailures) > 0:
		return fmt.Errorf("conformance: the suite failed: %s", strings.Join(r.SuiteFailures, "; "))
	case c.Executed() == 0 && r.Run.Shard != "" && r.Run.Cancelled == "":
		// One shard of a split run with nothing that ran: the merge of all shards decides.
		return nil
	case c.Executed() == 0 && c.Interrupted > 0:
		return fmt.Errorf("conformance: the run was stopped before any spec ran (%d interrupted)", c.Interrupted)
	case c.Executed() == 0:
		return fmt.Errorf("conformance: no spec executed (%d skipped): a run that checks nothing fails", c.Skipped)
	case !r.Succeeded:
		return fmt.Errorf("conformance: the suite did not succeed")
	}
	return nil
}
