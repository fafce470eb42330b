package wrongservers

import (
	"encoding/json"
	"net/http"
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
}
