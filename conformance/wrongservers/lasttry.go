package wrongservers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// lastTry is the state of the wrong server wh-delete-last-try, per run (one Env): the failed
// deliveries pending a retry, by receiver path, the receiver path of each endpoint, and the handler
// that reaches the suite's receiver.
type lastTry struct {
	mu      sync.Mutex // guards next, pending, paths
	next    http.Handler
	pending map[string][]held // receiver path -> failed attempts (the latest of each delivery)
	paths   map[string]string // webhook id -> receiver path
}

var lastTries sync.Map // *Env -> *lastTry

func lastTryOf(env *Env) *lastTry {
	v, _ := lastTries.LoadOrStore(env, &lastTry{pending: map[string][]held{}, paths: map[string]string{}})
	return v.(*lastTry)
}

// deleteLastTry is a server whose endpoint delete flushes the endpoint's pending retries once
// more, right away (a last try), instead of removing them (WH-022: pending deliveries are removed).
var deleteLastTry = Server{
	Name: "wh-delete-last-try", Rules: []string{"WH-022"},
	Mistake: "deleting an endpoint sends its pending retries one last time, right away, instead of removing them",
	Hooks: func(env *Env, next http.Handler) http.Handler {
		t := lastTryOf(env)
		t.mu.Lock()
		t.next = next
		t.mu.Unlock()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := requestBody(r)
			// The copy outlives the attempt: a context of its own, not the attempt's.
			c := r.Clone(context.Background())
			c.Header = r.Header.Clone()
			// Pending from its arrival until a 2XX answer ends it.
			id := c.Header.Get("Webhook-Id")
			drop := func() {
				t.pending[c.URL.Path] = slices.DeleteFunc(t.pending[c.URL.Path], func(h held) bool { return h.r.Header.Get("Webhook-Id") == id })
			}
			t.mu.Lock()
			drop()
			t.pending[c.URL.Path] = append(t.pending[c.URL.Path], held{r: c, body: b})
			t.mu.Unlock()
			a := serve(next, r)
			if a.status >= 200 && a.status <= 299 {
				t.mu.Lock()
				drop()
				t.mu.Unlock()
			}
			a.send(w)
		})
	},
	API: func(env *Env, next http.Handler) http.Handler {
		t := lastTryOf(env)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := serve(next, r)
			d, ok := a.doc()
			switch {
			case registerRoute(r) && a.status == http.StatusCreated && ok:
				wh := obj(d, "webhook")
				if u, err := url.Parse(stringOf(wh["url"])); err == nil {
					t.mu.Lock()
					t.paths[stringOf(wh["webhook_id"])] = u.Path
					t.mu.Unlock()
				}
			case deleteRoute(r) && a.status == http.StatusOK:
				t.mu.Lock()
				path := t.paths[r.URL.Path[len(apiPrefix+"/webhooks/"):]]
				pending, hooks := t.pending[path], t.next
				delete(t.pending, path)
				t.mu.Unlock()
				for _, h := range pending {
					if hooks == nil {
						break
					}
					setRequestBody(h.r, h.body)
					sendAgain(env, hooks, h.r, h.body, func(hd http.Header, _ map[string]any) {
						hd.Set("Webhook-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
					})
				}
			}
			a.send(w)
		})
	},
}
