package wrongservers

import (
	"encoding/json"
	"net/http"
	"sync"
)

// bucketServers are mistakes in rate-limit buckets.
var bucketServers = []Server{
	{
		Name: "rate-no-retry-after", Rules: []string{"ERR-043", "ERR-009", "RATE-013"},
		Mistake: "a bucket refusal carries neither retry_after_seconds nor Retry-After",
		API: errorsWith(anyAPI, "rate_limited", func(_ *http.Request, a *answer, e map[string]any) {
			delete(e, "retry_after_seconds")
			a.header.Del("Retry-After")
		}),
	},
	{
		Name: "rate-webhook-list-manage", Rules: []string{"RATE-006"},
		Mistake: "GET /webhooks is counted in the webhook_manage bucket (20 a minute) with the writes",
		API: func(_ *Env, next http.Handler) http.Handler {
			var mu sync.Mutex // guards calls
			calls := map[string]int{}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !webhookList(r) && !registerRoute(r) && !deleteRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				k := presented(r)
				mu.Lock()
				calls[k]++
				n := calls[k]
				mu.Unlock()
				if n > 20 && !webhookList(r) {
					w.Header().Set("Retry-After", "60")
					b, _ := json.Marshal(map[string]any{"error": map[string]any{"ok": false, "code": "rate_limited", "message": "Over the webhook_manage rate limit.", "retryable": true, "credits_charged": 0, "retry_after_seconds": 60}})
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write(b)
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
}
