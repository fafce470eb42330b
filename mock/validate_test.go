package mock

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAnswersMatchRESTDescription runs the served routes and the auth
// refusals through the response validator built from the embedded
// spec/openapi.yaml: a violation fails the test.
func TestAnswersMatchRESTDescription(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, func(c *Config) {
		c.OpenAPIJSON = nil // the embedded REST description
		c.ValidateResponses = true
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	info := e.s.Info()
	free := e.newWorkspace(`{"plan":"free"}`)
	freeKey := e.newKey(free, `{"scopes":["read"]}`)
	gone := e.newWorkspace(`{}`)
	goneKey := e.newKey(gone, `{"scopes":["read"]}`)
	e.control("DELETE", "/workspaces/"+gone, "", 200)
	quota := e.newKey(info.DefaultWorkspaceID, `{"scopes":["read"],"request_allowance":0}`)
	limited := e.newKey(info.DefaultWorkspaceID, `{"scopes":["read"],"buckets":{"agent_read":0}}`)
	budget := e.newKey(info.DefaultWorkspaceID, `{"scopes":["read"],"budget_credits":10}`)

	for _, c := range []struct {
		path    string
		headers []string
		status  int
	}{
		{"/api/v1/health/live", nil, 200},
		{"/api/v1/health/ready", nil, 200},
		{"/api/v1/openapi.json", []string{bearer(info.ReadKey)}, 200},
		{"/api/v1/credits/balance", []string{bearer(info.ReadKey)}, 200},
		{"/api/v1/credits/balance", []string{"X-API-Key: " + budget}, 200},
		{"/api/v1/credits/balance", nil, 401},
		{"/api/v1/credits/balance", []string{bearer(freeKey)}, 403},
		{"/api/v1/credits/balance", []string{bearer(goneKey)}, 410},
		{"/api/v1/credits/balance", []string{bearer(quota)}, 429},
		{"/api/v1/credits/balance", []string{bearer(limited)}, 429},
	} {
		r := e.call("GET", c.path, "", c.headers...)
		if r.code != c.status {
			t.Fatalf("GET %s: %d %s, want %d", c.path, r.code, r.raw, c.status)
		}
	}
	if strings.Contains(logs.String(), "does not match") {
		t.Fatalf("answers violate the REST description:\n%s", logs.String())
	}
}

func TestValidatorReportsViolations(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"/api/v1"}],
	"paths":{"/health/live":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"schema":{
	"type":"object","required":["ok","status"],"properties":{"ok":{"type":"boolean"},"status":{"type":"string","enum":["alive"]}}}}}}}}}}}`)
	var logs syncBuffer
	e := newEnv(t, func(c *Config) {
		c.OpenAPIJSON = doc
		c.ValidateResponses = true
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if r := e.call("GET", "/api/v1/health/live", ""); r.code != 200 || r.body["status"] != "live" {
		t.Fatalf("validator changed the answer: %d %s", r.code, r.raw)
	}
	if !strings.Contains(logs.String(), "does not match") {
		t.Fatalf("violation not reported; logs:\n%s", logs.String())
	}
	if _, err := New(Config{ValidateResponses: true, OpenAPIJSON: []byte(`{`), Logger: slog.New(slog.DiscardHandler)}); err == nil {
		t.Fatal("an unreadable description was accepted")
	}
}
