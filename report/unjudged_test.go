package report

import (
	"strings"
	"testing"
)

// A rule the run does not judge (a reference choice judged strict-only, on a run without
// --strict) is skipped with the reason whatever its spec did, and a failure charged to such rules
// alone is a skip, never a failure of the run.
func TestUnjudgedRulesAreSkipped(t *testing.T) {
	rules := []Rule{{ID: "WF-004"}, {ID: "WF-011", Basis: "reference", Judged: "strict-only"}, {ID: "WF-012"}}
	passed := SpecResult{Text: "a", Rules: []string{"WF-011", "WF-012"}, State: Passed, Unjudged: []string{"WF-011"}}
	failedOnUnjudged := Settle(SpecResult{Text: "b", Rules: []string{"WF-004", "WF-011"}, State: Failed, Reason: "want 201",
		FailedRules: []string{"WF-011"}, Unjudged: []string{"WF-011"}})
	if failedOnUnjudged.State != StrictOnly || !strings.HasPrefix(failedOnUnjudged.Reason, UnjudgedReason) ||
		!strings.Contains(failedOnUnjudged.Reason, "want 201") {
		t.Fatalf("a failure charged to unjudged rules alone: %s %q, want strict-only with the reason",
			failedOnUnjudged.State, failedOnUnjudged.Reason)
	}
	failedOnJudged := Settle(SpecResult{Text: "c", Rules: []string{"WF-004", "WF-011"}, State: Failed, Reason: "no Location",
		FailedRules: []string{"WF-004", "WF-011"}, Unjudged: []string{"WF-011"}})
	if failedOnJudged.State != Failed {
		t.Fatalf("a failure charged to a judged rule too: %s, want failed", failedOnJudged.State)
	}
	got := map[string]RuleVerdict{}
	for _, v := range Verdicts(rules, []SpecResult{passed, failedOnUnjudged, failedOnJudged}) {
		got[v.Rule.ID] = v
	}
	if v := got["WF-011"]; v.Verdict != StrictOnly || !strings.Contains(v.Reason, UnjudgedReason) {
		t.Errorf("WF-011: %s %q, want strict-only", v.Verdict, v.Reason)
	}
	if v := got["WF-012"]; v.Verdict != Passed {
		t.Errorf("WF-012: %s, want passed", v.Verdict)
	}
	if v := got["WF-004"]; v.Verdict != Failed {
		t.Errorf("WF-004: %s, want failed", v.Verdict)
	}
}
