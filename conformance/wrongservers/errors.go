package wrongservers

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// status changes the HTTP status of failures carrying code.
func status(code string, to int) Wrap {
	return errorsWith(anyAPI, code, func(_ *http.Request, a *answer, _ map[string]any) { a.status = to })
}

// retryable flips error.retryable of failures carrying code.
func retryable(code string, to bool) Wrap {
	return errorsWith(anyAPI, code, func(_ *http.Request, _ *answer, e map[string]any) { e["retryable"] = to })
}

var errorServers = []Server{
	{
		Name: "err-not-found-403", Rules: []string{"ERR-029"},
		Mistake: "not_found is answered with HTTP 403",
		API:     status("not_found", http.StatusForbidden),
	},
	{
		Name: "err-invalid-config-422", Rules: []string{"ERR-024"},
		Mistake: "invalid_config is answered with HTTP 422 (the framework's validation status)",
		API:     status("invalid_config", http.StatusUnprocessableEntity),
	},
	{
		Name: "err-unauthorized-403", Rules: []string{"ERR-021", "AUTH-001"},
		Mistake: "not_authorized is answered with HTTP 403",
		API:     status("not_authorized", http.StatusForbidden),
	},
	{
		Name: "err-in-flight-429", Rules: []string{"ERR-031"},
		Mistake: "submission_in_flight is answered with HTTP 429",
		API:     status("submission_in_flight", http.StatusTooManyRequests),
	},
	{
		Name: "err-max-credits-400", Rules: []string{"ERR-025", "SUBMIT-014"},
		Mistake: "max_credits_exceeded is answered with HTTP 400",
		API:     status("max_credits_exceeded", http.StatusBadRequest),
	},
	{
		Name: "err-input-not-ready-final", Rules: []string{"ERR-030", "ERR-005"},
		Mistake: "input_not_ready says retryable false",
		API:     retryable("input_not_ready", false),
	},
	{
		Name: "err-rate-limited-final", Rules: []string{"ERR-036", "ERR-005"},
		Mistake: "rate_limited says retryable false",
		API:     retryable("rate_limited", false),
	},
	{
		Name: "err-unauthorized-retryable", Rules: []string{"ERR-021", "ERR-005"},
		Mistake: "not_authorized says retryable true",
		API:     retryable("not_authorized", true),
	},
	{
		Name: "err-no-ok-false", Rules: []string{"ERR-001"},
		Mistake: "the error envelope has no ok field",
		API:     errorsWith(anyAPI, "", func(_ *http.Request, _ *answer, e map[string]any) { delete(e, "ok") }),
	},
	{
		Name: "err-no-credits-charged", Rules: []string{"ERR-007"},
		Mistake: "refusals leave out error.credits_charged",
		API:     errorsWith(anyAPI, "", func(_ *http.Request, _ *answer, e map[string]any) { delete(e, "credits_charged") }),
	},
	{
		Name: "err-stack-trace", Rules: []string{"ERR-046"}, // a safe sentence (ERR-003 asks only that there is one)
		Mistake: "error.message carries the Go error chain and a stack frame",
		API: errorsWith(anyAPI, "", func(_ *http.Request, _ *answer, e map[string]any) {
			m, _ := e["message"].(string)
			e["message"] = m + "\ngoroutine 42 [running]:\nmain.handler(...)\n\t/srv/app/internal/api/handler.go:118 +0x1d"
		}),
	},
	{
		Name: "err-unnamed-field", Rules: []string{"ERR-020"},
		Mistake: "invalid_config refusals say only \"invalid request\" and name no field",
		API: errorsWith(anyAPI, "invalid_config", func(_ *http.Request, _ *answer, e map[string]any) {
			delete(e, "field")
			delete(e, "fields")
			e["message"] = "The request is invalid."
		}),
	},
	{
		Name: "err-retry-after-header-off", Rules: []string{"ERR-009"},
		Mistake: "the Retry-After header of rate_limited is one second more than retry_after_seconds",
		API: errorsWith(anyAPI, "rate_limited", func(_ *http.Request, a *answer, e map[string]any) {
			if s, ok := intOf(e["retry_after_seconds"]); ok {
				a.header.Set("Retry-After", strconv.FormatInt(s+1, 10))
			}
		}),
	},
	{
		Name: "err-retry-after-float", Rules: []string{"ERR-008"},
		Mistake: "retry_after_seconds is a fraction of a second",
		API: errorsWith(anyAPI, "", func(_ *http.Request, _ *answer, e map[string]any) {
			if s, ok := intOf(e["retry_after_seconds"]); ok {
				e["retry_after_seconds"] = json.Number(strconv.FormatInt(s, 10) + ".5")
			}
		}),
	},
	{
		Name: "err-capability-status-missing", Rules: []string{"ERR-016"},
		Mistake: "capability_unavailable refusals leave out capability_status",
		API: errorsWith(anyAPI, "capability_unavailable", func(_ *http.Request, _ *answer, e map[string]any) {
			delete(e, "capability_status")
		}),
	},
	{
		Name: "err-required-credits-off", Rules: []string{"ERR-012", "ERR-013"},
		Mistake: "limit.required_credits is the unpadded estimate, not the smallest max_credits that passes",
		API: errorsWith(anyAPI, "max_credits_exceeded", func(_ *http.Request, _ *answer, e map[string]any) {
			if l := obj(e, "limit"); l != nil {
				if n, ok := intOf(l["required_credits"]); ok {
					l["required_credits"] = json.Number(strconv.FormatInt(n*10/11, 10))
				}
			}
		}),
	},
	{
		Name: "err-shortfall-off", Rules: []string{"ERR-018", "LEDGER-006"},
		Mistake: "insufficient_credits.shortfall uses the unpadded price",
		API: errorsWith(anyAPI, "insufficient_credits", func(_ *http.Request, _ *answer, e map[string]any) {
			if n, ok := intOf(e["shortfall"]); ok {
				e["shortfall"] = json.Number(strconv.FormatInt(n+1, 10))
			}
		}),
	},
	{
		Name: "core-error-envelope-extra", Rules: []string{"CORE-003"},
		Legal:   "Versioning 4: a new response field ships without warning and clients ignore unknown fields, so a key beside error is legal (CORE-003, issue 35)",
		Mistake: "failure bodies carry ok: false beside error at the top level",
		API: docs(anyAPI, failure, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["error"] != nil {
				d["ok"] = false
			}
		}),
	},
	{
		Name: "core-error-flattened", Rules: []string{"CORE-003"},
		Mistake: "failure bodies hold the error's fields at the top level, with no error object",
		API: docs(anyAPI, failure, func(_ *http.Request, _ *answer, d map[string]any) {
			if e, ok := d["error"].(map[string]any); ok {
				delete(d, "error")
				for k, v := range e {
					d[k] = v
				}
			}
		}),
	},
	{
		Name: "core-cacheable-errors", Rules: []string{"CORE-018"},
		Mistake: "a shared cache header is set on every answer, errors included",
		API: answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
			if a.status >= 400 {
				a.header.Set("Cache-Control", "public, max-age=60")
			}
		}),
	},
	{
		Name: "core-cors", Rules: []string{"CORE-004"},
		Mistake: "the API sends Access-Control-Allow-Origin: * (a CORS middleware left on)",
		API: answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
			a.header.Set("Access-Control-Allow-Origin", "*")
		}),
	},
	{
		Name: "err-in-flight-without-job", Rules: []string{"ERR-015", "SUBMIT-018"},
		Mistake: "submission_in_flight does not say which job holds the slot (no in_flight)",
		API: errorsWith(submitRoute, "submission_in_flight", func(_ *http.Request, _ *answer, e map[string]any) {
			delete(e, "in_flight")
		}),
	},
	{
		Name: "err-internal-final", Rules: []string{"ERR-039", "ERR-005"},
		Mistake: "internal_error says retryable false",
		API:     retryable("internal_error", false),
	},
	{
		Name: "err-pricing-unavailable-500", Rules: []string{"ERR-042"},
		Mistake: "pricing_unavailable is answered with HTTP 500",
		API:     status("pricing_unavailable", http.StatusInternalServerError),
	},
	{
		Name: "err-moderation-blocked-400", Rules: []string{"ERR-035"},
		Mistake: "moderation_blocked is answered with HTTP 400",
		API:     status("moderation_blocked", http.StatusBadRequest),
	},
	{
		Name: "err-quota-retryable", Rules: []string{"ERR-037", "ERR-005"},
		Mistake: "quota_exceeded says retryable true (treated like rate_limited)",
		API:     retryable("quota_exceeded", true),
	},
	{
		Name: "err-workspace-gone-404", Rules: []string{"ERR-034", "AUTH-021"},
		Mistake: "workspace_unavailable is answered with HTTP 404",
		API:     status("workspace_unavailable", http.StatusNotFound),
	},
	{
		Name: "err-capability-unavailable-400", Rules: []string{"ERR-028"},
		Mistake: "capability_unavailable is answered with HTTP 400",
		API:     status("capability_unavailable", http.StatusBadRequest),
	},
}
