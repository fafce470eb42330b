package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// A spec that stopped on a rule it does not check is blocked by it: that rule fails, the spec's own
// rules are left undecided (blocked), and the run fails on it.
func TestBlockedSpecsFailTheirBlockerOnly(t *testing.T) {
	own := SpecResult{Text: "auth a", Rules: []string{"AUTH-001"}, State: Failed, FailedRules: []string{"HEALTH-002"},
		Reason: "ready lacks ok"}
	if s := Settle(own); s.State != Blocked || strings.Join(s.BlockedBy, ",") != "HEALTH-002" ||
		strings.Join(s.Blamed(), ",") != "HEALTH-002" {
		t.Fatalf("settled %+v, want blocked by HEALTH-002", s)
	}
	mixed := SpecResult{Rules: []string{"AUTH-001"}, State: Failed, FailedRules: []string{"AUTH-001", "HEALTH-002"}}
	if s := Settle(mixed); s.State != Failed || strings.Join(s.Blamed(), ",") != "AUTH-001" {
		t.Errorf("a step that checks one of the spec's rules fails the spec on it: %+v", s)
	}
	unsaid := SpecResult{Rules: []string{"AUTH-001"}, State: Failed}
	if s := Settle(unsaid); s.State != Failed || strings.Join(s.Blamed(), ",") != "AUTH-001" {
		t.Errorf("a spec that named no step fails every rule it carries: %+v", s)
	}
	res := results(Settle(own), SpecResult{Text: "auth b", Rules: []string{"AUTH-003"}, State: Passed})
	got := map[string]string{}
	for _, v := range res.Rules {
		got[v.Rule.ID] = v.Verdict
	}
	if got["HEALTH-002"] != Failed || got["AUTH-001"] != Blocked {
		t.Errorf("verdicts %v: want HEALTH-002 failed (the blocker) and AUTH-001 blocked", got)
	}
	if res.SpecCounts.Blocked != 1 || res.SpecCounts.Failed != 0 || res.RuleCounts.Blocked != 1 || res.RuleCounts.Failed != 1 {
		t.Errorf("counts %+v / %+v", res.SpecCounts, res.RuleCounts)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "1 specs blocked") {
		t.Errorf("Err = %v: a blocked spec fails the run", err)
	}
	if line := res.SpecLine(); line != "1 passed, 0 failed, 1 blocked, 0 skipped" {
		t.Errorf("spec line %q", line)
	}
}

// Specs the label filter left out are counted apart: the skips, and their reasons, are the
// selected specs that did not run.
func TestNotSelectedIsNotSkipped(t *testing.T) {
	res := results(
		SpecResult{Text: "a", Rules: []string{"AUTH-001"}, State: Passed},
		SpecResult{Text: "b", Rules: []string{"AUTH-001"}, State: Skipped, Reason: "unsupported: no control"},
		SpecResult{Text: "c", Rules: []string{"HEALTH-002"}, State: NotSelected, Reason: NotSelectedReason},
		SpecResult{Text: "d", Rules: []string{"HEALTH-002"}, State: NotSelected, Reason: NotSelectedReason},
	)
	if c := res.SpecCounts; c.Skipped != 1 || c.NotSelected != 2 || c.Passed != 1 {
		t.Errorf("counts %+v, want 1 skipped and 2 not selected", c)
	}
	if line := res.SpecLine(); line != "1 passed, 0 failed, 1 skipped (2 not selected)" {
		t.Errorf("spec line %q", line)
	}
}

// Failures group by rule and expectation, wherever the assertion is and whatever calls, ids and
// numbers the message names, listing the calls; a different rule is another cause.
func TestCausesMergeByRuleAndExpectation(t *testing.T) {
	spec := func(text, loc, op, reason string, rules ...string) SpecResult {
		return SpecResult{Text: text, State: Failed, Rules: rules, FailedRules: rules[:1], FailureLocation: loc, Operation: op, Reason: reason}
	}
	const broke = "the exchange broke the REST description:\n  - response 200 to GET /api/v1/capabilities/"
	res := Results{Specs: []SpecResult{
		spec("a", "x.go:1", "GET /presets", "next_cursor of page 2 is not a cursor this list handed out: cur_0123456789abcdef", "PRESET-001"),
		spec("b", "y.go:9", "GET /presets", "next_cursor of page 3 is not a cursor this list handed out: cur_fedcba9876543210", "PRESET-001"),
		spec("c", "y.go:9", "GET /voices", "next_cursor of page 3 is not a cursor this list handed out: cur_fedcba9876543210", "VOICE-001"),
		{Text: "d", State: Failed, Rules: []string{"CAP-019"}, FailedRules: []string{"CAP-019"}, Operation: "GET /capabilities/{id}",
			Reason: broke + "talking_actor does not match " + strings.Repeat("the description ", 20)},
		{Text: "e", State: Failed, Rules: []string{"CAP-019"}, FailedRules: []string{"CAP-019"}, Operation: "GET /capabilities/{id}",
			Reason: broke + "no_such_capability_42980556 does not match " + strings.Repeat("the description ", 20)},
	}}
	causes := res.Causes()
	if len(causes) != 3 {
		for _, c := range causes {
			t.Log(c.Title())
		}
		t.Fatalf("%d causes, want 3 (presets, voices, capability detail)", len(causes))
	}
	if c := causes[0]; len(c.Specs) != 2 || c.CallList() != "GET /presets" || strings.Join(c.Rules, ",") != "PRESET-001" || c.Failed != 2 {
		t.Errorf("first cause %+v", c)
	}
	// One answer shape broken on many routes (the envelope) is one cause, naming its calls.
	envelope := Results{}
	for _, op := range []string{"POST /generations", "POST /estimates", "GET /assets/{id}", "POST /uploads", "POST /generations"} {
		envelope.Specs = append(envelope.Specs, SpecResult{Text: op, State: Failed, Operation: op,
			Rules: []string{"ERR-001"}, FailedRules: []string{"ERR-001"},
			Reason: "the exchange broke the REST description:\n  - response 404 to " + op + ": $.error.ok: property \"ok\" is missing"})
	}
	if causes := envelope.Causes(); len(causes) != 1 ||
		causes[0].CallList() != "POST /generations, POST /estimates, GET /assets/{id} and 1 more" {
		t.Errorf("envelope causes %+v", causes)
	}
}

// A cause's call is the one whose answer failed (FailedCall); the last call before a failure that
// names none (LastCall) is never a cause's call, in the causes or in the HTML report's table, and
// both survive the JSON report (which merge-reports reads back).
func TestCauseCallIsTheFailingOne(t *testing.T) {
	res := Results{Specs: []SpecResult{
		{Text: "judged", State: Failed, Rules: []string{"GEN-001"}, Reason: "want 200",
			FailedCall: "> GET http://127.0.0.1:1/api/v1/generations/gen_0123456789abcdef\n< 404 Not Found\n"},
		{Text: "state", State: Failed, Rules: []string{"GEN-002"}, Reason: "the balance moved",
			LastCall: "> GET http://127.0.0.1:1/api/v1/credits/balance\n< 200 OK\n"},
	}}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{}
	for _, c := range back.Causes() {
		calls[c.Sentence] = c.CallList()
	}
	if calls["want 200"] != "GET /generations/#" || calls["the balance moved"] != "" {
		t.Errorf("cause calls %q: want the failing call, and none for a failure that names none", calls)
	}
	buf.Reset()
	if err := back.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); !strings.Contains(html, "<code>GET /generations/#</code>") || strings.Contains(html, "credits/balance") {
		t.Error("the HTML report's causes do not name the failing call, or name the last call of a failure that names none")
	}
}

func TestSentenceNeverDumpsGoValues(t *testing.T) {
	for in, want := range map[string]string{
		"an error body is {\"error\": {...}} and nothing else\nExpected\n" +
			"    <map[string]interface {} | len:2>: {\"a\": 1}\nto have length 1": `an error body is {"error": {...}} and nothing else`,
		"Expected\n    <map[string]interface {} | len:1>: " +
			"{\"ok\": true}\nto have key \"error\"": `Expected an object: {"ok": true} to have key "error"`,
		"the row is map[a:map[b:1] c:[x y]] here": "the row is {...} here",
		"broken map[a:[1":                         "broken {...}",
	} {
		if got := Sentence(in); got != want {
			t.Errorf("Sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// JUnit case names are unique within a class and the same from run to run: a name that must be
// cut carries a tag of the full text, and specs with the same own text under different containers
// are told apart the same way.
func TestJUnitNamesUniqueAndStable(t *testing.T) {
	long := strings.Repeat("a very long spec text ", 10)
	specs := []SpecResult{
		{Text: "lists " + long + "one", Area: "lists", Rules: []string{"LIST-001"}, State: Passed},
		{Text: "lists " + long + "two", Area: "lists", Rules: []string{"LIST-001"}, State: Passed},
		{Text: "lists presets: answers 200", Leaf: "answers 200", Area: "lists", Rules: []string{"LIST-002"}, State: Passed},
		{Text: "lists voices: answers 200", Leaf: "answers 200", Area: "lists", Rules: []string{"LIST-002"}, State: Passed},
		{Text: "lists twin", Leaf: "twin", Area: "lists", Rules: []string{"LIST-003"}, State: Passed},
		{Text: "lists twin", Leaf: "twin", Area: "lists", Rules: []string{"LIST-003"}, State: Passed},
		{Text: "lists blocked", Leaf: "blocked", Area: "lists", Rules: []string{"LIST-004"}, State: Blocked,
			BlockedBy: []string{"CAP-001"}, Reason: "no ok"},
	}
	write := func() []Case {
		var out bytes.Buffer
		if err := (Results{Suite: "s", Specs: specs}).WriteJUnit(&out); err != nil {
			t.Fatal(err)
		}
		var doc JUnit
		if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Suites[0].Cases
	}
	first, again := write(), write()
	seen := map[string]bool{}
	for i, c := range first {
		if seen[c.Name] {
			t.Errorf("name %q given twice", c.Name)
		}
		seen[c.Name] = true
		if len([]rune(c.Name)) > MaxNameLen {
			t.Errorf("name %q is longer than %d", c.Name, MaxNameLen)
		}
		if c.Name != again[i].Name {
			t.Errorf("name %q, then %q", c.Name, again[i].Name)
		}
	}
	if b := first[6]; b.Failure == nil || b.Failure.Type != "blocked" || !strings.HasPrefix(b.Failure.Message, "blocked by CAP-001: ") {
		t.Errorf("blocked case %+v", b)
	}
	if first[0].Name != "LIST-001: "+Clip(specs[0].Text, MaxNameLen-10-len("LIST-001: "))+" #"+Tag(specs[0].Text) {
		t.Errorf("cut name %q", first[0].Name)
	}
}
