package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/api"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock/clock"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const testToken = "ctl_test_token"

type env struct {
	t   *testing.T
	s   *Server
	clk *clock.Manual
}

func newEnv(t *testing.T, mut ...func(*Config)) *env {
	t.Helper()
	clk := clock.NewManual(t0)
	cfg := Config{
		Seed: 7, ControlToken: testToken, Clock: clk,
		Logger:      slog.New(slog.DiscardHandler),
		OpenAPIJSON: []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1.2.0"},"paths":{}}`),
	}
	for _, m := range mut {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &env{t: t, s: s, clk: clk}
}

type resp struct {
	code int
	hdr  http.Header
	body map[string]any
	raw  string
}

func (r resp) errField(name string) any {
	e, _ := r.body["error"].(map[string]any)
	return e[name]
}

// call sends method path with optional headers "Name: value" and a body.
func (e *env) call(method, path, body string, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	rec := httptest.NewRecorder()
	e.s.ServeHTTP(rec, req)
	out := resp{code: rec.Code, hdr: rec.Header(), raw: rec.Body.String()}
	if ct := rec.Header().Get("Content-Type"); ct == "application/json" {
		if err := json.Unmarshal(rec.Body.Bytes(), &out.body); err != nil {
			e.t.Fatalf("%s %s: body %q: %v", method, path, rec.Body.String(), err)
		}
	}
	return out
}

func bearer(k string) string { return "Authorization: Bearer " + k }
func ctl() string            { return bearer(testToken) }

// control calls the control API and fails the test on an unexpected status.
func (e *env) control(method, path, body string, want int) map[string]any {
	e.t.Helper()
	r := e.call(method, "/_control/v1"+path, body, ctl())
	if r.code != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, r.code, r.raw, want)
	}
	return r.body
}

func (e *env) newKey(wsID, body string) string {
	e.t.Helper()
	return e.control("POST", "/workspaces/"+wsID+"/keys", body, 201)["key"].(string)
}

func (e *env) newWorkspace(body string) string {
	e.t.Helper()
	return e.control("POST", "/workspaces", body, 201)["workspace_id"].(string)
}

func TestAuthOutcomes(t *testing.T) {
	e := newEnv(t)
	// A generate-scoped test route.
	generate := func(w http.ResponseWriter, r *http.Request) error {
		c := api.Caller(r.Context())
		return wire.WriteJSON(w, 200, map[string]any{"ok": true, "key_id": c.Key.KeyID, "workspace_id": c.Workspace.ID()})
	}
	e.s.svc.API.Handle("POST /test/generate", workspace.ScopeGenerate, ratelimit.AgentSubmit, generate)
	info := e.s.Info()
	def := info.DefaultWorkspaceID

	revoked := e.control("POST", "/workspaces/"+def+"/keys", `{"scopes":["read"]}`, 201)
	e.control("DELETE", "/keys/"+revoked["key_id"].(string), "", 200)
	expired := e.newKey(def, `{"scopes":["read"],"expires_at":"2026-03-01T11:00:00Z"}`)
	goneWS := e.newWorkspace(`{}`)
	goneKey := e.newKey(goneWS, `{"scopes":["read"]}`)
	e.control("DELETE", "/workspaces/"+goneWS, "", 200)
	freeWS := e.newWorkspace(`{"plan":"free"}`)
	freeKey := e.newKey(freeWS, `{"scopes":["read","generate"]}`)
	allowanceKey := e.newKey(def, `{"scopes":["read"],"request_allowance":0}`)
	// A key whose agent_read bucket allows one call.
	bucketKey := e.newKey(def, `{"scopes":["read"],"buckets":{"agent_read":1}}`)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(bucketKey)); r.code != 200 {
		t.Fatalf("first bucket call %d %s", r.code, r.raw)
	}
	e.clk.Advance(15 * time.Second)
	unknown := "sk_live_" + strings.Repeat("A", 40)

	const balance = "/api/v1/credits/balance"
	cases := []struct {
		name    string
		method  string
		path    string
		headers []string
		status  int
		code    string
		check   func(t *testing.T, r resp)
	}{
		{name: "missing", method: "GET", path: balance, status: 401, code: "not_authorized"},
		{name: "malformed bearer", method: "GET", path: balance,
			headers: []string{"Authorization: Basic abc"}, status: 401, code: "not_authorized"},
		{name: "malformed key", method: "GET", path: balance, headers: []string{bearer("sk_test_123")}, status: 401, code: "not_authorized"},
		{name: "empty bearer", method: "GET", path: balance, headers: []string{"Authorization: Bearer "}, status: 401, code: "not_authorized"},
		{name: "unknown", method: "GET", path: balance, headers: []string{bearer(unknown)}, status: 401, code: "not_authorized"},
		{name: "revoked", method: "GET", path: balance, headers: []string{bearer(revoked["key"].(string))}, status: 401, code: "not_authorized"},
		{name: "expired", method: "GET", path: balance, headers: []string{bearer(expired)}, status: 401, code: "not_authorized"},
		{name: "two different keys", method: "GET", path: balance,
			headers: []string{bearer(info.ReadKey), "X-API-Key: " + info.GenerateKey}, status: 401, code: "not_authorized"},
		{name: "same key twice", method: "GET", path: balance,
			headers: []string{bearer(info.ReadKey), "X-API-Key: " + info.ReadKey}, status: 200},
		{name: "x-api-key", method: "GET", path: balance, headers: []string{"X-API-Key: " + info.ReadKey}, status: 200},
		{name: "deleted workspace", method: "GET", path: balance, headers: []string{bearer(goneKey)}, status: 410, code: "workspace_unavailable"},
		{name: "free plan", method: "GET", path: balance, headers: []string{bearer(freeKey)}, status: 403, code: "required_plan",
			check: func(t *testing.T, r resp) {
				if r.errField("required_plan") != "pro" {
					t.Fatalf("required_plan %v", r.errField("required_plan"))
				}
			}},
		{name: "allowance used", method: "GET", path: balance, headers: []string{bearer(allowanceKey)}, status: 429, code: "quota_exceeded",
			check: func(t *testing.T, r resp) {
				if r.hdr.Get("Retry-After") != "" || r.errField("retryable") != false {
					t.Fatalf("quota_exceeded: %v %v", r.hdr, r.body)
				}
			}},
		{name: "bucket", method: "GET", path: balance, headers: []string{bearer(bucketKey)}, status: 429, code: "rate_limited",
			check: func(t *testing.T, r resp) {
				if r.hdr.Get("Retry-After") != "45" || r.errField("retry_after_seconds") != float64(45) || r.errField("retryable") != true {
					t.Fatalf("rate_limited: Retry-After %q body %v", r.hdr.Get("Retry-After"), r.body)
				}
			}},
		{name: "read key on generate route", method: "POST", path: "/api/v1/test/generate",
			headers: []string{bearer(info.ReadKey)}, status: 403, code: "insufficient_scope"},
		{name: "generate key on generate route", method: "POST", path: "/api/v1/test/generate",
			headers: []string{bearer(info.GenerateKey)}, status: 200},
		{name: "generate key on read route", method: "GET", path: balance, headers: []string{bearer(info.GenerateKey)}, status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(c.method, c.path, "", c.headers...)
			if r.code != c.status {
				t.Fatalf("status %d %s, want %d", r.code, r.raw, c.status)
			}
			if c.code != "" {
				if r.errField("code") != c.code || r.errField("ok") != false || r.errField("credits_charged") != float64(0) {
					t.Fatalf("body %s, want code %s", r.raw, c.code)
				}
				if r.hdr.Get("Cache-Control") != "no-store" {
					t.Fatal("error without Cache-Control: no-store")
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

// TestAuthOrder: each failure is reported before the later ones.
func TestAuthOrder(t *testing.T) {
	e := newEnv(t)
	// Free plan and no allowance and read scope: plan wins.
	ws := e.newWorkspace(`{"plan":"free"}`)
	k := e.newKey(ws, `{"scopes":["read"],"request_allowance":0,"buckets":{"agent_read":0}}`)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(k)); r.errField("code") != "required_plan" {
		t.Fatalf("got %s", r.raw)
	}
	e.control("PATCH", "/workspaces/"+ws, `{"plan":"pro"}`, 200)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(k)); r.errField("code") != "quota_exceeded" {
		t.Fatalf("got %s", r.raw)
	}
	kid := e.control("POST", "/workspaces/"+ws+"/keys", `{"scopes":["read"],"buckets":{"agent_read":0}}`, 201)
	e.s.svc.API.Handle("POST /test/gen", workspace.ScopeGenerate, ratelimit.AgentRead, func(w http.ResponseWriter, r *http.Request) error {
		return wire.WriteJSON(w, 200, map[string]any{"ok": true})
	})
	if r := e.call("POST", "/api/v1/test/gen", "", bearer(kid["key"].(string))); r.errField("code") != "rate_limited" {
		t.Fatalf("bucket before scope: got %s", r.raw)
	}
	e.control("PATCH", "/keys/"+kid["key_id"].(string), `{"buckets":{"agent_read":null}}`, 200)
	if r := e.call("POST", "/api/v1/test/gen", "", bearer(kid["key"].(string))); r.errField("code") != "insufficient_scope" {
		t.Fatalf("scope: got %s", r.raw)
	}
}

func TestBalance(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Balance = 1234 })
	info := e.s.Info()
	r := e.call("GET", "/api/v1/credits/balance", "", bearer(info.ReadKey))
	if r.code != 200 || r.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", r.code, r.raw)
	}
	b := r.body
	if b["ok"] != true || b["available_credits"] != float64(1234) || b["held_credits"] != float64(0) ||
		b["balance_credits"] != float64(1234) || b["low_balance_threshold_credits"] != float64(0) || b["summary"] == "" {
		t.Fatalf("balance %v", b)
	}
	l := b["limits"].(map[string]any)
	if l["per_generation_credits"] != float64(600) || l["daily_credits"] != float64(2000) || l["daily_spent_credits"] != float64(0) ||
		l["daily_remaining_credits"] != float64(2000) || l["key_budget_credits"] != nil || l["key_remaining_credits"] != nil ||
		l["key_spent_credits"] != float64(0) {
		t.Fatalf("limits %v", l)
	}
	for _, k := range []string{"key_budget_credits", "key_remaining_credits"} {
		if _, ok := l[k]; !ok {
			t.Fatalf("%s absent, want null", k)
		}
	}
	// A key with a budget and changed workspace limits.
	e.control("PATCH", "/workspaces/"+info.DefaultWorkspaceID, `{"limits":{"daily_credits":500},"low_balance_threshold_credits":100}`, 200)
	k := e.newKey(info.DefaultWorkspaceID, `{"scopes":["read"],"budget_credits":300}`)
	l = e.call("GET", "/api/v1/credits/balance", "", bearer(k)).body["limits"].(map[string]any)
	if l["daily_credits"] != float64(500) || l["key_budget_credits"] != float64(300) || l["key_remaining_credits"] != float64(300) {
		t.Fatalf("limits %v", l)
	}
}

func TestHealthAndOpenAPI(t *testing.T) {
	e := newEnv(t)
	r := e.call("GET", "/api/v1/health/live", "")
	if r.code != 200 || r.body["status"] != "live" || r.body["ok"] != true {
		t.Fatalf("live %d %s", r.code, r.raw)
	}
	r = e.call("GET", "/api/v1/health/ready", "")
	if r.code != 200 || r.body["status"] != "ready" {
		t.Fatalf("ready %d %s", r.code, r.raw)
	}
	checks := r.body["checks"].(map[string]any)
	if r := e.call("GET", "/api/v1/openapi.json", ""); r.code != 401 {
		t.Fatalf("openapi without key: %d", r.code)
	}
	r = e.call("GET", "/api/v1/openapi.json", "", bearer(e.s.Info().ReadKey))
	if r.code != 200 || r.body["openapi"] != "3.0.3" {
		t.Fatalf("openapi %d %s", r.code, r.raw)
	}

	if checks["state"] != "ok" {
		t.Fatalf("checks %v", checks)
	}
	// Without its start state the probe fails, with the probe shape.
	e.control("POST", "/reset", "", 200)
	e.s.svc.Registry.Reset()
	r = e.call("GET", "/api/v1/health/ready", "")
	if r.code != 503 || r.body["ok"] != false || r.body["status"] != "not_ready" || r.body["checks"].(map[string]any)["state"] != "failing" {
		t.Fatalf("not ready %d %s", r.code, r.raw)
	}
}

func TestNotFoundAndWrongMethod(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path, mention string }{
		{"GET", "/api/v1/nope", ""},
		{"POST", "/api/v1/credits/balance", "GET"},
		{"DELETE", "/api/v1/health/live", "GET"},
		{"GET", "/elsewhere", "/api/v1"},
		{"GET", "/api/v1", ""},
	} {
		r := e.call(c.method, c.path, "")
		if r.code != 404 || r.errField("code") != "not_found" {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.code, r.raw)
		}
		if c.mention != "" && !strings.Contains(r.errField("message").(string), c.mention) {
			t.Fatalf("%s %s: message %q lacks %q", c.method, c.path, r.errField("message"), c.mention)
		}
	}
}

func TestNoCORS(t *testing.T) {
	e := newEnv(t)
	key := e.s.Info().ReadKey
	for _, r := range []resp{
		e.call("GET", "/api/v1/credits/balance", "", bearer(key), "Origin: https://evil.example"),
		e.call("OPTIONS", "/api/v1/credits/balance", "", "Origin: https://evil.example", "Access-Control-Request-Method: GET",
			"Access-Control-Request-Headers: authorization"),
		e.call("GET", "/api/v1/health/live", "", "Origin: https://evil.example"),
		e.call("OPTIONS", "/_control/v1/state", "", "Origin: https://evil.example", "Access-Control-Request-Method: GET"),
	} {
		for h := range r.hdr {
			if strings.HasPrefix(strings.ToLower(h), "access-control-") {
				t.Fatalf("CORS header %s: %v", h, r.hdr)
			}
		}
	}
	if r := e.call("OPTIONS", "/api/v1/credits/balance", "", "Origin: https://x"); r.code != 404 {
		t.Fatalf("preflight answered %d", r.code)
	}
}

func TestControlAuthAndDisable(t *testing.T) {
	e := newEnv(t)
	for _, h := range [][]string{nil, {bearer("wrong")}, {"Authorization: " + testToken}, {bearer(e.s.Info().GenerateKey)}} {
		r := e.call("GET", "/_control/v1/state", "", h...)
		if r.code != 401 || r.errField("code") != "not_authorized" {
			t.Fatalf("headers %v: %d %s", h, r.code, r.raw)
		}
	}
	if r := e.call("GET", "/_control/v1/nope", "", ctl()); r.code != 404 {
		t.Fatalf("unknown control op %d", r.code)
	}
	st := e.control("GET", "/state", "", 200)
	if st["now"] != "2026-03-01T12:00:00Z" || st["time_scale"] != float64(0) || st["default_workspace_id"] != e.s.Info().DefaultWorkspaceID {
		t.Fatalf("state %v", st)
	}

	off := newEnv(t, func(c *Config) { c.NoControl = true; c.ControlToken = "" })
	if r := off.call("GET", "/_control/v1/state", "", ctl()); r.code != 404 || r.errField("code") != "not_found" {
		t.Fatalf("disabled control answered %d %s", r.code, r.raw)
	}
	if i := off.s.Info(); i.ControlURL != "" || i.ControlToken != "" {
		t.Fatalf("disabled control printed %+v", i)
	}
}

func TestControlWorkspaces(t *testing.T) {
	e := newEnv(t)
	w := e.control("POST", "/workspaces", `{"name":"Acme","plan":"business","balance":50,`+
		`"limits":{"per_generation_credits":100,"daily_credits":null},"low_balance_threshold_credits":10}`, 201)
	id := w["workspace_id"].(string)
	if !workspace.WorkspaceIDPattern().MatchString(id) || w["name"] != "Acme" || w["plan"] != "business" ||
		w["available_credits"] != float64(50) || w["held_credits"] != float64(0) || w["deleted"] != false ||
		w["created_at"] != "2026-03-01T12:00:00Z" || w["low_balance_threshold_credits"] != float64(10) {
		t.Fatalf("created %v", w)
	}
	if l := w["limits"].(map[string]any); l["per_generation_credits"] != float64(100) || l["daily_credits"] != nil {
		t.Fatalf("limits %v", l)
	}
	d := e.control("POST", "/workspaces", `{}`, 201)
	if d["plan"] != "pro" || d["available_credits"] != float64(10000) {
		t.Fatalf("defaults %v", d)
	}
	g := e.control("GET", "/workspaces/"+id, "", 200)
	if g["name"] != "Acme" {
		t.Fatalf("get %v", g)
	}
	p := e.control("PATCH", "/workspaces/"+id, `{"plan":"pro","limits":{"per_generation_credits":null}}`, 200)
	if p["plan"] != "pro" || p["limits"].(map[string]any)["per_generation_credits"] != nil {
		t.Fatalf("patch %v", p)
	}
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/workspaces", `{"plan":"gold"}`, "plan"},
		{"POST", "/workspaces", `{"balance":-1}`, "balance"},
		{"POST", "/workspaces", `{"colour":"red"}`, "colour"},
		{"POST", "/workspaces", `{"limits":{"daily_credits":-5}}`, "limits.daily_credits"},
		{"PATCH", "/workspaces/" + id, `{"balance":5}`, "balance"},
		{"POST", "/workspaces/" + id + "/credits", `{"delta":-51}`, "delta"},
		{"POST", "/workspaces/" + id + "/credits", `{"set":-1}`, "set"},
		{"POST", "/workspaces/" + id + "/keys", `{"scopes":[]}`, "scopes"},
		{"POST", "/workspaces/" + id + "/keys", `{"scopes":["admin"]}`, "scopes"},
		{"POST", "/workspaces/" + id + "/keys", `{"scopes":["read"],"buckets":{"bogus":1}}`, "buckets.bogus"},
		{"POST", "/clock/advance", `{"seconds":0}`, "seconds"},
		{"POST", "/clock/advance", `{}`, "seconds"},
	} {
		r := e.call(c.method, "/_control/v1"+c.path, c.body, ctl())
		if r.code != 400 || r.errField("code") != "invalid_config" || r.errField("field") != c.field {
			t.Fatalf("%s %s %s: %d %s, want field %s", c.method, c.path, c.body, r.code, r.raw, c.field)
		}
	}
	r := e.call("POST", "/_control/v1/workspaces/"+id+"/credits", `{"delta":1,"set":1}`, ctl())
	if r.code != 400 || len(r.errField("fields").([]any)) != 2 {
		t.Fatalf("delta and set: %s", r.raw)
	}
	c := e.control("POST", "/workspaces/"+id+"/credits", `{"delta":-50}`, 200)
	if c["available_credits"] != float64(0) || c["held_credits"] != float64(0) {
		t.Fatalf("drain %v", c)
	}
	c = e.control("POST", "/workspaces/"+id+"/credits", `{"set":77}`, 200)
	if c["available_credits"] != float64(77) {
		t.Fatalf("set %v", c)
	}
	e.control("GET", "/workspaces/ws_00000000000000000000000000000000", "", 404)
	del := e.control("DELETE", "/workspaces/"+id, "", 200)
	if del["deleted"] != true || del["workspace_id"] != id {
		t.Fatalf("delete %v", del)
	}
	e.control("DELETE", "/workspaces/"+id, "", 404)
	if g := e.control("GET", "/workspaces/"+id, "", 200); g["deleted"] != true {
		t.Fatalf("deleted workspace reads %v", g)
	}
	e.control("PATCH", "/workspaces/"+id, `{"plan":"pro"}`, 404)
}

func TestControlKeys(t *testing.T) {
	e := newEnv(t)
	def := e.s.Info().DefaultWorkspaceID
	k := e.control("POST", "/workspaces/"+def+"/keys", `{"scopes":["generate","read"],"name":"ci","budget_credits":100,`+
		`"request_allowance":5,"buckets":{"agent_submit":3},"expires_at":"2026-04-01T00:00:00Z"}`, 201)
	secret := k["key"].(string)
	kid := k["key_id"].(string)
	if !workspace.KeyPattern().MatchString(secret) || len(secret) != 48 || !workspace.KeyIDPattern().MatchString(kid) ||
		k["name"] != "ci" || k["budget_credits"] != float64(100) || k["request_allowance"] != float64(5) ||
		k["buckets"].(map[string]any)["agent_submit"] != float64(3) || k["expires_at"] != "2026-04-01T00:00:00Z" || k["revoked"] != false {
		t.Fatalf("key %v", k)
	}
	g := e.control("GET", "/keys/"+kid, "", 200)
	if _, ok := g["key"]; ok {
		t.Fatal("GET key returned the secret")
	}
	e.call("GET", "/api/v1/credits/balance", "", bearer(secret))
	p := e.control("PATCH", "/keys/"+kid, `{"budget_credits":null,"request_allowance":1,"buckets":{"agent_submit":null,"agent_read":9}}`, 200)
	if p["budget_credits"] != nil || p["request_allowance"] != float64(1) || p["requests_used"] != float64(0) {
		t.Fatalf("patch %v", p)
	}
	if b := p["buckets"].(map[string]any); len(b) != 1 || b["agent_read"] != float64(9) {
		t.Fatalf("buckets %v", b)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(secret)); r.code != 200 {
		t.Fatalf("%d", r.code)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(secret)); r.errField("code") != "quota_exceeded" {
		t.Fatalf("allowance %s", r.raw)
	}
	e.control("PATCH", "/keys/"+kid, `{"scopes":["read"]}`, 400)
	rv := e.control("DELETE", "/keys/"+kid, "", 200)
	if rv["revoked"] != true {
		t.Fatalf("revoke %v", rv)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(secret)); r.code != 401 {
		t.Fatalf("revoked key answered %d", r.code)
	}
	e.control("PATCH", "/keys/key_00000000000000000000000000000000", `{}`, 404)
	e.control("DELETE", "/keys/key_00000000000000000000000000000000", "", 404)
	// Expiry by advancing the clock.
	exp := e.newKey(def, `{"scopes":["read"],"expires_at":"2026-03-01T12:01:00Z"}`)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(exp)); r.code != 200 {
		t.Fatalf("fresh key %d", r.code)
	}
	e.control("POST", "/clock/advance", `{"seconds":60}`, 200)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(exp)); r.code != 401 {
		t.Fatalf("expired key answered %d", r.code)
	}
}

func TestControlClock(t *testing.T) {
	e := newEnv(t)
	fired := false
	e.s.svc.Clock.AfterFunc(90*time.Second, func() { fired = true })
	a := e.control("POST", "/clock/advance", `{"seconds":90.5}`, 200)
	if a["now"] != "2026-03-01T12:01:30.5Z" || !fired {
		t.Fatalf("advance %v fired=%v", a, fired)
	}
	c := e.control("GET", "/clock", "", 200)
	if c["now"] != "2026-03-01T12:01:30.5Z" || c["time_scale"] != float64(0) {
		t.Fatalf("clock %v", c)
	}
}

func TestResetRestoresStartState(t *testing.T) {
	e := newEnv(t)
	before := e.s.Info()
	ws := e.newWorkspace(`{}`)
	extra := e.newKey(ws, `{"scopes":["read"]}`)
	e.control("POST", "/workspaces/"+before.DefaultWorkspaceID+"/credits", `{"set":5}`, 200)
	e.control("DELETE", "/workspaces/"+before.DefaultWorkspaceID, "", 200)
	hooked := 0
	e.s.OnReset(func() { hooked++ })
	r := e.control("POST", "/reset", "", 200)
	after := e.s.Info()
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("start info changed:\n%+v\n%+v", before, after)
	}
	if r["default_workspace_id"] != before.DefaultWorkspaceID || hooked != 1 {
		t.Fatalf("reset %v hooks %d", r, hooked)
	}
	b := e.call("GET", "/api/v1/credits/balance", "", bearer(before.GenerateKey))
	if b.code != 200 || b.body["available_credits"] != float64(10000) {
		t.Fatalf("after reset %d %s", b.code, b.raw)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(before.ReadKey)); r.code != 200 {
		t.Fatalf("read key after reset %d", r.code)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(extra)); r.code != 401 {
		t.Fatalf("key made before reset still works: %d", r.code)
	}
	e.control("GET", "/workspaces/"+ws, "", 404)
}

func TestResetClearsBuckets(t *testing.T) {
	e := newEnv(t)
	key := e.s.Info().ReadKey
	for range 120 {
		e.call("GET", "/api/v1/credits/balance", "", bearer(key))
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(key)); r.code != 429 {
		t.Fatalf("121st read %d", r.code)
	}
	e.control("POST", "/reset", "", 200)
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(key)); r.code != 200 {
		t.Fatalf("after reset %d", r.code)
	}
}

func TestDeterminism(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	if !reflect.DeepEqual(a.s.Info(), b.s.Info()) {
		t.Fatalf("same seed, different start:\n%+v\n%+v", a.s.Info(), b.s.Info())
	}
	for _, e := range []*env{a, b} {
		e.newWorkspace(`{}`)
	}
	wa, wb := a.newWorkspace(`{"name":"x"}`), b.newWorkspace(`{"name":"x"}`)
	if wa != wb || a.newKey(wa, `{"scopes":["read"]}`) != b.newKey(wb, `{"scopes":["read"]}`) {
		t.Fatal("same seed and requests gave different ids")
	}
	c := newEnv(t, func(cfg *Config) { cfg.Seed = 8 })
	if c.s.Info().GenerateKey == a.s.Info().GenerateKey {
		t.Fatal("different seeds gave the same key")
	}
	// Seed 0 picks a random seed and reports it; reusing it repeats the keys.
	r := newEnv(t, func(cfg *Config) { cfg.Seed = 0 })
	seed := r.s.Info().Seed
	again := newEnv(t, func(cfg *Config) { cfg.Seed = seed })
	if seed == 0 || again.s.Info().GenerateKey != r.s.Info().GenerateKey {
		t.Fatalf("reported seed %d does not reproduce the keys", seed)
	}
}

func TestStrictDecodingThroughControl(t *testing.T) {
	e := newEnv(t)
	big := `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, c := range []struct{ body, field, mention string }{
		{`{"name":`, "", "JSON"},
		{`[1,2]`, "", "object"},
		{`"text"`, "", "object"},
		{`null`, "", "object"},
		{`{} {}`, "", "after"},
		{`{"name":"a"}x`, "", ""},
		{`{"plan":5}`, "plan", "string"},
		{`{"balance":"lots"}`, "balance", "whole number"},
		{`{"balance":1.5}`, "balance", "whole number"},
		{`{"limits":{"daily_credits":"x"}}`, "", "whole number"},
		{`{"limits":{"nope":1}}`, "nope", "nope"},
		{`{"extra":true}`, "extra", "extra"},
		{``, "", "empty"},
		{big, "", "larger"},
	} {
		r := e.call("POST", "/_control/v1/workspaces", c.body, ctl())
		if r.code != 400 || r.errField("code") != "invalid_config" {
			t.Fatalf("body %.40q: %d %s", c.body, r.code, r.raw)
		}
		if c.field != "" && r.errField("field") != c.field {
			t.Fatalf("body %.40q: field %v, want %s", c.body, r.errField("field"), c.field)
		}
		if c.mention != "" && !strings.Contains(r.errField("message").(string), c.mention) {
			t.Fatalf("body %.40q: message %q lacks %q", c.body, r.errField("message"), c.mention)
		}
	}
}

func TestServeOnLoopback(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	req, _ := http.NewRequest("GET", base+"/api/v1/credits/balance", nil)
	req.Header.Set("X-API-Key", e.s.Info().GenerateKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	info := e.s.Info()
	if info.BaseURL != base+"/api/v1" || info.ControlURL != base+"/_control/v1" {
		t.Fatalf("info %+v", info)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	var buf bytes.Buffer
	err = info.Format(&buf)
	if err != nil || !strings.Contains(buf.String(), info.GenerateKey) || !strings.Contains(buf.String(), info.ControlToken) {
		t.Fatalf("banner %q %v", buf.String(), err)
	}
}

func BenchmarkAuth(b *testing.B) {
	s, err := New(Config{Seed: 1, Clock: clock.NewManual(t0), Logger: slog.New(slog.DiscardHandler), OpenAPIJSON: []byte(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws, _ := s.svc.Registry.Get(s.Info().DefaultWorkspaceID)
	_, key, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead}, Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 1 << 30},
	})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/v1/credits/balance", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// TestKeySets: extra key sets each hold their own two workspaces; the first set is the printed
// keys, unchanged by the extra sets (same seed, same keys).
func TestKeySets(t *testing.T) {
	one := newEnv(t).s.Info()
	if one.KeySets != nil {
		t.Fatalf("one key set lists key_sets: %+v", one.KeySets)
	}
	e := newEnv(t, func(c *Config) { c.KeySets = 3 })
	info := e.s.Info()
	if len(info.KeySets) != 3 {
		t.Fatalf("key sets: %+v", info.KeySets)
	}
	first := info.KeySets[0]
	if first.GenerateKey != info.GenerateKey || first.ReadKey != info.ReadKey || first.OtherKey != info.OtherKey ||
		first.GenerateKey != one.GenerateKey {
		t.Fatalf("the first key set is not the printed keys: %+v vs %+v", first, info)
	}
	seen := map[string]bool{}
	workspaces := map[string]bool{}
	for i, set := range info.KeySets {
		for _, k := range []string{set.GenerateKey, set.ReadKey, set.OtherKey} {
			if k == "" || seen[k] {
				t.Fatalf("set %d: key empty or repeated", i+1)
			}
			seen[k] = true
		}
		for _, k := range []string{set.GenerateKey, set.ReadKey, set.OtherKey} {
			ws, _, _, err := e.s.svc.Registry.Authenticate(k)
			if err != nil {
				t.Fatalf("set %d: %v", i+1, err)
			}
			workspaces[ws.ID()] = true
		}
	}
	if len(workspaces) != 6 {
		t.Fatalf("3 key sets should span 6 workspaces, got %v", workspaces)
	}
	if _, err := New(Config{KeySets: MaxKeySets + 1}); err == nil {
		t.Fatal("too many key sets accepted")
	}
}

// TestRoleKeys: the role fixtures of a profile answer as their roles say, come back the same after
// a reset, and leave the printed keys of a start state without them unchanged.
func TestRoleKeys(t *testing.T) {
	plain := newEnv(t).s.Info()
	e := newEnv(t, func(c *Config) { c.RoleKeys = true })
	info := e.s.Info()
	r := info.Roles
	if plain.Roles != nil || r == nil {
		t.Fatalf("roles without RoleKeys %+v, with it %+v", plain.Roles, r)
	}
	if info.GenerateKey != plain.GenerateKey || info.OtherKey != plain.OtherKey {
		t.Fatal("the role keys moved the printed keys")
	}
	for _, k := range []string{r.Revoked, r.Expired} {
		if got := e.call("GET", "/api/v1/credits/balance", "", bearer(k)); got.code != 401 || got.errField("code") != "not_authorized" {
			t.Errorf("revoked or expired key: %d %s", got.code, got.raw)
		}
	}
	if got := e.call("GET", "/api/v1/credits/balance", "", bearer(r.NoAgentAPI)); got.code != 403 || got.errField("required_plan") != "pro" {
		t.Errorf("free-plan key: %d %s", got.code, got.raw)
	}
	if got := e.call("GET", "/api/v1/credits/balance", "", bearer(r.GenerateOnly)); got.code != 200 {
		t.Errorf("generate-only key on a read: %d %s", got.code, got.raw)
	}
	got := e.call("GET", "/api/v1/credits/balance", "", bearer(r.DeletedWorkspace))
	if got.code != 410 || got.errField("code") != "workspace_unavailable" {
		t.Errorf("key of a deleted workspace: %d %s", got.code, got.raw)
	}
	if got := e.call("GET", "/api/v1/capabilities", "", bearer(r.AllowanceUsed)); got.code != 429 || got.errField("code") != "quota_exceeded" {
		t.Errorf("key with its allowance used: %d %s", got.code, got.raw)
	}
	low := e.call("GET", "/api/v1/credits/balance", "", bearer(r.LowBalance))
	if low.code != 200 || low.body["available_credits"] != float64(RoleLowBalance) {
		t.Errorf("low-balance key: %d %s", low.code, low.raw)
	}
	budget := e.call("GET", "/api/v1/credits/balance", "", bearer(r.Budget))
	limits, _ := budget.body["limits"].(map[string]any)
	if budget.code != 200 || limits["key_budget_credits"] != float64(RoleBudgetCredits) || r.BudgetCredits != RoleBudgetCredits {
		t.Errorf("budget key: %d %s", budget.code, budget.raw)
	}
	// video_4k requires the business plan in the catalogue: the business key reads it available.
	if got := e.call("GET", "/api/v1/capabilities/video_4k", "", bearer(r.Business)); got.code != 200 || got.body["status"] != "available" {
		t.Errorf("business key: %d %s", got.code, got.raw)
	}
	// The own-catalogue workspace's actor and cloned voice are listed to its key only.
	for _, tc := range []struct{ path, id string }{{"/api/v1/actors?limit=48", r.OwnActor}, {"/api/v1/voices?limit=50", r.OwnClonedVoice}} {
		if r := e.call("GET", tc.path, "", bearer(r.OwnCatalogue)); r.code != 200 || !strings.Contains(r.raw, tc.id) || tc.id == "" {
			t.Errorf("other key %s: %d, want %q listed", tc.path, r.code, tc.id)
		}
		if r := e.call("GET", tc.path, "", bearer(info.GenerateKey)); strings.Contains(r.raw, tc.id) {
			t.Errorf("key %s lists the other workspace's %s", tc.path, tc.id)
		}
	}
	// The sibling key is a second read+generate key of the printed key's workspace.
	if len(r.Siblings) != 1 {
		t.Fatalf("sibling keys %d, want 1 (one key set)", len(r.Siblings))
	}
	ws, sib, _, err := e.s.svc.Registry.Authenticate(r.Siblings[0])
	if err != nil || ws.ID() != info.DefaultWorkspaceID || sib.KeyID == "" || r.Siblings[0] == info.GenerateKey {
		t.Errorf("sibling key: workspace %v (%v), want the printed key's %s", ws, err, info.DefaultWorkspaceID)
	} else if !slices.Contains(sib.Scopes, workspace.ScopeGenerate) {
		t.Errorf("sibling key scopes %v, want read and generate", sib.Scopes)
	}
	e.s.Reset()
	if again := e.s.Info().Roles; !reflect.DeepEqual(again, r) {
		t.Errorf("a reset made other role keys: %+v, want %+v", again, r)
	}
}
