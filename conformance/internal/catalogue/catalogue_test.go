package catalogue

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// shop is the catalogue the test server answers: its list rows (GET /capabilities, one page), each
// capability's detail (GET /capabilities/{id}) and the hold an estimate answers (POST /estimates:
// price of the capability and its config, refused 400 when price is nil or answers a negative hold).
type shop struct {
	rows    []map[string]any
	details map[string]map[string]any
	price   func(id string, cfg map[string]any) int64
	// answer, when set, is what every estimate answers: its status and body.
	answer *struct {
		status int
		body   string
	}
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch p := strings.TrimPrefix(r.URL.Path, "/api/v1"); {
	case p == "/capabilities":
		write(http.StatusOK, map[string]any{"capabilities": s.rows, "next_cursor": nil})
	case strings.HasPrefix(p, "/capabilities/"):
		d, ok := s.details[strings.TrimPrefix(p, "/capabilities/")]
		if !ok {
			write(http.StatusNotFound, map[string]any{"error": map[string]any{"ok": false, "code": "not_found", "message": "no such capability"}})
			return
		}
		write(http.StatusOK, d)
	case p == "/estimates" && s.answer != nil:
		w.WriteHeader(s.answer.status)
		_, _ = w.Write([]byte(s.answer.body))
	case p == "/estimates":
		var body struct {
			ID     string         `json:"capability_id"`
			Config map[string]any `json:"config"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		hold := int64(-1)
		if s.price != nil {
			hold = s.price(body.ID, body.Config)
		}
		if hold < 0 {
			write(http.StatusBadRequest, map[string]any{"error": map[string]any{"ok": false, "code": "invalid_config", "message": "no"}})
			return
		}
		write(http.StatusOK, map[string]any{"capability_id": body.ID, "credits": hold, "max_credits_needed": hold})
	default:
		write(http.StatusNotFound, map[string]any{"error": map[string]any{"ok": false, "code": "not_found", "message": p}})
	}
}

// serveWith makes the test server answer with a handler and returns a client of a key of its own.
var serveWith func(h http.Handler) *framework.Client

// TestMain starts one test server on 127.0.0.1:0 and one framework over it.
func TestMain(m *testing.M) { drivertest.RunSwitched(m, &serveWith) }

// serve makes the test server answer with s and returns a client of a key of its own (the
// catalogue's reads are remembered per key).
func serve(s *shop) *framework.Client { return serveWith(s) }

// row is a list row of an available capability.
func row(id, category, kind string) map[string]any {
	return map[string]any{"capability_id": id, "name": id, "category": category, "output_kind": kind, "status": "available"}
}

// model is the detail of a capability whose config takes a prompt and count up to maxCount.
func model(id string, maxCount int) map[string]any {
	return map[string]any{
		"capability_id": id,
		"config_schema": map[string]any{"type": "object", "required": []any{"prompt"}, "properties": map[string]any{
			"prompt": map[string]any{"type": "string", "maxLength": 500},
			"count":  map[string]any{"type": "integer", "minimum": 1, "maximum": maxCount},
		}},
		"example_config": map[string]any{"prompt": "A cat."},
	}
}

// The cheapest image model that makes several takes is picked, whatever the list order: a model of
// one take, a model the target does not price and a capability not available are passed over.
func TestImageModel(t *testing.T) {
	s := &shop{
		rows: []map[string]any{
			row("img_single", "image", "image"), row("img_dear", "image", "image"), row("img_refused", "image", "image"),
			row("img_cheap", "image", "image"), row("vid_one", "video", "video"),
		},
		details: map[string]map[string]any{
			"img_single": model("img_single", 1), "img_dear": model("img_dear", 4),
			"img_refused": model("img_refused", 4), "img_cheap": model("img_cheap", 4), "img_soon": model("img_soon", 4),
		},
		price: func(id string, _ map[string]any) int64 {
			return map[string]int64{"img_single": 1, "img_dear": 40, "img_cheap": 8, "img_soon": 2, "img_refused": -1}[id]
		},
	}
	soon := row("img_soon", "image", "image")
	soon["status"] = "coming_soon"
	s.rows = append(s.rows, soon)
	c := serve(s)
	var got string
	if msg := drivertest.FailureOf(t, func() { got = ImageModel(context.Background(), c).String("capability_id") }); msg != "" {
		t.Fatal(msg)
	}
	if got != "img_cheap" {
		t.Errorf("ImageModel picked %s, want img_cheap", got)
	}
	if n := Ceiling(Detail(context.Background(), c, "img_single")); n != 1 {
		t.Errorf("Ceiling of a count of at most 1 is %d", n)
	}
}

// A detail that carries no config schema is not a capability answer: Detail fails the spec.
func TestDetailWithoutSchema(t *testing.T) {
	c := serve(&shop{details: map[string]map[string]any{"cap_a": {"capability_id": "cap_a", "example_config": map[string]any{}}}})
	msg := drivertest.FailureOf(t, func() { Detail(context.Background(), c, "cap_a") })
	if !strings.Contains(msg, "config schema") {
		t.Errorf("a detail without config_schema: failure %q", msg)
	}
}

// CheckRow fails a row that breaks the text's fields, and passes one that keeps them.
func TestCheckRow(t *testing.T) {
	c := serve(&shop{})
	r := c.Get(context.Background(), "/capabilities")
	good := row("cap_a", "image", "image")
	if msg := drivertest.FailureOf(t, func() { CheckRow(r, good, "row") }); msg != "" {
		t.Errorf("a good row failed: %s", msg)
	}
	for name, spoil := range map[string]func(m map[string]any){
		"unknown category":      func(m map[string]any) { m["category"] = "music" },
		"unknown output_kind":   func(m map[string]any) { m["output_kind"] = "hologram" },
		"unknown status":        func(m map[string]any) { m["status"] = "live" },
		"requires_plan unnamed": func(m map[string]any) { m["status"] = "requires_plan" },
		"no capability_id":      func(m map[string]any) { delete(m, "capability_id") },
		"a link in a row":       func(m map[string]any) { m["preview"] = "https://cdn.example.com/cap_a.png" },
	} {
		bad := row("cap_a", "image", "image")
		spoil(bad)
		if msg := drivertest.FailureOf(t, func() { CheckRow(r, bad, "row") }); msg == "" {
			t.Errorf("%s: CheckRow passed %v", name, bad)
		}
	}
}

// ExpectNotLive takes 404 capability_unavailable naming the status, and 400 invalid_config only for
// a config not known to be valid.
func TestExpectNotLive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		valid  bool
		passes bool
	}{
		{"unavailable, status named", 404, `{"error":{"ok":false,"code":"capability_unavailable","message":"m","retryable":false,` +
			`"credits_charged":0,"capability_status":"retired"}}`, true, true},
		{"unavailable, another status", 404, `{"error":{"ok":false,"code":"capability_unavailable","message":"m","retryable":false,` +
			`"credits_charged":0,"capability_status":"coming_soon"}}`,
			true, false},
		{"invalid_config for a valid config", 400, `{"error":{"ok":false,"code":"invalid_config","message":"m","retryable":false,` +
			`"credits_charged":0}}`, true, false},
		{"invalid_config for a config not known valid", 400, `{"error":{"ok":false,"code":"invalid_config","message":"m",` +
			`"retryable":false,"credits_charged":0}}`, false, true},
		{"accepted", 200, `{"credits":3,"max_credits_needed":3}`, true, false},
	} {
		s := &shop{}
		s.answer = &struct {
			status int
			body   string
		}{tc.status, tc.body}
		c := serve(s)
		r := c.Post(context.Background(), "/estimates", map[string]any{"capability_id": "cap_a", "config": map[string]any{}})
		msg := drivertest.FailureOf(t, func() { ExpectNotLive(r, "retired", tc.valid) })
		if (msg == "") != tc.passes {
			t.Errorf("%s: failure %q, want passing %v", tc.name, msg, tc.passes)
		}
	}
}

// OverCapConfig sets an integer setting (not count) to its maximum and keeps the config whose hold
// is above 600; a setting whose maximum holds less is passed over.
func TestOverCapConfig(t *testing.T) {
	vid := func(id, setting string, maxv int) map[string]any {
		d := model(id, 1)
		d["config_schema"].(map[string]any)["properties"].(map[string]any)[setting] = map[string]any{
			"type": "integer", "minimum": 1, "maximum": maxv}
		return d
	}
	s := &shop{
		rows:    []map[string]any{row("vid_short", "video", "video"), row("vid_long", "video", "video")},
		details: map[string]map[string]any{"vid_short": vid("vid_short", "duration", 5), "vid_long": vid("vid_long", "seconds", 60)},
		price: func(_ string, cfg map[string]any) int64 {
			n, _ := framework.AsInt(cfg["duration"])
			m, _ := framework.AsInt(cfg["seconds"])
			return 20 * (n + m)
		},
	}
	c := serve(s)
	var id string
	var cfg map[string]any
	var hold int64
	if msg := drivertest.FailureOf(t, func() { id, cfg, hold = OverCapConfig(context.Background(), c) }); msg != "" {
		t.Fatal(msg)
	}
	if n, _ := framework.AsInt(cfg["seconds"]); id != "vid_long" || n != 60 || hold != 1200 {
		t.Errorf("OverCapConfig = %s %v %d, want vid_long with seconds 60 holding 1200", id, cfg, hold)
	}
}

// CheapConfig sets a time-priced model's duration to its minimum and marks its free text, within
// the text's maxLength.
func TestCheapConfig(t *testing.T) {
	d := model("cap_a", 1)
	props := d["config_schema"].(map[string]any)["properties"].(map[string]any)
	props["duration"] = map[string]any{"type": "integer", "minimum": 3, "maximum": 10}
	d["example_config"] = map[string]any{"prompt": "A cat.", "duration": 8}
	c := serve(&shop{details: map[string]map[string]any{"cap_a": d}})
	cfg := CheapConfig(Detail(context.Background(), c, "cap_a"))
	if n, _ := framework.AsInt(cfg["duration"]); n != 3 {
		t.Errorf("duration %v, want the minimum 3", cfg["duration"])
	}
	if p, _ := cfg["prompt"].(string); !strings.HasPrefix(p, "A cat. Take ") {
		t.Errorf("prompt %q is not the example's, marked", p)
	}
	again := CheapConfig(Detail(context.Background(), c, "cap_a"))
	if again["prompt"] == cfg["prompt"] {
		t.Errorf("two cheap configs send the same prompt %q", cfg["prompt"])
	}
}

// PricedExample passes over an example that names an upload and one the target refuses to price,
// and answers the first priced one's detail.
func TestPricedExample(t *testing.T) {
	withUpload := model("cap_upload", 1)
	withUpload["example_config"] = map[string]any{"prompt": "A cat.", "image_ids": []any{"ast_" + strings.Repeat("0", 32)}}
	c := serve(&shop{
		rows: []map[string]any{row("cap_upload", "image", "image"), row("cap_refused", "image", "image"), row("cap_priced", "image", "image")},
		details: map[string]map[string]any{"cap_upload": withUpload, "cap_refused": model("cap_refused", 1),
			"cap_priced": model("cap_priced", 1)},
		price: func(id string, _ map[string]any) int64 {
			if id == "cap_refused" {
				return -1
			}
			return 5
		},
	})
	var got string
	if msg := drivertest.FailureOf(t, func() { got = PricedExample(context.Background(), c).String("capability_id") }); msg != "" {
		t.Fatal(msg)
	}
	if got != "cap_priced" {
		t.Errorf("PricedExample = %s, want cap_priced", got)
	}
}

// NamesUpload finds an upload id of the text's form anywhere in a config, plain or in a file
// object; a string merely starting with "ast_" names none.
func TestNamesUpload(t *testing.T) {
	id := "ast_" + strings.Repeat("0", 32)
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{map[string]any{"image_ids": []any{id}}, true},
		{map[string]any{"references": []any{map[string]any{"assetId": id}}}, true},
		{id, true},
		{map[string]any{"prompt": "ast_ is no id here"}, false},
		{map[string]any{"image_ids": []any{"ast_0123"}}, false},
		{map[string]any{"image_ids": []any{strings.ToUpper(id)}}, false},
		{map[string]any{"n": json.Number("2")}, false},
	} {
		if got := NamesUpload(tc.v); got != tc.want {
			t.Errorf("NamesUpload(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// ReadDetail reads the detail afresh at each call, where Detail answers the key's first read.
func TestReadDetail(t *testing.T) {
	s := &shop{details: map[string]map[string]any{"cap_a": model("cap_a", 1)}}
	c := serve(s)
	var first, fresh, remembered int
	if msg := drivertest.FailureOf(t, func() {
		first = len(Detail(context.Background(), c, "cap_a").Field("config_schema.properties").(map[string]any))
		s.details["cap_a"] = model("cap_a", 1)
		s.details["cap_a"]["config_schema"].(map[string]any)["properties"].(map[string]any)["seed"] = map[string]any{"type": "integer"}
		fresh = len(ReadDetail(context.Background(), c, "cap_a").Field("config_schema.properties").(map[string]any))
		remembered = len(Detail(context.Background(), c, "cap_a").Field("config_schema.properties").(map[string]any))
	}); msg != "" {
		t.Fatal(msg)
	}
	if first != 2 || fresh != 3 || remembered != 2 {
		t.Errorf("properties: first %d, afresh %d, remembered %d; want 2, 3, 2", first, fresh, remembered)
	}
}
