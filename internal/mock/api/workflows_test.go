package api_test

import (
	"encoding/json"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// runEvents records the workflow_run.* events of a server.
type runEvents struct {
	mu  sync.Mutex
	evs []map[string]any
}

func (r *runEvents) add(_, typ string, data any) {
	b, _ := json.Marshal(data)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["_type"] = typ
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, m)
}

func (r *runEvents) of(runID string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, e := range r.evs {
		if e["workflow_run_id"] == runID {
			out = append(out, e)
		}
	}
	return out
}

type wfFixture struct {
	*genFixture
	events *runEvents
}

func newWFFixture(t *testing.T) *wfFixture {
	f := &wfFixture{genFixture: newGenFixture(t), events: &runEvents{}}
	wired.Of(f.s).Workflows.OnEvent(f.events.add)
	return f
}

func (f *wfFixture) template(key string) *fixtures.WorkflowTemplate {
	t, ok := wired.Of(f.s).Catalog.Fixtures().WorkflowTemplate(key)
	if !ok {
		f.t.Fatalf("no template %s", key)
	}
	return t
}

func (f *wfFixture) invoke(key, path string, body any) answer {
	f.t.Helper()
	return f.do(key, http.MethodPost, "/api/v1"+path, js(body))
}

// required invokes with max_credits 1 and returns limit.required_credits.
func (f *wfFixture) required(path string, inputs map[string]any) int {
	f.t.Helper()
	a := f.invoke(f.key, path, map[string]any{"inputs": inputs, "max_credits": 1})
	wantError(f.t, a, http.StatusPaymentRequired, "max_credits_exceeded", "field", "max_credits")
	lim := obj(obj(a.body, "error"), "limit")
	if lim["bound_by"] != "max_credits" {
		f.t.Fatalf("limit %v", lim)
	}
	return int(lim["required_credits"].(float64))
}

func (f *wfFixture) mustInvoke(path string, inputs map[string]any) (string, answer) {
	f.t.Helper()
	req := f.required(path, inputs)
	a := f.invoke(f.key, path, map[string]any{"inputs": inputs, "max_credits": req})
	if a.code != http.StatusCreated {
		f.t.Fatalf("invoke %s: %d %s", path, a.code, a.raw)
	}
	id, _ := a.body["workflow_run_id"].(string)
	if a.hdr.Get("Location") != "/api/v1/workflow-runs/"+id || a.hdr.Get("Cache-Control") != "no-store" {
		f.t.Fatalf("headers %v", a.hdr)
	}
	if a.body["status"] != "queued" || obj(a.body, "credits")["credits_charged"] != nil || obj(a.body, "credits")["terminal"] != false {
		f.t.Fatalf("invoke answer %s", a.raw)
	}
	return id, a
}

func (f *wfFixture) run(id string) map[string]any {
	f.t.Helper()
	return obj(f.mustGet(f.key, "/workflow-runs/"+id).body, "run")
}

func nodes(run map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	arr, _ := run["nodes"].([]any)
	for _, n := range arr {
		m := n.(map[string]any)
		out[m["node_id"].(string)] = m
	}
	return out
}

func nodeStatuses(run map[string]any) string {
	var parts []string
	arr, _ := run["nodes"].([]any)
	for _, n := range arr {
		m := n.(map[string]any)
		parts = append(parts, m["node_id"].(string)+"="+m["status"].(string))
	}
	return strings.Join(parts, ",")
}

func genIDs(n map[string]any) []string {
	var out []string
	arr, _ := n["generation_ids"].([]any)
	for _, g := range arr {
		out = append(out, g.(string))
	}
	return out
}

func TestWorkflowTemplates(t *testing.T) {
	f := newWFFixture(t)
	a := f.mustGet(f.key, "/workflows/templates")
	var keys []string
	for _, tp := range a.list("templates") {
		keys = append(keys, tp["template_key"].(string))
		if obj(tp, "inputs_schema")["additionalProperties"] != false || obj(tp, "example_inputs") == nil {
			t.Fatalf("template %v", tp)
		}
	}
	if !slices.Equal(keys, []string{"ugc_ad", "hero_image", "product_video"}) {
		t.Fatalf("keys %v", keys)
	}
	ugc := a.list("templates")[0]
	ns, _ := ugc["nodes"].([]any)
	if len(ns) != 3 || js(ns[1]) != `{"capability_id":"actor_ultra","depends_on":["voiceover"],"label":"Talking actor","node_id":"actor"}` {
		t.Fatalf("nodes %s", js(ns))
	}
	// A read-only key reads templates but cannot invoke.
	ws, _ := wired.Of(f.s).Registry.Get(f.s.DefaultWorkspaceID())
	read := f.newKey(ws, workspace.ScopeRead)
	f.mustGet(read, "/workflows/templates")
	wantError(t, f.invoke(read, "/workflows/templates/hero_image/invoke", map[string]any{"inputs": map[string]any{"prompt": "x"}, "max_credits": 100}), http.StatusForbidden, "insufficient_scope")
}

func TestWorkflowUGCAdCompletes(t *testing.T) {
	f := newWFFixture(t)
	tpl := f.template("ugc_ad")
	inputs := tpl.ExampleInputs
	script := inputs["script"].(string)
	req := f.required("/workflows/templates/ugc_ad/invoke", inputs)
	// tts: ceil(chars/1000) x 3 -> 3, padded 4; actor_ultra: ceil(chars/15) s x 10,
	// padded; auto_caption on the actor video (the tts length): ceil(chars/15) s x 1, min 2.
	secs := (len([]rune(script)) + 14) / 15
	want := 4 + (secs*10*11+9)/10 + (max(secs, 2)*11+9)/10
	if req != want {
		t.Fatalf("required %d, want %d", req, want)
	}
	avail0, _ := f.balance()
	id, a := f.mustInvoke("/workflows/templates/ugc_ad/invoke", inputs)
	if a.body["template_key"] != "ugc_ad" || a.body["workflow_id"] != nil {
		t.Fatalf("invoke %s", a.raw)
	}
	r := f.run(id)
	if r["status"] != "queued" || r["still_running"] != true || r["started_at"] != nil || nodeStatuses(r) != "voiceover=ready,actor=pending,captions=pending" {
		t.Fatalf("queued run %s (%s)", js(r), nodeStatuses(r))
	}
	if avail, held := f.balance(); avail != avail0 || held != 0 {
		t.Fatalf("invoke held credits: %d %d", avail, held)
	}
	f.advance(1)
	r = f.run(id)
	if r["status"] != "running" || r["started_at"] == nil || nodeStatuses(r) != "voiceover=running,actor=pending,captions=pending" {
		t.Fatalf("running %s", nodeStatuses(r))
	}
	vo := nodes(r)["voiceover"]
	if vo["credits"] != nil || len(genIDs(vo)) != 1 {
		t.Fatalf("voiceover %v", vo)
	}
	g := f.gen(f.key, genIDs(vo)[0])
	if g["source"] != "workflow" || g["purpose"] != "intermediate" || g["workflow_run_id"] != id {
		t.Fatalf("step generation %v", g)
	}
	// The run does not take the key's slot: a submit is accepted meanwhile.
	f.mustSubmit(f.key, map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": "a cat"}, "max_credits": 10})
	f.advance(20)
	r = f.run(id)
	if nodeStatuses(r) != "voiceover=completed,actor=running,captions=pending" || nodes(r)["voiceover"]["credits"] != float64(3) {
		t.Fatalf("after tts %s %s", nodeStatuses(r), js(nodes(r)["voiceover"]))
	}
	f.advance(120)
	r = f.run(id)
	if nodeStatuses(r) != "voiceover=completed,actor=completed,captions=running" {
		t.Fatalf("after actor %s", nodeStatuses(r))
	}
	capGen := genIDs(nodes(r)["captions"])[0]
	f.advance(45)
	r = f.run(id)
	if r["status"] != "completed" || r["still_running"] != false || r["finished_at"] == nil {
		t.Fatalf("final %s", js(r))
	}
	cr := obj(r, "credits")
	var sum float64
	for _, n := range nodes(r) {
		sum += n["credits"].(float64)
		if n["error"] != nil {
			t.Fatalf("node error %v", n)
		}
	}
	if cr["credits_charged"] != sum || cr["terminal"] != true || cr["settlement"] != "captured" || sum > float64(req) {
		t.Fatalf("credits %v (nodes %v, required %d)", cr, sum, req)
	}
	// The steps' holds count against the invoking key's rolling windows.
	lim := obj(f.mustGet(f.key, "/credits/balance").body, "limits")
	if lim["key_spent_credits"].(float64) < sum || lim["daily_spent_credits"].(float64) < sum {
		t.Fatalf("spend windows %v do not count the run's %v credits", lim, sum)
	}
	g = f.gen(f.key, capGen)
	if g["purpose"] != "deliverable" || g["status"] != "completed" {
		t.Fatalf("deliverable %v", g)
	}
	// Only the deliverable step is listed, with source workflow.
	l := f.mustGet(f.key, "/generations?source=workflow")
	if ids := l.ids("generations", "generation_id"); !slices.Equal(ids, []string{capGen}) {
		t.Fatalf("listed %v, want %s", ids, capGen)
	}
	evs := f.events.of(id)
	if len(evs) != 1 || evs[0]["_type"] != workflows.EventRunCompleted || evs[0]["status"] != "completed" || evs[0]["disclosure"] == "" {
		t.Fatalf("events %v", evs)
	}
	if next := f.mustGet(f.key, "/workflow-runs/"+id).body["next_action"]; next == "" {
		t.Fatal("no next_action")
	}
}

func TestWorkflowStepFailureMakesPartialAndSkips(t *testing.T) {
	f := newWFFixture(t)
	if _, err := wired.Of(f.s).Faults.Queue(faults.RenderFail, "actor_ultra", "timeout", 1); err != nil {
		t.Fatal(err)
	}
	id, _ := f.mustInvoke("/workflows/templates/ugc_ad/invoke", f.template("ugc_ad").ExampleInputs)
	avail0, _ := f.balance()
	f.advance(1 + 20 + 120 + 45)
	r := f.run(id)
	if r["status"] != "partial" || nodeStatuses(r) != "voiceover=completed,actor=failed,captions=skipped" {
		t.Fatalf("run %s %s", r["status"], nodeStatuses(r))
	}
	ns := nodes(r)
	if e := obj(ns["actor"], "error"); e["code"] != "timeout" || ns["actor"]["credits"] != float64(0) {
		t.Fatalf("actor %v", ns["actor"])
	}
	if ns["captions"]["credits"] != nil || len(genIDs(ns["captions"])) != 0 {
		t.Fatalf("captions %v", ns["captions"])
	}
	if obj(r, "credits")["credits_charged"] != ns["voiceover"]["credits"] {
		t.Fatalf("charged %v", obj(r, "credits"))
	}
	if avail, held := f.balance(); held != 0 || avail0-avail != int64(ns["voiceover"]["credits"].(float64)) {
		t.Fatalf("balance %d held %d (was %d)", avail, held, avail0)
	}
	evs := f.events.of(id)
	if len(evs) != 1 || evs[0]["_type"] != workflows.EventRunCompleted || evs[0]["status"] != "partial" {
		t.Fatalf("events %v", evs)
	}
}

func TestWorkflowFirstStepFailureFails(t *testing.T) {
	f := newWFFixture(t)
	if _, err := wired.Of(f.s).Faults.Queue(faults.RenderFail, "image_fast", "", 1); err != nil {
		t.Fatal(err)
	}
	id, _ := f.mustInvoke("/workflows/templates/hero_image/invoke", map[string]any{"prompt": "a mug"})
	f.advance(1 + 15)
	r := f.run(id)
	if r["status"] != "failed" || nodeStatuses(r) != "image=failed,upscale=skipped" || obj(r, "credits")["credits_charged"] != float64(0) {
		t.Fatalf("run %s", js(r))
	}
	if code := obj(nodes(r)["image"], "error")["code"]; code != "provider_error" {
		t.Fatalf("code %v", code)
	}
	evs := f.events.of(id)
	if len(evs) != 1 || evs[0]["_type"] != workflows.EventRunFailed || evs[0]["status"] != "failed" {
		t.Fatalf("events %v", evs)
	}
}

func TestWorkflowHeroImageCompletes(t *testing.T) {
	f := newWFFixture(t)
	for _, key := range []string{"hero_image", "product_video"} {
		id, _ := f.mustInvoke("/workflows/templates/"+key+"/invoke", f.template(key).ExampleInputs)
		f.advance(1 + 40 + 90 + 1)
		if r := f.run(id); r["status"] != "completed" {
			t.Fatalf("%s: %s", key, js(r))
		}
	}
}

func TestWorkflowCancel(t *testing.T) {
	f := newWFFixture(t)
	avail0, _ := f.balance()
	// Canceled while queued: every node canceled, nothing charged.
	id, _ := f.mustInvoke("/workflows/templates/hero_image/invoke", map[string]any{"prompt": "a mug"})
	st, changed, err := wired.Of(f.s).Workflows.Cancel(id)
	if err != nil || !changed || st != workflows.StatusCanceled {
		t.Fatalf("cancel %v %v %v", st, changed, err)
	}
	r := f.run(id)
	if nodeStatuses(r) != "image=canceled,upscale=canceled" || r["started_at"] != nil || r["still_running"] != false {
		t.Fatalf("canceled queued run %s", js(r))
	}
	// Canceled while the first step runs: its generation is canceled.
	id2, _ := f.mustInvoke("/workflows/templates/ugc_ad/invoke", f.template("ugc_ad").ExampleInputs)
	f.advance(5)
	if _, changed, _ := wired.Of(f.s).Workflows.Cancel(id2); !changed {
		t.Fatal("not changed")
	}
	r = f.run(id2)
	if r["status"] != "canceled" || nodeStatuses(r) != "voiceover=failed,actor=canceled,captions=canceled" {
		t.Fatalf("run %s", js(r))
	}
	if g := f.gen(f.key, genIDs(nodes(r)["voiceover"])[0]); g["status"] != "failed" || obj(g, "error")["code"] != "canceled" {
		t.Fatalf("generation %v", g)
	}
	if avail, held := f.balance(); avail != avail0 || held != 0 {
		t.Fatalf("balance %d %d, want %d", avail, held, avail0)
	}
	for _, rid := range []string{id, id2} {
		evs := f.events.of(rid)
		if len(evs) != 1 || evs[0]["_type"] != workflows.EventRunFailed || evs[0]["status"] != "canceled" {
			t.Fatalf("events %v", evs)
		}
	}
	// A finished run is left as is.
	if st, changed, err := wired.Of(f.s).Workflows.Cancel(id2); err != nil || changed || st != workflows.StatusCanceled {
		t.Fatalf("second cancel %v %v %v", st, changed, err)
	}
	if _, _, err := wired.Of(f.s).Workflows.Cancel("wfr_00000000000000000000000000000000"); err == nil {
		t.Fatal("unknown run canceled")
	}
	// Canceled after a step completed: partial.
	id3, _ := f.mustInvoke("/workflows/templates/ugc_ad/invoke", f.template("ugc_ad").ExampleInputs)
	f.advance(1 + 20 + 5)
	_, _, _ = wired.Of(f.s).Workflows.Cancel(id3)
	if r := f.run(id3); r["status"] != "partial" || nodeStatuses(r) != "voiceover=completed,actor=failed,captions=canceled" {
		t.Fatalf("run %s", js(r))
	}
}

func TestWorkflowInvokeRefusals(t *testing.T) {
	f := newWFFixture(t)
	path := "/workflows/templates/ugc_ad/invoke"
	ex := f.template("ugc_ad").ExampleInputs
	for _, c := range []struct {
		name, body, field string
	}{
		{"unknown key", `{"inputs":{},"max_credits":10,"webhook_url":"x"}`, "webhook_url"},
		{"no inputs", `{"max_credits":10}`, "inputs"},
		{"inputs not object", `{"inputs":[],"max_credits":10}`, "inputs"},
		{"no max_credits", `{"inputs":{}}`, "max_credits"},
		{"max_credits zero", `{"inputs":{},"max_credits":0}`, "max_credits"},
		{"max_credits fraction", `{"inputs":{},"max_credits":1.5}`, "max_credits"},
		{"missing script", js(map[string]any{"inputs": map[string]any{"voice_id": ex["voice_id"], "actor_id": ex["actor_id"]}, "max_credits": 1000}), "inputs.script"},
		{"unknown input", js(map[string]any{"inputs": map[string]any{"script": "hi", "voice_id": ex["voice_id"], "actor_id": ex["actor_id"], "mood": 1}, "max_credits": 1000}), "inputs.mood"},
		{"bad style", js(map[string]any{"inputs": map[string]any{"script": "hi", "voice_id": ex["voice_id"], "actor_id": ex["actor_id"], "caption_style": "loud"}, "max_credits": 1000}), "inputs.caption_style"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, f.do(f.key, http.MethodPost, "/api/v1"+path, c.body), http.StatusBadRequest, "invalid_config", "field", c.field)
		})
	}
	wantError(t, f.invoke(f.key, "/workflows/templates/nope/invoke", map[string]any{"inputs": map[string]any{}, "max_credits": 10}), http.StatusNotFound, "not_found")
	wantError(t, f.invoke(f.key, "/workflows/wf_0123456789abcdef0123456789abcdef/invoke", map[string]any{"inputs": map[string]any{}, "max_credits": 10}), http.StatusNotFound, "not_found")
	// An unknown actor named in the inputs.
	bad := map[string]any{"script": "hi", "voice_id": ex["voice_id"], "actor_id": "act_0123456789abcdef0123456789abcdef"}
	wantError(t, f.invoke(f.key, path, map[string]any{"inputs": bad, "max_credits": 1000}), http.StatusNotFound, "not_found")
	// The content check reads the moderated fields built from the inputs.
	blocked := map[string]any{"prompt": "a " + fixtures.ModerationMarker + " mug"}
	wantError(t, f.invoke(f.key, "/workflows/templates/hero_image/invoke", map[string]any{"inputs": blocked, "max_credits": 1000}), http.StatusUnprocessableEntity, "moderation_blocked")
	// Spend caps and the balance apply to the sum.
	req := f.required(path, ex)
	ws := wired.Of(f.s).Registry.Create(workspace.CreateParams{Balance: int64(req - 1)})
	key := f.submitKey(ws, nil)
	a := f.invoke(key, path, map[string]any{"inputs": ex, "max_credits": req})
	wantError(t, a, http.StatusPaymentRequired, "insufficient_credits")
	if obj(a.body, "error")["shortfall"] != float64(1) {
		t.Fatalf("shortfall %s", a.raw)
	}
	budget := int64(req - 1)
	key = f.submitKey(f.ws, &budget)
	a = f.invoke(key, path, map[string]any{"inputs": ex, "max_credits": req})
	wantError(t, a, http.StatusPaymentRequired, "spend_limit_exceeded")
	if obj(obj(a.body, "error"), "limit")["bound_by"] != "api_key_budget" {
		t.Fatalf("bound_by %s", a.raw)
	}
	per := int64(req - 1)
	if _, err := f.ws.Apply(workspace.Update{SetPerGeneration: true, Limits: ledger.Limits{PerGeneration: &per}}); err != nil {
		t.Fatal(err)
	}
	a = f.invoke(f.key, path, map[string]any{"inputs": ex, "max_credits": req})
	wantError(t, a, http.StatusPaymentRequired, "spend_limit_exceeded")
	if obj(obj(a.body, "error"), "limit")["bound_by"] != "org_per_generation" {
		t.Fatalf("bound_by %s", a.raw)
	}
}

func TestWorkflowSavedAndRunList(t *testing.T) {
	f := newWFFixture(t)
	saved, err := wired.Of(f.s).Workflows.Save(f.ws.ID(), workflows.SaveParams{Name: "Hero", TemplateKey: "hero_image"})
	if err != nil {
		t.Fatal(err)
	}
	custom, err := wired.Of(f.s).Workflows.Save(f.ws.ID(), workflows.SaveParams{
		Name: "One image",
		Nodes: []fixtures.WorkflowNode{{ID: "img", CapabilityID: "image_fast", Config: map[string]fixtures.Binding{
			"prompt": {From: "inputs.p"},
		}}},
		InputsSchema: map[string]any{"type": "object", "additionalProperties": false, "required": []any{"p"},
			"properties": map[string]any{"p": map[string]any{"type": "string", "minLength": 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id1, a := f.mustInvoke("/workflows/"+saved.WorkflowID+"/invoke", map[string]any{"prompt": "a mug"})
	if a.body["workflow_id"] != saved.WorkflowID || a.body["template_key"] != nil {
		t.Fatalf("saved invoke %s", a.raw)
	}
	wantError(t, f.invoke(f.key, "/workflows/"+custom.WorkflowID+"/invoke", map[string]any{"inputs": map[string]any{}, "max_credits": 10}), http.StatusBadRequest, "invalid_config", "field", "inputs.p")
	id2, _ := f.mustInvoke("/workflows/"+custom.WorkflowID+"/invoke", map[string]any{"p": "a cat"})
	id3, _ := f.mustInvoke("/workflows/templates/hero_image/invoke", map[string]any{"prompt": "a cup"})
	f.advance(1 + 15 + 20)
	l := f.mustGet(f.key, "/workflow-runs")
	if ids := l.ids("runs", "workflow_run_id"); !slices.Equal(ids, []string{id3, id2, id1}) || l.body["next_cursor"] != nil {
		t.Fatalf("list %v", ids)
	}
	if _, has := l.list("runs")[0]["nodes"]; has {
		t.Fatal("list rows carry nodes")
	}
	l = f.mustGet(f.key, "/workflow-runs?limit=2")
	cur, _ := nextCursor(l)
	if ids := l.ids("runs", "workflow_run_id"); !slices.Equal(ids, []string{id3, id2}) || cur == "" {
		t.Fatalf("page 1 %v %q", ids, cur)
	}
	l = f.mustGet(f.key, "/workflow-runs?limit=2&cursor="+cur)
	if ids := l.ids("runs", "workflow_run_id"); !slices.Equal(ids, []string{id1}) {
		t.Fatalf("page 2 %v", ids)
	}
	l = f.mustGet(f.key, "/workflow-runs?workflow_id="+saved.WorkflowID+"&status=completed")
	if ids := l.ids("runs", "workflow_run_id"); !slices.Equal(ids, []string{id1}) {
		t.Fatalf("filtered %v", ids)
	}
	if ids := f.mustGet(f.key, "/workflow-runs?status=running").ids("runs", "workflow_run_id"); len(ids) != 0 {
		t.Fatalf("running %v", ids)
	}
	if ids := f.mustGet(f.key, "/workflow-runs?status=").ids("runs", "workflow_run_id"); len(ids) != 3 {
		t.Fatalf("blank status %v", ids)
	}
	wantError(t, f.get(f.key, "/workflow-runs?status=done"), http.StatusBadRequest, "invalid_config", "field", "status")
	// Another workspace sees none of it.
	other := f.submitKey(wired.Of(f.s).Registry.Create(workspace.CreateParams{}), nil)
	wantError(t, f.get(other, "/workflow-runs/"+id1), http.StatusNotFound, "not_found")
	wantError(t, f.invoke(other, "/workflows/"+saved.WorkflowID+"/invoke", map[string]any{"inputs": map[string]any{"prompt": "x"}, "max_credits": 100}), http.StatusNotFound, "not_found")
	if ids := f.mustGet(other, "/workflow-runs").ids("runs", "workflow_run_id"); len(ids) != 0 {
		t.Fatalf("other workspace lists %v", ids)
	}
	wantError(t, f.get(f.key, "/workflow-runs/"+id1+"/wait"), http.StatusNotFound, "not_found")
}
