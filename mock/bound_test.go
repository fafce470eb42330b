package mock

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// serveBounded runs one request through boundHandlers and reports whether it ended by aborting the
// connection (panic http.ErrAbortHandler, as after a cut or a handler's panic).
func serveBounded(h http.Handler, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			aborted = true
		}
	}()
	h.ServeHTTP(w, r)
	return false
}

// Bounded requests reuse their jobs (writer and timer): a panic after a request that served
// before is answered 500 in the envelope and logged with the stack of the handler that panicked,
// and the next request is served normally.
func TestBoundedPanicOnAReusedJob(t *testing.T) {
	var log syncBuffer
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
	e.s.svc.API.HandlePublic("GET /test/panic", func(w http.ResponseWriter, r *http.Request) error {
		panicInBoundTest()
		return nil
	})
	h := e.s.boundHandlers(e.s)
	for i, tc := range []struct {
		path  string
		code  int
		abort bool
	}{{"/api/v1/health/live", 200, false}, {"/api/v1/test/panic", 500, true}, {"/api/v1/health/live", 200, false}} {
		rec := httptest.NewRecorder()
		aborted := serveBounded(h, rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.code || aborted != tc.abort {
			t.Fatalf("%d %s: %d aborted=%v, want %d aborted=%v: %s", i, tc.path, rec.Code, aborted, tc.code, tc.abort, rec.Body)
		}
		if tc.code == 500 && (errorCodeOf(t, rec.Body.Bytes()) != "internal_error" || rec.Header().Get("Content-Length") == "") {
			t.Fatalf("panic answer: %v %s", rec.Header(), rec.Body)
		}
	}
	if l := log.String(); !strings.Contains(l, "handler panicked") || !strings.Contains(l, "panicInBoundTest") {
		t.Fatalf("log lacks the panic with its handler's stack:\n%s", l)
	}
}

//go:noinline
func panicInBoundTest() { panic("a bug") }

func errorCodeOf(t *testing.T, body []byte) string {
	t.Helper()
	s := string(body)
	i := strings.Index(s, `"code":"`)
	if i < 0 {
		return ""
	}
	s = s[i+len(`"code":"`):]
	return s[:strings.IndexByte(s, '"')]
}

// A request whose client goes away before the bound is not cut: its handler sees its context end
// and returns, and the request ends without the cut's answer or log line.
func TestBoundedClientGoneIsNotCut(t *testing.T) {
	var log syncBuffer
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
	started := make(chan struct{})
	e.s.svc.API.HandlePublic("GET /test/waits", func(w http.ResponseWriter, r *http.Request) error {
		close(started)
		<-r.Context().Done()
		if _, ok := r.Context().Deadline(); !ok {
			t.Error("the handler's context has no deadline")
		}
		return nil
	})
	h := e.s.boundHandlers(e.s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	rec := httptest.NewRecorder()
	start := time.Now()
	if serveBounded(h, rec, httptest.NewRequestWithContext(ctx, "GET", "/api/v1/test/waits", nil)) {
		t.Fatalf("aborted: %d %s", rec.Code, rec.Body)
	}
	if d, bound := time.Since(start), e.s.cfg.Limits.HandlerBudget(); d >= bound {
		t.Fatalf("ended after %s, at the bound %s", d, bound)
	}
	if l := log.String(); strings.Contains(l, "request cut") || rec.Code == 500 {
		t.Fatalf("cut: %d\n%s", rec.Code, l)
	}
}

// The bound is on the handler's context, made when the handler asks for it: a handler waiting on
// it (or on a context derived from it) is released at the bound with DeadlineExceeded, and a
// context asked for after the handler returned has ended.
func TestBoundedContextEndsAtTheBound(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Limits.WriteTimeout = time.Second })
	kept := make(chan context.Context, 1)
	e.s.svc.API.HandlePublic("GET /test/asks", func(w http.ResponseWriter, r *http.Request) error {
		dl, ok := r.Context().Deadline()
		if !ok || time.Until(dl) > e.s.cfg.Limits.HandlerBudget() {
			t.Errorf("deadline %v %v: want within the bound %s", dl, ok, e.s.cfg.Limits.HandlerBudget())
		}
		derived, cancel := context.WithTimeout(r.Context(), time.Hour)
		defer cancel()
		<-derived.Done()
		if err := r.Context().Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("at the bound the context's Err is %v", err)
		}
		return nil
	})
	e.s.svc.API.HandlePublic("GET /test/keeps", func(w http.ResponseWriter, r *http.Request) error {
		kept <- r.Context()
		return nil
	})
	h := e.s.boundHandlers(e.s)
	start := time.Now()
	serveBounded(h, httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/test/asks", nil))
	if d, bound := time.Since(start), e.s.cfg.Limits.HandlerBudget(); d < bound {
		t.Fatalf("released after %s, before the bound %s", d, bound)
	}
	if serveBounded(h, httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/test/keeps", nil)) {
		t.Fatal("aborted")
	}
	ctx := <-kept
	select {
	case <-ctx.Done():
	default:
		t.Fatal("a context asked for after its handler returned has not ended")
	}
}
