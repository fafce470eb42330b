package answer

import (
	"testing"
	"time"
)

// An answer's timestamp is ISO 8601 with a zone: RFC 3339's forms and ISO 8601's other zone and
// fraction forms pass, a zoneless time and a date alone do not (issue 35, CORE-017).
func TestParseStamp(t *testing.T) {
	want := time.Date(2026, 12, 7, 4, 45, 51, 123456000, time.UTC)
	for _, s := range []string{"2026-12-07T04:45:51.123456Z", "2026-12-07T04:45:51.123456+00:00",
		"2026-12-07T04:45:51,123456+0000", "2026-12-07T05:45:51.123456+01", "2026-12-07T06:45:51.123456+02:00"} {
		got, err := ParseStamp(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStamp(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"2026-12-07T04:45:51", "2026-12-07", "2026-12-07 04:45:51Z", "yesterday"} {
		if _, err := ParseStamp(s); err == nil {
			t.Errorf("ParseStamp(%q) passed", s)
		}
	}
}
