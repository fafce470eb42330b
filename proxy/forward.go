package proxy

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/mock"
)

// plainTransport carries the forwarding's plain requests itself: a GET or HEAD without a body to
// an http upstream, as nearly every request of a load test is. It writes the request on a pooled
// upstream connection and reads the answer on the calling goroutine, where net/http's Transport
// hands each request to a writer goroutine and each answer back from a reader goroutine of the
// connection (three wake-ups an answer: on a loaded machine most of what the proxy's forwarding
// cost beyond its system calls). Every other request (a body, another method, an upgrade, TLS,
// another host than the upstream, an upstream reached through an environment proxy) goes to the
// fallback Transport, as before.
//
// What it keeps of the Transport's behaviour: the request's bytes are http.Request.Write's (the
// Transport's own writer; it does not add Accept-Encoding, so an answer reaches the client as the
// upstream encoded it for the client's own header); the answer's header block is capped
// (MaxAnswerHeader, the same error text); up to max1xx informational answers are handed to the
// trace (httputil.ReverseProxy forwards them); a request on a reused connection that failed
// before any byte of its answer came is sent once more on a new one (a GET or HEAD is
// idempotent; the upstream may have closed an idle connection); the client going away (the
// request's context) cuts the upstream connection at once; the answer's header must come within
// answerHeaderTimeout; a connection is reused only after its answer was read to the end, and at
// most maxIdle wait, each for at most idleFor.
type plainTransport struct {
	fallback      http.RoundTripper
	dialer        net.Dialer
	idle          chan *upConn  // bounded: a connection that finds it full is closed
	headerTimeout time.Duration // how long the answer's header may take
	host          string        // the upstream's host[:port] when no environment proxy reaches it; "" otherwise
}

const (
	maxIdle   = 256
	idleFor   = 90 * time.Second // as http.DefaultTransport's IdleConnTimeout
	max1xx    = 5                // as net/http's Transport
	upBufSize = 4 << 10
)

// answerHeaderTimeout is how long the answer's header may take: as long as the proxy's own server
// gives a request to be answered (Serve's WriteTimeout, the mock's).
var answerHeaderTimeout = mock.DefaultLimits.WriteTimeout

// errHeaderCap is what a header block over MaxAnswerHeader gives (the Transport's words, which
// upstreamError recognises).
var errHeaderCap = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", MaxAnswerHeader)

// newPlainTransport carries plain requests to upstream itself and the rest on fallback. Whether an
// environment proxy (HTTP_PROXY, NO_PROXY) reaches the upstream is decided here, once, as
// http.ProxyFromEnvironment decides it (it reads the environment once per process anyway).
func newPlainTransport(fallback http.RoundTripper, upstream *url.URL) *plainTransport {
	t := &plainTransport{
		fallback: fallback,
		dialer:   net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		idle:     make(chan *upConn, maxIdle),

		headerTimeout: answerHeaderTimeout,
	}
	if u, err := http.ProxyFromEnvironment(&http.Request{URL: upstream}); err == nil && u == nil && upstream.Scheme == "http" {
		t.host = upstream.Host
	}
	return t
}

// upConn is one upstream connection with its buffers.
type upConn struct {
	conn    net.Conn
	lim     *capReader
	br      *bufio.Reader
	bw      *bufio.Writer
	idleAt  time.Time
	reused  bool
	address string
}

// capReader fails a read past left bytes (left < 0: no cap); it caps what is read for a header
// block as the Transport does (bytes read ahead of the body count too).
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(b []byte) (int, error) {
	if c.left == 0 {
		return 0, errHeaderCap
	}
	if c.left > 0 && int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	if c.left > 0 {
		c.left -= int64(n)
	}
	return n, err
}

// plain reports whether req is one the plain transport carries.
func (t *plainTransport) plain(req *http.Request) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return false
	}
	if req.URL.Scheme != "http" || req.URL.Host != t.host || t.host == "" || req.Close || (req.Body != nil && req.Body != http.NoBody) || req.ContentLength > 0 ||
		len(req.TransferEncoding) > 0 || len(req.Trailer) > 0 {
		return false
	}
	if _, ok := req.Header["Upgrade"]; ok {
		return false
	}
	if _, ok := req.Header["Expect"]; ok {
		return false
	}
	return true
}

// RoundTrip implements http.RoundTripper.
func (t *plainTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.plain(req) {
		return t.fallback.RoundTrip(req)
	}
	ctx := req.Context()
	address := req.URL.Host
	if req.URL.Port() == "" {
		address = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	for attempt := 0; ; attempt++ {
		uc, err := t.get(ctx, address)
		if err != nil {
			return nil, err
		}
		res, answered, err := t.exchange(ctx, uc, req)
		if err == nil {
			return res, nil
		}
		uc.conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if uc.reused && !answered && attempt == 0 {
			continue
		}
		return nil, err
	}
}

// get returns an idle connection to address, or a new one.
func (t *plainTransport) get(ctx context.Context, address string) (*upConn, error) {
	for {
		var uc *upConn
		select {
		case uc = <-t.idle:
		default:
			return t.dial(ctx, address)
		}
		if uc.address == address && time.Since(uc.idleAt) < idleFor {
			uc.reused = true
			return uc, nil
		}
		uc.conn.Close()
	}
}

// dial opens a new connection to address.
func (t *plainTransport) dial(ctx context.Context, address string) (*upConn, error) {
	conn, err := t.dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	uc := &upConn{conn: conn, address: address}
	uc.lim = &capReader{r: conn, left: -1}
	uc.br = bufio.NewReaderSize(uc.lim, upBufSize)
	uc.bw = bufio.NewWriterSize(conn, upBufSize)
	return uc, nil
}

// put keeps uc for the next request, or closes it when enough wait.
func (t *plainTransport) put(uc *upConn) {
	uc.idleAt = time.Now()
	select {
	case t.idle <- uc:
	default:
		uc.conn.Close()
	}
}

// CloseIdleConnections closes the connections waiting for a request (and the fallback's).
func (t *plainTransport) CloseIdleConnections() {
	for {
		select {
		case uc := <-t.idle:
			uc.conn.Close()
		default:
			if c, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
				c.CloseIdleConnections()
			}
			return
		}
	}
}

// exchange writes req on uc and reads its answer's header. answered reports whether any byte of
// an answer came (a request that failed before is safe to send again).
func (t *plainTransport) exchange(ctx context.Context, uc *upConn, req *http.Request) (res *http.Response, answered bool, err error) {
	// The client going away cuts the connection: a read or a write in progress fails at once.
	cut := context.AfterFunc(ctx, func() { _ = uc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, bool, error) {
		cut()
		return nil, answered, err
	}
	if err := req.Write(uc.bw); err != nil {
		return fail(err)
	}
	if err := uc.bw.Flush(); err != nil {
		return fail(err)
	}
	// A deadline set after the cut fired would undo it: look at the context after each.
	if err := uc.conn.SetReadDeadline(time.Now().Add(t.headerTimeout)); err != nil || ctx.Err() != nil {
		return fail(cmp.Or(ctx.Err(), err))
	}
	trace := httptrace.ContextClientTrace(ctx)
	for n1xx := 0; ; n1xx++ {
		uc.lim.left = MaxAnswerHeader + int64(uc.br.Buffered())
		if _, err := uc.br.Peek(1); err != nil {
			return fail(err)
		}
		answered = true
		res, err = http.ReadResponse(uc.br, req)
		if err != nil {
			if uc.lim.left == 0 {
				err = errHeaderCap
			}
			return fail(err)
		}
		if res.StatusCode >= 200 {
			break
		}
		if res.StatusCode == http.StatusSwitchingProtocols || n1xx >= max1xx {
			return fail(fmt.Errorf("proxy: unexpected %d answer to %s %s", res.StatusCode, req.Method, req.URL.Path))
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(res.StatusCode, textproto.MIMEHeader(res.Header)); err != nil {
				return fail(err)
			}
		}
	}
	uc.lim.left = -1
	if err := uc.conn.SetReadDeadline(time.Time{}); err != nil || ctx.Err() != nil {
		// Clearing the deadline may have undone the cut: close the connection before the body,
		// whose Close would otherwise drain an answer that may never end.
		uc.conn.Close()
		res.Body.Close()
		return fail(cmp.Or(ctx.Err(), err))
	}
	reuse := !res.Close
	if res.Body == http.NoBody || res.Body == nil {
		t.release(uc, cut, reuse)
		res.Body = http.NoBody
		return res, true, nil
	}
	res.Body = &upBody{rc: res.Body, ctx: ctx, t: t, uc: uc, cut: cut, reuse: reuse}
	return res, true, nil
}

// release ends a request on uc: the connection is reused when its answer was read whole, the
// upstream keeps it open and the client did not go away meanwhile; otherwise it is closed.
func (t *plainTransport) release(uc *upConn, cut func() bool, reuse bool) {
	if !cut() || !reuse || uc.br.Buffered() > 0 {
		uc.conn.Close()
		return
	}
	t.put(uc)
}

// upBody is an answer's body on a pooled connection: read to its end and closed, the connection
// goes back to the pool; closed early, or after an error, the connection is closed.
type upBody struct {
	rc    io.ReadCloser
	ctx   context.Context
	t     *plainTransport
	uc    *upConn
	cut   func() bool
	reuse bool

	mu   sync.Mutex // guards eof, done
	eof  bool
	done bool
}

func (b *upBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.mu.Lock()
		b.eof = err == io.EOF
		b.mu.Unlock()
		if ctxErr := b.ctx.Err(); err != io.EOF && ctxErr != nil {
			// A cut connection reads as a timeout: say why.
			err = ctxErr
		}
	}
	return n, err
}

func (b *upBody) Close() error {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return nil
	}
	b.done = true
	eof := b.eof
	b.mu.Unlock()
	if !eof {
		b.cut()
		return b.uc.conn.Close()
	}
	b.t.release(b.uc, b.cut, b.reuse)
	return nil
}
