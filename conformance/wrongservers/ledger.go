package wrongservers

import (
	"encoding/json"
	"net/http"
)

var ledgerServers = []Server{
	{
		Name: "ledger-wallet-before-hold", Rules: []string{"SUBMIT-008"},
		Mistake: "wallet_balance on the submit answer is read before the hold is taken",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			c := obj(d, "credits")
			w, ok1 := intOf(c["wallet_balance"])
			h, ok2 := intOf(c["credits_held"])
			if ok1 && ok2 {
				c["wallet_balance"] = json.Number(formatInt(w + h))
			}
		}),
	},
	{
		Name: "ledger-credits-left-stale", Rules: []string{"GEN-019"},
		Mistake: "credits_left on a settled generation is the balance before the charge",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			g := generation(d)
			left, ok := intOf(g["credits_left"])
			charged, ok2 := intOf(obj(g, "credits")["credits_charged"])
			if ok && ok2 && charged > 0 {
				g["credits_left"] = json.Number(formatInt(left + charged))
			}
		}),
	},
	{
		Name: "ledger-settlement-open", Rules: []string{"GEN-016"},
		Mistake: "settlement stays open after a completed job is charged",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(generation(d), "credits"); c != nil && c["settlement"] == "captured" {
				c["settlement"] = "open"
			}
		}),
	},
	{
		Name: "ledger-spend-limit-bound-by", Rules: []string{"LEDGER-007", "ERR-027"},
		Mistake: "every spend cap refusal says bound_by org_daily",
		API: errorsWith(anyAPI, "spend_limit_exceeded", func(_ *http.Request, _ *answer, e map[string]any) {
			if l := obj(e, "limit"); l != nil {
				l["bound_by"] = "org_daily"
			}
		}),
	},
	{
		Name: "ledger-balance-sum-off", Rules: []string{"LEDGER-019"},
		Legal:   "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
		Mistake: "balance_credits leaves out the held credits",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["balance_credits"] = d["available_credits"]
		}),
	},
	{
		Name: "ledger-daily-remaining-negative", Rules: []string{"LEDGER-021", "LEDGER-020"},
		Legal:   "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
		Mistake: "daily_remaining_credits is the daily limit, not what is left of it",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l := obj(d, "limits"); l != nil {
				l["daily_remaining_credits"] = l["daily_credits"]
			}
		}),
	},
	{
		Name: "ledger-no-budget-zero", Rules: []string{"LEDGER-011"},
		Mistake: "a key without a budget reads key_budget_credits 0 instead of null",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l := obj(d, "limits"); l != nil && l["key_budget_credits"] == nil {
				l["key_budget_credits"] = json.Number("0")
			}
		}),
	},
}
