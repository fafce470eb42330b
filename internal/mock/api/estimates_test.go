package api_test

import (
	"encoding/json"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

func (h *harness) estimate(key, body string) answer {
	h.t.Helper()
	return h.do(key, http.MethodPost, "/api/v1/estimates", body)
}

func body(capID string, config map[string]any, extra ...any) string {
	m := map[string]any{"capability_id": capID, "config": config}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestEstimatePrices checks exact prices computed by hand from the fixture
// numbers (capabilities.yaml): price = max(min_credits, ceil(per_unit x q)),
// hold = sum over takes of ceil(take price x 1.1).
func TestEstimatePrices(t *testing.T) {
	h := newHarness(t)
	script150 := strings.Repeat("abcdefghij", 15)
	for _, c := range []struct {
		name      string
		capID     string
		config    map[string]any
		credits   int
		hold      int
		ceiling   bool
		lines     int
		quantity  float64 // first line
		seconds   float64 // -1: absent
		firstLine string
	}{
		// 4 credits/s x default duration 5 s.
		{"video_fast default", "video_fast", map[string]any{"prompt": "a dog"}, 20, 22, false, 1, 5, 5, "Video seconds"},
		// 3 takes x (4 x 10) = 120; hold 3 x ceil(44) = 132.
		{"video_fast three takes", "video_fast", map[string]any{"prompt": "a dog", "duration": 10, "count": 3}, 120, 132, false, 3, 10, 10, "Video seconds (take 1)"},
		// min_credits 8 beats 4 x 2 = 8 (equal), duration 2.
		{"video_fast 2 s", "video_fast", map[string]any{"prompt": "a", "duration": 2}, 8, 9, false, 1, 2, 2, "Video seconds"},
		// 12 x 60 = 720 (over the per-generation cap, still priced).
		{"video_cinematic 60 s", "video_cinematic", map[string]any{"prompt": "rain", "duration": 60}, 720, 792, false, 1, 60, 60, "Cinematic video seconds"},
		// min_credits 60 beats 12 x 5.
		{"video_cinematic 5 s floor", "video_cinematic", map[string]any{"prompt": "rain", "duration": 5}, 60, 66, false, 1, 5, 5, "Cinematic video seconds"},
		// 2 credits/image x 4 in one generation; hold pads every take: 4 x ceil(2.2) = 12.
		{"image_fast count 4", "image_fast", map[string]any{"prompt": "mug", "count": 4}, 8, 12, false, 1, 4, -1, "Images"},
		{"image_pro default", "image_pro", map[string]any{"prompt": "bottle"}, 8, 9, false, 1, 1, -1, "Pro images"},
		// ceil(1200/1000) = 2 x 3 = 6; hold ceil(6.6) = 7; 1200/15 = 80 s of speech.
		{"tts 1200 chars", "tts", map[string]any{"script": strings.Repeat("a", 1200)}, 6, 7, false, 1, 2, 80, "Characters spoken (thousands)"},
		// speed 2 halves the audio length, not the price.
		{"tts speed 2", "tts", map[string]any{"script": strings.Repeat("a", 300), "speed": 2}, 3, 4, false, 1, 1, 10, "Characters spoken (thousands)"},
		// ceil(150/15) = 10 s x 10 = 100, a ceiling.
		{"actor_ultra 150 chars", "actor_ultra", map[string]any{"script": script150}, 100, 110, true, 1, 10, 10, "Talking actor video"},
		// ceil(1/15) = 1 s x 10 = 10 = min_credits.
		{"actor_ultra 1 char", "actor_ultra", map[string]any{"script": "A"}, 10, 11, true, 1, 1, 1, "Talking actor video"},
		// ceil(30/15) = 2 s x 8 = 16 < min 40.
		{"actor_pro floor", "actor_pro", map[string]any{"script": strings.Repeat("b", 30)}, 40, 44, true, 1, 2, 2, "Talking actor clip"},
		// Unicode code points, not bytes: 16 runes -> 2 s x 5 = 10 < min 20.
		{"actor_lite runes", "actor_lite", map[string]any{"script": strings.Repeat("é", 16)}, 20, 22, true, 1, 2, 2, "Talking actor lite video"},
		// tokens = ceil(400/4) + 1000 = 1100; 2000 x 0.0011 = 2.2 -> 3.
		{"ad_script_writer 400 chars", "ad_script_writer", map[string]any{"prompt": strings.Repeat("p", 400), "max_tokens": 1000}, 3, 4, true, 1, 0.0011, -1, "Tokens (millions)"},
		// Float trap: tokens = 500 + 1000 = 1500; 2000 x 0.0015 is
		// 3.0000000000000004 in floating point (ceil 4); exactly 3.
		{"ad_script_writer float trap", "ad_script_writer", map[string]any{"prompt": strings.Repeat("p", 2000), "max_tokens": 1000}, 3, 4, true, 1, 0.0015, -1, "Tokens (millions)"},
		// tokens = ceil((10+0)/4) + default 600 = 603; 2500 x 0.000603 = 1.5075 -> 2.
		{"hook_ideas default budget", "hook_ideas", map[string]any{"product": "0123456789"}, 2, 3, true, 1, 0.000603, -1, "Tokens (millions)"},
		// 40 per request x 2 takes; output fixed 15 s.
		{"preset_testimonial two takes", "preset_testimonial", map[string]any{"template_id": "captpl_f360c8112f199f10459fd6333a7b5fd7", "script": "Great.", "count": 2}, 80, 88, false, 2, 1, 15, "Testimonial video (take 1)"},
		// 1 per image, one image; hold ceil(1.1) = 2.
		{"image_flaky one", "image_flaky", map[string]any{"prompt": "x"}, 1, 2, false, 1, 1, -1, "Image"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := h.estimate(h.key, body(c.capID, c.config))
			if a.code != 200 {
				t.Fatalf("%d %s", a.code, a.raw)
			}
			if a.body["capability_id"] != c.capID || a.num("credits") != float64(c.credits) || a.num("max_credits_needed") != float64(c.hold) || a.body["is_ceiling"] != c.ceiling {
				t.Fatalf("credits %v hold %v ceiling %v; want %d %d %v", a.body["credits"], a.body["max_credits_needed"], a.body["is_ceiling"], c.credits, c.hold, c.ceiling)
			}
			lines := a.list("breakdown")
			if len(lines) != c.lines {
				t.Fatalf("breakdown %v", lines)
			}
			var sum float64
			for _, l := range lines {
				sum += l["credits"].(float64)
			}
			if sum != float64(c.credits) {
				t.Fatalf("breakdown sums to %v", sum)
			}
			if q := lines[0]["quantity"].(float64); math.Abs(q-c.quantity) > 1e-12 || lines[0]["label"] != c.firstLine {
				t.Fatalf("line %v", lines[0])
			}
			s, has := a.body["seconds"].(float64)
			if c.seconds < 0 && has || c.seconds >= 0 && (!has || s != c.seconds) {
				t.Fatalf("seconds %v, want %v", a.body["seconds"], c.seconds)
			}
			if a.body["note"] == "" || a.body["summary"] == "" {
				t.Fatal("note and summary are required")
			}
		})
	}
}

func TestEstimateRefusals(t *testing.T) {
	h := newHarness(t)
	biz := h.workspaceKey(workspace.PlanBusiness)
	ast := "ast_0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name, key, body string
		status          int
		code            string
		kv              []string
	}{
		{"max_credits", "", `{"capability_id":"video_fast","config":{"prompt":"a"},"max_credits":22}`, 400, "invalid_config", []string{"field", "max_credits"}},
		{"variants", "", `{"capability_id":"video_fast","config":{"prompt":"a"},"variants":2}`, 400, "invalid_config", []string{"field", "variants"}},
		{"third key", "", `{"capability_id":"video_fast","config":{"prompt":"a"},"quote":true}`, 400, "invalid_config", []string{"field", "quote"}},
		{"missing capability_id", "", `{"config":{"prompt":"a"}}`, 400, "invalid_config", []string{"field", "capability_id"}},
		{"missing config", "", `{"capability_id":"video_fast"}`, 400, "invalid_config", []string{"field", "config"}},
		{"null config", "", `{"capability_id":"video_fast","config":null}`, 400, "invalid_config", []string{"field", "config"}},
		{"config not object", "", `{"capability_id":"video_fast","config":"x"}`, 400, "invalid_config", []string{"field", "config"}},
		{"capability_id number", "", `{"capability_id":5,"config":{}}`, 400, "invalid_config", []string{"field", "capability_id"}},
		{"malformed", "", `{"capability_id":`, 400, "invalid_config", nil},
		{"unknown config key", "", body("video_fast", map[string]any{"prompt": "a", "aspect": "1:1"}), 400, "invalid_config", []string{"field", "config.aspect"}},
		{"actor_ultra has no aspect_ratio", "", body("actor_ultra", map[string]any{"script": "hi", "aspect_ratio": "9:16"}), 400, "invalid_config", []string{"field", "config.aspect_ratio"}},
		{"wrong type", "", body("video_fast", map[string]any{"prompt": "a", "duration": "5"}), 400, "invalid_config", []string{"field", "config.duration"}},
		{"missing required", "", body("video_fast", map[string]any{}), 400, "invalid_config", []string{"field", "config.prompt"}},
		{"enum", "", body("video_fast", map[string]any{"prompt": "a", "aspect_ratio": "4:3"}), 400, "invalid_config", []string{"field", "config.aspect_ratio"}},
		{"count above ceiling", "", body("image_pro", map[string]any{"prompt": "a", "count": 3}), 400, "invalid_config", []string{"field", "config.count"}},
		{"count above 4", "", body("video_fast", map[string]any{"prompt": "a", "count": 5}), 400, "invalid_config", []string{"field", "config.count"}},
		{"file missing", "", body("trim_video", map[string]any{"end_seconds": 5}), 400, "invalid_config", []string{"field", "config.source_video"}},
		{"malformed asset id", "", body("upscale", map[string]any{"source_image": []any{"ast_XYZ"}}), 400, "invalid_config", []string{"field", "config.source_image[0]"}},
		{"unknown upload", "", body("trim_video", map[string]any{"source_video": []any{ast}, "end_seconds": 5}), 404, "not_found", nil},
		{"unknown upload in file object", "", body("image_fast", map[string]any{"prompt": "/image1", "reference_images": []any{map[string]any{"assetId": ast, "alias": "image1"}}}), 404, "not_found", nil},
		{"unknown capability", "", body("talking_actor", map[string]any{}), 404, "capability_unavailable", []string{"capability_status", "unknown"}},
		{"not offered", "", body("image_internal_eval", map[string]any{"prompt": "a"}), 404, "capability_unavailable", []string{"capability_status", "unknown"}},
		{"retired", "", body("actor_classic", map[string]any{"script": "a"}), 404, "capability_unavailable", []string{"capability_status", "retired"}},
		{"coming soon, empty config", "", body("music_bed", map[string]any{}), 404, "capability_unavailable", []string{"capability_status", "coming_soon"}},
		{"catalogue status unknown", "", body("video_remix", map[string]any{"prompt": "clay"}), 404, "capability_unavailable", []string{"capability_status", "unknown"}},
		{"plan too low", "", body("video_4k", map[string]any{"prompt": "lake"}), 403, "required_plan", []string{"capability_status", "requires_plan", "required_plan", "business"}},
		{"config before plan", "", body("video_4k", map[string]any{"prompt": "lake", "fps": 60}), 400, "invalid_config", []string{"field", "config.fps"}},
		{"not priced", "", body("voice_design_beta", map[string]any{"voice_description": "A warm low voice."}), 409, "not_priced", nil},
		{"unknown actor", "", body("actor_ultra", map[string]any{"script": "hi"}, "actor_id", "act_00000000000000000000000000000000"), 404, "not_found", nil},
		{"hidden actor", "", body("actor_ultra", map[string]any{"script": "hi"}, "actor_id", businessActor(t)), 404, "not_found", nil},
		{"unknown voice", "", body("tts", map[string]any{"script": "hi"}, "voice_id", "voc_00000000000000000000000000000000"), 404, "not_found", nil},
		{"unknown config voice", "", body("tts", map[string]any{"script": "hi", "voiceId": "voc_00000000000000000000000000000000"}), 404, "not_found", nil},
		{"own-voice actor refuses approved voice", "", body("actor_lite", map[string]any{"script": "hello there"}, "approved_voice_generation_id", "gen_00000000000000000000000000000000"), 400, "invalid_config", []string{"field", "approved_voice_generation_id"}},
		{"unknown approved voice", "", body("actor_ultra", map[string]any{"script": "hi"}, "approved_voice_generation_id", "gen_00000000000000000000000000000000"), 404, "not_found", nil},
		{"business plan prices video_4k", biz, body("video_4k", map[string]any{"prompt": "lake"}), 200, "", nil},
		{"resource fields accepted", "", body("actor_ultra", map[string]any{"script": "hi"}, "actor_id", "act_7fce5b03e7c9cb2789b325015d340b35", "voice_id", "voc_fcb3ab75d7ceea14172932b892b4496a"), 200, "", nil},
		{"moderation marker is priced", "", body("video_fast", map[string]any{"prompt": "BLOCKME please"}), 200, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := c.key
			if key == "" {
				key = h.key
			}
			a := h.estimate(key, c.body)
			if c.status == 200 {
				if a.code != 200 {
					t.Fatalf("%d %s", a.code, a.raw)
				}
				return
			}
			wantError(t, a, c.status, c.code, c.kv...)
			if e := a.body["error"].(map[string]any); e["credits_charged"] != 0.0 || e["retryable"] != false {
				t.Fatalf("refusal %s", a.raw)
			}
			if c.name == "unknown upload" || c.name == "unknown upload in file object" {
				ids, _ := a.body["error"].(map[string]any)["asset_ids"].([]any)
				if len(ids) != 1 || ids[0] != ast {
					t.Fatalf("asset_ids %v", ids)
				}
			}
		})
	}
	// video_4k on business: 20/s x default 5 s = 100 (= min 100); hold 110.
	if a := h.estimate(biz, body("video_4k", map[string]any{"prompt": "lake"})); a.code != 200 || a.num("credits") != 100 || a.num("max_credits_needed") != 110 {
		t.Fatalf("video_4k %s", a.raw)
	}
}

func businessActor(t *testing.T) string {
	t.Helper()
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range fx.Actors {
		if a.IsPlatform && a.MinPlan != nil && *a.MinPlan == "business" && a.State == "ready" {
			return a.ID
		}
	}
	t.Fatal("no business-only actor in the fixtures")
	return ""
}

func TestEstimateScopeAndNoSpend(t *testing.T) {
	h := newHarness(t)
	def, _ := wired.Of(h.s).Registry.Get(h.s.DefaultWorkspaceID())
	read := h.newKey(def, workspace.ScopeRead)
	before := def.Snapshot()
	for range 3 {
		if a := h.estimate(read, body("video_fast", map[string]any{"prompt": "a"})); a.code != 200 {
			t.Fatalf("read key: %d %s", a.code, a.raw)
		}
	}
	after := def.Snapshot()
	if after.AvailableCredits != before.AvailableCredits || after.HeldCredits != before.HeldCredits {
		t.Fatalf("an estimate moved credits: %+v -> %+v", before, after)
	}
}

func TestEstimatePricingFault(t *testing.T) {
	h := newHarness(t)
	ctl := func(method, path, b string) int {
		req := httptest.NewRequest(method, "/_control/v1"+path, strings.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+ctlToken)
		rec := httptest.NewRecorder()
		h.s.ServeHTTP(rec, req)
		return rec.Code
	}
	tts := body("tts", map[string]any{"script": "hi"})
	if code := ctl("POST", "/faults", `{"kind":"pricing_unavailable","capability_id":"video_fast"}`); code != 201 {
		t.Fatalf("queue: %d", code)
	}
	if a := h.estimate(h.key, tts); a.code != 200 {
		t.Fatalf("a fault scoped to video_fast hit tts: %s", a.raw)
	}
	if code := ctl("POST", "/faults", `{"kind":"pricing_unavailable","count":2}`); code != 201 {
		t.Fatalf("queue: %d", code)
	}
	// Earlier checks win and do not use the fault up.
	wantError(t, h.estimate(h.key, body("voice_design_beta", map[string]any{"voice_description": "A warm low voice."})), 409, "not_priced")
	wantError(t, h.estimate(h.key, body("tts", map[string]any{})), 400, "invalid_config", "field", "config.script")
	// The video_fast fault is older: it is used first, then the unscoped one twice.
	for range 3 {
		a := h.estimate(h.key, body("video_fast", map[string]any{"prompt": "a"}))
		wantError(t, a, 503, "pricing_unavailable")
		if a.body["error"].(map[string]any)["retryable"] != true {
			t.Fatalf("pricing_unavailable must be retryable: %s", a.raw)
		}
	}
	if a := h.estimate(h.key, tts); a.code != 200 {
		t.Fatalf("faults used up: %s", a.raw)
	}
	// Reset drops queued faults.
	ctl("POST", "/faults", `{"kind":"pricing_unavailable"}`)
	if code := ctl("POST", "/reset", ""); code != 200 {
		t.Fatalf("reset %d", code)
	}
	ws, _ := wired.Of(h.s).Registry.Get(h.s.DefaultWorkspaceID())
	if a := h.estimate(h.newKey(ws, workspace.ScopeRead), tts); a.code != 200 {
		t.Fatalf("after reset: %s", a.raw)
	}
}

func BenchmarkEstimate(b *testing.B) {
	h := newHarness(b)
	payload := body("video_fast", map[string]any{"prompt": "A golden retriever runs along a beach.", "duration": 10, "count": 2})
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/estimates", strings.NewReader(payload))
		req.Header.Set("Authorization", "Bearer "+h.key)
		rec := httptest.NewRecorder()
		h.s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Body.String())
		}
	}
}
