package control

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// GET and DELETE /audit answer as control.yaml documents, with the audit on (findings with a key
// id and without one) and off.
func TestAuditOperations(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	newHandler := func(a *audit.Auditor) *Handler {
		h := New(Deps{Clock: clk, Registry: workspace.NewRegistry(clk, ids.New(3)), Limiter: ratelimit.New(clk, nil), Token: token,
			DefaultWorkspaceID: func() string { return "" }, Reset: func() {}})
		h.RegisterAudit(a)
		return h
	}
	call := func(h *Handler, method string) map[string]any {
		t.Helper()
		req := httptest.NewRequest(method, BasePath+"/audit", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		CheckAgainstDocument(t, method, "/audit", "", req.Header, rec)
		if rec.Code != 200 {
			t.Fatalf("%s /audit: %d %s", method, rec.Code, rec.Body)
		}
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return m
	}

	a := audit.New(audit.Config{Clock: clk})
	h := newHandler(a)
	if m := call(h, "GET"); m["enabled"] != true || len(m["findings"].([]any)) != 0 {
		t.Fatalf("empty audit: %v", m)
	}
	a.Observe(audit.Exchange{KeyID: "key_0123456789abcdef0123456789abcdef", Method: "GET", Path: "/api/v1/capabilities", Origin: "https://x", Status: 200, Start: clk.Now()})
	a.Observe(audit.Exchange{KeyID: "key_0123456789abcdef0123456789abcdef", Method: "GET", Path: "/api/v1/capabilities", Origin: "https://x", Status: 200, Start: clk.Now()})
	a.Observe(audit.Exchange{Method: "GET", Path: "/files/ast_0123456789abcdef0123456789abcdef/a.png", RawQuery: "expires=1&sig=x", Status: 401, Start: clk.Now()})
	m := call(h, "GET")
	f := m["findings"].([]any)
	if len(f) != 2 || f[0].(map[string]any)["count"] != 2.0 || f[1].(map[string]any)["key_id"] != nil {
		t.Fatalf("findings: %v", m)
	}
	if m := call(h, "DELETE"); len(m["findings"].([]any)) != 0 || len(m["totals"].([]any)) != 0 {
		t.Fatalf("after DELETE: %v", m)
	}

	off := newHandler(nil)
	for _, method := range []string{"GET", "DELETE"} {
		if m := call(off, method); m["enabled"] != false || m["message"] == nil {
			t.Fatalf("%s with the audit off: %v", method, m)
		}
	}
}
