package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/reporttest"
)

// The JUnit report is byte for byte what CI jobs already parse: suites per area in name order,
// attribute order, escapes, clipped names, the unselected spec left out.
func TestJUnitGolden(t *testing.T) {
	res := Results{
		Suite: "mediaspec conformance",
		Run:   RunInfo{Started: time.Date(2026, 11, 25, 10, 0, 0, 0, time.FixedZone("x", 3600)), Duration: 2500 * time.Millisecond},
		Specs: []SpecResult{
			{Text: "webhooks a delivery <signed> & \"quoted\"", Leaf: "a delivery <signed> & \"quoted\"", Area: "webhooks",
				Rules: []string{"WH-001", "WH-002"},
				State: Failed, Reason: "want 401 & <nothing>\n> GET /x\n< 200 OK", Location: "conformance/specs/webhooks.go:12",
				Duration: 1250 * time.Millisecond, Transcript: "> GET /x\n< 200 OK\n{\"a\":1}"},
			{Text: "auth " + strings.Repeat("a very long spec text ", 10), Area: "auth", Rules: []string{"AUTH-001"}, State: Passed,
				Location: "conformance/specs/auth.go:7", Duration: 3 * time.Millisecond},
			{Text: "auth skipped", Leaf: "skipped", Area: "auth", Rules: []string{"AUTH-002"}, State: Skipped, Reason: "unsupported: no control",
				Location: "conformance/specs/auth.go:9"},
			{Text: "not selected", Leaf: "not selected", Area: "auth", Rules: []string{"AUTH-003"}, State: Skipped, Reason: NotSelected},
			{Text: "job list", Leaf: "job list", Area: "job lists", Rules: []string{"JOB-001"}, State: Passed,
				Location: "conformance/specs/jobs.go:1"},
		},
	}
	var out bytes.Buffer
	if err := res.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "junit.golden.xml", out.Bytes())

	out.Reset()
	if err := (Results{Suite: "empty"}).WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "junit-empty.golden.xml", out.Bytes())
}
