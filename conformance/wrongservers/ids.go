package wrongservers

import (
	"net/http"
	"strings"
)

// idServers are mistakes in ids.
var idServers = []Server{
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
}
