package control_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/mock"
)

// A job started in the app holds no key's slot and passes spend limits that refuse the same
// submit through the API; a bad body names its field.
func TestAppGeneration(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	s, err := mock.New(mock.Config{Seed: 5, Clock: clk, ControlToken: ctl, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ws := s.DefaultWorkspaceID()
	key := s.Info().GenerateKey
	path := "/_control/v1/workspaces/" + ws + "/generations"

	code, m := call(t, s, "POST", path, ctl, `{"capability_id":"image_fast","config":{"prompt":"a mug"}}`)
	if code != 201 || m["source"] != "ui" {
		t.Fatalf("app job: %d %v", code, m)
	}
	app := m["generation_id"].(string)
	if code, m := call(t, s, "GET", "/api/v1/generations/"+app, key, ""); code != 200 || m["generation"].(map[string]any)["source"] != "ui" {
		t.Fatalf("the app job reads through the API with source ui: %d %v", code, m)
	}
	if code, m := call(t, s, "POST", "/api/v1/generations", key, `{"capability_id":"image_fast","config":{"prompt":"b"},"max_credits":10}`); code != 201 {
		t.Fatalf("a key's submit beside a running app job: %d %v", code, m)
	}

	if code, m := call(t, s, "PATCH", "/_control/v1/workspaces/"+ws, ctl, `{"limits":{"per_generation_credits":1}}`); code != 200 {
		t.Fatalf("limits: %d %v", code, m)
	}
	clk.Advance(time.Hour) // the key's job ends, its slot is free
	if code, m := call(t, s, "POST", "/api/v1/generations", key, `{"capability_id":"image_fast","config":{"prompt":"c"},"max_credits":10}`); code != 402 || m["error"].(map[string]any)["code"] != "spend_limit_exceeded" {
		t.Fatalf("the API submit under the limit: %d %v", code, m)
	}
	if code, m := call(t, s, "POST", path, ctl, `{"capability_id":"image_fast","config":{"prompt":"c"}}`); code != 201 {
		t.Fatalf("an app job under a per-generation limit it exceeds: %d %v", code, m)
	}

	for body, field := range map[string]string{
		`{"config":{"prompt":"a"}}`:                        "capability_id",
		`{"capability_id":"image_fast"}`:                   "config",
		`{"capability_id":"image_fast","config":{},"x":1}`: "x",
	} {
		code, m := call(t, s, "POST", path, ctl, body)
		e, _ := m["error"].(map[string]any)
		if code != 400 || e["field"] != field {
			t.Errorf("%s: %d %v, want 400 naming %s", body, code, m, field)
		}
	}
	if code, _ := call(t, s, "POST", "/_control/v1/workspaces/ws_00000000000000000000000000000000/generations", ctl, `{"capability_id":"image_fast","config":{"prompt":"a"}}`); code != 404 {
		t.Errorf("unknown workspace: %d", code)
	}
}
