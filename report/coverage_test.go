package report

import (
	"strings"
	"testing"
)

// A skip is never a pass: a rule some of whose specs were skipped is partly judged, with how many
// ran, and a rule is judged only when every spec that checks it ran. The coverage counts text rules
// only, and lists what was not judged under the need that weighs most.
func TestPartlyJudgedIsNeverPassed(t *testing.T) {
	rules := []Rule{
		{ID: "ERR-027"}, {ID: "AUTH-001"}, {ID: "LEDGER-003"}, {ID: "DLV-001"},
		{ID: "RATE-009", Basis: "reference", Judged: "strict-only"}, {ID: "CORE-099", Unobservable: "a client's duty"},
		{ID: "HEALTH-009"},
	}
	control := "unsupported: needs the control API: no --control-url given"
	specs := []SpecResult{
		{Text: "a", Rules: []string{"ERR-027", "AUTH-001"}, State: Passed},
		{Text: "b", Rules: []string{"ERR-027"}, State: Skipped, Reason: control},
		{Text: "c", Rules: []string{"ERR-027"}, State: Skipped, Reason: "disabled: spends credits and the credit budget is 0 (set --budget)"},
		{Text: "d", Rules: []string{"LEDGER-003"}, State: Skipped, Reason: "disabled: spends credits and the credit budget is 0 (set --budget)"},
		{Text: "e", Rules: []string{"DLV-001"}, State: Skipped,
			Reason: "unsupported: needs a webhook receiver the target can reach: none is configured"},
		Settle(SpecResult{Text: "f", Rules: []string{"RATE-009"}, State: Skipped,
			Reason: "the text leaves the bucket open (rules.yaml RATE-009 basis reference); judged only with --strict"}),
	}
	res := Results{Specs: specs, Rules: Verdicts(rules, specs)}
	res.Tally()
	got := map[string]RuleVerdict{}
	for _, v := range res.Rules {
		got[v.Rule.ID] = v
	}
	if v := got["ERR-027"]; v.Verdict != PartlyJudged || v.SpecsRun != 1 || len(v.Specs) != 3 || !strings.Contains(v.Reason, "1 of 3 specs") ||
		strings.Join(v.Needs, ",") != "control,budget" {
		t.Errorf("ERR-027 (1 of 3 specs ran): %+v, want partly judged, needs control then budget", v)
	}
	if got["AUTH-001"].Verdict != Passed {
		t.Errorf("AUTH-001 (its one spec passed): %s", got["AUTH-001"].Verdict)
	}
	if got["RATE-009"].Verdict != StrictOnly || res.SpecCounts.StrictOnly != 1 || res.SpecCounts.Skipped != 4 ||
		res.RuleCounts.StrictOnly != 1 {
		t.Errorf("strict-only: rule %s, counts %+v / %+v", got["RATE-009"].Verdict, res.SpecCounts, res.RuleCounts)
	}
	want := Coverage{Judged: 1, PartlyJudged: 1, NotJudged: 3, Total: 5, StrictOnlyTotal: 1,
		ByNeed: map[string]int{NeedControl: 1, NeedBudget: 1, NeedReceiver: 1, NeedNoSpec: 1}}
	if c := res.Coverage; c.Judged != want.Judged || c.PartlyJudged != want.PartlyJudged || c.NotJudged != want.NotJudged ||
		c.Total != want.Total || c.StrictOnlyTotal != 1 || len(c.ByNeed) != len(want.ByNeed) {
		t.Errorf("coverage %+v, want %+v", c, want)
	} else {
		for k, n := range want.ByNeed {
			if c.ByNeed[k] != n {
				t.Errorf("by_need[%s] = %d, want %d", k, c.ByNeed[k], n)
			}
		}
	}
	if line := res.Coverage.Line(); !strings.HasPrefix(line, "judged 1 of 5 text rules (20.0%), 1 partly judged, 3 not judged") {
		t.Errorf("coverage line %q", line)
	}
	if line := res.SpecLine(); line != "1 passed, 0 failed, 4 skipped (1 strict-only, judged with --strict)" {
		t.Errorf("spec line %q", line)
	}
	groups := res.NotJudged()
	// Grouped by the lowest tier that would judge them, least first (the receiver's address is the
	// profile's), then what no tier offers.
	if len(groups) != 4 || groups[0].Tier != TierProfile || groups[0].Rules[0] != "DLV-001" ||
		groups[1].Tier != TierControl || groups[1].Rules[0] != "ERR-027 (partly: 1 of 3 specs)" ||
		groups[2].Need != NeedBudget || groups[2].Tier != "" {
		t.Errorf("not judged groups %+v", groups)
	}
	if c := res.Coverage; len(c.ByTier) != 2 || c.ByTier[TierProfile] != 1 || c.ByTier[TierControl] != 1 {
		t.Errorf("by_tier %v", c.ByTier)
	}
}

// An interrupted run counts only what it selected: specs it did not reach are interrupted (not
// run), never skipped, and the rule tally says so.
func TestInterruptedIsNotSkipped(t *testing.T) {
	rules := []Rule{{ID: "AUTH-001"}, {ID: "AUTH-002"}, {ID: "HEALTH-001"}}
	specs := []SpecResult{
		{Text: "a", Rules: []string{"AUTH-001"}, State: Passed},
		{Text: "b", Rules: []string{"AUTH-002"}, State: Interrupted, Reason: "not run: the run was stopped before it (Suite Timeout Elapsed)"},
		{Text: "c", Rules: []string{"HEALTH-001"}, State: NotSelected, Reason: NotSelectedReason},
	}
	res := Results{Specs: specs, Rules: Verdicts(rules, specs), Run: RunInfo{Cancelled: "Suite Timeout Elapsed"}}
	res.Tally()
	if c := res.SpecCounts; c.Passed != 1 || c.Interrupted != 1 || c.Skipped != 0 || c.NotSelected != 1 {
		t.Errorf("spec counts %+v", c)
	}
	if line := res.SpecLine(); line != "1 passed, 0 failed, 0 skipped, 1 interrupted (not run) (1 not selected)" {
		t.Errorf("spec line %q", line)
	}
	if c := res.RuleCounts; c.Passed != 1 || c.Interrupted != 1 || c.NotSelected != 1 || c.Skipped != 0 {
		t.Errorf("rule counts %+v", c)
	}
	if res.Coverage.ByNeed[NeedInterrupted] != 1 || res.Coverage.ByNeed[NeedNotSelected] != 1 {
		t.Errorf("by need %v", res.Coverage.ByNeed)
	}
}

// Every reason the suite gives for a skip names its need; the classification goes by the most
// specific phrase first.
func TestNeedOfReasons(t *testing.T) {
	for _, c := range []struct{ reason, want string }{
		{"unsupported: needs the control API: no --control-url given", NeedControl},
		{"unsupported: needs a key of a second workspace: no --other-key given and no control API to make one", NeedSecondWorkspace},
		{"unsupported: needs a read-only key: no --read-key given and no control API to make one", NeedReadKey},
		{"unsupported: needs a webhook receiver the target can reach: none is configured", NeedReceiver},
		{"disabled: spends credits and the credit budget is 0 (set --budget)", NeedBudget},
		{"disabled: spending 40 credits would exceed the credit budget (3 of 500 left; raise --budget)", NeedBudget},
		{"disabled: slow spec; pass --slow to run it", NeedSlow},
		{"the text leaves the order of the checks open (rules.yaml AUTH-024 basis reference); judged only with --strict", NeedStrictOnly},
		{"reference choice: the target differs from the reference's own choice of WF-001, where the text says \"not shown\"", NeedStrictOnly},
		{"unsupported: the text does not give the liveness probe's path and the target names none (--live-path)", NeedProfile},
		{"unsupported: the text shows no shape here and the target declares none: set shape balance.available (check --shape x", NeedProfile},
		{"unsupported: retired capabilities are not listed; set retired_capability_id (--retired-capability-id) to one", NeedProfile},
		{"unsupported: the target refuses links to the suite's loopback file server", NeedOther},
		{"unsupported: the control API does not offer POST /generations/{id}/fail", NeedControl},
	} {
		if got := NeedOf(SpecResult{State: Skipped, Reason: c.reason}); got != c.want {
			t.Errorf("NeedOf(%q) = %s, want %s", c.reason, got, c.want)
		}
	}
}

// A shard whose whole share skipped leaves the verdict to merge-reports (no error); a whole run
// that executed nothing fails, and so does a stopped one.
func TestShardWithNothingRunLeavesTheVerdictToTheMerge(t *testing.T) {
	skipped := []SpecResult{{Text: "a", Rules: []string{"AUTH-001"}, State: Skipped,
		Reason: "unsupported: needs the control API: no --control-url given"}}
	shard := Results{Specs: skipped, Run: RunInfo{Shard: "2/3"}}
	shard.Tally()
	if err := shard.Err(); err != nil {
		t.Errorf("a shard with nothing run: %v", err)
	}
	whole := Results{Specs: skipped}
	whole.Tally()
	if err := whole.Err(); err == nil || !strings.Contains(err.Error(), "no spec executed") {
		t.Errorf("a whole run with nothing run: %v", err)
	}
	shard.Run.Cancelled = "Interrupted by User"
	if err := shard.Err(); err == nil {
		t.Error("a stopped shard succeeded")
	}
}

// The rule counts and the coverage are the same in every format: the JSON report's rule_counts
// and coverage, the JUnit properties and the HTML report's header all say the console's lines.
func TestEveryFormatSaysTheSameCounts(t *testing.T) {
	rules := []Rule{{ID: "AUTH-001"}, {ID: "AUTH-002"}, {ID: "AUTH-003"}, {ID: "RATE-009", Basis: "reference", Judged: "strict-only"}}
	specs := []SpecResult{
		{Text: "auth a", Area: "auth", Rules: []string{"AUTH-001", "AUTH-002"}, State: Passed},
		{Text: "auth b", Area: "auth", Rules: []string{"AUTH-002"}, State: Skipped,
			Reason: "unsupported: needs the control API: no --control-url given"},
		{Text: "auth c", Area: "auth", Rules: []string{"AUTH-003"}, State: NotSelected, Reason: NotSelectedReason},
		{Text: "auth d", Area: "auth", Rules: []string{"RATE-009"}, State: StrictOnly, Reason: "judged only with --strict"},
	}
	res := Results{Suite: "s", Specs: specs, Rules: Verdicts(rules, specs),
		Run: RunInfo{Mode: "keys only", Target: "http://t", CreditsSpent: 3, Budget: 10}}
	res.Tally()
	var js, junit, html strings.Builder
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults([]byte(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.RuleCounts != res.RuleCounts || back.SpecCounts != res.SpecCounts || back.Coverage.Line() != res.Coverage.Line() {
		t.Errorf("JSON: %+v %+v %s, want %+v %+v %s",
			back.RuleCounts, back.SpecCounts, back.Coverage.Line(), res.RuleCounts, res.SpecCounts, res.Coverage.Line())
	}
	want := "rules: 1 passed, 1 partly judged, 0 failed, 0 skipped, 1 not selected, 0 not covered, 0 unobservable; " +
		"1 strict-only (not judged against another server)"
	if res.RuleLine() != want {
		t.Errorf("rule line %q, want %q", res.RuleLine(), want)
	}
	for name, doc := range map[string]string{"JUnit": junit.String(), "HTML": html.String()} {
		for _, line := range []string{res.RuleLine(), res.SpecLine(), res.Headline()} {
			if !strings.Contains(doc, line) {
				t.Errorf("%s lacks %q", name, line)
			}
		}
	}
	if !strings.Contains(junit.String(), `tests="2" failures="0" skipped="1"`) {
		t.Errorf("JUnit counts the specs outside the tallies:\n%s", junit.String())
	}
}
