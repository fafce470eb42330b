package receiver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// maxAwaitTimeout caps the timeout parameter of GET /_receiver/events/await.
const maxAwaitTimeout = 5 * time.Minute

// serveAPI serves the listing API under APIPrefix. Routes (all JSON, no authentication: bind the
// receiver to loopback or put it behind your own guard):
//
//	GET  /_receiver/attempts?delivery_id=&path=&verdict=  -> {ok, attempts: [attempt]}   (arrival order)
//	GET  /_receiver/events?type=&resource_id=&path=       -> {ok, events: [event]}       (created_at order)
//	GET  /_receiver/events/await?type=&resource_id=&path=&timeout=30s
//	     -> 200 {ok, event} once a match was received (at once if already), or 504 {ok: false, error}
//	POST /_receiver/reset                                 -> {ok}
func (r *Receiver) serveAPI(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case APIPrefix + "attempts":
		if !allow(w, req, http.MethodGet) {
			return
		}
		q := req.URL.Query()
		out := []Attempt{}
		for _, a := range r.Attempts() {
			if (q.Get("delivery_id") == "" || q.Get("delivery_id") == a.DeliveryID) &&
				(q.Get("path") == "" || q.Get("path") == a.Path) &&
				(q.Get("verdict") == "" || Verdict(q.Get("verdict")) == a.Verdict) {
				out = append(out, a)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "attempts": out})
	case APIPrefix + "events":
		if !allow(w, req, http.MethodGet) {
			return
		}
		out := r.Find(matchFromQuery(req))
		if out == nil {
			out = []Event{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "events": out})
	case APIPrefix + "events/await":
		if !allow(w, req, http.MethodGet) {
			return
		}
		timeout := 30 * time.Second
		if s := req.URL.Query().Get("timeout"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 || d > maxAwaitTimeout {
				writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false,
					"error": fmt.Sprintf("timeout %q: want a duration above 0 and at most %s", s, maxAwaitTimeout)})
				return
			}
			timeout = d
		}
		ctx, cancel := context.WithTimeout(req.Context(), timeout)
		defer cancel()
		ev, err := r.Await(ctx, matchFromQuery(req))
		if err != nil {
			writeJSON(w, http.StatusGatewayTimeout, map[string]any{"ok": false, "error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "event": ev})
	case APIPrefix + "reset":
		if !allow(w, req, http.MethodPost) {
			return
		}
		r.Reset()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false,
			"error": "unknown receiver route; see GET " + APIPrefix + "attempts, GET " + APIPrefix +
				"events, GET " + APIPrefix + "events/await, POST " + APIPrefix + "reset"})
	}
}

func matchFromQuery(req *http.Request) Match {
	q := req.URL.Query()
	return Match{Type: q.Get("type"), ResourceID: q.Get("resource_id"), Path: q.Get("path")}
}

func allow(w http.ResponseWriter, req *http.Request, method string) bool {
	if req.Method == method || (method == http.MethodGet && req.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "error": "use " + method})
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}
