package mock

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// HandlerBudget is the wall time one request's handler may run before boundHandlers cuts it:
// between WaitBudget (a parked wait answers before it) and WriteTimeout (the cut's own answer is
// written before the connection's write deadline).
func (l Limits) HandlerBudget() time.Duration {
	return budgetWithin(l.WriteTimeout)
}

// uploadBudget is HandlerBudget for a PUT to an upload link, under UploadTimeout.
func (l Limits) uploadBudget() time.Duration {
	return budgetWithin(l.UploadTimeout)
}

func budgetWithin(d time.Duration) time.Duration {
	wait := max(d-max(d/10, 2*time.Second), d/2)
	return wait + (d-wait)/2
}

// boundHandlers runs every request's handler under a bound (Limits.HandlerBudget; a PUT to an
// upload link: the upload budget) with that deadline on its context. A handler still running at
// the bound is cut: when it has written nothing, the client gets 500 internal_error in the
// envelope (retryable; the work may still finish, so read before retrying) and the connection is
// closed; when it has begun its answer, the connection is closed mid-answer. A handler that
// panics is answered the same way and logged with its stack, instead of net/http dropping the
// connection with no answer. Go cannot stop a goroutine: a cut handler keeps running until it
// returns, and every write it makes afterwards fails with http.ErrHandlerTimeout.
func (s *Server) boundHandlers(next http.Handler) http.Handler {
	lim := s.cfg.Limits
	budget, upload := lim.HandlerBudget(), lim.uploadBudget()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := budget
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, blob.UploadPath) {
			d = upload
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		bw := &boundedWriter{w: w, h: make(http.Header)}
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			next.ServeHTTP(bw, r.WithContext(ctx))
		}()
		timer := time.NewTimer(d)
		defer timer.Stop()
		var why string
		select {
		case p := <-done:
			if p == nil {
				bw.finish()
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.Logger.Error("mock: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			why = "The service failed on its side while answering; read the resource before retrying."
		case <-timer.C:
			s.Logger.Error("mock: request cut: its handler ran past the bound", "method", r.Method, "path", r.URL.Path, "bound", d.String())
			why = fmt.Sprintf("The service did not answer within %s and cut the request; it may still complete, so read the resource before retrying.", d)
		}
		if bw.cut() {
			// A whole answer (Content-Length, not chunked): the connection is aborted right after.
			status, body := wire.Encode(apierr.New(apierr.CodeInternalError, why))
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "no-store")
			h.Set("Connection", "close")
			h.Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(status)
			if r.Method != http.MethodHead {
				_, _ = w.Write(body)
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		// Close the connection: the answer is complete (or broken off), and a cut handler may
		// still be reading the request body.
		panic(http.ErrAbortHandler)
	})
}

// boundedWriter is the ResponseWriter a bounded handler writes through. The handler has its own
// header map, copied out when it writes the header, so cutting it never races with it.
type boundedWriter struct {
	h http.Header // the handler's header map (only the handler's goroutine touches it)

	mu     sync.Mutex // guards w, wrote, status, closed
	w      http.ResponseWriter
	wrote  bool
	status int
	closed bool // cut or finished: later writes fail
}

func (b *boundedWriter) Header() http.Header { return b.h }

func (b *boundedWriter) WriteHeader(code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writeHeaderLocked(code)
}

func (b *boundedWriter) writeHeaderLocked(code int) {
	if b.closed || b.wrote {
		return
	}
	if code >= 100 && code < 200 {
		copyHeader(b.w.Header(), b.h)
		b.w.WriteHeader(code)
		return
	}
	b.wrote, b.status = true, code
	copyHeader(b.w.Header(), b.h)
	b.w.WriteHeader(code)
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, http.ErrHandlerTimeout
	}
	b.writeHeaderLocked(http.StatusOK)
	return b.w.Write(p)
}

// Flush lets a streaming handler flush through the bound.
func (b *boundedWriter) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.writeHeaderLocked(http.StatusOK)
	if f, ok := b.w.(http.Flusher); ok {
		f.Flush()
	}
}

// cut stops every later write of the handler and reports whether nothing was written yet (the
// caller may then answer in its place).
func (b *boundedWriter) cut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return !b.wrote
}

// finish ends the handler's writes once it returned.
func (b *boundedWriter) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.wrote {
		// The handler wrote nothing: net/http answers 200 with its headers, as without the bound.
		copyHeader(b.w.Header(), b.h)
	}
	b.closed = true
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}
