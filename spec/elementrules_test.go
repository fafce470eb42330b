package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec/judge"
)

// TestElementRulesStateTheirElement holds the element table to rules.yaml and the description:
// every rule exists and its statement names the header or the pattern it is charged for, every
// operation is one the description answers, and every pattern is one the description uses.
func TestElementRulesStateTheirElement(t *testing.T) {
	cat, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := LoadOpenAPI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for op, hs := range headerRules {
		if _, ok := AnswerRule(op); !ok {
			t.Errorf("headerRules: %s has no answer rule", op)
		}
		method, path, _ := strings.Cut(op, " ")
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("headerRules: %s is not an operation of the description", op)
			continue
		}
		for h, id := range hs {
			r, ok := cat.Get(id)
			if !ok {
				t.Errorf("headerRules: %s %s: no rule %s", op, h, id)
				continue
			}
			if !strings.Contains(r.Statement, h) {
				t.Errorf("headerRules: %s's statement does not name the header %s: %q", id, h, r.Statement)
			}
			found := false
			for _, resp := range item.GetOperation(method).Responses.Map() {
				if resp.Value != nil && resp.Value.Headers[h] != nil {
					found = true
				}
			}
			if !found {
				t.Errorf("headerRules: %s documents no header %s", op, h)
			}
		}
	}
	raw := string(OpenAPIYAML())
	for _, k := range judge.IDKinds() {
		if k.Rule == "" {
			continue
		}
		p, id := k.Pattern(), k.Rule
		r, ok := cat.Get(id)
		if !ok {
			t.Errorf("judge.IDKinds: no rule %s", id)
			continue
		}
		if r.Section != "Id prefixes" || !strings.Contains(r.Statement, p) {
			t.Errorf("judge.IDKinds: %s (%s) does not state %s: %q", id, r.Section, p, r.Statement)
		}
		if !strings.Contains(raw, "pattern: '"+p+"'") && !strings.Contains(raw, "pattern: "+p+"\n") {
			t.Errorf("judge.IDKinds: the description uses no pattern %s", p)
		}
	}
}

func TestElementRule(t *testing.T) {
	for _, c := range []struct {
		op   string
		fe   FieldError
		want string
	}{
		{"POST /generations", FieldError{Path: "header Cache-Control", Problem: `response header "Cache-Control" missing`}, "SUBMIT-002"},
		{"POST /generations", FieldError{Path: "header location", Problem: "missing"}, "SUBMIT-001"},
		{"POST /generations", FieldError{Path: "header Retry-After", Problem: "missing"}, ""},
		{"GET /generations/{id}", FieldError{Path: "header Cache-Control", Problem: "missing"}, ""},
		{"POST /generations",
			FieldError{Path: "$.batch_group_id", Problem: `string doesn't match the regular expression "^bg_[0-9a-f]{32}$"`}, "ID-003"},
		{"GET /batches/{id}", FieldError{Path: "$.batch_group_id", Problem: "string doesn't match ^bg_[0-9a-f]{32}$"}, "ID-003"},
		{"POST /webhooks",
			FieldError{Path: "$.webhook.webhook_id", Problem: `string doesn't match the regular expression "^wh_[0-9a-f]{32}$"`}, "ID-008"},
		{"POST /generations", FieldError{Path: "$.generation_id", Problem: "value must be a string"}, ""},
		{"POST /generations", FieldError{Path: "$.x", Problem: `string doesn't match the regular expression "^[0-9]+$"`}, ""},
	} {
		if got := ElementRule(c.op, c.fe); got != c.want {
			t.Errorf("ElementRule(%s, %v) = %q, want %q", c.op, c.fe, got, c.want)
		}
	}
}
