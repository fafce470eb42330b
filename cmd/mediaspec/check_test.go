package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// With no target, check starts the embedded mock and runs the selected specs against it; the last
// lines give the rule and spec tallies. (Ginkgo runs one suite per process, so this is the only test
// here that runs specs.)
func TestCheckRunsTheEmbeddedMock(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "junit.xml")
	out, errOut, err := run(t, "check", "--label-filter", "HEALTH-001 || VER-001", "--junit-report", junit)
	if err != nil {
		t.Fatalf("check failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	checkJUnit(t, junit)
	// The first line is the run's headline (mode, target, budget, what it can judge), the second
	// names the embedded mock; the last is the headline again with what was judged and spent.
	if !regexp.MustCompile(`^mediaspec check: mode: embedded mock, control API, manual clock; profile: keys\+profile\+test-inputs\+control; target: http://127\.0\.0\.1:\d+/api/v1; a budget of 5000 credits; \d+ specs in \d+ areas selected: they can judge at most \d+ of \d+ text rules\nchecking the embedded mock at http://127\.0\.0\.1:`).MatchString(out) {
		t.Errorf("the first lines do not say what is checked and how:\n%s", out[:min(400, len(out))])
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last, specs, rules := lines[len(lines)-1], lines[len(lines)-2], lines[len(lines)-3]
	if !regexp.MustCompile(`^judged [1-9]\d* of \d+ text rules at profile keys\+profile\+test-inputs\+control \(\d+\.\d%\), \d+ partly judged, \d+ not judged; mode: embedded mock, control API, manual clock; target: http://127\.0\.0\.1:\d+/api/v1; credits spent: \d+ of a budget of 5000$`).MatchString(last) {
		t.Errorf("last line %q is not the headline", last)
	}
	// The label filter left most specs out: they are counted apart, not as skipped.
	if m := regexp.MustCompile(`^([1-9]\d*) passed, 0 failed, (\d+) skipped \([1-9]\d* not selected\)$`).FindStringSubmatch(specs); m == nil {
		t.Errorf("spec line %q is not 'N passed, 0 failed, N skipped (N not selected)' with N > 0", specs)
	}
	if !regexp.MustCompile(`^rules: [1-9]\d* passed, \d+ partly judged, 0 failed, \d+ skipped, [1-9]\d* not selected, \d+ not covered, \d+ unobservable; \d+ strict-only \(not judged against another server\)$`).MatchString(rules) {
		t.Errorf("rule tally line %q", rules)
	}
	if strings.Contains(out+errOut, "sk_live_") && !strings.Contains(out+errOut, "sk_live_[REDACTED]") {
		t.Error("a key appears unredacted in the output")
	}
}

// checkJUnit reads check's JUnit report: named and timed, a suite per area, every selected spec a
// passed case of its area's class, named by its rules.
func checkJUnit(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("JUnit report: %v", err)
	}
	var doc report.JUnit
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("JUnit report: %v\n%s", err, b)
	}
	if doc.Name == nil || *doc.Name != "mediaspec conformance" || doc.Time == nil || doc.Tests == 0 || doc.Failures != 0 || len(doc.Suites) == 0 {
		t.Fatalf("JUnit report header:\n%s", b)
	}
	seen := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Classname != s.Name || !strings.HasPrefix(s.Name, "mediaspec.") || c.Failure != nil || c.Time == nil {
				t.Errorf("case %+v in suite %s", c, s.Name)
			}
			seen[strings.FieldsFunc(c.Name, func(r rune) bool { return r == ',' || r == ':' })[0]] = true
		}
	}
	if !seen["HEALTH-001"] || !seen["VER-001"] {
		t.Errorf("the selected rules' cases are missing:\n%s", b)
	}
}

func TestCheckRefusesABadConfiguration(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--base-url", "ftp://example.invalid"}, // not http(s)
		{"check", "--base-url", "http://127.0.0.1:1"},    // no key and no control API
		{"check", "--budget", "-1"},                      // negative budget
		{"check", "--label-filter", "((("},               // not a label filter
		{"check", "--base-url", "http://127.0.0.1:1", "--key", "k", "--control-url", "http://127.0.0.1:1"}, // control without token
	} {
		_, _, err := run(t, args...)
		if err == nil {
			t.Errorf("%v: accepted", args)
		}
		var ue usageError
		if errors.As(err, &ue) && ue.msg == "" {
			t.Errorf("%v: usage error without a message", args)
		}
	}
}

// check --min-judged fails a run that judged less of the text than the floor, with one line
// saying so, and passes one at or above it.
func TestCheckMinJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out, code := checkInHelper(t, "--label-filter", "HEALTH-001", "--min-judged", "85%")
	if code != 1 || !regexp.MustCompile(`(?m)^ERROR: judged \d+ of \d+ text rules \(\d+\.\d%\), below --min-judged 85%$`).MatchString(out) {
		t.Errorf("below the floor: exit %d, want 1 and one line:\n%s", code, out)
	}
	if out, code := checkInHelper(t, "--label-filter", "HEALTH-001", "--min-judged", "0%"); code != 0 {
		t.Errorf("at the floor: exit %d\n%s", code, out)
	}
	if out, code := checkInHelper(t, "--min-judged", "150%"); code != 2 {
		t.Errorf("--min-judged 150%%: exit %d, want 2\n%s", code, out)
	}
}

// rules --by-need maps every text rule to the tier a run must offer to judge it fully, cumulatively:
// each observable rule is in one group, the strict-only ones apart.
func TestRulesByNeed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	out, code := inHelper(t, "rules", "--by-need", "--format", "json")
	body, _, _ := strings.Cut(out, "\nSTDERR:")
	var groups map[string][]string
	if err := json.Unmarshal([]byte(body), &groups); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for g, ids := range groups {
		for _, id := range ids {
			if prev, dup := seen[id]; dup {
				t.Errorf("%s in %s and %s", id, prev, g)
			}
			seen[id] = g
		}
	}
	for _, r := range cat.Rules {
		rr := report.Rule(r)
		switch g, ok := seen[r.ID]; {
		case !rr.Observable() && ok:
			t.Errorf("unobservable %s listed under %s", r.ID, g)
		case rr.Observable() && !ok:
			t.Errorf("%s is in no group", r.ID)
		case rr.Observable() && !rr.OfText() && g != report.NeedStrictOnly:
			t.Errorf("strict-only %s under %s", r.ID, g)
		}
	}
	if len(groups["keys"]) == 0 || len(groups[report.NeedControl]) == 0 {
		t.Errorf("groups %v", groups)
	}
	table, code := inHelper(t, "rules", "--by-need")
	if code != 0 || !strings.Contains(table, "keys only (--key): ") || !strings.Contains(table, "+ tier control: the test-control API (--control-url): ") {
		t.Errorf("table: exit %d\n%s", code, table)
	}
}
