package answer

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// served is what the test server answers now: a JSON body and headers.
type served struct {
	body   string
	header map[string]string
}

var (
	now    atomic.Pointer[served]
	client *framework.Client
)

// TestMain starts one test server on 127.0.0.1:0 (it answers with now) and one framework over it.
func TestMain(m *testing.M) {
	var stop func()
	client, stop = drivertest.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s := now.Load()
		for k, v := range s.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(s.body))
	}))
	code := m.Run()
	stop()
	os.Exit(code)
}

// read serves body (and the headers) and reads it.
func read(t *testing.T, body string, header map[string]string) *framework.Response {
	t.Helper()
	now.Store(&served{body: body, header: header})
	var r *framework.Response
	if msg := drivertest.FailureOf(t, func() { r = client.Get(context.Background(), "/things") }); msg != "" {
		t.Fatal(msg)
	}
	return r
}

const goodID = "gen_0123456789abcdef0123456789abcdef"

// Each check passes a right answer and fails a wrong one with the text's reason.
func TestChecks(t *testing.T) {
	tests := []struct {
		name       string
		right      string
		wrong      string
		wrongSays  string
		check      func(r *framework.Response)
		wrongHeads map[string]string
	}{
		{"ids", `{"generation_id":"` + goodID + `","generation_ids":["` + goodID + `"],"preset_id":null}`,
			`{"job":{"generation_id":"gen_0123456789ABCDEF0123456789abcdef"}}`, "32 lowercase hex",
			func(r *framework.Response) { CheckIDs(r, r.Doc(), "answer") }, nil},
		{"id in an array", `{"generation_ids":[]}`, `{"generation_ids":["ast_0123456789abcdef0123456789abcdef"]}`, "gen_",
			func(r *framework.Response) { CheckIDs(r, r.Doc(), "answer") }, nil},
		{"timestamps", `{"created_at":"2026-12-07T04:45:51Z","rows":[{"updated_at":"2026-12-07T04:45:51+01:00"}]}`,
			`{"rows":[{"updated_at":"2026-12-07T04:45:51"}]}`, "with a zone",
			func(r *framework.Response) { CheckStamps(r, r.Doc(), "answer") }, nil},
		{"links", `{"preview_url":"https://x.test/a","$schema":"https://json-schema.org/draft"}`,
			`{"rows":[{"thumbnail":"see https://x.test/a"}]}`, "holds a link",
			func(r *framework.Response) { NoLinks(r.Doc(), "answer", "preview_url") }, nil},
		{"key in the body", `{"key":"sk_live_other"}`, `{"echo":"Bearer sk_live_test"}`, "API key",
			func(r *framework.Response) { NoKeyIn(r, "sk_live_test") }, nil},
		{"CORS", `{}`, `{}`, "no CORS headers", func(r *framework.Response) { NoCORS(r) },
			map[string]string{"Access-Control-Allow-Origin": "*"}},
		{"integer", `{"n":3}`, `{"n":2.5}`, "want an integer",
			func(r *framework.Response) { Int(r, r.Doc().(map[string]any), "n", "the answer") }, nil},
		{"string or null", `{"s":null}`, `{"s":3}`, "want a string or null",
			func(r *framework.Response) { NullableString(r, r.Doc().(map[string]any), "s", "the answer") }, nil},
		{"strings", `{"tags":["a"]}`, `{"tags":null}`, "never null",
			func(r *framework.Response) { Strings(r, r.Doc().(map[string]any), "tags", "the answer") }, nil},
		{"object", `{"o":{}}`, `{"o":[]}`, "is not an object", func(r *framework.Response) { ObjectAt(r, "o") }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := read(t, tc.right, nil)
			if msg := drivertest.FailureOf(t, func() { tc.check(r) }); msg != "" {
				t.Errorf("a right answer failed: %s", msg)
			}
			r = read(t, tc.wrong, tc.wrongHeads)
			if msg := drivertest.FailureOf(t, func() { tc.check(r) }); !strings.Contains(msg, tc.wrongSays) {
				t.Errorf("a wrong answer: failure %q, want one saying %q", msg, tc.wrongSays)
			}
		})
	}
}

func TestEnumsOf(t *testing.T) {
	root := map[string]any{"components": map[string]any{"schemas": map[string]any{"Size": map[string]any{
		"enum": []any{"s", "m"}}}}}
	doc := map[string]any{"properties": map[string]any{
		"size":  map[string]any{"$ref": "#/components/schemas/Size"},
		"inner": map[string]any{"properties": map[string]any{"size": map[string]any{"enum": []any{"l"}}}},
	}}
	got := EnumsOf(root, doc, "size")
	if len(got) != 2 {
		t.Fatalf("EnumsOf = %q, want the referenced enum and the inner one", got)
	}
}
