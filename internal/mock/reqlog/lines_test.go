package reqlog

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestMiddlewareLineIsSlogs holds the request line to the one logger.LogAttrs writes for the same
// attributes, as text and as JSON, with and without a key id and an error code: the middleware hands
// the record to the handler itself, and what a client author reads must not change with it.
func TestMiddlewareLineIsSlogs(t *testing.T) {
	// Time and duration differ from call to call: the handler's ReplaceAttr fixes both, in both paths.
	fixed := func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.Time(slog.TimeKey, time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
		case "duration":
			return slog.Duration("duration", 1500*time.Microsecond)
		}
		return a
	}
	for _, format := range []string{"text", "json"} {
		newLogger := func(w *bytes.Buffer) *slog.Logger {
			o := &slog.HandlerOptions{ReplaceAttr: fixed}
			if format == "json" {
				return slog.New(slog.NewJSONHandler(w, o))
			}
			return slog.New(slog.NewTextHandler(w, o))
		}
		for _, c := range []struct {
			name, path, keyID, body string
			status                  int
		}{
			{"answer", "/api/v1/generations/gen_1", "key_abc", `{"ok":true}`, 200},
			{"refusal", "/api/v1/generations", "key_abc", `{"error":{"code":"insufficient_scope"}}`, 403},
			{"no key", "/api/v1/credits/balance", "", `{"error":{"code":"not_authorized"}}`, 401},
			{"a path to quote", "/api/v1/a b=\"c\"", "", `{"ok":true}`, 200},
		} {
			var got, want bytes.Buffer
			h := Middleware(newLogger(&got), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.keyID != "" {
					SetKeyID(w, c.keyID)
				}
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			req := httptest.NewRequest("GET", "http://mock"+"/x", nil)
			req.URL.Path = c.path
			h.ServeHTTP(httptest.NewRecorder(), req)
			attrs := []slog.Attr{slog.String("method", "GET"), slog.String("path", c.path), slog.Int("status", c.status), slog.Duration("duration", 0)}
			if c.keyID != "" {
				attrs = append(attrs, slog.String("key_id", c.keyID))
			}
			if c.status >= 400 {
				var code string
				switch c.status {
				case 403:
					code = "insufficient_scope"
				case 401:
					code = "not_authorized"
				}
				attrs = append(attrs, slog.String("error", code))
			}
			newLogger(&want).LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
			if got.String() != want.String() {
				t.Errorf("%s, %s:\n got  %q\n want %q", format, c.name, got.String(), want.String())
			}
		}
	}
}

// TestMiddlewareSkipsWhatTheLoggerDrops: above Info (--quiet) no line is built or written.
func TestMiddlewareSkipsWhatTheLoggerDrops(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := Middleware(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/x", nil))
	if out.Len() != 0 {
		t.Errorf("logged above its level: %q", out.String())
	}
}
