package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"
)

// One cause over many specs is shown once, with its rules and specs; skips are counted by reason;
// nothing the console prints is an escape code.
func TestConsoleGroupsFailuresByCause(t *testing.T) {
	var specs []report.SpecResult
	for i := 0; i < 30; i++ {
		specs = append(specs, report.SpecResult{
			Text: "lists: a spec", State: report.Failed, Rules: []string{"GEN-038", "CORE-001"}, FailedRules: []string{"GEN-038"},
			Reason: "a row carries batch_group_id: Expected <float64>: " + strings.Repeat("7", i%3+1) +
				"\n> GET /api/v1/generations\n< 200 OK",
			FailureLocation: "conformance/specs/lists.go:90", Location: "conformance/specs/lists.go:77",
			FailedCall: "> GET http://127.0.0.1:1/api/v1/generations\n< 200 OK\n< {\"ok\":true}\n",
		})
	}
	specs = append(specs,
		report.SpecResult{Text: "a", State: report.Skipped, Reason: "unsupported: needs the control API: no --control-url given"},
		report.SpecResult{Text: "b", State: report.Skipped, Reason: "unsupported: needs the control API: no --control-url given"},
		report.SpecResult{Text: "c", State: report.NotSelected, Reason: report.NotSelectedReason})
	res := report.Results{Specs: specs}
	res.SpecCounts, _ = report.Count(specs, nil)
	var out bytes.Buffer
	c := newConsole(&out, false, nil)
	c.summary(res, "")
	text := out.String()
	if strings.Count(text, "a row carries batch_group_id") != 1 {
		t.Errorf("the cause is not shown exactly once:\n%s", text)
	}
	for _, want := range []string{"Root causes: 1 (30 specs failed)", "rules: GEN-038\n", "call: GET /generations\n", "30 spec(s): 30 failed",
		"... and 25 more", "< 200 OK", "   2  unsupported: needs the control API",
		"1 specs not selected (not counted as skipped): not selected by the label filter"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "CORE-001") {
		t.Error("a rule the failed step did not check is blamed")
	}
	if strings.Contains(text, report.NotSelected) || strings.Contains(text, "\x1b") {
		t.Errorf("unselected specs or escape codes in the summary:\n%s", text)
	}
	if n := strings.Count(text, "\n"); n > 40 {
		t.Errorf("%d lines for one cause", n)
	}
}

// Advisories have their own section and line, apart from failures, and never make a run fail.
func TestConsoleShowsAdvisoriesApart(t *testing.T) {
	res := report.Results{
		Specs:      []report.SpecResult{{Text: "a", State: report.Passed}},
		SpecCounts: report.Counts{Passed: 1}, Succeeded: true,
		Advisories: []report.Advisory{{Operation: "GET /credits/balance", Status: 200, Path: "$.low_balance_threshold_credits",
			Reference: `property "low_balance_threshold_credits" is missing`, Count: 2}},
	}
	var out bytes.Buffer
	c := newConsole(&out, false, nil)
	c.summary(res, "")
	if _, err := finish(&out, res, nil); err != nil {
		t.Errorf("a run with advisories only failed: %v", err)
	}
	text := out.String()
	for _, want := range []string{"Advisories: 1 differences from the reference's own choices",
		"  - GET /credits/balance -> 200 $.low_balance_threshold_credits: property \"low_balance_threshold_credits\" is missing " +
			"(the reference document; seen 2 times)", "advisories: 1 differences"} {
		if !strings.Contains(text, want) {
			t.Errorf("the console lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Failures") || !strings.Contains(text, "1 passed, 0 failed, 0 skipped\njudged ") {
		t.Errorf("advisories shown as failures, or the spec tally is not the last line:\n%s", text)
	}
}

// A spec blocked by a rule it does not check is listed under that rule's cause, apart from the
// specs that failed on it; past maxCauses the console says how many causes and specs it left out,
// and no cause is printed empty or as a Go value dump.
func TestConsoleLeadsWithRootCauses(t *testing.T) {
	specs := []report.SpecResult{
		{Text: "empty", State: report.Failed, Rules: []string{"GEN-039"}, FailureLocation: "conformance/specs/x.go:3"},
		{Text: "dump", State: report.Failed, Rules: []string{"GEN-040"}, Reason: "want the row map[a:map[b:1] c:2] to carry d"},
	}
	for i := 0; i < maxCauses+3; i++ {
		specs = append(specs, report.Settle(report.SpecResult{
			Text: fmt.Sprintf("area: spec %d", i), State: report.Failed, Rules: []string{"GEN-038"},
			FailedRules: []string{fmt.Sprintf("CAP-%03d", i+1)},
			Reason:      fmt.Sprintf("cause %d", i), Operation: "GET /capabilities",
		}))
	}
	specs = append(specs,
		report.SpecResult{Text: "own rule", State: report.Failed, Rules: []string{"CAP-001"}, FailedRules: []string{"CAP-001"},
			Reason: "cause 0", Operation: "GET /capabilities"},
	)
	res := report.Results{Specs: specs}
	res.SpecCounts, _ = report.Count(specs, nil)
	var out bytes.Buffer
	newConsole(&out, false, nil).summary(res, "")
	text := out.String()
	for _, want := range []string{
		fmt.Sprintf("Root causes: %d (3 specs failed, %d blocked)", maxCauses+3+2, maxCauses+3),
		"2 spec(s): 1 failed, 1 blocked", "[blocked]",
		"an assertion failed without a message at conformance/specs/x.go:3",
		"want the row {...} to carry d",
		"... and 5 more causes (of 5 specs) not shown",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "map[") || strings.Contains(text, ") \n") {
		t.Errorf("a raw dump or an empty cause:\n%s", text)
	}
}

// The area line speaks the reports' words: a spec that failed after the run was stopped, or that a
// stopped run never reached, is interrupted (not run), never FAILED or skipped, so the area line
// agrees with the tally (issue 39: "1 FAILED" beside "0 failed").
func TestAreaLineAgreesWithTheTallyWhenStopped(t *testing.T) {
	stop := time.Now()
	at := func(state types.SpecState, end time.Time, msg string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, State: state, EndTime: end, LeafNodeText: "x",
			LeafNodeLocation: types.CodeLocation{FileName: "conformance/specs/deliveries.go"}, Failure: types.Failure{Message: msg}}
	}
	for _, tc := range []struct {
		r       types.SpecReport
		stopped *time.Time
		want    string
	}{
		{at(types.SpecStateTimedout, stop.Add(time.Second), "context cancelled"), &stop, "stop"},
		{at(types.SpecStateFailed, stop.Add(-time.Second), "want 200"), &stop, "FAIL"},
		{at(types.SpecStateSkipped, stop.Add(time.Second), ""), &stop, "stop"},
		{at(types.SpecStateSkipped, time.Time{}, "judged only with --strict"), nil, "strc"},
		{at(types.SpecStateSkipped, time.Time{}, "unsupported: needs the control API: no --control-url given"), nil, "skip"},
		{at(types.SpecStateFailed, time.Time{}, "want 200"), nil, "FAIL"},
	} {
		if got := eventOf(tc.r, tc.stopped).State; got != tc.want {
			t.Errorf("%s %q (stopped %v): %q, want %q", tc.r.State, tc.r.Failure.Message, tc.stopped != nil, got, tc.want)
		}
	}
	var out bytes.Buffer
	c := newConsole(&out, false, map[string]int{"deliveries": 3})
	c.didRun(specEvent{Area: "deliveries", State: "ok  "})
	c.didRun(specEvent{Area: "deliveries", State: "stop"})
	c.didRun(specEvent{Area: "deliveries", State: "stop"})
	if line := out.String(); !strings.Contains(line, "3 specs: 1 passed, 2 interrupted (not run)") ||
		strings.Contains(line, "FAILED") || strings.Contains(line, "skipped") {
		t.Errorf("area line %q", line)
	}
}
