package spec

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// legalExtraKey is the unknown key the leanest legal answer adds to every open object.
const legalExtraKey = "x_legal_extra"

// schemaParts is s with its allOf parts (and theirs), plus the oneOf or anyOf branch v satisfies.
func schemaParts(s *openapi3.Schema, v any) []*openapi3.Schema {
	if s == nil {
		return nil
	}
	out := []*openapi3.Schema{s}
	for _, p := range s.AllOf {
		out = append(out, schemaParts(p.Value, v)...)
	}
	for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, b := range list {
			if b.Value != nil && b.Value.VisitJSON(v, openapi3.VisitAsResponse()) == nil {
				out = append(out, schemaParts(b.Value, v)...)
				break
			}
		}
	}
	return out
}

// leanest is the leanest answer the text allows built from v: every object keeps only the keys
// the normative schema s requires, and gains an unknown key where the object is open.
func leanest(v any, s *openapi3.Schema) any {
	parts := schemaParts(s, v)
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		closed := false
		for _, p := range parts {
			if p.AdditionalProperties.Has != nil && !*p.AdditionalProperties.Has {
				closed = true
			}
			for _, k := range p.Required {
				val, ok := t[k]
				if !ok {
					continue
				}
				var ps *openapi3.Schema
				for _, q := range parts {
					if r := q.Properties[k]; r != nil {
						ps = r.Value
					}
				}
				out[k] = leanest(val, ps)
			}
		}
		if !closed {
			out[legalExtraKey] = "an unknown field"
		}
		return out
	case []any:
		var items *openapi3.Schema
		for _, p := range parts {
			if p.Items != nil {
				items = p.Items.Value
			}
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = leanest(e, items)
		}
		return out
	}
	return v
}

// The leanest legal answer of every response example — every key the normative view does not
// require dropped, an unknown key added to every open object — passes the normative view: the
// text's part of the document is consistent with itself. Dropping a key the view does require
// fails it, so the test can fail.
func TestNormativeAcceptsTheLeanestLegalAnswers(t *testing.T) {
	norm, err := Normative(mustLoadOpenAPI(t))
	if err != nil {
		t.Fatal(err)
	}
	checked, bitten := 0, 0
	for _, ex := range docExamples(norm) {
		if ex.Status == "" {
			continue
		}
		b, _ := json.Marshal(ex.Value)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		lean := leanest(v, ex.Schema)
		checked++
		if err := ex.Schema.VisitJSON(lean, openapi3.MultiErrors(), openapi3.VisitAsResponse()); err != nil {
			lb, _ := json.Marshal(lean)
			t.Errorf("%s: the leanest legal answer is refused:\n%s\nanswer: %s", ex.Where, fieldErrors(err), lb)
			continue
		}
		if m, ok := lean.(map[string]any); ok {
			for k := range m {
				if k == legalExtraKey {
					continue
				}
				short := map[string]any{}
				for k2, v2 := range m {
					if k2 != k {
						short[k2] = v2
					}
				}
				if ex.Schema.VisitJSON(short, openapi3.VisitAsResponse()) == nil {
					t.Errorf("%s: dropping the required %q still passes", ex.Where, k)
				}
				bitten++
				break
			}
		}
	}
	if checked == 0 || bitten == 0 {
		t.Fatalf("%d answers checked, %d with a required key to drop", checked, bitten)
	}
	t.Logf("%d answers checked", checked)
}
