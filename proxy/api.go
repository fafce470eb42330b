package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// serveAPI serves the proxy's own routes:
//
//	GET    /_proxy/v1/findings   the findings so far (Report as JSON), after every exchange that
//	                             ended before the call was judged
//	DELETE /_proxy/v1/findings   drop the findings and what the proxy remembers across exchanges
//	GET    /_proxy/v1/exchanges  the latest exchanges (at most MaxExchanges), oldest first
func (p *Proxy) serveAPI(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case FindingsPath:
		switch r.Method {
		case http.MethodGet:
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			_ = p.Sync(ctx)
			writeJSON(w, http.StatusOK, p.Report())
		case http.MethodDelete:
			p.Clear()
			writeJSON(w, http.StatusOK, map[string]any{"ok": true, "cleared": true})
		default:
			w.Header().Set("Allow", "GET, DELETE")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "message": "use GET or DELETE"})
		}
	case ExchangesPath:
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"ok": false, "message": "use GET"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		_ = p.Sync(ctx)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "exchanges": p.Exchanges()})
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"ok": false, "message": "unknown proxy route; see " + FindingsPath + " and " + ExchangesPath})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
