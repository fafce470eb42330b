package mock

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
// The handler runs on the connection's own goroutine (whose stack keep-alive requests have
// already grown), and a timer armed for the bound does the cut from outside: handing each request
// to another goroutine, as http.TimeoutHandler does, cost two goroutine switches and a wake-up of
// another thread per request, more than the mock's own work on a read. The deadline on the
// handler's context is made only when the handler asks for its Done channel or Err.
func (s *Server) boundHandlers(next http.Handler) http.Handler {
	lim := s.cfg.Limits
	budget, upload := lim.HandlerBudget(), lim.uploadBudget()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := budget
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, blob.UploadPath) {
			d = upload
		}
		j := boundJobs.Get().(*boundJob)
		conn, _ := r.Context().Value(connKey{}).(net.Conn)
		ctx := &boundCtx{Context: r.Context(), deadline: time.Now().Add(d)}
		j.arm(s, w, r, conn, d)
		p, ok := j.serve(next, r.WithContext(ctx))
		ctx.end()
		if !j.finish() {
			// Cut at the bound while it ran: the timer answered (or broke off the answer) and
			// closed the connection. The job stays with the timer's goroutine: never reused.
			<-j.cutDone
			panic(http.ErrAbortHandler)
		}
		switch {
		case ok:
			j.w.finish()
			j.reset()
			return
		case p == http.ErrAbortHandler:
			j.reset()
			panic(p)
		}
		s.svc.Logger.Error("mock: handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(j.stack))
		// On the handler's own goroutine: the answer goes through net/http.
		answerCut(&j.w, r, nil, "The service failed on its side while answering; read the resource before retrying.")
		j.reset()
		// Close the connection: the answer is complete (or broken off).
		panic(http.ErrAbortHandler)
	})
}

// connKey is the context key under which Serve's ConnContext keeps a request's connection (the
// bound closes it when it cuts the handler).
type connKey struct{}

// answerCut stops every later write of the handler and, when it had written nothing, answers
// 500 internal_error in the envelope with why, as a whole answer (Content-Length) with
// Connection: close. From another goroutine than the handler's (the timer's cut) it needs conn
// when the handler writes net/http's own header map (boundedWriter.direct): the answer then goes
// straight to the connection, as net/http's canned answers do, and never touches the map the
// handler may still be writing.
func answerCut(b *boundedWriter, r *http.Request, conn net.Conn, why string) {
	if !b.cut() {
		return
	}
	e := apierr.New(apierr.CodeInternalError, why)
	if conn != nil {
		// Nothing of this answer reached net/http's buffer (nothing was written), and net/http
		// flushed the previous answer before reading this request.
		_, _ = conn.Write(rawAnswer(e, r.Method == http.MethodHead))
		return
	}
	w := b.w
	status, body := wire.Encode(e)
	h := w.Header()
	clear(h) // what the handler set before it panicked (direct) is not this answer's
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

// Job states.
const (
	jobRunning int32 = iota
	jobReturned
	jobCut
)

// boundJob is one bounded request. Jobs of handlers that returned before the bound are reused
// (through boundJobs) with their timer; a cut handler's job is left to it.
type boundJob struct {
	w       boundedWriter
	timer   *time.Timer   // fires expire at the bound
	state   atomic.Int32  // jobRunning, then jobReturned (by the handler) or jobCut (by the timer)
	stack   []byte        // the panicking goroutine's stack, when it panicked
	cutDone chan struct{} // closed once the timer's cut is done (a cut job is never reused)

	// What the timer needs, set by arm.
	s     *Server
	r     *http.Request
	conn  net.Conn
	bound time.Duration
}

var boundJobs = sync.Pool{New: func() any {
	return &boundJob{w: boundedWriter{h: make(http.Header)}, cutDone: make(chan struct{})}
}}

// arm readies j for one request and starts its timer.
func (j *boundJob) arm(s *Server, w http.ResponseWriter, r *http.Request, conn net.Conn, d time.Duration) {
	j.w.w, j.w.direct = w, conn != nil
	j.s, j.r, j.conn, j.bound = s, r, conn, d
	j.state.Store(jobRunning)
	if j.timer == nil {
		j.timer = time.AfterFunc(d, j.expire)
		return
	}
	j.timer.Reset(d)
}

// serve runs the handler and reports how it ended: ok when it returned, else what it panicked
// with (its stack in j.stack). A handler calling runtime.Goexit ends the connection's goroutine,
// as without the bound (its job is dropped, its timer stopped).
func (j *boundJob) serve(next http.Handler, r *http.Request) (p any, ok bool) {
	defer func() {
		if ok {
			return
		}
		p = recover()
		switch {
		case p == nil: // runtime.Goexit: nothing more of this request runs here
			if !j.finish() {
				<-j.cutDone // the cut's answer is written before net/http ends the request
			}
		case p != http.ErrAbortHandler:
			j.stack = debug.Stack()
		}
	}()
	next.ServeHTTP(&j.w, r)
	return nil, true
}

// finish marks the handler as returned; false when the timer cut it first.
func (j *boundJob) finish() bool {
	if !j.state.CompareAndSwap(jobRunning, jobReturned) {
		return false
	}
	if !j.timer.Stop() {
		// The timer fired and lost the race: its expire may still be reading the job.
		j.timer = nil
	}
	return true
}

// expire is the timer's cut at the bound, when the handler is still running.
func (j *boundJob) expire() {
	if !j.state.CompareAndSwap(jobRunning, jobCut) {
		return
	}
	defer close(j.cutDone)
	r := j.r
	j.s.svc.Logger.Error("mock: request cut: its handler ran past the bound",
		"method", r.Method, "path", r.URL.Path, "bound", j.bound.String())
	conn := j.conn
	if !j.w.direct {
		conn = nil // the handler's headers are its own map: the cut answers through net/http
	}
	answerCut(&j.w, r, conn, fmt.Sprintf("The service did not answer within %s and cut the request; "+
		"it may still complete, so read the resource before retrying.", j.bound))
	if j.conn != nil {
		// The answer is complete (or broken off), and the cut handler may still be reading the
		// request body: the connection goes now, and with it its place under Limits.MaxConns.
		_ = j.conn.Close()
	}
}

// reset makes a job of a handler that returned (and was answered) ready for the next request.
func (j *boundJob) reset() {
	clear(j.w.h)
	j.w.w, j.w.direct, j.w.wrote, j.w.status, j.w.closed = nil, false, false, 0, false
	j.s, j.r, j.conn, j.stack = nil, nil, nil, nil
	if j.timer == nil {
		return // its timer may still run expire: a fresh job takes its place
	}
	boundJobs.Put(j)
}

// boundCtx is a bounded handler's context: the request's own with the bound as its deadline. The
// deadline's timer and Done channel (a context.WithDeadline) are made at the first Done or Err:
// most handlers never ask, and making them on every request cost a timer and a registration with
// the request's context.
type boundCtx struct {
	context.Context // the request's
	deadline        time.Time
	slot            wire.Slot // the request's slot (Value(wire.SlotKey{})), so no layer copies the request

	mu     sync.Mutex
	made   atomic.Pointer[context.Context] // the context.WithDeadline, once asked for
	cancel context.CancelFunc
	ended  bool // the handler returned: a later ask gets an ended context
}

func (c *boundCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *boundCtx) Done() <-chan struct{} { return c.get().Done() }
func (c *boundCtx) Err() error            { return c.get().Err() }

// Value answers the request's slot itself, and anything else from the deadline context once it is
// made, so a context derived from this one registers with it directly (no goroutine per derived
// context).
func (c *boundCtx) Value(key any) any {
	if _, ok := key.(wire.SlotKey); ok {
		return &c.slot
	}
	if m := c.made.Load(); m != nil {
		return (*m).Value(key)
	}
	return c.Context.Value(key)
}

func (c *boundCtx) get() context.Context {
	if m := c.made.Load(); m != nil {
		return *m
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.made.Load(); m != nil {
		return *m
	}
	ctx, cancel := context.WithDeadline(c.Context, c.deadline)
	if c.ended {
		cancel()
	}
	c.cancel = cancel
	c.made.Store(&ctx)
	return ctx
}

// end cancels the deadline context, when made, once the handler returned.
func (c *boundCtx) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.cancel != nil {
		c.cancel()
	}
}

// boundedWriter is the ResponseWriter a bounded handler writes through. Served on a connection
// (direct), the handler writes net/http's own header map, and a cut from the timer's goroutine
// answers on the connection without touching it; without one (a handler served on its own, as in
// unit tests) the handler has a header map of its own, copied out when it writes the header, so
// cutting it never races with it. A map of the bound's own cost every answer two copies of its
// headers: into net/http's map, then net/http's own clone of it.
type boundedWriter struct {
	h      http.Header // the handler's header map when not direct (only the handler's goroutine touches it)
	direct bool        // the handler writes w's header map itself (set by arm, read-only while it runs)

	mu     sync.Mutex // guards w, wrote, status, closed
	w      http.ResponseWriter
	wrote  bool
	status int
	closed bool // cut or finished: later writes fail
}

func (b *boundedWriter) Header() http.Header {
	if b.direct {
		return b.w.Header()
	}
	return b.h
}

func (b *boundedWriter) WriteHeader(code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writeHeaderLocked(code)
}

func (b *boundedWriter) writeHeaderLocked(code int) {
	if b.closed || b.wrote {
		return
	}
	if !b.direct {
		copyHeader(b.w.Header(), b.h)
	}
	if code >= 100 && code < 200 {
		b.w.WriteHeader(code)
		return
	}
	b.wrote, b.status = true, code
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
	if !b.wrote && !b.direct {
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
