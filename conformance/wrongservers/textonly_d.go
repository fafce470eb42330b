package wrongservers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Set D of the red team's wrong servers (issue 37): written from the interface text alone, before
// reading the suite, each an implementer's misreading of one sentence the text states.

// perEnv keeps one value of state per run (one Env) for a row whose API and Hooks wraps share it
// (each wrap is made apart, with the run's Env): a row's memory must not leak into the next run,
// whose seeded mock reuses the same ids. A wrap that remembers alone keeps a memo in its closure.
type perEnv[T any] struct{ m sync.Map }

func (p *perEnv[T]) of(env *Env) *T {
	v, _ := p.m.LoadOrStore(env, new(T))
	return v.(*T)
}

// seen is a concurrency-safe set of strings.
type seen struct {
	mu  sync.Mutex // guards set
	set map[string]bool
}

// add adds k and reports whether it was new.
func (s *seen) add(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[string]bool{}
	}
	if s.set[k] {
		return false
	}
	s.set[k] = true
	return true
}

// otherKey is a key the mock issued that is not key: the first generate key of key's workspace,
// else the first key issued.
func (e *Env) otherKey(key string) string {
	if k := e.generateKey(key); k != "" && k != key {
		return k
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.order {
		if k != key {
			return k
		}
	}
	return ""
}

// again serves r once more with Authorization set to key.
func again(next http.Handler, r *http.Request, key string) *answer {
	c := r.Clone(r.Context())
	c.Header = r.Header.Clone()
	c.Header.Del("X-API-Key")
	c.Header.Set("Authorization", "Bearer "+key)
	return serve(next, c)
}

// tdErrors remembers, per run, the error of every generation seen failed.
var tdErrors perEnv[memo[map[string]any]]

// keepError is a server whose recovery (failed -> completed) leaves the failure's error on the
// generation: reads and the generation.completed event still carry it.
func keepError() (api, hooks Wrap) {
	note := func(env *Env, g map[string]any) {
		id, _ := g["generation_id"].(string)
		if id == "" {
			return
		}
		errs := tdErrors.of(env)
		switch g["status"] {
		case "failed":
			if e, ok := g["error"].(map[string]any); ok {
				errs.put(id, e)
			}
		case "completed":
			if e, ok := errs.get(id); ok && g["error"] == nil {
				g["error"] = e
			}
		}
	}
	api = func(env *Env, next http.Handler) http.Handler {
		return docs(genReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := obj(d, "generation"); g != nil {
				note(env, g)
			}
		})(env, next)
	}
	hooks = func(env *Env, next http.Handler) http.Handler {
		return deliveryEdit(func(env *Env, _ http.Header, d map[string]any) bool {
			t, _ := d["type"].(string)
			if !strings.HasPrefix(t, "generation.") {
				return false
			}
			data := obj(d, "data")
			before := data["error"]
			note(env, data)
			return before == nil && data["error"] != nil
		})(env, next)
	}
	return api, hooks
}

// settledAgain is a server that derives a batch's settlement when the batch is read too, and
// sends batch.settled again (a new delivery) the first time a settled batch is read after the
// event went out.
type settledAgain struct {
	mu    sync.Mutex // guards next, held
	next  http.Handler
	held  map[string]held
	again seen
}

var tdSettled perEnv[settledAgain]

func batchSettledOnRead() (api, hooks Wrap) {
	hooks = func(env *Env, next http.Handler) http.Handler {
		s := tdSettled.of(env)
		s.mu.Lock()
		s.next = next
		s.mu.Unlock()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := requestBody(r)
			if d, ok := decodeObject(b); ok && d["type"] == "batch.settled" {
				if bg, _ := obj(d, "data")["batch_group_id"].(string); bg != "" {
					c := r.Clone(context.Background()) // sent again after this request ended
					c.Header = r.Header.Clone()
					s.mu.Lock()
					if s.held == nil {
						s.held = map[string]held{}
					}
					if _, ok := s.held[bg]; !ok {
						s.held[bg] = held{r: c, body: slices.Clone(b)}
					}
					s.mu.Unlock()
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	api = func(env *Env, next http.Handler) http.Handler {
		s := tdSettled.of(env)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !batchRoute(r) {
				next.ServeHTTP(w, r)
				return
			}
			a := serve(next, r)
			d, _ := a.doc()
			bg, _ := d["batch_group_id"].(string)
			st, _ := d["status"].(string)
			if a.status == http.StatusOK && bg != "" && st != "running" {
				s.mu.Lock()
				h, ok := s.held[bg]
				hn := s.next
				s.mu.Unlock()
				if ok && hn != nil && s.again.add(bg) {
					setRequestBody(h.r, h.body)
					sendAgain(env, hn, h.r, h.body, func(hd http.Header, d map[string]any) {
						id := newDeliveryID()
						hd.Set("Webhook-Id", id)
						d["id"] = id
					})
				}
			}
			a.send(w)
		})
	}
	return api, hooks
}

// floorPad is a server whose hold pad rounds down (integer division) on the estimate and at
// submit alike: max_credits_needed is floor(price x 1.1) per take, a max_credits of that value is
// accepted, and the submit answer shows that hold.
func floorPad() Wrap {
	return padRewrite(true, func(req map[string]any, price float64, need int64) (int64, bool) {
		p := int64(price)
		n := int64(1)
		if c, ok := intOf(obj(req, "config")["count"]); ok && c > 0 {
			n = c
		}
		if float64(p) != price || p%n != 0 {
			return 0, false
		}
		floor := n * (p / n * 11 / 10)
		return floor, floor < need
	})
}

// tdScriptOnlyActor is the capability id of the script-only talking actor (it produces its own voice).
const tdScriptOnlyActor = "actor_lite"

var textOnlyServersD = []Server{
	{
		Name: "td-auth-revoked-key-wait", Rules: []string{"AUTH-004"},
		Mistake: "the wait route authenticates from a key cache that revocation does not reach: a revoked key still waits on its workspace's jobs",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !waitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				key := presented(r)
				if a.status == http.StatusUnauthorized && env.known(key) {
					if alt := env.otherKey(key); alt != "" {
						a = again(next, r, alt)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "td-auth-generate-only-batch-403", Rules: []string{"AUTH-014"},
		Mistake: "the batch read checks for the read scope itself: a generate-only key gets 403 insufficient_scope there",
		API: guard(batchRoute, func(env *Env, _ http.Handler, r *http.Request) *answer {
			if env.generateOnly(presented(r)) {
				return refusal(http.StatusForbidden, "insufficient_scope", false, nil)
			}
			return nil
		}),
	},
	{
		Name: "td-auth-deleted-workspace-401-on-reads", Rules: []string{"AUTH-021", "ERR-034"},
		Mistake: "reads treat a deleted workspace's key as unknown: 401 not_authorized instead of 410 workspace_unavailable",
		API:     recode(anyRead, "workspace_unavailable", http.StatusUnauthorized, "not_authorized", false),
	},
	{
		Name: "td-err-pricing-unavailable-estimate-final", Rules: []string{"ERR-042", "ERR-005", "EST-021"},
		Mistake: "the estimate route answers pricing_unavailable with retryable false (the submit route gets it right)",
		API:     retryableAs(estimate, "pricing_unavailable", false),
	},
	{
		Name: "td-cap-coming-soon-detail-200", Rules: []string{"CAP-027"},
		Mistake: "a coming_soon capability's detail is served (200 with an empty schema) since it is listed",
		API: answers(capDetail, func(_ *Env, r *http.Request, a *answer) {
			d, _ := a.doc()
			if a.status != http.StatusNotFound || errorCode(d) != "capability_unavailable" || obj(d, "error")["capability_status"] != "coming_soon" {
				return
			}
			id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
			a.status = http.StatusOK
			a.setDoc(map[string]any{"ok": true, "capability_id": id, "status": "coming_soon",
				"config_schema":  map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
				"example_config": map[string]any{}, "next_action": "This capability is coming soon; it cannot run yet."})
		}),
	},
	{
		Name: "td-est-pad-rounded-down", Rules: []string{"EST-003", "LEDGER-004"},
		Mistake: "the 10 percent hold pad is computed with integer division (floor), on the estimate and at submit alike",
		API:     floorPad(),
	},
	{
		Name: "td-submit-replay-on-resend", Rules: []string{"SUBMIT-025"},
		Mistake: "replay is set whenever the service's idempotency key matches an earlier job, also when that job had finished and a new one started",
		API: func(_ *Env, next http.Handler) http.Handler {
			var resent seen // each key's accepted submit bodies, this run's
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				req := bodyOf(r)
				canon, _ := json.Marshal(req)
				a := serve(next, r)
				if d, ok := a.doc(); ok && accepted(a, d) {
					if !resent.add(presented(r) + "|" + string(canon)) {
						d["replay"] = true
						a.setDoc(d)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "td-var-image-outputs-expected-one", Rules: []string{"VAR-008", "GEN-013"},
		Mistake: "an image model's variants submit answers outputs_expected 1 (one generation) instead of the N outputs it makes",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, batch := d["batch_group_id"]; batch {
				return
			}
			if n, ok := intOf(d["outputs_expected"]); ok && n > 1 && len(asSlice(d["generation_ids"])) == 1 {
				d["outputs_expected"] = 1
			}
		}),
	},
	func() Server {
		api, hooks := keepError()
		return Server{
			Name: "td-gen-recovered-keeps-error", Rules: []string{"GEN-010", "EVT-026", "EVT-015"},
			Mistake: "a recovered write-off (failed, then completed) keeps the failure's error on its reads and on its generation.completed event",
			API:     api, Hooks: hooks,
		}
	}(),
	{
		Name: "td-gen-list-created-before-inclusive", Rules: []string{"GEN-043"},
		Mistake: "created_before keeps rows created at the instant itself (<= instead of <)",
		API: query(generationList, func(q map[string][]string) bool {
			v := first(q, "created_before")
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return false
			}
			q["created_before"] = []string{t.Add(time.Nanosecond).Format(time.RFC3339Nano)}
			return true
		}),
	},
	{
		Name: "td-gen-list-updated-since-newest-first", Rules: []string{"GEN-045"},
		Mistake: "updated_since filters but keeps the list's newest-first order instead of oldest first by updated_at",
		API: pageOf(generationList, "generations", func(r *http.Request, _ map[string]any, list []any) []any {
			if strings.TrimSpace(r.URL.Query().Get("updated_since")) != "" {
				slices.Reverse(list)
			}
			return list
		}),
	},
	{
		Name: "td-upload-filename-bytes", Rules: []string{"UPLOAD-008"},
		Mistake: "the 255 limit on filename counts bytes, not characters: a 255-character name with accented letters is refused",
		API: guard(reserveRoute, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			name, ok := bodyOf(r)["filename"].(string)
			if ok && len(name) > 255 && utf8.RuneCountInString(name) <= 255 {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "filename"})
			}
			return nil
		}),
	},
	{
		Name: "td-gen-wait-seconds-fractional", Rules: []string{"GEN-034"},
		Mistake: "the wait answer's waited_seconds and age_seconds are measured durations in seconds with their fraction (18.004), not whole seconds",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, k := range []string{"waited_seconds", "age_seconds"} {
				if n, ok := intOf(d[k]); ok {
					d[k] = json.Number(formatInt(n) + ".004")
				}
			}
		}),
	},
	{
		Name: "td-dlv-failing-after-two", Rules: []string{"DLV-021"},
		Mistake: "an endpoint turns failing after 2 exhausted deliveries in a row instead of 3",
		API: docs(webhookList, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, wh := range rows(d, "webhooks") {
				if n, ok := intOf(wh["consecutive_failures"]); ok && n == 2 && wh["status"] == "active" {
					wh["status"] = "failing"
				}
			}
		}),
	},
	{
		Name: "td-evt-failed-before-release", Rules: []string{"EVT-002", "EVT-023"},
		Mistake: "generation.failed is sent before the hold is released: its credits read credits_charged null, settlement open, terminal false",
		Hooks: payload(func(env, data map[string]any) {
			if env["type"] != "generation.failed" {
				return
			}
			if c := obj(data, "credits"); c != nil {
				c["credits_charged"], c["settlement"], c["terminal"] = nil, "open", false
			}
		}),
	},
	{
		Name: "td-wf-canceled-nodes-skipped", Rules: []string{"WF-021"},
		Mistake: "a canceled run's unstarted nodes read skipped (the word for an input that failed) instead of canceled",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			run := obj(d, "run")
			if run == nil {
				run = d
			}
			if run["status"] == "canceled" {
				for _, n := range rows(run, "nodes") {
					if n["status"] == "canceled" {
						n["status"] = "skipped"
					}
				}
			}
		}),
		Hooks: payload(func(env, data map[string]any) {
			if env["type"] == "workflow_run.failed" && data["status"] == "canceled" {
				for _, n := range rows(data, "nodes") {
					if n["status"] == "canceled" {
						n["status"] = "skipped"
					}
				}
			}
		}),
	},
	func() Server {
		api, hooks := batchSettledOnRead()
		return Server{
			Name: "td-evt-batch-settled-again-on-read", Rules: []string{"EVT-003"},
			Mistake: "batch settlement is also derived on a batch read, which sends batch.settled again as a new delivery the first time the settled batch is read",
			API:     api, Hooks: hooks,
		}
	}(),
	{
		Name: "td-batch-settled-partial-as-completed", Rules: []string{"EVT-027", "BATCH-005"},
		Mistake: "the batch.settled event derives its status as completed when any sibling completed (a partial batch is announced completed)",
		Hooks: payload(func(env, data map[string]any) {
			if env["type"] == "batch.settled" && data["status"] == "partial" {
				data["status"] = "completed"
			}
		}),
	},
	{
		Name: "td-voices-total-before-filters", Rules: []string{"VOICE-010"},
		Mistake: "the voice list's total counts every active voice, before search and language narrow it (it should count the matches)",
		API: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				if !voiceList(r) || (strings.TrimSpace(q.Get("search")) == "" && strings.TrimSpace(q.Get("language")) == "") {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				if d, ok := a.doc(); ok && a.status == http.StatusOK {
					if _, all := callAs(next, r, http.MethodGet, apiPrefix+"/voices?limit=1", presented(r), nil); all != nil && all["total"] != nil {
						d["total"] = all["total"]
						a.setDoc(d)
					}
				}
				a.send(w)
			})
		},
	},
	{
		Name: "td-ver-deprecated-with-default", Rules: []string{"VER-006"},
		Mistake: "a deprecated config name is listed with a default (copied from the field it was renamed to, or the type's zero)",
		API: schemaOf(func(_ string, schema map[string]any) {
			props := obj(schema, "properties")
			for _, v := range props {
				p, ok := v.(map[string]any)
				if !ok || p["deprecated"] != true {
					continue
				}
				if _, has := p["default"]; has {
					continue
				}
				switch p["type"] {
				case "integer", "number":
					p["default"] = 0
				case "boolean":
					p["default"] = false
				case "array":
					p["default"] = []any{}
				default:
					p["default"] = ""
				}
			}
		}),
	},
	{
		Name: "td-talk-script-actor-variants-one", Rules: []string{"TALK-017", "VAR-004"},
		Mistake: "the script-only actor drops variants 1 as harmless instead of refusing the field",
		API: rewriteBody(submitRoute, func(d map[string]any) bool {
			if d["capability_id"] != tdScriptOnlyActor {
				return false
			}
			if n, ok := intOf(d["variants"]); ok && n == 1 {
				delete(d, "variants")
				return true
			}
			return false
		}),
	},
}
