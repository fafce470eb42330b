package wrongservers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// pageOf changes the rows under key of matching list answers.
func pageOf(m matcher, key string, edit func(r *http.Request, d map[string]any, rows []any) []any) Wrap {
	return docs(m, success, func(r *http.Request, _ *answer, d map[string]any) {
		list, ok := d[key].([]any)
		if !ok {
			return
		}
		d[key] = edit(r, d, list)
	})
}

// skipOnCursor drops the first row of every page after the first.
func skipOnCursor(m matcher, key string) Wrap {
	return pageOf(m, key, func(r *http.Request, _ map[string]any, list []any) []any {
		if r.URL.Query().Get("cursor") != "" && len(list) > 0 {
			return list[1:]
		}
		return list
	})
}

// reversed reverses the rows of every page.
func reversed(m matcher, key string) Wrap {
	return pageOf(m, key, func(_ *http.Request, _ map[string]any, list []any) []any {
		slices.Reverse(list)
		return list
	})
}

var (
	generationList = route(http.MethodGet, "/generations")
	capabilityList = route(http.MethodGet, "/capabilities")
	presetList     = route(http.MethodGet, "/presets")
	actorList      = route(http.MethodGet, "/actors")
	voiceList      = route(http.MethodGet, "/voices")
	assetList      = route(http.MethodGet, "/assets")
)

var listServers = []Server{
	{
		Name: "list-generations-skip-row", Rules: []string{"CORE-012"},
		Mistake: "the generation list's cursor points past the next row (off by one): a walk misses a row per page",
		API:     skipOnCursor(generationList, "generations"),
	},
	{
		Name: "list-capabilities-skip-row", Rules: []string{"CORE-012", "CAP-009"},
		Mistake: "the capability list's cursor skips a row per page",
		API:     skipOnCursor(capabilityList, "capabilities"),
	},
	{
		Name: "list-voices-skip-row", Rules: []string{"CORE-012"},
		Mistake: "the voice list's offset cursor skips a row per page",
		API:     skipOnCursor(voiceList, "voices"),
	},
	{
		Name: "list-generations-oldest-first", Rules: []string{"GEN-039"},
		Mistake: "generations are listed oldest first",
		API:     reversed(generationList, "generations"),
	},
	{
		Name: "list-voices-unsorted", Rules: []string{"VOICE-011"},
		Mistake: "voices come in reverse name order",
		API:     reversed(voiceList, "voices"),
	},
	{
		Name: "list-capabilities-by-id", Rules: []string{"CAP-013"},
		Mistake: "capabilities are ordered by capability_id only, not by category first",
		API: pageOf(capabilityList, "capabilities", func(_ *http.Request, _ map[string]any, list []any) []any {
			slices.SortStableFunc(list, func(a, b any) int {
				x, _ := a.(map[string]any)["capability_id"].(string)
				y, _ := b.(map[string]any)["capability_id"].(string)
				switch {
				case x < y:
					return -1
				case x > y:
					return 1
				}
				return 0
			})
			return list
		}),
	},
	{
		Name: "list-generations-thumbnail", Rules: []string{"CORE-013"},
		Mistake: "generation rows carry a signed thumbnail link",
		API: pageOf(generationList, "generations", func(r *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok {
					row["thumbnail"] = "http://" + r.Host + "/files/thumb.jpg?sig=abc"
				}
			}
			return list
		}),
	},
	{
		Name: "list-assets-url", Rules: []string{"CORE-013", "ASSET-001"},
		Mistake: "asset rows carry their download url",
		API: pageOf(assetList, "assets", func(r *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok {
					row["url"] = "http://" + r.Host + "/files/" + stringOf(row["asset_id"])
				}
			}
			return list
		}),
	},
	{
		Name: "list-end-empty-cursor", Rules: []string{"CORE-012"},
		Mistake: "the last page says next_cursor \"\" instead of null",
		API: docs(route(http.MethodGet, "/(generations|capabilities|presets|actors|voices|assets|workflow-runs)"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if v, ok := d["next_cursor"]; ok && v == nil {
				d["next_cursor"] = ""
			}
		}),
	},
	{
		Name: "actors-total", Rules: []string{"ACTOR-001"},
		Mistake: "the actor list carries a total",
		API: docs(actorList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l, ok := d["actors"].([]any); ok {
				d["total"] = len(l)
			}
		}),
	},
	{
		Name: "voices-total-of-page", Rules: []string{"VOICE-010"},
		Mistake: "voices.total counts the page, not all matches",
		API: docs(voiceList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l, ok := d["voices"].([]any); ok {
				d["total"] = len(l)
			}
		}),
	},
	{
		Name: "presets-twenty-templates-cut-to-10", Rules: []string{"PRESET-006", "PRESET-014"},
		Mistake: "preset rows carry the first 10 templates, not 20",
		API: pageOf(presetList, "presets", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok {
					if t, ok := row["templates"].([]any); ok && len(t) > 10 {
						row["templates"] = t[:10]
					}
				}
			}
			return list
		}),
	},
	{
		Name: "presets-total-of-page", Rules: []string{"PRESET-010"},
		Mistake: "presets.total counts the page, not every visible preset",
		API: docs(presetList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l, ok := d["presets"].([]any); ok {
				d["total"] = len(l)
			}
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
		Name: "list-capabilities-limit-ignored", Rules: []string{"CAP-006", "CAP-007", "CAP-008"},
		Mistake: "the capability list ignores limit: every page holds the default 25",
		API:     limitRewrite(capabilityList, func(string, bool) (string, bool) { return "", false }),
	},
	{
		Name: "list-presets-limit-ignored", Rules: []string{"PRESET-007"},
		Mistake: "the preset list ignores limit: every page holds the default 25",
		API:     limitRewrite(presetList, func(string, bool) (string, bool) { return "", false }),
	},
	{
		Name: "list-capabilities-default-50", Rules: []string{"CAP-006", "CAP-008"},
		Mistake: "the capability list's default page size is 50, not 25",
		API:     limitRewrite(capabilityList, defaultTo50),
	},
	{
		Name: "list-presets-default-50", Rules: []string{"PRESET-007"},
		Mistake: "the preset list's default page size is 50, not 25",
		API:     limitRewrite(presetList, defaultTo50),
	},
	{
		Name: "list-capabilities-clamp-100", Rules: []string{"CAP-007"},
		Mistake: "the capability list clamps limit to 100, not 50",
		API:     clampAt100(capabilityList, "capabilities"),
	},
	{
		Name: "list-presets-clamp-100", Rules: []string{"PRESET-007"},
		Mistake: "the preset list clamps limit to 100, not 50",
		API:     clampAt100(presetList, "presets"),
	},
	{
		Name: "list-capabilities-page-one-over", Rules: []string{"CAP-006", "CAP-008"},
		Mistake: "the capability list pages one row over limit (26 by default)",
		API:     limitRewrite(capabilityList, oneOver),
	},
	{
		Name: "list-presets-page-one-over", Rules: []string{"PRESET-007"},
		Mistake: "the preset list pages one row over limit (26 by default)",
		API:     limitRewrite(presetList, oneOver),
	},
	{
		Name: "list-presets-skip-row", Rules: []string{"CORE-012", "PRESET-009"},
		Mistake: "the preset list's cursor skips a row per page",
		API:     skipOnCursor(presetList, "presets"),
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
	{
		Name: "gen-list-capability-prefix", Rules: []string{"GEN-041"},
		Mistake: "the capability_id filter of GET /generations matches ids that start with the value",
		API:     prefixFilter(generationList, "generations", "capability_id"),
	},
	{
		Name: "gen-list-hides-running", Rules: []string{"GEN-052"},
		Mistake: "GET /generations lists a job only once it finished; a running job is missing",
		API: filterRows(generationList, "generations", func(_ *http.Request, row map[string]any) bool {
			st, _ := row["status"].(string)
			return !slices.Contains(runningStatus, st)
		}),
	},
	{
		Name: "actors-search-name-only", Rules: []string{"ACTOR-007"},
		Mistake: "actor search matches the name only, not the description",
		API: filterRows(actorList, "actors", func(r *http.Request, row map[string]any) bool {
			term := strings.ToLower(r.URL.Query().Get("search"))
			n, _ := row["name"].(string)
			return term == "" || strings.Contains(strings.ToLower(n), term)
		}),
	},
	{
		Name: "actors-undocumented-filter", Rules: []string{"ACTOR-015"},
		Mistake: "GET /actors honours gender and age_band filters the interface does not have",
		API: filterRows(actorList, "actors", func(r *http.Request, row map[string]any) bool {
			q := r.URL.Query()
			for _, k := range []string{"gender", "age_band"} {
				if v := q.Get(k); v != "" && row[k] != v {
					return false
				}
			}
			return true
		}),
	},
	{
		Name: "actors-cursor-skips-ties", Rules: []string{"CORE-012"},
		Mistake: "the actor cursor is keyed on created_at alone: the next page starts strictly older, so actors made at the same instant as the page's last are skipped",
		API: func(_ *Env, next http.Handler) http.Handler {
			var createdAt memo[string] // actor id -> created_at, from the control API's answers
			var lastOf memo[string]    // next_cursor issued -> the actor id ending its page
			madeActor := controlRoute(http.MethodPost, "(/workspaces/[^/]+)?/actors")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case madeActor(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						id, _ := d["actor_id"].(string)
						at, _ := d["created_at"].(string)
						createdAt.put(id, at)
					}
					a.send(w)
				case actorList(r):
					cursor := r.URL.Query().Get("cursor")
					a := serve(next, r)
					d, ok := a.doc()
					if !ok || a.status != http.StatusOK {
						a.send(w)
						return
					}
					list, _ := d["actors"].([]any)
					if last, ok := lastOf.get(cursor); ok && cursor != "" {
						if t, ok := createdAt.get(last); ok && t != "" {
							for len(list) > 0 {
								row, _ := list[0].(map[string]any)
								id, _ := row["actor_id"].(string)
								if rt, _ := createdAt.get(id); rt != t {
									break
								}
								list = list[1:]
							}
							d["actors"] = list
						}
					}
					if nc, ok := d["next_cursor"].(string); ok && len(list) > 0 {
						if row, ok := list[len(list)-1].(map[string]any); ok {
							id, _ := row["actor_id"].(string)
							lastOf.put(nc, id)
						}
					}
					a.setDoc(d)
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
}

// limitRewrite changes the limit a matching list request sends: edit gets the value and whether
// it was sent, and answers the new value and whether to send it.
func limitRewrite(m matcher, edit func(v string, present bool) (string, bool)) Wrap {
	return requests(m, func(_ *Env, r *http.Request) {
		q := r.URL.Query()
		v, present := q.Get("limit"), q.Has("limit")
		if nv, send := edit(v, present); send {
			q.Set("limit", nv)
		} else {
			q.Del("limit")
		}
		r.URL.RawQuery = q.Encode()
	})
}

// defaultTo50 sends limit=50 where the caller sent none or one that is not a positive whole
// number (the default page), and keeps any other.
func defaultTo50(v string, present bool) (string, bool) {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); present && err == nil && n > 0 {
		return v, true
	}
	return "50", true
}

// oneOver asks for one row more than the caller did (26 for the default page).
func oneOver(v string, present bool) (string, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if !present || err != nil || n <= 0 {
		n = 25
	}
	return strconv.Itoa(n + 1), true
}

// clampAt100 answers a limit above 50 with up to 100 rows: the mock's page of 50, then the rows
// after it, read with its cursor and appended.
func clampAt100(m matcher, key string) Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := strconv.Atoi(r.URL.Query().Get("limit"))
			if !m(r) || err != nil || n <= 50 {
				next.ServeHTTP(w, r)
				return
			}
			want := min(n, 100)
			a := serve(next, r)
			d, ok := a.doc()
			for ok && success(a.status) {
				rows, _ := d[key].([]any)
				cursor, _ := d["next_cursor"].(string)
				if len(rows) >= want || cursor == "" {
					break
				}
				more := r.Clone(r.Context())
				q := more.URL.Query()
				q.Set("cursor", cursor)
				q.Set("limit", strconv.Itoa(want-len(rows)))
				more.URL.RawQuery = q.Encode()
				b := serve(next, more)
				d2, ok2 := b.doc()
				extra, _ := d2[key].([]any)
				if !ok2 || !success(b.status) || len(extra) == 0 {
					break
				}
				d[key] = append(rows, extra...)
				d["next_cursor"] = d2["next_cursor"]
			}
			if ok {
				a.setDoc(d)
			}
			a.send(w)
		})
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// filterRows keeps the rows under key of matching list answers that keep says to keep.
func filterRows(m matcher, key string, keep func(r *http.Request, row map[string]any) bool) Wrap {
	return pageOf(m, key, func(r *http.Request, _ map[string]any, list []any) []any {
		out := []any{}
		for _, v := range list {
			if row, ok := v.(map[string]any); !ok || keep(r, row) {
				out = append(out, v)
			}
		}
		return out
	})
}

// prefixFilter answers a list's filter by prefix: the filter is taken off the mock's request and
// the page is narrowed to rows whose field starts with the value (the page may come out short).
func prefixFilter(m matcher, key, param string) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			v := q.Get(param)
			if !m(r) || v == "" {
				next.ServeHTTP(w, r)
				return
			}
			q.Del(param)
			r.URL.RawQuery = q.Encode()
			filterRows(m, key, func(_ *http.Request, row map[string]any) bool {
				s, _ := row[param].(string)
				return strings.HasPrefix(s, v)
			})(env, next).ServeHTTP(w, r)
		})
	}
}

var runningStatus = []string{"queued", "rendering", "post_processing"}
