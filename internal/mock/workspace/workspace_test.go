package workspace

import (
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newReg() (*Registry, *clock.Manual) {
	c := clock.NewManual(t0)
	return NewRegistry(c, ids.New(1)), c
}

func code(err error) apierr.Code {
	if err == nil {
		return ""
	}
	return apierr.CodeOf(err)
}

func TestAuthenticate(t *testing.T) {
	r, c := newReg()
	w := r.Create(CreateParams{Balance: 10})
	if !WorkspaceIDPattern().MatchString(w.ID()) {
		t.Fatalf("workspace id %q", w.ID())
	}
	exp := t0.Add(time.Hour)
	k, secret, err := r.CreateKey(w, KeyParams{Scopes: []Scope{ScopeRead, ScopeGenerate, ScopeRead}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if !KeyPattern().MatchString(secret) || len(secret) != len(KeyPrefix)+KeySecretLen || !KeyIDPattern().MatchString(k.KeyID) {
		t.Fatalf("secret %q key id %q", secret, k.KeyID)
	}
	if len(k.Scopes) != 2 {
		t.Fatalf("scopes not deduplicated: %v", k.Scopes)
	}
	gw, gk, plan, err := r.Authenticate(secret)
	if err != nil || gw != w || gk.KeyID != k.KeyID || plan != PlanPro {
		t.Fatalf("authenticate: %v %v %v", err, gk, plan)
	}
	if _, _, _, err := r.Authenticate("sk_live_short"); code(err) != apierr.CodeNotAuthorized {
		t.Fatalf("malformed: %v", err)
	}
	if _, _, _, err := r.Authenticate(secret[:len(secret)-1] + "x"); code(err) != apierr.CodeNotAuthorized {
		t.Fatalf("unknown: %v", err)
	}
	c.Advance(time.Hour)
	if _, _, _, err := r.Authenticate(secret); code(err) != apierr.CodeNotAuthorized {
		t.Fatalf("expired: %v", err)
	}
	if _, err := w.UpdateKey(k.KeyID, KeyUpdate{SetExpiresAt: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := r.Authenticate(secret); err != nil {
		t.Fatalf("expiry cleared: %v", err)
	}
	if err := r.Delete(w.ID()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := r.Authenticate(secret); code(err) != apierr.CodeWorkspaceUnavailable {
		t.Fatalf("deleted: %v", err)
	}
	if err := r.Delete(w.ID()); code(err) != apierr.CodeNotFound {
		t.Fatalf("double delete: %v", err)
	}
	// Revoked beats deleted (401 before 410).
	w.UpdateKey(k.KeyID, KeyUpdate{Revoke: true})
	if _, _, _, err := r.Authenticate(secret); code(err) != apierr.CodeNotAuthorized {
		t.Fatalf("revoked: %v", err)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	r, _ := newReg()
	w := r.Create(CreateParams{})
	for _, p := range []KeyParams{{}, {Scopes: []Scope{"admin"}}, {Scopes: []Scope{ScopeRead}, Buckets: map[ratelimit.Bucket]int{"nope": 1}}} {
		if _, _, err := r.CreateKey(w, p); code(err) != apierr.CodeInvalidConfig {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}

func TestAllowance(t *testing.T) {
	r, _ := newReg()
	w := r.Create(CreateParams{})
	two := int64(2)
	k, _, _ := r.CreateKey(w, KeyParams{Scopes: []Scope{ScopeRead}, RequestAllowance: &two})
	for range 2 {
		if err := w.ConsumeRequest(k.KeyID); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.ConsumeRequest(k.KeyID); code(err) != apierr.CodeQuotaExceeded {
		t.Fatalf("third: %v", err)
	}
	got, _ := w.Key(k.KeyID)
	if got.RequestsUsed != 2 {
		t.Fatalf("used %d", got.RequestsUsed)
	}
	w.UpdateKey(k.KeyID, KeyUpdate{SetAllowance: true})
	if err := w.ConsumeRequest(k.KeyID); err != nil {
		t.Fatalf("unlimited: %v", err)
	}
}

func TestScopes(t *testing.T) {
	read := KeyInfo{Scopes: []Scope{ScopeRead}}
	gen := KeyInfo{Scopes: []Scope{ScopeGenerate}}
	if !read.HasScope(ScopeRead) || read.HasScope(ScopeGenerate) || !gen.HasScope(ScopeRead) || !gen.HasScope(ScopeGenerate) {
		t.Fatal("scope rules")
	}
}

func TestApplyAndCredits(t *testing.T) {
	r, _ := newReg()
	w := r.Create(CreateParams{Balance: 100, Plan: PlanFree})
	pg := int64(50)
	biz := PlanBusiness
	info, err := w.Apply(Update{Plan: &biz, SetPerGeneration: true, Limits: ledger.Limits{PerGeneration: &pg}})
	if err != nil || info.Plan != PlanBusiness || *info.Limits.PerGeneration != 50 || info.Limits.Daily != nil {
		t.Fatalf("apply %+v %v", info, err)
	}
	if _, err := w.AdjustCredits(-101); code(err) != apierr.CodeInvalidConfig {
		t.Fatalf("drain below zero: %v", err)
	}
	if info, _ := w.AdjustCredits(-40); info.AvailableCredits != 60 {
		t.Fatalf("drain %+v", info)
	}
	if info, _ := w.SetCredits(7); info.AvailableCredits != 7 {
		t.Fatalf("set %+v", info)
	}
}

func TestLowHookWired(t *testing.T) {
	r, _ := newReg()
	var got string
	r.OnLow = func(id string, l ledger.Low) { got = id }
	w := r.Create(CreateParams{Balance: 100, LowThreshold: 50})
	w.SetCredits(10)
	if got != w.ID() {
		t.Fatalf("OnLow not wired: %q", got)
	}
}
