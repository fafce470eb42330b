package wrongservers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

var (
	submitRoute = route(http.MethodPost, "/generations")
	readRoute   = route(http.MethodGet, "/generations/[^/]+")
	waitRoute   = route(http.MethodGet, "/generations/[^/]+/wait")
)

// generation is the generation object of a read or wait answer.
func generation(d map[string]any) map[string]any { return obj(d, "generation") }

var generationServers = []Server{
	{
		Name: "submit-no-location", Rules: []string{"SUBMIT-001"},
		Mistake: "an accepted submit sends no Location header",
		API:     setHeader(submitRoute, 0, "Location", ""),
	},
	{
		Name: "submit-cacheable", Rules: []string{"SUBMIT-002"},
		Mistake: "an accepted submit says Cache-Control: private, max-age=0 instead of no-store",
		API:     setHeader(submitRoute, http.StatusCreated, "Cache-Control", "private, max-age=0"),
	},
	{
		// Caught first by the description check of the answer's headers: charged to SUBMIT-002, the
		// rule that states the header, not to the submit answer's shape rule (SUBMIT-003).
		Name: "submit-no-cache-control", Rules: []string{"SUBMIT-002"},
		Mistake: "an accepted submit sends no Cache-Control header",
		API:     setHeader(submitRoute, http.StatusCreated, "Cache-Control", ""),
	},
	{
		Name: "submit-charged-zero", Rules: []string{"SUBMIT-006"},
		Mistake: "the submit answer says credits_charged 0 instead of null",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "submit-holds-max-credits", Rules: []string{"SUBMIT-007"},
		Mistake: "credits_held echoes max_credits instead of the padded hold",
		API: exchanges(submitRoute, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			if c := obj(d, "credits"); ok && a.status == http.StatusCreated && c != nil && req["max_credits"] != nil {
				c["credits_held"] = req["max_credits"]
				a.setDoc(d)
			}
		}),
	},
	{
		Name: "submit-replay-true", Rules: []string{"SUBMIT-005"},
		Mistake: "every submit answers replay true",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["replay"] = true
		}),
	},
	{
		Name: "submit-strips-unknown-keys", Rules: []string{"SUBMIT-010", "SUBMIT-011"},
		Mistake: "unknown top-level submit keys are dropped instead of refused",
		API: requests(submitRoute, func(_ *Env, r *http.Request) {
			d, ok := decodeObject(requestBody(r))
			if !ok {
				return
			}
			known := map[string]bool{"capability_id": true, "config": true, "max_credits": true, "variants": true, "actor_id": true,
				"actor_image_asset_id": true, "voice_id": true, "approved_voice_generation_id": true}
			for k := range d {
				if !known[k] {
					delete(d, k)
				}
			}
			b, _ := json.Marshal(d)
			setRequestBody(r, b)
		}),
	},
	{
		Name: "submit-clamps-variants", Rules: []string{"VAR-002"},
		Mistake: "variants above the ceiling are clamped to 4 instead of refused",
		API: requests(submitRoute, func(_ *Env, r *http.Request) {
			d, ok := decodeObject(requestBody(r))
			if !ok {
				return
			}
			if n, ok := intOf(d["variants"]); ok && n > 4 {
				d["variants"] = json.Number("4")
				b, _ := json.Marshal(d)
				setRequestBody(r, b)
			}
		}),
	},
	{
		Name: "gen-charged-zero-while-running", Rules: []string{"GEN-015"},
		Mistake: "a running generation reads credits_charged 0 instead of null",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(generation(d), "credits"); c != nil && c["credits_charged"] == nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "gen-no-link-lifetime", Rules: []string{"GEN-024", "GEN-001", "LINK-001"},
		Mistake: "the generation read leaves out output_urls_expire_in_seconds",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			delete(d, "output_urls_expire_in_seconds")
		}),
	},
	{
		Name: "gen-link-lifetime-always", Rules: []string{"GEN-024"},
		Mistake: "output_urls_expire_in_seconds is sent even when no output has a link",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["output_urls_expire_in_seconds"] = json.Number("600")
		}),
	},
	{
		Name: "gen-error-object-on-success", Rules: []string{"GEN-010"},
		Mistake: "error is an empty {code: null, message: \"\"} object instead of null on a generation that did not fail",
		API: docs(route(http.MethodGet, "/generations/[^/]+(/wait)?"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil && g["status"] != "failed" && g["error"] == nil {
				g["error"] = map[string]any{"code": nil, "message": ""}
			}
		}),
	},
	{
		Name: "gen-completed-at-early", Rules: []string{"GEN-022"},
		Mistake: "completed_at is set at creation",
		API: docs(route(http.MethodGet, "/generations/[^/]+(/wait)?"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil && g["completed_at"] == nil {
				g["completed_at"] = g["created_at"]
			}
		}),
	},
	{
		Name: "gen-wait-timeout-504", Rules: []string{"GEN-030", "GEN-027"},
		Mistake: "a wait that times out answers 504 (the gateway's timeout)",
		API: docs(waitRoute, success, func(_ *http.Request, a *answer, d map[string]any) {
			if d["still_running"] == true {
				a.status = http.StatusGatewayTimeout
			}
		}),
	},
	{
		Name: "gen-wait-retry-after-5", Rules: []string{"GEN-029"},
		Mistake: "the wait answer says retry_after_seconds 5 while the job runs",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["still_running"] == true {
				d["retry_after_seconds"] = json.Number("5")
			}
		}),
	},
	{
		Name: "gen-wait-ms", Rules: []string{"GEN-034"},
		Mistake: "waited_seconds is fractional seconds",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if n, ok := intOf(d["waited_seconds"]); ok {
				d["waited_seconds"] = json.Number(formatInt(n) + ".25")
			}
		}),
	},
	{
		Name: "core-timestamp-no-zone", Rules: []string{"CORE-017"},
		Mistake: "created_at is written without a zone (time formatted as local 2006-01-02T15:04:05)",
		API: docs(readRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil {
				if s, ok := g["created_at"].(string); ok {
					if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
						g["created_at"] = t.Format("2006-01-02T15:04:05")
					}
				}
			}
		}),
	},
	{
		Name: "core-no-ok", Rules: []string{"CORE-002"},
		Mistake: "success answers leave out ok: true",
		API: docs(anyAPI, success, func(_ *http.Request, _ *answer, d map[string]any) {
			delete(d, "ok")
		}),
	},
	{
		Name: "core-fractional-credits", Rules: []string{"CORE-005"},
		Mistake: "credits_held is computed in floating point and sent with a fraction",
		API: docs(anyAPI, success, func(_ *http.Request, _ *answer, d map[string]any) {
			c := obj(d, "credits")
			if g := generation(d); g != nil {
				c = obj(g, "credits")
			}
			if n, ok := intOf(c["credits_held"]); ok && c != nil {
				c["credits_held"] = json.Number(formatInt(n) + ".4")
			}
		}),
	},
	{
		Name: "core-unversioned-paths", Rules: []string{"CORE-001"},
		Legal:   "the interface is served under its root ending in /api/v1; what else the origin serves is not said",
		Mistake: "the API is also served without the /api/v1 prefix",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p := r.URL.Path
				if !strings.HasPrefix(p, apiPrefix+"/") && !strings.HasPrefix(p, "/_control/") && !strings.HasPrefix(p, "/files/") && !strings.HasPrefix(p, "/upload-slots/") {
					r.URL.Path = apiPrefix + p
					r.URL.RawPath = ""
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "batch-charged-early", Rules: []string{"BATCH-009"},
		Mistake: "the batch rolls up credits_charged of the finished siblings while others still run",
		API: docs(route(http.MethodGet, "/batches/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil && c["credits_charged"] == nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "batch-running-as-partial", Rules: []string{"BATCH-002"},
		Mistake: "a batch with finished and running siblings reads partial",
		API: docs(route(http.MethodGet, "/batches/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["status"] == "running" {
				d["status"] = "partial"
			}
		}),
	},
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
		Name: "submit-replays-finished", Rules: []string{"SUBMIT-025"},
		Mistake: "the idempotency key never expires: resending a finished job's request replays it instead of starting a new one",
		API: func(_ *Env, next http.Handler) http.Handler {
			var seen memo[[]byte]
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				k := presented(r) + "\x00" + string(requestBody(r))
				if prev, ok := seen.get(k); ok {
					if d, ok := decodeObject(prev); ok {
						d["replay"] = true
						a := &answer{status: http.StatusCreated, header: http.Header{"Content-Type": {"application/json"}}}
						a.setDoc(d)
						a.send(w)
						return
					}
				}
				a := serve(next, r)
				if a.status == http.StatusCreated {
					seen.put(k, a.body)
				}
				a.send(w)
			})
		},
	},
	{
		Name: "submit-other-key-replays", Rules: []string{"SUBMIT-024"},
		Mistake: "the idempotency key is per workspace: another key's identical request replays the running job",
		API: func(_ *Env, next http.Handler) http.Handler {
			type job struct {
				key    string
				answer []byte
			}
			var running memo[job] // request body -> the submit that started it
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				key, body := presented(r), string(requestBody(r))
				a := serve(next, r)
				d, _ := a.doc()
				switch {
				case a.status == http.StatusCreated:
					running.put(body, job{key, a.body})
				case errorCode(d) == "submission_in_flight":
					if prev, ok := running.get(body); ok && prev.key != key {
						if p, ok := decodeObject(prev.answer); ok {
							p["replay"] = true
							a.status, a.header = http.StatusCreated, http.Header{"Content-Type": {"application/json"}}
							a.setDoc(p)
						}
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "gen-wait-honours-timeout", Rules: []string{"GEN-031"},
		Mistake: "a wait obeys ?timeout above 18 s: it keeps waiting (18 s at a time) until the job ends or the timeout has passed",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				t, err := strconv.Atoi(r.URL.Query().Get("timeout"))
				if !waitRoute(r) || err != nil || t <= 20 {
					next.ServeHTTP(w, r)
					return
				}
				var a *answer
				var waited int64
				for {
					a = serve(next, r.Clone(r.Context()))
					d, ok := a.doc()
					if !ok || a.status != http.StatusOK {
						break
					}
					n, _ := intOf(d["waited_seconds"])
					waited += n
					if d["still_running"] != true || waited >= int64(t) || n == 0 {
						d["waited_seconds"] = json.Number(formatInt(waited))
						a.setDoc(d)
						break
					}
				}
				a.send(w)
			})
		},
	},
}
