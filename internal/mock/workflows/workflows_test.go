package workflows

import (
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

func newEngine(t *testing.T) *Engine {
	t.Helper()
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := workspace.NewRegistry(clk, ids.New(1))
	cat := catalog.New(catalog.Deps{Fixtures: fx, DefaultWorkspaceID: func() string { return "" }})
	js := jobs.New(jobs.Deps{Clock: clk, IDs: ids.New(2), Registry: reg, Catalog: cat})
	return New(Deps{Clock: clk, IDs: ids.New(3), Registry: reg, Catalog: cat, Jobs: js})
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	e, ok := err.(*apierr.Error)
	if !ok || e.Code != apierr.CodeInvalidConfig {
		t.Fatalf("want invalid_config, got %v", err)
	}
	return e.Field
}

func TestSchemaErrorNamesField(t *testing.T) {
	sch, err := fixtures.CompileSchema(map[string]any{"type": "object", "additionalProperties": false, "required": []any{"a"},
		"properties": map[string]any{"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "integer"},
			"c": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]map[string]any{
		"inputs.a":    {},
		"inputs.x":    {"a": "s", "x": 1, "b": "no"}, // unknown keys come first
		"inputs.b":    {"a": "s", "b": "no"},
		"inputs.c[1]": {"a": "s", "c": []any{"ok", 2}}, // array items as [i], as config validation names them
	} {
		if got := fieldOf(t, schemaError("inputs", sch, want)); got != in {
			t.Errorf("%v: field %q, want %q", want, got, in)
		}
	}
	if err := schemaError("inputs", sch, map[string]any{"a": "s", "b": float64(2)}); err != nil {
		t.Fatal(err)
	}
}

func TestSaveRefusals(t *testing.T) {
	e := newEngine(t)
	strict := map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"p": map[string]any{"type": "string"}}}
	for want, p := range map[string]SaveParams{
		"nodes":                  {},
		"inputs_schema":          {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast"}}},
		"nodes[0].node_id":       {Nodes: []fixtures.WorkflowNode{{ID: "A", CapabilityID: "image_fast"}}, InputsSchema: strict},
		"nodes[1].node_id":       {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast"}, {ID: "a", CapabilityID: "image_fast"}}, InputsSchema: strict},
		"nodes[0].capability_id": {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "nope"}}, InputsSchema: strict},
		"nodes[0].body.x":        {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast", Body: map[string]fixtures.Binding{"x": {Value: 1}}}}, InputsSchema: strict},
		"nodes[0].config.prompt": {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast", Config: map[string]fixtures.Binding{"prompt": {}}}}, InputsSchema: strict},
		"nodes[1]": {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast"}, {ID: "b", CapabilityID: "upscale",
			Config: map[string]fixtures.Binding{"source_image": {From: "nodes.a.output_asset_ids"}}}}, InputsSchema: strict},
		"example_inputs": {Nodes: []fixtures.WorkflowNode{{ID: "a", CapabilityID: "image_fast"}}, InputsSchema: strict, ExampleInputs: map[string]any{"q": 1}},
	} {
		if _, err := e.Save("ws_1", p); err == nil || fieldOf(t, err) != want {
			t.Errorf("%s: %v", want, err)
		}
	}
	if _, err := e.Save("ws_1", SaveParams{TemplateKey: "nope"}); apierr.CodeOf(err) != apierr.CodeNotFound {
		t.Fatalf("unknown template: %v", err)
	}
	s, err := e.Save("ws_1", SaveParams{TemplateKey: "ugc_ad"})
	if err != nil || s.Name != "UGC video ad" || *s.TemplateKey != "ugc_ad" || len(s.Nodes) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	if _, ok := e.savedDef("ws_2", s.WorkflowID); ok {
		t.Fatal("another workspace sees the saved workflow")
	}
	e.Reset()
	if _, ok := e.savedDef("ws_1", s.WorkflowID); ok {
		t.Fatal("reset kept the saved workflow")
	}
}
