package mock

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/blob"
)

// Limits bound what one client can hold of a long-running mock: how long a request may take to
// arrive and to be answered, how long an idle keep-alive connection stays open, how many
// connections are served at once, and how long a shutdown waits for requests in flight. Zero
// fields take the values of DefaultLimits.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, headers and body (an upload PUT: UploadTimeout).
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end of its answer. It is
	// longer than a wait at time scale 1 (18 s); a wait still parked near the bound answers
	// 200 still_running a few seconds before it (WaitBudget).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request for this long.
	IdleTimeout time.Duration
	// UploadTimeout replaces ReadTimeout and WriteTimeout for a PUT to an upload link, which may
	// carry a large file.
	UploadTimeout time.Duration
	// MaxConns caps concurrent connections. At the cap a new client makes the mock close the
	// connection idle the longest (a keep-alive connection between requests); while none is idle
	// it waits until one closes or goes idle.
	MaxConns int
	// MaxHeaderBytes caps a request's header block (beyond it: 400 invalid_config, see canned.go).
	MaxHeaderBytes int
	// ShutdownGrace is how long Serve lets requests in flight finish after its context ends
	// (parked waits answer at once); longer than a wait.
	ShutdownGrace time.Duration
}

// DefaultLimits are the limits of a zero Limits field.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      60 * time.Second,
	IdleTimeout:       120 * time.Second,
	UploadTimeout:     10 * time.Minute,
	MaxConns:          1024,
	MaxHeaderBytes:    64 << 10,
	ShutdownGrace:     30 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	pick(&l.ReadTimeout, d.ReadTimeout)
	pick(&l.WriteTimeout, d.WriteTimeout)
	pick(&l.IdleTimeout, d.IdleTimeout)
	pick(&l.UploadTimeout, d.UploadTimeout)
	pick(&l.ShutdownGrace, d.ShutdownGrace)
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}

// WaitBudget is the wall time a wait may stay parked before it answers 200 still_running, so
// its answer is written before WriteTimeout cuts the connection.
func (l Limits) WaitBudget() time.Duration {
	return max(l.WriteTimeout-max(l.WriteTimeout/10, 2*time.Second), l.WriteTimeout/2)
}

// limitIO gives a PUT to an upload link its own read and write deadlines (UploadTimeout) in
// place of the server's.
func (s *Server) limitIO(next http.Handler) http.Handler {
	upload := s.cfg.Limits.UploadTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, blob.UploadPath) {
			rc := http.NewResponseController(w)
			until := time.Now().Add(upload)
			_ = rc.SetReadDeadline(until)
			_ = rc.SetWriteDeadline(until)
		}
		next.ServeHTTP(w, r)
	})
}

// limitListener serves at most n connections at once. When n are open and another client
// connects, the connection idle the longest (a keep-alive connection waiting for its next request)
// is closed to make room; with none idle the new client waits, accepted, until one closes or goes
// idle. Its connections answer net/http's own text answers in the envelope (envelopeForCanned).
// Pass its ConnState to the http.Server, which is how it learns which connections are idle.
func limitListener(ln net.Listener, n, maxHeaderBytes int) *capListener {
	return &capListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}),
		maxHeaderBytes: maxHeaderBytes, conns: map[*capConn]struct{}{}, wentIdle: make(chan struct{}, 1)}
}

// capListener tracks idleness on each connection (capConn.idleSince) with atomics, not in a shared
// map under a lock: ConnState runs twice per request, and only a client waiting at the cap reads
// the whole set.
type capListener struct {
	net.Listener
	slots          chan struct{}
	done           chan struct{}
	closeOnce      sync.Once
	maxHeaderBytes int
	wentIdle       chan struct{} // signalled, while Accept waits (waiting > 0), when a connection goes idle
	waiting        atomic.Int32  // Accepts waiting for a connection to go idle
	idleSeq        atomic.Int64  // orders the moments connections went idle

	mu    sync.Mutex // guards conns
	conns map[*capConn]struct{}
}

func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &capConn{Conn: c, maxHeaderBytes: l.maxHeaderBytes}
	cc.release = func() {
		l.forget(cc)
		<-l.slots
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return l.track(cc), nil
		default:
		}
		if l.closeLongestIdle() {
			continue // its slot is free
		}
		// wentIdle is signalled only while an Accept waits: count this one, then look once more
		// for a connection that went idle before it counted.
		l.waiting.Add(1)
		if l.closeLongestIdle() {
			l.waiting.Add(-1)
			continue
		}
		select {
		case l.slots <- struct{}{}:
			l.waiting.Add(-1)
			return l.track(cc), nil
		case <-l.wentIdle:
			l.waiting.Add(-1)
		case <-l.done:
			l.waiting.Add(-1)
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// track adds cc, which holds a slot, to the connections served.
func (l *capListener) track(cc *capConn) *capConn {
	l.mu.Lock()
	l.conns[cc] = struct{}{}
	l.mu.Unlock()
	return cc
}

// closeLongestIdle closes the connection idle the longest, which frees its slot; false when none
// is idle.
func (l *capListener) closeLongestIdle() bool {
	victim := l.longestIdle()
	if victim != nil {
		_ = victim.Close()
	}
	return victim != nil
}

// longestIdle takes the connection idle the longest out of the idle set (nil when none is): it
// claims it, so it is no longer idle for anyone else.
func (l *capListener) longestIdle() *capConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		var victim *capConn
		var since int64
		for c := range l.conns {
			if t := c.idleSince.Load(); t != 0 && (victim == nil || t < since) {
				victim, since = c, t
			}
		}
		if victim == nil || victim.idleSince.CompareAndSwap(since, 0) {
			return victim
		}
		// It went active (or idle again) while we looked: look again.
	}
}

func (l *capListener) forget(c *capConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// ConnState is the http.Server hook that tells the listener which connections are idle.
func (l *capListener) ConnState(c net.Conn, st http.ConnState) {
	cc, ok := c.(*capConn)
	if !ok {
		return
	}
	if st != http.StateIdle {
		cc.idleSince.Store(0)
		return
	}
	cc.idleSince.Store(l.idleSeq.Add(1))
	if l.waiting.Load() > 0 {
		select {
		case l.wentIdle <- struct{}{}:
		default:
		}
	}
}

func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type capConn struct {
	net.Conn
	idleSince      atomic.Int64 // when it went idle (capListener.idleSeq), 0 while not idle
	once           sync.Once
	release        func()
	maxHeaderBytes int
}

// Write writes p, or the envelope in place of a canned text answer of net/http.
func (c *capConn) Write(p []byte) (int, error) {
	if env, ok := envelopeForCanned(p, c.maxHeaderBytes); ok {
		if _, err := c.Conn.Write(env); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes a TCP connection, as net/http does after a 431 so the client reads the
// answer before the connection goes.
func (c *capConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
