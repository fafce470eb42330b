package framework

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// Every operation of the REST description has the rule that owns its success answer, and every
// owner is an observable rule of the catalogue: a new operation without one fails here.
func TestAnswerRulesCoverTheDescription(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	doc := v.Document()
	for _, path := range doc.Paths.InMatchingOrder() {
		for method := range doc.Paths.Value(path).Operations() {
			op := strings.ToUpper(method) + " " + path
			seen[op] = true
			if _, ok := spec.AnswerRule(op); !ok {
				t.Errorf("%s has no rule that owns its answer in answerRules", op)
			}
		}
	}
	owners := map[string]string{envelopeRule: "envelope"}
	for _, op := range spec.AnswerRuleOperations() {
		id, _ := spec.AnswerRule(op)
		owners[id] = op
		if !seen[op] {
			t.Errorf("answerRules names %s, which the description does not have", op)
		}
	}
	for op, id := range failureRules {
		owners[id] = op
	}
	for id, op := range owners {
		if r, ok := cat.Get(id); !ok || !r.Observable() {
			t.Errorf("%s: owner %s is not an observable rule of spec/rules.yaml", op, id)
		}
	}
}

func TestAnswerOwner(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(context.Background(), spec.WithBasePath("/api/v1"))
	if err != nil {
		t.Fatal(err)
	}
	f := testFramework(t)
	f.validator = v
	for _, c := range []struct {
		method, path string
		status       int
		fields       []string // paths; a problem after " | "
		want         string
	}{
		{"GET", "/api/v1/capabilities", 200, []string{"$.capabilities"}, "CAP-001"},
		{"GET", "/api/v1/capabilities", 200, []string{"$.ok"}, "CORE-002"},                                         // every success answer's ok
		{"GET", "/api/v1/voices", 200, []string{`$ | property "ok" is missing`, "$.voices"}, "CORE-002 VOICE-001"}, // left out
		{"GET", "/api/v1/generations/gen_x/wait", 200, []string{"$.waited_seconds | value must be an integer", "$.still_running"}, "GEN-028 GEN-034"},
		{"GET", "/api/v1/actors", 200, []string{"$.actors[3].tags | value is not nullable", "$.actors[0].tags[1]"}, "ACTOR-005"},
		{"POST", "/api/v1/webhooks", 201, []string{"$.webhook.webhook_id | string doesn't match the regular expression"}, "ID-008"},
		{"POST", "/api/v1/webhooks", 201, []string{"$.webhook.updated_at | value is not nullable"}, "WH-004"},                           // the webhook's own fields
		{"GET", "/api/v1/webhooks", 200, []string{`$.webhooks[2] | property "consecutive_failures" is missing`}, "WH-004"},              // a row without one
		{"GET", "/api/v1/voices", 200, []string{"$.voices[4].tags | value is not nullable"}, "VOICE-004"},                               // as an actor's tags
		{"GET", "/api/v1/batches/bg_x", 200, []string{`$.generations[0] | property "batch_index" is missing`}, "BATCH-011"},             // the entry's three fields
		{"GET", "/api/v1/batches/bg_x", 200, []string{`$.generations[0].batch_index | property "batch_index" is missing`}, "BATCH-011"}, // the path names it
		{"GET", "/api/v1/batches/bg_x", 200, []string{`$.generations[0] | property "purpose" is missing`}, "BATCH-001"},                 // another field: the answer's
		{"POST", "/api/v1/generations", 201, []string{`header Cache-Control | response header "Cache-Control" missing`}, "SUBMIT-002"},  // the header's own rule
		{"POST", "/api/v1/generations", 201, []string{`$.batch_group_id | string doesn't match the regular expression "^bg_[0-9a-f]{32}$"`, "$.replay"}, "ID-003 SUBMIT-003"},
		{"GET", "/api/v1/batches/bg_x", 200, []string{`$.batch_group_id | string doesn't match the regular expression "^bg_[0-9a-f]{32}$"`}, "ID-003"},
		{"POST", "/api/v1/uploads", 418, []string{"$.ok"}, "UPLOAD-002"},           // an undocumented failure: the operation's
		{"GET", "/api/v1/capabilities/image_basic", 404, []string{""}, "CORE-003"}, // a documented failure: the envelope
		{"GET", "/api/v1/capabilities/image_basic", 404, []string{"$.error.ok"}, "ERR-001"},
		{"GET", "/api/v1/capabilities/image_basic", 404, []string{"$.error.message", "$.error.retryable", "$.ok"}, "CORE-003 ERR-003 ERR-005"},
		{"POST", "/api/v1/generations", 402, []string{"$.error.limit.required_credits"}, "ERR-012"},
		{"POST", "/api/v1/generations", 402, []string{"$.error.limit.bound_by"}, "ERR-011"},
		{"POST", "/api/v1/generations", 429, []string{"$.error.retry_after_seconds"}, "ERR-008"},
		{"POST", "/api/v1/uploads", 200, []string{""}, "UPLOAD-002"}, // a status the operation never answers
		{"POST", "/api/v1/generations", 201, []string{"$.credits.credits_held | value must be an integer"}, "CORE-005"},
		{"GET", "/api/v1/generations/gen_x", 200, []string{`$.generation.created_at | string doesn't match the format "date-time"`, "$.generation.status | value is not one of the allowed values"}, "CORE-017 GEN-001"},
		{"POST", "/api/v1/workflows/templates/k/invoke", 201, nil, "WF-005"},
		{"GET", "/api/v1/health/ready", 503, nil, "HEALTH-003"}, // not the envelope
		{"GET", "/api/v1/no-such-route", 200, nil, ""},
	} {
		var fields []spec.FieldError
		for _, fl := range c.fields {
			path, problem, _ := strings.Cut(fl, " | ")
			fields = append(fields, spec.FieldError{Path: path, Problem: problem})
		}
		rules, _ := f.answerOwners(c.method, c.path, c.status, fields)
		if got := strings.Join(rules, " "); got != c.want {
			t.Errorf("%s %s %d %v: owners %q, want %q", c.method, c.path, c.status, c.fields, got, c.want)
		}
	}
}

// An answer that breaks the description is an error that names the rule owning its shape; a
// request the spec broke by mistake names none (it is the spec's fault, not the server's).
func TestBrokenAnswerNamesItsOwner(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(ts.Close)
	f := newTestFramework(t, Config{BaseURL: ts.URL, Key: "sk_live_k"})
	_, err := f.exchange(context.Background(), f.judge, http.MethodGet, f.resolve(f.apiRoot, "/presets"), "sk_live_k", Bearer, nil)
	var de *descriptionError
	if !errors.As(err, &de) || strings.Join(de.rules, " ") != "CORE-002 PRESET-001" {
		t.Fatalf("err %v (owner %+v), want a description error owned by CORE-002 (no ok) and PRESET-001", err, de)
	}
	_, err = f.exchange(context.Background(), f.judge, http.MethodPost, f.resolve(f.apiRoot, "/estimates"), "sk_live_k", Bearer,
		[]CallOption{JSONBody(map[string]any{"bogus": 1})})
	if !errors.As(err, &de) || len(de.rules) != 0 {
		t.Fatalf("err %v (owner %+v), want a description error without an owner", err, de)
	}
}
