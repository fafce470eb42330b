package mock

import (
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// The limits of the limit roles (Config.RoleKeys): the workspace of the high-limit key holds
// RoleHighLimit credits and limits, above a 75-second actor_ultra recording's hold; the limited
// key's workspace has a per-generation limit of RoleLimitedPerGeneration credits and a daily limit
// of RoleLimitedDaily, both under any video hold, the daily one the smaller: a tts hold (4
// credits) fits both, and once its price (3) is spent no longer fits the daily one, so the
// rolling-window spec spends there (LEDGER-017, --long).
const (
	RoleHighLimit            int64 = 100000
	RoleLimitedPerGeneration int64 = 6
	RoleLimitedDaily         int64 = 5
)

// bootLimitRoles makes the keys of the limit roles, each of a workspace of its own, into r.
func (s *Server) bootLimitRoles(r *RoleKeys) {
	rw := []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}
	mk := func(name string, balance, perGeneration, daily int64) string {
		ws := s.svc.Registry.Create(workspace.CreateParams{Name: name, Plan: workspace.PlanPro, Balance: balance,
			Limits: ledger.Limits{PerGeneration: &perGeneration, Daily: &daily}})
		_, secret, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{Name: name + " key", Scopes: rw})
		if err != nil {
			panic("mock: role key " + name + ": " + err.Error()) // fixed valid params: cannot fail
		}
		return secret
	}
	r.HighLimit = mk("High limit workspace", max(s.cfg.Balance, RoleHighLimit), RoleHighLimit, RoleHighLimit)
	r.Limited = mk("Limited workspace", s.cfg.Balance, RoleLimitedPerGeneration, RoleLimitedDaily)
	r.LimitedPerGeneration, r.LimitedDaily = RoleLimitedPerGeneration, RoleLimitedDaily
}
