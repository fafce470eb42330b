package wrongservers

import (
	"encoding/json"
	"net/http"
	"strings"
)

var (
	generateRoute = func(r *http.Request) bool {
		return submitRoute(r) || route(http.MethodPost, "/uploads(/.*)?")(r) || route("", "/webhooks(/[^/]+)?")(r) && r.Method != http.MethodGet ||
			route(http.MethodPost, "/workflows/.+/invoke")(r)
	}
)

// refusalServers get refusals wrong: a status or code for the wrong cause, a field missing or of the
// wrong type, two failing checks in the wrong order.
var refusalServers = []Server{
	{
		Name: "auth-key-cache-stale", Rules: []string{"AUTH-004", "AUTH-005"},
		Mistake: "keys are checked against a cache that never learns of revocation or expiry: a revoked or expired key still works",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, controlPrefix) || !strings.HasPrefix(r.URL.Path, apiPrefix) {
					next.ServeHTTP(w, r)
					return
				}
				body := requestBody(r)
				a := serve(next, r)
				key := presented(r)
				if a.status == http.StatusUnauthorized && env.known(key) {
					good := env.generateKey(key)
					if good == key {
						good = env.generateKey("")
					}
					if good != "" && good != key {
						setRequestBody(r, body)
						r.Header.Del("X-API-Key")
						r.Header.Set("Authorization", "Bearer "+good)
						a = serve(next, r)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "auth-deleted-workspace-revoked", Rules: []string{"AUTH-021", "ERR-034"},
		Mistake: "a key of a deleted workspace is treated as revoked: 401 not_authorized instead of 410 workspace_unavailable",
		API:     recode(anyAPI, "workspace_unavailable", http.StatusUnauthorized, "not_authorized", false),
	},
	{
		Name: "auth-revoked-key-deleted-workspace-410", Rules: []string{"AUTH-024"},
		Legal:   "Authentication 4 lists the failures, not the order of the key and workspace checks",
		Mistake: "the workspace is looked up before the key's own state: a revoked key of a deleted workspace answers 410",
		API: func(env *Env, next http.Handler) http.Handler {
			var gone memo[bool]
			del := controlRoute(http.MethodDelete, "/workspaces/([^/]+)")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if del(r) {
					a := serve(next, r)
					if success(a.status) {
						gone.put(strings.TrimPrefix(r.URL.Path, controlPrefix+"/workspaces/"), true)
					}
					a.send(w)
					return
				}
				if !anyAPI(r) {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				key := presented(r)
				if a.status == http.StatusUnauthorized && env.known(key) {
					if g, _ := gone.get(env.workspaceOf(key)); g {
						refuse(a, http.StatusGone, "workspace_unavailable", false, nil)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "auth-no-agent-plan-as-scope", Rules: []string{"AUTH-022"},
		Mistake: "a workspace whose plan lacks the agent API is refused as a scope problem: 403 insufficient_scope without required_plan",
		API: errorsWith(anyAPI, "required_plan", func(r *http.Request, _ *answer, e map[string]any) {
			if strings.HasPrefix(r.URL.Path, apiPrefix+"/capabilities/") || submitRoute(r) || estimate(r) {
				return // the capability's plan refusals stay; the key-level one is wrong
			}
			e["code"] = "insufficient_scope"
			delete(e, "required_plan")
		}),
	},
	{
		Name: "auth-allowance-as-rate-limit", Rules: []string{"AUTH-023", "AUTH-027"},
		Mistake: "a used-up request allowance is answered like a full bucket: 429 rate_limited, retryable, retry after 60",
		API: answers(anyAPI, func(_ *Env, r *http.Request, a *answer) {
			d, ok := a.doc()
			if !ok || errorCode(d) != "quota_exceeded" || route(http.MethodPost, "/uploads(/from-url)?")(r) {
				return
			}
			refuse(a, http.StatusTooManyRequests, "rate_limited", true, map[string]any{"retry_after_seconds": 60})
			a.header.Set("Retry-After", "60")
		}),
	},
	{
		Name: "auth-scope-before-rate-limit", Rules: []string{"AUTH-028", "CHECK-002"},
		Mistake: "the scope is checked before the bucket: a read-only key over its bucket on a generate route gets 403",
		API: answers(generateRoute, func(env *Env, r *http.Request, a *answer) {
			if d, ok := a.doc(); ok && errorCode(d) == "rate_limited" && env.readOnly(presented(r)) {
				refuse(a, http.StatusForbidden, "insufficient_scope", false, nil)
				a.header.Del("Retry-After")
			}
		}),
	},
	{
		Name: "err-retryable-as-string", Rules: []string{"ERR-005"},
		Mistake: "retryable is written as a string (\"true\"/\"false\") by a template that quotes every value",
		API: errorsWith(anyAPI, "", func(_ *http.Request, _ *answer, e map[string]any) {
			if b, ok := e["retryable"].(bool); ok {
				e["retryable"] = map[bool]string{true: "true", false: "false"}[b]
			}
		}),
	},
	{
		Name: "err-estimate-changed-final", Rules: []string{"ERR-032"},
		Mistake: "estimate_changed is marked not retryable, like the other price refusals",
		API:     retryableAs(anyAPI, "estimate_changed", false),
	},
	{
		Name: "err-not-priced-retryable", Rules: []string{"ERR-033"},
		Mistake: "not_priced is marked retryable, like every other 409",
		API:     retryableAs(anyAPI, "not_priced", true),
	},
	{
		Name: "err-provider-unavailable-503", Rules: []string{"ERR-040"},
		Mistake: "provider_unavailable is answered 503 Service Unavailable instead of 502",
		API:     errorsWith(anyAPI, "provider_unavailable", func(_ *http.Request, a *answer, _ map[string]any) { a.status = http.StatusServiceUnavailable }),
	},
	{
		Name: "err-moderation-unavailable-final", Rules: []string{"ERR-041"},
		Mistake: "moderation_unavailable is marked not retryable (a content refusal, like moderation_blocked)",
		API:     retryableAs(anyAPI, "moderation_unavailable", false),
	},
	{
		Name: "err-request-blocked-409", Rules: []string{"ERR-038"},
		Mistake: "request_blocked is answered 409 Conflict instead of 429",
		API:     errorsWith(anyAPI, "request_blocked", func(_ *http.Request, a *answer, _ map[string]any) { a.status = http.StatusConflict }),
	},
	{
		Name: "err-shortfall-renamed", Rules: []string{"ERR-018"},
		Mistake: "the shortfall is sent as shortfall_credits, the name the balance fields use",
		API: errorsWith(anyAPI, "insufficient_credits", func(_ *http.Request, _ *answer, e map[string]any) {
			if v, ok := e["shortfall"]; ok {
				e["shortfall_credits"] = v
				delete(e, "shortfall")
			}
		}),
	},
	{
		Name: "err-blocked-reason-missing", Rules: []string{"ERR-019"},
		Mistake: "request_blocked carries no blocked_reason (the reason is only in the message)",
		API:     errorsWith(anyAPI, "request_blocked", func(_ *http.Request, _ *answer, e map[string]any) { delete(e, "blocked_reason") }),
	},
	{
		Name: "err-in-flight-retry-after-header-off", Rules: []string{"ERR-010"},
		Mistake: "the in-flight refusal's Retry-After header is computed apart from the body and is one second longer",
		API: answers(submitRoute, func(_ *Env, _ *http.Request, a *answer) {
			d, ok := a.doc()
			if !ok || errorCode(d) != "submission_in_flight" {
				return
			}
			if n, ok := intOf(obj(d, "error")["retry_after_seconds"]); ok {
				a.header.Set("Retry-After", formatInt(n+1))
			}
		}),
	},
	{
		Name: "rate-retry-after-full-window", Rules: []string{"RATE-013"},
		Legal:   "Limits: per-minute buckets whose wait is known; the window's kind (sliding or fixed) is not given, and a wait of the whole minute is never too short",
		Mistake: "a bucket refusal always says retry after 60 seconds (the whole window), not the time until the oldest call leaves it",
		API: answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
			d, ok := a.doc()
			e := obj(d, "error")
			if !ok || errorCode(d) != "rate_limited" || e["retry_after_seconds"] == nil {
				return
			}
			e["retry_after_seconds"] = 60
			a.setDoc(d)
			a.header.Set("Retry-After", "60")
		}),
	},
	{
		Name: "check-config-before-money", Rules: []string{"CHECK-009", "CHECK-001"},
		Mistake: "the submit validates its config first (by the estimate's code path), before max_credits, caps and credits",
		API: guard(submitRoute, func(_ *Env, next http.Handler, r *http.Request) *answer {
			req, ok := decodeObject(requestBody(r))
			if !ok {
				return nil
			}
			body := map[string]any{"capability_id": req["capability_id"], "config": req["config"]}
			for _, k := range []string{"actor_id", "actor_image_asset_id", "voice_id", "approved_voice_generation_id"} {
				if v, ok := req[k]; ok {
					body[k] = v
				}
			}
			a, d := callAs(next, r, http.MethodPost, apiPrefix+"/estimates", presented(r), body)
			if a.status == http.StatusBadRequest && errorCode(d) == "invalid_config" {
				return a
			}
			return nil
		}),
	},
	{
		Name: "check-in-flight-before-upload", Rules: []string{"CHECK-013"},
		Mistake: "the in-flight slot is checked before the named uploads: a submit naming an unfinished upload while a job runs gets 409 submission_in_flight",
		API:     inFlightOn(func(_ *answer, d map[string]any) bool { return errorCode(d) == "input_not_ready" }),
	},
	{
		Name: "check-max-credits-before-capability", Rules: []string{"CHECK-021"},
		Legal:   "Errors: the check order puts max_credits before capability availability; whether a capability without a price is compared with max_credits is not said (CHECK-021, issue 35)",
		Mistake: "max_credits is compared before the capability is looked up, an unknown one priced at its ceiling: max_credits 1 gets 402",
		API: exchanges(submitRoute, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			if !ok || errorCode(d) != "capability_unavailable" {
				return
			}
			if n, ok := intOf(req["max_credits"]); ok && n < 10 {
				refuse(a, http.StatusPaymentRequired, "max_credits_exceeded", false,
					map[string]any{"limit": map[string]any{"bound_by": "max_credits", "required_credits": 10}})
			}
		}),
	},
	{
		Name: "check-unknown-capability-invalid", Rules: []string{"CHECK-021"},
		Mistake: "a submit naming an unknown capability is refused 400 invalid_config (the config cannot be checked) instead of 404 capability_unavailable",
		API: exchanges(submitRoute, func(_ *Env, _ map[string]any, a *answer) {
			d, ok := a.doc()
			if !ok || errorCode(d) != "capability_unavailable" {
				return
			}
			if e, _ := d["error"].(map[string]any); e != nil && e["capability_status"] == "unknown" {
				refuse(a, http.StatusBadRequest, "invalid_config", false, nil)
			}
		}),
	},
	{
		Name: "check-max-credits-string-coerced", Rules: []string{"SUBMIT-013", "CHECK-006"},
		Mistake: "a lenient decoder reads max_credits \"100\" (a string of digits) as the number 100",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			s, ok := d["max_credits"].(string)
			if !ok || s == "" || strings.Trim(s, "0123456789") != "" {
				return false
			}
			d["max_credits"] = json.Number(s)
			return true
		}),
	},
}
