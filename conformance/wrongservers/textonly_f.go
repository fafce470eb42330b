package wrongservers

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The sixth red-team round (issue 37): wrong servers written from the interface text alone, before
// the suite was read, each breaking one behaviour the text requires on a rare route, state or
// event: state values, once-events, retryable verdicts, header promises, paging bounds, pad
// rounding, refusals that change state.

var (
	tfUploadCalls    = route(http.MethodPost, "/uploads(/[^/]+/finalize|/from-url)?")
	tfUploadReserves = route(http.MethodPost, "/uploads(/from-url)?")
	tfDeleteHook     = route(http.MethodDelete, "/webhooks/[^/]+")
	tfTemplateInvoke = route(http.MethodPost, "/workflows/templates/[^/]+/invoke")
	tfGenerationRead = route(http.MethodGet, "/generations/[^/]+(/wait)?")
)

// tfSiblings counts the batch answer's siblings by status.
func tfSiblings(d map[string]any, status string) int64 {
	var n int64
	for _, g := range rows(d, "generations") {
		if g["status"] == status {
			n++
		}
	}
	return n
}

// tfEvent changes the deliveries whose envelope type is one of types (signed again after).
func tfEvent(edit func(d map[string]any, data map[string]any) bool, types ...string) Wrap {
	return deliveryEdit(func(_ *Env, _ http.Header, d map[string]any) bool {
		t, _ := d["type"].(string)
		for _, want := range types {
			if t == want {
				return edit(d, obj(d, "data"))
			}
		}
		return false
	})
}

// tfShiftTime moves a time query parameter by delta (a date is read as midnight UTC); values that
// do not parse are left for the mock to refuse.
func tfShiftTime(m matcher, param string, delta time.Duration) Wrap {
	return query(m, func(q map[string][]string) bool {
		v := strings.TrimSpace(first(q, param))
		if v == "" {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t, err = time.Parse("2006-01-02", v)
		}
		if err != nil {
			return false
		}
		q[param] = []string{t.Add(delta).UTC().Format(time.RFC3339Nano)}
		return true
	})
}

// tfTakes is the number of takes a submit body asks for: variants, else config.count, else 1.
func tfTakes(req map[string]any) int64 {
	if n, ok := intOf(req["variants"]); ok && n > 0 {
		return n
	}
	if n, ok := intOf(obj(req, "config")["count"]); ok && n > 0 {
		return n
	}
	return 1
}

// tfPadOnTotal is a server whose max_credits check pads the price of all takes once, rounded up
// once (ceil(total x 1.1)), instead of every take: a cap between that and the per-take hold
// passes, and the job is placed with the hold the pricing code computes.
func tfPadOnTotal(_ *Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !submitRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		body := requestBody(r)
		req, _ := decodeObject(body)
		a := serve(next, r)
		d, _ := a.doc()
		takes := tfTakes(req)
		e := obj(d, "error")
		if a.status != http.StatusPaymentRequired || e["code"] != "max_credits_exceeded" || takes < 2 || req == nil {
			a.send(w)
			return
		}
		capped, okM := intOf(req["max_credits"])
		need, okR := intOf(obj(e, "limit")["required_credits"])
		cfg := map[string]any{}
		for k, v := range obj(req, "config") {
			cfg[k] = v
		}
		cfg["count"] = takes
		est := map[string]any{"capability_id": req["capability_id"], "config": cfg}
		ea, ed := callAs(next, r, http.MethodPost, apiPrefix+"/estimates", presented(r), est)
		price, okP := ed["credits"].(json.Number)
		p, err := price.Float64()
		if !okM || !okR || !okP || err != nil || ea.status != http.StatusOK {
			a.send(w)
			return
		}
		total := int64(math.Ceil(p*1.1 - 1e-9))
		if capped < total || capped >= need {
			a.send(w)
			return
		}
		req["max_credits"] = json.Number(formatInt(need))
		b, _ := callAs(next, r, http.MethodPost, r.URL.Path, presented(r), req)
		b.send(w)
	})
}

// tfCanonical is a request body in one canonical encoding (keys sorted).
func tfCanonical(d map[string]any) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// tfIdempotentForever is a server whose own idempotency key outlives the job: an identical request
// from the same key answers the first job again (replay true) after it finished, instead of
// starting a second one.
func tfIdempotentForever(_ *Env, next http.Handler) http.Handler {
	var seen memo[[]byte]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !submitRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		req, ok := decodeObject(requestBody(r))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		k := presented(r) + "\x00" + tfCanonical(req)
		if prev, found := seen.get(k); found {
			if d, ok := decodeObject(prev); ok {
				id, _ := d["generation_id"].(string)
				if _, run := running(next, r, presented(r), id); !run && id != "" {
					d["replay"] = true
					a := &answer{header: http.Header{}, status: http.StatusOK}
					a.header.Set("Content-Type", "application/json")
					a.header.Set("Cache-Control", "no-store")
					a.header.Set("Location", apiPrefix+"/generations/"+id)
					a.setDoc(d)
					a.send(w)
					return
				}
			}
		}
		a := serve(next, r)
		if d, ok := a.doc(); ok && accepted(a, d) {
			seen.put(k, a.body)
		}
		a.send(w)
	})
}

// tfFinalizeMemory is a server whose finalize looks a file up before it looks at the store: a
// file refused at finalize stays in the lookup, so finalizing it again answers the same refusal
// instead of not_found (the file was deleted and the reservation spent).
func tfFinalizeMemory(_ *Env, next http.Handler) http.Handler {
	var refused memo[*answer]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !finalizeRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := presented(r) + " " + r.URL.Path
		a := serve(next, r)
		d, _ := a.doc()
		switch code := errorCode(d); {
		case a.status == http.StatusBadRequest && code == "invalid_config":
			refused.put(key, a)
		case a.status == http.StatusNotFound && code == "not_found":
			if prev, ok := refused.get(key); ok {
				prev.send(w)
				return
			}
		}
		a.send(w)
	})
}

// tfFinalizeRepeat is a server whose repeated finalize of a scanned file reads the scan row's
// "done" flag as clean: a flagged file finalized again answers clean and usable.
func tfFinalizeRepeat(_ *Env, next http.Handler) http.Handler {
	var done memo[bool]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !finalizeRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := presented(r) + " " + r.URL.Path
		a := serve(next, r)
		d, ok := a.doc()
		if ok && a.status == http.StatusOK {
			if _, again := done.get(key); again && d["scan_status"] == "flagged" {
				d["scan_status"] = "clean"
				d["usable"] = true
				a.setDoc(d)
			}
			done.put(key, true)
		}
		a.send(w)
	})
}

// tfRememberWallet is a server that copies the wallet balance of the submit answer onto the
// generation record and shows that copy on every read, instead of the balance at the read.
func tfRememberWallet(_ *Env, next http.Handler) http.Handler {
	var wallet memo[any]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case submitRoute(r):
			a := serve(next, r)
			if d, ok := a.doc(); ok && accepted(a, d) {
				if wb, has := obj(d, "credits")["wallet_balance"]; has {
					ids, _ := d["generation_ids"].([]any)
					for _, id := range ids {
						if s, ok := id.(string); ok {
							wallet.put(s, wb)
						}
					}
				}
			}
			a.send(w)
		case tfGenerationRead(r):
			a := serve(next, r)
			d, ok := a.doc()
			g := generation(d)
			id, _ := g["generation_id"].(string)
			if wb, has := wallet.get(id); ok && success(a.status) && has && obj(g, "credits") != nil {
				obj(g, "credits")["wallet_balance"] = wb
				a.setDoc(d)
			}
			a.send(w)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// tfInsertThenValidate is a server that stores a webhook endpoint before it checks the
// description's length: a register refused for a description over 200 characters still leaves
// the endpoint (its description cut to 200), listed, counted and delivered to.
func tfInsertThenValidate(_ *Env, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !registerRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		req, _ := decodeObject(requestBody(r))
		a := serve(next, r)
		desc, _ := req["description"].(string)
		d, _ := a.doc()
		if a.status == http.StatusBadRequest && errorCode(d) == "invalid_config" && len([]rune(desc)) > 200 {
			req["description"] = string([]rune(desc)[:200])
			callAs(next, r, http.MethodPost, r.URL.Path, presented(r), req)
		}
		a.send(w)
	})
}

var textOnlyServersF = []Server{
	{
		Name:    "tf-upload-retry-after-plus-one",
		Rules:   []string{"ERR-009", "RATE-008"},
		Mistake: "on the upload calls' 429 rate_limited the Retry-After header is one second more than error.retry_after_seconds (the header rounds up again what the body already rounded)",
		API: answers(tfUploadCalls, func(_ *Env, _ *http.Request, a *answer) {
			d, _ := a.doc()
			if a.status != http.StatusTooManyRequests || errorCode(d) != "rate_limited" {
				return
			}
			if n, err := strconv.Atoi(a.header.Get("Retry-After")); err == nil {
				a.header.Set("Retry-After", strconv.Itoa(n+1))
			}
		}),
	},
	{
		Name:    "tf-wait-retry-after-running",
		Rules:   []string{"GEN-029"},
		Mistake: "the wait answer asks the caller to pause 2 seconds (retry_after_seconds 2) while the job still runs, instead of 0 (call again at once)",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["still_running"] == true {
				d["retry_after_seconds"] = 2
			}
		}),
	},
	{
		Name:    "tf-batch-finished-completed-only",
		Rules:   []string{"BATCH-007"},
		Mistake: "the batch's variants_finished counts the completed siblings only, not the failed ones",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if n, ok := intOf(d["variants_finished"]); ok {
				d["variants_finished"] = n - tfSiblings(d, "failed")
			}
		}),
	},
	{
		Name:    "tf-batch-charged-zero-running",
		Rules:   []string{"BATCH-009"},
		Mistake: "while a batch runs its rolled-up credits_charged reads 0 (a sum over no settled sibling) instead of null",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			c := obj(d, "credits")
			if c != nil && c["credits_charged"] == nil && d["status"] == "running" {
				c["credits_charged"] = 0
			}
		}),
	},
	{
		Name:    "tf-run-canceled-still-running",
		Rules:   []string{"WF-013"},
		Mistake: "a canceled workflow run reads still_running true (only completed, partial and failed were coded as finished)",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, run := range []map[string]any{d, obj(d, "run")} {
				if run != nil && run["status"] == "canceled" {
					run["still_running"] = true
				}
			}
		}),
	},
	{
		Name:    "tf-run-partial-event-failed",
		Rules:   []string{"EVT-004", "EVT-031"},
		Mistake: "a run that ends partial is announced as workflow_run.failed (something failed) instead of workflow_run.completed",
		Hooks: tfEvent(func(d, data map[string]any) bool {
			if data["status"] != "partial" {
				return false
			}
			d["type"] = "workflow_run.failed"
			return true
		}, "workflow_run.completed"),
	},
	{
		Name:    "tf-run-skipped-as-canceled",
		Rules:   []string{"WF-022"},
		Mistake: "a node whose input failed reads canceled (it never started) instead of skipped, on the run read",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, run := range []map[string]any{d, obj(d, "run")} {
				for _, n := range rows(run, "nodes") {
					if n["status"] == "skipped" {
						n["status"] = "canceled"
					}
				}
			}
		}),
	},
	{
		Name:    "tf-upload-audio-webm-video",
		Rules:   []string{"UPLOAD-003", "UPLOAD-004"},
		Mistake: "the kind of a reservation is looked up by the subtype, so audio/webm reads kind video with the video ceiling",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["content_type"] == "audio/webm" {
				d["kind"] = "video"
				d["max_bytes_for_kind"] = 104857600
			}
		}),
	},
	{
		Name:    "tf-finalize-repeat-clean",
		Rules:   []string{"UPLOAD-027", "UPLOAD-025"},
		Mistake: "finalizing a flagged file again answers scan_status clean and usable true (the repeat path reads 'scanned' as clean)",
		API:     tfFinalizeRepeat,
	},
	{
		Name:    "tf-finalize-failed-kept",
		Rules:   []string{"UPLOAD-034"},
		Mistake: "a file refused at finalize is not deleted: finalizing it again answers the same 400 instead of 404 not_found",
		API:     tfFinalizeMemory,
	},
	{
		Name:    "tf-webhook-url-2048",
		Rules:   []string{"WH-010"},
		Mistake: "the webhook url bound is exclusive: a url of exactly 2048 characters is refused (400 invalid_config naming url)",
		API: guard(registerRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d, _ := decodeObject(requestBody(r))
			if u, ok := d["url"].(string); ok && len([]rune(u)) == 2048 {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "url"})
			}
			return nil
		}),
	},
	{
		Name:    "tf-event-completed-open",
		Rules:   []string{"EVT-001"},
		Mistake: "generation.completed is built before the charge is captured: its credits read settlement open, terminal false, credits_charged null",
		Hooks: tfEvent(func(_, data map[string]any) bool {
			c := obj(data, "credits")
			if c == nil {
				return false
			}
			c["settlement"], c["terminal"], c["credits_charged"] = "open", false, nil
			return true
		}, "generation.completed"),
	},
	{
		Name:    "tf-event-failed-charged-null",
		Rules:   []string{"EVT-002", "GEN-015", "CORE-021"},
		Mistake: "generation.failed carries credits_charged null (nothing captured) beside terminal true, instead of 0",
		Hooks: tfEvent(func(_, data map[string]any) bool {
			c := obj(data, "credits")
			if c == nil {
				return false
			}
			c["credits_charged"] = nil
			return true
		}, "generation.failed"),
	},
	{
		Name:    "tf-genlist-updated-since-inclusive",
		Rules:   []string{"GEN-045"},
		Mistake: "updated_since keeps rows updated at the instant itself (>=), not strictly after",
		API:     tfShiftTime(generationList, "updated_since", -time.Nanosecond),
	},
	{
		Name:    "tf-genlist-created-before-inclusive",
		Rules:   []string{"GEN-043"},
		Mistake: "created_before keeps rows created at the instant itself (<=), not strictly before",
		API:     tfShiftTime(generationList, "created_before", time.Nanosecond),
	},
	{
		Name:    "tf-variants-pad-on-total",
		Rules:   []string{"VAR-009", "SUBMIT-014", "LEDGER-004", "ERR-012"},
		Mistake: "the max_credits check of a several-take submit pads the total once (ceil(total x 1.1)) while the estimate, the refusal's required_credits and the hold pad every take: a cap below the stated hold passes and the job holds more than max_credits, a hard cap (padding on the total everywhere is the legal est-pad-on-total)",
		API:     tfPadOnTotal,
	},
	{
		Name:    "tf-submit-location-batch",
		Rules:   []string{"SUBMIT-001"},
		Mistake: "a fanned-out submit answers Location naming the batch (/batches/bg_...) instead of the generation's path",
		API: answers(submitRoute, func(_ *Env, _ *http.Request, a *answer) {
			d, ok := a.doc()
			bg, _ := d["batch_group_id"].(string)
			if ok && a.status == http.StatusCreated && bg != "" {
				a.header.Set("Location", apiPrefix+"/batches/"+bg)
			}
		}),
	},
	{
		Name:    "tf-template-invoke-no-location",
		Rules:   []string{"ID-007", "WF-004"},
		Mistake: "the template invoke answers 201 without a Location header (only the saved-workflow invoke sets it)",
		API:     setHeader(tfTemplateInvoke, http.StatusCreated, "Location", ""),
	},
	{
		Name:    "tf-pending-cap-retryable",
		Rules:   []string{"ERR-037", "UPLOAD-045"},
		Mistake: "the pending-upload cap's 429 quota_exceeded says retryable true (it clears by itself in 15 minutes)",
		API:     retryableAs(tfUploadReserves, "quota_exceeded", true),
	},
	{
		Name:    "tf-delivery-202-failure",
		Rules:   []string{"DLV-020"},
		Mistake: "the delivery worker counts only 200, 201 and 204 as success: a 202 (or any other 2XX) is retried",
		Hooks: receiverAnswers(func(a *answer) {
			if a.status >= 200 && a.status < 300 && a.status != 200 && a.status != 201 && a.status != 204 {
				a.status = http.StatusInternalServerError
			}
		}),
	},
	{
		Name:    "tf-talk-config-voice-wins",
		Rules:   []string{"TALK-007"},
		Mistake: "config.voiceId wins over the body voice_id when both are sent (the config is read first)",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			v, ok := obj(d, "config")["voiceId"].(string)
			if !ok || d["voice_id"] == nil || d["voice_id"] == v {
				return false
			}
			d["voice_id"] = v
			return true
		}),
	},
	{
		Name:    "tf-submit-replay-after-finish",
		Rules:   []string{"SUBMIT-025"},
		Mistake: "the service's own idempotency key outlives the job: an identical request after the first job finished answers that job again (replay true) instead of starting a second",
		API:     tfIdempotentForever,
	},
	{
		Name:    "tf-auth-delete-webhook-read-key",
		Rules:   []string{"AUTH-018"},
		Mistake: "DELETE /webhooks/{id} checks the key but not its scope: a read-only key deletes an endpoint",
		API:     readKeyFor(tfDeleteHook),
	},
	{
		Name:    "tf-templates-first-20",
		Rules:   []string{"PRESET-014"},
		Mistake: "GET /presets/{id}/templates returns the preset row's first 20 templates, not every live one",
		API: docs(templateGet, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if list, ok := d["templates"].([]any); ok && len(list) > 20 {
				d["templates"] = list[:20]
			}
		}),
	},
	{
		Name:    "tf-not-priced-retryable",
		Rules:   []string{"ERR-033", "EST-020"},
		Mistake: "the estimate's 409 not_priced says retryable true (a 409 like the others)",
		API:     retryableAs(estimate, "not_priced", true),
	},
	{
		Name:    "tf-read-wallet-at-submit",
		Rules:   []string{"GEN-018"},
		Mistake: "the generation read shows the wallet_balance stored with the job at submit, not the balance at the read",
		API:     tfRememberWallet,
	},
	{
		Name:    "tf-event-step-batch-index",
		Rules:   []string{"EVT-024"},
		Mistake: "a workflow step's generation events carry batch_index 0 (the step's position in its node) instead of null",
		Hooks: tfEvent(func(_, data map[string]any) bool {
			if data["workflow_run_id"] == nil {
				return false
			}
			data["batch_index"] = 0
			return true
		}, "generation.completed", "generation.failed"),
	},
	resentOnNextRequest("tf-run-failed-twice",
		"workflow_run.failed is sent again with a fresh delivery id when the next API call arrives (the run's outbox row is marked sent under the new delivery only)",
		[]string{"EVT-005", "DLV-029"}, "workflow_run.failed"),
	{
		Name:    "tf-webhook-refused-kept",
		Rules:   []string{"WH-018", "WH-019"},
		Mistake: "a register refused for a description over 200 characters still stores the endpoint (inserted before the check, description cut to 200)",
		API:     tfInsertThenValidate,
	},
}
