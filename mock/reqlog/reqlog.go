// Package reqlog is the mock's request log: one line per request with the method, the path (never
// the query, which carries link signatures), the status, the duration, the id of the key that made
// the call (never the key) and the error code of a refusal — so a client author whose call is refused
// sees why in the mock's terminal. It logs through the server's slog logger, so --log-format picks
// text or JSON.
package reqlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// maxErrorBody is how much of a refusal's body is kept to read its error code.
const maxErrorBody = 8 << 10

type noteKey struct{}

// note is what the handlers tell the log about a request.
type note struct {
	mu    sync.Mutex
	keyID string
}

// SetKeyID records the id of the key that made the request in ctx (a no-op outside Middleware).
func SetKeyID(ctx context.Context, keyID string) {
	if n, ok := ctx.Value(noteKey{}).(*note); ok {
		n.mu.Lock()
		n.keyID = keyID
		n.mu.Unlock()
	}
}

// Middleware logs each request next serves at level Info on logger.
func Middleware(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		n := &note{}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), noteKey{}, n)))
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start).Round(time.Microsecond)),
		}
		n.mu.Lock()
		if n.keyID != "" {
			attrs = append(attrs, slog.String("key_id", n.keyID))
		}
		n.mu.Unlock()
		if code := rec.errorCode(); code != "" {
			attrs = append(attrs, slog.String("error", code))
		}
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}

// recorder keeps the status and the start of an error body.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if r.status >= 400 && r.body.Len() < maxErrorBody {
		r.body.Write(p[:min(len(p), maxErrorBody-r.body.Len())])
	}
	return r.ResponseWriter.Write(p)
}

// Flush lets a streaming handler flush through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines of upload PUTs).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) errorCode() string {
	if r.status < 400 || r.body.Len() == 0 {
		return ""
	}
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body.Bytes(), &doc) != nil {
		return ""
	}
	return doc.Error.Code
}
