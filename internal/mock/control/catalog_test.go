package control_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/control"
	"github.com/mediaspec/mediaspec/mock"
)

// catalogueServer starts a mock with the control API; do makes one call and checks the exchange
// against control.yaml when it is a control call.
func catalogueServer(t *testing.T) (*mock.Server, func(method, path, auth, body string) (int, map[string]any)) {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	s, err := mock.New(mock.Config{Seed: 11, Clock: clk, ControlToken: ctl, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	do := func(method, path, auth, body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+auth)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rest, ok := strings.CutPrefix(req.URL.Path, control.BasePath); ok {
			control.CheckAgainstDocument(t, method, rest, body, req.Header, rec)
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%s %s: %q", method, path, rec.Body.String())
		}
		return rec.Code, m
	}
	return s, do
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func errField(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	if f, ok := e["field"].(string); ok {
		return f
	}
	if fs, ok := e["fields"].([]any); ok {
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprint(f))
		}
		return strings.Join(out, ",")
	}
	return ""
}

// TestCataloguePriceHook: a capability's price withdrawn answers not_priced on estimate and
// submit; restored, it prices again; reset restores it too.
func TestCataloguePriceHook(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	est := `{"capability_id":"image_fast","config":{"prompt":"a cat"}}`
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 200 {
		t.Fatalf("estimate %d %v", code, m)
	}
	if code, m := do("PATCH", "/_control/v1/capabilities/image_fast", ctl, `{"priced":false}`); code != 200 || m["priced"] != false {
		t.Fatalf("unprice %d %v", code, m)
	}
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 409 || errCode(m) != "not_priced" {
		t.Fatalf("estimate unpriced %d %v", code, m)
	}
	if code, m := do("POST", "/api/v1/generations", key, `{"capability_id":"image_fast","config":{"prompt":"a cat"},"max_credits":100}`); code != 409 || errCode(m) != "not_priced" {
		t.Fatalf("submit unpriced %d %v", code, m)
	}
	if code, m := do("PATCH", "/_control/v1/capabilities/image_fast", ctl, `{"priced":true}`); code != 200 || m["priced"] != true {
		t.Fatalf("price %d %v", code, m)
	}
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 200 {
		t.Fatalf("estimate repriced %d %v", code, m)
	}
	for _, tc := range []struct{ path, body, field string }{
		{"/_control/v1/capabilities/image_fast", `{}`, "priced,offered"},
		{"/_control/v1/capabilities/image_fast", `{"priced":false,"x":1}`, "x"},
		{"/_control/v1/capabilities/voice_design_beta", `{"priced":true}`, "priced"},
	} {
		if code, m := do("PATCH", tc.path, ctl, tc.body); code != 400 || errCode(m) != "invalid_config" || errField(m) != tc.field {
			t.Errorf("PATCH %s %s: %d %v, want 400 naming %s", tc.path, tc.body, code, m, tc.field)
		}
	}
	if code, _ := do("PATCH", "/_control/v1/capabilities/no_such", ctl, `{"priced":false}`); code != 404 {
		t.Errorf("unknown capability %d", code)
	}
	// Withheld from agents: not listed, and detail, estimate and submit answer capability_unavailable.
	if code, m := do("PATCH", "/_control/v1/capabilities/image_fast", ctl, `{"offered":false}`); code != 200 || m["offered"] != false {
		t.Fatalf("withhold %d %v", code, m)
	}
	_, list := do("GET", "/api/v1/capabilities?limit=50", key, "")
	for _, row := range list["capabilities"].([]any) {
		if row.(map[string]any)["capability_id"] == "image_fast" {
			t.Fatalf("a withheld capability is listed")
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/capabilities/image_fast", ""},
		{"POST", "/api/v1/estimates", est},
		{"POST", "/api/v1/generations", `{"capability_id":"image_fast","config":{"prompt":"a cat"},"max_credits":100}`},
	} {
		if code, m := do(tc.method, tc.path, key, tc.body); code != 404 || errCode(m) != "capability_unavailable" {
			t.Errorf("withheld %s %s: %d %v", tc.method, tc.path, code, m)
		}
	}
	do("PATCH", "/_control/v1/capabilities/image_fast", ctl, `{"offered":true}`)
	if code, m := do("GET", "/api/v1/capabilities/image_fast", key, ""); code != 200 {
		t.Fatalf("offered again %d %v", code, m)
	}
	do("PATCH", "/_control/v1/capabilities/image_fast", ctl, `{"priced":false,"offered":false}`)
	do("POST", "/_control/v1/reset", ctl, "")
	if code, m := do("POST", "/api/v1/estimates", s.Info().GenerateKey, est); code != 200 {
		t.Fatalf("after reset %d %v", code, m)
	}
}

// TestCatalogueAliasHook: an installed alias is listed deprecated in config_schema and prices,
// submits and dedups as its new name; both names are refused naming both; an alias past its
// version is refused as an unknown key; reset removes it.
func TestCatalogueAliasHook(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	if code, m := do("PUT", "/_control/v1/capabilities/image_fast/aliases/num_images", ctl, `{"field":"count"}`); code != 200 {
		t.Fatalf("alias %d %v", code, m)
	} else if a := m["alias"].(map[string]any); a["stops_in"] != "1.3.0" || a["accepted"] != true {
		t.Fatalf("alias answer %v", m)
	}
	_, d := do("GET", "/api/v1/capabilities/image_fast", key, "")
	props := d["config_schema"].(map[string]any)["properties"].(map[string]any)
	p, _ := props["num_images"].(map[string]any)
	if p["deprecated"] != true || p["default"] != nil || !strings.Contains(fmt.Sprint(p["description"]), "count") || !strings.Contains(fmt.Sprint(p["description"]), "1.3.0") {
		t.Fatalf("schema alias %v", p)
	}
	_, byNew := do("POST", "/api/v1/estimates", key, `{"capability_id":"image_fast","config":{"prompt":"a cat","count":3}}`)
	code, byOld := do("POST", "/api/v1/estimates", key, `{"capability_id":"image_fast","config":{"prompt":"a cat","num_images":3}}`)
	if code != 200 || byOld["credits"] != byNew["credits"] || byOld["max_credits_needed"] != byNew["max_credits_needed"] {
		t.Fatalf("alias priced %d %v, new name %v", code, byOld, byNew)
	}
	if code, m := do("POST", "/api/v1/estimates", key, `{"capability_id":"image_fast","config":{"prompt":"a cat","num_images":3,"count":3}}`); code != 400 || errField(m) != "config.num_images,config.count" {
		t.Fatalf("both names %d %v", code, m)
	}
	need := byNew["max_credits_needed"].(float64)
	code, first := do("POST", "/api/v1/generations", key, fmt.Sprintf(`{"capability_id":"image_fast","config":{"prompt":"a cat","num_images":3},"max_credits":%v}`, need))
	if code != 201 {
		t.Fatalf("submit alias %d %v", code, first)
	}
	code, again := do("POST", "/api/v1/generations", key, fmt.Sprintf(`{"capability_id":"image_fast","config":{"prompt":"a cat","count":3},"max_credits":%v}`, need))
	if code != 201 || again["replay"] != true || again["generation_id"] != first["generation_id"] {
		t.Fatalf("the new name while the alias job runs is a replay: %d %v", code, again)
	}
	// An alias past its window: not listed, refused as an unknown key.
	if code, m := do("PUT", "/_control/v1/capabilities/image_pro/aliases/num_images", ctl, `{"field":"count","stops_in":"1.2.0"}`); code != 200 || m["alias"].(map[string]any)["accepted"] != false {
		t.Fatalf("old alias %d %v", code, m)
	}
	if code, m := do("POST", "/api/v1/estimates", key, `{"capability_id":"image_pro","config":{"prompt":"a cat","num_images":2}}`); code != 400 || errField(m) != "config.num_images" {
		t.Fatalf("expired alias %d %v", code, m)
	}
	for _, tc := range []struct{ path, body, field string }{
		{"/capabilities/image_fast/aliases/prompt", `{"field":"count"}`, "alias"},
		{"/capabilities/image_fast/aliases/9x", `{"field":"count"}`, "alias"},
		{"/capabilities/image_fast/aliases/old_prompt", `{"field":"prompt"}`, "field"},
		{"/capabilities/image_fast/aliases/old_x", `{"field":"nope"}`, "field"},
		{"/capabilities/image_fast/aliases/old_x", `{}`, "field"},
		{"/capabilities/image_fast/aliases/amount", `{"field":"count"}`, "field"},
		{"/capabilities/image_fast/aliases/old_x", `{"field":"aspect_ratio","stops_in":"soon"}`, "stops_in"},
	} {
		if code, m := do("PUT", "/_control/v1"+tc.path, ctl, tc.body); code != 400 || errField(m) != tc.field {
			t.Errorf("PUT %s %s: %d %v, want 400 naming %s", tc.path, tc.body, code, m, tc.field)
		}
	}
	if code, _ := do("PUT", "/_control/v1/capabilities/nope/aliases/x", ctl, `{"field":"count"}`); code != 404 {
		t.Errorf("unknown capability %d", code)
	}
	if code, _ := do("DELETE", "/_control/v1/capabilities/image_fast/aliases/nothing", ctl, ""); code != 404 {
		t.Errorf("unknown alias %d", code)
	}
	if code, m := do("DELETE", "/_control/v1/capabilities/image_pro/aliases/num_images", ctl, ""); code != 200 || m["deleted"] != true {
		t.Errorf("delete alias %d %v", code, m)
	}
	do("POST", "/_control/v1/reset", ctl, "")
	if code, m := do("POST", "/api/v1/estimates", s.Info().GenerateKey, `{"capability_id":"image_fast","config":{"prompt":"a cat","num_images":3}}`); code != 400 || errField(m) != "config.num_images" {
		t.Fatalf("after reset %d %v", code, m)
	}
}

// TestCataloguePeopleAndTemplateHooks: withdrawn templates, deactivated voices, hidden actors,
// own and cast actors and cloned voices show in the lists as the interface says, and reset undoes
// them.
func TestCataloguePeopleAndTemplateHooks(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	ws := s.DefaultWorkspaceID()
	_, tp := do("GET", "/api/v1/presets/preset_ugc_screenshot/templates", key, "")
	tpls := tp["templates"].([]any)
	first := tpls[0].(map[string]any)["template_id"].(string)
	if code, m := do("PATCH", "/_control/v1/templates/"+first, ctl, `{"live":false}`); code != 200 || m["live"] != false {
		t.Fatalf("withdraw %d %v", code, m)
	}
	_, tp2 := do("GET", "/api/v1/presets/preset_ugc_screenshot/templates", key, "")
	if len(tp2["templates"].([]any)) != len(tpls)-1 {
		t.Fatalf("withdrawn template still listed: %v", tp2)
	}
	if code, m := do("POST", "/api/v1/generations", key, `{"capability_id":"preset_ugc_screenshot","config":{"template_id":"`+first+`","reference_images":[{"assetId":"ast_00000000000000000000000000000000","alias":"image1","role":"reference"}]},"max_credits":1000}`); code != 404 || errCode(m) != "capability_unavailable" {
		t.Fatalf("withdrawn template submit %d %v", code, m)
	}
	code, added := do("POST", "/_control/v1/presets/preset_ugc_screenshot/templates", ctl, `{"name":"First","gallery_order":-1,"preview_kind":"video"}`)
	if code != 201 {
		t.Fatalf("add template %d %v", code, added)
	}
	_, tp3 := do("GET", "/api/v1/presets/preset_ugc_screenshot/templates", key, "")
	if tp3["templates"].([]any)[0].(map[string]any)["template_id"] != added["template_id"] {
		t.Fatalf("added template not first in gallery order: %v", tp3)
	}
	_, vs := do("GET", "/api/v1/voices?limit=50", key, "")
	total := vs["total"].(float64)
	voice := vs["voices"].([]any)[0].(map[string]any)["voice_id"].(string)
	if code, m := do("PATCH", "/_control/v1/voices/"+voice, ctl, `{"active":false}`); code != 200 || m["active"] != false {
		t.Fatalf("deactivate %d %v", code, m)
	}
	code, cloned := do("POST", "/_control/v1/workspaces/"+ws+"/voices", ctl, `{"name":"Aaa clone","tags":["warm"]}`)
	if code != 201 || cloned["is_cloned"] != true || cloned["language"] != nil {
		t.Fatalf("clone %d %v", code, cloned)
	}
	_, vs2 := do("GET", "/api/v1/voices?limit=50", key, "")
	ids := []string{}
	for _, v := range vs2["voices"].([]any) {
		ids = append(ids, v.(map[string]any)["voice_id"].(string))
	}
	if vs2["total"].(float64) != total || slices.Contains(ids, voice) || !slices.Contains(ids, cloned["voice_id"].(string)) {
		t.Fatalf("voices after hooks: total %v (was %v) %v", vs2["total"], total, ids)
	}
	own := func(name, created string) string {
		t.Helper()
		code, m := do("POST", "/_control/v1/workspaces/"+ws+"/actors", ctl, `{"name":"`+name+`","created_at":"`+created+`"}`)
		if code != 201 || m["is_platform"] != false {
			t.Fatalf("own actor %d %v", code, m)
		}
		return m["actor_id"].(string)
	}
	older, newer := own("Older", "2090-01-01T00:00:00Z"), own("Newer", "2091-01-01T00:00:00Z")
	_, as := do("GET", "/api/v1/actors?limit=5", key, "")
	rows := as["actors"].([]any)
	if rows[0].(map[string]any)["actor_id"] != newer || rows[1].(map[string]any)["actor_id"] != older {
		t.Fatalf("own actors newest first, first: %v", rows[:2])
	}
	if code, m := do("PATCH", "/_control/v1/actors/"+newer, ctl, `{"state":"processing"}`); code != 200 || m["state"] != "processing" {
		t.Fatalf("processing %d %v", code, m)
	}
	_, as = do("GET", "/api/v1/actors?limit=5", key, "")
	if as["actors"].([]any)[0].(map[string]any)["actor_id"] != older {
		t.Fatalf("processing actor listed: %v", as)
	}
	if code, m := do("POST", "/_control/v1/actors", ctl, `{"name":"Cast","core_cast":true}`); code != 201 || m["is_platform"] != true {
		t.Fatalf("cast actor %d %v", code, m)
	}
	for _, tc := range []struct{ method, path, body, field string }{
		{"PATCH", "/templates/" + first, `{}`, "live"},
		{"POST", "/presets/preset_ugc_screenshot/templates", `{"name":"x"}`, "gallery_order"},
		{"POST", "/presets/preset_ugc_screenshot/templates", `{"name":"","gallery_order":1}`, "name"},
		{"POST", "/presets/preset_ugc_screenshot/templates", `{"name":"x","gallery_order":1,"preview_kind":"gif"}`, "preview_kind"},
		{"PATCH", "/voices/" + voice, `{"active":"no"}`, "active"},
		{"POST", "/workspaces/" + ws + "/voices", `{"name":"x","tags":["Bad Tag"]}`, "tags[0]"},
		{"PATCH", "/actors/" + older, `{"state":"gone"}`, "state"},
		{"POST", "/workspaces/" + ws + "/actors", `{"name":"x","gender":"other"}`, "gender"},
		{"POST", "/workspaces/" + ws + "/actors", `{"name":"x","core_cast":true}`, "core_cast"},
		{"POST", "/workspaces/" + ws + "/actors", `{"name":"x","default_voice_id":"voc_00000000000000000000000000000000"}`, "default_voice_id"},
		{"POST", "/actors", `{}`, "name"},
	} {
		if code, m := do(tc.method, "/_control/v1"+tc.path, ctl, tc.body); code != 400 || errField(m) != tc.field {
			t.Errorf("%s %s %s: %d %v, want 400 naming %s", tc.method, tc.path, tc.body, code, m, tc.field)
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"PATCH", "/templates/captpl_00000000000000000000000000000000", `{"live":false}`},
		{"POST", "/presets/image_fast/templates", `{"name":"x","gallery_order":1}`},
		{"PATCH", "/voices/voc_00000000000000000000000000000000", `{"active":false}`},
		{"POST", "/workspaces/ws_00000000000000000000000000000000/voices", `{"name":"x"}`},
		{"PATCH", "/actors/act_00000000000000000000000000000000", `{"state":"ready"}`},
		{"POST", "/workspaces/ws_00000000000000000000000000000000/actors", `{"name":"x"}`},
	} {
		if code, m := do(tc.method, "/_control/v1"+tc.path, ctl, tc.body); code != 404 || errCode(m) != "not_found" {
			t.Errorf("%s %s: %d %v, want 404", tc.method, tc.path, code, m)
		}
	}
	do("POST", "/_control/v1/reset", ctl, "")
	key = s.Info().GenerateKey
	_, tp4 := do("GET", "/api/v1/presets/preset_ugc_screenshot/templates", key, "")
	_, vs3 := do("GET", "/api/v1/voices?limit=50", key, "")
	if len(tp4["templates"].([]any)) != len(tpls) || vs3["total"].(float64) != total {
		t.Fatalf("reset left catalogue changes: %d templates, %v voices", len(tp4["templates"].([]any)), vs3["total"])
	}
	_, as = do("GET", "/api/v1/actors?limit=50", key, "")
	for _, a := range as["actors"].([]any) {
		if n := a.(map[string]any)["name"]; n == "Older" || n == "Cast" {
			t.Fatalf("reset left actor %v", a)
		}
	}
}

// TestCatalogueWithdrawTemplatesHook: DELETE /presets/{id}/templates withdraws every live template
// at once (templates_total 0, the preset cannot run: a submit naming one of them or another
// preset's template is refused), answers their ids, refuses a non-preset, and PATCH restores one.
func TestCatalogueWithdrawTemplatesHook(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	const preset = "/presets/preset_ugc_screenshot/templates"
	_, tp := do("GET", "/api/v1"+preset, key, "")
	var before []string
	for _, v := range tp["templates"].([]any) {
		before = append(before, v.(map[string]any)["template_id"].(string))
	}
	code, m := do("DELETE", "/_control/v1"+preset, ctl, "")
	if code != 200 || m["capability_id"] != "preset_ugc_screenshot" {
		t.Fatalf("withdraw all %d %v", code, m)
	}
	var gone []string
	for _, v := range m["withdrawn"].([]any) {
		gone = append(gone, v.(string))
	}
	if !slices.Equal(gone, before) {
		t.Fatalf("withdrawn %v, want every live template in gallery order %v", gone, before)
	}
	_, list := do("GET", "/api/v1/presets", key, "")
	for _, row := range list["presets"].([]any) {
		if r := row.(map[string]any); r["capability_id"] == "preset_ugc_screenshot" && (r["templates_total"] != 0.0 || len(r["templates"].([]any)) != 0) {
			t.Fatalf("emptied preset still lists templates: %v", r)
		}
	}
	_, other := do("GET", "/api/v1/presets/preset_studio_pro/templates", key, "")
	stranger := other["templates"].([]any)[0].(map[string]any)["template_id"].(string)
	for tpl, want := range map[string]string{before[0]: "capability_unavailable", stranger: "not_found"} {
		body := `{"capability_id":"preset_ugc_screenshot","config":{"template_id":"` + tpl + `","reference_images":[{"assetId":"ast_00000000000000000000000000000000","alias":"image1","role":"reference"}]},"max_credits":1000}`
		if code, m := do("POST", "/api/v1/generations", key, body); code != 404 || errCode(m) != want {
			t.Errorf("submit naming %s on the emptied preset: %d %v, want 404 %s", tpl, code, m, want)
		}
	}
	if code, m := do("DELETE", "/_control/v1/presets/image_fast/templates", ctl, ""); code != 404 || errCode(m) != "not_found" {
		t.Errorf("withdraw all on a non-preset: %d %v, want 404 not_found", code, m)
	}
	if code, m := do("PATCH", "/_control/v1/templates/"+before[0], ctl, `{"live":true}`); code != 200 || m["live"] != true {
		t.Fatalf("restore %d %v", code, m)
	}
	if _, tp := do("GET", "/api/v1"+preset, key, ""); len(tp["templates"].([]any)) != 1 {
		t.Fatalf("after one restore: %v", tp)
	}
}

// TestCatalogueEnumRemovalHook: a removed enum value leaves config_schema and is refused naming
// config.<field> (never mapped to another value); the default, the example's value and unknown
// properties are refused; DELETE and reset restore it.
func TestCatalogueEnumRemovalHook(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	est := `{"capability_id":"image_fast","config":{"prompt":"a cat","aspect_ratio":"4:5"}}`
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 200 {
		t.Fatalf("before %d %v", code, m)
	}
	if code, m := do("PUT", "/_control/v1/capabilities/image_fast/enum-removals/aspect_ratio/4:5", ctl, ""); code != 200 || m["removed"] != true {
		t.Fatalf("remove %d %v", code, m)
	}
	_, d := do("GET", "/api/v1/capabilities/image_fast", key, "")
	p := d["config_schema"].(map[string]any)["properties"].(map[string]any)["aspect_ratio"].(map[string]any)
	if fmt.Sprint(p["enum"]) != "[1:1 16:9 9:16]" {
		t.Fatalf("schema enum %v", p["enum"])
	}
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 400 || errField(m) != "config.aspect_ratio" {
		t.Fatalf("removed value %d %v", code, m)
	}
	for _, tc := range []struct{ path, field string }{
		{"/capabilities/image_fast/enum-removals/aspect_ratio/1:1", "value"},
		{"/capabilities/image_fast/enum-removals/aspect_ratio/3:2", "value"},
		{"/capabilities/image_fast/enum-removals/prompt/x", "field"},
	} {
		if code, m := do("PUT", "/_control/v1"+tc.path, ctl, ""); code != 400 || errField(m) != tc.field {
			t.Errorf("PUT %s: %d %v, want 400 naming %s", tc.path, code, m, tc.field)
		}
	}
	if code, _ := do("PUT", "/_control/v1/capabilities/nope/enum-removals/a/b", ctl, ""); code != 404 {
		t.Errorf("unknown capability %d", code)
	}
	if code, m := do("DELETE", "/_control/v1/capabilities/image_fast/enum-removals/aspect_ratio/4:5", ctl, ""); code != 200 || m["removed"] != false {
		t.Fatalf("restore %d %v", code, m)
	}
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 200 {
		t.Fatalf("restored %d %v", code, m)
	}
	if code, _ := do("DELETE", "/_control/v1/capabilities/image_fast/enum-removals/aspect_ratio/4:5", ctl, ""); code != 404 {
		t.Errorf("restore twice %d", code)
	}
	do("PUT", "/_control/v1/capabilities/image_fast/enum-removals/aspect_ratio/4:5", ctl, "")
	do("POST", "/_control/v1/reset", ctl, "")
	if code, m := do("POST", "/api/v1/estimates", key, est); code != 200 {
		t.Fatalf("after reset %d %v", code, m)
	}
}
