// Package hostile is a peer that misbehaves on purpose, for the tests of every tool that reads from
// a server or client nobody here controls (mediaspec check, proxy, receive, check-receiver): answers
// that never end, compression bombs, slow drips, header blocks of megabytes, malformed chunked
// encoding, a Content-Length that lies, redirect loops and redirects off the target. A server
// answers every request with its Kind (except the paths it is told to spare); Send makes one hostile
// request as a client would.
//
// Every kind is bounded by Options.Limit so that a tool that fails to cap what it reads grows by at
// most that much in a test, never without end; a zero Limit (a measurement against the built
// binary) sends without end.
package hostile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind is one way of misbehaving.
type Kind string

// The kinds of hostile peer.
const (
	// Endless answers 200 application/json with a chunked body that never ends.
	Endless Kind = "endless"
	// Bomb answers 200 application/json with Content-Encoding gzip: a few hundred kilobytes on the
	// wire that decompress to gigabytes (a client that asked for gzip decompresses as it reads).
	Bomb Kind = "gzip-bomb"
	// Slow sends its headers at once, then one byte of body every Drip.
	Slow Kind = "slow"
	// Headers sends 2,000 header fields of 1 KB each with a small answer.
	Headers Kind = "huge-headers"
	// Chunked sends a chunked body whose second chunk-size line is not hexadecimal (Go's reader
	// says "invalid byte in chunk length").
	Chunked Kind = "bad-chunked"
	// ShortLength announces a Content-Length of 1,000 bytes, sends 10 and closes the connection.
	ShortLength Kind = "short-length"
	// HugeLength announces a Content-Length of 10 GB and sends zeros.
	HugeLength Kind = "huge-length"
	// RedirectLoop answers 302 with a Location pointing at the same URL.
	RedirectLoop Kind = "redirect-loop"
	// Amplify answers 200 application/json with a body just within a JSON cap (Options.JSONSize,
	// default 4 MiB less 1 KiB) of tiny nested objects, the document that takes the most memory decoded
	// (about 50 times its size).
	Amplify Kind = "json-amplify"
	// RedirectAway answers 302 with a Location off loopback (192.0.2.1, TEST-NET-1, which nothing
	// answers).
	RedirectAway Kind = "redirect-away"
)

// Kinds lists every kind, for tests that range over them.
var Kinds = []Kind{Endless, Bomb, Slow, Headers, Chunked, ShortLength, HugeLength, RedirectLoop, RedirectAway, Amplify}

// Options tune a server.
type Options struct {
	// Limit bounds the bytes one hostile body sends, or decompresses to (0: no end).
	Limit int64
	// Drip is the pause between two bytes of a Slow body (default 100ms).
	Drip time.Duration
	// JSONSize is the size of an Amplify body (default 4 MiB less 1 KiB, within check's JSON cap).
	JSONSize int64
	// Spare lists paths answered 200 {"ok":true} instead (e.g. the probes a client makes before the
	// call under test).
	Spare []string
}

// Server is a hostile HTTP server on 127.0.0.1.
type Server struct {
	URL  string // http://127.0.0.1:port
	Kind Kind

	ln   net.Listener
	opts Options
	wg   sync.WaitGroup
	mu   sync.Mutex // guards conns, closed
	conn map[net.Conn]struct{}
	shut bool
}

// Start starts a server of the kind on 127.0.0.1:0. Close stops it.
func Start(kind Kind, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if opts.Drip <= 0 {
		opts.Drip = 100 * time.Millisecond
	}
	if kind == Bomb {
		bombMember() // compressed before the first request, not while a client waits for it
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Kind: kind, ln: ln, opts: opts, conn: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Close stops the server and ends every connection.
func (s *Server) Close() {
	s.mu.Lock()
	s.shut = true
	for c := range s.conn {
		_ = c.Close()
	}
	s.mu.Unlock()
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.shut {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conn[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conn, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.serve(c)
		}()
	}
}

// serve answers the requests of one connection, as raw bytes (the kinds break HTTP on purpose).
func (s *Server) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		_ = req.Body.Close()
		if s.spared(req.URL.Path) {
			body := `{"ok":true}`
			if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
				return
			}
			continue
		}
		if !s.answer(c, req) {
			return
		}
	}
}

func (s *Server) spared(path string) bool {
	for _, p := range s.opts.Spare {
		if path == p {
			return true
		}
	}
	return false
}

// answer writes the hostile answer; it reports whether the connection may serve another request.
func (s *Server) answer(w io.Writer, req *http.Request) bool {
	limit := s.opts.Limit
	switch s.Kind {
	case Endless:
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := bytes.Repeat([]byte(`{"a":[1,2,3]},`), 64<<10/14)
		head := fmt.Sprintf("%x\r\n", len(chunk))
		if _, err := io.WriteString(w, "1\r\n[\r\n"); err != nil {
			return false
		}
		for sent := int64(0); limit == 0 || sent < limit; sent += int64(len(chunk)) {
			if _, err := io.WriteString(w, head); err != nil {
				return false
			}
			if _, err := w.Write(chunk); err != nil {
				return false
			}
			if _, err := io.WriteString(w, "\r\n"); err != nil {
				return false
			}
		}
		_, _ = io.WriteString(w, "2\r\n0]\r\n0\r\n\r\n")
		return true
	case Bomb:
		member := bombMember()
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
		for sent := int64(0); limit == 0 || sent < limit; sent += bombExpands {
			if _, err := fmt.Fprintf(w, "%x\r\n", len(member)); err != nil {
				return false
			}
			if _, err := w.Write(member); err != nil {
				return false
			}
			if _, err := io.WriteString(w, "\r\n"); err != nil {
				return false
			}
		}
		_, _ = io.WriteString(w, "0\r\n\r\n")
		return true
	case Slow:
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
		for sent := int64(0); limit == 0 || sent < limit; sent++ {
			if _, err := io.WriteString(w, "1\r\n \r\n"); err != nil {
				return false
			}
			time.Sleep(s.opts.Drip)
		}
		_, _ = io.WriteString(w, "0\r\n\r\n")
		return true
	case Headers:
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
		value := strings.Repeat("x", 1000)
		for i := range 2000 {
			fmt.Fprintf(&b, "X-Filler-%d: %s\r\n", i, value)
		}
		b.WriteString("Content-Length: 11\r\n\r\n{\"ok\":true}")
		_, err := io.WriteString(w, b.String())
		return err == nil
	case Chunked:
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\nnot a chunk\r\n")
		return false
	case ShortLength:
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"ok\":true")
		return false
	case HugeLength:
		_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000000\r\n\r\n")
		zeros := make([]byte, 64<<10)
		for sent := int64(0); limit == 0 || sent < limit; sent += int64(len(zeros)) {
			if _, err := w.Write(zeros); err != nil {
				return false
			}
		}
		return false
	case Amplify:
		size := s.opts.JSONSize
		if size == 0 {
			size = 4<<20 - 1<<10
		}
		unit := `{"a":{}},`
		body := "[" + strings.Repeat(unit, int(size-2)/len(unit)) + "0]"
		_, err := fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return err == nil
	case RedirectLoop, RedirectAway:
		loc := "http://" + req.Host + req.URL.RequestURI()
		if s.Kind == RedirectAway {
			loc = "http://192.0.2.1" + req.URL.RequestURI()
		}
		_, err := fmt.Fprintf(w, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", loc)
		return err == nil
	}
	_, _ = io.WriteString(w, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
	return false
}

// bombExpands is how many bytes one bomb member decompresses to.
const bombExpands = 16 << 20

// bombMember is one gzip member of bombExpands zeros (about 16 KB). Go's gzip reader reads
// concatenated members as one stream, so sending it again and again makes a body that expands
// without end.
var bombMember = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range bombExpands / len(zeros) {
		_, _ = zw.Write(zeros)
	}
	_ = zw.Close()
	return buf.Bytes()
})

// Send makes one hostile request of the kind to url (a server the test runs, e.g. a receiver) and
// returns the status it answered (0 when it answered nothing). Of the kinds, Endless, Bomb, Slow,
// Headers, Chunked, ShortLength and HugeLength make sense for a request; the redirects do not. The
// request is a POST with a JSON body; it gives up after timeout.
func Send(kind Kind, url string, opts Options, timeout time.Duration) (status int, err error) {
	host := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
	path := "/"
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host, path = host[:i], host[i:]
	}
	c, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if opts.Drip <= 0 {
		opts.Drip = 100 * time.Millisecond
	}
	done := make(chan struct{})
	var wrote error
	go func() {
		defer close(done)
		wrote = writeRequest(c, kind, host, path, opts)
	}()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		_ = c.Close()
		<-done
		if wrote != nil {
			return 0, fmt.Errorf("%v (writing: %v)", err, wrote)
		}
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	_ = c.Close()
	<-done
	return res.StatusCode, nil
}

func writeRequest(w io.Writer, kind Kind, host, path string, opts Options) error {
	start := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
	switch kind {
	case Headers:
		var b strings.Builder
		b.WriteString(start)
		value := strings.Repeat("x", 1000)
		for i := range 2000 {
			fmt.Fprintf(&b, "X-Filler-%d: %s\r\n", i, value)
		}
		b.WriteString("Content-Length: 2\r\n\r\n{}")
		_, err := io.WriteString(w, b.String())
		return err
	case Chunked:
		_, err := io.WriteString(w, start+"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\nnot a chunk\r\n")
		return err
	case ShortLength:
		_, err := io.WriteString(w, start+"Content-Length: 1000\r\n\r\n{\"ok\":true")
		return err
	case HugeLength:
		if _, err := io.WriteString(w, start+"Content-Length: "+strconv.FormatInt(10_000_000_000, 10)+"\r\n\r\n"); err != nil {
			return err
		}
		return writeZeros(w, opts.Limit)
	case Bomb:
		if _, err := io.WriteString(w, start+"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"); err != nil {
			return err
		}
		member := bombMember()
		for sent := int64(0); opts.Limit == 0 || sent < opts.Limit; sent += bombExpands {
			if _, err := fmt.Fprintf(w, "%x\r\n%s\r\n", len(member), member); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "0\r\n\r\n")
		return err
	case Slow:
		if _, err := io.WriteString(w, start+"Transfer-Encoding: chunked\r\n\r\n"); err != nil {
			return err
		}
		for sent := int64(0); opts.Limit == 0 || sent < opts.Limit; sent++ {
			if _, err := io.WriteString(w, "1\r\n \r\n"); err != nil {
				return err
			}
			time.Sleep(opts.Drip)
		}
		_, err := io.WriteString(w, "0\r\n\r\n")
		return err
	default: // Endless
		if _, err := io.WriteString(w, start+"Transfer-Encoding: chunked\r\n\r\n"); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte(`{"a":[1,2,3]},`), 64<<10/14)
		for sent := int64(0); opts.Limit == 0 || sent < opts.Limit; sent += int64(len(chunk)) {
			if _, err := fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "0\r\n\r\n")
		return err
	}
}

func writeZeros(w io.Writer, limit int64) error {
	zeros := make([]byte, 64<<10)
	for sent := int64(0); limit == 0 || sent < limit; sent += int64(len(zeros)) {
		if _, err := w.Write(zeros); err != nil {
			return err
		}
	}
	return nil
}

// HeapGrowth samples the heap in use (runtime/metrics, no stop-the-world) every few milliseconds
// until the returned stop is called, and stop returns the peak growth over the heap at the start.
// Tests use it to show that a tool meeting a hostile peer keeps its memory bounded: the heap moves
// with what the tool reads, without the runtime's or the race detector's own overhead.
func HeapGrowth() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base, peak := read(), uint64(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		if peak < base {
			return 0
		}
		return peak - base
	}
}
