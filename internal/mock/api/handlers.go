package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// RegisterBase registers the routes every mock serves from the start:
// GET /health/live, GET /health/ready, GET /openapi.json (serving doc) and
// GET /credits/balance.
func (rt *Router) RegisterBase(doc func() ([]byte, error)) {
	rt.HandlePublic("GET /health/live", rt.healthLive)
	rt.HandlePublic("GET /health/ready", rt.healthReady)
	rt.Handle("GET /openapi.json", workspace.ScopeRead, ratelimit.AgentRead, OpenAPIHandlerFunc(doc))
	rt.Handle("GET /credits/balance", workspace.ScopeRead, ratelimit.AgentRead, rt.creditsBalance)
}

// healthLive serves GET /api/v1/health/live: 200 {ok, status:"live"}.
func (rt *Router) healthLive(w http.ResponseWriter, _ *http.Request) error {
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "status": "live"})
}

// healthReady serves GET /api/v1/health/ready: 200 {ok:true,
// status:"ready", checks} when every check passes, else 503 with ok false,
// status "not_ready" (the probe shape, not the error envelope).
func (rt *Router) healthReady(w http.ResponseWriter, _ *http.Request) error {
	rt.readyMu.Lock()
	checks := append([]readyCheck(nil), rt.ready...)
	rt.readyMu.Unlock()
	out := map[string]string{}
	ok := true
	for _, c := range checks {
		if err := c.fn(); err != nil {
			out[c.name] = "failing"
			ok = false
			rt.deps.Logger.Warn("readiness check failing", "check", c.name, "err", err)
		} else {
			out[c.name] = "ok"
		}
	}
	if ok {
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "status": "ready", "checks": out})
	}
	return wire.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "status": "not_ready", "checks": out})
}

// OpenAPIHandler serves GET /api/v1/openapi.json: the REST description as
// JSON. An empty doc answers 500 internal_error (the server was built
// without its description).
func OpenAPIHandler(doc []byte) wire.HandlerFunc {
	return OpenAPIHandlerFunc(func() ([]byte, error) { return doc, nil })
}

// OpenAPIHandlerFunc is OpenAPIHandler over a description made on first use (building the JSON
// of the embedded description is the slowest part of a start, and most runs never ask for it).
func OpenAPIHandlerFunc(load func() ([]byte, error)) wire.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) error {
		var doc []byte
		if load != nil {
			var err error
			if doc, err = load(); err != nil {
				return apierr.Internal(err, "The REST description is not available.")
			}
		}
		if len(doc) == 0 {
			return apierr.Internal(errors.New("no REST description configured"), "The REST description is not available.")
		}
		wire.WriteEncoded(w, http.StatusOK, doc)
		return nil
	}
}

// BalanceLimits is the `limits` object of the balance answer.
type BalanceLimits struct {
	PerGenerationCredits  int64  `json:"per_generation_credits"`
	DailyCredits          int64  `json:"daily_credits"`
	DailySpentCredits     int64  `json:"daily_spent_credits"`
	DailyRemainingCredits int64  `json:"daily_remaining_credits"`
	KeyBudgetCredits      *int64 `json:"key_budget_credits"`
	KeySpentCredits       int64  `json:"key_spent_credits"`
	KeyRemainingCredits   *int64 `json:"key_remaining_credits"`
}

// Balance is the answer of GET /credits/balance.
type Balance struct {
	OK                         bool          `json:"ok"`
	AvailableCredits           int64         `json:"available_credits"`
	HeldCredits                int64         `json:"held_credits"`
	BalanceCredits             int64         `json:"balance_credits"`
	LowBalanceThresholdCredits int64         `json:"low_balance_threshold_credits"`
	Limits                     BalanceLimits `json:"limits"`
	Summary                    string        `json:"summary"`
}

// creditsBalance serves GET /api/v1/credits/balance (read, agent_read).
func (rt *Router) creditsBalance(w http.ResponseWriter, r *http.Request) error {
	c := Caller(r.Context())
	info, st := c.Workspace.Balance(c.Key.KeyID, c.Key.BudgetCredits)
	b := Balance{
		OK:                         true,
		AvailableCredits:           info.AvailableCredits,
		HeldCredits:                info.HeldCredits,
		BalanceCredits:             info.AvailableCredits + info.HeldCredits,
		LowBalanceThresholdCredits: info.LowBalanceThreshold,
		Limits: BalanceLimits{
			PerGenerationCredits: st.PerGeneration, DailyCredits: st.Daily,
			DailySpentCredits: st.DailySpent, DailyRemainingCredits: st.DailyRemaining,
			KeyBudgetCredits: st.KeyBudget, KeySpentCredits: st.KeySpent, KeyRemainingCredits: st.KeyRemaining,
		},
	}
	b.Summary = fmt.Sprintf("%d credits available and %d held by running work. Agents may spend up to %d credits per generation and %d more in the rolling 24 hours.",
		b.AvailableCredits, b.HeldCredits, st.PerGeneration, st.DailyRemaining)
	if st.KeyRemaining != nil {
		b.Summary += fmt.Sprintf(" This key's budget has %d credits left.", *st.KeyRemaining)
	}
	return wire.WriteJSON(w, http.StatusOK, b)
}
