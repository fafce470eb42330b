package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/api"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/spec"
)

// staticResolver resolves hooks.example.com to a public address and nothing else; it never
// leaves the process (and no test here dials what it returns).
type staticResolver struct{}

func (staticResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	switch host {
	case "hooks.example.com", "other.example.com":
		return []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}, nil
	case "inside.example.com":
		return []net.IPAddr{{IP: net.ParseIP("10.9.8.7")}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

type whHarness struct {
	t                *testing.T
	h                http.Handler
	key, read, other string
}

func newWebhookHarness(t *testing.T) *whHarness {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC))
	src := ids.New(21)
	reg := workspace.NewRegistry(clk, src)
	svc := webhook.New(webhook.Config{Clock: clk, IDs: src, Resolver: staticResolver{}})
	t.Cleanup(svc.Close)
	rt := api.NewRouter(api.Deps{Clock: clk, Registry: reg, Limiter: ratelimit.New(clk, nil)})
	rt.RegisterWebhooks(svc)
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := &whHarness{t: t}
	w.h = v.Middleware(rt, func(v spec.Violation) {
		if v.Kind == "response" {
			t.Errorf("%v", v)
		}
	})
	mk := func(ws *workspace.Workspace, scopes ...workspace.Scope) string {
		_, secret, err := reg.CreateKey(ws, workspace.KeyParams{Scopes: scopes, Buckets: map[ratelimit.Bucket]int{ratelimit.WebhookManage: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	a := reg.Create(workspace.CreateParams{Balance: 10})
	b := reg.Create(workspace.CreateParams{Balance: 10})
	w.key = mk(a, workspace.ScopeRead, workspace.ScopeGenerate)
	w.read = mk(a, workspace.ScopeRead)
	w.other = mk(b, workspace.ScopeRead, workspace.ScopeGenerate)
	return w
}

func (w *whHarness) do(key, method, path, body string) (int, map[string]any, http.Header) {
	w.t.Helper()
	req := httptest.NewRequest(method, "/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		w.t.Fatalf("%s %s: body %q", method, path, rec.Body)
	}
	return rec.Code, m, rec.Header()
}

func errCode(m map[string]any) (string, string) {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	f, _ := e["field"].(string)
	return c, f
}

func TestWebhookRoutes(t *testing.T) {
	w := newWebhookHarness(t)
	code, m, hdr := w.do(w.key, "POST", "/webhooks", `{"url":"https://Hooks.Example.com:443/in","events":["generation.completed","credits.low"],"description":"prod"}`)
	if code != 201 || hdr.Get("Location") != "" {
		t.Fatalf("create: %d %v", code, m)
	}
	secret, _ := m["secret"].(string)
	hook, _ := m["webhook"].(map[string]any)
	id, _ := hook["webhook_id"].(string)
	if !strings.HasPrefix(secret, "whsec_") || hook["url"] != "https://hooks.example.com/in" || hook["status"] != "active" ||
		hook["consecutive_failures"] != float64(0) || hook["description"] != "prod" {
		t.Fatalf("create answer %v", m)
	}
	if ev := hook["events"].([]any); len(ev) != 2 || ev[0] != "generation.completed" || ev[1] != "credits.low" {
		t.Fatalf("events %v", ev)
	}
	code, m, _ = w.do(w.key, "POST", "/webhooks", `{"url":"https://other.example.com/","events":["batch.settled"]}`)
	if code != 201 || m["webhook"].(map[string]any)["description"] != nil {
		t.Fatalf("second: %d %v", code, m)
	}
	second := m["webhook"].(map[string]any)["webhook_id"].(string)

	// A read-only key lists but cannot change.
	code, m, _ = w.do(w.read, "GET", "/webhooks", "")
	list := m["webhooks"].([]any)
	if code != 200 || len(list) != 2 || list[0].(map[string]any)["webhook_id"] != second {
		t.Fatalf("list: %d %v", code, m)
	}
	for _, row := range list {
		if _, has := row.(map[string]any)["secret"]; has {
			t.Fatal("the list carries a secret")
		}
	}
	raw, _ := json.Marshal(m)
	if strings.Contains(string(raw), secret) {
		t.Fatal("the list carries the secret")
	}
	if code, m, _ = w.do(w.read, "POST", "/webhooks", `{"url":"https://hooks.example.com/","events":["credits.low"]}`); code != 403 {
		t.Fatalf("read key create: %d %v", code, m)
	}
	if code, m, _ = w.do(w.read, "DELETE", "/webhooks/"+id, ""); code != 403 {
		t.Fatalf("read key delete: %d %v", code, m)
	}
	// Another workspace's id is not found; the other workspace lists nothing.
	if code, m, _ = w.do(w.other, "DELETE", "/webhooks/"+id, ""); code != 404 {
		t.Fatalf("other delete: %d %v", code, m)
	}
	if _, m, _ = w.do(w.other, "GET", "/webhooks", ""); len(m["webhooks"].([]any)) != 0 {
		t.Fatalf("other list %v", m)
	}
	code, m, _ = w.do(w.key, "DELETE", "/webhooks/"+id, "")
	if code != 200 || m["deleted"] != true || m["webhook_id"] != id || m["ok"] != true {
		t.Fatalf("delete: %d %v", code, m)
	}
	if code, m, _ = w.do(w.key, "DELETE", "/webhooks/"+id, ""); code != 404 {
		t.Fatalf("second delete: %d %v", code, m)
	}
	if code, m, _ = w.do(w.key, "DELETE", "/webhooks/wh_nope", ""); code != 404 {
		t.Fatalf("malformed id: %d %v", code, m)
	}
}

func TestWebhookRegistrationRefusals(t *testing.T) {
	w := newWebhookHarness(t)
	ev := `"events":["credits.low"]`
	for _, c := range []struct{ body, field string }{
		{`{"url":"https://hooks.example.com/",` + ev + `,"secret":"x"}`, "secret"},
		{`{` + ev + `}`, "url"},
		{`{"url":"",` + ev + `}`, "url"},
		{`{"url":"https://hooks.example.com/` + strings.Repeat("a", 2030) + `",` + ev + `}`, "url"},
		{`{"url":"http://hooks.example.com/",` + ev + `}`, "url"},
		{`{"url":"http://127.0.0.1:8080/",` + ev + `}`, "url"},
		{`{"url":"https://user:pw@hooks.example.com/",` + ev + `}`, "url"},
		{`{"url":"https://169.254.169.254/",` + ev + `}`, "url"},
		{`{"url":"https://inside.example.com/",` + ev + `}`, "url"},
		{`{"url":"https://missing.example.com/",` + ev + `}`, "url"},
		{`{"url":"https://hooks.example.com/"}`, "events"},
		{`{"url":"https://hooks.example.com/","events":[]}`, "events"},
		{`{"url":"https://hooks.example.com/","events":["nope"]}`, "events"},
		{`{"url":"https://hooks.example.com/","events":["webhook.test"]}`, "events"},
		{`{"url":"https://hooks.example.com/","events":["credits.low","credits.low"]}`, "events"},
		{`{"url":"https://hooks.example.com/",` + ev + `,"description":"` + strings.Repeat("d", 201) + `"}`, "description"},
		{`{"url":5,` + ev + `}`, "url"},
	} {
		code, m, _ := w.do(w.key, "POST", "/webhooks", c.body)
		if got, f := errCode(m); code != 400 || got != "invalid_config" || f != c.field {
			t.Errorf("%.90s: %d %s field %q, want 400 invalid_config %q", c.body, code, got, f, c.field)
		}
	}
	for i := range 10 {
		desc := strings.Repeat("d", 200)
		if i > 0 {
			desc = "n"
		}
		if code, m, _ := w.do(w.key, "POST", "/webhooks", `{"url":"https://hooks.example.com/`+string(rune('a'+i))+`",`+ev+`,"description":"`+desc+`"}`); code != 201 {
			t.Fatalf("endpoint %d: %d %v", i+1, code, m)
		}
	}
	code, m, _ := w.do(w.key, "POST", "/webhooks", `{"url":"https://hooks.example.com/k",`+ev+`}`)
	if got, _ := errCode(m); code != 400 || got != "invalid_config" {
		t.Fatalf("11th: %d %v", code, m)
	}
	if _, m, _ := w.do(w.key, "GET", "/webhooks", ""); len(m["webhooks"].([]any)) != 10 {
		t.Fatalf("list %v", m)
	}
}
