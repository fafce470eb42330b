package mock

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/mock/blob"
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
	// MaxConns caps concurrent connections; further clients wait in the listen backlog until one
	// closes.
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

// limitListener serves at most n connections at once: Accept waits while n are open. Its
// connections answer net/http's own text answers in the envelope (envelopeForCanned).
func limitListener(ln net.Listener, n, maxHeaderBytes int) net.Listener {
	return &capListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}), maxHeaderBytes: maxHeaderBytes}
}

type capListener struct {
	net.Listener
	slots          chan struct{}
	done           chan struct{}
	closeOnce      sync.Once
	maxHeaderBytes int
}

func (l *capListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &capConn{Conn: c, release: func() { <-l.slots }, maxHeaderBytes: l.maxHeaderBytes}, nil
}

func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type capConn struct {
	net.Conn
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
