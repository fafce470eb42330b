package mock

import (
	"strings"
	"testing"
)

// Every operation that reads a JSON body refuses the same things the same way: 400
// invalid_config for a non-JSON media type, a key given twice, invalid UTF-8, an integer written
// with a fraction or exponent, and a body over the limit (never truncated).
func TestStrictBodiesOnEveryOperation(t *testing.T) {
	e := newEnv(t)
	key := e.s.Info().GenerateKey
	ws := e.s.DefaultWorkspaceID()
	type op struct {
		path string
		auth string
		body string // a valid-looking body with the operation's keys
	}
	ops := []op{
		{"/api/v1/estimates", bearer(key), `{"capability_id":"tts","config":{"script":"a"}}`},
		{"/api/v1/generations", bearer(key), `{"capability_id":"tts","config":{"script":"a"},"max_credits":5}`},
		{"/api/v1/uploads", bearer(key), `{"filename":"a.png","content_type":"image/png","size_bytes":100}`},
		{"/api/v1/uploads/from-url", bearer(key), `{"url":"https://example.invalid/a.png"}`},
		{"/api/v1/webhooks", bearer(key), `{"url":"https://example.invalid/hook","events":["generation.completed"]}`},
		{"/api/v1/workflows/templates/x/invoke", bearer(key), `{"inputs":{},"max_credits":5}`},
		{"/_control/v1/workspaces", ctl(), `{"plan":"pro","balance":5}`},
		{"/_control/v1/workspaces/" + ws + "/credits", ctl(), `{"amount":5}`},
		{"/_control/v1/clock/advance", ctl(), `{"seconds":1}`},
		{"/_control/v1/faults", ctl(), `{"code":"internal_error"}`},
		{"/_control/v1/generations/gen_x/fail", ctl(), `{"code":"internal_error","message":"m"}`},
	}
	refuse := func(o op, what, ct, body, mention string) {
		t.Helper()
		r := e.call("POST", o.path, body, o.auth, "Content-Type: "+ct)
		msg, _ := r.errField("message").(string)
		if r.code != 400 || r.errField("code") != "invalid_config" || !strings.Contains(msg, mention) {
			t.Errorf("POST %s with %s: %d %.200s, want 400 invalid_config mentioning %q", o.path, what, r.code, r.raw, mention)
		}
	}
	for _, o := range ops {
		refuse(o, "text/plain", "text/plain", o.body, "Content-Type")
		refuse(o, "a form", "application/x-www-form-urlencoded", o.body, "Content-Type")
		refuse(o, "multipart", "multipart/form-data; boundary=x", o.body, "Content-Type")
		refuse(o, "UTF-16", "application/json; charset=utf-16", o.body, "Content-Type")
		refuse(o, "a duplicate key", "application/json", strings.Replace(o.body, "{", `{"dup":1,"dup":2,`, 1), "twice")
		refuse(o, "invalid UTF-8", "application/json", strings.Replace(o.body, "{", "{\"x\":\"\xff\xfe\",", 1), "UTF-8")
		refuse(o, "a body over the limit", "application/json", `{"x":"`+strings.Repeat("a", 2<<20)+`"}`, "larger")
	}
	dupConfig := e.call("POST", "/api/v1/estimates", `{"capability_id":"tts","config":{"script":"a","script":"b"}}`, bearer(key),
		"Content-Type: application/json")
	if dupConfig.code != 400 || dupConfig.errField("field") != "config.script" {
		t.Errorf("duplicate nested key: %d %s, want 400 naming config.script", dupConfig.code, dupConfig.raw)
	}
	for _, c := range []struct{ path, body, field string }{
		{"/api/v1/generations", `{"capability_id":"tts","config":{"script":"a"},"max_credits":2.0}`, "max_credits"},
		{"/api/v1/generations", `{"capability_id":"tts","config":{"script":"a"},"max_credits":1e3}`, "max_credits"},
		{"/api/v1/workflows/templates/x/invoke", `{"inputs":{},"max_credits":5.0}`, "max_credits"},
		{"/api/v1/uploads", `{"filename":"a.png","content_type":"image/png","size_bytes":100.0}`, "size_bytes"},
		{"/api/v1/uploads", `{"filename":"a.png","content_type":"image/png","size_bytes":1e2}`, "size_bytes"},
	} {
		r := e.call("POST", c.path, c.body, bearer(key), "Content-Type: application/json")
		if r.code != 400 || r.errField("code") != "invalid_config" || r.errField("field") != c.field {
			t.Errorf("POST %s %s: %d %s, want 400 naming %s", c.path, c.body, r.code, r.raw, c.field)
		}
	}
	// A JSON body with charset=utf-8 or no Content-Type at all is read.
	for _, ct := range []string{"application/json; charset=UTF-8", ""} {
		h := []string{bearer(key)}
		if ct != "" {
			h = append(h, "Content-Type: "+ct)
		}
		if r := e.call("POST", "/api/v1/estimates", `{"capability_id":"tts","config":{"script":"a"}}`, h...); r.code != 200 {
			t.Errorf("estimate with Content-Type %q: %d %s", ct, r.code, r.raw)
		}
	}
}
