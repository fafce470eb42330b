package spec_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// Every kind of JSON report fits report.schema.json: a whole run, a filtered one, one stopped
// by its timeout, each shard of a split run and their merge, a shard with nothing to run, a run of
// findings; and a report of the old shape (CamelCase counts, no report_version) does not.
func TestEveryReportKindFitsTheSchema(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	rules := make([]report.Rule, len(cat.Rules))
	for i, r := range cat.Rules {
		rules[i] = report.Rule(r)
	}
	run := report.RunInfo{Target: "http://127.0.0.1:1/api/v1", Version: "v0.1.0", Contract: spec.Version, Mode: "out of process, keys only",
		Started: time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC), Duration: time.Minute, Budget: 500, CreditsSpent: 12}
	specs := []report.SpecResult{
		{Text: "auth a", Leaf: "a", Area: "auth", Labels: []string{"AUTH-001"}, Rules: []string{"AUTH-001"}, State: report.Passed},
		{Text: "auth b", Leaf: "b", Area: "auth", Labels: []string{"AUTH-002", "control"}, Rules: []string{"AUTH-002"}, State: report.Skipped,
			Reason: "unsupported: needs the control API: no --control-url given"},
		{Text: "auth c", Leaf: "c", Area: "auth", Labels: []string{"AUTH-003"}, Rules: []string{"AUTH-003"}, State: report.Failed,
			Reason: "want 401", FailedRules: []string{"AUTH-003"}, Transcript: "> GET /x\n< 200 OK"},
		{Text: "auth d", Leaf: "d", Area: "auth", Labels: []string{"AUTH-004"}, Rules: []string{"AUTH-004"}, State: report.NotSelected,
			Reason: report.NotSelectedReason},
		{Text: "auth e", Leaf: "e", Area: "auth", Labels: []string{"AUTH-024"}, Rules: []string{"AUTH-024"}, State: report.StrictOnly,
			Reason: "judged only with --strict"},
		{Text: "auth f", Leaf: "f", Area: "auth", Labels: []string{"AUTH-005"}, Rules: []string{"AUTH-005"}, State: report.Interrupted,
			Reason: "not run: the run was stopped"},
	}
	build := func(run report.RunInfo, specs []report.SpecResult) report.Results {
		r := report.Results{Suite: "mediaspec conformance", Run: run, Specs: specs, Rules: report.Verdicts(rules, specs),
			Advisories: []report.Advisory{{Operation: "GET /credits/balance", Status: 200, Path: "$.x", Reference: "the reference says",
				Count: 2, Specs: []string{"auth a"}}}}
		r.Tally()
		return r
	}
	kinds := map[string]report.Results{"whole": build(run, specs)}
	stopped := run
	stopped.Cancelled = "Suite Timeout Elapsed"
	kinds["stopped"] = build(stopped, specs)
	var shards []report.Results
	for k, share := range [][]int{{0, 1}, {2}} {
		sr := run
		sr.Shard = []string{"1/2", "2/2"}[k]
		var ss []report.SpecResult
		for i, s := range specs[:3] {
			if !contains(share, i) {
				s.State, s.Reason = report.NotSelected, report.OtherShardReason(sr.Shard)
			}
			ss = append(ss, s)
		}
		kinds["shard "+sr.Shard] = build(sr, ss)
		shards = append(shards, kinds["shard "+sr.Shard])
	}
	merged, err := report.MergeShards(shards)
	if err != nil {
		t.Fatal(err)
	}
	kinds["merged"] = merged
	empty := run
	empty.Shard = "3/3"
	var none []report.SpecResult
	for _, s := range specs {
		s.State, s.Reason = report.NotSelected, report.OtherShardReason("3/3")
		none = append(none, s)
	}
	kinds["empty shard"] = build(empty, none)
	finding := report.Finding{RuleID: "AUTH-001", Level: "MUST", Side: "server", Request: "GET /x", Advice: "no"}
	kinds["findings"] = report.FindingResults("mediaspec proxy", run, rules, []report.Finding{finding})
	for name, res := range kinds {
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if err := spec.ValidateReport(buf.Bytes()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := report.ReadResults(buf.Bytes()); err != nil {
			t.Errorf("%s: read back: %v", name, err)
		}
	}
	old := []byte(`{"suite":"s","run":{},"succeeded":true,"specs":[],"rules":[],"spec_counts":{"Passed":1},"rule_counts":{"Passed":1}}`)
	if err := spec.ValidateReport(old); err == nil {
		t.Error("a report of the old shape fits the schema")
	}
	if _, err := report.ReadResults(old); err == nil || !strings.Contains(err.Error(), "older mediaspec") {
		t.Errorf("reading an old report: %v, want a clear refusal", err)
	}
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
