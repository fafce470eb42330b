package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

func readResults(t *testing.T, path string) report.Results {
	t.Helper()
	var r report.Results
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A run split with check --shard into two, merged with merge-reports, gives the verdicts of the
// whole run: each selected spec runs in exactly one shard, and every rule's verdict is the whole
// run's. A missing shard and bad --shard values are refused before anything runs.
func TestCheckShardsMergeIntoTheWholeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	filter := "HEALTH-001 || VER-001 || CAP-002 || CAP-004 || CAP-011 || CAP-012 || EST-001"
	path := func(n string) string { return filepath.Join(dir, n) }
	if out, code := checkInHelper(t, "--label-filter", filter, "--json-report", path("whole.json")); code != 0 {
		t.Fatalf("whole run: exit %d\n%s", code, out)
	}
	for _, k := range []string{"1", "2"} {
		if out, code := checkInHelper(t, "--shard", k+"/2", "--label-filter", filter, "--json-report", path("shard-"+k+".json")); code != 0 {
			t.Fatalf("shard %s/2: exit %d\n%s", k, code, out)
		}
	}
	whole, one, two := readResults(t, path("whole.json")), readResults(t, path("shard-1.json")), readResults(t, path("shard-2.json"))
	if one.Run.Shard != "1/2" || two.Run.Shard != "2/2" {
		t.Errorf("shards %q %q", one.Run.Shard, two.Run.Shard)
	}
	if one.SpecCounts.Passed == 0 || two.SpecCounts.Passed == 0 || one.SpecCounts.Passed+two.SpecCounts.Passed != whole.SpecCounts.Passed {
		t.Errorf("passed: shard 1 %d, shard 2 %d, whole %d", one.SpecCounts.Passed, two.SpecCounts.Passed, whole.SpecCounts.Passed)
	}
	out, errOut, err := run(t, "merge-reports", path("shard-1.json"), path("shard-2.json"),
		"--json-report", path("merged.json"), "--junit-report", path("merged.xml"), "--html-report", path("merged.html"))
	if err != nil {
		t.Fatalf("merge-reports: %v\n%s\n%s", err, out, errOut)
	}
	merged := readResults(t, path("merged.json"))
	if len(merged.Rules) != len(whole.Rules) || merged.SpecCounts != whole.SpecCounts || merged.RuleCounts != whole.RuleCounts || !merged.Succeeded {
		t.Errorf("merged counts %+v %+v, whole %+v %+v", merged.SpecCounts, merged.RuleCounts, whole.SpecCounts, whole.RuleCounts)
	}
	for i, v := range whole.Rules {
		if i < len(merged.Rules) && (merged.Rules[i].Rule.ID != v.Rule.ID || merged.Rules[i].Verdict != v.Verdict) {
			t.Errorf("rule %s: merged %s %s, whole %s", v.Rule.ID, merged.Rules[i].Rule.ID, merged.Rules[i].Verdict, v.Verdict)
		}
	}
	if !strings.Contains(out, whole.RuleLine()) || !strings.Contains(out, whole.SpecLine()) {
		t.Errorf("merge-reports printed:\n%s\nwant the whole run's tallies:\n%s\n%s", out, whole.RuleLine(), whole.SpecLine())
	}
	// Every report the split run wrote fits the report's JSON Schema.
	for _, f := range []string{"whole.json", "shard-1.json", "shard-2.json", "merged.json"} {
		data, err := os.ReadFile(path(f))
		if err == nil {
			err = spec.ValidateReport(data)
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if merged.Coverage.Judged != whole.Coverage.Judged || merged.Coverage.Total != whole.Coverage.Total || !strings.Contains(out, whole.Headline()[:strings.Index(whole.Headline(), ";")]) {
		t.Errorf("merged coverage %+v, whole %+v; merge-reports printed:\n%s", merged.Coverage, whole.Coverage, out)
	}
	// A shard whose share is empty (one spec splits into one share) says so and leaves the verdict
	// to the merge: exit 0, and a report that gives every spec to the other shard.
	if out, code := checkInHelper(t, "--shard", "2/2", "--label-filter", "HEALTH-001", "--json-report", path("empty.json")); code != 0 ||
		!strings.Contains(out, "shard 2/2: nothing to run") {
		t.Errorf("an empty share: exit %d\n%s", code, out)
	}
	if out, code := checkInHelper(t, "--shard", "1/2", "--label-filter", "HEALTH-001", "--json-report", path("full.json")); code != 0 {
		t.Errorf("the other share: exit %d\n%s", code, out)
	}
	if out, _, err := run(t, "merge-reports", path("full.json"), path("empty.json")); err != nil || !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("merge of a full and an empty share: %v\n%s", err, out)
	}
	for _, f := range []string{"merged.xml", "merged.html"} {
		if st, err := os.Stat(path(f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, _, err := run(t, "merge-reports", path("shard-1.json")); err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "shard 2/2 missing") {
		t.Errorf("one shard of two: %v", err)
	}
	for _, args := range [][]string{{"--shard", "3/2"}, {"--shard", "1/2", "--procs", "2"}, {"--shard", "1/2", "--base-url", "http://127.0.0.1:1", "--control-url", "http://127.0.0.1:1/_control/v1", "--control-token", "t"}} {
		if out, code := checkInHelper(t, args...); code != 2 {
			t.Errorf("check %v: exit %d, want 2\n%s", args, code, out)
		}
	}
}
