// Package reqlog is the mock's request log: one line per request with the method, the path (never
// the query, which carries link signatures), the status, the duration, the id of the key that made
// the call (never the key) and the error code of a refusal — so a client author whose call is refused
// sees why in the mock's terminal. It logs through the server's slog logger, so --log-format picks
// text or JSON.
package reqlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// maxErrorBody is how much of a refusal's body is kept to read its error code.
const maxErrorBody = 8 << 10

// SetKeyID records, for the request line, the id of the key that made the request whose answer w
// writes: w is the writer the handler was given (a no-op when no Middleware's recorder is under
// it). The line's note rides on the recorder, not on the request's context: a context value cost
// every logged request a copy of the request.
func SetKeyID(w http.ResponseWriter, keyID string) {
	for w != nil {
		if r, ok := w.(*Recorder); ok && r.note != nil {
			r.note.mu.Lock()
			r.note.keyID = keyID
			r.note.mu.Unlock()
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// note is what the handlers tell the log about a request.
type note struct {
	mu    sync.Mutex
	keyID string
}

// Middleware logs each request next serves at level Info on logger.
func Middleware(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &logRecorder{Recorder: Recorder{ResponseWriter: w, Status: http.StatusOK, Limit: maxErrorBody, Keep: keepErrors}}
		rec.Recorder.note = &rec.note
		next.ServeHTTP(&rec.Recorder, r)
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
		rec.note.mu.Lock()
		if rec.note.keyID != "" {
			line.AddAttrs(slog.String("key_id", rec.note.keyID))
		}
		rec.note.mu.Unlock()
		if code := errorCode(&rec.Recorder); code != "" {
			line.AddAttrs(slog.String("error", code))
		}
		_ = h.Handle(r.Context(), line)
	})
}

// logRecorder is the request log's recorder and its note, in one allocation.
type logRecorder struct {
	Recorder
	note note
}

func keepErrors(status int) bool { return status >= 400 }

// Recorder passes an answer through to ResponseWriter and keeps its status (Status, 200 until
// written) and the first Limit bytes of its body when Keep(status) says so (nil Keep: none). The
// request log keeps the start of error bodies; the client audit (spec/judge/audit) keeps answers.
type Recorder struct {
	http.ResponseWriter
	Status int
	Limit  int
	Keep   func(status int) bool
	Body   bytes.Buffer

	wroteHeader bool
	note        *note // the request log's note (Middleware's recorder only)
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
