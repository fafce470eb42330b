package spec

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

const tinyDoc = `
openapi: 3.0.3
info: {title: tiny, version: 1.2.0}
servers: [{url: /api/v1}]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [ok, thing_id, size]
                properties:
                  ok: {type: boolean}
                  thing_id: {type: string}
                  size: {type: integer, nullable: true}
        "404": {$ref: "#/components/responses/Err"}
  /things/special:
    get:
      operationId: getSpecial
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, required: [special], properties: {special: {type: boolean}}}
  /things:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name]
              properties: {name: {type: string}}
      responses:
        "201":
          description: made
          headers:
            Location: {required: true, schema: {type: string}}
          content:
            application/json:
              schema: {type: object, required: [ok], properties: {ok: {type: boolean}}}
        "400": {$ref: "#/components/responses/Err"}
components:
  responses:
    Err:
      description: error
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
  schemas:
    Error:
      type: object
      required: [error]
      properties:
        error:
          type: object
          required: [ok, code]
          properties:
            ok: {type: boolean}
            code: {type: string}
`

func tinyValidator(t *testing.T, opts ...ValidatorOption) *Validator {
	t.Helper()
	doc, err := LoadDocument(context.Background(), []byte(tinyDoc))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewValidator(doc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFindRoutePrefersLiteralSegments(t *testing.T) {
	v := tinyValidator(t)
	cases := []struct {
		method, path, want string
		params             map[string]string
	}{
		{"GET", "/api/v1/things/special", "/things/special", nil},
		{"GET", "/api/v1/things/abc", "/things/{id}", map[string]string{"id": "abc"}},
		{"POST", "/api/v1/things", "/things", nil},
		{"GET", "/api/v1/things", "", nil},        // no GET on /things
		{"GET", "/api/v1/nothing", "", nil},       // undocumented
		{"GET", "/other/things/abc", "", nil},     // outside the base path
		{"GET", "/api/v1/things/a/b", "", nil},    // too many segments
		{"DELETE", "/api/v1/things/abc", "", nil}, // undocumented method
	}
	for _, c := range cases {
		route, params, ok := v.FindRoute(c.method, c.path)
		if c.want == "" {
			if ok {
				t.Errorf("%s %s matched %s, want no match", c.method, c.path, route.Path)
			}
			continue
		}
		if !ok || route.Path != c.want {
			t.Errorf("%s %s: got %v, want %s", c.method, c.path, route, c.want)
			continue
		}
		for k, want := range c.params {
			if params[k] != want {
				t.Errorf("%s %s: param %s = %q, want %q", c.method, c.path, k, params[k], want)
			}
		}
	}
}

func TestWithBasePath(t *testing.T) {
	v := tinyValidator(t, WithBasePath("/edge/api/v1/"))
	if _, _, ok := v.FindRoute("GET", "/edge/api/v1/things/x"); !ok {
		t.Error("a service mounted below /edge is not matched")
	}
	if v.Covers("/api/v1/things/x") {
		t.Error("the default base path still matches after WithBasePath")
	}
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

func TestValidateResponse(t *testing.T) {
	v := tinyValidator(t)
	ctx := context.Background()
	get := httptest.NewRequest("GET", "/api/v1/things/abc", nil)
	post := httptest.NewRequest("POST", "/api/v1/things", nil)
	nope := httptest.NewRequest("GET", "/api/v1/nope", nil)
	cases := []struct {
		name    string
		req     *http.Request
		status  int
		header  http.Header
		body    string
		wantErr string
	}{
		{"valid", get, 200, jsonHeader(), `{"ok":true,"thing_id":"abc","size":null}`, ""},
		{"unknown fields are fine in answers", get, 200, jsonHeader(), `{"ok":true,"thing_id":"abc","size":3,"extra":1}`, ""},
		{"wrong type", get, 200, jsonHeader(), `{"ok":true,"thing_id":"abc","size":"3"}`, "size"},
		{"missing required field", get, 200, jsonHeader(), `{"ok":true,"size":3}`, "thing_id"},
		{"undocumented status", get, 403, jsonHeader(), `{"error":{"ok":false,"code":"x"}}`, "403"},
		{"documented error", get, 404, jsonHeader(), `{"error":{"ok":false,"code":"not_found"}}`, ""},
		{"error not in the envelope", get, 404, jsonHeader(), `{"message":"nope"}`, "error"},
		{"required header missing", post, 201, jsonHeader(), `{"ok":true}`, "Location"},
		{"wrong content type", get, 200, http.Header{"Content-Type": {"text/plain"}}, `{"ok":true,"thing_id":"abc","size":1}`, "content"},
		{"undocumented path answers an envelope", nope, 404, jsonHeader(), `{"error":{"ok":false,"code":"not_found"}}`, ""},
		{"undocumented path answers success", nope, 200, jsonHeader(), `{}`, "undocumented"},
		{"undocumented path answers a bare error", nope, 404, jsonHeader(), `{"code":"not_found"}`, "envelope"},
		{"outside the base path is not checked", httptest.NewRequest("GET", "/files/x", nil), 200, http.Header{}, `binary`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.ValidateResponse(ctx, c.req, c.status, c.header, []byte(c.body))
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected violation: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no violation, want one mentioning %q", c.wantErr)
			}
			var viol Violation
			if !errors.As(err, &viol) || viol.Kind != "response" || viol.Status != c.status {
				t.Errorf("error is not a response Violation with status %d: %#v", c.status, err)
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.wantErr)) {
				t.Errorf("violation %q does not mention %q", err, c.wantErr)
			}
		})
	}
}

func TestValidateRequest(t *testing.T) {
	v := tinyValidator(t)
	ctx := context.Background()
	mk := func(body string) *http.Request {
		r := httptest.NewRequest("POST", "/api/v1/things", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	if err := v.ValidateRequest(ctx, mk(`{"name":"a"}`), []byte(`{"name":"a"}`)); err != nil {
		t.Errorf("valid request refused: %v", err)
	}
	if err := v.ValidateRequest(ctx, mk(`{"name":"a","x":1}`), []byte(`{"name":"a","x":1}`)); err == nil {
		t.Error("request with an unknown key passed a strict body")
	}
	if err := v.ValidateRequest(ctx, mk(`{}`), []byte(`{}`)); err == nil {
		t.Error("request without a required key passed")
	}
	r := httptest.NewRequest("PUT", "/api/v1/things", nil)
	if err := v.ValidateRequest(ctx, r, nil); err == nil {
		t.Error("undocumented method passed")
	}
}

// The transport hands bodies on unchanged and reports both kinds of violation.
func TestTransportReportsAndPreservesBodies(t *testing.T) {
	v := tinyValidator(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "POST" {
			if string(b) != `{"name":"a","bad":1}` {
				t.Errorf("server got body %q", b)
			}
			w.WriteHeader(201) // no Location: a response violation
			_, _ = w.Write([]byte(`{"ok":true}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true,"thing_id":"x","size":1}`))
	}))
	defer srv.Close()
	var mu sync.Mutex
	var got []Violation
	client := &http.Client{Transport: v.Transport(nil, func(vi Violation) { mu.Lock(); got = append(got, vi); mu.Unlock() })}
	res, err := client.Post(srv.URL+"/api/v1/things", "application/json", strings.NewReader(`{"name":"a","bad":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != `{"ok":true}` {
		t.Errorf("client got body %q", body)
	}
	res, err = client.Get(srv.URL + "/api/v1/things/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Kind != "request" || got[1].Kind != "response" || got[1].Status != 201 {
		t.Fatalf("violations = %v, want one request and one 201 response violation", got)
	}
}

func TestMiddlewareReportsAndPassesThrough(t *testing.T) {
	v := tinyValidator(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Kept", "1")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"ok":true,"thing_id":"x"}`)) // size missing
	})
	var got []Violation
	srv := httptest.NewServer(v.Middleware(h, func(vi Violation) { got = append(got, vi) }))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/v1/things/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Kept") != "1" || string(body) != `{"ok":true,"thing_id":"x"}` {
		t.Errorf("middleware changed the answer: %d %v %q", res.StatusCode, res.Header, body)
	}
	if len(got) != 1 || !strings.Contains(got[0].Error(), "size") {
		t.Errorf("violations = %v, want one about size", got)
	}
}

func TestParseRulesRefusesBadCatalogues(t *testing.T) {
	head := "version: 1\nareas: {AUTH: Authentication}\nneeds: {control: the control API}\nrules:\n"
	good := "  - {id: AUTH-001, level: MUST, section: Authentication, statement: s, needs: [control]}\n"
	if _, err := ParseRules([]byte(head + good)); err != nil {
		t.Fatalf("good catalogue refused: %v", err)
	}
	audited := "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], unobservable: client obligation, audit: a retry}\n"
	if c, err := ParseRules([]byte(head + good + audited)); err != nil || !c.Rules[1].Audited() || c.Rules[0].Audited() {
		t.Fatalf("audited client obligation: %v", err)
	}
	interpreted := "  - {id: AUTH-003, level: MUST, section: S, statement: s, needs: [], interpretation: ours, basis: reference, " +
		"judged: strict-only}\n"
	c, err := ParseRules([]byte(head + good + interpreted))
	if err != nil || c.Rules[1].Basis != BasisReference || c.Rules[1].Judged != JudgedStrictOnly {
		t.Fatalf("interpretation with its basis: %v", err)
	}
	// ours opens a rule with an interpretation; each case closes it.
	const ours = "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], interpretation: ours"
	cases := map[string]string{
		"duplicate id":       head + good + good,
		"bad id":             head + "  - {id: auth-1, level: MUST, section: S, statement: s, needs: []}\n",
		"unknown area":       head + "  - {id: XYZ-001, level: MUST, section: S, statement: s, needs: []}\n",
		"unknown level":      head + "  - {id: AUTH-002, level: OUGHT, section: S, statement: s, needs: []}\n",
		"unknown need":       head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [magic]}\n",
		"no statement":       head + "  - {id: AUTH-002, level: MUST, section: S, statement: '', needs: []}\n",
		"unknown key":        head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], colour: red}\n",
		"audit observable":   head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], audit: a retry}\n",
		"no basis":           head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], interpretation: ours}\n",
		"unknown basis":      head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], interpretation: ours, basis: mock}\n",
		"basis alone":        head + "  - {id: AUTH-002, level: MUST, section: S, statement: s, needs: [], basis: text}\n",
		"reference unjudged": head + ours + ", basis: reference}\n",
		"unknown judgement":  head + ours + ", basis: reference, judged: maybe}\n",
		"text judged":        head + ours + ", basis: text, judged: open}\n",
		"wrong version":      "version: 2\n" + strings.TrimPrefix(head, "version: 1\n") + good,
		"not yaml at all":    "{{{",
	}
	for name, doc := range cases {
		if _, err := ParseRules([]byte(doc)); err == nil {
			t.Errorf("%s: catalogue accepted", name)
		}
	}
}

func TestRuleAreaAndFilter(t *testing.T) {
	c, err := ParseRules([]byte(`version: 1
areas: {AUTH: a, GEN-SUBMIT: b}
needs: {control: c}
rules:
  - {id: AUTH-001, level: MUST, section: S, statement: keys are checked, needs: []}
  - {id: GEN-SUBMIT-007, level: SHOULD, section: S, statement: submit answers, needs: [control]}
  - {id: AUTH-002, level: MAY, section: S, statement: hashed, needs: [], unobservable: internal}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a := (Rule{ID: "GEN-SUBMIT-007"}).Area(); a != "GEN-SUBMIT" {
		t.Errorf("Area = %q", a)
	}
	count := func(f RuleFilter) int { return len(c.Filter(f)) }
	yes, no := true, false
	checks := []struct {
		f    RuleFilter
		want int
	}{
		{RuleFilter{}, 3}, {RuleFilter{Area: "auth"}, 2}, {RuleFilter{Level: "should"}, 1},
		{RuleFilter{Need: "control"}, 1}, {RuleFilter{Text: "SUBMIT ANSWERS"}, 1},
		{RuleFilter{Observable: &yes}, 2}, {RuleFilter{Observable: &no}, 1},
	}
	for _, ch := range checks {
		if got := count(ch.f); got != ch.want {
			t.Errorf("Filter(%+v) = %d rules, want %d", ch.f, got, ch.want)
		}
	}
	if _, ok := c.Get("GEN-SUBMIT-007"); !ok {
		t.Error("Get misses an existing id")
	}
}

// Query parameters are typed (an integer limit, enum filters) while a blank value counts as
// omitted: the validator passes blank values and still refuses a value of the wrong type.
func TestValidateRequestTreatsBlankQueryValuesAsOmitted(t *testing.T) {
	v, err := NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for query, ok := range map[string]bool{
		"":                               true,
		"limit=10":                       true,
		"limit=":                         true,
		"limit=%20":                      true,
		"status=&source=&limit=&cursor=": true,
		"status=completed&source=api":    true,
		"limit=abc":                      false,
		"status=bogus":                   false,
	} {
		r := httptest.NewRequest("GET", "/api/v1/generations?"+query, nil)
		err := v.ValidateRequest(ctx, r, nil)
		if ok && err != nil {
			t.Errorf("?%s refused: %v", query, err)
		}
		if !ok && err == nil {
			t.Errorf("?%s passed", query)
		}
		if r.URL.RawQuery != query {
			t.Errorf("?%s: the caller's request was changed to ?%s", query, r.URL.RawQuery)
		}
	}
}

// Operations carry a `default` answer so that generated clients decode any error, but a service's
// answer must still use a status the operation lists.
func TestValidateResponseRefusesAStatusOnlyDefaultCovers(t *testing.T) {
	v, err := NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	op := v.Document().Paths.Value("/credits/balance").Get
	if op.Responses.Default() == nil {
		t.Fatal("GET /credits/balance has no default answer")
	}
	h := http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}
	body := []byte(`{"error":{"ok":false,"code":"internal_error","message":"m","retryable":true,"credits_charged":0}}`)
	r := httptest.NewRequest("GET", "/api/v1/credits/balance", nil)
	if err := v.ValidateResponse(context.Background(), r, 500, h, body); err != nil {
		t.Errorf("a listed status was refused: %v", err)
	}
	if err := v.ValidateResponse(context.Background(), r, 418, h, body); err == nil {
		t.Error("status 418, covered only by default, passed")
	}
}
