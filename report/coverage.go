package report

import (
	"fmt"
	"slices"
	"sort"
)

// The needs a spec that did not run lacked, as reports group them (NeedOf): what a run would have
// to offer for the rules it left unjudged to be judged.
const (
	NeedControl         = "control"          // the test-control API
	NeedTestHelpers     = "test_helpers"     // test helpers scoped to the caller's own objects
	NeedTestInputs      = "test_inputs"      // test-mode inputs that force outcomes
	NeedReceiver        = "receiver"         // a webhook receiver the target can reach
	NeedSecondWorkspace = "second_workspace" // a key of a second workspace
	NeedReadKey         = "read_key"         // a read-only key
	NeedProfile         = "profile"          // what the target must name or declare (shapes, paths, ids)
	NeedSlow            = "slow"             // --slow: specs that take minutes
	NeedBudget          = "budget"           // credits to spend (--budget)
	NeedStrictOnly      = "strict_only"      // the reference's own choice: judged only with --strict
	NeedOther           = "other"            // anything else the target does not offer or name
	NeedBlocked         = "blocked"          // a failure of another rule stopped the spec first
	NeedInterrupted     = "interrupted"      // the run was stopped before the spec ended
	NeedNotSelected     = "not_selected"     // the label filter or the shard left the spec out
	NeedNoSpec          = "no_spec"          // no spec checks the rule
)

// NeedOrder lists the needs from the one that weighs most (a rule that lacks several is listed
// under the first): what a target must offer before what a run may add.
var NeedOrder = []string{NeedControl, NeedTestHelpers, NeedTestInputs, NeedReceiver, NeedSecondWorkspace, NeedReadKey, NeedProfile,
	NeedOther, NeedSlow, NeedBudget, NeedStrictOnly, NeedBlocked, NeedInterrupted, NeedNotSelected, NeedNoSpec}

// NeedTitles say each need in words, for the console and the HTML report.
var NeedTitles = map[string]string{
	NeedControl:         "need the control API (--control-url)",
	NeedTestHelpers:     "need test helpers scoped to the caller's own objects",
	NeedTestInputs:      "need test-mode inputs that force outcomes (the profile's features: [test-inputs] and test_keys)",
	NeedReceiver:        "need a webhook receiver the target can reach",
	NeedSecondWorkspace: "need a key of a second workspace (--other-key)",
	NeedReadKey:         "need a read-only key (--read-key)",
	NeedProfile: "need the target to name or declare what the text leaves open " +
		"(--shape, --live-path, --key-header, --retired-capability-id, ... or the --config file)",
	NeedOther:       "need something else the target does not offer or name",
	NeedSlow:        "need --slow or --real-time (minutes of target time), or --real-time --long (hours)",
	NeedBudget:      "need credits to spend (--budget)",
	NeedStrictOnly:  "differ from the reference's own choice or assert it only (judged with --strict)",
	NeedBlocked:     "blocked by a failure of another rule",
	NeedInterrupted: "not run: the run was stopped (Ctrl-C, --timeout)",
	NeedNotSelected: "not selected (label filter or another shard)",
	NeedNoSpec:      "no spec checks them",
}

// NeedOf is what a spec that did not run lacked, told from its state and its typed skip reason
// (SpecResult.Skip; ParseSkip of its text when it has none). A spec that ran needs nothing ("").
func NeedOf(s SpecResult) string {
	switch s.State {
	case Passed, Failed:
		return ""
	case Blocked:
		return NeedBlocked
	case Interrupted:
		return NeedInterrupted
	case NotSelected:
		return NeedNotSelected
	case StrictOnly:
		return NeedStrictOnly
	}
	return s.Why().Need
}

// needsOf are the distinct needs of specs, in NeedOrder.
func needsOf(specs []SpecResult) []string {
	var out []string
	for _, s := range specs {
		if n := NeedOf(s); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return slices.Index(NeedOrder, out[i]) < slices.Index(NeedOrder, out[j]) })
	return out
}

// Coverage is how much of the interface text a run judged: over the text rules (Rule.OfText), a
// rule is judged when every spec that checks it ran to a verdict on it (it passed, or it failed:
// a failure decides), partly judged when some ran and others did not, not judged when none ran.
// ByNeed counts the partly and not judged rules under the need that weighs most among those its
// specs lacked (NeedOrder), so its counts add up to PartlyJudged + NotJudged.
type Coverage struct {
	Judged       int            `json:"judged"`        // text rules every spec of which ran to a verdict on it
	PartlyJudged int            `json:"partly_judged"` // text rules some of whose specs ran, others not
	NotJudged    int            `json:"not_judged"`    // text rules none of whose specs ran
	Total        int            `json:"total"`         // text rules of the catalogue (Rule.OfText)
	ByNeed       map[string]int `json:"by_need"`       // partly and not judged rules by the need that weighs most
	// ByTier counts the partly and not judged rules under the lowest tier that would judge them
	// fully (GroupOf): the highest tier among the needs their specs lacked. A rule whose specs
	// lacked only what no tier offers (--slow, --budget, a state of the target, ...) counts under
	// that need in ByNeed alone, so ByTier adds up to at most PartlyJudged + NotJudged.
	ByTier map[Tier]int `json:"by_tier"`
	// StrictOnly counts the rules judged only with --strict (the reference's own choices): the
	// judged ones on a strict run, and all of them.
	StrictOnlyJudged int `json:"strict_only_judged"`
	StrictOnlyTotal  int `json:"strict_only_total"` // rules judged only with --strict, judged or not
}

// CoverageOf computes the coverage of rule verdicts.
func CoverageOf(rules []RuleVerdict) Coverage {
	c := Coverage{ByNeed: map[string]int{}, ByTier: map[Tier]int{}}
	for _, v := range rules {
		if !v.Rule.Observable() {
			continue
		}
		if !v.Rule.OfText() {
			c.StrictOnlyTotal++
			if v.Verdict == Passed || v.Verdict == Failed {
				c.StrictOnlyJudged++
			}
			continue
		}
		c.Total++
		switch v.Verdict {
		case Passed, Failed:
			c.Judged++
			continue
		case PartlyJudged:
			c.PartlyJudged++
		default:
			c.NotJudged++
		}
		need := NeedNoSpec
		if len(v.Needs) > 0 {
			need = v.Needs[0]
		}
		c.ByNeed[need]++
		if t, ok := TierOfRule(v); ok {
			c.ByTier[t]++
		}
	}
	return c
}

// Percent is the share of the text rules judged, in percent (0 when there are none).
func (c Coverage) Percent() float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(c.Judged) / float64(c.Total)
}

// Line is the coverage in words: "judged N of M text rules (P%), K partly judged, L not judged".
func (c Coverage) Line() string {
	return fmt.Sprintf("judged %d of %d text rules (%.1f%%), %d partly judged, %d not judged", c.Judged, c.Total, c.Percent(),
		c.PartlyJudged, c.NotJudged)
}

// LineAt is Line naming the run's profile: "judged N of M text rules at profile P (x%), ...".
func (c Coverage) LineAt(profile string) string {
	if profile == "" {
		return c.Line()
	}
	return fmt.Sprintf("judged %d of %d text rules at profile %s (%.1f%%), %d partly judged, %d not judged", c.Judged, c.Total, profile,
		c.Percent(), c.PartlyJudged, c.NotJudged)
}

// CoverageLine is the run's coverage at its profile (Coverage.LineAt).
func (r Results) CoverageLine() string { return r.Coverage.LineAt(r.Run.Profile) }

// TierOfRule is the lowest tier that would judge a rule not fully judged: the highest tier among
// the needs its specs lacked (RuleVerdict.Needs); ok is false when none of them is a tier.
func TierOfRule(v RuleVerdict) (t Tier, ok bool) {
	for _, n := range v.Needs {
		if nt, has := TierOfNeed(n); has && (!ok || t.Less(nt)) {
			t, ok = nt, true
		}
	}
	return t, ok
}

// Headline is a run's last word: the coverage at the run's profile (with --strict, of the
// strict-only rules too), the mode, the target and the credits spent.
func (r Results) Headline() string {
	out := r.CoverageLine()
	if c := r.Coverage; r.Run.Strict && c.StrictOnlyTotal > 0 {
		out += fmt.Sprintf(", and %d of %d strict-only rules (--strict)", c.StrictOnlyJudged, c.StrictOnlyTotal)
	}
	if r.Run.Mode != "" {
		out += "; mode: " + r.Run.Mode
	}
	if r.Run.Target != "" {
		out += "; target: " + r.Run.Target
	}
	out += fmt.Sprintf("; credits spent: %d", r.Run.CreditsSpent)
	if r.Run.Budget > 0 {
		out += fmt.Sprintf(" of a budget of %d", r.Run.Budget)
	}
	return out
}

// NeedGroup is the text rules a run did not fully judge that one tier (Tier set) or one need
// that is no tier (Need) would judge, by id.
type NeedGroup struct {
	Need  string   // the need (report.Need*) of a group that is no tier; for a tier, its name
	Tier  Tier     // the lowest tier that would judge the group's rules fully; "" when it is no tier
	Title string   // the heading the reports print over the group
	Rules []string // ids, partly judged ones marked "(partly: ...)"
}

// NotJudged groups the text rules not fully judged by the lowest tier that would judge them
// (TierOfRule), least tier first; the rules whose specs lacked only what no tier offers (a run
// setting, a state of the target, a failure that blocked them, ...) follow, grouped by that need
// (the one that weighs most, NeedOrder).
func (r Results) NotJudged() []NeedGroup {
	byTier, byNeed := map[Tier][]string{}, map[string][]string{}
	for _, v := range r.Rules {
		if !v.Rule.OfText() || v.Verdict == Passed || v.Verdict == Failed {
			continue
		}
		id := v.Rule.ID
		if v.Verdict == PartlyJudged {
			id += fmt.Sprintf(" (partly: %d of %d specs)", v.SpecsRun, len(v.Specs))
		}
		if t, ok := TierOfRule(v); ok {
			byTier[t] = append(byTier[t], id)
			continue
		}
		need := NeedNoSpec
		if len(v.Needs) > 0 {
			need = v.Needs[0]
		}
		byNeed[need] = append(byNeed[need], id)
	}
	var out []NeedGroup
	for _, t := range Tiers {
		if len(byTier[t]) > 0 {
			out = append(out, NeedGroup{Need: string(t), Tier: t, Title: "need the tier " + string(t) + ": " + TierTitles[t], Rules: byTier[t]})
		}
	}
	for _, n := range NeedOrder {
		if len(byNeed[n]) > 0 {
			out = append(out, NeedGroup{Need: n, Title: NeedTitles[n], Rules: byNeed[n]})
		}
	}
	return out
}
