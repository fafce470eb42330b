package wrongservers

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mediaspec/mediaspec/internal/contract"
)

var catalogueServers = []Server{
	{
		Name: "cap-detail-loose-schema", Rules: []string{"CAP-020"},
		Mistake: "config_schema is served without additionalProperties: false",
		API: docs(route(http.MethodGet, "/capabilities/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if s := obj(d, "config_schema"); s != nil {
				delete(s, "additionalProperties")
			}
		}),
	},
	{
		Name: "cap-retired-as-unknown", Rules: []string{"CAP-026"},
		Mistake: "a retired capability's refusal says capability_status unknown",
		API: errorsWith(anyAPI, "capability_unavailable", func(_ *http.Request, _ *answer, e map[string]any) {
			if e["capability_status"] == "retired" {
				e["capability_status"] = "unknown"
			}
		}),
	},
	{
		Name: "est-not-ceiling", Rules: []string{"EST-023"},
		Mistake: "a script-priced actor_ultra estimate says is_ceiling false",
		API: docs(route(http.MethodPost, "/estimates"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["is_ceiling"] == true {
				d["is_ceiling"] = false
			}
		}),
	},
	{
		Name: "est-needed-unpadded", Rules: []string{"EST-003", "LEDGER-004"},
		Mistake: "max_credits_needed is the price without the hold pad",
		API: docs(route(http.MethodPost, "/estimates"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if n, ok := intOf(d["max_credits_needed"]); ok {
				if c, err := d["credits"].(json.Number).Float64(); err == nil && n > int64(c) {
					d["max_credits_needed"] = json.Number(formatInt(int64(c)))
				}
			}
		}),
	},
	{
		Name: "voices-language-prefix", Rules: []string{"VOICE-007"},
		Mistake: "the language filter is ignored",
		API: requests(route(http.MethodGet, "/voices"), func(_ *Env, r *http.Request) {
			q := r.URL.Query()
			if q.Get("language") != "" {
				q.Del("language")
				r.URL.RawQuery = q.Encode()
			}
		}),
	},
	{
		Name: "est-seconds-always", Rules: []string{"EST-005"},
		Mistake: "seconds is sent on every estimate, 0 for images",
		API: docs(estimate, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, ok := d["seconds"]; !ok {
				d["seconds"] = json.Number("0")
			}
		}),
	},
	{
		Name: "est-clamps-count", Rules: []string{"EST-013"},
		Mistake: "config.count above the ceiling is clamped to 4 and priced",
		API: rewriteBody(estimate, func(d map[string]any) bool {
			c := obj(d, "config")
			if n, ok := intOf(c["count"]); ok && n > 4 {
				c["count"] = json.Number("4")
				return true
			}
			return false
		}),
	},
	{
		Name: "cap-cursor-not-trimmed", Rules: []string{"CAP-010"},
		Mistake: "a cursor with surrounding spaces names no capability, so the list restarts",
		API: query(capabilityList, func(q map[string][]string) bool {
			c := strings.Join(q["cursor"], "")
			if c != "" && strings.TrimSpace(c) != c {
				delete(q, "cursor")
				return true
			}
			return false
		}),
	},
	{
		Name: "cap-next-cursor-opaque", Rules: []string{"CAP-017"},
		Mistake: "next_cursor is an opaque base64 token, not the last row's capability_id",
		API: chainWraps(
			query(capabilityList, func(q map[string][]string) bool {
				b, err := base64.RawURLEncoding.DecodeString(strings.Join(q["cursor"], ""))
				if err != nil || len(b) == 0 {
					return false
				}
				q["cursor"] = []string{string(b)}
				return true
			}),
			docs(capabilityList, success, func(_ *http.Request, _ *answer, d map[string]any) {
				if c, ok := d["next_cursor"].(string); ok && c != "" {
					d["next_cursor"] = base64.RawURLEncoding.EncodeToString([]byte(c))
				}
			}),
		),
	},
	{
		Name: "cap-schema-price-x-keyword", Rules: []string{"CAP-021"},
		Mistake: "config_schema carries the unit price under an x- extension keyword (x-credits-per-unit)",
		API:     schemaOf(func(_ string, s map[string]any) { s["x-credits-per-unit"] = json.Number("12") }),
	},
	{
		Name: "cap-schema-price-nested", Rules: []string{"CAP-021"},
		Mistake: "each config_schema property carries its own unitPrice (a price nested under a property)",
		API: schemaOf(func(_ string, s map[string]any) {
			for _, p := range s["properties"].(map[string]any) {
				if m, ok := p.(map[string]any); ok {
					m["unitPrice"] = json.Number("3")
				}
			}
		}),
	},
	{
		Name: "cap-schema-price-other-name", Rules: []string{"CAP-021"},
		Mistake: "config_schema carries a read-only billing object with the cost of one unit",
		API: schemaOf(func(_ string, s map[string]any) {
			s["billing"] = map[string]any{"unit": "request", "cost": json.Number("7")}
		}),
	},
	{
		Name: "cap-schema-price-as-text", Rules: []string{"CAP-021"},
		Mistake: "config_schema states the price as text under a neutral x- keyword (x-hint: \"8 credits per image\")",
		API:     schemaOf(func(_ string, s map[string]any) { s["x-hint"] = "8 credits per image" }),
	},
	{
		Name: "talk-schema-lists-aspect-ratio", Rules: []string{"TALK-010"},
		Mistake: "actor_ultra's config_schema lists aspect_ratio, which its submit refuses as an unknown key",
		API: schemaOf(func(id string, s map[string]any) {
			if props, ok := s["properties"].(map[string]any); ok && id == "actor_ultra" {
				props["aspect_ratio"] = map[string]any{"type": "string", "enum": []any{"9:16", "16:9", "1:1"}}
			}
		}),
	},
	{
		Name: "cap-id-prefixed", Rules: []string{"ID-012"},
		Mistake: "a capability id is a prefix and 32 hex characters (cap_...), which looks like an id but is not the unprefixed slug",
		API:     renameCapability("hook_ideas", "cap_5d41402abc4b2a76b9719d911017c592"),
	},
	{
		Name: "ver-alias-past-window-accepted", Rules: []string{"VER-009"},
		Mistake: "an old config name stops being accepted only at exactly its stopping version: one whose window ended a minor version earlier is still listed and accepted",
		API: rewriteBody(aliasControl, func(d map[string]any) bool {
			if v, ok := d["stops_in"].(string); ok && contract.CompareVersions(v, "1.2.0") < 0 {
				d["stops_in"] = "1.3.0"
				return true
			}
			return false
		}),
	},
	{
		Name: "est-coerces-config", Rules: []string{"EST-012"},
		Mistake: "the estimate coerces a wrong-typed config value and fills a missing required key from the example, and prices it (submit still refuses)",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if estimate(r) {
					if body, ok := decodeObject(requestBody(r)); ok {
						id, _ := body["capability_id"].(string)
						cfg := obj(body, "config")
						if _, d := callAs(next, r, http.MethodGet, apiPrefix+"/capabilities/"+id, presented(r), nil); d != nil && cfg != nil && coerceConfig(d, cfg) {
							if b, err := json.Marshal(body); err == nil {
								setRequestBody(r, b)
							}
						}
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "preset-templates-internal-served", Rules: []string{"PRESET-016"},
		Mistake: "GET /presets/{id}/templates serves an internal preset (one withheld from agents) instead of 404 not_found",
		API: func(_ *Env, next http.Handler) http.Handler {
			templates := route(http.MethodGet, "/presets/[^/]+/templates")
			withhold := controlRoute(http.MethodPatch, "/capabilities/[^/]+")
			var withheldBy memo[string] // preset withheld through control -> the control call's Authorization
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case withhold(r):
					if d, ok := decodeObject(requestBody(r)); ok && d["offered"] == false {
						withheldBy.put(strings.TrimPrefix(r.URL.Path, controlPrefix+"/capabilities/"), r.Header.Get("Authorization"))
					}
					next.ServeHTTP(w, r)
				case templates(r):
					a := serve(next, r)
					id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, apiPrefix+"/presets/"), "/templates")
					if auth, ok := withheldBy.get(id); ok && a.status == http.StatusNotFound {
						// Offered again for this one read: the templates as if it were not withheld.
						offer := func(b bool) {
							req, _ := http.NewRequestWithContext(r.Context(), http.MethodPatch, "http://"+r.Host+controlPrefix+"/capabilities/"+id, strings.NewReader(`{"offered":`+strconv.FormatBool(b)+`}`))
							req.Header.Set("Authorization", auth)
							req.Header.Set("Content-Type", "application/json")
							serve(next, req)
						}
						offer(true)
						a = serve(next, r.Clone(r.Context()))
						offer(false)
					}
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
	{
		Name: "preset-empty-runs", Rules: []string{"PRESET-017"},
		Mistake: "the template check runs only while the preset has live templates: a preset whose templates were all withdrawn runs whatever template_id it is sent",
		API: func(_ *Env, next http.Handler) http.Handler {
			emptied := controlRoute(http.MethodDelete, "/presets/[^/]+/templates")
			type withdrawal struct {
				auth string   // the control call's Authorization
				ids  []string // the templates it withdrew
			}
			var gone memo[withdrawal] // preset emptied through control -> its withdrawal
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case emptied(r):
					a := serve(next, r)
					var resp struct {
						Withdrawn []string `json:"withdrawn"`
					}
					if a.status == http.StatusOK && json.Unmarshal(a.body, &resp) == nil && len(resp.Withdrawn) > 0 {
						id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, controlPrefix+"/presets/"), "/templates")
						gone.put(id, withdrawal{auth: r.Header.Get("Authorization"), ids: resp.Withdrawn})
					}
					a.send(w)
					return
				case submitRoute(r):
					body, ok := decodeObject(requestBody(r))
					id, _ := body["capability_id"].(string)
					wd, known := gone.get(id)
					cfg := obj(body, "config")
					if !ok || !known || cfg == nil {
						break
					}
					if _, d := callAs(next, r, http.MethodGet, apiPrefix+"/presets/"+id+"/templates", presented(r), nil); d == nil || len(rows(d, "templates")) > 0 {
						break // not empty (any more): the template check runs
					}
					// No live template, so no check: run it with one of its own, live for this submit.
					live := func(b bool) {
						req, _ := http.NewRequestWithContext(r.Context(), http.MethodPatch, "http://"+r.Host+controlPrefix+"/templates/"+wd.ids[0], strings.NewReader(`{"live":`+strconv.FormatBool(b)+`}`))
						req.Header.Set("Authorization", wd.auth)
						req.Header.Set("Content-Type", "application/json")
						serve(next, req)
					}
					cfg["template_id"] = wd.ids[0]
					if b, err := json.Marshal(body); err == nil {
						setRequestBody(r, b)
					}
					live(true)
					a := serve(next, r)
					live(false)
					a.send(w)
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "preset-coming-soon-runs", Rules: []string{"CAP-027"},
		Mistake: "a coming_soon preset is estimated and run as the preset it was made from",
		API: func(env *Env, next http.Handler) http.Handler {
			var source memo[string] // coming_soon copy -> the capability it copies
			copies := controlRoute(http.MethodPost, "/workspaces/[^/]+/capabilities")
			inner := rewriteBody(spendCall, func(d map[string]any) bool {
				id, _ := d["capability_id"].(string)
				if src, ok := source.get(id); ok && strings.HasPrefix(id, "preset_") {
					d["capability_id"] = src
					return true
				}
				return false
			})(env, next)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if copies(r) {
					if d, ok := decodeObject(requestBody(r)); ok {
						id, _ := d["capability_id"].(string)
						src, _ := d["copy_of"].(string)
						source.put(id, src)
					}
				}
				inner.ServeHTTP(w, r)
			})
		},
	},
}

// capabilityDetail matches GET /capabilities/{id}.
var capabilityDetail = route(http.MethodGet, "/capabilities/[^/]+")

// schemaOf edits the config_schema of successful capability detail answers.
func schemaOf(edit func(id string, schema map[string]any)) Wrap {
	return docs(capabilityDetail, success, func(_ *http.Request, _ *answer, d map[string]any) {
		id, _ := d["capability_id"].(string)
		if s := obj(d, "config_schema"); s != nil {
			edit(id, s)
		}
	})
}

// renameCapability shows the capability old as new in every answer and maps new back to old in
// every request (path, query and body), so that the renamed capability still works.
func renameCapability(old, new string) Wrap {
	oldJSON, newJSON := []byte(`"`+old+`"`), []byte(`"`+new+`"`)
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, apiPrefix) {
				next.ServeHTTP(w, r)
				return
			}
			r.URL.Path = strings.ReplaceAll(r.URL.Path, new, old)
			r.URL.RawPath = ""
			r.URL.RawQuery = strings.ReplaceAll(r.URL.RawQuery, new, old)
			if b := requestBody(r); bytes.Contains(b, newJSON) {
				setRequestBody(r, bytes.ReplaceAll(b, newJSON, oldJSON))
			}
			a := serve(next, r)
			a.body = bytes.ReplaceAll(a.body, oldJSON, newJSON)
			a.send(w)
		})
	}
}

// aliasControl matches the control call that installs a deprecated config name.
var aliasControl = controlRoute(http.MethodPut, "/capabilities/[^/]+/aliases/[^/]+")

// coerceConfig changes config toward the schema of the capability's detail d: a value of the wrong
// JSON type is converted (a string holding a number to the number, a number to its string, "true"
// to true) and a missing required key is filled from example_config. It reports whether it
// changed anything.
func coerceConfig(d, config map[string]any) bool {
	schema := obj(d, "config_schema")
	props := obj(schema, "properties")
	example := obj(d, "example_config")
	changed := false
	for k, v := range config {
		t, _ := obj(props, k)["type"].(string)
		switch s, isStr := v.(string); {
		case (t == "integer" || t == "number") && isStr:
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				config[k], changed = json.Number(s), true
			}
		case t == "boolean" && isStr:
			config[k], changed = s == "true", true
		case t == "string" && !isStr:
			if n, ok := v.(json.Number); ok {
				config[k], changed = n.String(), true
			}
		}
	}
	req, _ := schema["required"].([]any)
	for _, k := range req {
		name, _ := k.(string)
		if _, has := config[name]; !has {
			if ex, ok := example[name]; ok {
				config[name], changed = ex, true
			}
		}
	}
	return changed
}
