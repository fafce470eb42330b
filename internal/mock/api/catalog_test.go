package api_test

import (
	"context"
	"encoding/json"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec"
)

const ctlToken = "ctl_catalog_test"

// harness is a mock behind strict response validation: any answer that
// breaks openapi.yaml fails the test (request violations are expected in
// negative tests and ignored).
type harness struct {
	t   testing.TB
	s   *mock.Server
	h   http.Handler
	key string // generate+read key of the default (pro) workspace, large buckets
}

var (
	validatorOnce sync.Once
	validator     *spec.Validator
	validatorErr  error
)

func newHarness(t testing.TB) *harness {
	t.Helper()
	s, err := mock.New(mock.Config{
		Seed: 11, ControlToken: ctlToken, Clock: clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	validatorOnce.Do(func() { validator, validatorErr = spec.NewEmbeddedValidator(context.Background()) })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	h := &harness{t: t, s: s}
	h.h = validator.Middleware(s, func(v spec.Violation) {
		if v.Kind == "response" {
			t.Errorf("%v", v)
		}
	})
	ws, _ := wired.Of(s).Registry.Get(s.DefaultWorkspaceID())
	h.key = h.newKey(ws, workspace.ScopeRead, workspace.ScopeGenerate)
	return h
}

// newKey makes a key whose buckets do not get in the way of table tests.
func (h *harness) newKey(ws *workspace.Workspace, scopes ...workspace.Scope) string {
	h.t.Helper()
	_, secret, err := wired.Of(h.s).Registry.CreateKey(ws, workspace.KeyParams{
		Scopes:  scopes,
		Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 100000, ratelimit.AgentEstimate: 100000},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return secret
}

// workspaceKey makes a workspace on plan and a key for it.
func (h *harness) workspaceKey(plan workspace.Plan) string {
	ws := wired.Of(h.s).Registry.Create(workspace.CreateParams{Plan: plan, Balance: 1000})
	return h.newKey(ws, workspace.ScopeRead, workspace.ScopeGenerate)
}

type answer struct {
	code int
	body map[string]any
	raw  string
	hdr  http.Header
}

func (a answer) errString(name string) string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

func (a answer) list(name string) []map[string]any {
	arr, _ := a.body[name].([]any)
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		out[i], _ = v.(map[string]any)
	}
	return out
}

func (a answer) ids(name, idField string) []string {
	var out []string
	for _, r := range a.list(name) {
		out = append(out, r[idField].(string))
	}
	return out
}

func (a answer) num(name string) float64 {
	f, _ := a.body[name].(float64)
	return f
}

func (h *harness) do(key, method, path, body string) answer {
	h.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	a := answer{code: rec.Code, raw: rec.Body.String(), hdr: rec.Header()}
	if err := json.Unmarshal(rec.Body.Bytes(), &a.body); err != nil {
		h.t.Fatalf("%s %s: %d %q: %v", method, path, rec.Code, rec.Body.String(), err)
	}
	return a
}

func (h *harness) get(key, path string) answer {
	h.t.Helper()
	return h.do(key, http.MethodGet, "/api/v1"+path, "")
}

// mustGet wants 200.
func (h *harness) mustGet(key, path string) answer {
	h.t.Helper()
	a := h.get(key, path)
	if a.code != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, a.code, a.raw)
	}
	return a
}

// wantError checks status, code and (when not "") the named error field.
func wantError(t testing.TB, a answer, status int, code string, kv ...string) {
	t.Helper()
	if a.code != status || a.errString("code") != code {
		t.Fatalf("got %d %s, want %d %s", a.code, a.raw, status, code)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if got := a.errString(kv[i]); got != kv[i+1] {
			t.Fatalf("error.%s = %q, want %q (%s)", kv[i], got, kv[i+1], a.raw)
		}
	}
	if a.hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("error without Cache-Control: no-store")
	}
}

// listedOrder is the capability list, by hand from capabilities.yaml:
// category (avatar, video, image, preset, tool) then id; retired
// (actor_classic, video_legacy, image_legacy, preset_holiday_2023) and not
// offered (image_internal_eval) omitted.
var listedOrder = []string{
	"actor_lite", "actor_pro", "actor_studio_beta", "actor_ultra",
	"video_4k", "video_cinematic", "video_fast", "video_remix",
	"image_fast", "image_flaky", "image_pro",
	"preset_product_spin", "preset_studio_pro", "preset_testimonial", "preset_ugc_screenshot",
	"ad_script_writer", "auto_caption", "change_voice", "hook_ideas", "music_bed", "remove_background",
	"resize", "speech_to_speech", "translate_video", "trim_video", "tts", "upscale", "voice_design_beta",
}

func nextCursor(a answer) (string, bool) {
	s, ok := a.body["next_cursor"].(string)
	return s, ok
}

func TestListCapabilitiesPaging(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		name, query string
		want        []string
		next        string // "" = null
	}{
		{"default", "", listedOrder[:25], "trim_video"},
		{"limit 0", "?limit=0", listedOrder[:25], "trim_video"},
		{"limit -1", "?limit=-1", listedOrder[:25], "trim_video"},
		{"limit abc", "?limit=abc", listedOrder[:25], "trim_video"},
		{"limit 2.5", "?limit=2.5", listedOrder[:25], "trim_video"},
		{"limit blank", "?limit=", listedOrder[:25], "trim_video"},
		{"limit 51 clamps to 50", "?limit=51", listedOrder, ""},
		{"limit 1", "?limit=1", listedOrder[:1], "actor_lite"},
		{"cursor trimmed", "?limit=2&cursor=%20actor_lite%20", listedOrder[1:3], "actor_studio_beta"},
		{"cursor blank", "?limit=2&cursor=%20%20", listedOrder[:2], "actor_pro"},
		{"cursor unknown restarts", "?limit=2&cursor=no_such", listedOrder[:2], "actor_pro"},
		{"cursor retired restarts", "?limit=2&cursor=actor_classic", listedOrder[:2], "actor_pro"},
		{"cursor not offered restarts", "?limit=2&cursor=image_internal_eval", listedOrder[:2], "actor_pro"},
		{"last page", "?cursor=tts", listedOrder[26:], ""},
		{"last row as cursor", "?cursor=voice_design_beta", nil, ""},
		{"exact end", "?limit=3&cursor=trim_video", listedOrder[25:], ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := h.mustGet(h.key, "/capabilities"+c.query)
			if got := a.ids("capabilities", "capability_id"); !slices.Equal(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
			next, ok := nextCursor(a)
			if c.next == "" {
				if _, present := a.body["next_cursor"]; !present || ok {
					t.Fatalf("next_cursor %v, want null", a.body["next_cursor"])
				}
			} else if next != c.next {
				t.Fatalf("next_cursor %q, want %q", next, c.next)
			}
		})
	}
	// Following next_cursor visits every row once.
	var all []string
	cursor := ""
	for range 10 {
		a := h.mustGet(h.key, "/capabilities?limit=10&cursor="+url.QueryEscape(cursor))
		all = append(all, a.ids("capabilities", "capability_id")...)
		next, ok := nextCursor(a)
		if !ok {
			break
		}
		cursor = next
	}
	if !slices.Equal(all, listedOrder) {
		t.Fatalf("walk %v", all)
	}
}

func TestCapabilityRowsByPlan(t *testing.T) {
	h := newHarness(t)
	biz := h.workspaceKey(workspace.PlanBusiness)
	rowOf := func(key, id string) map[string]any {
		for _, r := range h.mustGet(key, "/capabilities?limit=50").list("capabilities") {
			if r["capability_id"] == id {
				return r
			}
		}
		t.Fatalf("%s not listed", id)
		return nil
	}
	pro := rowOf(h.key, "video_4k")
	if pro["status"] != "requires_plan" || pro["required_plan"] != "business" || pro["pricing_unit"] != "second" || pro["max_variants"] != 2.0 {
		t.Fatalf("pro row %v", pro)
	}
	b := rowOf(biz, "video_4k")
	if _, has := b["required_plan"]; b["status"] != "available" || has {
		t.Fatalf("business row %v", b)
	}
	if r := rowOf(h.key, "video_remix"); r["status"] != "unknown" {
		t.Fatalf("video_remix %v", r)
	}
	if r := rowOf(h.key, "music_bed"); r["status"] != "coming_soon" || r["output_kind"] != "audio" || r["category"] != "tool" {
		t.Fatalf("music_bed %v", r)
	}
}

func TestCapabilityDetail(t *testing.T) {
	h := newHarness(t)
	biz := h.workspaceKey(workspace.PlanBusiness)
	for _, c := range []struct {
		key, id      string
		status       int
		code, capSt  string
		requiredPlan string
	}{
		{h.key, "actor_ultra", 200, "", "available", ""},
		{h.key, "video_remix", 200, "", "unknown", ""},
		{biz, "video_4k", 200, "", "available", ""},
		{h.key, "video_4k", 403, "required_plan", "requires_plan", "business"},
		{h.key, "preset_studio_pro", 403, "required_plan", "requires_plan", "business"},
		{h.key, "talking_actor", 404, "capability_unavailable", "unknown", ""},
		{h.key, "image_internal_eval", 404, "capability_unavailable", "unknown", ""},
		{h.key, "actor_classic", 404, "capability_unavailable", "retired", ""},
		{h.key, "preset_holiday_2023", 404, "capability_unavailable", "retired", ""},
		{h.key, "music_bed", 404, "capability_unavailable", "coming_soon", ""},
		{h.key, "actor_studio_beta", 404, "capability_unavailable", "coming_soon", ""},
	} {
		t.Run(c.id, func(t *testing.T) {
			a := h.get(c.key, "/capabilities/"+c.id)
			if c.status != 200 {
				wantError(t, a, c.status, c.code, "capability_status", c.capSt, "required_plan", c.requiredPlan)
				return
			}
			if a.code != 200 || a.body["capability_id"] != c.id || a.body["status"] != c.capSt {
				t.Fatalf("%d %s", a.code, a.raw)
			}
			sch, _ := a.body["config_schema"].(map[string]any)
			if sch["additionalProperties"] != false {
				t.Fatalf("schema not strict: %v", sch)
			}
			ex, _ := a.body["example_config"].(map[string]any)
			if len(ex) == 0 || a.body["next_action"] == "" {
				t.Fatalf("example/next_action missing: %s", a.raw)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	h := newHarness(t)
	fx, _ := fixtures.Load()
	a := h.mustGet(h.key, "/presets")
	want := []string{"preset_product_spin", "preset_studio_pro", "preset_testimonial", "preset_ugc_screenshot"}
	if got := a.ids("presets", "capability_id"); !slices.Equal(got, want) || a.num("total") != 4 {
		t.Fatalf("presets %v total %v", got, a.body["total"])
	}
	if _, ok := nextCursor(a); ok {
		t.Fatal("one page: next_cursor must be null")
	}
	rows := a.list("presets")
	ugc := rows[3]
	live := fx.LiveTemplatesOf("preset_ugc_screenshot")
	if len(live) != 23 || ugc["templates_total"] != 23.0 || len(ugc["templates"].([]any)) != 20 || ugc["requires_template"] != true {
		t.Fatalf("ugc row %v", ugc)
	}
	for i, tpl := range ugc["templates"].([]any) {
		if tpl.(map[string]any)["template_id"] != live[i].ID {
			t.Fatalf("template %d out of gallery order", i)
		}
	}
	if r := rows[1]; r["status"] != "requires_plan" || r["required_plan"] != "business" {
		t.Fatalf("studio pro %v", r)
	}
	if r := rows[2]; r["templates_total"] != 0.0 || len(r["templates"].([]any)) != 0 {
		t.Fatalf("testimonial %v", r)
	}
	// Paging by one: cursor is the last row's id; total stays the full count.
	p1 := h.mustGet(h.key, "/presets?limit=1")
	if next, _ := nextCursor(p1); next != "preset_product_spin" || p1.num("total") != 4 {
		t.Fatalf("page 1 %s", p1.raw)
	}
	p4 := h.mustGet(h.key, "/presets?limit=1&cursor=preset_testimonial")
	if got := p4.ids("presets", "capability_id"); !slices.Equal(got, want[3:]) {
		t.Fatalf("last page %v", got)
	}
	if _, ok := nextCursor(p4); ok {
		t.Fatal("last page: next_cursor must be null")
	}
	if got := h.mustGet(h.key, "/presets?limit=abc&cursor=tts").ids("presets", "capability_id"); !slices.Equal(got, want) {
		t.Fatalf("bad cursor restarts: %v", got)
	}
	biz := h.workspaceKey(workspace.PlanBusiness)
	if r := h.mustGet(biz, "/presets").list("presets")[1]; r["status"] != "available" || r["required_plan"] != nil {
		t.Fatalf("business studio pro %v", r)
	}
}

func TestPresetTemplates(t *testing.T) {
	h := newHarness(t)
	fx, _ := fixtures.Load()
	a := h.mustGet(h.key, "/presets/preset_ugc_screenshot/templates")
	var want []string
	for _, tpl := range fx.LiveTemplatesOf("preset_ugc_screenshot") {
		want = append(want, tpl.ID)
	}
	if got := a.ids("templates", "template_id"); len(got) != 23 || !slices.Equal(got, want) {
		t.Fatalf("templates %v", got)
	}
	st := h.mustGet(h.key, "/presets/preset_studio_pro/templates")
	if st.body["status"] != "requires_plan" || st.body["required_plan"] != "business" || len(st.list("templates")) != 3 {
		t.Fatalf("studio pro %s", st.raw)
	}
	for _, id := range []string{"tts", "preset_ugc_screenshots", "preset_holiday_2023", "image_internal_eval", "nope"} {
		wantError(t, h.get(h.key, "/presets/"+id+"/templates"), 404, "not_found")
	}
}

func TestActors(t *testing.T) {
	h := newHarness(t)
	fx, _ := fixtures.Load()
	// Expected order for the default (pro) workspace, from the fixture data:
	// own ready actors, then the ready core cast, then the rest of the pro
	// cast, newest first in each group.
	var own, core, rest []*fixtures.Actor
	for _, a := range fx.Actors {
		switch {
		case a.State != fixtures.ActorReady:
		case !a.IsPlatform:
			own = append(own, a)
		case a.MinPlan != nil && *a.MinPlan == fixtures.PlanBusiness:
		case a.CoreCast:
			core = append(core, a)
		default:
			rest = append(rest, a)
		}
	}
	var want []string
	for _, g := range [][]*fixtures.Actor{own, core, rest} {
		slices.SortFunc(g, func(x, y *fixtures.Actor) int { return y.CreatedAt.Compare(x.CreatedAt) })
		for _, a := range g {
			want = append(want, a.ID)
		}
	}
	if len(want) != 55 || len(own) != 4 {
		t.Fatalf("fixture assumptions: %d visible, %d own", len(want), len(own))
	}
	walk := func(key, query string) ([]string, []int) {
		var all []string
		var sizes []int
		cursor := ""
		for range 20 {
			a := h.mustGet(key, "/actors?"+query+"&cursor="+url.QueryEscape(cursor))
			if _, has := a.body["total"]; has {
				t.Fatal("actors answer has total")
			}
			ids := a.ids("actors", "actor_id")
			all, sizes = append(all, ids...), append(sizes, len(ids))
			next, ok := nextCursor(a)
			if !ok {
				return all, sizes
			}
			cursor = next
		}
		t.Fatal("no end")
		return nil, nil
	}
	for _, c := range []struct {
		query string
		sizes []int
	}{
		{"", []int{25, 25, 5}},
		{"limit=abc", []int{25, 25, 5}},
		{"limit=50", []int{48, 7}},
		{"limit=51", []int{48, 7}},
		{"limit=48", []int{48, 7}},
		{"limit=30", []int{30, 25}},
	} {
		got, sizes := walk(h.key, c.query)
		if !slices.Equal(got, want) || !slices.Equal(sizes, c.sizes) {
			t.Fatalf("%q: sizes %v (want %v), order ok %v", c.query, sizes, c.sizes, slices.Equal(got, want))
		}
	}
	first := h.mustGet(h.key, "/actors?limit=1")
	if got := first.ids("actors", "actor_id"); !slices.Equal(got, want[:1]) {
		t.Fatalf("limit 1: %v", got)
	}
	for _, low := range []string{"0", "-1"} { // clamped 1 to 50
		if got := h.mustGet(h.key, "/actors?limit="+low).ids("actors", "actor_id"); !slices.Equal(got, want[:1]) {
			t.Fatalf("limit %s: %v", low, got)
		}
	}
	if r := first.list("actors")[0]; r["is_platform"] != false {
		t.Fatalf("own actor first: %v", r)
	}
	for _, bad := range []string{"!!!", "eyJnIjo5fQ", "%20%20"} {
		if got := h.mustGet(h.key, "/actors?limit=2&cursor="+bad).ids("actors", "actor_id"); !slices.Equal(got, want[:2]) {
			t.Fatalf("cursor %q: %v", bad, got)
		}
	}
	names := func(query string) []string {
		var out []string
		for _, r := range h.mustGet(h.key, "/actors?limit=50&search="+url.QueryEscape(query)).list("actors") {
			out = append(out, r["name"].(string))
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"RACHEL", []string{"100% Real Rachel"}},
		{"%", []string{"100% Real Rachel", "Max_Power"}}, // name, and description "50%_off"
		{"%_", []string{"Max_Power"}},                    // a LIKE wildcard would match every actor
		{"_", []string{"Max_Power", "Under Score"}},      // description "underscores_and_more"
		{"underscores_AND", []string{"Under Score"}},     // description, any case
		{"zzz-no-match", nil},
	} {
		if got := names(c.search); !slices.Equal(got, c.want) {
			t.Errorf("search %q: %v, want %v", c.search, got, c.want)
		}
	}
	// Plans: a business workspace sees the business cast too (64 - 4 own -
	// ... = the 51 pro cast + 9 business cast); a new pro workspace sees no own actors.
	countOf := func(key string) int {
		got, _ := walk(key, "limit=50")
		return len(got)
	}
	if n := countOf(h.workspaceKey(workspace.PlanPro)); n != 51 {
		t.Fatalf("new pro workspace sees %d actors, want 51", n)
	}
	if n := countOf(h.workspaceKey(workspace.PlanBusiness)); n != 60 {
		t.Fatalf("business workspace sees %d actors, want 60", n)
	}
	def, _ := wired.Of(h.s).Registry.Get(h.s.DefaultWorkspaceID())
	biz := workspace.PlanBusiness
	if _, err := def.Apply(workspace.Update{Plan: &biz}); err != nil {
		t.Fatal(err)
	}
	if n := countOf(h.key); n != 64 {
		t.Fatalf("default workspace on business sees %d, want 64", n)
	}
}

func TestVoices(t *testing.T) {
	h := newHarness(t)
	a := h.mustGet(h.key, "/voices")
	if a.num("total") != 38 || len(a.list("voices")) != 25 {
		t.Fatalf("total %v rows %d", a.body["total"], len(a.list("voices")))
	}
	if next, _ := nextCursor(a); next != "25" {
		t.Fatalf("next %v", a.body["next_cursor"])
	}
	var all []string
	for _, c := range []string{"", "25"} {
		for _, r := range h.mustGet(h.key, "/voices?cursor="+c).list("voices") {
			all = append(all, r["name"].(string))
		}
	}
	if len(all) != 38 || !slices.IsSorted(all) {
		t.Fatalf("names %v", all)
	}
	for _, inactive := range []string{"Jack", "Greta", "Ren", "Podcast Host"} {
		if slices.Contains(all, inactive) {
			t.Fatalf("inactive voice %s listed", inactive)
		}
	}
	for _, c := range []struct {
		query string
		total int
		rows  int
		next  string
	}{
		{"limit=0", 38, 1, "1"}, // clamped 1 to 50
		{"limit=-1", 38, 1, "1"},
		{"limit=abc", 38, 25, "25"},
		{"limit=51", 38, 38, ""},
		{"limit=1", 38, 1, "1"},
		{"limit=10&cursor=30", 38, 8, ""},
		{"limit=10&cursor=abc", 38, 10, "10"},
		{"limit=10&cursor=-5", 38, 10, "10"},
		{"cursor=1000", 38, 0, ""},
		{"search=hugo", 2, 2, ""},
		{"search=HUGO%20m", 1, 1, ""},
		{"search=warm", 0, 0, ""}, // a tag, not a name
		{"language=en", 13, 13, ""},
		{"language=pt-BR", 4, 4, ""},
		{"language=pt", 0, 0, ""},
		{"language=EN", 0, 0, ""},
		{"language=en&search=a&limit=2", 7, 2, "2"}, // Aria, Clara, Ella, Grace, Kai, Luna, Nora
	} {
		a := h.mustGet(h.key, "/voices?"+c.query)
		rows := a.list("voices")
		next, _ := nextCursor(a)
		if int(a.num("total")) != c.total || len(rows) != c.rows || next != c.next {
			t.Errorf("%s: total %v rows %d next %q", c.query, a.body["total"], len(rows), next)
		}
	}
	other := h.workspaceKey(workspace.PlanPro)
	b := h.mustGet(other, "/voices?limit=50")
	if b.num("total") != 35 {
		t.Fatalf("another workspace sees %v voices, want 35 (no cloned voices)", b.body["total"])
	}
	for _, r := range b.list("voices") {
		if r["is_cloned"] == true {
			t.Fatalf("cloned voice of another workspace listed: %v", r)
		}
	}
	cl := h.mustGet(h.key, "/voices?search=founder")
	if r := cl.list("voices"); len(r) != 1 || r[0]["language"] != nil || r[0]["gender"] != nil || r[0]["is_cloned"] != true || r[0]["is_platform"] != false {
		t.Fatalf("cloned voice row %s", cl.raw)
	}
}

func BenchmarkListCapabilities(b *testing.B) {
	h := newHarness(b)
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities?limit=50", nil)
		req.Header.Set("Authorization", "Bearer "+h.key)
		rec := httptest.NewRecorder()
		h.s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Body.String())
		}
	}
}
