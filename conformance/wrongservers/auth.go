package wrongservers

import (
	"net/http"
	"strings"
)

// swapKey makes the mock see a generate key of the same workspace (the run's main key for an
// unknown or absent key) on matching requests that when accepts.
func swapKey(m matcher, when func(env *Env, key string) bool) Wrap {
	return requests(m, func(env *Env, r *http.Request) {
		k := presented(r)
		if !when(env, k) {
			return
		}
		if g := env.generateKey(k); g != "" {
			r.Header.Del("X-API-Key")
			r.Header.Set("Authorization", "Bearer "+g)
		}
	})
}

func noKey(_ *Env, key string) bool         { return key == "" }
func readOnlyKey(env *Env, key string) bool { return env.readOnly(key) }

// readKeyFor lets read-only keys through on the matching routes as if they held generate.
func readKeyFor(m matcher) Wrap { return swapKey(m, readOnlyKey) }

var authServers = []Server{
	{
		Name: "auth-open-balance", Rules: []string{"AUTH-001"},
		Mistake: "GET /credits/balance answers without a key (the route was left out of the auth middleware)",
		API:     swapKey(route(http.MethodGet, "/credits/balance"), noKey),
	},
	{
		Name: "auth-open-generation-read", Rules: []string{"AUTH-001"},
		Mistake: "GET /generations/{id} answers without a key",
		API:     swapKey(route(http.MethodGet, "/generations/[^/]+"), noKey),
	},
	{
		Name: "auth-read-key-submits", Rules: []string{"AUTH-016"},
		Mistake: "POST /generations accepts a read-only key (scope checked only on uploads)",
		API:     readKeyFor(route(http.MethodPost, "/generations")),
	},
	{
		Name: "auth-read-key-uploads", Rules: []string{"AUTH-017"},
		Mistake: "the upload writes accept a read-only key",
		API:     readKeyFor(route(http.MethodPost, "/uploads(/[^/]+/finalize|/from-url)?")),
	},
	{
		Name: "auth-read-key-finalize", Rules: []string{"AUTH-017"},
		Mistake: "POST /uploads/{assetId}/finalize accepts a read-only key (only the reservation checks scope)",
		API:     readKeyFor(route(http.MethodPost, "/uploads/[^/]+/finalize")),
	},
	{
		Name: "auth-read-key-webhook-writes", Rules: []string{"AUTH-018"},
		Mistake: "registering and deleting webhooks accept a read-only key",
		API:     readKeyFor(route("", "/webhooks(/[^/]+)?")),
	},
	{
		Name: "auth-read-key-invokes", Rules: []string{"AUTH-020"},
		Mistake: "the workflow invokes accept a read-only key",
		API:     readKeyFor(route(http.MethodPost, "/workflows/.+/invoke")),
	},
	{
		Name: "auth-basic-scheme", Rules: []string{"AUTH-008"},
		Mistake: "any Authorization scheme is accepted (the key taken from after the first space)",
		API: requests(anyAPI, func(env *Env, r *http.Request) {
			if a := r.Header.Get("Authorization"); a != "" && !strings.HasPrefix(a, "Bearer ") {
				r.Header.Set("Authorization", "Bearer "+env.generateKey(""))
			}
		}),
	},
	{
		Name: "auth-no-api-key-header", Rules: []string{"AUTH-007"},
		Mistake: "only the bearer scheme is read; X-API-Key is ignored",
		API: requests(anyAPI, func(_ *Env, r *http.Request) {
			r.Header.Del("X-API-Key")
		}),
	},
	{
		Name: "auth-prefix-only", Rules: []string{"AUTH-003"},
		Mistake: "any well-formed sk_live_ key is accepted (only the prefix is checked)",
		API:     swapKey(anyAPI, func(env *Env, k string) bool { return strings.HasPrefix(k, "sk_live_") && !env.known(k) }),
	},
	{
		Name: "auth-key-in-refusal", Rules: []string{"AUTH-011"},
		Mistake: "a 401 names the key it refused in error.message",
		API: func(env *Env, next http.Handler) http.Handler {
			return errorsWith(anyAPI, "not_authorized", func(r *http.Request, _ *answer, e map[string]any) {
				if k := presented(r); k != "" {
					e["message"] = "The key " + k + " is not valid."
				}
			})(env, next)
		},
	},
	{
		Name: "auth-other-workspace-forbidden", Rules: []string{"AUTH-030", "GEN-026"},
		Mistake: "a generation of another workspace answers 403 insufficient_scope instead of 404",
		API: errorsWith(route(http.MethodGet, "/generations/[^/]+"), "not_found", func(r *http.Request, a *answer, e map[string]any) {
			if strings.HasPrefix(strings.TrimPrefix(r.URL.Path, apiPrefix+"/generations/"), "gen_") {
				a.status = http.StatusForbidden
				e["code"] = "insufficient_scope"
			}
		}),
	},
}
