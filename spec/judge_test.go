package spec

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// judgeDoc is a small annotated document: a capability row whose `description` and
// `max_variants` are the reference's, a closed error envelope the text states, a request body
// schema the answer shares, a header of ours and an operation of ours.
const judgeDoc = `openapi: 3.0.3
info: {title: judge, version: 1.2.0}
servers: [{url: /api/v1}]
x-webhooks:
  thing.done:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/ThingDone'}
      responses:
        '200': {description: ok}
paths:
  /capabilities/{id}:
    get:
      x-provenance: "text: GET /capabilities/{id}"
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}, x-provenance: "text: GET /capabilities/{id}"}
      responses:
        '200':
          description: ok
          x-provenance: "text: Capability"
          headers:
            X-Served-By:
              required: true
              schema: {type: string}
              x-provenance: "reference: not shown"
            Cache-Control:
              $ref: '#/components/headers/CacheControl'
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Capability'}
        '404': {$ref: '#/components/responses/Err'}
  /things:
    post:
      x-provenance: "text: Capability"
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Thing'}
      responses:
        '201':
          description: made
          x-provenance: "text: Capability"
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Thing'}
  /openapi.json:
    get:
      x-provenance: "reference: the text never gives the path"
      responses:
        '200':
          description: the description
          content:
            application/json:
              schema: {type: object, required: [openapi], properties: {openapi: {type: string}}}
components:
  headers:
    CacheControl:
      required: true
      schema: {type: string, enum: [no-store]}
      x-provenance: "text: Errors"
  responses:
    Err:
      description: error
      x-provenance: "text: Errors"
      content:
        application/json:
          schema: {$ref: '#/components/schemas/Error'}
  schemas:
    Capability:
      type: object
      additionalProperties: false
      x-provenance:
        is: "text: Capability"
        required:
          pricing_unit: "reference: the row shape is not shown"
      required: [ok, capability_id, description, max_variants, pricing_unit, status]
      properties:
        ok: {type: boolean, x-provenance: "text: Capability"}
        capability_id: {type: string, pattern: '^[a-z_]+$', x-provenance: "text: Capability"}
        description: {type: string, x-provenance: "reference: row shape not shown"}
        max_variants: {type: integer, minimum: 1, x-provenance: "reference: row shape not shown"}
        pricing_unit: {type: string, enum: [second, image], x-provenance: {is: "text: Capability", enum: "reference: units not listed"}}
        status: {type: string, enum: [available, retired], x-provenance: "text: Capability"}
        limits: {$ref: '#/components/schemas/Limits', x-provenance: "text: Capability"}
    Limits:
      type: object
      x-provenance: "reference: the limits shape is not shown"
      required: [daily]
      properties:
        daily: {type: integer, x-provenance: "reference: not shown"}
        budget: {type: integer, x-provenance: "text: Capability"}
    Thing:
      type: object
      additionalProperties: false
      x-provenance: "text: Capability"
      required: [name]
      properties:
        name: {type: string, x-provenance: "text: Capability"}
        colour: {type: string, x-provenance: "reference: silent"}
    ThingDone:
      type: object
      x-provenance: "text: Events"
      required: [type, data]
      properties:
        type: {type: string, x-provenance: "text: Events"}
        data:
          type: object
          additionalProperties: false
          x-provenance: "reference: not shown"
          required: [n]
          properties: {n: {type: integer, x-provenance: "reference: not shown"}}
    Error:
      type: object
      additionalProperties: false
      x-provenance:
        is: "text: Errors"
        additionalProperties: "text: Errors > the only key is error"
      required: [error]
      properties:
        error:
          type: object
          additionalProperties: false
          x-provenance: "text: Errors"
          required: [code]
          properties:
            code: {type: string, x-provenance: "text: Errors"}
`

func mustJudge(t *testing.T) *Judge {
	t.Helper()
	j, err := NewJudgeFor(loadInline(t, judgeDoc))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func ansHeader(extra ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func TestJudgeResponse(t *testing.T) {
	j := mustJudge(t)
	get := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities/tts", nil)
	full := `{"ok":true,"capability_id":"tts","description":"Speaks.","max_variants":1,"pricing_unit":"second",` +
		`"status":"available","limits":{"daily":5}}`
	cases := []struct {
		name           string
		r              *http.Request
		status         int
		header         http.Header
		body           string
		fail, advisory []string // substrings each error must hold; nil: no error
	}{
		{name: "the reference's own answer", r: get, status: 200, header: ansHeader("X-Served-By", "a", "Cache-Control", "no-store"), body: full},
		{name: "reference-only fields, header and bounds dropped", r: get, status: 200, header: ansHeader("Cache-Control", "no-store"),
			body: `{"ok":true,"capability_id":"tts","status":"available","limits":{"budget":3}}`,
			advisory: []string{`header X-Served-By: response header "X-Served-By" missing`, `$.description: property "description" is missing`,
				`$.max_variants: property "max_variants" is missing`, `$.pricing_unit: property "pricing_unit" is missing`,
				`$.limits.daily: property "daily" is missing`}},
		{name: "values of reference-only shapes", r: get, status: 200, header: ansHeader("Cache-Control", "no-store"),
			body: `{"ok":true,"capability_id":"tts","description":7,"max_variants":0,"pricing_unit":"word","status":"available",` +
				`"limits":null,"extra":{"x":1}}`,
			advisory: []string{"$.description", "$.max_variants", "$.pricing_unit", "$.limits", "$.extra"}},
		{name: "every text field missing or wrong is named at once", r: get, status: 200, header: ansHeader("Cache-Control", "private"),
			body: `{"capability_id":"TTS","status":"gone","limits":{"budget":"3"}}`,
			fail: []string{"header Cache-Control", `$.ok: property "ok" is missing`, "$.capability_id: ", "$.status: ", "$.limits.budget: "}},
		{name: "the error envelope the text closes stays closed", r: get, status: 404, header: ansHeader("Cache-Control", "no-store"),
			body: `{"error":{"code":"not_found","hint":"x"},"ok":false}`,
			fail: []string{`$.ok: not a property`}},
		{name: "an operation of ours is not judged", r: httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil), status: 404,
			header: ansHeader(), body: `{}`, advisory: []string{"status 404"}},
		{name: "a shared schema stays strict for the request, open for the answer",
			r: httptest.NewRequest(http.MethodPost, "/api/v1/things", nil), status: 201, header: ansHeader(),
			body: `{"name":"a","size":3}`, advisory: []string{`$.size: not a property`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failure, advisory := j.Response(context.Background(), tc.r, tc.status, tc.header, []byte(tc.body))
			expectErr(t, "failure", failure, tc.fail)
			expectErr(t, "advisory", advisory, tc.advisory)
		})
	}
}

func expectErr(t *testing.T, what string, err error, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("unexpected %s:\n%v", what, err)
		}
		return
	}
	if err == nil {
		t.Errorf("no %s, want one naming %q", what, want)
		return
	}
	var v Violation
	if !errors.As(err, &v) {
		t.Fatalf("%s is %T, want a Violation", what, err)
	}
	lines := strings.Join(v.Lines(), "\n")
	for _, w := range want {
		if !strings.Contains(lines, w) {
			t.Errorf("%s does not name %q:\n%s", what, w, lines)
		}
	}
	if len(want) > 1 && len(v.Lines()) < len(want) {
		t.Errorf("%s has %d lines, want one per field (%d):\n%s", what, len(v.Lines()), len(want), lines)
	}
}

func TestJudgeRequestIsTheReference(t *testing.T) {
	j := mustJudge(t)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/things", strings.NewReader(`{"name":"a","size":3}`))
	r.Header.Set("Content-Type", "application/json")
	if err := j.Request(context.Background(), r, []byte(`{"name":"a","size":3}`)); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("a request with a key the request schema refuses passed the judge (%v)", err)
	}
	if err := j.Request(context.Background(), r, []byte(`{"name":"a"}`)); err != nil {
		t.Errorf("a valid request was refused: %v", err)
	}
}

func TestJudgeRequestBody(t *testing.T) {
	j := mustJudge(t)
	ctx := context.Background()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/things", strings.NewReader(`{"name":"a","size":3}`))
	r.Header.Set("Content-Type", "application/json")
	if err := j.RequestBody(ctx, r, []byte(`{"name":"a","size":3}`)); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("a body the request schema refuses passed (%v)", err)
	}
	if err := j.RequestBody(ctx, r, []byte(`{"name":"a"}`)); err != nil {
		t.Errorf("a valid body was refused: %v", err)
	}
	// An operation without a request body: nothing to judge, whatever is sent.
	get := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities/tts", nil)
	if err := j.RequestBody(ctx, get, []byte(`{"x":`)); err != nil {
		t.Errorf("a GET without a declared body was judged: %v", err)
	}
	// Undocumented, or outside the base path: nil (Request names the former).
	for _, path := range []string{"/api/v1/nowhere", "/elsewhere"} {
		r := httptest.NewRequest(http.MethodPost, path, nil)
		if err := j.RequestBody(ctx, r, nil); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	// A parameter Request refuses is not the body's.
	bad := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities/tts?unknown=1", nil)
	if err := j.RequestBody(ctx, bad, nil); err != nil {
		t.Errorf("a query parameter was judged as the body: %v", err)
	}
}

func TestJudgeEvent(t *testing.T) {
	j := mustJudge(t)
	if f, a := j.Event("thing.done", []byte(`{"type":"thing.done","data":{"n":1}}`)); f != nil || a != nil {
		t.Errorf("the reference's event: failure %v, advisory %v", f, a)
	}
	f, a := j.Event("thing.done", []byte(`{"type":"thing.done","data":{"m":"x"}}`))
	expectErr(t, "failure", f, nil)
	expectErr(t, "advisory", a, []string{`$.data.n: property "n" is missing`, `$.data.m: not a property`})
	f, _ = j.Event("thing.done", []byte(`{"data":{}}`))
	expectErr(t, "failure", f, []string{`$.type: property "type" is missing`})
	f, _ = j.Event("no.such", []byte(`{}`))
	expectErr(t, "failure", f, []string{"no event of this type"})
}

// Without x-provenance the normative view is the reference: nothing is loosened.
func TestNormativeOfAnUnannotatedDocumentChangesNothing(t *testing.T) {
	j, err := NewJudgeFor(loadInline(t, tinyDoc))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/things/t1", nil)
	failure, advisory := j.Response(context.Background(), r, 200, ansHeader(), []byte(`{"ok":true}`))
	expectErr(t, "failure", failure, []string{`$.thing_id: property "thing_id" is missing`, `$.size: property "size" is missing`})
	expectErr(t, "advisory", advisory, nil)
}

// The embedded document's normative view loads, and our own mock's answers are its answers: a
// reference-valid answer is never refused by the normative view.
func TestNormativeOfTheEmbeddedDocumentLoads(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	norm, err := Normative(doc)
	if err != nil {
		t.Fatal(err)
	}
	if norm.Paths.Len() != doc.Paths.Len() || len(EventSchemas(norm)) != len(EventSchemas(doc)) {
		t.Errorf("the normative view has %d paths and %d events, the document %d and %d",
			norm.Paths.Len(), len(EventSchemas(norm)), doc.Paths.Len(), len(EventSchemas(doc)))
	}
}

func TestNormativeRefusesMalformedProvenance(t *testing.T) {
	bad := strings.Replace(judgeDoc, `x-provenance: "reference: silent"`, `x-provenance: "ours: silent"`, 1)
	if _, err := Normative(loadInline(t, bad)); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("a malformed x-provenance was accepted (%v)", err)
	}
}

// A status entry marked reference beside its $ref is not checked by the normative view; the
// reference document still holds the answer to the response it names.
func TestJudgeReferenceResponseBesideRef(t *testing.T) {
	src := strings.Replace(judgeDoc, "        '404': {$ref: '#/components/responses/Err'}",
		"        '404': {$ref: '#/components/responses/Err', x-provenance: \"reference: our own status\"}", 1)
	if src == judgeDoc {
		t.Fatal("the test's edit does not apply")
	}
	j, err := NewJudgeFor(loadInline(t, src))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities/tts", nil)
	failure, advisory := j.Response(context.Background(), r, 404, ansHeader(), []byte(`{"message":"gone"}`))
	expectErr(t, "failure", failure, nil)
	expectErr(t, "advisory", advisory, []string{`$.error: property "error" is missing`, `$.message: not a property`})
}

// A violation with several fields reads as a list, one field a line; an event names its type.
func TestViolationErrorListsFields(t *testing.T) {
	v := Violation{Kind: "response", Method: "GET", Path: "/api/v1/x", Status: 200,
		Err: FieldErrors{{Path: "$.a", Problem: "missing"}, {Path: "header B", Problem: "bad"}}}
	want := "response 200 to GET /api/v1/x does not match the OpenAPI description:\n  - $.a: missing\n  - header B: bad"
	if got := v.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e := Violation{Kind: "event", Path: "credits.low", Err: FieldErrors{{Path: "$.data", Problem: "missing"}}}
	if got := e.Error(); got != "event credits.low does not match the OpenAPI description: $.data: missing" {
		t.Errorf("event Error() = %q", got)
	}
}
