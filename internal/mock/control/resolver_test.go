package control

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// noDNS fails every lookup that reaches it: the test never leaves the process.
type noDNS struct{}

func (noDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestResolverOverride: PUT maps a name (any case, trailing dot) to loopback or private
// addresses, refuses public ones and bad bodies naming the field, and DELETE drops it; every
// answer matches control.yaml.
func TestResolverOverride(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hosts := netguard.NewHosts(noDNS{})
	h := New(Deps{Clock: clk, Registry: workspace.NewRegistry(clk, ids.New(3)), Limiter: ratelimit.New(clk, nil), Token: token,
		DefaultWorkspaceID: func() string { return "" }, Reset: func() {}})
	h.RegisterResolver(hosts)
	call := func(method, path, body string, want int) map[string]any {
		t.Helper()
		req := httptest.NewRequest(method, BasePath+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		CheckAgainstDocument(t, method, path, body, req.Header, rec)
		if rec.Code != want {
			t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, rec.Code, rec.Body, want)
		}
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return m
	}
	lookup := func(host string) string {
		t.Helper()
		addrs, err := hosts.LookupIPAddr(context.Background(), host)
		if err != nil {
			return "error"
		}
		var out []string
		for _, a := range addrs {
			out = append(out, a.IP.String())
		}
		return strings.Join(out, ",")
	}

	got := call("PUT", "/resolver/Hooks.Conformance.TEST.", `{"addresses":["127.0.0.1"]}`, http.StatusOK)
	if got["host"] != "hooks.conformance.test" {
		t.Fatalf("answer %v", got)
	}
	if l := lookup("hooks.conformance.test"); l != "127.0.0.1" {
		t.Fatalf("lookup after PUT: %s", l)
	}
	call("PUT", "/resolver/hooks.conformance.test", `{"addresses":["10.0.0.1","fd00::1"]}`, http.StatusOK)
	if l := lookup("HOOKS.conformance.test"); l != "10.0.0.1,fd00::1" {
		t.Fatalf("lookup after re-pointing: %s", l)
	}
	for _, c := range []struct{ path, body, field string }{
		{"/resolver/hooks.conformance.test", `{"addresses":["93.184.216.34"]}`, "addresses"},
		{"/resolver/hooks.conformance.test", `{"addresses":["127.0.0.1","8.8.8.8"]}`, "addresses"},
		{"/resolver/hooks.conformance.test", `{"addresses":["localhost"]}`, "addresses"},
		{"/resolver/hooks.conformance.test", `{}`, "addresses"},
		{"/resolver/hooks.conformance.test", `{"addresses":["127.0.0.1"],"ttl":5}`, "ttl"},
		{"/resolver/127.0.0.1", `{"addresses":["127.0.0.1"]}`, "host"},
		{"/resolver/bad_name.test", `{"addresses":["127.0.0.1"]}`, "host"},
	} {
		e, _ := call("PUT", c.path, c.body, http.StatusBadRequest)["error"].(map[string]any)
		if e["code"] != "invalid_config" || e["field"] != c.field {
			t.Errorf("PUT %s %s: error %v, want invalid_config naming %s", c.path, c.body, e, c.field)
		}
	}
	if l := lookup("hooks.conformance.test"); l != "10.0.0.1,fd00::1" {
		t.Fatalf("a refused PUT changed the override: %s", l)
	}
	call("PUT", "/resolver/hooks.conformance.test", `{"addresses":[]}`, http.StatusOK)
	if l := lookup("hooks.conformance.test"); l != "error" {
		t.Fatalf("lookup of a name overridden without addresses: %s", l)
	}
	if got := call("DELETE", "/resolver/hooks.conformance.test", "", http.StatusOK); got["deleted"] != true {
		t.Fatalf("delete %v", got)
	}
	if l := lookup("hooks.conformance.test"); l != "error" {
		t.Fatalf("lookup after DELETE: %s", l)
	}
	call("DELETE", "/resolver/hooks.conformance.test", "", http.StatusNotFound)
	call("PUT", "/resolver/a.test", `{"addresses":["::1"]}`, http.StatusOK)
	hosts.Reset()
	if l := lookup("a.test"); l != "error" {
		t.Fatalf("lookup after Reset: %s", l)
	}
}
