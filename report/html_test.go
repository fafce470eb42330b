package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// testRules is a small catalogue: two observable rules and an unobservable one.
var testRules = []Rule{
	{ID: "AUTH-001", Level: "MUST", Section: "Auth", Statement: "a call without a key is refused"},
	{ID: "HEALTH-002", Level: "MUST", Section: "Health", Statement: "ready answers 200"},
	{ID: "AUTH-003", Level: "MUST", Section: "Auth", Statement: "keys are stored hashed", Unobservable: "storage is not visible"},
}

// results builds Results the way the suite does: verdicts and counts from the specs.
func results(specs ...SpecResult) Results {
	r := Results{Suite: "s", Specs: specs, Rules: Verdicts(testRules, specs)}
	r.SpecCounts, r.RuleCounts = Count(r.Specs, r.Rules)
	return r
}

func TestHTMLHasAHeaderAndFailuresFirst(t *testing.T) {
	res := results(
		SpecResult{Text: "passes", Area: "auth", Rules: []string{"AUTH-001"}, State: Passed},
		SpecResult{Text: "fails", Area: "basics", Rules: []string{"HEALTH-002"}, State: Failed,
			Reason: "Expected <int>: 20 to be < <int>: 20", Transcript: strings.Repeat("> GET /x\n< 200 OK\n", 50000)},
	)
	res.Run = RunInfo{Target: "http://127.0.0.1:1/api/v1", Version: "v9", Contract: "1.2.0", Started: time.Now(), Mode: "keys only",
		Filter: "AUTH-001 || HEALTH-002"}
	var out bytes.Buffer
	if err := res.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{"http://127.0.0.1:1/api/v1", "v9", "contract 1.2.0", "keys only", "AUTH-001 || HEALTH-002"} {
		if !strings.Contains(html, want) {
			t.Errorf("the header lacks %q", want)
		}
	}
	if i, j := strings.Index(html, `id="HEALTH-002"`), strings.Index(html, `id="AUTH-001"`); i < 0 || j < 0 || i > j {
		t.Error("the failed rule is not listed before the passed one")
	}
	if len(html) > 200<<10 {
		t.Errorf("a 900 KB transcript made a %d-byte report: transcripts are not bounded", len(html))
	}
	if strings.Count(html, "> GET /x") > maxTranscriptInHTML/10 {
		t.Error("the transcript appears more than once")
	}
}
