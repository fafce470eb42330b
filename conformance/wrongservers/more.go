package wrongservers

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// filesRoute matches file links (served by the mock outside /api/v1, through the proxy).
func filesRoute(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/files/") }

// rewriteBody changes the JSON object body of matching requests.
func rewriteBody(m matcher, edit func(d map[string]any) bool) Wrap {
	return requests(m, func(_ *Env, r *http.Request) {
		d, ok := decodeObject(requestBody(r))
		if !ok || !edit(d) {
			return
		}
		if b, err := json.Marshal(d); err == nil {
			setRequestBody(r, b)
		}
	})
}

var otherServers = []Server{
	{
		Name: "id-uppercase-hex", Rules: []string{"ID-002", "ID-001"},
		Mistake: "generation ids are written with uppercase hex on the submit answer",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if id, ok := d["generation_id"].(string); ok {
				d["generation_id"] = "gen_" + strings.ToUpper(strings.TrimPrefix(id, "gen_"))
			}
		}),
	},
	{
		Name: "id-webhook-id-short", Rules: []string{"ID-008"},
		Mistake: "webhook ids are a 16-hex-character prefix of the stored id",
		API: docs(route("", "/webhooks"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if w := obj(d, "webhook"); w != nil {
				if id, ok := w["webhook_id"].(string); ok && len(id) > 19 {
					w["webhook_id"] = id[:19]
				}
			}
		}),
	},
	{
		Name: "check-config-before-max-credits", Rules: []string{"CHECK-007", "CHECK-001"},
		Mistake: "the spend caps are checked before max_credits (a per-generation cap refusal wins over max_credits_exceeded)",
		API: errorsWith(submitRoute, "max_credits_exceeded", func(_ *http.Request, a *answer, e map[string]any) {
			if l := obj(e, "limit"); l != nil {
				if n, ok := intOf(l["required_credits"]); ok && n > 600 {
					e["code"] = "spend_limit_exceeded"
					l["bound_by"] = "org_per_generation"
					l["limit_credits"], l["remaining_credits"] = json.Number("600"), json.Number("600")
					delete(l, "required_credits")
				}
			}
		}),
	},
	{
		Name: "check-body-after-scope-missing", Rules: []string{"CHECK-003", "AUTH-029"},
		Mistake: "the body is parsed before the scope check: a read-only key with malformed JSON gets 400",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, apiPrefix+"/") && env.readOnly(presented(r)) {
					b := requestBody(r)
					var v any
					if len(b) > 0 && json.Unmarshal(b, &v) != nil {
						writeError(w, http.StatusBadRequest, "invalid_config", "The body is not valid JSON.", "body")
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "rate-no-retry-after", Rules: []string{"ERR-043", "ERR-009", "RATE-013"},
		Mistake: "a bucket refusal carries neither retry_after_seconds nor Retry-After",
		API: errorsWith(anyAPI, "rate_limited", func(_ *http.Request, a *answer, e map[string]any) {
			delete(e, "retry_after_seconds")
			a.header.Del("Retry-After")
		}),
	},
	{
		Name: "rate-webhook-list-manage", Rules: []string{"RATE-006"},
		Mistake: "GET /webhooks is counted in the webhook_manage bucket (20 a minute) with the writes",
		API: func(_ *Env, next http.Handler) http.Handler {
			var mu sync.Mutex // guards calls
			calls := map[string]int{}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !webhookList(r) && !registerRoute(r) && !deleteRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				k := presented(r)
				mu.Lock()
				calls[k]++
				n := calls[k]
				mu.Unlock()
				if n > 20 && !webhookList(r) {
					w.Header().Set("Retry-After", "60")
					b, _ := json.Marshal(map[string]any{"error": map[string]any{"ok": false, "code": "rate_limited", "message": "Over the webhook_manage rate limit.", "retryable": true, "credits_charged": 0, "retry_after_seconds": 60}})
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write(b)
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "talk-alias-accepted", Rules: []string{"TALK-011"},
		Mistake: "talking_actor is accepted as an alias of actor_ultra",
		API: chainWraps(
			rewriteBody(route(http.MethodPost, "/(estimates|generations)"), func(d map[string]any) bool {
				if d["capability_id"] == "talking_actor" {
					d["capability_id"] = "actor_ultra"
					return true
				}
				return false
			}),
			requests(route(http.MethodGet, "/capabilities/talking_actor"), func(_ *Env, r *http.Request) {
				r.URL.Path = apiPrefix + "/capabilities/actor_ultra"
				r.URL.RawPath = ""
			}),
		),
	},
	{
		Name: "talk-aspect-ratio-ignored", Rules: []string{"TALK-010"},
		Mistake: "actor_ultra silently drops config.aspect_ratio instead of refusing it",
		API: rewriteBody(route(http.MethodPost, "/(estimates|generations)"), func(d map[string]any) bool {
			c := obj(d, "config")
			if d["capability_id"] == "actor_ultra" && c != nil && c["aspect_ratio"] != nil {
				delete(c, "aspect_ratio")
				return true
			}
			return false
		}),
	},
	{
		Name: "fromurl-location-header", Rules: []string{"FROMURL-001"},
		Mistake: "an import answers with a Location header",
		API:     setHeader(route(http.MethodPost, "/uploads/from-url"), http.StatusCreated, "Location", apiPrefix+"/assets/"+zeroAsset),
	},
	{
		Name: "fromurl-strips-unknown-keys", Rules: []string{"FROMURL-002"},
		Mistake: "unknown keys of the import body are ignored",
		API: rewriteBody(route(http.MethodPost, "/uploads/from-url"), func(d map[string]any) bool {
			changed := false
			for k := range d {
				if k != "url" {
					delete(d, k)
					changed = true
				}
			}
			return changed
		}),
	},
	{
		Name: "wf-invoke-no-location", Rules: []string{"WF-004", "ID-007"},
		Mistake: "a template invoke answers without a Location header",
		API:     setHeader(route(http.MethodPost, "/workflows/.+/invoke"), 0, "Location", ""),
	},
	{
		Name: "wf-invoke-charged-zero", Rules: []string{"WF-005"},
		Mistake: "the invoke answer says credits_charged 0 instead of null",
		API: docs(route(http.MethodPost, "/workflows/.+/invoke"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "wf-template-schema-loose", Rules: []string{"WF-002"},
		Mistake: "workflow template inputs_schema is served without additionalProperties: false",
		API: pageOf(route(http.MethodGet, "/workflows/templates"), "templates", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if t, ok := v.(map[string]any); ok {
					if s := obj(t, "inputs_schema"); s != nil {
						delete(s, "additionalProperties")
					}
				}
			}
			return list
		}),
	},
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
		Name: "health-not-ready-envelope", Rules: []string{"HEALTH-003"},
		Mistake: "a not-ready probe answers the error envelope",
		API: answers(route(http.MethodGet, "/health/ready"), func(_ *Env, _ *http.Request, a *answer) {
			if a.status == http.StatusServiceUnavailable {
				a.setDoc(map[string]any{"error": map[string]any{"ok": false, "code": "internal_error", "message": "Not ready.", "retryable": true, "credits_charged": 0}})
			}
		}),
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
		Name: "link-no-attachment", Rules: []string{"LINK-006"},
		Mistake: "download=1 is ignored: no Content-Disposition: attachment",
		API:     setHeader(filesRoute, 0, "Content-Disposition", ""),
	},
	{
		Name: "link-octet-stream", Rules: []string{"LINK-007"},
		Mistake: "file links answer application/octet-stream",
		API:     setHeader(filesRoute, http.StatusOK, "Content-Type", "application/octet-stream"),
	},
	{
		Name: "asset-download-hour", Rules: []string{"ASSET-009"},
		Mistake: "the download link answer says expires_in_seconds 3600",
		API: docs(route(http.MethodGet, "/assets/[^/]+/download"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["expires_in_seconds"] = json.Number("3600")
		}),
	},
	{
		Name: "actors-newest-last", Rules: []string{"ACTOR-011"},
		Mistake: "actors are listed in reverse: the platform cast before the workspace's own",
		API:     reversed(actorList, "actors"),
	},
	{
		Name: "actors-search-wildcards", Rules: []string{"ACTOR-008"},
		Mistake: "% and _ in search are SQL LIKE wildcards",
		API: requests(actorList, func(_ *Env, r *http.Request) {
			q := r.URL.Query()
			if s := q.Get("search"); strings.ContainsAny(s, "%_") {
				q.Set("search", strings.NewReplacer("%", "", "_", "").Replace(s))
				r.URL.RawQuery = q.Encode()
			}
		}),
	},
	{
		Name: "preset-templates-route-no-preview", Rules: []string{"PRESET-011"},
		Mistake: "GET /presets/{id}/templates leaves out preview_url (only the preset list carries it)",
		API: docs(route(http.MethodGet, "/presets/[^/]+/templates"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, t := range rows(d, "templates") {
				delete(t, "preview_url")
			}
		}),
	},
}

// chainWraps applies wraps in order, the first outermost.
func chainWraps(ws ...Wrap) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		for i := len(ws) - 1; i >= 0; i-- {
			next = ws[i](env, next)
		}
		return next
	}
}
