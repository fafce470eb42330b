// Package control serves the mock's test-control API under /_control/v1
// (described in spec/control.yaml). Every call needs `Authorization: Bearer
// <control token>` (compared in constant time); errors use the same envelope
// as /api/v1.
//
// New serves the workspaces, credits and keys, the clock, GET /state and
// reset, and the fault queue (GET, POST, DELETE /faults) when Deps.Faults is
// set. The wiring (package mock) adds the operations of the other concerns,
// each with its Register method: RegisterCatalog (capability prices,
// offering and aliases; templates, voices and actors; capability copies),
// RegisterJobs (app generations, cancel, fail, recover, render limit),
// RegisterWorkflows (saved workflows, run cancel), RegisterWebhooks (test,
// rotate, enable, disable, deliveries), RegisterResolver (the host names the
// mock resolves) and RegisterAudit (the client audit). Register before
// serving; Handler.Handle adds one operation.
package control

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// BasePath is the control API root.
const BasePath = "/_control/v1"

// maxAdvance bounds one clock jump (ten years) so durations cannot overflow.
const maxAdvance = 10 * 365 * 24 * time.Hour

// Deps are what the control API acts on.
type Deps struct {
	Clock    clock.Clock
	Registry *workspace.Registry
	Limiter  *ratelimit.Limiter
	// Token is the control token; it must not be empty.
	Token string
	// DefaultWorkspaceID reports the current default workspace.
	DefaultWorkspaceID func() string
	// Reset restores the start state (default workspace and printed keys).
	Reset func()
	// Faults, when set, is served as GET, POST and DELETE /faults.
	Faults *faults.Store
	Logger *slog.Logger
}

// Handler serves BasePath. Register extra operations before serving.
type Handler struct {
	deps     Deps
	mux      *http.ServeMux
	patterns []string
}

// New returns the control API with the operations of this package.
func New(d Deps) *Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{deps: d, mux: http.NewServeMux()}
	h.mux.Handle(BasePath+"/", h.wrap(func(_ http.ResponseWriter, r *http.Request) error {
		return apierr.NotFound("No control operation " + r.Method + " " + r.URL.Path + ".")
	}))
	h.Handle("GET /state", h.state)
	h.Handle("POST /workspaces", h.createWorkspace)
	h.Handle("GET /workspaces/{id}", h.getWorkspace)
	h.Handle("PATCH /workspaces/{id}", h.patchWorkspace)
	h.Handle("DELETE /workspaces/{id}", h.deleteWorkspace)
	h.Handle("POST /workspaces/{id}/credits", h.credits)
	h.Handle("POST /workspaces/{id}/keys", h.createKey)
	h.Handle("GET /keys/{key_id}", h.getKey)
	h.Handle("PATCH /keys/{key_id}", h.patchKey)
	h.Handle("DELETE /keys/{key_id}", h.revokeKey)
	h.Handle("GET /clock", h.getClock)
	h.Handle("POST /clock/advance", h.advance)
	h.Handle("POST /reset", h.reset)
	if d.Faults != nil {
		h.registerFaults(d.Faults)
	}
	return h
}

// Handle registers a control operation; pattern is "METHOD /path" relative
// to BasePath. The token check runs before fn.
func (h *Handler) Handle(pattern string, fn wire.HandlerFunc) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("control: pattern must be \"METHOD /path\": " + pattern)
	}
	h.mux.Handle(method+" "+BasePath+path, h.wrap(fn))
	h.patterns = append(h.patterns, pattern)
}

// Patterns lists the registered operations as "METHOD /path" relative to
// BasePath, in registration order.
func (h *Handler) Patterns() []string { return append([]string(nil), h.patterns...) }

func (h *Handler) wrap(fn wire.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(wire.WithLogger(r.Context(), h.deps.Logger))
		err := h.checkToken(r)
		if err == nil {
			err = fn(w, r)
		}
		if err != nil {
			wire.Write(w, r, err)
		}
	})
}

// ServeHTTP dispatches requests under BasePath.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) checkToken(r *http.Request) error {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || h.deps.Token == "" ||
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(h.deps.Token)) != 1 {
		return apierr.NotAuthorized("The control API needs Authorization: Bearer <control token>.")
	}
	return nil
}

// state serves GET /_control/v1/state.
func (h *Handler) state(w http.ResponseWriter, _ *http.Request) error {
	return wire.WriteJSON(w, http.StatusOK, map[string]any{
		"ok": true, "now": clock.Format(h.deps.Clock.Now()), "time_scale": h.deps.Clock.Scale(),
		"default_workspace_id": h.deps.DefaultWorkspaceID(),
	})
}

type limitsBody struct {
	PerGenerationCredits wire.Optional[int64] `json:"per_generation_credits"`
	DailyCredits         wire.Optional[int64] `json:"daily_credits"`
}

type workspaceBody struct {
	Name                       *string              `json:"name"`
	Plan                       *workspace.Plan      `json:"plan"`
	Balance                    *int64               `json:"balance"`
	Limits                     *limitsBody          `json:"limits"`
	LowBalanceThresholdCredits wire.Optional[int64] `json:"low_balance_threshold_credits"`
}

func (b workspaceBody) validate(create bool) error {
	if b.Name != nil && (len(*b.Name) < 1 || len(*b.Name) > 200) {
		return apierr.InvalidConfig("name", "name must be 1 to 200 characters.")
	}
	if b.Plan != nil && !b.Plan.Valid() {
		return apierr.InvalidConfig("plan", "plan must be free, pro or business.")
	}
	if !create && b.Balance != nil {
		return apierr.InvalidConfig("balance", "Change credits with POST /workspaces/{id}/credits.")
	}
	if b.Balance != nil && *b.Balance < 0 {
		return apierr.InvalidConfig("balance", "balance must be 0 or more.")
	}
	if b.Limits != nil {
		if v := b.Limits.PerGenerationCredits.Ptr(); v != nil && *v < 0 {
			return apierr.InvalidConfig("limits.per_generation_credits", "limits.per_generation_credits must be 0 or more, or null for the default.")
		}
		if v := b.Limits.DailyCredits.Ptr(); v != nil && *v < 0 {
			return apierr.InvalidConfig("limits.daily_credits", "limits.daily_credits must be 0 or more, or null for the default.")
		}
	}
	o := b.LowBalanceThresholdCredits
	if o.Set && (o.Null || o.Value < 0) {
		return apierr.InvalidConfig("low_balance_threshold_credits", "low_balance_threshold_credits must be 0 or more.")
	}
	return nil
}

// workspaceJSON renders a workspace; limits are null when at the default.
func workspaceJSON(i workspace.Info) map[string]any {
	return map[string]any{
		"ok": true, "workspace_id": i.ID, "name": i.Name, "plan": i.Plan,
		"available_credits": i.AvailableCredits, "held_credits": i.HeldCredits,
		"limits": map[string]any{
			"per_generation_credits": i.Limits.PerGeneration, "daily_credits": i.Limits.Daily,
		},
		"low_balance_threshold_credits": i.LowBalanceThreshold,
		"deleted":                       i.Deleted, "created_at": clock.Format(i.CreatedAt),
	}
}

// createWorkspace serves POST /_control/v1/workspaces.
func (h *Handler) createWorkspace(w http.ResponseWriter, r *http.Request) error {
	var b workspaceBody
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	p := workspace.CreateParams{Balance: 10000}
	if b.Name != nil {
		p.Name = *b.Name
	}
	if b.Plan != nil {
		p.Plan = *b.Plan
	}
	if b.Balance != nil {
		p.Balance = *b.Balance
	}
	if b.Limits != nil {
		p.Limits = ledger.Limits{PerGeneration: b.Limits.PerGenerationCredits.Ptr(), Daily: b.Limits.DailyCredits.Ptr()}
	}
	if v := b.LowBalanceThresholdCredits.Ptr(); v != nil {
		p.LowThreshold = *v
	}
	ws := h.deps.Registry.Create(p)
	return wire.WriteJSON(w, http.StatusCreated, workspaceJSON(ws.Snapshot()))
}

func (h *Handler) workspace(r *http.Request) (*workspace.Workspace, error) {
	id := r.PathValue("id")
	ws, ok := h.deps.Registry.Get(id)
	if !ok {
		return nil, apierr.NotFound("No workspace " + id + ".")
	}
	return ws, nil
}

// getWorkspace serves GET /_control/v1/workspaces/{id} (deleted ones too).
func (h *Handler) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	ws, err := h.workspace(r)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, workspaceJSON(ws.Snapshot()))
}

// patchWorkspace serves PATCH /_control/v1/workspaces/{id}.
func (h *Handler) patchWorkspace(w http.ResponseWriter, r *http.Request) error {
	ws, err := h.workspace(r)
	if err != nil {
		return err
	}
	var b workspaceBody
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	u := workspace.Update{Name: b.Name, Plan: b.Plan, LowThreshold: b.LowBalanceThresholdCredits.Ptr()}
	if b.Limits != nil {
		u.SetPerGeneration = b.Limits.PerGenerationCredits.Set
		u.SetDaily = b.Limits.DailyCredits.Set
		u.Limits = ledger.Limits{PerGeneration: b.Limits.PerGenerationCredits.Ptr(), Daily: b.Limits.DailyCredits.Ptr()}
	}
	info, err := ws.Apply(u)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, workspaceJSON(info))
}

// deleteWorkspace serves DELETE /_control/v1/workspaces/{id}.
func (h *Handler) deleteWorkspace(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.deps.Registry.Delete(id); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "workspace_id": id, "deleted": true})
}

// credits serves POST /_control/v1/workspaces/{id}/credits: {delta} or {set}.
func (h *Handler) credits(w http.ResponseWriter, r *http.Request) error {
	ws, err := h.workspace(r)
	if err != nil {
		return err
	}
	var b struct {
		Delta *int64 `json:"delta"`
		Set   *int64 `json:"set"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	var info workspace.Info
	switch {
	case (b.Delta == nil) == (b.Set == nil):
		return apierr.InvalidConfigFields([]string{"delta", "set"}, "Send exactly one of delta and set.")
	case b.Delta != nil:
		info, err = ws.AdjustCredits(*b.Delta)
	default:
		info, err = ws.SetCredits(*b.Set)
	}
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{
		"ok": true, "workspace_id": info.ID, "available_credits": info.AvailableCredits, "held_credits": info.HeldCredits,
	})
}

type keyBody struct {
	Scopes           []workspace.Scope         `json:"scopes"`
	Name             *string                   `json:"name"`
	BudgetCredits    wire.Optional[int64]      `json:"budget_credits"`
	RequestAllowance wire.Optional[int64]      `json:"request_allowance"`
	Buckets          map[ratelimit.Bucket]*int `json:"buckets"`
	ExpiresAt        wire.Optional[time.Time]  `json:"expires_at"`
	Revoked          *bool                     `json:"revoked"`
}

func (b keyBody) validate(create bool) error {
	if create && len(b.Scopes) == 0 {
		return apierr.InvalidConfig("scopes", "scopes is required: one or more of read, generate.")
	}
	if !create && b.Scopes != nil {
		return apierr.InvalidConfig("scopes", "Scopes cannot change; create another key.")
	}
	if !create && b.Name != nil {
		return apierr.InvalidConfig("name", "A key's name cannot change.")
	}
	if create && b.Revoked != nil {
		return apierr.InvalidConfig("revoked", "A new key cannot be revoked; DELETE /keys/{key_id} revokes.")
	}
	if v := b.BudgetCredits.Ptr(); v != nil && *v < 0 {
		return apierr.InvalidConfig("budget_credits", "budget_credits must be 0 or more, or null for no limit.")
	}
	if v := b.RequestAllowance.Ptr(); v != nil && *v < 0 {
		return apierr.InvalidConfig("request_allowance", "request_allowance must be 0 or more, or null for no limit.")
	}
	for name, n := range b.Buckets {
		if !name.Valid() {
			return apierr.InvalidConfig("buckets."+string(name), fmt.Sprintf("Unknown bucket %q.", name))
		}
		if n != nil && *n < 0 {
			return apierr.InvalidConfig("buckets."+string(name), "A bucket limit must be 0 or more, or null for the default.")
		}
	}
	if b.Revoked != nil && !*b.Revoked {
		return apierr.InvalidConfig("revoked", "A revoked key cannot be restored.")
	}
	return nil
}

func keyJSON(k workspace.KeyInfo) map[string]any {
	buckets := map[string]int{}
	for b, n := range k.Buckets {
		buckets[string(b)] = n
	}
	var expires any
	if k.ExpiresAt != nil {
		expires = clock.Format(*k.ExpiresAt)
	}
	return map[string]any{
		"ok": true, "key_id": k.KeyID, "workspace_id": k.WorkspaceID, "name": k.Name, "scopes": k.Scopes,
		"budget_credits": k.BudgetCredits, "request_allowance": k.RequestAllowance, "requests_used": k.RequestsUsed,
		"buckets": buckets, "expires_at": expires, "revoked": k.Revoked, "created_at": clock.Format(k.CreatedAt),
	}
}

// createKey serves POST /_control/v1/workspaces/{id}/keys; the answer holds
// the secret (`key`), shown once.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) error {
	ws, err := h.workspace(r)
	if err != nil {
		return err
	}
	var b keyBody
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	p := workspace.KeyParams{
		Scopes: b.Scopes, BudgetCredits: b.BudgetCredits.Ptr(), RequestAllowance: b.RequestAllowance.Ptr(),
		ExpiresAt: b.ExpiresAt.Ptr(),
	}
	if b.Name != nil {
		p.Name = *b.Name
	}
	for name, n := range b.Buckets {
		if n != nil {
			if p.Buckets == nil {
				p.Buckets = map[ratelimit.Bucket]int{}
			}
			p.Buckets[name] = *n
		}
	}
	info, secret, err := h.deps.Registry.CreateKey(ws, p)
	if err != nil {
		return err
	}
	out := keyJSON(info)
	out["key"] = secret
	return wire.WriteJSON(w, http.StatusCreated, out)
}

func (h *Handler) keyOwner(r *http.Request) (*workspace.Workspace, string, error) {
	id := r.PathValue("key_id")
	ws, ok := h.deps.Registry.KeyOwner(id)
	if !ok {
		return nil, "", apierr.NotFound("No key " + id + ".")
	}
	return ws, id, nil
}

// getKey serves GET /_control/v1/keys/{key_id} (never the secret).
func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := h.keyOwner(r)
	if err != nil {
		return err
	}
	k, ok := ws.Key(id)
	if !ok {
		return apierr.NotFound("No key " + id + ".")
	}
	return wire.WriteJSON(w, http.StatusOK, keyJSON(k))
}

// patchKey serves PATCH /_control/v1/keys/{key_id}.
func (h *Handler) patchKey(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := h.keyOwner(r)
	if err != nil {
		return err
	}
	var b keyBody
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	u := workspace.KeyUpdate{
		SetBudget: b.BudgetCredits.Set, BudgetCredits: b.BudgetCredits.Ptr(),
		SetAllowance: b.RequestAllowance.Set, RequestAllowance: b.RequestAllowance.Ptr(),
		SetExpiresAt: b.ExpiresAt.Set, ExpiresAt: b.ExpiresAt.Ptr(),
		Revoke: b.Revoked != nil && *b.Revoked,
	}
	if b.Buckets != nil {
		u.Buckets = map[ratelimit.Bucket]int{}
		for name, n := range b.Buckets {
			if n == nil {
				u.Buckets[name] = -1
			} else {
				u.Buckets[name] = *n
			}
		}
	}
	k, err := ws.UpdateKey(id, u)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, keyJSON(k))
}

// revokeKey serves DELETE /_control/v1/keys/{key_id}: the key then answers 401.
func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request) error {
	ws, id, err := h.keyOwner(r)
	if err != nil {
		return err
	}
	if _, err := ws.UpdateKey(id, workspace.KeyUpdate{Revoke: true}); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "key_id": id, "revoked": true})
}

// getClock serves GET /_control/v1/clock.
func (h *Handler) getClock(w http.ResponseWriter, _ *http.Request) error {
	return wire.WriteJSON(w, http.StatusOK, map[string]any{
		"ok": true, "now": clock.Format(h.deps.Clock.Now()), "time_scale": h.deps.Clock.Scale(),
	})
}

// advance serves POST /_control/v1/clock/advance {seconds > 0}; due timers
// fire before it answers. An advance past the clock's total bound
// (clock.MaxOffset) is refused with 400 invalid_config naming seconds.
func (h *Handler) advance(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	if b.Seconds == nil || !(*b.Seconds > 0) || math.IsInf(*b.Seconds, 0) || *b.Seconds > maxAdvance.Seconds() {
		return apierr.InvalidConfig("seconds", fmt.Sprintf("seconds is required: a number above 0 and at most %.0f.", maxAdvance.Seconds()))
	}
	d := time.Duration(*b.Seconds * float64(time.Second))
	if room := h.deps.Clock.Headroom(); d > room {
		return apierr.InvalidConfig("seconds", fmt.Sprintf("The service clock may run at most %.0f seconds (100 years) ahead of its start; %.0f seconds are left.",
			clock.MaxOffset.Seconds(), room.Seconds()))
	}
	h.deps.Clock.Advance(d)
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "now": clock.Format(h.deps.Clock.Now())})
}

// reset serves POST /_control/v1/reset.
func (h *Handler) reset(w http.ResponseWriter, _ *http.Request) error {
	h.deps.Reset()
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "default_workspace_id": h.deps.DefaultWorkspaceID()})
}
