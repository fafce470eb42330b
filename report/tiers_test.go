package report

import "testing"

// The tiers are ordered, each report need that a target offers sits in one, and a run's profile
// is named by the tiers it offers, keys always first.
func TestTiers(t *testing.T) {
	for i := 1; i < len(Tiers); i++ {
		if !Tiers[i-1].Less(Tiers[i]) || Tiers[i].Less(Tiers[i-1]) {
			t.Errorf("%s and %s are out of order", Tiers[i-1], Tiers[i])
		}
	}
	for need, want := range map[string]Tier{NeedControl: TierControl, NeedReadKey: TierProfile, NeedTestInputs: TierTestInputs} {
		if got, ok := TierOfNeed(need); !ok || got != want {
			t.Errorf("TierOfNeed(%s) = %s, %v; want %s", need, got, ok, want)
		}
	}
	for _, need := range []string{NeedBudget, NeedSlow, NeedOther, NeedBlocked, NeedStrictOnly} {
		if got, ok := TierOfNeed(need); ok {
			t.Errorf("TierOfNeed(%s) = %s; want no tier (a run setting or no need)", need, got)
		}
	}
	if got := ProfileName([]Tier{TierControl, TierProfile}); got != "keys+profile+control" {
		t.Errorf("ProfileName = %q", got)
	}
	if got := ProfileName(nil); got != "keys" {
		t.Errorf("ProfileName(nil) = %q", got)
	}
}

// A reason given only as text is typed by its words, as the suite words them.
func TestParseSkip(t *testing.T) {
	for text, want := range map[string]SkipReason{
		"unsupported: needs the control API: no --control-url given": {Kind: SkipUnsupported, Need: NeedControl, Tier: TierControl},
		"unsupported: needs a read-only key: no --read-key given and no control API to make one": {Kind: SkipUnsupported, Need: NeedReadKey,
			Tier: TierProfile},
		"disabled: slow spec; pass --slow to run it":                                       {Kind: SkipDisabled, Need: NeedSlow},
		"the text leaves x open (rules.yaml X basis reference); judged only with --strict": {Kind: SkipStrictOnly, Need: NeedStrictOnly},
		"undecidable: the target's clock ran 3s while waiting":                             {Kind: SkipUndecidable, Need: NeedOther},
	} {
		want.Text = text
		if got := ParseSkip(text); got != want {
			t.Errorf("ParseSkip(%q) = %+v; want %+v", text, got, want)
		}
	}
}
