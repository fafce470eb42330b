package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

type genFixture struct {
	*harness
	clk        *clock.Manual
	ws         *workspace.Workspace
	key        string
	voice      string // an active platform voice
	actor      string // a visible actor whose default voice is set
	actorVoice string
}

func newGenFixture(t *testing.T) *genFixture {
	t.Helper()
	h := newHarness(t)
	f := &genFixture{harness: h, clk: wired.Of(h.s).Clock.(*clock.Manual)}
	f.ws, _ = wired.Of(h.s).Registry.Get(h.s.DefaultWorkspaceID())
	f.key = f.submitKey(f.ws, nil)
	fx := wired.Of(h.s).Catalog.Fixtures()
	for _, a := range fx.Actors {
		if a.IsPlatform && a.State == fixtures.ActorReady && a.DefaultVoiceID != nil && (a.MinPlan == nil || *a.MinPlan == fixtures.PlanPro) {
			if vc, ok := fx.Voice(*a.DefaultVoiceID); ok && vc.Active && vc.IsPlatform {
				f.actor, f.actorVoice = a.ID, *a.DefaultVoiceID
				break
			}
		}
	}
	for _, v := range fx.Voices {
		if v.Active && v.IsPlatform && v.ID != f.actorVoice {
			f.voice = v.ID
			break
		}
	}
	if f.voice == "" || f.actor == "" {
		t.Fatal("fixtures lack a platform voice or actor")
	}
	return f
}

// submitKey makes a generate+read key with roomy buckets.
func (f *genFixture) submitKey(ws *workspace.Workspace, budget *int64) string {
	f.t.Helper()
	_, secret, err := wired.Of(f.s).Registry.CreateKey(ws, workspace.KeyParams{
		Scopes:        []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate},
		BudgetCredits: budget,
		Buckets:       map[ratelimit.Bucket]int{ratelimit.AgentRead: 100000, ratelimit.AgentEstimate: 100000, ratelimit.AgentSubmit: 100000},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return secret
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *genFixture) submit(key string, b map[string]any) answer {
	f.t.Helper()
	return f.do(key, http.MethodPost, "/api/v1/generations", js(b))
}

func (f *genFixture) mustSubmit(key string, b map[string]any) answer {
	f.t.Helper()
	a := f.submit(key, b)
	if a.code != http.StatusCreated {
		f.t.Fatalf("submit %s: %d %s", js(b), a.code, a.raw)
	}
	return a
}

func (f *genFixture) balance() (avail, held int64) {
	i := f.ws.Snapshot()
	return i.AvailableCredits, i.HeldCredits
}

func (f *genFixture) gen(key, id string) map[string]any {
	f.t.Helper()
	a := f.mustGet(key, "/generations/"+id)
	g, _ := a.body["generation"].(map[string]any)
	return g
}

func (f *genFixture) advance(sec float64) { f.clk.Advance(time.Duration(sec * float64(time.Second))) }

func obj(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }

func wantErr(t *testing.T, a answer, status int, code string) {
	t.Helper()
	if a.code != status || a.errString("code") != code {
		t.Fatalf("want %d %s, got %d %s", status, code, a.code, a.raw)
	}
	e := obj(a.body, "error")
	if e["credits_charged"] != float64(0) {
		t.Fatalf("credits_charged %v", e["credits_charged"])
	}
}

func tts(script, voice string, maxCredits int) map[string]any {
	return map[string]any{"capability_id": "tts", "config": map[string]any{"script": script}, "voice_id": voice, "max_credits": maxCredits}
}

// TestSubmitLifecycle follows one tts job: hold, states on the clock,
// capture, outputs, links and the list row.
func TestSubmitLifecycle(t *testing.T) {
	f := newGenFixture(t)
	av0, held0 := f.balance()
	a := f.mustSubmit(f.key, tts("Meet the bottle that keeps coffee hot.", f.voice, 100))
	id, _ := a.body["generation_id"].(string)
	if a.hdr.Get("Location") != "/api/v1/generations/"+id || a.hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", a.hdr)
	}
	cr := obj(a.body, "credits")
	// tts: ceil(38/1000)=1 x 3 = 3 credits, hold ceil(3.3) = 4.
	if cr["credits_held"] != float64(4) || cr["credits_charged"] != nil || cr["settlement"] != "open" || cr["terminal"] != false {
		t.Fatalf("credits %v", cr)
	}
	av, held := f.balance()
	if av != av0-4 || held != held0+4 || cr["wallet_balance"] != float64(av) {
		t.Fatalf("balance %d/%d after hold, want %d/%d; %v", av, held, av0-4, held0+4, cr)
	}
	if a.body["replay"] != false || a.body["run_id"] != nil || a.body["outputs_expected"] != float64(1) {
		t.Fatalf("answer %s", a.raw)
	}
	if _, ok := a.body["batch_group_id"]; ok {
		t.Fatal("batch_group_id on a single submit")
	}
	seen := []string{}
	for _, step := range []float64{0, 2, 14, 2, 2} { // render_seconds 20: 2 queued, 16 rendering, 2 post
		f.advance(step)
		g := f.gen(f.key, id)
		seen = append(seen, g["status"].(string))
	}
	want := []string{"queued", "rendering", "rendering", "post_processing", "completed"}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("statuses %v, want %v", seen, want)
	}
	av, held = f.balance()
	if av != av0-3 || held != held0 {
		t.Fatalf("after capture %d/%d, want %d/%d", av, held, av0-3, held0)
	}
	r := f.mustGet(f.key, "/generations/"+id)
	g := obj(r.body, "generation")
	c := obj(g, "credits")
	if c["credits_charged"] != float64(3) || c["settlement"] != "captured" || c["terminal"] != true || g["credits_left"] != float64(av) {
		t.Fatalf("settled %v", g)
	}
	if r.body["output_urls_expire_in_seconds"] != float64(600) {
		t.Fatalf("no link ttl: %s", r.raw)
	}
	outs, _ := g["outputs"].([]any)
	if len(outs) != 1 || g["outputs_delivered"] != float64(1) {
		t.Fatalf("outputs %v", outs)
	}
	o := outs[0].(map[string]any)
	url1, _ := o["url"].(string)
	assetID, _ := o["asset_id"].(string)
	if url1 == "" || o["kind"] != "audio" || o["duration_ms"] == nil {
		t.Fatalf("output %v", o)
	}
	obj1, ok := wired.Of(f.s).Blob.Get(assetID)
	if !ok || obj1.ContentType != "audio/wav" {
		t.Fatalf("blob %v %v", ok, obj1.ContentType)
	}
	// The output is rendered on download, the same bytes every time, of the recorded size.
	b1, err1 := obj1.Content()
	b2, err2 := obj1.Content()
	if err1 != nil || err2 != nil || len(b1) == 0 || int64(len(b1)) != obj1.Size || string(b1) != string(b2) {
		t.Fatalf("rendered content: %d bytes (size %d), %v %v, same %v", len(b1), obj1.Size, err1, err2, string(b1) == string(b2))
	}
	if as, ok := wired.Of(f.s).Assets.Get(f.ws.ID(), assetID); !ok || as.Source != "output" || !as.Listed || as.GenerationID != id {
		t.Fatalf("asset %+v", as)
	}
	// A later read signs a fresh link.
	f.advance(5)
	g2 := f.gen(f.key, id)
	u2 := g2["outputs"].([]any)[0].(map[string]any)["url"].(string)
	if u2 == url1 {
		t.Fatal("the link was not signed afresh")
	}
	// The list row carries the asset ids and the charge, no link.
	l := f.mustGet(f.key, "/generations")
	rows := l.list("generations")
	if len(rows) != 1 || rows[0]["generation_id"] != id || rows[0]["credits_charged"] != float64(3) || rows[0]["source"] != "api" {
		t.Fatalf("rows %v", rows)
	}
	if ids, _ := rows[0]["output_asset_ids"].([]any); len(ids) != 1 || ids[0] != assetID {
		t.Fatalf("row assets %v", rows[0])
	}
	if strings.Contains(l.raw, "http") {
		t.Fatal("list row carries a link")
	}
	// A second identical submit after the first finished starts and charges a new job.
	b := f.mustSubmit(f.key, tts("Meet the bottle that keeps coffee hot.", f.voice, 100))
	if b.body["replay"] != false || b.body["generation_id"] == id {
		t.Fatalf("resend %s", b.raw)
	}
}

// TestSubmitRefusalsInOrder checks each refusal of the check order, with
// its status, code and fields, and that none holds anything.
func TestSubmitRefusalsInOrder(t *testing.T) {
	f := newGenFixture(t)
	poor := wired.Of(f.s).Registry.Create(workspace.CreateParams{Plan: workspace.PlanPro, Balance: 5})
	poorKey := f.submitKey(poor, nil)
	av0, held0 := f.balance()
	long := strings.Repeat("x", 60)
	cases := []struct {
		name   string
		key    string
		body   string
		status int
		code   string
		check  func(e map[string]any) error
	}{
		{"malformed", f.key, `{"capability_id":`, 400, "invalid_config", nil},
		// An unknown body key is config validity, after max_credits (rule CHECK-005).
		{"unknown key after max_credits", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "max_credits": 1, "bogus": 1}), 402, "max_credits_exceeded", nil},
		{"unknown key", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "max_credits": 9, "bogus": 1}), 400, "invalid_config", field("bogus")},
		{"idempotency_key", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "max_credits": 9, "idempotency_key": "x"}), 400, "invalid_config", field("idempotency_key")},
		{"maxCredits", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "maxCredits": 9}), 400, "invalid_config", field("maxCredits")},
		{"webhook_url", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "max_credits": 9, "webhook_url": "https://x"}), 400, "invalid_config", field("webhook_url")},
		{"config not object", f.key, `{"capability_id":"tts","config":[],"max_credits":1}`, 400, "invalid_config", field("config")},
		{"max_credits string", f.key, `{"capability_id":"tts","config":{"script":"a"},"max_credits":"100"}`, 400, "invalid_config", field("max_credits")},
		{"max_credits 2.5", f.key, `{"capability_id":"tts","config":{"script":"a"},"max_credits":2.5}`, 400, "invalid_config", field("max_credits")},
		{"max_credits 0", f.key, `{"capability_id":"tts","config":{"script":"a"},"max_credits":0}`, 400, "invalid_config", field("max_credits")},
		{"missing config", f.key, `{"capability_id":"tts","max_credits":3}`, 400, "invalid_config", field("config")},
		{"variants 0", f.key, `{"capability_id":"video_fast","config":{"prompt":"a"},"max_credits":300,"variants":0}`, 400, "invalid_config", field("variants")},
		// max_credits before the 600 per-generation cap: 720 credits, hold 792.
		{"max_credits", f.key, js(map[string]any{"capability_id": "video_cinematic", "config": map[string]any{"prompt": "rain", "duration": 60}, "max_credits": 1}), 402, "max_credits_exceeded", func(e map[string]any) error {
			l := obj(e, "limit")
			if l["bound_by"] != "max_credits" || l["required_credits"] != float64(792) {
				return fmt.Errorf("limit %v", l)
			}
			return nil
		}},
		{"spend cap", f.key, js(map[string]any{"capability_id": "video_cinematic", "config": map[string]any{"prompt": "rain", "duration": 60}, "max_credits": 792}), 402, "spend_limit_exceeded", func(e map[string]any) error {
			if obj(e, "limit")["bound_by"] != "org_per_generation" {
				return fmt.Errorf("limit %v", e["limit"])
			}
			return nil
		}},
		// Credits before config validity (an unknown non-pricing key).
		{"credits", poorKey, js(map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "a", "nope": 1}, "max_credits": 22}), 402, "insufficient_credits", func(e map[string]any) error {
			if e["shortfall"] != float64(17) {
				return fmt.Errorf("shortfall %v", e["shortfall"])
			}
			return nil
		}},
		{"config", f.key, js(map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "a", "aspect": 1}, "max_credits": 22}), 400, "invalid_config", field("config.aspect")},
		{"unpriceable skips price checks", f.key, js(map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "a", "duration": "long"}, "max_credits": 1}), 400, "invalid_config", field("config.duration")},
		{"variants on a one-result capability", f.key, js(map[string]any{"capability_id": "tts", "config": map[string]any{"script": "a"}, "max_credits": 100, "variants": 1}), 400, "invalid_config", field("variants")},
		{"variants above ceiling", f.key, js(map[string]any{"capability_id": "video_cinematic", "config": map[string]any{"prompt": "a"}, "max_credits": 1, "variants": 4}), 400, "invalid_config", field("variants")},
		{"fan-out over 4", f.key, js(map[string]any{"capability_id": "translate_video", "config": map[string]any{"source_video": []string{"ast_00000000000000000000000000000000"}, "languages": []string{"de", "fr", "es", "it", "ja"}}, "max_credits": 1}), 400, "invalid_config", nil},
		{"requires plan after config", f.key, js(map[string]any{"capability_id": "video_4k", "config": map[string]any{"prompt": "a"}, "max_credits": 500}), 403, "required_plan", nil},
		{"unknown capability", f.key, js(map[string]any{"capability_id": "talking_actor", "config": map[string]any{}, "max_credits": 1}), 404, "capability_unavailable", func(e map[string]any) error {
			if e["capability_status"] != "unknown" {
				return fmt.Errorf("%v", e)
			}
			return nil
		}},
		{"moderation", f.key, js(map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "a BLOCKME b"}, "max_credits": 10}), 422, "moderation_blocked", nil},
		{"upload missing", f.key, js(map[string]any{"capability_id": "upscale", "config": map[string]any{"source_image": []string{"ast_00000000000000000000000000000001"}}, "max_credits": 100}), 404, "not_found", func(e map[string]any) error {
			if ids, _ := e["asset_ids"].([]any); len(ids) != 1 {
				return fmt.Errorf("asset_ids %v", e)
			}
			return nil
		}},
		{"not priced", f.key, js(map[string]any{"capability_id": "voice_design_beta", "config": map[string]any{"voice_description": "a warm narrator voice"}, "max_credits": 1}), 409, "not_priced", nil},
		{"actor_lite too short", f.key, js(map[string]any{"capability_id": "actor_lite", "config": map[string]any{"script": "Hi."}, "max_credits": 100}), 400, "invalid_config", field("config.script")},
		{"actor_lite variants", f.key, js(map[string]any{"capability_id": "actor_lite", "config": map[string]any{"script": long}, "max_credits": 100, "variants": 2}), 400, "invalid_config", field("variants")},
		{"actor_ultra skipping tts", f.key, js(map[string]any{"capability_id": "actor_ultra", "config": map[string]any{"script": "Hello there."}, "voice_id": f.voice, "actor_id": f.actor, "max_credits": 100}), 400, "invalid_config", field("approved_voice_generation_id")},
		{"actor_ultra aspect_ratio", f.key, js(map[string]any{"capability_id": "actor_ultra", "config": map[string]any{"script": "Hello.", "aspect_ratio": "9:16"}, "max_credits": 100}), 400, "invalid_config", field("config.aspect_ratio")},
	}
	for _, c := range cases {
		a := f.do(c.key, http.MethodPost, "/api/v1/generations", c.body)
		if a.code != c.status || a.errString("code") != c.code {
			t.Errorf("%s: want %d %s, got %d %s", c.name, c.status, c.code, a.code, a.raw)
			continue
		}
		e := obj(a.body, "error")
		if e["credits_charged"] != float64(0) {
			t.Errorf("%s: credits_charged %v", c.name, e["credits_charged"])
		}
		if c.check != nil {
			if err := c.check(e); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
	// Faults, in the order estimate_changed, not_priced, pricing, provider.
	for _, c := range []struct {
		kind   faults.Kind
		status int
		code   string
	}{
		{faults.EstimateChanged, 409, "estimate_changed"},
		{faults.PricingUnavailable, 503, "pricing_unavailable"},
		{faults.ProviderUnavailable, 502, "provider_unavailable"},
		{faults.ModerationUnavailable, 503, "moderation_unavailable"},
		{faults.ModerationBlock, 422, "moderation_blocked"},
	} {
		if _, err := wired.Of(f.s).Faults.Queue(c.kind, "image_fast", "", 1); err != nil {
			t.Fatal(err)
		}
		a := f.submit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "mug"}, "max_credits": 10})
		wantErr(t, a, c.status, c.code)
	}
	// Both queued: estimate_changed wins over pricing_unavailable.
	_, _ = wired.Of(f.s).Faults.Queue(faults.PricingUnavailable, "image_fast", "", 1)
	_, _ = wired.Of(f.s).Faults.Queue(faults.EstimateChanged, "image_fast", "", 1)
	wantErr(t, f.submit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "mug"}, "max_credits": 10}), 409, "estimate_changed")
	wired.Of(f.s).Faults.Clear()
	if av, held := f.balance(); av != av0 || held != held0 {
		t.Fatalf("refusals moved credits: %d/%d, want %d/%d", av, held, av0, held0)
	}
	if rows := f.mustGet(f.key, "/generations").list("generations"); len(rows) != 0 {
		t.Fatalf("refusals started generations: %v", rows)
	}
}

func field(name string) func(map[string]any) error {
	return func(e map[string]any) error {
		if e["field"] != name {
			return fmt.Errorf("field %v, want %s", e["field"], name)
		}
		return nil
	}
}

// TestWait returns at once for a finished job and after 18 s of service
// time for a running one.
func TestWait(t *testing.T) {
	f := newGenFixture(t)
	id := f.mustSubmit(f.key, map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "a dog"}, "max_credits": 22}).body["generation_id"].(string)
	pending := f.clk.Pending()
	done := make(chan answer, 1)
	go func() { done <- f.get(f.key, "/generations/"+id+"/wait?timeout=1") }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.clk.BlockUntil(ctx, pending+1); err != nil {
		t.Fatal("the wait did not arm its timer")
	}
	f.advance(17)
	select {
	case a := <-done:
		t.Fatalf("wait answered before 18 s: %s", a.raw)
	default:
	}
	f.advance(1)
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		t.Fatal("wait did not answer after 18 s")
	}
	if a.code != 200 || a.body["still_running"] != true || a.body["waited_seconds"] != float64(18) || a.body["retry_after_seconds"] != float64(0) || a.body["age_seconds"] != float64(18) {
		t.Fatalf("timeout answer %s", a.raw)
	}
	// A wait that ends with the job (render_seconds 90) answers then.
	f.advance(60)
	pending = f.clk.Pending()
	go func() { done <- f.get(f.key, "/generations/"+id+"/wait") }()
	if err := f.clk.BlockUntil(ctx, pending+1); err != nil {
		t.Fatal(err)
	}
	f.advance(12)
	a = <-done
	if a.body["still_running"] != false || obj(a.body, "generation")["status"] != "completed" || a.body["output_urls_expire_in_seconds"] != float64(600) {
		t.Fatalf("finished wait %s", a.raw)
	}
	// Finished: answers at once.
	a = f.get(f.key, "/generations/"+id+"/wait")
	if a.body["still_running"] != false || a.body["waited_seconds"] != float64(0) {
		t.Fatalf("at once %s", a.raw)
	}
	wantErr(t, f.get(f.key, "/generations/gen_00000000000000000000000000000000/wait"), 404, "not_found")
}

// TestVariantsAndBatches covers the three variant modes and batch reads.
func TestVariantsAndBatches(t *testing.T) {
	f := newGenFixture(t)
	av0, _ := f.balance()
	// Image model: one generation with 3 outputs, no batch; hold 3 x ceil(2.2).
	a := f.mustSubmit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "mug", "count": 1}, "variants": 3, "max_credits": 9})
	if _, ok := a.body["batch_group_id"]; ok || a.body["outputs_expected"] != float64(3) || len(a.body["generation_ids"].([]any)) != 1 {
		t.Fatalf("image variants %s", a.raw)
	}
	img := a.body["generation_id"].(string)
	f.advance(15)
	g := f.gen(f.key, img)
	if len(g["outputs"].([]any)) != 3 || g["outputs_delivered"] != float64(3) {
		t.Fatalf("image outputs %v", g)
	}
	// Video model: one generation per take under a bg_.
	k2 := f.submitKey(f.ws, nil)
	a = f.mustSubmit(k2, map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "a", "count": 3}, "variants": 2, "max_credits": 44})
	bg, _ := a.body["batch_group_id"].(string)
	ids, _ := a.body["generation_ids"].([]any)
	if !strings.HasPrefix(bg, "bg_") || len(ids) != 2 || a.body["generation_id"] != ids[0] || obj(a.body, "credits")["credits_held"] != float64(44) {
		t.Fatalf("video variants %s", a.raw)
	}
	// One slot: another submit of that key is in flight.
	in := f.submit(k2, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "x"}, "max_credits": 10})
	wantErr(t, in, 409, "submission_in_flight")
	b := f.mustGet(f.key, "/batches/"+bg)
	if b.body["status"] != "running" || b.body["variants"] != float64(2) || obj(b.body, "credits")["credits_charged"] != nil {
		t.Fatalf("running batch %s", b.raw)
	}
	if _, ok := obj(b.body, "credits")["wallet_balance"]; ok {
		t.Fatal("batch credits carry wallet_balance")
	}
	// Fail the second sibling: the batch ends partial, charged for the first only.
	if _, changed, err := wired.Of(f.s).Jobs.Fail(ids[1].(string), "timeout", ""); err != nil || !changed {
		t.Fatal(err)
	}
	f.advance(90)
	b = f.mustGet(f.key, "/batches/"+bg)
	cr := obj(b.body, "credits")
	if b.body["status"] != "partial" || b.body["variants_finished"] != float64(2) || cr["credits_charged"] != float64(20) || b.body["outputs_delivered"] != float64(1) || b.body["output_urls_expire_in_seconds"] != float64(600) {
		t.Fatalf("partial batch %s", b.raw)
	}
	gens := b.list("generations")
	if gens[0]["batch_index"] != float64(0) || gens[1]["batch_index"] != float64(1) || gens[1]["status"] != "failed" {
		t.Fatalf("siblings %v", gens)
	}
	if av, held := f.balance(); av != av0-6-20 || held != 0 {
		t.Fatalf("balance %d/%d, want %d/0", av, held, av0-26)
	}
	wantErr(t, f.get(f.key, "/batches/bg_00000000000000000000000000000000"), 404, "not_found")
	other := f.submitKey(wired.Of(f.s).Registry.Create(workspace.CreateParams{Balance: 100}), nil)
	wantErr(t, f.get(other, "/batches/"+bg), 404, "not_found")
	wantErr(t, f.get(other, "/generations/"+img), 404, "not_found")
}

// TestReplayInFlightAndSlot covers replay, in-flight refusals and the 10
// minute slot.
func TestReplayInFlightAndSlot(t *testing.T) {
	f := newGenFixture(t)
	// This server's catalogue is its own: a render longer than the slot.
	cp, _ := wired.Of(f.s).Catalog.Fixtures().Capability("video_cinematic")
	cp.RenderSeconds = 900
	body := map[string]any{"capability_id": "video_cinematic", "config": map[string]any{"prompt": "rain", "duration": 5}, "max_credits": 66}
	a := f.mustSubmit(f.key, body)
	id := a.body["generation_id"].(string)
	av, held := f.balance()
	r := f.mustSubmit(f.key, body)
	if r.body["replay"] != true || r.body["generation_id"] != id || obj(r.body, "credits")["wallet_balance"] != float64(av) {
		t.Fatalf("replay %s", r.raw)
	}
	if av2, held2 := f.balance(); av2 != av || held2 != held {
		t.Fatal("a replay moved credits")
	}
	d := f.submit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "x"}, "max_credits": 10})
	wantErr(t, d, 409, "submission_in_flight")
	if fl := obj(obj(d.body, "error"), "in_flight"); fl["generation_id"] != id || fl["status"] != "queued" {
		t.Fatalf("in_flight %v", fl)
	}
	k2 := f.submitKey(f.ws, nil)
	o := f.submit(k2, body)
	wantErr(t, o, 409, "submission_in_flight")
	if ra := obj(o.body, "error")["retry_after_seconds"]; ra != float64(900) || o.hdr.Get("Retry-After") != "900" {
		t.Fatalf("identical from another key %s %v", o.raw, o.hdr)
	}
	f.advance(599)
	wantErr(t, f.submit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "y"}, "max_credits": 10}), 409, "submission_in_flight")
	f.advance(1)
	if st := f.gen(f.key, id)["status"]; st != "rendering" {
		t.Fatalf("first job %v", st)
	}
	f.mustSubmit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "y"}, "max_credits": 10})
}

// TestTalkingActorFlow runs tts, then actor_ultra driven by it, and the
// mismatch refusals.
func TestTalkingActorFlow(t *testing.T) {
	f := newGenFixture(t)
	script := "Meet the bottle that keeps coffee hot for twelve hours."
	ttsID := f.mustSubmit(f.key, tts(script, f.actorVoice, 100)).body["generation_id"].(string)
	actor := func(extra map[string]any) map[string]any {
		b := map[string]any{"capability_id": "actor_ultra", "config": map[string]any{"script": script}, "actor_id": f.actor,
			"approved_voice_generation_id": ttsID, "max_credits": 200}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	k2 := f.submitKey(f.ws, nil)
	// Not completed yet.
	wantErr(t, f.submit(k2, actor(nil)), 400, "invalid_config")
	f.advance(20)
	wantErr(t, f.submit(k2, actor(map[string]any{"config": map[string]any{"script": script + " Now."}})), 400, "invalid_config")
	wantErr(t, f.submit(k2, actor(map[string]any{"voice_id": f.voice})), 400, "invalid_config")
	wantErr(t, f.submit(k2, actor(map[string]any{"approved_voice_generation_id": "gen_00000000000000000000000000000000"})), 404, "not_found")
	// The actor's default voice made the tts: accepted, priced exactly from its length.
	a := f.mustSubmit(k2, actor(nil))
	id := a.body["generation_id"].(string)
	f.advance(120)
	g := f.gen(k2, id)
	if g["status"] != "completed" || obj(g, "credits")["credits_charged"] == nil {
		t.Fatalf("actor job %v", g)
	}
	// A tts generation named as a non-tts: refused.
	wantErr(t, f.submit(k2, actor(map[string]any{"approved_voice_generation_id": id})), 400, "invalid_config")
}

// TestListFilters checks the list filters, order, paging and refusals.
func TestListFilters(t *testing.T) {
	f := newGenFixture(t)
	var ids []string
	for i := range 3 {
		k := f.submitKey(f.ws, nil)
		ids = append(ids, f.mustSubmit(k, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": fmt.Sprint("mug ", i)}, "max_credits": 10}).body["generation_id"].(string))
		f.advance(10)
	}
	flaky := f.mustSubmit(f.submitKey(f.ws, nil), map[string]any{"capability_id": "image_flaky", "config": map[string]any{"prompt": "x"}, "max_credits": 10}).body["generation_id"].(string)
	f.advance(30)
	all := f.mustGet(f.key, "/generations").ids("generations", "generation_id")
	if strings.Join(all, ",") != strings.Join([]string{flaky, ids[2], ids[1], ids[0]}, ",") {
		t.Fatalf("order %v", all)
	}
	if got := f.mustGet(f.key, "/generations?status=failed").ids("generations", "generation_id"); len(got) != 1 || got[0] != flaky {
		t.Fatalf("failed %v", got)
	}
	if got := f.mustGet(f.key, "/generations?capability_id=image_fast&status=completed&source=api").ids("generations", "generation_id"); len(got) != 3 {
		t.Fatalf("combined %v", got)
	}
	p1 := f.mustGet(f.key, "/generations?limit=2")
	cur, _ := p1.body["next_cursor"].(string)
	p2 := f.mustGet(f.key, "/generations?limit=2&cursor="+cur)
	if len(p1.list("generations")) != 2 || len(p2.list("generations")) != 2 || p2.body["next_cursor"] != nil {
		t.Fatalf("pages %s %s", p1.raw, p2.raw)
	}
	if got := f.mustGet(f.key, "/generations?cursor=garbage&status=").ids("generations", "generation_id"); len(got) != 4 {
		t.Fatalf("bad cursor %v", got)
	}
	before := f.clk.Now().Add(-45 * time.Second).Format(time.RFC3339)
	if got := f.mustGet(f.key, "/generations?created_before="+before).ids("generations", "generation_id"); len(got) != 2 {
		t.Fatalf("created_before %v", got)
	}
	since := f.mustGet(f.key, "/generations?updated_since=2026-03-01").list("generations")
	if len(since) != 4 || since[0]["updated_at"].(string) > since[3]["updated_at"].(string) {
		t.Fatalf("updated_since %v", since)
	}
	for _, q := range []string{"status=canceled", "source=web", "created_before=2026-03-01T10:00:00"} {
		a := f.get(f.key, "/generations?"+q)
		wantErr(t, a, 400, "invalid_config")
		if name, _, _ := strings.Cut(q, "="); obj(a.body, "error")["field"] != name {
			t.Fatalf("%s: %s", q, a.raw)
		}
	}
}

// TestBlockedRequestAndRecovery: three failures of the same request block
// it; recovery charges a failed generation.
func TestBlockedRequestAndRecovery(t *testing.T) {
	f := newGenFixture(t)
	body := map[string]any{"capability_id": "image_flaky", "config": map[string]any{"prompt": "x"}, "max_credits": 10}
	av0, _ := f.balance()
	var last string
	for range 3 {
		last = f.mustSubmit(f.key, body).body["generation_id"].(string)
		f.advance(10)
		g := f.gen(f.key, last)
		if g["status"] != "failed" || obj(g, "error")["code"] != "provider_error" || obj(g, "credits")["credits_charged"] != float64(0) {
			t.Fatalf("flaky %v", g)
		}
	}
	if av, held := f.balance(); av != av0 || held != 0 {
		t.Fatalf("failures cost %d", av0-av)
	}
	a := f.submit(f.key, body)
	wantErr(t, a, 429, "request_blocked")
	if e := obj(a.body, "error"); e["blocked_reason"] != jobsBlockedReason || e["retry_after_seconds"] == nil || a.hdr.Get("Retry-After") == "" {
		t.Fatalf("blocked %s", a.raw)
	}
	// A different request of the same key is not blocked.
	f.mustSubmit(f.key, map[string]any{"capability_id": "image_flaky", "config": map[string]any{"prompt": "y"}, "max_credits": 10})
	// Recovery: failed -> completed, charged its price.
	if st, changed, err := wired.Of(f.s).Jobs.Recover(last); err != nil || !changed || st != "completed" {
		t.Fatalf("recover %v %v %v", st, changed, err)
	}
	g := f.gen(f.key, last)
	if g["status"] != "completed" || obj(g, "credits")["credits_charged"] != float64(1) || g["error"] != nil || len(g["outputs"].([]any)) != 1 {
		t.Fatalf("recovered %v", g)
	}
	if _, changed, _ := wired.Of(f.s).Jobs.Recover(last); changed {
		t.Fatal("recovered twice")
	}
	f.advance(3600)
	f.mustSubmit(f.key, body)
}

const jobsBlockedReason = "repeated_failures"

// TestDeterminism: two servers with the same seed and the same requests
// answer the same ids, bytes and answers.
func TestDeterminism(t *testing.T) {
	run := func() []string {
		f := newGenFixture(t)
		var out []string
		a := f.mustSubmit(f.key, map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "dog"}, "variants": 2, "max_credits": 44})
		f.advance(90)
		out = append(out, a.raw)
		for _, id := range a.body["generation_ids"].([]any) {
			g := f.gen(f.key, id.(string))
			o := g["outputs"].([]any)[0].(map[string]any)
			b, _ := wired.Of(f.s).Blob.Get(o["asset_id"].(string))
			out = append(out, js(g), fmt.Sprintf("%x", b.Bytes))
		}
		return out
	}
	a, b := run(), run()
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("two runs with the same seed differ")
	}
}

// TestEventsMatchSchemas checks the event data builders against the
// openapi component schemas, batch.settled firing once, and that events
// carry no link.
func TestEventsMatchSchemas(t *testing.T) {
	f := newGenFixture(t)
	type ev struct {
		typ  string
		data any
	}
	var got []ev
	wired.Of(f.s).Jobs.OnEvent(func(_, typ string, data any) { got = append(got, ev{typ, data}) })
	a := f.mustSubmit(f.key, map[string]any{"capability_id": "video_fast", "config": map[string]any{"prompt": "dog"}, "variants": 2, "max_credits": 44})
	ids := a.body["generation_ids"].([]any)
	if _, _, err := wired.Of(f.s).Jobs.Fail(ids[0].(string), "", ""); err != nil {
		t.Fatal(err)
	}
	f.advance(90)
	text := f.mustSubmit(f.key, map[string]any{"capability_id": "hook_ideas", "config": map[string]any{"product": "thermos bottle"}, "max_credits": 10}).body["generation_id"].(string)
	f.advance(6)
	g := f.gen(f.key, text)
	if g["has_result"] != true || g["output_text"] == nil || g["result"] == nil || len(g["outputs"].([]any)) != 0 {
		t.Fatalf("text result %v", g)
	}
	doc := validator.Document()
	types := []string{}
	for _, e := range got {
		types = append(types, e.typ)
		name := "GenerationEventData"
		if e.typ == "batch.settled" {
			name = "BatchEventData"
		}
		b, _ := json.Marshal(e.data)
		if strings.Contains(string(b), "http") {
			t.Errorf("%s carries a link: %s", e.typ, b)
		}
		var v any
		_ = json.Unmarshal(b, &v)
		if err := doc.Components.Schemas[name].Value.VisitJSON(v); err != nil {
			t.Errorf("%s does not match %s: %v\n%s", e.typ, name, err, b)
		}
	}
	want := "generation.failed,generation.completed,batch.settled,generation.completed"
	if strings.Join(types, ",") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
}

// TestLedgerConservation runs a random sequence of submits, failures,
// cancels, recoveries and clock moves and checks that credits are neither
// created nor lost: available + held + captured stays constant and held
// returns to 0 once every job finished.
func TestLedgerConservation(t *testing.T) {
	f := newGenFixture(t)
	rng := rand.New(rand.NewPCG(7, 9))
	wired.Of(f.s).Jobs.SetMaxConcurrentRenders(f.ws.ID(), 1000)
	total := func() int64 {
		f.ws.Lock()
		defer f.ws.Unlock()
		w := f.ws.Wallet()
		return w.Available() + w.Held() + w.Captured()
	}
	t0 := total()
	var ids []string
	caps := []map[string]any{
		{"capability_id": "image_fast", "config": map[string]any{"prompt": "a"}, "variants": 2, "max_credits": 100},
		{"capability_id": "video_fast", "config": map[string]any{"prompt": "a"}, "variants": 3, "max_credits": 100},
		{"capability_id": "image_flaky", "config": map[string]any{"prompt": "a"}, "max_credits": 100},
		{"capability_id": "tts", "config": map[string]any{"script": "hello"}, "voice_id": f.voice, "max_credits": 100},
	}
	for i := range 60 {
		switch rng.IntN(5) {
		case 0, 1:
			b := caps[rng.IntN(len(caps))]
			b["config"].(map[string]any)["n"] = nil
			delete(b["config"].(map[string]any), "n")
			a := f.submit(f.submitKey(f.ws, nil), b)
			if a.code == 201 {
				for _, id := range a.body["generation_ids"].([]any) {
					ids = append(ids, id.(string))
				}
			}
		case 2:
			if len(ids) > 0 {
				_, _, _ = wired.Of(f.s).Jobs.Fail(ids[rng.IntN(len(ids))], "", "")
			}
		case 3:
			if len(ids) > 0 {
				_, _, _ = wired.Of(f.s).Jobs.Recover(ids[rng.IntN(len(ids))])
			}
		case 4:
			f.advance(float64(rng.IntN(60)))
		}
		if got := total(); got != t0 {
			t.Fatalf("step %d: credits %d, want %d", i, got, t0)
		}
	}
	f.advance(1000)
	if got := total(); got != t0 {
		t.Fatalf("credits %d, want %d", got, t0)
	}
	if _, held := f.balance(); held != 0 {
		t.Fatalf("held %d after every job finished", held)
	}
}

// TestListUpdatedSinceCursorKeepsItsPlace: a row updated during a walk by updated_at moves to the
// end; the walk goes on after the cursor row's old place (it skipped every row in between when the
// cursor named only the row's id) and meets the moved row again last.
func TestListUpdatedSinceCursorKeepsItsPlace(t *testing.T) {
	f := newGenFixture(t)
	var ids []string
	for i := range 4 {
		k := f.submitKey(f.ws, nil)
		ids = append(ids, f.mustSubmit(k, map[string]any{"capability_id": "image_flaky", "config": map[string]any{"prompt": fmt.Sprint("mug ", i)}, "max_credits": 10}).body["generation_id"].(string))
		f.advance(60)
	}
	p1 := f.mustGet(f.key, "/generations?updated_since=2026-03-01&limit=2")
	if got := p1.ids("generations", "generation_id"); strings.Join(got, ",") != strings.Join(ids[:2], ",") {
		t.Fatalf("first page %v, want %v", got, ids[:2])
	}
	f.advance(5)
	if _, changed, err := wired.Of(f.s).Jobs.Recover(ids[1]); err != nil || !changed {
		t.Fatalf("recover: %v %v", changed, err)
	}
	cur, _ := p1.body["next_cursor"].(string)
	var rest []string
	for cur != "" {
		p := f.mustGet(f.key, "/generations?updated_since=2026-03-01&limit=2&cursor="+cur)
		rest = append(rest, p.ids("generations", "generation_id")...)
		cur, _ = p.body["next_cursor"].(string)
	}
	if want := []string{ids[2], ids[3], ids[1]}; strings.Join(rest, ",") != strings.Join(want, ",") {
		t.Fatalf("the walk went on with %v, want %v", rest, want)
	}
}
