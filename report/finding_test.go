package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// Findings go through the suite's writers: a failed spec per finding in its rule's area, an
// advisory passed with its note, and every rule with a verdict.
func TestFindingResults(t *testing.T) {
	res := FindingResults("mediaspec proxy", RunInfo{Target: "http://127.0.0.1:1"}, testRules, []Finding{
		{RuleID: "AUTH-001", Level: "MUST", Side: "server", Request: "GET /credits/balance", Advice: "answered 200 without a key",
			Count: 1, Exchanges: []int64{3}},
		{RuleID: "HEALTH-002", Level: "MUST", Advisory: true, Side: "server", Request: "GET /health/ready", Advice: "no checks"},
	})
	if len(res.Specs) != 2 || res.Specs[0].Area != "auth" || res.Specs[0].State != Failed ||
		res.Specs[0].Text != "AUTH-001 [server] GET /credits/balance" ||
		res.Specs[0].Transcript != "key -, 1 time(s) from 0001-01-01T00:00:00Z to 0001-01-01T00:00:00Z, exchanges [3]" {
		t.Fatalf("specs %+v", res.Specs)
	}
	if s := res.Specs[1]; s.State != Passed || !strings.HasPrefix(s.Reason, advisoryNote) {
		t.Errorf("advisory %+v", s)
	}
	verdict := map[string]string{}
	for _, v := range res.Rules {
		verdict[v.Rule.ID] = v.Verdict
	}
	if verdict["AUTH-001"] != Failed || verdict["HEALTH-002"] != Passed || verdict["AUTH-003"] != Unobservable ||
		len(res.Rules) != len(testRules) {
		t.Errorf("verdicts %v", verdict)
	}
	var out bytes.Buffer
	if err := res.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	var doc JUnit
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil || doc.Failures != 1 || doc.Tests != 2 {
		t.Errorf("JUnit %+v (%v)", doc, err)
	}
}
