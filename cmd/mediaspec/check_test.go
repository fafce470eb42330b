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
	if !strings.HasPrefix(out, "checking the embedded mock at http://127.0.0.1:") {
		t.Errorf("first line does not say what is checked:\n%s", out[:min(200, len(out))])
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last, rules := lines[len(lines)-1], lines[len(lines)-2]
	// The label filter left most specs out: they are counted apart, not as skipped.
	if m := regexp.MustCompile(`^([1-9]\d*) passed, 0 failed, (\d+) skipped \([1-9]\d* not selected by the label filter\)$`).FindStringSubmatch(last); m == nil {
		t.Errorf("last line %q is not 'N passed, 0 failed, N skipped (N not selected by the label filter)' with N > 0", last)
	}
	if !regexp.MustCompile(`^rules: [1-9]\d* passed, 0 failed, \d+ skipped, \d+ not covered, \d+ unobservable$`).MatchString(rules) {
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
