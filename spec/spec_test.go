package spec

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func mustLoadOpenAPI(tb testing.TB) *openapi3.T {
	tb.Helper()
	doc, err := LoadOpenAPI(context.Background())
	if err != nil {
		tb.Fatalf("the embedded REST description does not load: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentLoadsAndValidates(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info == nil || doc.Info.Version != Version {
		t.Errorf("info.version is not %s", Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != BasePath {
		t.Errorf("servers must be exactly [%s]", BasePath)
	}
}

func TestControlDocumentLoadsAndValidates(t *testing.T) {
	doc, err := LoadControl(context.Background())
	if err != nil {
		t.Fatalf("control.yaml does not load: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	for _, p := range []string{"/workspaces", "/workspaces/{id}", "/workspaces/{id}/keys", "/workspaces/{id}/credits",
		"/keys/{key_id}", "/clock", "/clock/advance", "/reset"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("control.yaml lacks path %s", p)
		}
	}
}

// The paths and methods the interface spec names, plus the designed health probes and live description.
var wantOperations = []string{
	"GET /capabilities", "GET /capabilities/{id}", "POST /estimates", "POST /generations",
	"GET /generations", "GET /generations/{id}", "GET /generations/{id}/wait", "GET /batches/{id}",
	"GET /presets", "GET /presets/{id}/templates", "GET /actors", "GET /voices", "POST /uploads",
	"POST /uploads/{assetId}/finalize", "POST /uploads/from-url", "GET /webhooks", "POST /webhooks",
	"DELETE /webhooks/{id}", "GET /assets", "GET /assets/{id}", "GET /assets/{id}/download",
	"GET /credits/balance", "GET /workflows/templates", "POST /workflows/{id}/invoke",
	"POST /workflows/templates/{key}/invoke", "GET /workflow-runs", "GET /workflow-runs/{id}",
	"GET /health/live", "GET /health/ready", "GET /openapi.json",
}

func TestEveryOperationIsDescribed(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	have := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			have[method+" "+path] = true
		}
	}
	for _, op := range wantOperations {
		if !have[op] {
			t.Errorf("missing operation %s", op)
		}
		delete(have, op)
	}
	for op := range have {
		t.Errorf("operation %s is not one the interface names", op)
	}
}

func TestOperationsCarryScopeBucketAndID(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", name)
			} else if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("%s and %s share operationId %s", name, prev, op.OperationID)
			}
			seen[op.OperationID] = name
			health := strings.HasPrefix(path, "/health/")
			if health {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s must declare security: [] (no key)", name)
				}
				continue
			}
			scope, _ := op.Extensions["x-scope"].(string)
			if scope != "read" && scope != "generate" {
				t.Errorf("%s: x-scope = %q, want read or generate", name, scope)
			}
			if method == "GET" && scope != "read" {
				t.Errorf("%s reads but needs scope %q", name, scope)
			}
			if _, ok := op.Extensions["x-bucket"].(string); !ok {
				t.Errorf("%s has no x-bucket", name)
			}
			for _, status := range []int{401, 403, 410, 429, 500} {
				if op.Responses.Status(status) == nil {
					t.Errorf("%s does not document %d", name, status)
				}
			}
		}
	}
}

func TestErrorCodeEnumMatchesTheErrorTable(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	body := doc.Components.Schemas["ErrorBody"]
	if body == nil || body.Value == nil {
		t.Fatal("components.schemas.ErrorBody missing")
	}
	code := body.Value.Properties["code"]
	if code == nil || code.Value == nil {
		t.Fatal("ErrorBody.code missing")
	}
	var enum []string
	for _, v := range code.Value.Enum {
		enum = append(enum, v.(string))
	}
	var want []string
	for _, e := range ErrorCodes {
		want = append(want, e.Code)
	}
	sort.Strings(enum)
	sort.Strings(want)
	if strings.Join(enum, ",") != strings.Join(want, ",") {
		t.Errorf("error code enum\n got  %v\n want %v", enum, want)
	}
	for _, f := range []string{"ok", "code", "message", "retryable", "credits_charged"} {
		if !contains(body.Value.Required, f) {
			t.Errorf("ErrorBody does not require %s", f)
		}
	}
}

// Each code of the error table is documented, with its status, on at least one operation (through
// the x-error-codes list of that status's response).
func TestEveryErrorCodeIsAnsweredSomewhere(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	found := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				if ref.Value == nil {
					continue
				}
				n, err := strconv.Atoi(status)
				if err != nil || n < 400 {
					continue
				}
				codes, ok := ref.Value.Extensions["x-error-codes"].([]any)
				if !ok {
					t.Errorf("%s %s: response %d has no x-error-codes list", method, path, n)
					continue
				}
				for _, c := range codes {
					s, _ := c.(string)
					e, known := LookupErrorCode(s)
					if !known {
						t.Errorf("%s %s: %d lists unknown code %q", method, path, n, s)
						continue
					}
					if e.Status != n {
						t.Errorf("%s %s: code %s listed under %d, the error table says %d", method, path, s, n, e.Status)
						continue
					}
					found[s] = true
				}
			}
		}
	}
	for _, e := range ErrorCodes {
		if !found[e.Code] {
			t.Errorf("code %s (%d) is not documented on any operation", e.Code, e.Status)
		}
	}
}

func TestSubmitAndInvokeDocumentTheirHeaders(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	for _, p := range []string{"/generations", "/workflows/{id}/invoke", "/workflows/templates/{key}/invoke"} {
		op := doc.Paths.Value(p).Post
		created := op.Responses.Status(201)
		if created == nil || created.Value == nil {
			t.Errorf("POST %s: no 201 answer", p)
			continue
		}
		for _, h := range []string{"Location", "Cache-Control"} {
			if created.Value.Headers[h] == nil {
				t.Errorf("POST %s 201 lacks header %s", p, h)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if r := op.Responses.Status(429); r != nil && r.Value != nil && r.Value.Headers["Retry-After"] == nil {
				t.Errorf("%s %s: 429 lacks the Retry-After header", method, path)
			}
		}
	}
}

// Every request body is strict: additionalProperties false on its schema.
func TestRequestBodiesAreStrict(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				t.Errorf("%s %s: request body is not application/json", method, path)
				continue
			}
			ap := mt.Schema.Value.AdditionalProperties
			if ap.Has == nil || *ap.Has {
				t.Errorf("%s %s: request body schema allows additional properties", method, path)
			}
		}
	}
}

// Every pattern in either document compiles as a Go regular expression, and the id schemas match
// a well-formed id and refuse a malformed one.
func TestPatternsCompileAndIDsMatch(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	ctl, err := LoadControl(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*openapi3.T{doc, ctl} {
		for name, s := range d.Components.Schemas {
			walkSchema(s, map[*openapi3.Schema]bool{}, func(sc *openapi3.Schema) {
				if sc.Pattern != "" {
					if _, err := regexp.Compile(sc.Pattern); err != nil {
						t.Errorf("schema %s: pattern %q does not compile: %v", name, sc.Pattern, err)
					}
				}
			})
		}
	}
	hex := strings.Repeat("0123456789abcdef", 2)
	ids := map[string]string{
		"GenerationId": "gen_", "BatchGroupId": "bg_", "AssetId": "ast_", "ActorId": "act_", "VoiceId": "voc_",
		"WorkflowId": "wf_", "WorkflowRunId": "wfr_", "WebhookId": "wh_", "DeliveryId": "whd_",
		"TemplateId": "captpl_", "RunId": "run_",
	}
	for name, prefix := range ids {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Errorf("components.schemas.%s missing", name)
			continue
		}
		want := "^" + prefix + "[0-9a-f]{32}$"
		if s.Value.Pattern != want {
			t.Errorf("%s pattern = %q, want %q", name, s.Value.Pattern, want)
		}
		if err := s.Value.VisitJSON(prefix + hex); err != nil {
			t.Errorf("%s refuses a well-formed id: %v", name, err)
		}
		for _, bad := range []string{prefix + strings.ToUpper(hex), prefix + hex[:31], "x" + prefix + hex, prefix + hex + "0"} {
			if err := s.Value.VisitJSON(bad); err == nil {
				t.Errorf("%s accepts malformed id %q", name, bad)
			}
		}
	}
}

func walkSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool, f func(*openapi3.Schema)) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	f(s)
	for _, p := range s.Properties {
		walkSchema(p, seen, f)
	}
	walkSchema(s.Items, seen, f)
	if s.AdditionalProperties.Schema != nil {
		walkSchema(s.AdditionalProperties.Schema, seen, f)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
		for _, x := range list {
			walkSchema(x, seen, f)
		}
	}
	walkSchema(s.Not, seen, f)
}

var wantEvents = []string{"generation.completed", "generation.failed", "batch.settled", "workflow_run.completed", "workflow_run.failed",
	"credits.low", "webhook.test"}

// Every event type of the interface spec is an x-webhooks entry in Redocly's 3.0 convention (event
// name -> Path Item with post.requestBody), whose operation declares the Standard Webhooks headers,
// and the events callback of POST /webhooks names the same schemas through its discriminator.
func TestWebhookEventsAreDescribed(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	schemas := EventSchemas(doc)
	if len(schemas) != len(wantEvents) {
		t.Errorf("x-webhooks describes %d events, want %d", len(schemas), len(wantEvents))
	}
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	for _, ev := range wantEvents {
		sch := schemas[ev]
		if sch == nil {
			t.Errorf("x-webhooks lacks %s (or names no component schema for it)", ev)
			continue
		}
		// The schema's own type enum names the event.
		stray := map[string]any{"id": "whd_" + strings.Repeat("0", 32), "type": "no.such.event", "created_at": "2026-01-01T00:00:00Z",
			"data": map[string]any{}}
		if err := sch.Value.VisitJSON(stray); err == nil {
			t.Errorf("%s: the schema accepts any type", ev)
		}
		// Its example is a delivery body of this event (Redoc shows it instead of inventing one).
		if example := dig(hooks[ev], "post", "requestBody", "content", "application/json", "example"); example == nil {
			t.Errorf("x-webhooks %s has no example", ev)
		} else if err := sch.Value.VisitJSON(example, openapi3.MultiErrors()); err != nil {
			t.Errorf("x-webhooks %s: the example breaks the event schema: %v", ev, err)
		} else if typ := dig(example, "type"); typ != ev {
			t.Errorf("x-webhooks %s: the example's type is %v", ev, typ)
		}
		var names []string
		params, _ := dig(hooks[ev], "post", "parameters").([]any)
		for _, p := range params {
			ref, _ := dig(p, "$ref").(string)
			if prm := doc.Components.Parameters[strings.TrimPrefix(ref, "#/components/parameters/")]; prm != nil && prm.Value != nil {
				names = append(names, prm.Value.Name)
			}
		}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "user-agent"} {
			if !contains(names, h) {
				t.Errorf("x-webhooks %s does not declare the %s header", ev, h)
			}
		}
	}
	cb := doc.Paths.Value("/webhooks").Post.Callbacks["events"]
	if cb == nil || cb.Value == nil {
		t.Fatal("POST /webhooks has no events callback")
	}
	for _, item := range cb.Value.Map() {
		body := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
		d := body.Discriminator
		if d == nil || d.PropertyName != "type" {
			t.Fatal("the events callback body has no discriminator on type")
		}
		if len(body.OneOf) != len(wantEvents) || len(d.Mapping) != len(wantEvents) {
			t.Errorf("the events callback lists %d schemas and maps %d, want %d", len(body.OneOf), len(d.Mapping), len(wantEvents))
		}
		for ev, ref := range d.Mapping {
			if sch := schemas[ev]; sch == nil || doc.Components.Schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")] != sch {
				t.Errorf("the discriminator maps %s to %s, which is not its x-webhooks schema", ev, ref.Ref)
			}
		}
	}
}

func TestOpenAPIJSONRoundTrips(t *testing.T) {
	data, err := OpenAPIJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := LoadDocument(context.Background(), data)
	if err != nil {
		t.Fatalf("the JSON form does not load: %v", err)
	}
	if doc.Info.Version != Version {
		t.Errorf("JSON form info.version = %q", doc.Info.Version)
	}
}

func TestRulesCatalogue(t *testing.T) {
	cat, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cat.Rules); n < 300 {
		t.Errorf("catalogue has %d rules, want at least 300", n)
	}
	for _, need := range []string{"read-key", "second-workspace", "control", "receiver", "spends", "slow", "profile"} {
		if _, ok := cat.Needs[need]; !ok {
			t.Errorf("need %s is not declared", need)
		}
	}
	// Every error code has a rule that names it.
	for _, e := range ErrorCodes {
		if len(cat.Filter(RuleFilter{Text: e.Code})) == 0 {
			t.Errorf("no rule mentions error code %s", e.Code)
		}
	}
	var interp, unobs int
	for _, r := range cat.Rules {
		if r.Interpretation != "" {
			interp++
		}
		if !r.Observable() {
			unobs++
		}
	}
	if interp == 0 || unobs == 0 {
		t.Errorf("catalogue has %d interpretations and %d unobservable rules; both kinds must be recorded", interp, unobs)
	}
}

// Each rule's section is a heading of the interface spec, so a reader can find its source. The
// interface spec lives in ../shared beside the repository (as on developer machines and in CI).
func TestRuleSectionsAreInterfaceSpecHeadings(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "interface-spec.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("interface spec not beside the repository (%v): section names not cross-checked", err)
	}
	headings := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			headings[strings.TrimSpace(strings.TrimLeft(line, "#"))] = true
		}
	}
	cat, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cat.Rules {
		if !headings[r.Section] {
			t.Errorf("%s: section %q is not a heading of the interface spec", r.ID, r.Section)
		}
	}
}

// The Go error table (what services built on this package answer) says exactly what the REST
// description's x-error-table publishes: the same codes, statuses and retryable verdicts.
func TestErrorTableMatchesTheDocument(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	code := doc.Components.Schemas["ErrorCode"]
	if code == nil || code.Value == nil {
		t.Fatal("components.schemas.ErrorCode missing")
	}
	published, ok := code.Value.Extensions["x-error-table"].(map[string]any)
	if !ok {
		t.Fatal("ErrorCode has no x-error-table")
	}
	if len(published) != len(ErrorCodes) {
		t.Errorf("x-error-table has %d codes, ErrorCodes %d", len(published), len(ErrorCodes))
	}
	for _, e := range ErrorCodes {
		row, ok := published[e.Code].(map[string]any)
		if !ok {
			t.Errorf("x-error-table lacks %s", e.Code)
			continue
		}
		status, _ := row["status"].(float64)
		retryable, _ := row["retryable"].(bool)
		if int(status) != e.Status || retryable != e.Retryable {
			t.Errorf("%s: x-error-table says %v/%v, ErrorCodes %d/%v", e.Code, row["status"], row["retryable"], e.Status, e.Retryable)
		}
	}
}
