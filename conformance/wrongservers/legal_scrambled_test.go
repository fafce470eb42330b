package wrongservers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

func mustScrambler(t *testing.T) *scrambler {
	t.Helper()
	s, err := newScrambler()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustDoc(t *testing.T, body string) map[string]any {
	t.Helper()
	d, ok := decodeObject([]byte(body))
	if !ok {
		t.Fatalf("not a JSON object: %s", body)
	}
	return d
}

// at is the value at a JSON pointer (no escapes) in v, and whether it is there.
func at(v any, pointer string) (any, bool) {
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if tok == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			c, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = c
		case []any:
			i := 0
			for _, r := range tok {
				i = i*10 + int(r-'0')
			}
			if i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// Each sample answer of the mock, scrambled, has the pointers of want (with their values, nil:
// any value) and none of gone: renamed reference fields and page keys, nested records, ok and
// next_cursor and every text-named field kept, times rewritten, the unknown field everywhere.
func TestScrambledAnswers(t *testing.T) {
	s := mustScrambler(t)
	x := scrambledExtraKey
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
		want               map[string]any
		gone               []string
	}{{
		name: "balance: renamed and nested, the shape pointers find it", method: "GET", path: "/credits/balance", status: 200,
		body: `{"ok":true,"available_credits":940,"held_credits":60,"balance_credits":1000,"limits":{"daily_credits":null},"summary":"s"}`,
		want: map[string]any{"/ok": true, "/balance_record/credits_available_x": json.Number("940"), "/balance_record/credits_held_x": json.Number("60"),
			"/balance_record/limits_x/credits_daily_x": nil, "/" + x: nil, "/balance_record/" + x: nil, "/balance_record/limits_x/" + x: nil},
		gone: []string{"/available_credits", "/balance_record/available_credits", "/held_credits"},
	}, {
		name: "capability detail: its text names kept one level deeper", method: "GET", path: "/capabilities/image_gen", status: 200,
		body: `{"ok":true,"capability_id":"image_gen","name":"Image","status":"available","config_schema":{"type":"object","properties":{"a":{"type":"string"}}},"example_config":{"a":"b"}}`,
		want: map[string]any{"/ok": true, "/capability_record/capability_id": "image_gen", "/capability_record/status": "available",
			"/capability_record/name_x": "Image", "/capability_record/config_schema/type": "object", "/capability_record/example_config/a": "b"},
		gone: []string{"/capability_id", "/capability_record/name", "/capability_record/config_schema/" + x, "/capability_record/example_config/" + x,
			"/capability_record/config_schema/properties/a_x"},
	}, {
		name: "generation list: the page key renamed, next_cursor at the top, ids kept", method: "GET", path: "/generations", status: 200,
		body: `{"ok":true,"generations":[{"generation_id":"gen_0123456789abcdef0123456789abcdef","status":"completed","created_at":"2026-12-07T04:45:51Z"}],"next_cursor":"c1"}`,
		want: map[string]any{"/ok": true, "/next_cursor": "c1", "/generations_x/0/generation_id": "gen_0123456789abcdef0123456789abcdef",
			"/generations_x/0/status_x": "completed", "/generations_x/0/at_created_x": "2026-12-07T04:45:51.000000+00:00", "/generations_x/0/" + x: nil},
		gone: []string{"/generations", "/generations_x/0/status"},
	}, {
		name: "a text page keeps its key", method: "GET", path: "/voices", status: 200,
		body: `{"ok":true,"voices":[{"voice_id":"voc_0123456789abcdef0123456789abcdef","name":"A"}],"total":1,"next_cursor":null}`,
		want: map[string]any{"/voices/0/voice_id": "voc_0123456789abcdef0123456789abcdef", "/voices/0/name": "A", "/total": json.Number("1"), "/next_cursor": nil},
		gone: []string{"/voices_x"},
	}, {
		name: "asset read: nested, the record key renamed, asset_id and kind kept", method: "GET", path: "/assets/ast_0123456789abcdef0123456789abcdef", status: 200,
		body: `{"ok":true,"asset":{"asset_id":"ast_0123456789abcdef0123456789abcdef","kind":"image","url":"http://x/files/a","created_at":"2026-12-07T04:45:51.5+01:00"}}`,
		want: map[string]any{"/ok": true, "/asset_record/asset_x/asset_id": "ast_0123456789abcdef0123456789abcdef", "/asset_record/asset_x/kind": "image",
			"/asset_record/asset_x/url_x": "http://x/files/a", "/asset_record/asset_x/at_created_x": "2026-12-07T03:45:51.500000+00:00"},
		gone: []string{"/asset", "/asset_record/asset"},
	}, {
		name: "workflow run read: nested, node ids and statuses kept", method: "GET", path: "/workflow-runs/wfr_0123456789abcdef0123456789abcdef", status: 200,
		body: `{"ok":true,"run":{"workflow_run_id":"wfr_0123456789abcdef0123456789abcdef","status":"running","nodes":[{"node_id":"n1","status":"queued","label":"L"}]}}`,
		want: map[string]any{"/workflow_run_record/run_x/workflow_run_id": "wfr_0123456789abcdef0123456789abcdef",
			"/workflow_run_record/run_x/status": "running", "/workflow_run_record/run_x/nodes_x/0/node_id": "n1", "/workflow_run_record/run_x/nodes_x/0/label_x": "L"},
		gone: []string{"/run", "/run_x"},
	}, {
		name: "workflow templates: the page key and the example renamed, the example's insides untouched", method: "GET", path: "/workflows/templates", status: 200,
		body: `{"ok":true,"templates":[{"template_key":"ugc_ad","example_inputs":{"script":"s","created_at":"2026-12-07T04:45:51Z"},"inputs_schema":{"type":"object","properties":{"script":{"type":"string"}}}}]}`,
		want: map[string]any{"/templates_x/0/key_template_x": "ugc_ad", "/templates_x/0/inputs_example_x/script": "s",
			"/templates_x/0/inputs_example_x/created_at": "2026-12-07T04:45:51Z", "/templates_x/0/" + x: nil},
		gone: []string{"/templates", "/templates_x/0/inputs_example_x/" + x, "/templates_x/0/schema_inputs_x/" + x,
			"/templates_x/0/schema_inputs_x/properties/" + x},
	}, {
		name: "an error: the unknown field beside error and inside it, its code kept", method: "POST", path: "/generations", status: 402,
		body: `{"error":{"ok":false,"code":"insufficient_credits","message":"m","retryable":false}}`,
		want: map[string]any{"/error/code": "insufficient_credits", "/error/retryable": false, "/" + x: nil, "/error/" + x: nil},
	}, {
		name: "a text answer keeps its names, gets the unknown field", method: "POST", path: "/uploads", status: 201,
		body: `{"ok":true,"asset_id":"ast_0123456789abcdef0123456789abcdef","upload_expires_at":"2026-12-07T04:45:51.123Z"}`,
		want: map[string]any{"/asset_id": "ast_0123456789abcdef0123456789abcdef", "/upload_expires_at": "2026-12-07T04:45:51.123000+00:00", "/" + x: nil},
		gone: []string{"/upload_record"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, apiPrefix+tc.path, nil)
			got := s.answer(r, tc.status, mustDoc(t, tc.body))
			b, _ := json.Marshal(got)
			var v any = got
			for p, want := range tc.want {
				val, ok := at(v, p)
				if !ok {
					t.Errorf("%s missing in %s", p, b)
					continue
				}
				if want != nil && val != want {
					t.Errorf("%s = %v, want %v", p, val, want)
				}
			}
			for _, p := range tc.gone {
				if _, ok := at(v, p); ok {
					t.Errorf("%s still there in %s", p, b)
				}
			}
		})
	}
}

// The shape pointers the variant's user passes point at the balance's integers.
func TestScrambledShapesPointIntoTheBalance(t *testing.T) {
	s := mustScrambler(t)
	r := httptest.NewRequest("GET", apiPrefix+"/credits/balance", nil)
	d := s.answer(r, 200, mustDoc(t, `{"ok":true,"available_credits":7,"held_credits":3,"balance_credits":10}`))
	want := map[string]json.Number{"balance.available": "7", "balance.held": "3", "balance.total": "10"}
	for _, sh := range scrambledShapes() {
		name, ptr, _ := strings.Cut(sh, "=")
		if !strings.HasPrefix(name, "balance.") {
			continue // a field name, not a pointer into the balance
		}
		if v, ok := at(d, ptr); !ok || v != want[name] {
			t.Errorf("--shape %s: %v (found %v), want %s", sh, v, ok, want[name])
		}
	}
}

func TestScrambledEvent(t *testing.T) {
	s := mustScrambler(t)
	d := mustDoc(t, `{"id":"evt_1","type":"generation.completed","created_at":"2026-12-07T04:45:51Z","data":{"generation_id":"gen_0123456789abcdef0123456789abcdef","status":"completed","credits":{"credits_charged":5}}}`)
	s.event(d)
	for _, p := range []string{"/" + scrambledExtraKey, "/data/" + scrambledExtraKey, "/data/credits/" + scrambledExtraKey, "/data/generation_id", "/type"} {
		if _, ok := at(d, p); !ok {
			t.Errorf("%s missing in %v", p, d)
		}
	}
	if d["created_at"] != "2026-12-07T04:45:51.000000+00:00" {
		t.Errorf("created_at = %v", d["created_at"])
	}
}

func TestScrambledTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-12-07T04:45:51Z":             "2026-12-07T04:45:51.000000+00:00",
		"2026-12-07T04:45:51.123456789Z":   "2026-12-07T04:45:51.123456+00:00",
		"2026-12-07T05:45:51+01:00":        "2026-12-07T04:45:51.000000+00:00",
		"not a time":                       "not a time",
		"2026-12-07":                       "2026-12-07",
		"gen_0123456789abcdef0123456789ab": "gen_0123456789abcdef0123456789ab",
	} {
		if got := scrambledTime(in); got != want {
			t.Errorf("scrambledTime(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every operation the document marks reference (a path the text never gives) is moved.
func TestScrambledMovesEveryReferenceOperation(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range v.Document().Paths.Map() {
		for method, op := range item.Operations() {
			if provOf(op.Extensions).Reference() {
				if _, moved := scrambledPaths[path]; !moved {
					t.Errorf("%s %s is the reference's choice and stays at its path: add it to scrambledPaths", method, path)
				}
			}
		}
	}
}

// Through the whole wrap: the probes at their new paths in text/plain with the mock's status, the
// old paths gone, the key header renamed.
func TestScrambledVariantMovesProbesAndKeyHeader(t *testing.T) {
	v, err := scrambledVariant()
	if err != nil {
		t.Fatal(err)
	}
	var sawKey string
	mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawKey = r.Header.Get("X-API-Key")
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case apiPrefix + "/health/live":
			_, _ = io.WriteString(w, `{"ok":true,"status":"live"}`)
		case apiPrefix + "/health/ready":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"ok":false,"status":"not_ready"}`)
		default:
			_, _ = io.WriteString(w, `{"ok":true}`)
		}
	})
	h := v.API(&Env{}, mock)
	get := func(path string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", apiPrefix+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := get(scrambledLive); w.Code != 200 || strings.TrimSpace(w.Body.String()) != "ok" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("%s: %d %q %q", scrambledLive, w.Code, w.Body, w.Header().Get("Content-Type"))
	}
	if w := get(scrambledReady); w.Code != 503 || strings.TrimSpace(w.Body.String()) != "not ready" {
		t.Errorf("%s: %d %q", scrambledReady, w.Code, w.Body)
	}
	for _, old := range []string{"/health/live", "/health/ready", "/openapi.json"} {
		if w := get(old); w.Code != 404 {
			t.Errorf("%s still answers %d", old, w.Code)
		}
	}
	get("/credits/balance", "X-API-Key", "k1")
	if sawKey != "" {
		t.Errorf("X-API-Key still reaches the mock as a key: %q", sawKey)
	}
	get("/credits/balance", scrambledKeyHeader, "k2")
	if sawKey != "k2" {
		t.Errorf("%s did not reach the mock as the key: %q", scrambledKeyHeader, sawKey)
	}
	if w := get(scrambledDescribe); strings.Contains(w.Body.String(), scrambledExtraKey) {
		t.Errorf("the live description was padded: %s", w.Body)
	}
}

func TestScrambledName(t *testing.T) {
	for in, want := range map[string]string{"available_credits": "credits_available_x", "asset": "asset_x", "a_b_c": "c_b_a_x"} {
		if got := scrambledName(in); got != want {
			t.Errorf("scrambledName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"/credits/balance": "balance_record", "/assets/{id}": "asset_record",
		"/capabilities/{id}": "capability_record", "/uploads/from-url": "from_url_record", "/workflow-runs/{id}": "workflow_run_record"} {
		if got := recordName(in); got != want {
			t.Errorf("recordName(%q) = %q, want %q", in, got, want)
		}
	}
}
