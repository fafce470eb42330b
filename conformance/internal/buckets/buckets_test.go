package buckets

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// bucket answers POST /estimates 400 for its first room calls and then a refusal: refusal's body
// as error and its Retry-After header.
type bucket struct {
	mu         sync.Mutex
	room, made int
	wait       any    // error.retry_after_seconds
	retryAfter string // the Retry-After header
}

func (b *bucket) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.mu.Lock()
	b.made++
	full := b.made > b.room
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	e := map[string]any{"ok": false, "code": "invalid_config", "message": "The config is missing.", "retryable": false,
		"credits_charged": 0}
	status := http.StatusBadRequest
	if full {
		status = http.StatusTooManyRequests
		e = map[string]any{"ok": false, "code": "rate_limited", "message": "Too many calls; wait and retry.",
			"retryable": true, "credits_charged": 0, "retry_after_seconds": b.wait}
		w.Header().Set("Retry-After", b.retryAfter)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

var (
	serving *bucket
	client  *framework.Client
)

// TestMain starts one test server on 127.0.0.1:0 (it answers with serving) and one framework over
// it.
func TestMain(m *testing.M) {
	var stop func()
	client, stop = drivertest.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serving.ServeHTTP(w, r)
	}))
	code := m.Run()
	stop()
	os.Exit(code)
}

func TestFill(t *testing.T) {
	serving = &bucket{room: 5, wait: 12, retryAfter: "12"}
	if msg := drivertest.FailureOf(t, func() { Fill(context.Background(), client, Estimate, 5) }); msg != "" {
		t.Fatalf("five calls inside a bucket of five failed: %s", msg)
	}
	serving = &bucket{room: 2, wait: 12, retryAfter: "12"}
	msg := drivertest.FailureOf(t, func() { Fill(context.Background(), client, Estimate, 5) })
	if !strings.Contains(msg, "POST /estimates call 3 of 5, inside the bucket") {
		t.Errorf("a bucket full after two calls: failure %q, want the third call's", msg)
	}
}

func TestExpectRefusal(t *testing.T) {
	tests := []struct {
		name       string
		wait       any
		retryAfter string
		says       string // "" for a right refusal
	}{
		{"right", 12, "12", ""},
		{"a minute", 60, "60", ""},
		{"header differs", 12, "13", "Retry-After"},
		{"no wait", 0, "0", "1..60 on a 60 s window"},
		{"past the window", 90, "90", "1..60 on a 60 s window"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serving = &bucket{wait: tc.wait, retryAfter: tc.retryAfter}
			var got int64
			msg := drivertest.FailureOf(t, func() { got = ExpectRefusal(Estimate.Do(context.Background(), client)) })
			switch {
			case tc.says == "" && msg != "":
				t.Errorf("a right refusal failed: %s", msg)
			case tc.says == "" && got != int64(tc.wait.(int)):
				t.Errorf("the wait read is %d, want %v", got, tc.wait)
			case tc.says != "" && !strings.Contains(msg, tc.says):
				t.Errorf("failure %q, want one saying %q", msg, tc.says)
			}
		})
	}
}
