package mock

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/spec"
)

func testInput(v string) string { return spec.TestInputHeader + ": " + v }

// A test input on a test key forces its fault for that one request: the next request without it is
// served as usual, and control's fault list never shows it.
func TestTestInputScopedToOneRequest(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TestInputs = true })
	key := e.s.Info().GenerateKey
	est := `{"capability_id":"tts","config":{"script":"hello there"}}`
	r := e.call("POST", "/api/v1/estimates", est, bearer(key), testInput("pricing_unavailable"))
	if r.code != 503 || r.errField("code") != "pricing_unavailable" {
		t.Fatalf("forced pricing outage: %d %s", r.code, r.raw)
	}
	if r := e.call("POST", "/api/v1/estimates", est, bearer(key)); r.code != 200 {
		t.Fatalf("the next estimate met the test input: %d %s", r.code, r.raw)
	}
	r = e.call("GET", "/api/v1/credits/balance", "", bearer(key), testInput("internal_error"))
	if r.code != 500 || r.errField("code") != "internal_error" {
		t.Fatalf("forced internal error: %d %s", r.code, r.raw)
	}
	// A render_fail on a read changes nothing; its fault is the request's and is never listed.
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(key), testInput("render_fail")); r.code != 200 {
		t.Fatalf("render_fail on a read: %d %s", r.code, r.raw)
	}
	if got := e.control("GET", "/faults", "", 200)["faults"].([]any); len(got) != 0 {
		t.Fatalf("control lists a test input's fault: %v", got)
	}
}

// An unknown or malformed value on a test key is 400 invalid_config naming the header, after the key
// checks; on a key that is not a test key, and on a mock without test inputs, the header is ignored.
func TestTestInputRefusalsAndProductionKeys(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TestInputs = true })
	info := e.s.Info()
	for _, v := range []string{"no_such_outcome", "not_ready", "delivery_fail", "render_fail; code=exploded", "slow_render",
		"slow_render; seconds=-1", "render_fail; colour=red", "render_fail; count=0", "render_fail; count=2; count=3",
		"render_fail, moderation_block",
		"cancel; message=hello", "webhook_test; message=%ZZ", "webhook_test; message=%FF", "recover; seconds=-2",
		"webhook_test; message=" + strings.Repeat("x", 1001)} {
		r := e.call("GET", "/api/v1/credits/balance", "", bearer(info.GenerateKey), testInput(v))
		if r.code != 400 || r.errField("code") != "invalid_config" || r.errField("field") != spec.TestInputHeader {
			t.Errorf("%q: %d %s", v, r.code, r.raw)
		}
	}
	r := e.call("GET", "/api/v1/credits/balance", "", bearer("sk_live_"+"0123456789abcdefghijklmnopqrstuvwxyzABCD"), testInput("bogus"))
	if r.code != 401 {
		t.Errorf("the key checks come first: %d", r.code)
	}
	// A key made later through control is not a test key: the header is ignored, even a bad one.
	prod := e.newKey(info.DefaultWorkspaceID, `{"scopes":["read","generate"]}`)
	for _, v := range []string{"internal_error", "bogus"} {
		if r := e.call("GET", "/api/v1/credits/balance", "", bearer(prod), testInput(v)); r.code != 200 {
			t.Errorf("a production key met test input %q: %d %s", v, r.code, r.raw)
		}
	}
	off := newEnv(t)
	if r := off.call("GET", "/api/v1/credits/balance", "", bearer(off.s.Info().GenerateKey), testInput("internal_error")); r.code != 200 {
		t.Errorf("a mock without test inputs honoured one: %d %s", r.code, r.raw)
	}
}

// A render_fail test input fails the generation its submit starts, when it starts rendering after
// the submit answered; a submit without it renders as usual. Test keys survive a reset.
func TestTestInputRenderFail(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TestInputs = true })
	e.control("POST", "/reset", "", 200)
	key := e.s.Info().GenerateKey
	body := func(script string) string {
		return fmt.Sprintf(`{"capability_id":"tts","config":{"script":%q},"max_credits":1000}`, script)
	}
	r := e.call("POST", "/api/v1/generations", body("the first one"), bearer(key), testInput("render_fail; code=timeout"))
	if r.code != 201 {
		t.Fatalf("submit: %d %s", r.code, r.raw)
	}
	failed := r.body["generation_id"].(string)
	e.control("POST", "/clock/advance", `{"seconds":3600}`, 200)
	r = e.call("POST", "/api/v1/generations", body("the second one"), bearer(key))
	if r.code != 201 {
		t.Fatalf("submit: %d %s", r.code, r.raw)
	}
	ok := r.body["generation_id"].(string)
	e.control("POST", "/clock/advance", `{"seconds":3600}`, 200)
	for id, want := range map[string]string{failed: "failed", ok: "completed"} {
		g := e.call("GET", "/api/v1/generations/"+id, "", bearer(key))
		gen, _ := g.body["generation"].(map[string]any)
		if gen["status"] != want {
			t.Errorf("%s: %v, want %s (%s)", id, gen["status"], want, g.raw)
		}
		if want == "failed" {
			if ge, _ := gen["error"].(map[string]any); ge["code"] != "timeout" {
				t.Errorf("failed with %v, want timeout", gen["error"])
			}
		}
	}
}

// A test input's faults match only the events of its request, before the control API's; EndRequest
// drops those its request can no longer meet and keeps the ones a started job takes later.
func TestStoreRequestScope(t *testing.T) {
	e := newEnv(t)
	s := e.s.svc.Faults
	if _, err := s.Add(faults.Spec{Kind: faults.PricingUnavailable, Request: "ti_a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(faults.Spec{Kind: faults.RenderFail, Request: "ti_a"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.TakeFor(faults.PricingUnavailable, "", ""); ok {
		t.Fatal("an event of no request took a test input's fault")
	}
	if _, ok := s.TakeIn(faults.PricingUnavailable, "ti_b", "", ""); ok {
		t.Fatal("another request took the fault")
	}
	s.EndRequest("ti_a")
	if _, ok := s.TakeIn(faults.PricingUnavailable, "ti_a", "", ""); ok {
		t.Fatal("EndRequest kept a fault no later event can take")
	}
	if f, ok := s.TakeIn(faults.RenderFail, "ti_a", "", ""); !ok || f.Request != "ti_a" {
		t.Fatal("EndRequest dropped the render_fail a started job takes later")
	}
}

// The app's acts a test input stands in for: a cancel fails the generation its submit accepted
// (code canceled, nothing charged) after its seconds; a recover writes the render off at render start
// and recovers it after its seconds (completed, charged at most its hold); a cancel on an invoke
// cancels the run before any step started. Control's POST /faults refuses both kinds.
func TestTestInputAppActs(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TestInputs = true })
	key := e.s.Info().GenerateKey
	submit := func(script, input string) string {
		t.Helper()
		body := fmt.Sprintf(`{"capability_id":"tts","config":{"script":%q},"max_credits":1000}`, script)
		r := e.call("POST", "/api/v1/generations", body, bearer(key), testInput(input))
		if r.code != 201 {
			t.Fatalf("submit with %q: %d %s", input, r.code, r.raw)
		}
		return r.body["generation_id"].(string)
	}
	gen := func(id string) map[string]any {
		t.Helper()
		g := e.call("GET", "/api/v1/generations/"+id, "", bearer(key))
		out, _ := g.body["generation"].(map[string]any)
		return out
	}
	canceled := submit("canceled by the app", "cancel; seconds=0.5")
	e.clk.Advance(time.Second)
	if g := gen(canceled); g["status"] != "failed" || g["error"].(map[string]any)["code"] != "canceled" {
		t.Errorf("canceled job: %v", g)
	}
	recovered := submit("written off, then recovered", "recover; seconds=600")
	e.clk.Advance(300 * time.Second)
	if g := gen(recovered); g["status"] != "failed" {
		t.Errorf("written-off job before its recovery: %v", g["status"])
	}
	e.clk.Advance(600 * time.Second)
	g := gen(recovered)
	credits, _ := g["credits"].(map[string]any)
	if g["status"] != "completed" || credits["credits_charged"].(float64) <= 0 {
		t.Errorf("recovered job: %v %v", g["status"], credits)
	}
	body := `{"inputs":{"prompt":"a mug on a desk"},"max_credits":100000}`
	r := e.call("POST", "/api/v1/workflows/templates/hero_image/invoke", body, bearer(key), testInput("cancel; seconds=0.5"))
	if r.code != 201 && r.code != 202 {
		t.Fatalf("invoke: %d %s", r.code, r.raw)
	}
	e.clk.Advance(time.Hour)
	run := e.call("GET", "/api/v1/workflow-runs/"+r.body["workflow_run_id"].(string), "", bearer(key))
	if st := run.body["run"].(map[string]any)["status"]; st != "canceled" {
		t.Errorf("canceled run: %v (%s)", st, run.raw)
	}
	for _, k := range []string{"cancel", "recover"} {
		e.control("POST", "/faults", `{"kind":"`+k+`"}`, 400)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(key), testInput("cancel; seconds=-1")); r.code != 400 {
		t.Errorf("negative seconds: %d %s", r.code, r.raw)
	}
}
