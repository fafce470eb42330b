package report

import (
	"slices"
	"strings"
)

// Tier is one step of the ordered list of what a target offers the suite, from the least every
// server has (its API keys) to the most (the full test-control API). A spec needs one tier (the
// highest of its needs); a run offers a prefix of the list, and judges every spec whose tier it
// offers. conformance/internal/framework needs.go maps each of the suite's needs to its tier.
type Tier string

// The tiers, least first.
const (
	TierKeys        Tier = "keys"         // API keys of the main workspace, nothing else
	TierProfile     Tier = "profile"      // what the operator pre-made and declares (key roles, ids, limits, shapes, receiver address)
	TierTestInputs  Tier = "test-inputs"  // test-mode inputs that force outcomes for test keys
	TierTestHelpers Tier = "test-helpers" // helpers scoped to the caller's own objects (a test clock, ...)
	TierControl     Tier = "control"      // the full test-control API (spec/control.yaml)
)

// Tiers lists the tiers, least first.
var Tiers = []Tier{TierKeys, TierProfile, TierTestInputs, TierTestHelpers, TierControl}

// TierTitles say what each tier adds, in words.
var TierTitles = map[Tier]string{
	TierKeys:        "keys only (--key)",
	TierProfile:     "a target profile: key roles, ids, limits, shapes and the receiver's address the operator declares (--config)",
	TierTestInputs:  "test-mode inputs that force outcomes (the profile's features: [test-inputs] and test_keys)",
	TierTestHelpers: "test helpers scoped to the caller's own objects",
	TierControl:     "the test-control API (--control-url)",
}

// Less reports whether t is a lower tier than u.
func (t Tier) Less(u Tier) bool { return slices.Index(Tiers, t) < slices.Index(Tiers, u) }

// TierOfNeed is the tier that offers a report need (Need*); ok is false for what is no tier: run
// settings (--budget, --slow), a state of the target, and outcomes that are no need (blocked,
// interrupted, not selected, strict-only, no spec).
func TierOfNeed(need string) (Tier, bool) {
	t, ok := needTiers[need]
	return t, ok
}

var needTiers = map[string]Tier{
	NeedControl: TierControl, NeedTestHelpers: TierTestHelpers, NeedTestInputs: TierTestInputs,
	NeedReceiver: TierProfile, NeedSecondWorkspace: TierProfile, NeedReadKey: TierProfile, NeedProfile: TierProfile,
}

// ProfileName is the name of a run's profile in headlines: the tiers up to the highest it offers
// joined by "+" ("keys", "keys+profile", "keys+profile+control"); a tier below the highest that the
// run does not offer is left out.
func ProfileName(offered []Tier) string {
	var parts []string
	for _, t := range Tiers {
		if slices.Contains(offered, t) {
			parts = append(parts, string(t))
		}
	}
	if len(parts) == 0 {
		return string(TierKeys)
	}
	if parts[0] != string(TierKeys) {
		parts = append([]string{string(TierKeys)}, parts...)
	}
	return strings.Join(parts, "+")
}

// SkipKind is why a selected spec did not run, as a kind of reason.
type SkipKind string

// The kinds of skip.
const (
	// SkipUnsupported: the target (or the run) lacks a facility or a state the spec needs.
	SkipUnsupported SkipKind = "unsupported"
	// SkipDisabled: the run's configuration turned the spec off (--budget, --slow, pending).
	SkipDisabled SkipKind = "disabled"
	// SkipStrictOnly: the spec asserts the reference's own choice, judged only with --strict.
	SkipStrictOnly SkipKind = "strict-only"
	// SkipUndecidable: what the spec observes could not be decided on this target this time (a
	// running clock passed the state it needed).
	SkipUndecidable SkipKind = "undecidable"
	// SkipNotRun: the run ended or stopped before the spec (setup failed, --fail-fast, Ctrl-C).
	SkipNotRun SkipKind = "not-run"
)

// SkipReason is a typed skip reason: its kind, the need it lacks (a Need* name; "" when none) and that
// need's tier, and the text the console prints. A spec's reason (SpecResult.Reason) is its Text.
type SkipReason struct {
	Kind SkipKind `json:"kind"`           // unsupported, disabled, strict-only, undecidable or not-run
	Need string   `json:"need,omitempty"` // the Need* name it lacks; "" when none
	Tier Tier     `json:"tier,omitempty"` // the tier of Need; "" when it is no tier
	Text string   `json:"text"`           // what the console prints (SpecResult.Reason)
}

// String is the skip's text.
func (s SkipReason) String() string { return s.Text }

// NewSkip makes a SkipReason of kind for need with text, its tier filled in from the need.
func NewSkip(kind SkipKind, need, text string) SkipReason {
	t, _ := TierOfNeed(need)
	return SkipReason{Kind: kind, Need: need, Tier: t, Text: text}
}

// ParseSkip types a skip reason given only as text: a reason Ginkgo gave, or one of a report
// written before reasons were typed. The reasons the suite gives are typed where it skips
// (conformance/internal/framework needs.go); this reads their words, the most specific phrase first ("no
// control API to make one" names a second workspace's key, not the control API).
func ParseSkip(reason string) SkipReason {
	r := strings.ToLower(reason)
	kind := SkipUnsupported
	switch {
	case strings.HasPrefix(r, "interrupted") || strings.Contains(r, "suite timeout") || strings.Contains(r, "interrupted by user"):
		return SkipReason{Kind: SkipNotRun, Need: NeedInterrupted, Text: reason}
	case strings.Contains(r, "judged only with --strict") || strings.HasPrefix(r, "reference choice:") ||
		strings.HasPrefix(reason, UnjudgedReason):
		return SkipReason{Kind: SkipStrictOnly, Need: NeedStrictOnly, Text: reason}
	case strings.HasPrefix(r, "disabled:"):
		kind = SkipDisabled
	case strings.HasPrefix(r, "undecidable:"):
		kind = SkipUndecidable
	case strings.HasPrefix(r, "not run:"):
		kind = SkipNotRun
	}
	need := NeedOther
	switch {
	case strings.Contains(r, "second workspace"):
		need = NeedSecondWorkspace
	case strings.Contains(r, "read-only key"):
		need = NeedReadKey
	case strings.Contains(r, "webhook receiver"):
		need = NeedReceiver
	case strings.Contains(r, "target declares none") || strings.Contains(r, "target names none") ||
		strings.Contains(r, "--retired-capability-id") || strings.Contains(r, "--shape "):
		need = NeedProfile
	case strings.Contains(r, "credit budget") || strings.Contains(r, "spends credits") || strings.Contains(r, "no credits can be spent"):
		need = NeedBudget
	case strings.Contains(r, "--slow"):
		need = NeedSlow
	case strings.Contains(r, "control api"):
		need = NeedControl
	}
	return NewSkip(kind, need, reason)
}
