package wrongservers

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
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
}
