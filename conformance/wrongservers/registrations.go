package wrongservers

import (
	"encoding/json"
	"fmt"
	specjudge "github.com/mediaspec/mediaspec/spec/judge"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

var (
	fromURLRoute = route(http.MethodPost, "/uploads/from-url")
	healthRoute  = route(http.MethodGet, "/health/(live|ready)")
)

// kindCeilings are the upload size ceilings by the kind a content type names.
var kindCeilings = map[string]int64{"image": 20971520, "video": 104857600, "audio": 26214400}

// finalizeID is the asset id in a finalize path.
func finalizeID(r *http.Request) string {
	p := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, apiPrefix+"/uploads/"), "/finalize")
	return p
}

// registrationServers get uploads, imports, webhook endpoints, the live description and the health
// probes wrong.
var registrationServers = []Server{
	{
		Name: "upload-ceiling-off-by-one", Rules: []string{"UPLOAD-013", "UPLOAD-014", "UPLOAD-015"},
		Mistake: "the size ceiling is checked with > ceiling+1 (one byte over is still reserved)",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !reserveRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				d, ok := decodeObject(requestBody(r))
				ct, _ := d["content_type"].(string)
				kind, _, _ := strings.Cut(strings.ToLower(ct), "/")
				n, isInt := intOf(d["size_bytes"])
				if !ok || !isInt || n != kindCeilings[kind]+1 {
					next.ServeHTTP(w, r)
					return
				}
				d["size_bytes"] = n - 1
				b, _ := json.Marshal(d)
				setRequestBody(r, b)
				a := serve(next, r)
				if res, ok := a.doc(); ok && success(a.status) {
					res["size_bytes"] = n
					a.setDoc(res)
				}
				a.send(w)
			})
		},
	},
	{
		Name: "upload-content-type-exact", Rules: []string{"UPLOAD-010"},
		Mistake: "content_type is matched as sent: parameters and upper case make an accepted type unknown",
		API: guard(reserveRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d, _ := decodeObject(requestBody(r))
			if ct, _ := d["content_type"].(string); ct != strings.ToLower(ct) || strings.Contains(ct, ";") {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "content_type"})
			}
			return nil
		}),
	},
	{
		Name: "upload-flagged-422", Rules: []string{"UPLOAD-024"},
		Mistake: "a flagged upload is answered with 422 moderation_blocked instead of 200 with usable false",
		API: answers(finalizeRoute, func(_ *Env, _ *http.Request, a *answer) {
			if d, ok := a.doc(); ok && success(a.status) && d["scan_status"] == "flagged" {
				refuse(a, http.StatusUnprocessableEntity, "moderation_blocked", false, map[string]any{"asset_ids": []any{d["asset_id"]}})
			}
		}),
	},
	{
		Name: "upload-finalize-once", Rules: []string{"UPLOAD-027"},
		Mistake: "finalize is a one-shot state change: a second finalize of a scanned file is refused as already finalized",
		API: func(env *Env, next http.Handler) http.Handler {
			var done memo[bool]
			return answers(finalizeRoute, func(_ *Env, r *http.Request, a *answer) {
				id := finalizeID(r)
				if d, ok := a.doc(); ok && success(a.status) && d["scan_status"] != "pending" {
					if seen, _ := done.get(id); seen {
						refuse(a, http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "asset_id"})
						return
					}
					done.put(id, true)
				}
			})(env, next)
		},
	},
	{
		Name: "upload-finalize-id-format-400", Rules: []string{"UPLOAD-039"},
		Mistake: "a finalize id that is not of the ast_ form is refused as a bad request (400) before the lookup",
		API: guard(finalizeRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			if !specjudge.IsID("ast_", finalizeID(r)) {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "asset_id"})
			}
			return nil
		}),
	},
	{
		Name: "fromurl-any-scheme-fetched", Rules: []string{"FROMURL-004"},
		Legal:   "POST /uploads/from-url: request and answer shapes: not shown (a direct public link; no refusal of other schemes is given)",
		Mistake: "the import hands any URL to the fetcher; a non-http scheme fails as a fetch error (502), not a refusal",
		API: guard(fromURLRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d, _ := decodeObject(requestBody(r))
			raw, _ := d["url"].(string)
			u, err := url.Parse(raw)
			if raw != "" && err == nil && u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
				return refusal(http.StatusBadGateway, "provider_unavailable", true, nil)
			}
			return nil
		}),
	},
	{
		Name: "wh-description-200-refused", Rules: []string{"WH-018"},
		Mistake: "the description bound is checked with >= 200, so 200 characters are refused",
		API: guard(registerRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d, _ := decodeObject(requestBody(r))
			if s, ok := d["description"].(string); ok && utf8.RuneCountInString(s) >= 200 {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "description"})
			}
			return nil
		}),
	},
	{
		Name: "wh-tenth-refused", Rules: []string{"WH-019"},
		Mistake: "the endpoint cap is checked with >= 9 existing endpoints, so the 10th is refused",
		API: guard(registerRoute, func(_ *Env, next http.Handler, r *http.Request) *answer {
			_, d := callAs(next, r, http.MethodGet, apiPrefix+"/webhooks", presented(r), nil)
			if len(asSlice(d["webhooks"])) == 9 {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "url"})
			}
			return nil
		}),
	},
	{
		Name: "wh-delete-idempotent", Rules: []string{"WH-023"},
		Mistake: "DELETE is idempotent: deleting an already deleted endpoint answers 200 again",
		API: func(env *Env, next http.Handler) http.Handler {
			var gone memo[bool]
			return answers(deleteRoute, func(_ *Env, r *http.Request, a *answer) {
				id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
				if success(a.status) {
					gone.put(id, true)
					return
				}
				if g, _ := gone.get(id); g && a.status == http.StatusNotFound {
					a.status = http.StatusOK
					a.setDoc(map[string]any{"ok": true, "webhook_id": id, "deleted": true})
				}
			})(env, next)
		},
	},
	{
		Name: "ver-info-version-stale", Rules: []string{"VER-001"},
		Mistake: "the live description is a stale build whose info.version says 1.1.0",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if info := obj(d, "info"); info != nil {
				info["version"] = "1.1.0"
			}
		}),
	},
	{
		Name: "ver-both-names-one-field", Rules: []string{"VER-008"},
		Mistake: "a config with both the old and the new name is refused naming only the new one (error.field and error.message)",
		// The text says only "naming both", not where: a refusal whose message names both is legal
		// whatever error.field says, so the mistake names one name in both places.
		API: errorsWith(anyAPI, "invalid_config", func(_ *http.Request, _ *answer, e map[string]any) {
			if f := asSlice(e["fields"]); len(f) > 1 {
				// The new name: the shorter (the spec's old names are longer ones made up for it).
				name := fmt.Sprint(f[0])
				for _, n := range f[1:] {
					if s := fmt.Sprint(n); len(s) < len(name) {
						name = s
					}
				}
				e["field"] = name
				e["message"] = name + " is not valid here."
				delete(e, "fields")
			}
		}),
	},
	{
		Name: "health-checks-sent-key", Rules: []string{"HEALTH-004"},
		Legal:   "Authentication 1: the probes need no key; what a probe does with one sent is not said",
		Mistake: "the probes run the auth middleware when a key is sent: a bogus key gets 401",
		API: guard(healthRoute, func(env *Env, _ http.Handler, r *http.Request) *answer {
			if k := presented(r); (k != "" || r.Header.Get("Authorization") != "") && !env.known(k) {
				return refusal(http.StatusUnauthorized, "not_authorized", false, nil)
			}
			return nil
		}),
	},
	{
		Name: "preset-withdrawn-template-not-found", Rules: []string{"PRESET-020"},
		Mistake: "a template withdrawn since it was listed is treated as missing: 404 not_found instead of capability_unavailable",
		API: exchanges(submitRoute, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			id, _ := req["capability_id"].(string)
			if !ok || errorCode(d) != "capability_unavailable" || !strings.HasPrefix(id, "preset_") || obj(req, "config")["template_id"] == nil {
				return
			}
			e := obj(d, "error")
			e["code"] = "not_found"
			delete(e, "capability_status")
			a.setDoc(d)
		}),
	},
}
