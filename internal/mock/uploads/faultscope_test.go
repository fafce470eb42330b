package uploads

import (
	"net/netip"
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
)

// TestProviderFaultWorkspaceScope: a provider_unavailable fault scoped to
// another workspace is not taken by this workspace's import; one scoped to
// this workspace is.
func TestProviderFaultWorkspaceScope(t *testing.T) {
	r := &fakeResolver{script: [][]netip.Addr{{netip.MustParseAddr("10.0.0.1")}, {netip.MustParseAddr("10.0.0.1")}}}
	e := newEnv(t, func(d *Deps) { d.Resolver = r })
	if _, err := e.s.d.Faults.Add(faults.Spec{Kind: faults.ProviderUnavailable, WorkspaceID: "ws_other"}); err != nil {
		t.Fatal(err)
	}
	// ws_1's import reaches the resolver (and is refused for the private address), not the fault.
	if _, err := fromURL(t, e, "https://files.example.org/a.png"); code(t, err) != apierr.CodeInvalidConfig || r.calls != 1 {
		t.Fatalf("another workspace's fault was taken: %v (%d lookups)", err, r.calls)
	}
	if len(e.s.d.Faults.List()) != 1 {
		t.Fatal("the other workspace's fault was consumed")
	}
	if _, err := e.s.d.Faults.Add(faults.Spec{Kind: faults.ProviderUnavailable, WorkspaceID: "ws_1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fromURL(t, e, "https://files.example.org/a.png"); code(t, err) != apierr.CodeProviderUnavailable || r.calls != 1 {
		t.Fatalf("this workspace's fault: %v (%d lookups)", err, r.calls)
	}
}
