package report

import (
	"strings"
	"testing"
	"time"
)

// shardOf is one shard's report of a tiny run of four specs over three rules: the specs in ran are
// run (with states), the rest are reported as the other shards' (not selected).
func shardOf(shard string, ran map[string]string) Results {
	rules := []Rule{{ID: "A-001", Level: "MUST"}, {ID: "B-001", Level: "MUST"}, {ID: "C-001", Level: "MUST"}}
	texts := []struct{ text, rule string }{{"a one", "A-001"}, {"a two", "A-001"}, {"b", "B-001"}, {"c", "C-001"}}
	var specs []SpecResult
	for _, t := range texts {
		s := SpecResult{Text: t.text, Rules: []string{t.rule}, State: NotSelected, Reason: OtherShardReason(shard)}
		if st, ok := ran[t.text]; ok {
			s.State, s.Reason, s.Duration = st, "", time.Second
			if st == Failed {
				s.Reason = "it broke"
			}
		}
		specs = append(specs, s)
	}
	r := Results{Suite: "mediaspec conformance", Specs: specs, Rules: Verdicts(rules, specs),
		Run: RunInfo{Target: "http://t", Version: "v1", Contract: "1.2.0", Shard: shard, Mode: "keys only",
			Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Minute}}
	r.Tally()
	return r
}

func TestMergeShardsIsOneRun(t *testing.T) {
	one := shardOf("1/2", map[string]string{"a one": Passed, "c": Failed})
	two := shardOf("2/2", map[string]string{"a two": Passed, "b": Passed})
	two.Run.Started = one.Run.Started.Add(30 * time.Second)
	res, err := MergeShards([]Results{two, one})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a one": Passed, "a two": Passed, "b": Passed, "c": Failed}
	for _, s := range res.Specs {
		if s.State != want[s.Text] {
			t.Errorf("%s: %s, want %s", s.Text, s.State, want[s.Text])
		}
	}
	verdicts := map[string]string{}
	for _, v := range res.Rules {
		verdicts[v.Rule.ID] = v.Verdict
	}
	if verdicts["A-001"] != Passed || verdicts["B-001"] != Passed || verdicts["C-001"] != Failed {
		t.Errorf("verdicts %v", verdicts)
	}
	if res.SpecCounts.Passed != 3 || res.SpecCounts.Failed != 1 || res.Succeeded || res.Err() == nil {
		t.Errorf("counts %+v succeeded %v", res.SpecCounts, res.Succeeded)
	}
	if res.Run.Shard != "" || res.Run.Duration != 90*time.Second || !strings.Contains(res.Run.Mode, "2 shards") {
		t.Errorf("run %+v", res.Run)
	}
}

func TestMergeShardsRefusesWhatIsNotOneRun(t *testing.T) {
	one := shardOf("1/2", map[string]string{"a one": Passed, "c": Passed})
	two := shardOf("2/2", map[string]string{"a two": Passed, "b": Passed})
	whole := shardOf("", map[string]string{"a one": Passed})
	three := shardOf("2/3", map[string]string{"b": Passed})
	overlap := shardOf("2/2", map[string]string{"a one": Passed, "b": Passed})
	otherFilter := shardOf("2/2", map[string]string{"a two": Passed, "b": Passed})
	otherFilter.Run.Filter = "B-001"
	for _, c := range []struct {
		name  string
		parts []Results
		want  string
	}{
		{"none", nil, "no shard reports"},
		{"a missing shard", []Results{one}, "shard 2/2 missing"},
		{"a shard twice", []Results{one, one, two}, "both shard 1/2"},
		{"a whole run", []Results{one, whole}, "not a shard's"},
		{"two splits", []Results{one, three}, "split into 2"},
		{"a spec in two shards", []Results{one, overlap}, "ran in 2 shards"},
		{"another filter", []Results{one, otherFilter}, "label filter"},
	} {
		if _, err := MergeShards(c.parts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, bad := range []string{"", "1", "0/2", "3/2", "1/0", "a/b", "1/65", "-1/2"} {
		if _, _, err := ParseShard(bad, 64); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if k, n, err := ParseShard("2/4", 64); err != nil || k != 2 || n != 4 {
		t.Errorf("ParseShard(2/4) = %d, %d, %v", k, n, err)
	}
}

// passOf is one pass's report of the tiny run of shardOf: the specs in states have them (a skip
// with a reason), the rest are not selected by the pass's label filter.
func passOf(filter string, states map[string]string) Results {
	r := shardOf("1/1", nil)
	r.Run.Shard, r.Run.Filter = "", filter
	for i := range r.Specs {
		s := &r.Specs[i]
		s.State, s.Reason = NotSelected, NotSelectedReason
		if st, ok := states[s.Text]; ok {
			s.State, s.Reason = st, ""
			if st == Skipped {
				s.Reason = "disabled: waits out hours of the target's clock; pass --real-time --long to run it"
			}
		}
	}
	r.Rules = Verdicts([]Rule{{ID: "A-001", Level: "MUST"}, {ID: "B-001", Level: "MUST"}, {ID: "C-001", Level: "MUST"}}, r.Specs)
	r.Tally()
	return r
}

// A second pass that runs the specs the first skipped (check --real-time --long against a faster
// clock, CI's mode t) makes their rules judged: each spec counts from the pass that ran it, a skip
// the other pass did not select stays a skip with its reason, and the coverage is computed again.
func TestMergePassesCountsEachSpecFromThePassThatRanIt(t *testing.T) {
	first := passOf("", map[string]string{"a one": Passed, "a two": Skipped, "b": Passed, "c": Skipped})
	second := passOf("long", map[string]string{"a two": Passed})
	if first.Coverage.Judged != 1 {
		t.Fatalf("the first pass alone judges %d rules, want 1 (B-001)", first.Coverage.Judged)
	}
	res, err := MergePasses([]Results{first, second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a one": Passed, "a two": Passed, "b": Passed, "c": Skipped}
	for _, s := range res.Specs {
		if s.State != want[s.Text] {
			t.Errorf("%s: %s, want %s", s.Text, s.State, want[s.Text])
		}
		if s.Text == "c" && !strings.Contains(s.Reason, "--long") {
			t.Errorf("c's skip lost its reason: %q", s.Reason)
		}
	}
	if res.Coverage.Judged != 2 || !res.Succeeded || res.Run.Filter != "" || !strings.Contains(res.Run.Mode, "2 passes") {
		t.Errorf("coverage %+v succeeded %v run %+v", res.Coverage, res.Succeeded, res.Run)
	}
	if _, err := MergePasses([]Results{first, passOf("", map[string]string{"a one": Passed})}); err == nil ||
		!strings.Contains(err.Error(), "ran in 2 passes") {
		t.Errorf("a spec run in two passes: %v", err)
	}
}
