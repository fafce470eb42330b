package framework

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTarget answers the preflight's calls: /health/live, /credits/balance (200 for good, 401
// otherwise) and POST /generations (403 for the read key, 400 for any other key).
func fakeTarget(t *testing.T, good, read string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case r.URL.Path == "/api/v1/health/live":
			_, _ = w.Write([]byte(`{"ok":true,"status":"live"}`))
		case key != good && key != read:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"not_authorized"}}`))
		case r.Method == http.MethodPost && key == read:
			w.WriteHeader(http.StatusForbidden)
		case r.Method == http.MethodPost:
			w.WriteHeader(http.StatusBadRequest)
		default:
			_, _ = w.Write([]byte(`{"ok":true,"generations":[]}`))
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func newTestFramework(t *testing.T, cfg Config) *Framework {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 1
	}
	f, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPreflight(t *testing.T) {
	const good, read = "sk_live_good", "sk_live_read"
	ts := fakeTarget(t, good, read)
	tests := []struct {
		name string
		cfg  Config
		want string // "" for no error
	}{
		{"a good setup passes", Config{Key: good, ReadKey: read}, ""},
		{"a refused key stops the run in one line", Config{Key: "sk_live_wrong"}, "the key was refused (401)"},
		{"a read key that can generate is refused", Config{Key: good, ReadKey: good}, "the read key is the key"},
		{"the other key must be another key", Config{Key: good, OtherKey: good}, "the other key is the key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.BaseURL = ts.URL + "/api/v1"
			err := newTestFramework(t, tc.cfg).Preflight(context.Background())
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			var se *SetupError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Preflight = %v, want a SetupError with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk_live_") || strings.Contains(err.Error(), "\n") {
				t.Errorf("the message names a key or spans lines: %q", err)
			}
		})
	}
}

// A server that accepts connections and never answers fails the preflight within its bound, and a
// call the suite makes fails within the request timeout, naming the timeout.
func TestSilentServerNeverHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	f := newTestFramework(t, Config{BaseURL: "http://" + ln.Addr().String() + "/api/v1", Key: "sk_live_k"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = f.Preflight(ctx)
	if err == nil || !strings.Contains(err.Error(), "does not answer GET") {
		t.Errorf("Preflight against a silent server = %v", err)
	}
	f.SetRequestTimeout(100 * time.Millisecond)
	_, err = f.exchange(context.Background(), nil, http.MethodGet, f.resolve(f.apiRoot, "/credits/balance"), "sk_live_k", Bearer, nil)
	if err == nil || !strings.Contains(err.Error(), "GET http://") || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Errorf("a call to a silent server = %v, want it to name the call and the timeout", err)
	}
	// After a few calls in a row without an answer, the remaining specs are skipped with the reason.
	for i := 1; i < maxSilentCalls; i++ {
		if f.Unresponsive() != "" {
			t.Fatalf("unresponsive after %d silent calls", i)
		}
		_, _ = f.exchange(context.Background(), nil, http.MethodGet, f.resolve(f.apiRoot, "/credits/balance"), "sk_live_k", Bearer, nil)
	}
	if !strings.Contains(f.Unresponsive(), "the target stopped answering") {
		t.Errorf("after %d silent calls: %q", maxSilentCalls, f.Unresponsive())
	}
}

func TestCheckLocal(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "r.html")
	if err := CheckLocal(Config{HTMLReport: ok, JUnitReport: filepath.Join(dir, "j.xml"), LabelFilter: "AUTH-001 || slow"}); err != nil {
		t.Fatalf("writable paths and a good filter: %v", err)
	}
	if _, err := os.Stat(ok); !os.IsNotExist(err) {
		t.Error("the check left a report file behind")
	}
	for _, cfg := range []Config{
		{HTMLReport: filepath.Join(dir, "missing", "r.html")},
		{JSONReport: dir},
		{LabelFilter: "((("},
	} {
		err := CheckLocal(cfg)
		var se *SetupError
		if !errors.As(err, &se) {
			t.Errorf("%+v: %v, want a SetupError", cfg, err)
		} else if strings.Contains(err.Error(), "\x1b[") || strings.Contains(err.Error(), "{{") {
			t.Errorf("escape codes in %q", err)
		}
	}
}

// --base-url is taken as given when it has a path: "/" is the origin's root (a server that serves
// the document there), and only a URL with no path at all gets /api/v1.
func TestBaseURLTakenAsGiven(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:4010/":         "http://127.0.0.1:4010",
		"http://127.0.0.1:4010/v2/api/":  "http://127.0.0.1:4010/v2/api",
		"http://127.0.0.1:4010":          "http://127.0.0.1:4010/api/v1",
		"http://127.0.0.1:4010/api/v1/":  "http://127.0.0.1:4010/api/v1",
		"https://api.example.test/media": "https://api.example.test/media",
	} {
		u, err := Config{BaseURL: raw}.APIRoot()
		if err != nil || u.String() != want {
			t.Errorf("%s: API root %v (%v), want %s", raw, u, err, want)
		}
	}
	f := newTestFramework(t, Config{BaseURL: "http://127.0.0.1:4010/", Key: "sk_live_k"})
	if got := f.resolve(f.apiRoot, "/health/live").String(); got != "http://127.0.0.1:4010/health/live" {
		t.Errorf("a call at the root resolves to %s", got)
	}
}
