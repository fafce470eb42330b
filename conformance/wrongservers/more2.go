package wrongservers

import (
	"net/http"
	"strings"
	"sync"
)

// memo is a small concurrency-safe map for wrong servers that remember.
type memo[V any] struct {
	mu sync.Mutex // guards m
	m  map[string]V
}

func (c *memo[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[V]) put(k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]V{}
	}
	c.m[k] = v
}

var moreServers = []Server{
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
		Name: "err-in-flight-without-job", Rules: []string{"ERR-015", "SUBMIT-018"},
		Mistake: "submission_in_flight does not say which job holds the slot (no in_flight)",
		API: errorsWith(submitRoute, "submission_in_flight", func(_ *http.Request, _ *answer, e map[string]any) {
			delete(e, "in_flight")
		}),
	},
	{
		Name: "upload-put-type-unchecked", Rules: []string{"UPLOAD-018"},
		Mistake: "the signed PUT accepts any content type (the declared one is not compared)",
		API: func(_ *Env, next http.Handler) http.Handler {
			var declared memo[string] // upload path -> declared content type
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case reserveRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						if u, ok := d["upload_url"].(string); ok {
							if i := strings.Index(u, "/upload-slots/"); i >= 0 {
								declared.put(strings.SplitN(u[i:], "?", 2)[0], stringOf(d["content_type"]))
							}
						}
					}
					a.send(w)
					return
				case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/upload-slots/"):
					if ct, ok := declared.get(r.URL.Path); ok && ct != "" {
						r.Header.Set("Content-Type", ct)
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "link-signature-ignored", Rules: []string{"LINK-005", "LINK-003"},
		Mistake: "file links are served from a cache keyed by path: the signature and expiry are not checked again",
		API: func(_ *Env, next http.Handler) http.Handler {
			var cache memo[*answer]
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !filesRoute(r) || r.Method != http.MethodGet {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				if a.status == http.StatusOK {
					cache.put(r.URL.Path, a)
				} else if c, ok := cache.get(r.URL.Path); ok {
					a = c
				}
				a.send(w)
			})
		},
	},
	{
		Name: "asset-read-no-link-lifetime", Rules: []string{"ASSET-008", "LINK-001"},
		Mistake: "the asset read leaves out output_urls_expire_in_seconds",
		API: docs(route(http.MethodGet, "/assets/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			delete(d, "output_urls_expire_in_seconds")
		}),
	},
	{
		Name: "ver-description-no-list-route", Rules: []string{"VER-004"},
		Mistake: "the live description leaves out GET /generations (the reference page says there is none)",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if p := obj(d, "paths"); p != nil {
				if g := obj(p, "/generations"); g != nil {
					delete(g, "get")
				}
			}
		}),
	},
	{
		Name: "ver-servers-root", Rules: []string{"VER-003"},
		Mistake: "the live description's servers url is the origin, without /api/v1",
		API: docs(route(http.MethodGet, "/openapi.json"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["servers"] = []any{map[string]any{"url": "/"}}
		}),
	},
	{
		Name: "wh-description-truncated", Rules: []string{"WH-018"},
		Mistake: "a description over 200 characters is cut to 200 and accepted",
		API: rewriteBody(registerRoute, func(d map[string]any) bool {
			if s, ok := d["description"].(string); ok && len(s) > 200 {
				d["description"] = s[:200]
				return true
			}
			return false
		}),
	},
	{
		Name: "wh-empty-events-all", Rules: []string{"WH-015"},
		Mistake: "an empty events list subscribes to every event",
		API: rewriteBody(registerRoute, func(d map[string]any) bool {
			if ev, ok := d["events"].([]any); ok && len(ev) == 0 {
				d["events"] = []any{"generation.completed", "generation.failed", "batch.settled", "workflow_run.completed", "workflow_run.failed", "credits.low"}
				return true
			}
			return false
		}),
	},
	{
		Name: "dlv-body-id-differs", Rules: []string{"DLV-003", "ID-009"},
		Mistake: "the envelope id is the event id, not the delivery id the webhook-id header carries",
		Hooks: payload(func(v, _ map[string]any) {
			if id, ok := v["id"].(string); ok {
				v["id"] = "evt_" + strings.TrimPrefix(id, "whd_")
			}
		}),
	},
	{
		Name: "err-internal-final", Rules: []string{"ERR-039", "ERR-005"},
		Mistake: "internal_error says retryable false",
		API:     retryable("internal_error", false),
	},
	{
		Name: "err-pricing-unavailable-500", Rules: []string{"ERR-042"},
		Mistake: "pricing_unavailable is answered with HTTP 500",
		API:     status("pricing_unavailable", http.StatusInternalServerError),
	},
	{
		Name: "err-moderation-blocked-400", Rules: []string{"ERR-035"},
		Mistake: "moderation_blocked is answered with HTTP 400",
		API:     status("moderation_blocked", http.StatusBadRequest),
	},
	{
		Name: "err-quota-retryable", Rules: []string{"ERR-037", "ERR-005"},
		Mistake: "quota_exceeded says retryable true (treated like rate_limited)",
		API:     retryable("quota_exceeded", true),
	},
	{
		Name: "err-workspace-gone-404", Rules: []string{"ERR-034", "AUTH-021"},
		Mistake: "workspace_unavailable is answered with HTTP 404",
		API:     status("workspace_unavailable", http.StatusNotFound),
	},
	{
		Name: "err-capability-unavailable-400", Rules: []string{"ERR-028"},
		Mistake: "capability_unavailable is answered with HTTP 400",
		API:     status("capability_unavailable", http.StatusBadRequest),
	},
}
