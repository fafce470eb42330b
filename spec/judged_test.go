package spec

import (
	"sort"
	"strings"
	"testing"
)

// judgedCounts is how many rules of basis reference the catalogue judges each way (rules.yaml
// judged). A rule of basis reference added, removed or judged anew changes them: the change is
// then a decision, made here too, of how a run without --strict judges the reference's choice
// (issue #22: the reference's own choices never fail a run).
var judgedCounts = map[string]int{JudgedOpen: 29, JudgedTextPart: 27, JudgedStrictOnly: 45}

// TestEveryReferenceRuleIsJudged lists the rules of basis reference and fails when one is not
// classified (ParseRules refuses it too) or when the counts moved without this test saying so.
func TestEveryReferenceRuleIsJudged(t *testing.T) {
	cat, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range cat.Rules {
		switch {
		case r.Basis == BasisReference:
			got[r.Judged] = append(got[r.Judged], r.ID)
		case r.Judged != "":
			t.Errorf("%s: judged %q without basis reference", r.ID, r.Judged)
		}
	}
	for j, ids := range got {
		if !contains(Judgements, j) {
			t.Errorf("rules of basis reference judged %q (want open, text-part or strict-only): %s", j, strings.Join(ids, " "))
		}
	}
	for _, j := range Judgements {
		sort.Strings(got[j])
		if len(got[j]) != judgedCounts[j] {
			t.Errorf("%d rules of basis reference are judged %s, this test says %d: "+
				"classify a new or changed one on purpose (rules.yaml judged) and update judgedCounts\n  %s",
				len(got[j]), j, judgedCounts[j], strings.Join(got[j], " "))
		}
	}
}
