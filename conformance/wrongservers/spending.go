package wrongservers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

var (
	appJobRoute   = controlRoute(http.MethodPost, "/workspaces/[^/]+/generations")
	generationGet = route(http.MethodGet, "/generations/[^/]+")
	listGens      = route(http.MethodGet, "/generations")
)

// workspaceInPath is the workspace id of a control path /workspaces/{id}/...
func workspaceInPath(r *http.Request) string {
	rest := strings.TrimPrefix(r.URL.Path, controlPrefix+"/workspaces/")
	ws, _, _ := strings.Cut(rest, "/")
	return ws
}

// appJobs remembers the generations started in the app, by workspace.
type appJobs struct {
	mu   sync.Mutex // guards byWS
	byWS map[string][]string
}

func (j *appJobs) add(ws string, ids []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.byWS == nil {
		j.byWS = map[string][]string{}
	}
	j.byWS[ws] = append(j.byWS[ws], ids...)
}

func (j *appJobs) of(ws string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.byWS[ws]...)
}

// held sums the holds of the app jobs of key's workspace, read with key.
func (j *appJobs) held(next http.Handler, r *http.Request, env *Env, key string) int64 {
	var sum int64
	for _, id := range j.of(env.workspaceOf(key)) {
		_, g := callAs(next, r, http.MethodGet, apiPrefix+"/generations/"+id, key, nil)
		if n, ok := intOf(obj(obj(g, "generation"), "credits")["credits_held"]); ok {
			sum += n
		}
	}
	return sum
}

// watchAppJobs records the app jobs the control API starts, then hands every call to inner.
func watchAppJobs(jobs *appJobs, next http.Handler, inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !appJobRoute(r) {
			inner.ServeHTTP(w, r)
			return
		}
		a := serve(next, r)
		if d, ok := a.doc(); ok && a.status == http.StatusCreated {
			var ids []string
			for _, v := range asSlice(d["generation_ids"]) {
				if s, ok := v.(string); ok {
					ids = append(ids, s)
				}
			}
			jobs.add(workspaceInPath(r), ids)
		}
		a.send(w)
	})
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// spendingServers get holds, charges, limits, prices and the submit slot wrong.
var spendingServers = []Server{
	{
		Name: "submit-app-job-holds-slot", Rules: []string{"SUBMIT-021"},
		Mistake: "the one-job slot is kept per workspace, so a job started in the app blocks the keys' submits with submission_in_flight",
		API: func(env *Env, next http.Handler) http.Handler {
			jobs := &appJobs{}
			inner := guard(submitRoute, func(env *Env, next http.Handler, r *http.Request) *answer {
				key := presented(r)
				for _, id := range jobs.of(env.workspaceOf(key)) {
					if st, run := running(next, r, key, id); run {
						a := refusal(http.StatusConflict, "", false, nil)
						refuseInFlight(a, id, st)
						return a
					}
				}
				return nil
			})(env, next)
			return watchAppJobs(jobs, next, inner)
		},
	},
	{
		Name: "ledger-caps-on-app-jobs", Rules: []string{"LEDGER-015"},
		Mistake: "the workspace's per-generation and daily caps are applied to jobs started in the app too",
		API: guard(appJobRoute, func(env *Env, next http.Handler, r *http.Request) *answer {
			req, ok := decodeObject(requestBody(r))
			key := env.keyOfWorkspace(workspaceInPath(r))
			if !ok || key == "" {
				return nil
			}
			cfg := req["config"]
			if n, ok := intOf(req["variants"]); ok && n > 1 {
				if c, ok := cfg.(map[string]any); ok {
					c2 := map[string]any{}
					for k, v := range c {
						c2[k] = v
					}
					c2["count"] = n
					cfg = c2
				}
			}
			ea, est := callAs(next, r, http.MethodPost, apiPrefix+"/estimates", key, map[string]any{"capability_id": req["capability_id"], "config": cfg})
			need, ok := intOf(est["max_credits_needed"])
			if ea.status != http.StatusOK || !ok {
				return nil
			}
			_, bal := callAs(next, r, http.MethodGet, apiPrefix+"/credits/balance", key, nil)
			lim := obj(bal, "limits")
			if per, ok := intOf(lim["per_generation_credits"]); ok && need > per {
				return refusal(http.StatusPaymentRequired, "spend_limit_exceeded", false, map[string]any{"limit": map[string]any{
					"bound_by": "org_per_generation", "limit_credits": per, "remaining_credits": per}})
			}
			if left, ok := intOf(lim["daily_remaining_credits"]); ok && need > left {
				day, _ := intOf(lim["daily_credits"])
				return refusal(http.StatusPaymentRequired, "spend_limit_exceeded", false, map[string]any{"limit": map[string]any{
					"bound_by": "org_daily", "limit_credits": day, "remaining_credits": left}})
			}
			return nil
		}),
	},
	{
		Name: "ledger-app-holds-in-daily-window", Rules: []string{"LEDGER-015", "LEDGER-016"},
		Mistake: "the daily window sums every hold of the workspace, app jobs included, so app jobs eat the agents' daily limit",
		API: func(env *Env, next http.Handler) http.Handler {
			jobs := &appJobs{}
			inner := answers(balanceRoute, func(env *Env, r *http.Request, a *answer) {
				d, ok := a.doc()
				lim := obj(d, "limits")
				if !ok || lim == nil {
					return
				}
				key := presented(r)
				held := jobs.held(next, r, env, key)
				if held == 0 {
					return
				}
				spent, _ := intOf(lim["daily_spent_credits"])
				left, _ := intOf(lim["daily_remaining_credits"])
				lim["daily_spent_credits"] = spent + held
				lim["daily_remaining_credits"] = max(left-held, 0)
				a.setDoc(d)
			})(env, next)
			inner = guard(submitRoute, func(env *Env, _ http.Handler, r *http.Request) *answer {
				// The same sum refuses agent submits once app jobs used the day.
				key := presented(r)
				held := jobs.held(next, r, env, key)
				if held == 0 {
					return nil
				}
				_, bal := callAs(next, r, http.MethodGet, apiPrefix+"/credits/balance", key, nil)
				lim := obj(bal, "limits")
				left, ok := intOf(lim["daily_remaining_credits"])
				req, _ := decodeObject(requestBody(r))
				mc, _ := intOf(req["max_credits"])
				if ok && mc > 0 && left-held < mc {
					day, _ := intOf(lim["daily_credits"])
					return refusal(http.StatusPaymentRequired, "spend_limit_exceeded", false, map[string]any{"limit": map[string]any{
						"bound_by": "org_daily", "limit_credits": day, "remaining_credits": max(left-held, 0)}})
				}
				return nil
			})(env, inner)
			return watchAppJobs(jobs, next, inner)
		},
	},
	{
		Name: "ledger-zero-limit-unlimited", Rules: []string{"LEDGER-012"},
		Mistake: "a limit of 0 is read as \"not set\" (a falsy zero), so 0 means the default or no limit instead of no spend",
		API: rewriteBody(func(r *http.Request) bool {
			return controlRoute("", "/workspaces(/[^/]+)?")(r) || controlRoute("", "/workspaces/[^/]+/keys")(r) || controlRoute(http.MethodPatch, "/keys/[^/]+")(r)
		}, func(d map[string]any) bool {
			changed := false
			if lim := obj(d, "limits"); lim != nil {
				for _, k := range []string{"per_generation_credits", "daily_credits"} {
					if n, ok := intOf(lim[k]); ok && n == 0 {
						lim[k] = nil
						changed = true
					}
				}
			}
			if n, ok := intOf(d["budget_credits"]); ok && n == 0 {
				d["budget_credits"] = nil
				changed = true
			}
			return changed
		}),
	},
	{
		Name: "ledger-lowered-cap-fails-running-job", Rules: []string{"LEDGER-014"},
		Mistake: "caps are enforced on running work too: lowering a workspace limit fails the jobs that now exceed it",
		API: func(env *Env, next http.Handler) http.Handler {
			var mu sync.Mutex
			started := map[string][]string{} // workspace -> generation ids
			patch := controlRoute(http.MethodPatch, "/workspaces/[^/]+")
			keyPatch := controlRoute(http.MethodPatch, "/keys/[^/]+")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case submitRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						ws := env.workspaceOf(presented(r))
						mu.Lock()
						for _, v := range asSlice(d["generation_ids"]) {
							if s, ok := v.(string); ok {
								started[ws] = append(started[ws], s)
							}
						}
						mu.Unlock()
					}
					a.send(w)
				case patch(r) || keyPatch(r):
					a := serve(next, r)
					d, _ := a.doc()
					ws, _ := d["workspace_id"].(string)
					if success(a.status) && ws != "" {
						mu.Lock()
						ids := append([]string(nil), started[ws]...)
						mu.Unlock()
						auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
						for _, id := range ids {
							callAs(next, r, http.MethodPost, controlPrefix+"/generations/"+id+"/fail", auth, map[string]any{"code": "unknown", "message": "The workspace limit was lowered below the hold."})
						}
					}
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
	{
		Name: "ledger-failed-charged-hold", Rules: []string{"CORE-021"},
		Mistake: "a failed job's credits report the hold as charged (the capture runs on every terminal job)",
		API: docs(func(r *http.Request) bool { return generationGet(r) || waitRoute(r) }, success, func(_ *http.Request, _ *answer, d map[string]any) {
			g := obj(d, "generation")
			c := obj(g, "credits")
			if g["status"] == "failed" && c != nil && c["terminal"] == true {
				c["credits_charged"] = c["credits_held"]
				c["settlement"] = "captured"
			}
		}),
	},
	{
		Name: "ledger-key-remaining-ignores-spend", Rules: []string{"LEDGER-022"},
		Legal:   "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
		Mistake: "key_remaining_credits echoes the key budget without taking the key's spend off",
		API: docs(balanceRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if lim := obj(d, "limits"); lim != nil && lim["key_budget_credits"] != nil {
				lim["key_remaining_credits"] = lim["key_budget_credits"]
			}
		}),
	},
	{
		Name: "submit-identical-in-flight", Rules: []string{"SUBMIT-022"},
		Legal:   "POST /generations rule 2: a second submit while one runs gets 409 submission_in_flight; the replay field says an already running job may be returned instead (SUBMIT-022, issue 35)",
		Mistake: "an identical resend while the job runs is refused as in flight instead of answering the running job as a replay",
		API: answers(submitRoute, func(_ *Env, _ *http.Request, a *answer) {
			d, ok := a.doc()
			if !ok || a.status != http.StatusCreated || d["replay"] != true {
				return
			}
			refuseInFlight(a, d["generation_id"], "queued")
		}),
	},
	{
		Name: "submit-replay-other-job", Rules: []string{"SUBMIT-022"},
		Mistake: "an identical resend while the job runs answers replay true but names another generation than the running one",
		API: answers(submitRoute, func(_ *Env, _ *http.Request, a *answer) {
			d, ok := a.doc()
			if !ok || a.status != http.StatusCreated || d["replay"] != true {
				return
			}
			other := "gen_" + strings.Repeat("5e", 16)
			d["generation_id"] = other
			d["generation_ids"] = []any{other}
			a.setDoc(d)
		}),
	},
	{
		Name: "submit-in-flight-status-running", Rules: []string{"ERR-015"},
		Mistake: "in_flight.status reports the slot's state (\"running\"), not the generation's status",
		API: errorsWith(submitRoute, "submission_in_flight", func(_ *http.Request, _ *answer, e map[string]any) {
			if f := obj(e, "in_flight"); f != nil {
				f["status"] = "running"
			}
		}),
	},
	{
		Name: "submit-slot-until-finished", Rules: []string{"SUBMIT-020"},
		Mistake: "the key's slot is held until the job finishes; the 10-minute release is not implemented",
		API:     inFlightOn(accepted),
	},
	{
		Name: "est-pad-on-total", Rules: []string{"EST-003"},
		Legal:   "Estimate answer: max_credits_needed is \"price plus hold pad on every take\"; where the rounding up happens is not said (rounding place left open)",
		Mistake: "the hold pad is applied to every take and rounded once on the total (ceil(N x price x 1.1)), not per take; a submit's max_credits of that total is accepted",
		API:     padOnTotal(false),
	},
	{
		Name: "est-pad-one-take", Rules: []string{"EST-003"},
		Mistake: "the hold pad is applied once, to one take only: N takes at price p need ceil(N x p + 0.1 x p), not every take padded",
		API:     padOnTotal(true),
	},
	{
		Name: "est-seconds-in-ms", Rules: []string{"EST-022"},
		Mistake: "the measured length is reported in milliseconds under seconds (the probe's unit)",
		API: docs(estimate, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if s, ok := numberOf(d["seconds"]); ok {
				d["seconds"] = s * 1000
			}
		}),
	},
	{
		Name: "est-deprecated-name-refused", Rules: []string{"EST-015", "VER-007"},
		Mistake: "the estimate validates config against the current names only: a deprecated name is an unknown key",
		API: func(env *Env, next http.Handler) http.Handler {
			var aliases memo[bool] // capability_id + "/" + alias
			put := controlRoute(http.MethodPut, "/capabilities/[^/]+/aliases/[^/]+")
			del := controlRoute(http.MethodDelete, "/capabilities/[^/]+/aliases/[^/]+")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case put(r) || del(r):
					a := serve(next, r)
					p := strings.TrimPrefix(r.URL.Path, controlPrefix+"/capabilities/")
					capID, rest, _ := strings.Cut(p, "/aliases/")
					if success(a.status) {
						aliases.put(capID+"/"+rest, put(r))
					}
					a.send(w)
				case estimate(r):
					req, _ := decodeObject(requestBody(r))
					capID, _ := req["capability_id"].(string)
					for k := range obj(req, "config") {
						if on, _ := aliases.get(capID + "/" + k); on {
							refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "config." + k}).send(w)
							return
						}
					}
					next.ServeHTTP(w, r)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
	{
		Name: "est-missing-upload-invalid", Rules: []string{"EST-017", "EST-018"},
		Mistake: "an estimate naming an upload that is not the caller's (or none) is refused as a bad config, 400, not 404",
		API:     recode(estimate, "not_found", http.StatusBadRequest, "invalid_config", false),
	},
	{
		Name: "est-unfinished-upload-not-found", Rules: []string{"EST-019"},
		Mistake: "an upload that is reserved but not finalized does not exist yet for the estimate: 404 not_found",
		API:     recode(estimate, "input_not_ready", http.StatusNotFound, "not_found", false),
	},
	{
		Name: "var-count-beats-variants", Rules: []string{"VAR-005"},
		Mistake: "config.count wins over variants when both are sent (variants is dropped)",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			if _, ok := obj(d, "config")["count"]; ok && d["variants"] != nil {
				delete(d, "variants")
				return true
			}
			return false
		}),
	},
	{
		Name: "var-last-sibling-first", Rules: []string{"VAR-007"},
		Mistake: "generation_id on a variants submit names the last sibling made, not the first",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if ids := asSlice(d["generation_ids"]); len(ids) > 1 {
				d["generation_id"] = ids[len(ids)-1]
			}
		}),
	},
	{
		Name: "var-talking-actor-variants-dropped", Rules: []string{"VAR-011", "TALK-017"},
		Mistake: "variants on a talking actor is silently ignored (one take made) instead of refused",
		API: rewriteBody(func(r *http.Request) bool { return submitRoute(r) || estimate(r) }, func(d map[string]any) bool {
			id, _ := d["capability_id"].(string)
			if strings.HasPrefix(id, "actor_") && d["variants"] != nil {
				delete(d, "variants")
				return true
			}
			return false
		}),
	},
	{
		Name: "talk-config-voice-first", Rules: []string{"TALK-007"},
		Mistake: "config.voiceId is read before the body voice_id (the config is parsed first and wins)",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			v, ok := obj(d, "config")["voiceId"].(string)
			if !ok || d["voice_id"] == nil {
				return false
			}
			d["voice_id"] = v
			return true
		}),
	},
	{
		Name: "talk-emotion-tags-refused", Rules: []string{"TALK-018"},
		Mistake: "a script holding [[...]] tags is refused as invalid (the tags look like template markup)",
		API: guard(func(r *http.Request) bool { return submitRoute(r) || estimate(r) }, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			req, _ := decodeObject(requestBody(r))
			if s, _ := obj(req, "config")["script"].(string); strings.Contains(s, "[[") {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "config.script"})
			}
			return nil
		}),
	},
	{
		Name: "submit-slot-per-workspace", Rules: []string{"SUBMIT-037"},
		Mistake: "the one-job slot is kept per workspace: while one key's job runs, another key's different request gets 409 submission_in_flight",
		API: func(env *Env, next http.Handler) http.Handler {
			var last memo[string] // workspace -> its last accepted job
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				requestBody(r)
				key := presented(r)
				ws := env.workspaceOf(key)
				if id, ok := last.get(ws); ok && ws != "" {
					if st, run := running(next, r, key, id); run {
						a := refusal(http.StatusConflict, "", false, nil)
						refuseInFlight(a, id, st)
						a.send(w)
						return
					}
				}
				a := serve(next, r)
				if d, ok := a.doc(); ok && accepted(a, d) && ws != "" {
					if id, ok := d["generation_id"].(string); ok {
						last.put(ws, id)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "ledger-daily-default-2500", Rules: []string{"LEDGER-009"},
		Mistake: "the default workspace daily limit enforced is 2500 credits, while the balance shows the documented 2000",
		API: func(_ *Env, next http.Handler) http.Handler {
			createWS := controlRoute(http.MethodPost, "/workspaces")
			patchWS := controlRoute(http.MethodPatch, "/workspaces/[^/]+")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case createWS(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						if id, ok := d["workspace_id"].(string); ok {
							controlCall(next, r, http.MethodPatch, "/workspaces/"+id, map[string]any{"limits": map[string]any{"daily_credits": realDaily}})
						}
					}
					a.send(w)
				case patchWS(r):
					if d, ok := decodeObject(requestBody(r)); ok {
						if l := obj(d, "limits"); l != nil {
							if v, has := l["daily_credits"]; has && v == nil {
								l["daily_credits"] = realDaily
								if b, err := json.Marshal(d); err == nil {
									setRequestBody(r, b)
								}
							}
						}
					}
					next.ServeHTTP(w, r)
				case balanceRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusOK {
						l := obj(d, "limits")
						if n, ok := intOf(l["daily_credits"]); ok && n == realDaily {
							l["daily_credits"] = json.Number(formatInt(shownDaily))
							if spent, ok := intOf(l["daily_spent_credits"]); ok {
								l["daily_remaining_credits"] = json.Number(formatInt(max(0, shownDaily-spent)))
							}
							a.setDoc(d)
						}
					}
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
}

// numberOf reads a JSON number as float64.
func numberOf(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// controlCall makes a control call of its own to next, with r's Authorization (the control token).
func controlCall(next http.Handler, r *http.Request, method, path string, body any) *answer {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(r.Context(), method, "http://"+r.Host+controlPrefix+path, bytes.NewReader(b))
	if err != nil {
		return &answer{header: http.Header{}, status: http.StatusInternalServerError}
	}
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	req.Header.Set("Content-Type", "application/json")
	return serve(next, req)
}

// realDaily and shownDaily are the daily limit ledger-daily-default-2500 enforces and the one it
// shows on the balance (the documented default).
const realDaily, shownDaily = 2500, 2000

// padOnTotal rewrites the estimate of config.count N >= 2: max_credits_needed becomes the total
// rounded once, ceil(N x price x 1.1) (or, oneTake, the pad of one take only: ceil(N x price + 0.1
// x price)), the submit side kept consistent (padRewrite).
func padOnTotal(oneTake bool) Wrap {
	return padRewrite(false, func(req map[string]any, price float64, _ int64) (int64, bool) {
		n, ok := intOf(obj(req, "config")["count"])
		if !ok || n < 2 {
			return 0, false
		}
		// price is the total of the N takes; in hundredths of a credit, rounded to the nearest.
		if oneTake {
			return ceilDiv(int64(price*100+0.5)+int64(price*10/float64(n)+0.5), 100), true
		}
		return ceilDiv(int64(price*110+0.5), 100), true
	})
}

// padRewrite rewrites a successful estimate's max_credits_needed to what pad makes of the request,
// the price (credits) and the mock's value (ok false: left alone), and keeps the submit side
// consistent with it: a max_credits from that value up to the mock's is raised to the mock's on
// the way in, a max_credits_exceeded refusal's required_credits of the mock's value is answered as
// that value, and, with showHold, so is an accepted submit's credits_held.
func padRewrite(showHold bool, pad func(req map[string]any, price float64, need int64) (int64, bool)) Wrap {
	var caps memo[[2]int64] // capability_id + config -> {rewritten, mock's per-take value}
	keyOf := func(req map[string]any) string {
		cfg := map[string]any{}
		for k, v := range obj(req, "config") {
			cfg[k] = v
		}
		if v, ok := req["variants"]; ok {
			cfg["count"] = v // a submit's variants are estimated as config.count
		}
		b, _ := json.Marshal(cfg)
		id, _ := req["capability_id"].(string)
		return id + " " + string(b)
	}
	est := exchanges(estimate, func(_ *Env, req map[string]any, a *answer) {
		d, ok := a.doc()
		if !ok || a.status != http.StatusOK {
			return
		}
		price, ok := numberOf(d["credits"])
		mock, okNeed := intOf(d["max_credits_needed"])
		if !ok || !okNeed {
			return
		}
		want, ok := pad(req, price, mock)
		if !ok {
			return
		}
		caps.put(keyOf(req), [2]int64{want, mock})
		d["max_credits_needed"] = json.Number(formatInt(want))
		a.setDoc(d)
	})
	in := rewriteBodyWith(submitRoute, func(_ *http.Request, d map[string]any) bool {
		v, ok := caps.get(keyOf(d))
		if m, isInt := intOf(d["max_credits"]); !ok || !isInt || m < v[0] || m >= v[1] {
			return false
		}
		d["max_credits"] = json.Number(formatInt(v[1]))
		return true
	})
	answered := exchanges(submitRoute, func(_ *Env, req map[string]any, a *answer) {
		d, ok := a.doc()
		v, known := caps.get(keyOf(req))
		if !ok || !known {
			return
		}
		if errorCode(d) == "max_credits_exceeded" {
			l := obj(obj(d, "error"), "limit")
			if n, isInt := intOf(l["required_credits"]); isInt && n == v[1] {
				l["required_credits"] = json.Number(formatInt(v[0]))
				a.setDoc(d)
			}
			return
		}
		if c := obj(d, "credits"); showHold && c != nil && a.status == http.StatusCreated {
			if h, isInt := intOf(c["credits_held"]); isInt && h == v[1] {
				c["credits_held"] = json.Number(formatInt(v[0]))
				a.setDoc(d)
			}
		}
	})
	return chainWraps(est, in, answered)
}
