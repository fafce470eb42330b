package control_test

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/control"
	"github.com/mediaspec/mediaspec/mock"
)

const wfToken = "ctl_workflows_test"

// TestWorkflowOperations saves workflows and cancels runs through the
// control API, checking every answer against control.yaml.
func TestWorkflowOperations(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	s, err := mock.New(mock.Config{Seed: 9, Clock: clk, ControlToken: wfToken, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	wsID := s.DefaultWorkspaceID()
	key := s.Info().GenerateKey
	ctl := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(method, control.BasePath+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+wfToken)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		control.CheckAgainstDocument(t, method, path, body, req.Header, rec)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
	}
	errField := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		f, _ := e["field"].(string)
		return f
	}

	code, m := ctl("POST", "/workspaces/"+wsID+"/workflows", `{"name":"Hero","template_key":"hero_image"}`)
	if code != 201 || m["template_key"] != "hero_image" || m["name"] != "Hero" || m["workspace_id"] != wsID {
		t.Fatalf("save template: %d %v", code, m)
	}
	wf := m["workflow_id"].(string)
	code, m = ctl("POST", "/workspaces/"+wsID+"/workflows", `{"nodes":[{"node_id":"img","capability_id":"image_fast","config":{"prompt":{"from":"inputs.p"},"count":{"value":1}}},
		{"node_id":"big","capability_id":"upscale","depends_on":["img"],"config":{"source_image":{"from":"nodes.img.output_asset_ids"}}}],
		"inputs_schema":{"type":"object","additionalProperties":false,"required":["p"],"properties":{"p":{"type":"string"}}}}`)
	if code != 201 || m["template_key"] != nil {
		t.Fatalf("save nodes: %d %v", code, m)
	}
	for _, c := range []struct{ body, field string }{
		{`{}`, ""},
		{`{"template_key":"hero_image","nodes":[]}`, ""},
		{`{"nodes":[{"node_id":"a","capability_id":"image_fast"}]}`, "inputs_schema"},
		{`{"nodes":[{"node_id":"a","capability_id":"video_legacy"}],"inputs_schema":{"type":"object","additionalProperties":false}}`, "nodes[0].capability_id"},
		{`{"nodes":[{"node_id":"a","capability_id":"image_fast","depends_on":["b"]}],"inputs_schema":{"type":"object","additionalProperties":false}}`, "nodes[0].depends_on"},
		{`{"nodes":[{"node_id":"a","capability_id":"image_fast","config":{"nope":{"value":1}}}],"inputs_schema":{"type":"object","additionalProperties":false}}`, "nodes[0].config.nope"},
		{`{"nodes":[{"node_id":"a","capability_id":"image_fast","config":{"prompt":{"from":"inputs.q"}}}],"inputs_schema":{"type":"object","additionalProperties":false}}`, "nodes[0].config.prompt"},
		{`{"nodes":[{"node_id":"a","capability_id":"image_fast"}],"inputs_schema":{"type":"object"}}`, "inputs_schema"},
		{`{"template_key":"hero_image","extra":1}`, "extra"},
	} {
		code, m := ctl("POST", "/workspaces/"+wsID+"/workflows", c.body)
		if code != 400 || (c.field != "" && errField(m) != c.field) {
			t.Fatalf("%s: %d %v, want 400 field %q", c.body, code, m, c.field)
		}
	}
	if code, _ := ctl("POST", "/workspaces/"+wsID+"/workflows", `{"template_key":"nope"}`); code != 404 {
		t.Fatalf("unknown template: %d", code)
	}
	if code, _ := ctl("POST", "/workspaces/ws_ffffffffffffffffffffffffffffffff/workflows", `{"template_key":"hero_image"}`); code != 404 {
		t.Fatalf("unknown workspace: %d", code)
	}

	// Invoke the saved workflow, then cancel its run while the first step renders.
	invoke := func(path, body string) string {
		req := httptest.NewRequest("POST", "/api/v1"+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var a map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &a)
		if rec.Code != 201 {
			t.Fatalf("invoke %s: %d %s", path, rec.Code, rec.Body.String())
		}
		return a["workflow_run_id"].(string)
	}
	run := invoke("/workflows/"+wf+"/invoke", `{"inputs":{"prompt":"a mug"},"max_credits":100}`)
	clk.Advance(2 * time.Second)
	code, m = ctl("POST", "/workflow-runs/"+run+"/cancel", "")
	if code != 200 || m["status"] != "canceled" || m["changed"] != true || m["workflow_run_id"] != run {
		t.Fatalf("cancel: %d %v", code, m)
	}
	if _, m = ctl("POST", "/workflow-runs/"+run+"/cancel", ""); m["changed"] != false || m["status"] != "canceled" {
		t.Fatalf("second cancel: %v", m)
	}
	if code, _ := ctl("POST", "/workflow-runs/wfr_ffffffffffffffffffffffffffffffff/cancel", ""); code != 404 {
		t.Fatalf("unknown run: %d", code)
	}
	if code, _ := call(t, s, "POST", control.BasePath+"/workflow-runs/"+run+"/cancel", "wrong", ""); code != 401 {
		t.Fatalf("wrong wfToken: %d", code)
	}
}
