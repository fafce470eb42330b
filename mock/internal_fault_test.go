package mock

import (
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/faults"
)

// A queued internal_error fault answers the next keyed call of its workspace with 500 after the key
// checks, once; a bad key still gets its 401 and does not use the fault up.
func TestInternalErrorFault(t *testing.T) {
	e := newEnv(t)
	info := e.s.Info()
	if _, err := e.s.svc.Faults.Add(faults.Spec{Kind: faults.InternalError, WorkspaceID: info.DefaultWorkspaceID}); err != nil {
		t.Fatal(err)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer("sk_live_"+"0123456789abcdefghijklmnopqrstuvwxyzABCD")); r.code != 401 {
		t.Fatalf("unknown key: %d, want 401", r.code)
	}
	r := e.call("GET", "/api/v1/credits/balance", "", bearer(info.GenerateKey))
	if r.code != 500 || r.errField("code") != "internal_error" || r.errField("retryable") != true {
		t.Fatalf("faulted call: %d %s", r.code, r.raw)
	}
	if r := e.call("GET", "/api/v1/credits/balance", "", bearer(info.GenerateKey)); r.code != 200 {
		t.Fatalf("the fault was not used up: %d %s", r.code, r.raw)
	}
}
