package clock

import "time"

// Format writes t as every answer of the service does: RFC 3339 in UTC with Z (fractional seconds
// when there are any).
func Format(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// FormatPtr is Format for an optional time: nil stays nil (null in JSON).
func FormatPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Format(*t)
	return &s
}
