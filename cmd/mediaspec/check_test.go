package main

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/report"
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
	if !regexp.MustCompile(`^mediaspec check: mode: embedded mock, control API, manual clock; target: http://127\.0\.0\.1:\d+/api/v1; a budget of 5000 credits; \d+ specs in \d+ areas selected: they can judge at most \d+ of \d+ text rules\nchecking the embedded mock at http://127\.0\.0\.1:`).MatchString(out) {
		t.Errorf("the first lines do not say what is checked and how:\n%s", out[:min(400, len(out))])
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last, specs, rules := lines[len(lines)-1], lines[len(lines)-2], lines[len(lines)-3]
	if !regexp.MustCompile(`^judged [1-9]\d* of \d+ text rules \(\d+\.\d%\), \d+ partly judged, \d+ not judged; mode: embedded mock, control API, manual clock; target: http://127\.0\.0\.1:\d+/api/v1; credits spent: \d+ of a budget of 5000$`).MatchString(last) {
		t.Errorf("last line %q is not the headline", last)
	}
	// The label filter left most specs out: they are counted apart, not as skipped.
	if m := regexp.MustCompile(`^([1-9]\d*) passed, 0 failed, (\d+) skipped \([1-9]\d* not selected\)$`).FindStringSubmatch(specs); m == nil {
		t.Errorf("spec line %q is not 'N passed, 0 failed, N skipped (N not selected)' with N > 0", specs)
	}
	if !regexp.MustCompile(`^rules: [1-9]\d* passed, \d+ partly judged, 0 failed, \d+ skipped, [1-9]\d* not selected, \d+ not covered, \d+ unobservable$`).MatchString(rules) {
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
