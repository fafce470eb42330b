package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// auditOff is the message of GET /audit when the mock runs without --audit.
const auditOff = "The client audit is off: start the mock with --audit to record findings."

// RegisterAudit adds GET /audit (the client audit's findings, per-rule totals and the count of
// distinct findings not kept) and DELETE /audit (clear them). With a nil auditor (the mock runs
// without --audit) both answer 200 with enabled false, no findings and a message saying so.
func (h *Handler) RegisterAudit(a *audit.Auditor) {
	h.Handle("GET /audit", func(w http.ResponseWriter, _ *http.Request) error {
		return wire.WriteJSON(w, http.StatusOK, auditJSON(a))
	})
	h.Handle("DELETE /audit", func(w http.ResponseWriter, _ *http.Request) error {
		if a != nil {
			a.Clear()
		}
		return wire.WriteJSON(w, http.StatusOK, auditJSON(a))
	})
}

func auditJSON(a *audit.Auditor) map[string]any {
	out := map[string]any{"ok": true, "enabled": a != nil, "findings": []any{}, "totals": []any{}, "dropped": 0}
	if a == nil {
		out["message"] = auditOff
		return out
	}
	r := a.Report()
	findings := make([]map[string]any, len(r.Findings))
	for i, f := range r.Findings {
		var key any
		if f.KeyID != "" {
			key = f.KeyID
		}
		findings[i] = map[string]any{
			"rule_id": f.RuleID, "level": f.Level, "key_id": key, "request": f.Request, "advice": f.Advice,
			"first_seen_at": clock.Format(f.FirstSeen), "last_seen_at": clock.Format(f.LastSeen), "count": f.Count,
		}
	}
	totals := make([]map[string]any, len(r.Totals))
	for i, t := range r.Totals {
		totals[i] = map[string]any{"rule_id": t.RuleID, "level": t.Level, "count": t.Count}
	}
	out["findings"], out["totals"], out["dropped"] = findings, totals, r.Dropped
	return out
}
