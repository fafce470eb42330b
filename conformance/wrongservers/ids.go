package wrongservers

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
)

// bgIDs and batIDs are batch ids as the mock writes them and as id-batch-prefix-bat shows them.
var (
	bgIDs  = regexp.MustCompile(`\bbg_([0-9a-f]{32})\b`)
	batIDs = regexp.MustCompile(`\bbat_([0-9a-f]{32})\b`)
)

// batchPrefixBat shows every bg_ id as bat_ in answers (bodies and Location) and maps bat_ back
// to bg_ in requests (path, query and body), so the ids still work when passed back.
var batchPrefixBat = chainWraps(
	requests(anyAPI, func(_ *Env, r *http.Request) {
		r.URL.Path = batIDs.ReplaceAllString(r.URL.Path, "bg_$1")
		r.URL.RawPath = ""
		r.URL.RawQuery = batIDs.ReplaceAllString(r.URL.RawQuery, "bg_$1")
		if b := requestBody(r); batIDs.Match(b) {
			setRequestBody(r, batIDs.ReplaceAll(b, []byte("bg_$1")))
		}
	}),
	answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
		if l := a.header.Get("Location"); l != "" {
			a.header.Set("Location", bgIDs.ReplaceAllString(l, "bat_$1"))
		}
		if bytes.Contains(a.body, []byte("bg_")) {
			a.body = bgIDs.ReplaceAll(a.body, []byte("bat_$1"))
		}
	}),
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
		// Caught first by the description check of the submit answer's pattern: charged to ID-003,
		// the rule that states the bg_ prefix, not to the submit answer's shape rule (SUBMIT-003).
		Name: "id-batch-prefix-bat", Rules: []string{"ID-003"},
		Mistake: "batch ids are written bat_<32 hex> instead of bg_<32 hex> (mapped back in requests)",
		API:     batchPrefixBat,
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
