package control

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

const token = "ctl_unit"

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../../../spec/control.yaml")
	if err != nil {
		t.Fatalf("load control.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("control.yaml invalid: %v", err)
	}
	return doc
}

func newHandler(t *testing.T) (*Handler, *workspace.Registry) {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := workspace.NewRegistry(clk, ids.New(3))
	def := reg.Create(workspace.CreateParams{Balance: 100})
	resets := 0
	h := New(Deps{
		Clock: clk, Registry: reg, Limiter: ratelimit.New(clk, nil), Token: token,
		DefaultWorkspaceID: func() string { return def.ID() },
		Reset:              func() { resets++ },
		Faults:             faults.New(clk, ids.New(4), faults.PricingUnavailable, faults.ProviderUnavailable, faults.SlowRender),
	})
	h.RegisterWebhooks(webhook.New(webhook.Config{Clock: clk, IDs: ids.New(5)}))
	h.RegisterResolver(netguard.NewHosts(nil))
	js := jobs.New(jobs.Deps{Clock: clk, IDs: ids.New(6), Registry: reg})
	h.RegisterJobs(js)
	h.RegisterWorkflows(workflows.New(workflows.Deps{Clock: clk, IDs: ids.New(7), Registry: reg, Jobs: js}))
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	h.RegisterCatalog(catalog.New(catalog.Deps{Fixtures: fx, IDs: ids.New(8)}))
	h.RegisterAudit(nil)
	return h, reg
}

// TestDocumentMatchesRoutes: every served operation is documented with
// x-implemented true, and every documented x-implemented true operation is
// served.
func TestDocumentMatchesRoutes(t *testing.T) {
	doc := loadDoc(t)
	h, _ := newHandler(t)
	served := h.Patterns()
	var implemented []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			impl, ok := op.Extensions["x-implemented"]
			if !ok {
				t.Errorf("%s %s has no x-implemented", method, path)
				continue
			}
			p := method + " " + path
			switch impl {
			case true:
				implemented = append(implemented, p)
				if !slices.Contains(served, p) {
					t.Errorf("%s is x-implemented but not served", p)
				}
			case false:
				if slices.Contains(served, p) {
					t.Errorf("%s is served but marked x-implemented: false", p)
				}
			default:
				t.Errorf("%s: x-implemented %v is not a boolean", p, impl)
			}
		}
	}
	for _, p := range served {
		if !slices.Contains(implemented, p) {
			t.Errorf("%s is served but not documented", p)
		}
	}
}

// TestAnswersMatchDocument drives each implemented operation and validates
// request and answer against control.yaml (strict status checking).
func TestAnswersMatchDocument(t *testing.T) {
	h, reg := newHandler(t)
	def := reg.Create(workspace.CreateParams{})
	_, _, _ = reg.CreateKey(def, workspace.KeyParams{Scopes: []workspace.Scope{workspace.ScopeRead}})

	vars := map[string]string{}
	call := func(method, path, body string, auth bool) (int, string) {
		t.Helper()
		for k, v := range vars {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		req := httptest.NewRequest(method, BasePath+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		CheckAgainstDocument(t, method, path, body, req.Header, rec)
		return rec.Code, rec.Body.String()
	}
	mustStatus := func(want int, method, path, body string) string {
		t.Helper()
		code, b := call(method, path, body, true)
		if code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
		}
		return b
	}
	grab := func(body, field string) string {
		i := strings.Index(body, `"`+field+`":"`)
		if i < 0 {
			t.Fatalf("no %s in %s", field, body)
		}
		rest := body[i+len(field)+4:]
		return rest[:strings.Index(rest, `"`)]
	}

	if code, _ := call("GET", "/state", "", false); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	mustStatus(200, "GET", "/state", "")
	ws := mustStatus(201, "POST", "/workspaces", `{"name":"a","plan":"business","balance":5,"limits":{"per_generation_credits":10,"daily_credits":null},"low_balance_threshold_credits":1}`)
	vars["id"] = grab(ws, "workspace_id")
	mustStatus(200, "GET", "/workspaces/{id}", "")
	mustStatus(200, "PATCH", "/workspaces/{id}", `{"plan":"free","limits":{"daily_credits":0}}`)
	mustStatus(400, "PATCH", "/workspaces/{id}", `{"plan":"gold"}`)
	mustStatus(200, "POST", "/workspaces/{id}/credits", `{"delta":10}`)
	mustStatus(200, "POST", "/workspaces/{id}/credits", `{"set":0}`)
	mustStatus(400, "POST", "/workspaces/{id}/credits", `{"delta":-1}`)
	key := mustStatus(201, "POST", "/workspaces/{id}/keys", `{"scopes":["read","generate"],"name":"k","budget_credits":5,"request_allowance":3,"buckets":{"agent_read":2},"expires_at":"2027-01-01T00:00:00Z"}`)
	vars["key_id"] = grab(key, "key_id")
	mustStatus(200, "GET", "/keys/{key_id}", "")
	mustStatus(200, "PATCH", "/keys/{key_id}", `{"budget_credits":null,"buckets":{"agent_read":null},"expires_at":null}`)
	mustStatus(200, "DELETE", "/keys/{key_id}", "")
	mustStatus(200, "GET", "/clock", "")
	mustStatus(200, "POST", "/clock/advance", `{"seconds":1.5}`)
	mustStatus(400, "POST", "/clock/advance", `{"seconds":-1}`)
	mustStatus(200, "DELETE", "/workspaces/{id}", "")
	mustStatus(404, "DELETE", "/workspaces/{id}", "")
	mustStatus(200, "GET", "/faults", "")
	flt := mustStatus(201, "POST", "/faults", `{"kind":"pricing_unavailable","capability_id":"tts","count":2}`)
	if !strings.Contains(flt, `"remaining":2`) || !strings.Contains(flt, `"code":null`) {
		t.Fatalf("queued fault: %s", flt)
	}
	mustStatus(201, "POST", "/faults", `{"kind":"provider_unavailable"}`)
	scoped := mustStatus(201, "POST", "/faults", `{"kind":"provider_unavailable","workspace_id":"`+def.ID()+`"}`)
	if !strings.Contains(scoped, `"workspace_id":"`+def.ID()+`"`) || !strings.Contains(scoped, `"seconds":null`) {
		t.Fatalf("scoped fault: %s", scoped)
	}
	slow := mustStatus(201, "POST", "/faults", `{"kind":"slow_render","capability_id":"video_fast","seconds":900}`)
	if !strings.Contains(slow, `"seconds":900`) || !strings.Contains(slow, `"workspace_id":null`) {
		t.Fatalf("slow_render fault: %s", slow)
	}
	mustStatus(404, "POST", "/faults", `{"kind":"provider_unavailable","workspace_id":"ws_ffffffffffffffffffffffffffffffff"}`)
	for _, bad := range []string{`{}`, `{"kind":"render_fail"}`, `{"kind":"pricing_unavailable","count":0}`, `{"kind":"pricing_unavailable","code":"timeout"}`, `{"kind":"pricing_unavailable","extra":1}`,
		`{"kind":"slow_render"}`, `{"kind":"slow_render","seconds":0}`, `{"kind":"pricing_unavailable","seconds":5}`} {
		mustStatus(400, "POST", "/faults", bad)
	}
	if b := mustStatus(200, "GET", "/faults", ""); strings.Count(b, "fault_id") != 4 {
		t.Fatalf("faults: %s", b)
	}
	if b := mustStatus(200, "DELETE", "/faults", ""); !strings.Contains(b, `"cleared":4`) {
		t.Fatalf("clear: %s", b)
	}
	mustStatus(200, "POST", "/reset", "")
	vars["id"] = "ws_ffffffffffffffffffffffffffffffff"
	mustStatus(404, "GET", "/workspaces/{id}", "")
}
