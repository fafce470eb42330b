package mock

import (
	"context"
	"errors"
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
//
// The handler runs on a worker of a pool (its stack already grown by earlier requests), not on a
// goroutine of its own: a fresh goroutine per request cost more than the mock's own work on a
// read, most of it growing the new stack. stop ends the idle workers and lets busy ones end when
// their handler returns; call it once the server no longer serves.
func (s *Server) boundHandlers(next http.Handler) (h http.Handler, stop func()) {
	lim := s.cfg.Limits
	budget, upload := lim.HandlerBudget(), lim.uploadBudget()
	pool := &workerPool{next: next, keep: min(lim.MaxConns, maxIdleWorkers)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := budget
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, blob.UploadPath) {
			d = upload
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		j := boundJobs.Get().(*boundJob)
		j.w.w, j.r = w, r.WithContext(ctx)
		pool.run(j)
		var p any
		var ended bool // the handler returned (or panicked): p is what it panicked with
		select {
		case p = <-j.done:
			ended = true
		case <-ctx.Done():
			p, ended = waitPastCancel(ctx, j.done)
		}
		var why string
		switch {
		case ended && p == nil:
			j.w.finish()
			j.reset()
			return
		case ended && p == http.ErrAbortHandler:
			panic(p)
		case ended:
			s.Logger.Error("mock: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(j.stack))
			why = "The service failed on its side while answering; read the resource before retrying."
		default:
			// The job stays with the cut handler (it may still write through j.w): never reused.
			s.Logger.Error("mock: request cut: its handler ran past the bound", "method", r.Method, "path", r.URL.Path, "bound", d.String())
			why = fmt.Sprintf("The service did not answer within %s and cut the request; it may still complete, so read the resource before retrying.", d)
		}
		if j.w.cut() {
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
	}), pool.stop
}

// waitPastCancel is called when a bounded handler's context ended: at its deadline it reports
// false; when the request's own context ended first (the client went away), it waits for the
// handler until the deadline and reports what the handler ended with, or false at the deadline.
func waitPastCancel(ctx context.Context, done <-chan any) (any, bool) {
	dl, _ := ctx.Deadline()
	if !errors.Is(ctx.Err(), context.Canceled) {
		return nil, false
	}
	t := time.NewTimer(time.Until(dl))
	defer t.Stop()
	select {
	case p := <-done:
		return p, true
	case <-t.C:
		return nil, false
	}
}

// maxIdleWorkers caps the workers a pool keeps idle (besides Limits.MaxConns): a burst past it
// starts workers that end when their handler returns.
const maxIdleWorkers = 256

// boundJob is one request handed to a worker. Jobs of handlers that returned are reused (through
// boundJobs); a cut handler's job is left to it.
type boundJob struct {
	w     boundedWriter
	r     *http.Request
	done  chan any // what the handler ended with: nil, or what it panicked with
	stack []byte   // the panicking goroutine's stack, when it panicked
}

var boundJobs = sync.Pool{New: func() any { return &boundJob{w: boundedWriter{h: make(http.Header)}, done: make(chan any, 1)} }}

// reset makes a job of a handler that returned (and was answered) ready for the next request.
func (j *boundJob) reset() {
	clear(j.w.h)
	j.w.w, j.w.wrote, j.w.status, j.w.closed = nil, false, 0, false
	j.r, j.stack = nil, nil
	boundJobs.Put(j)
}

// workerPool runs bounded handlers on long-lived goroutines.
type workerPool struct {
	next http.Handler
	keep int // idle workers kept at most

	mu      sync.Mutex // guards idle, stopped
	idle    []chan *boundJob
	stopped bool
}

// run hands j to an idle worker, or to a new one when none is idle; the handler's end is sent on
// j.done.
func (p *workerPool) run(j *boundJob) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		in <- j
		return
	}
	p.mu.Unlock()
	in := make(chan *boundJob, 1)
	in <- j
	go p.work(in)
}

// work runs the jobs sent on in until the pool has enough idle workers or is stopped.
func (p *workerPool) work(in chan *boundJob) {
	for j := range in {
		p.serve(j)
		p.mu.Lock()
		if p.stopped || len(p.idle) >= p.keep {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, in)
		p.mu.Unlock()
	}
}

// serve runs one handler and sends how it ended on j.done (a handler calling runtime.Goexit ends
// its worker, after sending nil).
func (p *workerPool) serve(j *boundJob) {
	defer func() {
		v := recover()
		if v != nil && v != http.ErrAbortHandler {
			j.stack = debug.Stack()
		}
		j.done <- v
	}()
	p.next.ServeHTTP(&j.w, j.r)
}

// stop ends the idle workers; busy ones end when their handler returns.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, in := range p.idle {
		close(in)
	}
	p.idle = nil
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
