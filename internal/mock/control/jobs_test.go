package control_test

import (
	"encoding/json"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock"
)

const ctl = "ctl_jobs_test"

func call(t *testing.T, s http.Handler, method, path, auth, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+auth)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %q", method, path, rec.Body.String())
	}
	return rec.Code, m
}

// TestJobOperations drives cancel, fail, recover and the render limit.
func TestJobOperations(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	s, err := mock.New(mock.Config{Seed: 5, Clock: clk, ControlToken: ctl, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ws, _ := wired.Of(s).Registry.Get(s.DefaultWorkspaceID())
	var events []string
	wired.Of(s).Jobs.OnEvent(func(_, typ string, data any) {
		m := data.(map[string]any)
		events = append(events, typ+":"+m["generation_id"].(string))
	})
	key := s.Info().GenerateKey
	submit := func(prompt string) string {
		k := s.Info().GenerateKey
		if prompt != "a" {
			_, k2, _ := wired.Of(s).Registry.CreateKey(ws, workspace.KeyParams{Scopes: []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}})
			k = k2
		}
		code, m := call(t, s, "POST", "/api/v1/generations", k, `{"capability_id":"image_fast","config":{"prompt":"`+prompt+`"},"max_credits":10}`)
		if code != 201 {
			t.Fatalf("submit %d %v", code, m)
		}
		return m["generation_id"].(string)
	}
	before := ws.Snapshot()
	id := submit("a")
	code, m := call(t, s, "POST", "/_control/v1/generations/"+id+"/cancel", ctl, "")
	if code != 200 || m["status"] != "failed" || m["changed"] != true || m["generation_id"] != id {
		t.Fatalf("cancel %d %v", code, m)
	}
	_, g := call(t, s, "GET", "/api/v1/generations/"+id, key, "")
	gen := g["generation"].(map[string]any)
	if gen["status"] != "failed" || gen["error"].(map[string]any)["code"] != jobs.ErrorCodeCanceled {
		t.Fatalf("canceled %v", gen)
	}
	if after := ws.Snapshot(); after.AvailableCredits != before.AvailableCredits || after.HeldCredits != before.HeldCredits {
		t.Fatalf("cancel did not release: %+v", after)
	}
	if code, m = call(t, s, "POST", "/_control/v1/generations/"+id+"/cancel", ctl, ""); code != 200 || m["changed"] != false {
		t.Fatalf("second cancel %v", m)
	}
	// The canceled job freed the slot: the same key submits again.
	id2 := submit("a b")
	if code, m = call(t, s, "POST", "/_control/v1/generations/"+id2+"/fail", ctl, `{"code":"timeout","message":"Too slow."}`); code != 200 || m["changed"] != true {
		t.Fatalf("fail %d %v", code, m)
	}
	_, g = call(t, s, "GET", "/api/v1/generations/"+id2, key, "")
	if e := g["generation"].(map[string]any)["error"].(map[string]any); e["code"] != "timeout" || e["message"] != "Too slow." {
		t.Fatalf("fail error %v", e)
	}
	if code, _ = call(t, s, "POST", "/_control/v1/generations/"+id2+"/fail", ctl, `{"code":"bogus"}`); code != 400 {
		t.Fatalf("bad code %d", code)
	}
	if code, m = call(t, s, "POST", "/_control/v1/generations/"+id2+"/recover", ctl, ""); code != 200 || m["status"] != "completed" || m["changed"] != true {
		t.Fatalf("recover %d %v", code, m)
	}
	if code, _ = call(t, s, "POST", "/_control/v1/generations/gen_00000000000000000000000000000000/recover", ctl, ""); code != 404 {
		t.Fatalf("unknown %d", code)
	}
	want := []string{"generation.failed:" + id, "generation.failed:" + id2, "generation.completed:" + id2}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", events, want)
	}
	// Render limit: 1 running at most.
	if code, m = call(t, s, "PUT", "/_control/v1/workspaces/"+ws.ID()+"/render-limit", ctl, `{"max_concurrent_renders":1}`); code != 200 || m["max_concurrent_renders"] != float64(1) {
		t.Fatalf("render limit %d %v", code, m)
	}
	submit("c")
	_, k3, _ := wired.Of(s).Registry.CreateKey(ws, workspace.KeyParams{Scopes: []workspace.Scope{workspace.ScopeGenerate}})
	code, m = call(t, s, "POST", "/api/v1/generations", k3, `{"capability_id":"image_fast","config":{"prompt":"d"},"max_credits":10}`)
	if e, _ := m["error"].(map[string]any); code != 429 || e["code"] != "rate_limited" || e["retry_after_seconds"] != nil {
		t.Fatalf("render concurrency %d %v", code, m)
	}
	if code, m = call(t, s, "PUT", "/_control/v1/workspaces/"+ws.ID()+"/render-limit", ctl, `{"max_concurrent_renders":null}`); code != 200 || m["max_concurrent_renders"] != float64(jobs.DefaultMaxConcurrentRenders) {
		t.Fatalf("render limit reset %d %v", code, m)
	}
}
