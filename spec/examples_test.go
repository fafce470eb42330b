package spec

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// docExample is one example of the REST description: where it sits, the schema it must satisfy and
// its value.
type docExample struct {
	Where  string // e.g. "POST /estimates request" or "GET /generations/{id} 200 (completed)"
	Method string
	Path   string
	Status string // "" for a request body example
	Schema *openapi3.Schema
	Value  any
}

// docExamples lists every request and response body example of doc's operations, `example` and
// each entry of `examples`, in a fixed order.
func docExamples(doc *openapi3.T) []docExample {
	var out []docExample
	add := func(where, method, path, status string, mt *openapi3.MediaType) {
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			return
		}
		if mt.Example != nil {
			out = append(out, docExample{where, method, path, status, mt.Schema.Value, mt.Example})
		}
		names := make([]string, 0, len(mt.Examples))
		for name := range mt.Examples {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if ex := mt.Examples[name]; ex != nil && ex.Value != nil {
				out = append(out, docExample{where + " (" + name + ")", method, path, status, mt.Schema.Value, ex.Value.Value})
			}
		}
	}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		item := doc.Paths.Value(path)
		for _, method := range []string{"GET", "POST", "DELETE"} {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				add(method+" "+path+" request", method, path, "", op.RequestBody.Value.Content.Get("application/json"))
			}
			statuses := make([]string, 0, op.Responses.Len())
			for status := range op.Responses.Map() {
				statuses = append(statuses, status)
			}
			sort.Strings(statuses)
			for _, status := range statuses {
				if r := op.Responses.Value(status); r != nil && r.Value != nil {
					add(fmt.Sprintf("%s %s %s", method, path, status), method, path, status, r.Value.Content.Get("application/json"))
				}
			}
		}
	}
	return out
}

// Every example validates against its schema (kin-openapi's reading of `nullable`, the one the
// generators share), once round-tripped through JSON as a client would see it.
func TestExamplesValidateAgainstTheirSchemas(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	exs := docExamples(doc)
	if len(exs) == 0 {
		t.Fatal("the description has no examples")
	}
	for _, ex := range exs {
		b, err := json.Marshal(ex.Value)
		if err != nil {
			t.Errorf("%s: example does not encode as JSON: %v", ex.Where, err)
			continue
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := ex.Schema.VisitJSON(v, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: example breaks its schema: %s", ex.Where, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	t.Logf("%d examples validated", len(exs))
}

// Every operation shows an example of its request body (when it takes one) and of each success
// answer with a body, so rendered docs never invent a sample.
func TestEveryOperationHasExamples(t *testing.T) {
	doc := mustLoadOpenAPI(t)
	have := map[string]bool{}
	for _, ex := range docExamples(doc) {
		have[ex.Method+" "+ex.Path+" "+ex.Status] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil && !have[method+" "+path+" "] {
				t.Errorf("%s %s: no request example", method, path)
			}
			for status, r := range op.Responses.Map() {
				if !strings.HasPrefix(status, "2") || r.Value == nil || r.Value.Content.Get("application/json") == nil {
					continue
				}
				if !have[method+" "+path+" "+status] {
					t.Errorf("%s %s: no example of the %s answer", method, path, status)
				}
			}
		}
	}
}
