package buckets

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/gomega"

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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serving.ServeHTTP(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	cfg := framework.Config{BaseURL: srv.URL + "/api/v1", Key: "sk_live_test", TimeScale: 1, Procs: 1}
	f, err := framework.New(context.Background(), cfg)
	if err != nil {
		panic(err)
	}
	client = f.UnjudgedClient("sk_live_test")
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// failure is what the test's fail handler panics with, as Ginkgo's does inside a spec.
type failure string

// failureOf runs f and returns the message of the first assertion it failed, "" when none.
func failureOf(t *testing.T, f func()) (msg string) {
	t.Helper()
	gomega.RegisterFailHandler(func(message string, _ ...int) { panic(failure(message)) })
	defer func() {
		if r := recover(); r != nil {
			m, ok := r.(failure)
			if !ok {
				panic(r)
			}
			msg = string(m)
		}
	}()
	f()
	return ""
}

func TestFill(t *testing.T) {
	serving = &bucket{room: 5, wait: 12, retryAfter: "12"}
	if msg := failureOf(t, func() { Fill(context.Background(), client, Estimate, 5) }); msg != "" {
		t.Fatalf("five calls inside a bucket of five failed: %s", msg)
	}
	serving = &bucket{room: 2, wait: 12, retryAfter: "12"}
	msg := failureOf(t, func() { Fill(context.Background(), client, Estimate, 5) })
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
			msg := failureOf(t, func() { got = ExpectRefusal(Estimate.Do(context.Background(), client)) })
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
