package framework

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// capabilityDetail is a capability detail answer as the reference mock gives it, with fields
// the interface text leaves to the reference (name, description, max_variants, pricing_unit,
// next_action; see their x-provenance in spec/openapi.yaml) and the ones it states.
var capabilityDetail = map[string]string{
	"ok": `true`, "capability_id": `"tts"`, "name": `"Text to Speech"`, "description": `"Speaks."`,
	"category": `"tool"`, "output_kind": `"audio"`, "status": `"available"`, "max_variants": `1`,
	"pricing_unit": `"thousand_chars"`, "next_action": `"Estimate, then submit."`,
	"config_schema": `{"type":"object"}`, "example_config": `{"script":"hi"}`,
}

func detailWithout(drop ...string) string {
	var parts []string
	for k, v := range capabilityDetail {
		skip := false
		for _, d := range drop {
			skip = skip || d == k
		}
		if !skip {
			parts = append(parts, `"`+k+`":`+v)
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// judgedFramework is a Framework whose target is a server answering every call with body.
func judgedFramework(t *testing.T, strict bool, body string) *Framework {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	f, err := New(context.Background(), Config{BaseURL: srv.URL + "/api/v1", Key: "sk_live_test", TimeScale: 1, Procs: 1, Strict: strict})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func getDetail(t *testing.T, f *Framework) (*Response, error) {
	t.Helper()
	return f.exchange(context.Background(), f.judge, http.MethodGet, f.resolve(f.apiRoot, "/capabilities/tts"), "sk_live_test", Bearer, nil)
}

// A server that leaves out every field the reference chose passes: each dropped field is an
// advisory naming the operation and the field, never a failure.
func TestReferenceOnlyFieldsDroppedAreAdvisories(t *testing.T) {
	f := judgedFramework(t, false, detailWithout("name", "description", "max_variants", "pricing_unit", "next_action", "ok"))
	if _, err := getDetail(t, f); err != nil {
		t.Fatalf("an answer the text allows failed:\n%v", err)
	}
	adv := f.Advisories()
	var paths []string
	for _, a := range adv {
		if a.Operation != "GET /capabilities/{id}" || a.Status != 200 || a.Count != 1 || len(a.Specs) != 1 {
			t.Errorf("advisory %+v", a)
		}
		paths = append(paths, a.Path)
	}
	if got, want := strings.Join(paths, " "), "$.description $.max_variants $.name $.next_action $.ok $.pricing_unit"; got != want {
		t.Errorf("advisories name %q, want %q", got, want)
	}
	if _, err := getDetail(t, f); err != nil {
		t.Fatal(err)
	}
	if n := f.Advisories()[0].Count; n != 2 {
		t.Errorf("the same difference seen twice counts %d", n)
	}
	if ex := f.transcript.Exchanges(); len(ex) == 0 || !strings.Contains(ex[0].String(), "? advisory: response 200 to GET /api/v1/capabilities/tts: $.description") {
		t.Errorf("the transcript does not show the advisories:\n%v", ex)
	}
}

// Under --strict the same answer fails, naming every dropped field at once.
func TestStrictMakesAdvisoriesFailures(t *testing.T) {
	f := judgedFramework(t, true, detailWithout("description", "max_variants"))
	_, err := getDetail(t, f)
	if err == nil {
		t.Fatal("a strict run passed an answer without the reference's fields")
	}
	for _, want := range []string{"strict: response 200 to GET /api/v1/capabilities/tts: $.description: property \"description\" is missing", "$.max_variants: property \"max_variants\" is missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failure does not say %q:\n%v", want, err)
		}
	}
	if len(f.Advisories()) != 0 {
		t.Errorf("a strict run recorded advisories: %+v", f.Advisories())
	}
}

// A field the text states is a failure in every run, all of them named at once: the preset
// templates answer lists ok, capability_id, name, status, requires_template, templates[] and
// next_action (GET /presets/{id}/templates).
func TestTextFieldsDroppedFail(t *testing.T) {
	f := judgedFramework(t, false, `{"ok":true,"capability_id":"preset_ugc","name":"UGC","status":"available","next_action":"Pick a template."}`)
	_, err := f.exchange(context.Background(), f.judge, http.MethodGet, f.resolve(f.apiRoot, "/presets/preset_ugc/templates"), "sk_live_test", Bearer, nil)
	if err == nil {
		t.Fatal("an answer without requires_template and templates passed")
	}
	for _, want := range []string{`$.requires_template: property "requires_template" is missing`, `$.templates: property "templates" is missing`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failure does not say %q:\n%v", want, err)
		}
	}
}

// The capability answer's layout is not shown: the gate lets an answer through whatever it lays
// out (an answer without config_schema included), and the open-shapes layer is what finds, or
// fails to find, the schema a spec reads (openshape.DetailOf).
func TestCapabilityLayoutIsNotGated(t *testing.T) {
	f := judgedFramework(t, false, detailWithout("config_schema", "example_config", "description"))
	if _, err := getDetail(t, f); err != nil {
		t.Fatalf("the gate judged the capability answer's layout, which the text does not show:\n%v", err)
	}
}

// generationCompleted is the document's own generation.completed example, its data changed by
// edit (nil: as it is).
func generationCompleted(t *testing.T, edit func(data map[string]any)) []byte {
	t.Helper()
	doc, err := spec.LoadOpenAPI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	b, _ := json.Marshal(hooks["generation.completed"])
	var item struct {
		Post struct {
			RequestBody struct {
				Content map[string]struct {
					Example map[string]any `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"post"`
	}
	if err := json.Unmarshal(b, &item); err != nil {
		t.Fatal(err)
	}
	ev := item.Post.RequestBody.Content["application/json"].Example
	data, _ := ev["data"].(map[string]any)
	if data == nil {
		t.Fatal("the document has no generation.completed example")
	}
	if edit != nil {
		edit(data)
	}
	out, _ := json.Marshal(ev)
	return out
}

// A webhook body is judged like an answer: a field the text states is a failure, a field of the
// reference's own an advisory (a failure under --strict).
func TestCheckEvent(t *testing.T) {
	f := judgedFramework(t, false, "{}")
	s := &Spec{f: f}
	if err := s.CheckEvent("generation.completed", generationCompleted(t, nil)); err != nil || len(f.Advisories()) != 0 {
		t.Fatalf("the document's own example: %v, advisories %+v", err, f.Advisories())
	}
	// The text states no lower bound of batch_index; the reference's minimum 0 is its own.
	below := func(d map[string]any) { d["batch_index"] = -1 }
	if err := s.CheckEvent("generation.completed", generationCompleted(t, below)); err != nil {
		t.Errorf("an event breaking only a bound of the reference failed: %v", err)
	}
	if adv := f.Advisories(); len(adv) != 1 || adv[0].Operation != "event generation.completed" || adv[0].Path != "$.data.batch_index" {
		t.Errorf("advisories = %+v", adv)
	}
	err := s.CheckEvent("generation.completed", generationCompleted(t, func(d map[string]any) { delete(d, "disclosure"); delete(d, "generation_id") }))
	if err == nil || !strings.Contains(err.Error(), "$.data.disclosure") || !strings.Contains(err.Error(), "$.data.generation_id") {
		t.Errorf("an event without the text's fields: %v", err)
	}
	strict := &Spec{f: judgedFramework(t, true, "{}")}
	if err := strict.CheckEvent("generation.completed", generationCompleted(t, below)); err == nil || !strings.Contains(err.Error(), "strict: event generation.completed: $.data.batch_index") {
		t.Errorf("a strict run passed an event without a reference field: %v", err)
	}
}
