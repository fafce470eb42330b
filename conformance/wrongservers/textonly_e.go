package wrongservers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Set E of the red team's wrong servers (issue 37): written from the interface text alone, before
// reading the suite, each an implementer's misreading of one sentence the text states. This set
// leans on rare routes and states: rate-limit headers on one bucket, a batch's rolled-up charge
// while it runs, a workflow run's partial and canceled states, a recovered render's event, an
// endpoint's failure count, uploads refinalized or declared audio/webm, refusal order and refusals
// that leave state behind.

var (
	teWebhookWrites = func(r *http.Request) bool {
		return (r.Method == http.MethodPost || r.Method == http.MethodDelete) && route("", "/webhooks(/[^/]+)?")(r)
	}
)

// teEmotions are the tags a server that whitelists emotions knows; [[pause]] is not among them.
var teEmotions = map[string]bool{"excited": true, "happy": true, "sad": true, "angry": true, "calm": true,
	"whisper": true, "serious": true, "friendly": true, "surprised": true}

var teTag = regexp.MustCompile(`\[\[([^\]]*)\]\]`)

// teInstant parses a list filter time as the service does (a date is midnight UTC).
func teInstant(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

var textOnlyServersE = []Server{
	{
		Name:    "te-rate-webhook-writes-no-retry-after",
		Rules:   []string{"ERR-009", "ERR-043", "RATE-005"},
		Mistake: "A full webhook_manage bucket answers 429 rate_limited with retry_after_seconds in the body but no Retry-After header: the header is set by the read, estimate and submit limiter only, and the webhook writes have a limiter of their own.",
		API: answers(teWebhookWrites, func(_ *Env, _ *http.Request, a *answer) {
			if d, ok := a.doc(); ok && a.status == http.StatusTooManyRequests && errorCode(d) == "rate_limited" {
				a.header.Del("Retry-After")
			}
		}),
	},
	{
		Name:    "te-rate-retry-after-floored",
		Rules:   []string{"RATE-014", "RATE-013"},
		Mistake: "A bucket refusal's retry_after_seconds (and its Retry-After header) is the wait rounded down, not up: a caller that waits exactly that long is refused again.",
		API: errorsWith(anyAPI, "rate_limited", func(_ *http.Request, a *answer, e map[string]any) {
			n, ok := intOf(e["retry_after_seconds"])
			if !ok || n < 1 {
				return
			}
			e["retry_after_seconds"] = n - 1
			if a.header.Get("Retry-After") != "" {
				a.header.Set("Retry-After", formatInt(n-1))
			}
		}),
	},
	{
		Name:    "te-wf-partial-sent-as-failed",
		Rules:   []string{"EVT-004", "EVT-031"},
		Mistake: "A run that ended partial is announced with workflow_run.failed (some steps failed), not workflow_run.completed.",
		Hooks: payload(func(env, data map[string]any) {
			if env["type"] == "workflow_run.completed" && data["status"] == "partial" {
				env["type"] = "workflow_run.failed"
			}
		}),
	},
	{
		Name:    "te-evt-recovered-keeps-error",
		Rules:   []string{"EVT-026", "EVT-015"},
		Mistake: "A written-off render that is recovered sends generation.completed whose data still carries the error of its earlier generation.failed: the event is built from the row, whose error is never cleared.",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var failed memo[map[string]any] // generation id -> the error its generation.failed carried
			return deliveriesVia(true, func(_ *Env, dl *delivery) {
				v, ok := decodeObject(dl.body)
				if !ok {
					return
				}
				data := obj(v, "data")
				id, _ := data["generation_id"].(string)
				switch v["type"] {
				case "generation.failed":
					if e := obj(data, "error"); e != nil {
						failed.put(id, e)
					}
					return
				case "generation.completed":
					e, was := failed.get(id)
					if !was {
						return
					}
					data["error"] = e
				default:
					return
				}
				if b, err := json.Marshal(v); err == nil {
					dl.body = b
				}
			})(env, next)
		},
	},
	{
		Name:    "te-dlv-active-count-kept",
		Rules:   []string{"DLV-025"},
		Mistake: "A 2XX answer resets consecutive_failures only when it moves a failing endpoint back to active: an active endpoint keeps the exhausted deliveries counted before the success.",
		API: func(_ *Env, next http.Handler) http.Handler {
			var mu sync.Mutex             // guards counts, status
			counts := map[string]int64{}  // webhook id -> last consecutive_failures seen
			status := map[string]string{} // webhook id -> last status seen
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !webhookList(r) {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				if d, ok := a.doc(); ok && a.status == http.StatusOK {
					mu.Lock()
					for _, wh := range rows(d, "webhooks") {
						id, _ := wh["webhook_id"].(string)
						st, _ := wh["status"].(string)
						n, _ := intOf(wh["consecutive_failures"])
						prev, kept := counts[id], status[id]
						if st == "active" && kept == "active" && n < prev {
							wh["consecutive_failures"] = prev
							n = prev
						}
						counts[id], status[id] = n, st
					}
					mu.Unlock()
					a.setDoc(d)
				}
				a.send(w)
			})
		},
	},
	{
		Name:    "te-upload-audio-webm-as-video",
		Rules:   []string{"UPLOAD-003", "UPLOAD-004", "UPLOAD-009"},
		Mistake: "The reservation takes the kind from the subtype where it can (webm is a video container), so audio/webm reserves as kind video with the video ceiling.",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["content_type"] == "audio/webm" {
				d["kind"] = "video"
				d["max_bytes_for_kind"] = 104857600
				d["content_checked"] = false
			}
		}),
	},
	{
		Name:    "te-upload-finalize-not-ready-final",
		Rules:   []string{"UPLOAD-035", "ERR-030"},
		Mistake: "Finalize before the bytes arrived answers 409 input_not_ready with retryable false (the finalize handler builds its own refusal), while the same code on a submit says retryable true.",
		API:     retryableAs(finalizeRoute, "input_not_ready", false),
	},
	{
		Name:    "te-err-types-listed-by-line",
		Rules:   []string{"ERR-046"},
		Mistake: "The refusal of an unaccepted upload content type lists the accepted types in its message one per line, so error.message is not one sentence.",
		API: errorsWith(reserveRoute, "invalid_config", func(_ *http.Request, _ *answer, e map[string]any) {
			msg, _ := e["message"].(string)
			if e["accepted_content_types"] == nil && !strings.Contains(msg, "image/jpeg") {
				return
			}
			e["message"] = "This content type is not accepted. Accepted types:\n- image/jpeg\n- image/png\n- image/webp\n- image/gif\n- video/mp4\n- video/webm\n- video/quicktime\n- audio/mpeg\n- audio/mp3\n- audio/wav\n- audio/x-wav\n- audio/webm\n- audio/ogg"
		}),
	},
	{
		Name:    "te-check-credits-before-caps",
		Rules:   []string{"CHECK-008"},
		Mistake: "The wallet is checked before the spend caps: a submit whose hold is above both a spend cap and the available credits answers 402 insufficient_credits instead of spend_limit_exceeded.",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				req := bodyOf(r)
				a := serve(next, r)
				d, _ := a.doc()
				if req != nil && errorCode(d) == "spend_limit_exceeded" {
					key := presented(r)
					cfg, _ := req["config"].(map[string]any)
					body := map[string]any{"capability_id": req["capability_id"], "config": cfg}
					if v, ok := req["variants"]; ok && cfg != nil {
						c := map[string]any{}
						for k, x := range cfg {
							c[k] = x
						}
						c["count"] = v
						body["config"] = c
					}
					for _, k := range []string{"actor_id", "actor_image_asset_id", "voice_id", "approved_voice_generation_id"} {
						if v, ok := req[k]; ok {
							body[k] = v
						}
					}
					_, est := callAs(next, r, http.MethodPost, apiPrefix+"/estimates", key, body)
					_, bal := callAs(next, r, http.MethodGet, apiPrefix+"/credits/balance", key, nil)
					hold, ok1 := intOf(est["max_credits_needed"])
					avail, ok2 := intOf(bal["available_credits"])
					if ok1 && ok2 && avail < hold {
						refuse(a, http.StatusPaymentRequired, "insufficient_credits", false, map[string]any{"shortfall": hold - avail})
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name:    "te-ledger-refused-hold-kept",
		Rules:   []string{"CHECK-018", "SUBMIT-014"},
		Mistake: "The hold is placed before max_credits is compared and is not released when the submit is refused 402 max_credits_exceeded: the balance shows it held for good.",
		API: func(env *Env, next http.Handler) http.Handler {
			var mu sync.Mutex           // guards leak
			leaks := map[string]int64{} // workspace -> credits a refused submit left held
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ws := env.workspaceOf(presented(r))
				switch {
				case submitRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && errorCode(d) == "max_credits_exceeded" {
						if n, ok := intOf(obj(obj(d, "error"), "limit")["required_credits"]); ok {
							mu.Lock()
							leaks[ws] += n
							mu.Unlock()
						}
					}
					a.send(w)
				case balanceRoute(r):
					a := serve(next, r)
					mu.Lock()
					leak := leaks[ws]
					mu.Unlock()
					if d, ok := a.doc(); ok && a.status == http.StatusOK && leak > 0 {
						av, ok1 := intOf(d["available_credits"])
						held, ok2 := intOf(d["held_credits"])
						if ok1 && ok2 {
							d["available_credits"] = av - leak
							d["held_credits"] = held + leak
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
	{
		Name:    "te-submit-batch-wallet-first-hold",
		Rules:   []string{"SUBMIT-008"},
		Mistake: "A variants submit reports wallet_balance read right after the first sibling's hold, before the other siblings were held.",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			ids, _ := d["generation_ids"].([]any)
			c := obj(d, "credits")
			held, ok1 := intOf(c["credits_held"])
			wb, ok2 := intOf(c["wallet_balance"])
			if d["batch_group_id"] == nil || len(ids) < 2 || !ok1 || !ok2 {
				return
			}
			c["wallet_balance"] = wb + held - held/int64(len(ids))
		}),
	},
	{
		Name:    "te-list-updated-since-inclusive",
		Rules:   []string{"GEN-045"},
		Mistake: "updated_since keeps rows updated at or after the instant (>=), not strictly after it.",
		API: query(generationList, func(q map[string][]string) bool {
			v := first(q, "updated_since")
			t, ok := teInstant(v)
			if !ok {
				return false
			}
			q["updated_since"] = []string{t.Add(-time.Millisecond).UTC().Format(time.RFC3339Nano)}
			return true
		}),
	},
	{
		Name:    "te-ver-retired-estimate-unknown",
		Rules:   []string{"VER-010"},
		Mistake: "The estimate looks capabilities up in the live catalogue only, so a retired capability is refused with capability_status unknown instead of retired.",
		API: errorsWith(estimate, "capability_unavailable", func(_ *http.Request, _ *answer, e map[string]any) {
			if e["capability_status"] == "retired" {
				e["capability_status"] = "unknown"
			}
		}),
	},
	{
		Name:    "te-talk-pause-tag-refused",
		Rules:   []string{"TALK-018"},
		Mistake: "The actor capabilities accept only emotion tags they know: a script with [[pause]] (not an emotion) answers 400 invalid_config naming config.script.",
		API: guard(submitRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			req := bodyOf(r)
			if req == nil || req["capability_id"] == "tts" {
				return nil
			}
			cfg, _ := req["config"].(map[string]any)
			script, _ := cfg["script"].(string)
			for _, m := range teTag.FindAllStringSubmatch(script, -1) {
				if !teEmotions[strings.ToLower(strings.TrimSpace(m[1]))] {
					return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "config.script"})
				}
			}
			return nil
		}),
	},
	{
		Name:    "te-est-voice-audio-ceiling",
		Rules:   []string{"EST-024"},
		Mistake: "Every actor_ultra estimate answers is_ceiling true, also when config.voice_audio names an uploaded recording whose length fixes the price.",
		API: exchanges(estimate, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			if !ok || a.status != http.StatusOK || req["capability_id"] != "actor_ultra" {
				return
			}
			d["is_ceiling"] = true
			a.setDoc(d)
		}),
	},
}
