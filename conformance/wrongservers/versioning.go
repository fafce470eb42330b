package wrongservers

import (
	"net/http"
	"net/url"
	"strings"
)

// versioningServers are mistakes in versioning, the live description and the health probes.
var versioningServers = []Server{
	{
		Name: "health-needs-key", Rules: []string{"HEALTH-001", "AUTH-009"},
		Mistake: "the liveness probe sits behind the auth middleware",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if route(http.MethodGet, "/health/live")(r) && presented(r) == "" {
					writeError(w, http.StatusUnauthorized, "not_authorized", "A key is required.", "")
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "ver-stale-version", Rules: []string{"VER-001"},
		Mistake: "the live description states info.version 1.1.0 (the stability reference's number)",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if i := obj(d, "info"); i != nil {
				i["version"] = "1.1.0"
			}
		}),
	},
	{
		Name: "ver-description-open", Rules: []string{"VER-002"},
		Mistake: "GET /openapi.json answers without a key",
		API:     swapKey(route(http.MethodGet, "/openapi.json"), noKey),
	},
	{
		Name: "ver-description-no-list-route", Rules: []string{"VER-004"},
		Mistake: "the live description leaves out GET /generations (the reference page says there is none)",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if p := obj(d, "paths"); p != nil {
				if g := obj(p, "/generations"); g != nil {
					delete(g, "get")
				}
			}
		}),
	},
	{
		Name: "ver-servers-root", Rules: []string{"VER-003"},
		Mistake: "the live description's servers url is the origin, without /api/v1",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["servers"] = []any{map[string]any{"url": "/"}}
		}),
	},
	{
		Name: "ver-removed-enum-to-default", Rules: []string{"VER-026"},
		Mistake: "a removed enum value is not refused: an estimate or submit sending it is quietly run with the property's default",
		API: func(env *Env, next http.Handler) http.Handler {
			var removed memo[string] // "capability/field/value" removed through control
			removal := controlRoute(http.MethodPut, "/capabilities/[^/]+/enum-removals/[^/]+/[^/]+")
			inner := rewriteBody(route(http.MethodPost, "/(estimates|generations)"), func(d map[string]any) bool {
				id, _ := d["capability_id"].(string)
				c := obj(d, "config")
				changed := false
				for k, v := range c {
					if s, ok := v.(string); ok {
						if _, gone := removed.get(id + "/" + k + "/" + s); gone {
							delete(c, k) // the property's default applies
							changed = true
						}
					}
				}
				return changed
			})(env, next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if removal(r) {
					rest := strings.TrimPrefix(r.URL.Path, controlPrefix+"/capabilities/")
					if id, tail, ok := strings.Cut(rest, "/enum-removals/"); ok {
						if v, err := url.PathUnescape(tail); err == nil {
							removed.put(id+"/"+v, "")
						}
					}
				}
				inner.ServeHTTP(w, r)
			})
		},
	},
}
