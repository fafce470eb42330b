package wrongservers

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

var (
	batchRoute   = route(http.MethodGet, "/batches/[^/]+")
	runRoute     = route(http.MethodGet, "/workflow-runs/[^/]+")
	balanceRoute = route(http.MethodGet, "/credits/balance")
	estimate     = route(http.MethodPost, "/estimates")
)

// query changes the query of matching requests; edit reports whether it changed anything.
func query(m matcher, edit func(q map[string][]string) bool) Wrap {
	return requests(m, func(_ *Env, r *http.Request) {
		q := r.URL.Query()
		if edit(q) {
			r.URL.RawQuery = q.Encode()
		}
	})
}

var extraServers = []Server{
	{
		Name: "batch-variants-finished-early", Rules: []string{"BATCH-007"},
		Mistake: "variants_finished counts every sibling, running or not",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["variants_finished"] = d["variants"]
		}),
	},
	{
		Name: "batch-outputs-first-sibling", Rules: []string{"BATCH-008"},
		Mistake: "outputs_delivered is the first sibling's, not the sum",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if n, ok := intOf(d["outputs_delivered"]); ok && n > 1 {
				d["outputs_delivered"] = json.Number("1")
			}
		}),
	},
	{
		Name: "batch-wallet-in-credits", Rules: []string{"BATCH-010"},
		Mistake: "the batch credits carry wallet_balance (the read answer's object reused)",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil {
				c["wallet_balance"] = json.Number("1000")
			}
		}),
	},
	{
		Name: "ledger-balance-sum-off", Rules: []string{"LEDGER-019"},
		Mistake: "balance_credits leaves out the held credits",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["balance_credits"] = d["available_credits"]
		}),
	},
	{
		Name: "ledger-daily-remaining-negative", Rules: []string{"LEDGER-021", "LEDGER-020"},
		Mistake: "daily_remaining_credits is the daily limit, not what is left of it",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l := obj(d, "limits"); l != nil {
				l["daily_remaining_credits"] = l["daily_credits"]
			}
		}),
	},
	{
		Name: "ledger-no-budget-zero", Rules: []string{"LEDGER-011"},
		Mistake: "a key without a budget reads key_budget_credits 0 instead of null",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if l := obj(d, "limits"); l != nil && l["key_budget_credits"] == nil {
				l["key_budget_credits"] = json.Number("0")
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
		Name: "gen-age-from-wait", Rules: []string{"GEN-034"},
		Mistake: "age_seconds counts from the start of the wait call, like waited_seconds",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["age_seconds"] = d["waited_seconds"]
		}),
	},
	{
		Name: "gen-estimate-not-kept", Rules: []string{"GEN-014"},
		Mistake: "credits_estimated on the read and the wait is the padded hold, not the estimate",
		API: docs(route(http.MethodGet, "/generations/[^/]+(/wait)?"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			g := generation(d)
			if h, ok := intOf(obj(g, "credits")["credits_held"]); ok && g != nil {
				g["credits_estimated"] = json.Number(formatInt(h))
			}
		}),
	},
	{
		Name: "gen-list-bad-cursor-400", Rules: []string{"GEN-047"},
		Mistake: "an unreadable cursor answers 400 invalid_config instead of restarting",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if generationList(r) {
					if c := r.URL.Query().Get("cursor"); c != "" {
						a := serve(next, r)
						first := r.Clone(r.Context())
						q := first.URL.Query()
						q.Del("cursor")
						first.URL.RawQuery = q.Encode()
						b := serve(next, first)
						if string(a.body) == string(b.body) {
							writeError(w, http.StatusBadRequest, "invalid_config", "cursor is not valid.", "cursor")
							return
						}
						a.send(w)
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "gen-list-zoneless-accepted", Rules: []string{"GEN-044"},
		Mistake: "a zoneless created_before is read as UTC instead of refused",
		API: query(generationList, func(q map[string][]string) bool {
			v := strings.Join(q["created_before"], "")
			if strings.Contains(v, "T") && !strings.HasSuffix(v, "Z") && !strings.ContainsAny(v[strings.Index(v, "T"):], "+-") {
				q["created_before"] = []string{v + "Z"}
				return true
			}
			return false
		}),
	},
	{
		Name: "gen-list-status-ignored", Rules: []string{"GEN-040"},
		Mistake: "the status filter is ignored",
		API: query(generationList, func(q map[string][]string) bool {
			if _, ok := q["status"]; ok {
				delete(q, "status")
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
		Name: "wf-run-still-running-finished", Rules: []string{"WF-013"},
		Mistake: "still_running stays true on a partial run",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if r := obj(d, "run"); r != nil && r["status"] == "partial" {
				r["still_running"] = true
			}
		}),
	},
	{
		Name: "wf-node-credits-zero-early", Rules: []string{"WF-024"},
		Mistake: "a node's credits read 0 before it settles",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, n := range rows(obj(d, "run"), "nodes") {
				if n["credits"] == nil {
					n["credits"] = json.Number("0")
				}
			}
		}),
	},
	{
		Name: "wf-runs-list-with-nodes", Rules: []string{"WF-029"},
		Mistake: "GET /workflow-runs rows carry their nodes",
		API: pageOf(route(http.MethodGet, "/workflow-runs"), "runs", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok {
					row["nodes"] = []any{}
				}
			}
			return list
		}),
	},
	{
		Name: "upload-max-bytes-of-video", Rules: []string{"UPLOAD-004"},
		Mistake: "max_bytes_for_kind is the largest ceiling (video) for every kind",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["max_bytes_for_kind"] = json.Number("104857600")
		}),
	},
	{
		Name: "upload-kind-from-extension", Rules: []string{"UPLOAD-003"},
		Mistake: "kind comes from the filename's extension, image when it has none",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["kind"] = "image"
		}),
	},
	{
		Name: "var-variants-one-ignored", Rules: []string{"VAR-004"},
		Mistake: "variants on a capability that makes one result is dropped instead of refused",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			if d["capability_id"] == "tts" && d["variants"] != nil {
				delete(d, "variants")
				return true
			}
			return false
		}),
	},
	{
		Name: "wh-url-as-sent", Rules: []string{"WH-006"},
		Mistake: "url is stored and echoed exactly as sent, host case kept",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !registerRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				var body struct {
					URL string `json:"url"`
				}
				_ = json.Unmarshal(requestBody(r), &body)
				a := serve(next, r)
				if d, ok := a.doc(); ok && a.status == http.StatusCreated {
					if wh := obj(d, "webhook"); wh != nil && body.URL != "" {
						wh["url"] = body.URL + "/"
						a.setDoc(d)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "dlv-text-plain", Rules: []string{"DLV-001"},
		Mistake: "deliveries are sent as text/plain",
		Hooks: requests(func(*http.Request) bool { return true }, func(_ *Env, r *http.Request) {
			r.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}),
	},
	{
		Name: "evt-batch-ids-empty-strings", Rules: []string{"EVT-024"},
		Mistake: "batch_group_id and batch_index are \"\" and 0 instead of null outside a batch",
		Hooks: payload(func(_, data map[string]any) {
			if data != nil && data["generation_id"] != nil && data["batch_group_id"] == nil {
				data["batch_group_id"], data["batch_index"] = "", json.Number("0")
			}
		}),
	},
	{
		Name: "evt-no-purpose", Rules: []string{"EVT-021"},
		Mistake: "generation event data leaves out purpose",
		Hooks: payload(func(_, data map[string]any) {
			if data != nil && data["generation_id"] != nil {
				delete(data, "purpose")
			}
		}),
	},
}
