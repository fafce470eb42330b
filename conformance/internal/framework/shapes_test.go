package framework

import "testing"

// Retry-After may be delta-seconds or an HTTP-date (RFC 9110); both are read as the wait.
func TestRetryAfterSeconds(t *testing.T) {
	date := "Mon, 07 Dec 2026 04:45:51 GMT"
	for _, tc := range []struct {
		v, date string
		want    int64
	}{{"17", "", 17}, {" 0 ", "", 0}, {"Mon, 07 Dec 2026 04:46:08 GMT", date, 17}, {"Mon, 07 Dec 2026 04:45:50 GMT", date, 0},
		{"Mon, 07 Dec 2026 04:46:08 GMT", "", -1}, {"soon", date, -1}, {"-3", "", -1}} {
		if got := retryAfterSeconds(tc.v, tc.date); got != tc.want {
			t.Errorf("retryAfterSeconds(%q, %q) = %d, want %d", tc.v, tc.date, got, tc.want)
		}
	}
}

// A memoized view handed out by Copy keeps reading its own document, and a change to one copy
// leaves the others alone.
func TestViewSurvivesCopy(t *testing.T) {
	r := &Response{Status: 200, Body: []byte(`{"ok":true,"nested":{"capability_id":"tts"}}`), Exchange: &Exchange{}}
	v := r.View(map[string]any{"capability_id": "tts", "config_schema": map[string]any{"type": "object"}})
	a, b := v.Copy(), v.Copy()
	if got, ok := Lookup(a.doc, "config_schema.type"); !ok || got != "object" {
		t.Fatalf("the copy of a view reads %v, %v", got, ok)
	}
	a.doc.(map[string]any)["config_schema"].(map[string]any)["type"] = "changed"
	if got, _ := Lookup(b.doc, "config_schema.type"); got != "object" {
		t.Fatalf("a change to one copy reached another: %v", got)
	}
}
