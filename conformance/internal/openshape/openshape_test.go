package openshape

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPageOf(t *testing.T) {
	cases := []struct {
		name, doc, named, declared string
		wantKey                    string
		wantRows                   int
		wantErr                    string
	}{
		{"the reference's key", `{"ok":true,"capabilities":[{"capability_id":"a"}],"next_cursor":null}`, "", "", "capabilities", 1, ""},
		{"another key", `{"ok":true,"results":[{"capability_id":"a"},{"capability_id":"b"}],` +
			`"next_cursor":"b","legal_extra":"x"}`, "", "", "results", 2, ""},
		{"nested beside next_cursor", `{"ok":true,"page":{"items":[{}],"next_cursor":null}}`, "", "", "items", 1, ""},
		{"an empty page", `{"ok":true,"items":[],"next_cursor":null}`, "", "", "items", 0, ""},
		{"objects win over a scalar array", `{"rows":[{}],"warnings":["w"],"next_cursor":null}`, "", "", "rows", 1, ""},
		{"named by the text", `{"ok":true,"actors":[{}],"tags":[{}],"next_cursor":null}`, "actors", "", "actors", 1, ""},
		{"declared by the target", `{"a":[{}],"b":[{}],"next_cursor":null}`, "", "b", "b", 1, ""},
		{"ambiguous", `{"a":[{}],"b":[{}],"next_cursor":null}`, "", "", "", 0, "several arrays"},
		{"none", `{"ok":true,"next_cursor":null}`, "", "", "", 0, "no array"},
		{"named but missing", `{"ok":true,"items":[],"next_cursor":null}`, "actors", "", "", 0, `no "actors"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := PageOf(decode(t, c.doc), c.named, c.declared)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Key != c.wantKey || len(p.Rows) != c.wantRows {
				t.Fatalf("key %q rows %d, want %q %d", p.Key, len(p.Rows), c.wantKey, c.wantRows)
			}
			if _, has := p.Holder[Cursor]; !has && c.named == "" {
				t.Fatalf("the holder %v has no next_cursor", p.Holder)
			}
		})
	}
	if _, err := PageOf(decode(t, `{"ok":true,"next_cursor":null}`), "", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no array: %v, want ErrNotFound", err)
	}
}

func TestDetailOf(t *testing.T) {
	schema := `{"type":"object","additionalProperties":false,"properties":{"prompt":{"type":"string"}},"required":["prompt"]}`
	flat := `{"ok":true,"capability_id":"img","status":"available","config_schema":` + schema + `,"example_config":{"prompt":"a"}}`
	nested := `{"ok":true,"legal_extra":1,"result":{"capability":{"capability_id":"img","status":"available",` +
		`"config_schema":` + schema + `,"example_config":{"prompt":"a"}}}}`
	split := `{"ok":true,"capability":{"capability_id":"img","status":"available"},"config":{"schema":` + schema + `}}`
	var views []map[string]any
	for _, doc := range []string{flat, nested} {
		d, err := DetailOf(decode(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, d.View(decode(t, doc)))
	}
	if !reflect.DeepEqual(views[0], views[1]) {
		t.Fatalf("the nested answer reads %v, the flat one %v", views[1], views[0])
	}
	if views[0]["capability_id"] != "img" || views[0]["ok"] != true || views[0]["example_config"] == nil {
		t.Fatalf("view %v", views[0])
	}
	d, err := DetailOf(decode(t, split))
	if err != nil {
		t.Fatal(err)
	}
	if d.Schema["type"] != "object" || d.Example != nil || d.Fields["status"] != "available" {
		t.Fatalf("a schema under another name: %+v", d)
	}
	if _, err := DetailOf(decode(t, `{"capability_id":"x","status":"available"}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no schema: %v", err)
	}
}

func TestIDsAndLinks(t *testing.T) {
	gen := "gen_" + strings.Repeat("a1", 16)
	ast := "ast_" + strings.Repeat("0f", 16)
	doc := decode(t, `{"row":{"id":"`+gen+`","outputs":["`+ast+`",{"x":"`+ast+`"}],"bad":"gen_ABC",`+
		`"link":"https://cdn.example/f.png","url":"http://127.0.0.1:1/d"}}`)
	if got := IDs(doc, "gen_"); !reflect.DeepEqual(got, []string{gen}) {
		t.Fatalf("gen ids %v", got)
	}
	if got := IDs(doc, "ast_"); !reflect.DeepEqual(got, []string{ast}) {
		t.Fatalf("asset ids once each: %v", got)
	}
	if got := Links(doc); !reflect.DeepEqual(got, []string{"http://127.0.0.1:1/d", "https://cdn.example/f.png"}) {
		t.Fatalf("links %v (url first)", got)
	}
}

func TestPointerAndShapes(t *testing.T) {
	doc := decode(t, `{"balance":{"avail":120,"held":3.5,"a/b":7},"list":[1,2]}`)
	if n, err := IntAt(doc, "/balance/avail"); err != nil || n != 120 {
		t.Fatalf("avail %d %v", n, err)
	}
	if _, err := IntAt(doc, "/balance/held"); err == nil {
		t.Fatal("3.5 read as a whole number")
	}
	if n, err := IntAt(doc, "/balance/a~1b"); err != nil || n != 7 {
		t.Fatalf("escaped token: %d %v", n, err)
	}
	if _, err := Pointer(doc, "/balance/none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := Pointer(doc, "balance"); err == nil {
		t.Fatal("a pointer without / accepted")
	}
	s := Shapes{"balance.held": "/h"}
	if v, ok := s.Get("balance.available", false); ok || v != "" {
		t.Fatal("an undeclared shape has a value without --reference")
	}
	if v, ok := s.Get("balance.available", true); !ok || v != "/available_credits" {
		t.Fatalf("reference default %q", v)
	}
	if v, _ := s.Get("balance.held", true); v != "/h" {
		t.Fatalf("a declared shape loses to the reference: %q", v)
	}
	if err := CheckKey("page:/assets"); err != nil {
		t.Fatal(err)
	}
	if err := CheckKey("balance.avail"); err == nil || !strings.Contains(err.Error(), "balance.available") {
		t.Fatalf("unknown key: %v", err)
	}
	if !strings.Contains(Undeclared("balance.held"), "--shape balance.held=VALUE") {
		t.Fatal(Undeclared("balance.held"))
	}
}

func TestRunStatusAndID(t *testing.T) {
	run := "wfr_" + strings.Repeat("ab", 16)
	for _, tc := range []struct {
		doc, want string
		ok        bool
	}{
		{`{"ok":true,"run":{"workflow_run_id":"` + run + `","status":"running","nodes":[{"status":"completed"}]}}`, "running", true},
		{`{"ok":true,"run_record":{"workflow_run_id":"` + run + `","status_x":"partial","nodes_x":[{"status_x":"failed"}]}}`, "partial", true},
		{`{"workflow_run_id":"` + run + `","a":"queued","b":"completed"}`, "", false},
		{`{"ok":true}`, "", false},
	} {
		got, ok := RunStatus(decode(t, tc.doc))
		if got != tc.want || ok != tc.ok {
			t.Errorf("RunStatus(%s) = %q, %v; want %q, %v", tc.doc, got, ok, tc.want, tc.ok)
		}
	}
	if id, ok := RunID("/api/v1/workflow-runs/"+run, nil); !ok || id != run {
		t.Errorf("from Location: %q %v", id, ok)
	}
	if id, ok := RunID("", decode(t, `{"ok":true,"result":{"workflow_run_id":"`+run+`"}}`)); !ok || id != run {
		t.Errorf("from the body: %q %v", id, ok)
	}
}

func TestPaths(t *testing.T) {
	doc := decode(t, `{"id":"g","credits":{"charged":3},"outputs":[{"asset_id":"a"},{"asset_id":"b"}]}`)
	var got []string
	Paths(doc, func(path, key string, _ any) bool {
		got = append(got, path+"|"+key)
		return key != "credits" // a value fn declines is visited but not entered
	})
	want := []string{"credits|credits", "id|id", "outputs|outputs", "outputs.0|", "outputs.1|",
		"outputs.0.asset_id|asset_id", "outputs.1.asset_id|asset_id"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Paths visited %q, want %q", got, want)
	}
}
