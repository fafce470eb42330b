package receivercheck

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/reporttest"
)

// The reports are byte for byte what CI jobs already parse: attribute order, escapes, the rule's
// deliveries as output, a skip for an unknown state, names clipped at 120 characters.
func TestReportsGolden(t *testing.T) {
	res := Result{
		Verdicts: []Verdict{
			{Rule: "RECV-001", State: Fail, Reason: "a delivery with a <bad> & \"tampered\" signature was answered 200"},
			{Rule: "RECV-002", State: Pass},
			{Rule: "RECV-005", State: Skip, Reason: "no answer: the receiver is unreachable"},
			{Rule: "RECV-999", State: "odd", Reason: strings.Repeat("é", 10)},
		},
		Cases: []Case{
			{Rule: "RECV-001", Name: "tampered body", Accept: false, Status: 200, Elapsed: 1500 * time.Microsecond},
			{Rule: "RECV-001", Name: "missing webhook-id", Accept: false, Status: 400, Elapsed: 2 * time.Millisecond, OK: true},
			{Rule: "RECV-002", Name: "timestamp 4m59s past", Accept: true, Status: 204, Elapsed: 3 * time.Millisecond, OK: true},
			{Rule: "RECV-005", Name: "webhook.test", Accept: true, Err: "dial tcp 127.0.0.1:1: connect: connection refused"},
		},
	}
	var out bytes.Buffer
	if err := WriteJUnit(&out, res); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "junit.golden.xml", out.Bytes())
	out.Reset()
	if err := WriteJSON(&out, "http://127.0.0.1:1/hooks?a=1&b=<2>", res); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "report.golden.json", out.Bytes())

	out.Reset()
	if err := WriteJUnit(&out, Result{}); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "junit-empty.golden.xml", out.Bytes())
	out.Reset()
	if err := WriteJSON(&out, "", Result{}); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "report-empty.golden.json", out.Bytes())
}
