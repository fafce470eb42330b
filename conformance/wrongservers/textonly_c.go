package wrongservers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The third red-team set (issue 37, session 4): thirty wrong servers written from the interface
// text alone, before reading the suite, each a misreading of one sentence the text requires.

var (
	readyProbe     = route(http.MethodGet, "/health/ready")
	uploadCalls    = route(http.MethodPost, "/uploads(/[^/]+/finalize)?")
	presetDetail   = route(http.MethodGet, "/capabilities/preset_[^/]+")
	generationRead = func(r *http.Request) bool { return readRoute(r) || waitRoute(r) }
)

// bodyOf is the JSON object body of r (nil when not one), left readable for the mock.
func bodyOf(r *http.Request) map[string]any {
	d, _ := decodeObject(requestBody(r))
	return d
}

// schemaIn is the config_schema object of a capability detail, wherever the detail puts it (top
// level or under capability).
func schemaIn(d map[string]any) map[string]any {
	if s := obj(d, "config_schema"); s != nil {
		return s
	}
	return obj(obj(d, "capability"), "config_schema")
}

// tieSkipper pages generations with a created_at keyset that is strictly "older than the last
// row": rows sharing the previous page's last created_at are dropped from the next page.
func tieSkipper(_ *Env, next http.Handler) http.Handler {
	var lastAt memo[string] // next_cursor -> created_at of the row it follows
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !listGens(r) {
			next.ServeHTTP(w, r)
			return
		}
		a := serve(next, r)
		d, ok := a.doc()
		if !ok || !success(a.status) {
			a.send(w)
			return
		}
		list, _ := d["generations"].([]any)
		var tail string
		if n := len(list); n > 0 {
			if row, ok := list[n-1].(map[string]any); ok {
				tail, _ = row["created_at"].(string)
			}
		}
		if at, ok := lastAt.get(strings.TrimSpace(r.URL.Query().Get("cursor"))); ok && at != "" {
			for len(list) > 0 {
				row, _ := list[0].(map[string]any)
				if row == nil || row["created_at"] != at {
					break
				}
				list = list[1:]
			}
			d["generations"] = list
		}
		if c, ok := d["next_cursor"].(string); ok && tail != "" {
			lastAt.put(c, tail)
		}
		a.setDoc(d)
		a.send(w)
	})
}

// flaggedGone answers a second finalize of a flagged upload 404, as if the flagged file had been
// deleted like one that failed a check.
func flaggedGone(_ *Env, next http.Handler) http.Handler {
	var flagged memo[bool]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !finalizeRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		id := finalizeID(r)
		if _, ok := flagged.get(id); ok {
			refusal(http.StatusNotFound, "not_found", false, nil).send(w)
			return
		}
		a := serve(next, r)
		if d, ok := a.doc(); ok && success(a.status) && d["scan_status"] == "flagged" {
			flagged.put(id, true)
		}
		a.send(w)
	})
}

// unpaddedShortfall reports an insufficient_credits shortfall as the unpadded price minus the
// available credits.
func unpaddedShortfall(_ *Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !submitRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		requestBody(r)
		a := serve(next, r)
		d, ok := a.doc()
		e := obj(d, "error")
		if !ok || errorCode(d) != "insufficient_credits" {
			a.send(w)
			return
		}
		short, ok1 := intOf(e["shortfall"])
		_, bal := callAs(next, r, http.MethodGet, apiPrefix+"/credits/balance", presented(r), nil)
		avail, ok2 := intOf(bal["available_credits"])
		if ok1 && ok2 {
			hold := short + avail
			price := hold * 10 / 11 // the pad taken off again
			e["shortfall"] = max(price-avail, 0)
			a.setDoc(d)
		}
		a.send(w)
	})
}

// startsAnyway answers max_credits_exceeded but starts the job at the required cap all the same.
func startsAnyway(_ *Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !submitRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		body := bodyOf(r)
		a := serve(next, r)
		d, ok := a.doc()
		if ok && errorCode(d) == "max_credits_exceeded" && body != nil {
			if need, ok := intOf(obj(obj(d, "error"), "limit")["required_credits"]); ok {
				body["max_credits"] = need
				callAs(next, r, http.MethodPost, apiPrefix+"/generations", presented(r), body)
			}
		}
		a.send(w)
	})
}

// estimateModerated runs the content check on estimates as on submits: a prompt with the fixtures'
// marker, or a moderation block queued for the key's workspace (through control, or a test input
// on the call), refuses the estimate with 422 moderation_blocked, taking the queued block.
func estimateModerated(env *Env, next http.Handler) http.Handler {
	var queued memo[int] // workspace -> moderation blocks queued through control
	faults := controlRoute(http.MethodPost, "/faults")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case faults(r):
			if d := bodyOf(r); d["kind"] == "moderation_block" {
				ws, _ := d["workspace_id"].(string)
				n, _ := queued.get(ws)
				queued.put(ws, n+1)
			}
		case estimate(r):
			ws := env.workspaceOf(presented(r))
			n, _ := queued.get(ws)
			if n == 0 {
				ws = "" // a block queued for any workspace
				n, _ = queued.get(ws)
			}
			blocked := strings.Contains(string(requestBody(r)), "BLOCKME") ||
				strings.HasPrefix(r.Header.Get("Mediaspec-Test-Input"), "moderation_block")
			if n > 0 {
				queued.put(ws, n-1)
				blocked = true
			}
			if blocked {
				refusal(http.StatusUnprocessableEntity, "moderation_blocked", false, nil).send(w)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// textOnlyServersC are the third red team's rows.
var textOnlyServersC = []Server{
	{
		Name: "auth-ready-probe-keyed", Rules: []string{"AUTH-009"},
		Mistake: "the readiness probe sits behind the key middleware (only liveness was exempted): without a key it answers 401",
		API: guard(readyProbe, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			if presented(r) != "" {
				return nil
			}
			return refusal(http.StatusUnauthorized, "not_authorized", false, nil)
		}),
	},
	{
		Name: "auth-read-key-deletes-webhook", Rules: []string{"AUTH-018"},
		Mistake: "the generate scope is enforced on POST /webhooks only: a read-only key can delete an endpoint",
		API:     readKeyFor(deleteRoute),
	},
	{
		Name: "err-not-priced-retry", Rules: []string{"ERR-033", "ERR-005"},
		Mistake: "not_priced is marked retryable true (read as a passing pricing hiccup)",
		API:     retryable("not_priced", true),
	},

	{
		Name: "err-not-found-no-charge", Rules: []string{"ERR-007"},
		Mistake: "not_found answers leave out error.credits_charged (only spend refusals carry it)",
		API: errorsWith(anyAPI, "not_found", func(_ *http.Request, _ *answer, e map[string]any) {
			delete(e, "credits_charged")
		}),
	},
	{
		Name: "err-moderation-unavailable-500", Rules: []string{"ERR-041"},
		Mistake: "moderation_unavailable is answered with HTTP 500 (an outage of a dependency read as the service's own error)",
		API:     status("moderation_unavailable", http.StatusInternalServerError),
	},
	{
		Name: "cap-cursor-untrimmed", Rules: []string{"CAP-010"},
		Mistake: "the capability cursor is looked up untrimmed: one with surrounding spaces names no capability and restarts from the first page",
		API: query(capList, func(q map[string][]string) bool {
			c := first(q, "cursor")
			if c == strings.TrimSpace(c) || strings.TrimSpace(c) == "" {
				return false
			}
			delete(q, "cursor")
			return true
		}),
	},
	{
		Name: "cap-preset-schema-loose", Rules: []string{"CAP-020"},
		Mistake: "preset config schemas are generated from the template settings without additionalProperties false",
		API: docs(presetDetail, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if s := schemaIn(d); s != nil {
				s["additionalProperties"] = true
			}
		}),
	},
	{
		Name: "est-pad-floor", Rules: []string{"EST-003", "CORE-019"},
		Mistake: "max_credits_needed rounds the 10 percent pad down (floor) per take, while the submit holds ceil",
		API: exchanges(estimate, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			if !ok || !success(a.status) {
				return
			}
			price, ok1 := intOf(d["credits"])
			need, ok2 := intOf(d["max_credits_needed"])
			if !ok1 || !ok2 {
				return
			}
			n := int64(1)
			if c, ok := intOf(obj(req, "config")["count"]); ok && c > 0 {
				n = c
			}
			if floor := n * (price / n * 11 / 10); floor < need && floor >= price {
				d["max_credits_needed"] = floor
				a.setDoc(d)
			}
		}),
	},
	{
		Name: "est-moderation-checked", Rules: []string{"EST-011"},
		Mistake: "the estimate runs the content check too: a prompt moderation refuses (or a queued block, as a content check takes it) gets 422 instead of a price",
		API:     estimateModerated,
	},

	{
		Name: "submit-batch-cacheable", Rules: []string{"SUBMIT-002"},
		Mistake: "the fan-out submit branch writes its answer without Cache-Control: no-store",
		API: answers(submitRoute, func(_ *Env, _ *http.Request, a *answer) {
			if d, ok := a.doc(); ok && a.status == http.StatusCreated && d["batch_group_id"] != nil {
				a.header.Del("Cache-Control")
			}
		}),
	},
	{
		Name: "gen-credits-left-early", Rules: []string{"GEN-019"},
		Mistake: "credits_left is written on every read, also while the charge is not final",
		API: docs(generationRead, success, func(_ *http.Request, _ *answer, d map[string]any) {
			g := obj(d, "generation")
			c := obj(g, "credits")
			if g == nil || c == nil || c["terminal"] != false || g["credits_left"] != nil {
				return
			}
			if w, ok := c["wallet_balance"]; ok {
				g["credits_left"] = w
			} else {
				g["credits_left"] = 0
			}
		}),
	},
	{
		Name: "gen-wait-retry-after-two", Rules: []string{"GEN-029"},
		Mistake: "the wait answers retry_after_seconds 2 while the job runs (a polite pause instead of 0)",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["still_running"] == true {
				d["retry_after_seconds"] = 2
			}
		}),
	},
	{
		Name: "gen-expiry-always", Rules: []string{"GEN-024"},
		Mistake: "output_urls_expire_in_seconds 600 is a constant of every generation read, also when no output has a link",
		API: docs(generationRead, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, ok := d["output_urls_expire_in_seconds"]; !ok && d["generation"] != nil {
				d["output_urls_expire_in_seconds"] = 600
			}
		}),
	},
	{
		Name: "gen-list-cursor-tie-skip", Rules: []string{"CORE-012"},
		Mistake: "the generation list's keyset is created_at strictly before the last row's: a row sharing that created_at is skipped",
		API:     tieSkipper,
	},
	{
		Name: "actor-limit-zero-default", Rules: []string{"ACTOR-009"},
		Mistake: "an actor limit of 0 or below counts as omitted (the default page) instead of being clamped to 1",
		API: query(actorList, func(q map[string][]string) bool {
			n, err := strconv.Atoi(strings.TrimSpace(first(q, "limit")))
			if err != nil || n > 0 {
				return false
			}
			delete(q, "limit")
			return true
		}),
	},
	{
		Name: "upload-filename-255-refused", Rules: []string{"UPLOAD-008"},
		Mistake: "a filename of 255 characters is refused (the check is length < 255)",
		API: guard(reserveRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			name, _ := bodyOf(r)["filename"].(string)
			if utf8.RuneCountInString(name) != 255 {
				return nil
			}
			return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "filename"})
		}),
	},
	{
		Name: "upload-flagged-refinalize-404", Rules: []string{"UPLOAD-027"},
		Mistake: "a flagged upload is deleted like a file that failed a check: finalizing it again answers 404",
		API:     flaggedGone,
	},
	{
		Name: "batch-expiry-missing", Rules: []string{"BATCH-012", "LINK-001"},
		Mistake: "the batch read never carries output_urls_expire_in_seconds (only the generation read does)",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			delete(d, "output_urls_expire_in_seconds")
		}),
	},
	{
		Name: "wh-url-2048-refused", Rules: []string{"WH-010"},
		Mistake: "a url of exactly 2048 characters is refused (the check is length < 2048)",
		API: guard(registerRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			u, _ := bodyOf(r)["url"].(string)
			if len(u) != 2048 {
				return nil
			}
			return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "url"})
		}),
	},

	{
		Name: "evt-created-at-per-attempt", Rules: []string{"EVT-017"},
		Mistake: "the envelope created_at is stamped when each attempt is sent, not when the event happened",
		Hooks: deliveriesVia(true, func(_ *Env, d *delivery) {
			v, ok := decodeObject(d.body)
			secs, err := strconv.ParseInt(d.ts, 10, 64)
			if !ok || err != nil {
				return
			}
			v["created_at"] = time.Unix(secs, 0).UTC().Format(time.RFC3339)
			if b, err := json.Marshal(v); err == nil {
				d.body = b
			}
		}),
	},

	{
		Name: "dlv-sign-reencoded", Rules: []string{"DLV-006"},
		Mistake: "the signature is computed over the payload re-encoded (keys sorted) while the original bytes are sent",
		Hooks: signedBy(func(secret, id, ts string, body []byte) string {
			d, ok := decodeObject(body)
			if !ok {
				return signWith(secret, id, ts, body)
			}
			b, err := json.Marshal(d)
			if err != nil {
				b = body
			}
			return signWith(secret, id, ts, b)
		}),
	},
	{
		Name: "evt-batch-index-zero", Rules: []string{"EVT-024"},
		Mistake: "generation events carry batch_index 0 (an integer's zero value) instead of null when the generation is not a sibling",
		Hooks: payload(func(env, data map[string]any) {
			t, _ := env["type"].(string)
			if strings.HasPrefix(t, "generation.") && data != nil && data["batch_group_id"] == nil {
				data["batch_index"] = 0
			}
		}),
	},
	{
		Name: "wf-partial-run-failed-event", Rules: []string{"EVT-004", "EVT-031"},
		Mistake: "a run that ended partial sends workflow_run.failed (some step broke) instead of workflow_run.completed",
		Hooks: payload(func(env, data map[string]any) {
			if env["type"] == "workflow_run.completed" && data["status"] == "partial" {
				env["type"] = "workflow_run.failed"
			}
		}),
	},

	{
		Name: "batch-finished-completed-only", Rules: []string{"BATCH-007"},
		Mistake: "variants_finished counts the completed siblings only, not the failed ones",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			n := 0
			for _, g := range rows(d, "generations") {
				if g["status"] == "completed" {
					n++
				}
			}
			d["variants_finished"] = n
		}),
	},

	{
		Name: "ledger-shortfall-unpadded", Rules: []string{"LEDGER-006", "ERR-018"},
		Mistake: "insufficient_credits reports shortfall as the unpadded price minus available credits",
		API:     unpaddedShortfall,
	},
	{
		Name: "ledger-refusal-starts-job", Rules: []string{"CHECK-018", "SUBMIT-014"},
		Mistake: "a submit refused with max_credits_exceeded has already started its job at the required cap (the refusal changes state)",
		API:     startsAnyway,
	},
	{
		Name: "rate-upload-no-retry-after", Rules: []string{"RATE-008", "ERR-009"},
		Mistake: "the upload bucket's 429 rate_limited carries retry_after_seconds but no Retry-After header",
		API:     setHeader(uploadCalls, http.StatusTooManyRequests, "Retry-After", ""),
	},
	{
		Name: "ver-retired-as-unknown", Rules: []string{"VER-010", "CAP-026"},
		Mistake: "a retired capability is looked up like a missing one: capability_status unknown instead of retired",
		API: errorsWith(anyAPI, "capability_unavailable", func(_ *http.Request, _ *answer, e map[string]any) {
			if e["capability_status"] == "retired" {
				e["capability_status"] = "unknown"
			}
		}),
	},
	{
		Name: "talk-default-voice-ignored", Rules: []string{"TALK-008"},
		Mistake: "an actor_ultra submit or estimate without body voice_id and config.voiceId is refused, the actor's default voice never taken",
		API: guard(spendCall, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d := bodyOf(r)
			cfg := obj(d, "config")
			if d["capability_id"] != "actor_ultra" || d["actor_id"] == nil || d["voice_id"] != nil || cfg["voiceId"] != nil || cfg["voice_audio"] != nil {
				return nil
			}
			return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "voice_id"})
		}),
	},

	{
		Name: "id-in-flight-bare", Rules: []string{"ERR-015", "ID-002"},
		Mistake: "in_flight.generation_id is the job's bare hex (the prefix is added by the read route only)",
		API: errorsWith(submitRoute, "submission_in_flight", func(_ *http.Request, _ *answer, e map[string]any) {
			f := obj(e, "in_flight")
			if id, ok := f["generation_id"].(string); ok {
				f["generation_id"] = strings.TrimPrefix(id, "gen_")
			}
		}),
	},
}
