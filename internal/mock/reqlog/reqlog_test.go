package reqlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMiddlewareLogsEachRequestWithoutSecrets(t *testing.T) {
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	h := Middleware(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetKeyID(w, "key_123")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":"insufficient_scope","message":"no"}}`))
	}))
	req := httptest.NewRequest("POST", "/api/v1/generations?sig=secret", nil)
	req.Header.Set("Authorization", "Bearer sk_live_secret")
	h.ServeHTTP(httptest.NewRecorder(), req)
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", out.String())
	}
	for k, want := range map[string]any{"msg": "request", "method": "POST", "path": "/api/v1/generations", "status": 403.0, "key_id": "key_123", "error": "insufficient_scope"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v", k, line[k], want)
		}
	}
	if _, ok := line["duration"]; !ok {
		t.Error("no duration")
	}
	if strings.Contains(out.String(), "secret") {
		t.Errorf("the log shows a secret: %s", out.String())
	}
}
