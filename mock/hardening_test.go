package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveEnv serves e on 127.0.0.1:0 until the test ends and returns the address.
func serveEnv(t *testing.T, e *env) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// rawExchange writes req on a new connection and reads one answer.
func rawExchange(t *testing.T, addr, req string) (*http.Response, map[string]any) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%q: %d: the body is cut: %v", req, res.StatusCode, err)
	}
	var body map[string]any
	if res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &body) != nil {
		t.Fatalf("%q: %d %s %q: not the JSON envelope", req, res.StatusCode, res.Header.Get("Content-Type"), raw)
	}
	return res, body
}

func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// Issue 24: every answer a client can provoke, net/http's own refusals included, is the envelope
// with a status the error table lists; a path that is not clean is 404, never a redirect.
func TestEveryProvokedAnswerIsAnEnvelope(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Limits.MaxHeaderBytes = 4096 })
	addr := serveEnv(t, e)
	key := e.s.Info().ReadKey
	for _, tc := range []struct {
		name, req string
		status    int
		code      string
	}{
		{"header over the limit", "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n",
			400, "invalid_config"},
		{"bad escape in the path", "GET /api/v1/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_config"},
		{"control byte in a header", "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400, "invalid_config"},
		{"unreadable Content-Length", "POST /api/v1/estimates HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "invalid_config"},
		{"unknown Transfer-Encoding", "POST /api/v1/estimates HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "invalid_config"},
		{"no Host", "GET /api/v1/health/live HTTP/1.1\r\n\r\n", 400, "invalid_config"},
		{"HTTP/2.0 on HTTP/1", "GET /api/v1/health/live HTTP/2.0\r\nHost: x\r\n\r\n", 400, "invalid_config"},
		{"Expect other than 100-continue", "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\n", 400, "invalid_config"},
		{"dot-dot segment", "GET /api/v1/../api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"},
		{"dot-dot under the control API", "GET /_control/v1/../v1/clock HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"},
		{"doubled slash", "GET /api/v1//health/live HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"},
		{"CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 404, "not_found"},
		{"body cut inside an array", "POST /api/v1/estimates HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n" + `{"capability_id":["x`, 400, "invalid_config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, body := rawExchange(t, addr, tc.req)
			if res.StatusCode != tc.status || errorCode(body) != tc.code {
				t.Fatalf("%d %v, want %d %s", res.StatusCode, body, tc.status, tc.code)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("answered after %s", d)
			}
		})
	}
}

// A handler still running at the bound is cut: the client gets 500 internal_error in the
// envelope at the bound, and the connection closes. A handler that panics is answered the same
// way instead of with a dropped connection.
func TestHandlerPastItsBoundIsCut(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Limits.WriteTimeout = time.Second })
	release := make(chan struct{})
	e.s.svc.API.HandlePublic("GET /test/stuck", func(w http.ResponseWriter, r *http.Request) error {
		<-release
		return nil
	})
	e.s.svc.API.HandlePublic("GET /test/panic", func(w http.ResponseWriter, r *http.Request) error {
		panic("a bug")
	})
	addr := serveEnv(t, e)
	// The stuck handler returns before the server drains (which would give it the shutdown grace,
	// as any request in flight).
	t.Cleanup(func() { close(release) })
	bound := e.s.cfg.Limits.HandlerBudget()
	if bound <= e.s.cfg.Limits.WaitBudget() || bound >= time.Second {
		t.Fatalf("bound %s: want between the wait budget %s and the write timeout", bound, e.s.cfg.Limits.WaitBudget())
	}
	start := time.Now()
	res, body := rawExchange(t, addr, "GET /api/v1/test/stuck HTTP/1.1\r\nHost: x\r\n\r\n")
	if res.StatusCode != 500 || errorCode(body) != "internal_error" || !res.Close {
		t.Fatalf("stuck: %d %v close=%v", res.StatusCode, body, res.Close)
	}
	if d := time.Since(start); d < bound {
		t.Fatalf("cut after %s, before the bound %s", d, bound)
	}
	res, body = rawExchange(t, addr, "GET /api/v1/test/panic HTTP/1.1\r\nHost: x\r\n\r\n")
	if res.StatusCode != 500 || errorCode(body) != "internal_error" {
		t.Fatalf("panic: %d %v", res.StatusCode, body)
	}
	// The server still answers.
	res, _ = rawExchange(t, addr, "GET /api/v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n")
	if res.StatusCode != 404 {
		t.Fatalf("after the cut: %d", res.StatusCode)
	}
}

// Only net/http's whole canned answers are replaced; an answer a handler writes never is.
func TestEnvelopeForCannedOnlyReplacesCannedAnswers(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request and more",
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n200 OK",
		"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\n400 Bad Request",
		"{\"a\":1}",
	} {
		if _, ok := envelopeForCanned([]byte(p), 4096); ok {
			t.Errorf("replaced %q", p)
		}
	}
}
