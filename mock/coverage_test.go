package mock

import (
	"strings"
	"testing"
)

// A queued not_ready fault fails the readiness probe's "faults" check for its next count probes,
// with the probe shape (not the error envelope); the liveness probe is untouched.
func TestNotReadyFault(t *testing.T) {
	e := newEnv(t)
	e.control("POST", "/faults", `{"kind":"not_ready","count":2}`, 201)
	for i := 0; i < 2; i++ {
		r := e.call("GET", "/api/v1/health/ready", "")
		checks, _ := r.body["checks"].(map[string]any)
		if r.code != 503 || r.body["ok"] != false || r.body["status"] != "not_ready" || checks["faults"] != "failing" || checks["state"] != "ok" {
			t.Fatalf("probe %d: %d %s", i, r.code, r.raw)
		}
		if _, isErr := r.body["error"]; isErr {
			t.Fatalf("probe %d answered the error envelope: %s", i, r.raw)
		}
		if r := e.call("GET", "/api/v1/health/live", ""); r.code != 200 {
			t.Fatalf("live while not ready: %d", r.code)
		}
	}
	r := e.call("GET", "/api/v1/health/ready", "")
	if r.code != 200 || r.body["checks"].(map[string]any)["faults"] != "ok" {
		t.Fatalf("after the fault: %d %s", r.code, r.raw)
	}
}

// Template previews name the mock's own origin and are served there without a key.
func TestTemplatePreviewsServed(t *testing.T) {
	e := newEnv(t)
	e.s.SetPublicURL("http://mock.test")
	key := e.s.Info().ReadKey
	r := e.call("GET", "/api/v1/presets/preset_ugc_screenshot/templates", "", bearer(key))
	if r.code != 200 {
		t.Fatalf("templates %d %s", r.code, r.raw)
	}
	tpls := r.body["templates"].([]any)
	if len(tpls) == 0 {
		t.Fatal("no templates")
	}
	link := tpls[0].(map[string]any)["preview_url"].(string)
	path, ok := strings.CutPrefix(link, "http://mock.test/previews/")
	if !ok {
		t.Fatalf("preview_url %s is not on the mock's origin", link)
	}
	got := e.call("GET", "/previews/"+path, "")
	if got.code != 200 || got.hdr.Get("Content-Type") != "image/jpeg" || len(got.raw) == 0 {
		t.Fatalf("preview %d %q", got.code, got.hdr.Get("Content-Type"))
	}
	again := e.call("GET", "/api/v1/presets/preset_ugc_screenshot/templates", "", bearer(key))
	if again.body["templates"].([]any)[0].(map[string]any)["preview_url"] != link {
		t.Fatal("preview_url changed between reads")
	}
	if nf := e.call("GET", "/previews/preset_ugc_screenshot/nope.jpg", ""); nf.code != 404 {
		t.Fatalf("unknown preview: %d", nf.code)
	}
}
