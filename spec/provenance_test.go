package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// provText is a tiny interface text: the headings a source may name.
const provText = "# Service\n\n## Resources\n\n### Generation (inside `generation` of a read)\n\n" +
	"```\n# Not a heading\n```\n\n## Versioning\n"

// provDoc is a small document carrying complete provenance; each test breaks one thing in it.
const provDoc = `openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /generations/{id}:
    get:
      x-provenance: "text: Resources"
      parameters:
        - name: id
          in: path
          required: true
          schema: {type: string}
          x-provenance: "text: Generations > id"
      responses:
        '200':
          description: ok
          x-provenance: "text: Generation"
          headers:
            X-Trace:
              x-provenance: "reference: not shown"
              schema: {type: string}
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Generation'
        '404':
          $ref: '#/components/responses/NotFound'
components:
  responses:
    NotFound:
      description: gone
      x-provenance: "text: Resources"
      content:
        application/json:
          schema:
            type: object
            x-provenance: "text: Resources"
            properties:
              error: {type: string, x-provenance: "text: Resources"}
  schemas:
    Generation:
      type: object
      x-provenance:
        is: "text: Generation > the generation object"
        required:
          purpose: "reference: the text does not list it"
      required: [id, purpose]
      additionalProperties: false
      properties:
        id: {type: string, x-provenance: "text: Generation"}
        purpose:
          type: string
          enum: [deliverable, draft]
          x-provenance:
            is: "reference: not shown"
        outputs:
          type: array
          x-provenance: "text: Generation"
          items:
            type: object
            x-provenance: "text: Generation"
            properties:
              kind: {type: string, x-provenance: "text: Generation"}
        owner:
          $ref: '#/components/schemas/Owner'
          x-provenance: "reference: silent"
    Owner:
      type: object
      x-provenance: "reference: silent"
      properties:
        name: {type: string, x-provenance: "reference: silent"}
`

func loadInline(t *testing.T, src string) *openapi3.T {
	t.Helper()
	doc, err := LoadDocument(context.Background(), []byte(src))
	if err != nil {
		t.Fatalf("inline document does not load: %v", err)
	}
	return doc
}

func TestProvenanceProblemsAcceptsACompleteDocument(t *testing.T) {
	if ps := ProvenanceProblems(loadInline(t, provDoc), []byte(provText)); len(ps) > 0 {
		t.Fatalf("complete document has problems:\n%s", strings.Join(ps, "\n"))
	}
}

// Each kind of problem is found, at the element that has it.
func TestProvenanceProblemsFindsEachKind(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"operation without", `      x-provenance: "text: Resources"
      parameters:`, `      parameters:`, `#/paths/~1generations~1{id}/get: no x-provenance`},
		{"inline parameter without", `          x-provenance: "text: Generations > id"
`, "", `#/paths/~1generations~1{id}/get/parameters/0: no x-provenance`},
		{"response without", `          x-provenance: "text: Generation"
          headers:`, `          headers:`, `#/paths/~1generations~1{id}/get/responses/200: no x-provenance`},
		{"response header without", `              x-provenance: "reference: not shown"
`, "", `#/paths/~1generations~1{id}/get/responses/200/headers/X-Trace: no x-provenance`},
		{"component response without", `      description: gone
      x-provenance: "text: Resources"`, `      description: gone`, `#/components/responses/NotFound: no x-provenance`},
		{"inline body schema without", `            type: object
            x-provenance: "text: Resources"`, `            type: object`,
			`#/components/responses/NotFound/content/application~1json/schema: no x-provenance`},
		{"component schema without", `      x-provenance: "reference: silent"
      properties:`, `      properties:`, `#/components/schemas/Owner: no x-provenance`},
		{"inline property without", `id: {type: string, x-provenance: "text: Generation"}`, `id: {type: string}`,
			`#/components/schemas/Generation/properties/id: no x-provenance`},
		{"$ref property without", `          x-provenance: "reference: silent"
    Owner:`, `    Owner:`, `#/components/schemas/Generation/properties/owner: no x-provenance`},
		{"object items without", `            type: object
            x-provenance: "text: Generation"
            properties:`, `            type: object
            properties:`, `#/components/schemas/Generation/properties/outputs/items: no x-provenance`},
		{"neither kind", `"reference: not shown"
        outputs:`, `"ours: not shown"
        outputs:`, `#/components/schemas/Generation/properties/purpose: malformed x-provenance: is: "ours: not shown" starts neither`},
		{"no where", `name: {type: string, x-provenance: "reference: silent"}`, `name: {type: string, x-provenance: "reference:"}`,
			`#/components/schemas/Owner/properties/name: malformed x-provenance: "reference:" says reference but not where from`},
		{"not a string", `name: {type: string, x-provenance: "reference: silent"}`, `name: {type: string, x-provenance: 3}`,
			`#/components/schemas/Owner/properties/name: malformed x-provenance: want a string`},
		{"mapping without is", `            is: "reference: not shown"`, `            enum: "reference: not shown"`,
			`#/components/schemas/Generation/properties/purpose: malformed x-provenance: mapping form without ` + "`is`"},
		{"unknown key", `            is: "reference: not shown"`, `            is: "reference: not shown"
            colour: "reference: not shown"`, `unknown key "colour"`},
		{"keyword the schema lacks", `            is: "reference: not shown"`, `            is: "reference: not shown"
            maxLength: "reference: bound not stated"`,
			`#/components/schemas/Generation/properties/purpose: x-provenance names keyword maxLength, which the schema does not carry`},
		{"required entry the schema lacks", `          purpose: "reference: the text does not list it"`,
			`          purpose: "reference: the text does not list it"
          colour: "reference: no"`,
			`#/components/schemas/Generation: x-provenance lists required entry "colour", which the schema does not require`},
		{"text required entry, reference property", `        required:
          purpose: "reference: the text does not list it"
`, "", `#/components/schemas/Generation: required entry "purpose" is text but its property is reference (not shown)`},
		{"unknown heading", `kind: {type: string, x-provenance: "text: Generation"}`,
			`kind: {type: string, x-provenance: "text: Outputs > kind"}`,
			`#/components/schemas/Generation/properties/outputs/items/properties/kind: "Outputs" names no heading of the interface text`},
		{"heading only inside a code fence", `kind: {type: string, x-provenance: "text: Generation"}`,
			`kind: {type: string, x-provenance: "text: Not a heading"}`, `"Not a heading" names no heading`},
		{"unknown heading of a required entry", `          purpose: "reference: the text does not list it"`,
			`          purpose: "reference: the text does not list it"
          id: "text: Identifiers"`, `#/components/schemas/Generation (required.id): "Identifiers" names no heading`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(provDoc, tc.old) {
				t.Fatalf("test case edits text the document lacks: %q", tc.old)
			}
			doc := loadInline(t, strings.Replace(provDoc, tc.old, tc.new, 1))
			ps := ProvenanceProblems(doc, []byte(provText))
			for _, p := range ps {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Errorf("want a problem containing %q, got:\n%s", tc.want, strings.Join(ps, "\n"))
		})
	}
}

func TestParseProvenance(t *testing.T) {
	p, err := ParseProvenance(map[string]any{
		"is":        "text: Actors",
		"maxLength": "reference: bound not stated",
		"required":  map[string]any{"fan_out_label": "reference: fan-out jobs only"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Is.Text() || p.Is.Where != "Actors" {
		t.Errorf("is = %+v", p.Is)
	}
	if !p.Keyword("maxLength").Reference() || !p.Keyword("pattern").Text() {
		t.Errorf("keywords: maxLength %v, pattern (unlisted) %v", p.Keyword("maxLength"), p.Keyword("pattern"))
	}
	if !p.RequiredEntry("fan_out_label").Reference() || !p.RequiredEntry("id").Text() {
		t.Errorf("required: fan_out_label %v, id (unlisted) %v", p.RequiredEntry("fan_out_label"), p.RequiredEntry("id"))
	}
	s, err := ParseSource("text: Generations > outputs")
	if err != nil || s.Heading() != "Generations" {
		t.Errorf("heading of %+v = %q (%v)", s, s.Heading(), err)
	}
	for _, bad := range []any{"text:", "text: > only a quote", "Text: Actors", "", nil, []any{"text: Actors"}} {
		if _, err := ParseProvenance(bad); err == nil {
			t.Errorf("ParseProvenance(%#v) accepted", bad)
		}
	}
}
