package wrongservers

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

var (
	capList     = route(http.MethodGet, "/capabilities")
	capDetail   = route(http.MethodGet, "/capabilities/[^/]+")
	templateGet = route(http.MethodGet, "/presets/[^/]+/templates")
	runList     = route(http.MethodGet, "/workflow-runs")
)

// notPositive reports whether a limit value is present and not a positive whole number.
func notPositive(v string) bool {
	n, err := strconv.Atoi(v)
	return v != "" && (err != nil || n < 1)
}

// dropNonPositiveLimit makes a limit of 0 or below count as omitted (the default page).
func dropNonPositiveLimit(m matcher) Wrap {
	return query(m, func(q map[string][]string) bool {
		if l := first(q, "limit"); l != "" {
			if n, err := strconv.Atoi(l); err == nil && n < 1 {
				delete(q, "limit")
				return true
			}
		}
		return false
	})
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// pagingServers get lists wrong: limits, cursors, order, filters, row fields.
var pagingServers = []Server{
	{
		Name: "cap-limit-zero-refused", Rules: []string{"CAP-008"},
		Mistake: "a limit that is not a positive whole number is refused with 400 invalid_config instead of counting as omitted",
		API: guard(capList, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			if l := r.URL.Query().Get("limit"); notPositive(l) {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "limit"})
			}
			return nil
		}),
	},
	{
		Name: "cap-blank-cursor-refused", Rules: []string{"CAP-011"},
		Mistake: "a blank cursor is refused as unreadable instead of counting as omitted",
		API: guard(capList, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			if c, ok := r.URL.Query()["cursor"]; ok && len(c) > 0 && strings.TrimSpace(c[0]) == "" {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "cursor"})
			}
			return nil
		}),
	},
	{
		Name: "cap-required-plan-dropped", Rules: []string{"CAP-004", "CAP-002"},
		Mistake: "list rows leave out required_plan (it is only on the detail)",
		API: docs(capList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, c := range rows(d, "capabilities") {
				delete(c, "required_plan")
			}
		}),
	},
	{
		Name: "cap-example-misses-required", Rules: []string{"CAP-022", "VER-013"},
		Mistake: "example_config is kept by hand and misses a key the schema now requires",
		API: docs(capDetail, success, func(_ *http.Request, _ *answer, d map[string]any) {
			ex := obj(d, "example_config")
			for _, k := range asSlice(obj(d, "config_schema")["required"]) {
				if s, ok := k.(string); ok && ex != nil {
					if _, has := ex[s]; has {
						delete(ex, s)
						return
					}
				}
			}
		}),
	},
	{
		Name: "cap-unknown-id-not-found", Rules: []string{"CAP-025", "TALK-011", "EST-026"},
		Mistake: "an unknown capability id answers the generic 404 not_found, without capability_status",
		API: errorsWith(anyAPI, "capability_unavailable", func(_ *http.Request, _ *answer, e map[string]any) {
			if e["capability_status"] == "unknown" {
				e["code"] = "not_found"
				delete(e, "capability_status")
			}
		}),
	},
	{
		Name: "gen-list-updated-since-newest-first", Rules: []string{"GEN-045"},
		Mistake: "updated_since filters but keeps the list's usual newest-first order",
		API: docs(listGens, success, func(r *http.Request, _ *answer, d map[string]any) {
			if r.URL.Query().Get("updated_since") == "" {
				return
			}
			g := asSlice(d["generations"])
			for i, j := 0, len(g)-1; i < j; i, j = i+1, j-1 {
				g[i], g[j] = g[j], g[i]
			}
		}),
	},
	{
		Name: "gen-list-created-before-inclusive", Rules: []string{"GEN-043"},
		Mistake: "created_before keeps rows created at the instant too (<= instead of <)",
		API: query(listGens, func(q map[string][]string) bool {
			v := first(q, "created_before")
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return false
			}
			q["created_before"] = []string{t.Add(time.Second).Format(time.RFC3339Nano)}
			return true
		}),
	},
	{
		Name: "gen-list-one-filter", Rules: []string{"GEN-050"},
		Mistake: "only the first filter given is applied (status, then capability_id, then source)",
		API: query(listGens, func(q map[string][]string) bool {
			seen, changed := false, false
			for _, k := range []string{"status", "capability_id", "source"} {
				if first(q, k) == "" {
					continue
				}
				if seen {
					delete(q, k)
					changed = true
				}
				seen = true
			}
			return changed
		}),
	},
	{
		Name: "presets-limit-zero-default", Rules: []string{"PRESET-007"},
		Mistake: "limit=0 or a negative limit answers the default page instead of clamping to 1",
		API:     dropNonPositiveLimit(presetList),
	},
	{
		Name: "voices-limit-zero-default", Rules: []string{"VOICE-008"},
		Mistake: "limit=0 or a negative limit answers the default page instead of clamping to 1",
		API:     dropNonPositiveLimit(voiceList),
	},
	{
		Name: "actors-limit-zero-default", Rules: []string{"ACTOR-009"},
		Mistake: "limit=0 or a negative limit answers the default page instead of clamping to 1",
		API:     dropNonPositiveLimit(actorList),
	},
	{
		Name: "presets-last-page-cursor", Rules: []string{"PRESET-008"},
		Mistake: "next_cursor is always the last row's id, also on the last page (the end shows as an empty page)",
		API: docs(presetList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			p := rows(d, "presets")
			if d["next_cursor"] == nil && len(p) > 0 {
				d["next_cursor"] = p[len(p)-1]["capability_id"]
			}
		}),
	},
	{
		Name: "preset-templates-first-20", Rules: []string{"PRESET-014"},
		Mistake: "the templates route reuses the list's query and returns the first 20 templates only",
		API: docs(templateGet, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if t := asSlice(d["templates"]); len(t) > 20 {
				d["templates"] = t[:20]
			}
		}),
	},
	{
		Name: "actors-search-case-sensitive", Rules: []string{"ACTOR-007"},
		Mistake: "search is a case-sensitive LIKE on name or description",
		API: docs(actorList, success, func(r *http.Request, _ *answer, d map[string]any) {
			s := r.URL.Query().Get("search")
			if s == "" {
				return
			}
			var keep []any
			for _, a := range rows(d, "actors") {
				name, _ := a["name"].(string)
				desc, _ := a["description"].(string)
				if strings.Contains(name, s) || strings.Contains(desc, s) {
					keep = append(keep, a)
				}
			}
			if keep == nil {
				keep = []any{}
			}
			d["actors"] = keep
		}),
	},
	{
		Name: "voices-cloned-language-default", Rules: []string{"VOICE-003"},
		Mistake: "a cloned voice gets the workspace's default language (en) instead of none",
		API: docs(voiceList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, v := range rows(d, "voices") {
				if v["is_cloned"] == true && v["language"] == nil {
					v["language"] = "en"
				}
			}
		}),
	},
	{
		Name: "actors-empty-tags-null", Rules: []string{"ACTOR-005"},
		Mistake: "an actor without tags gets tags null (an empty array is encoded as null)",
		API: docs(actorList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, a := range rows(d, "actors") {
				if len(asSlice(a["tags"])) == 0 {
					a["tags"] = nil
				}
			}
		}),
	},
	{
		Name: "assets-bad-filter-ignored", Rules: []string{"ASSET-003"},
		Legal:   "Gaps in the endpoint shapes: GET /assets request and answer shapes: not shown",
		Mistake: "an invalid kind or source filter is ignored (all rows) instead of refused",
		API: query(assetList, func(q map[string][]string) bool {
			changed := false
			if k := first(q, "kind"); k != "" && k != "image" && k != "video" && k != "audio" {
				delete(q, "kind")
				changed = true
			}
			if s := first(q, "source"); s != "" && s != "upload" && s != "output" {
				delete(q, "source")
				changed = true
			}
			return changed
		}),
	},
	{
		Name: "wf-runs-rows-with-nodes", Rules: []string{"WF-029"},
		Legal:   "Gaps in the endpoint shapes: workflow runs list answer shape: not shown",
		Mistake: "run list rows reuse the run read's shape, nodes included",
		API: docs(runList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, run := range rows(d, "runs") {
				run["nodes"] = []any{}
			}
		}),
	},
}
