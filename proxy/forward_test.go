package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// forwardPair is a proxy in front of upstream, each an httptest server on 127.0.0.1:0; conns
// counts the upstream's new connections.
type forwardPair struct {
	front *httptest.Server
	proxy *Proxy
	conns *atomic.Int64
}

func startForward(t *testing.T, upstream http.Handler) *forwardPair {
	t.Helper()
	up := httptest.NewUnstartedServer(upstream)
	var conns atomic.Int64
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	p, err := New(context.Background(), Config{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return &forwardPair{front: front, proxy: p, conns: &conns}
}

// Plain requests go on the proxy's own connections (forward.go), and those are reused.
func TestForwardPlainRequestsReuseConnections(t *testing.T) {
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.RequestURI())
	}))
	if _, ok := fp.proxy.rp.Transport.(*plainTransport); !ok {
		t.Fatalf("the default forwarding is %T, want the plain transport", fp.proxy.rp.Transport)
	}
	for i := range 20 {
		res, err := http.Get(fp.front.URL + fmt.Sprintf("/a/%d?q=%d", i, i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want := fmt.Sprintf("GET /a/%d?q=%d", i, i); string(b) != want {
			t.Fatalf("got %q, want %q", b, want)
		}
	}
	if n := fp.conns.Load(); n != 1 {
		t.Errorf("20 requests one after the other took %d upstream connections, want 1", n)
	}
}

// Hop-by-hop headers (those named by Connection too) go neither up nor down; the rest arrive as
// sent, and the Host is the upstream's.
func TestForwardDropsHopByHopHeaders(t *testing.T) {
	var got http.Header
	var host string
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, host = r.Header.Clone(), r.Host
		w.Header().Set("Connection", "X-Down-Hop")
		w.Header().Set("X-Down-Hop", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-Down-End", "kept")
		fmt.Fprint(w, "ok")
	}))
	req, _ := http.NewRequest("GET", fp.front.URL+"/h", nil)
	req.Header.Set("Connection", "X-Up-Hop")
	req.Header.Set("X-Up-Hop", "1")
	req.Header.Set("Keep-Alive", "timeout=5")
	req.Header.Set("Proxy-Authorization", "Basic eDp5")
	req.Header.Set("X-Up-End", "kept")
	req.Header.Set("Authorization", "Bearer sk_live_x")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	for _, h := range []string{"X-Up-Hop", "Keep-Alive", "Proxy-Authorization"} {
		if v, ok := got[h]; ok {
			t.Errorf("the upstream got the hop-by-hop header %s: %q", h, v)
		}
	}
	if got.Get("X-Up-End") != "kept" || got.Get("Authorization") != "Bearer sk_live_x" {
		t.Errorf("end-to-end headers lost on the way up: %v", got)
	}
	if host != fp.proxy.upstream.Host {
		t.Errorf("the upstream got Host %q, want its own %q", host, fp.proxy.upstream.Host)
	}
	for _, h := range []string{"X-Down-Hop", "Keep-Alive"} {
		if v, ok := res.Header[h]; ok {
			t.Errorf("the client got the hop-by-hop header %s: %q", h, v)
		}
	}
	if res.Header.Get("X-Down-End") != "kept" {
		t.Errorf("end-to-end headers lost on the way down: %v", res.Header)
	}
}

// A HEAD answer has no body whatever its Content-Length says, and its connection is reused.
func TestForwardHead(t *testing.T) {
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		if r.Method != http.MethodHead {
			_, _ = w.Write(make([]byte, 1234))
		}
	}))
	for range 3 {
		res, err := http.Head(fp.front.URL + "/file")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.ContentLength != 1234 || len(b) != 0 {
			t.Fatalf("HEAD: %d, length %d, %d bytes of body", res.StatusCode, res.ContentLength, len(b))
		}
	}
	res, err := http.Get(fp.front.URL + "/file")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if len(b) != 1234 {
		t.Errorf("GET after HEADs: %d bytes, want 1234", len(b))
	}
	if n := fp.conns.Load(); n != 1 {
		t.Errorf("3 HEADs and a GET took %d upstream connections, want 1", n)
	}
}

// Informational answers reach the client before the final one; trailers follow the body.
func TestForward1xxAndTrailers(t *testing.T) {
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Trailer", "X-Checksum")
		w.WriteHeader(200)
		fmt.Fprint(w, "body")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Checksum", "abc")
	}))
	var early []string
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			early = append(early, fmt.Sprint(code, " ", h.Get("Link")))
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, "GET", fp.front.URL+"/early", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if len(early) != 1 || early[0] != "103 </style.css>; rel=preload" {
		t.Errorf("informational answers seen: %q, want the 103 with its Link", early)
	}
	if string(b) != "body" || res.Trailer.Get("X-Checksum") != "abc" {
		t.Errorf("body %q, trailers %v; want the body and X-Checksum abc", b, res.Trailer)
	}
}

// An answer streams: the client reads its first part while the upstream still holds the rest, and
// a long answer arrives whole while the proxy keeps only MaxAnswerBody of it.
func TestForwardStreamsBodies(t *testing.T) {
	release := make(chan struct{})
	const total = 2 * MaxAnswerBody
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"data":"`)
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, strings.Repeat("x", total))
		fmt.Fprint(w, `"}`)
	}))
	res, err := http.Get(fp.front.URL + "/api/v1/capabilities")
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, len(`{"data":"`))
	if _, err := io.ReadFull(res.Body, first); err != nil {
		close(release)
		t.Fatalf("the first part did not stream ahead of the rest: %v", err)
	}
	close(release)
	rest, err := io.ReadAll(res.Body)
	if err != nil || len(rest) != total+2 {
		t.Fatalf("the rest: %d bytes, %v; want %d", len(rest), err, total+2)
	}
	if err := fp.proxy.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	fp.proxy.ringMu.Lock()
	defer fp.proxy.ringMu.Unlock()
	if len(fp.proxy.ring) != 1 || fp.proxy.ring[0].Status != 200 {
		t.Errorf("exchanges listed: %+v", fp.proxy.ring)
	}
}

// An upstream that gives no answer gets the documented 502; one that closed an idle connection is
// not an error (the request goes again on a new connection).
func TestForwardUpstreamErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Answers one request on each connection, then closes it without saying so (no
	// Connection: close): the proxy's pooled connection is dead when it next takes it. A path of
	// /drop is closed with no answer at all.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil || req.URL.Path == "/drop" {
					return
				}
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}(c)
		}
	}()
	p, err := New(context.Background(), Config{Upstream: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front := httptest.NewServer(p)
	defer front.Close()
	get := func(path string) (int, string) {
		res, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b)
	}
	for i := range 3 {
		if code, body := get("/again"); code != 200 || body != "ok" {
			t.Errorf("request %d after the upstream closed the last connection: %d %q", i+1, code, body)
		}
	}
	code, body := get("/drop")
	if code != http.StatusBadGateway || !strings.HasPrefix(body, "mediaspec proxy: the upstream http://"+ln.Addr().String()+" gave no answer: ") {
		t.Errorf("no answer: got %d %q, want the 502 line", code, body)
	}
}

// An upstream whose answer's header does not come in time gets the 502.
func TestForwardAnswerHeaderTimeout(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	fp.proxy.rp.Transport.(*plainTransport).headerTimeout = 100 * time.Millisecond
	res, err := http.Get(fp.front.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "gave no answer") {
		t.Errorf("got %d %q, want the 502", res.StatusCode, b)
	}
}

// A client that goes away cuts the upstream request at once: the upstream sees its connection
// close, while waiting for the answer's header and while streaming the body.
func TestForwardClientGoneCancelsUpstream(t *testing.T) {
	for _, stage := range []string{"header", "body"} {
		t.Run(stage, func(t *testing.T) {
			gone := make(chan struct{})
			started := make(chan struct{})
			var once sync.Once
			fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if stage == "body" {
					w.WriteHeader(200)
					fmt.Fprint(w, "part")
					w.(http.Flusher).Flush()
				}
				once.Do(func() { close(started) })
				<-r.Context().Done()
				close(gone)
			}))
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", fp.front.URL+"/hang", nil)
			done := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				done <- err
			}()
			<-started
			cancel()
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream request went on 10 s after the client left")
			}
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("the client's request ended with %v", err)
			}
		})
	}
}

// Requests that are not plain (a body, another method) take net/http's Transport, unchanged.
func TestForwardOthersTakeTheTransport(t *testing.T) {
	fp := startForward(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	}))
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, fp.front.URL+"/x", strings.NewReader("payload"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != m+" payload" {
			t.Errorf("%s: got %q", m, b)
		}
	}
	pt := newPlainTransport(nil, &url.URL{Scheme: "http", Host: "u"})
	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "http://v/x", nil),
		httptest.NewRequest("POST", "http://u/x", strings.NewReader("b")),
		httptest.NewRequest("GET", "https://u/x", nil),
		httptest.NewRequest("GET", "http://u/x", strings.NewReader("a body")),
	} {
		if pt.plain(r) {
			t.Errorf("%s %s (length %d) counted as plain", r.Method, r.URL, r.ContentLength)
		}
	}
	if !pt.plain(httptest.NewRequest("GET", "http://u/x", nil)) {
		t.Error("a GET without a body to the upstream not counted as plain")
	}
	up := httptest.NewRequest("GET", "http://u/x", nil)
	up.Header.Set("Upgrade", "websocket")
	if pt.plain(up) {
		t.Error("an upgrade counted as plain")
	}
}

// Close lets go of the upstream connections that wait for a request.
func TestForwardCloseClosesIdleConnections(t *testing.T) {
	closed := make(chan struct{}, 1)
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	up.Start()
	defer up.Close()
	p, err := New(context.Background(), Config{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	res, err := http.Get(front.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	p.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection was still open 10 s after Close")
	}
}

// An answer's body closed before its end (the client stopped reading, or the forwarding failed
// while copying) closes the upstream connection: it never reads the rest to keep the connection,
// which an answer that never ends would hold for ever.
func TestForwardEarlyCloseDoesNotDrain(t *testing.T) {
	gone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		fmt.Fprint(w, "part")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // an answer that never ends while the connection lives
		close(gone)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	pt := newPlainTransport(nil, u)
	defer pt.CloseIdleConnections()
	req, _ := http.NewRequest("GET", up.URL+"/endless", nil)
	res, err := pt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Body.(*upBody); !ok {
		t.Fatalf("the answer's body is a %T, not the plain transport's", res.Body)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(res.Body, b); err != nil || string(b) != "part" {
		t.Fatalf("read %q, %v", b, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- res.Body.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the body early was still draining it 10 s later")
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection was still open 10 s after the body was closed early")
	}
	if n := len(pt.idle); n != 0 {
		t.Errorf("%d connections kept after an answer closed before its end", n)
	}
}
