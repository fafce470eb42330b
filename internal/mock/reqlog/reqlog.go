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
		rec := NewRecorder(w, maxErrorBody, func(status int) bool { return status >= 400 })
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), noteKey{}, n)))
		h := logger.Handler()
		if !h.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		// The record goes straight to the handler: the line is the one logger.LogAttrs writes,
		// without the caller's program counter (runtime.Callers) that no handler here prints.
		line := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		line.AddAttrs(
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.Status),
			slog.Duration("duration", time.Since(start).Round(time.Microsecond)),
		)
		n.mu.Lock()
		if n.keyID != "" {
			line.AddAttrs(slog.String("key_id", n.keyID))
		}
		n.mu.Unlock()
		if code := errorCode(rec); code != "" {
			line.AddAttrs(slog.String("error", code))
		}
		_ = h.Handle(r.Context(), line)
	})
}

// Recorder passes an answer through to ResponseWriter and keeps its status (Status, 200 until
// written) and the first Limit bytes of its body when Keep(status) says so (nil Keep: none). The
// request log keeps the start of error bodies; the client audit (mock/audit) keeps answers.
type Recorder struct {
	http.ResponseWriter
	Status int
	Limit  int
	Keep   func(status int) bool
	Body   bytes.Buffer

	wroteHeader bool
}

// NewRecorder returns a Recorder over w with status 200.
func NewRecorder(w http.ResponseWriter, limit int, keep func(status int) bool) *Recorder {
	return &Recorder{ResponseWriter: w, Status: http.StatusOK, Limit: limit, Keep: keep}
}

// WriteHeader records the first status written.
func (r *Recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.Status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

// Write keeps what fits under Limit when Keep allows, and passes p on whole.
func (r *Recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if room := r.Limit - r.Body.Len(); room > 0 && r.Keep != nil && r.Keep(r.Status) {
		r.Body.Write(p[:min(len(p), room)])
	}
	return r.ResponseWriter.Write(p)
}

// Flush lets a streaming handler flush through the recorder.
func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines of upload PUTs).
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func errorCode(r *Recorder) string {
	if r.Status < 400 || r.Body.Len() == 0 {
		return ""
	}
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body.Bytes(), &doc) != nil {
		return ""
	}
	return doc.Error.Code
}
