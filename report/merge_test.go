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
