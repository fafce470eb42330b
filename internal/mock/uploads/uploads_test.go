package uploads

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/media"
)

type env struct {
	s     *Service
	clk   *clock.Manual
	files *blob.Store
	reg   *assets.Registry
}

func newEnv(t *testing.T, mod func(*Deps)) *env {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	src := ids.New(3)
	files := blob.New(clk, []byte("k"), func() string { return "http://mock.test" })
	t.Cleanup(files.Close)
	reg := assets.NewRegistry()
	d := Deps{Clock: clk, IDs: src, Blob: files, Assets: reg, Faults: faults.New(clk, src, faults.ProviderUnavailable)}
	if mod != nil {
		mod(&d)
	}
	return &env{s: New(d), clk: clk, files: files, reg: reg}
}

func code(t *testing.T, err error) apierr.Code {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T) is not an *apierr.Error", err, err)
	}
	return e.Code
}

// put sends bytes to an upload link through the blob handler.
func (e *env) put(t *testing.T, link string, b []byte, ct string) {
	t.Helper()
	u, _ := url.Parse(link)
	req := httptest.NewRequest(http.MethodPut, u.RequestURI(), bytes.NewReader(b))
	req.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	e.files.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body.String())
	}
}

func (e *env) reserveFixture(t *testing.T, ws, name string) string {
	t.Helper()
	f, b := fixtures.Get(name)
	size := int64(len(b))
	r, err := e.s.Reserve(ws, ReserveRequest{FileName: &f.Name, ContentType: &f.ContentType, SizeBytes: &size})
	if err != nil {
		t.Fatal(err)
	}
	e.put(t, r.UploadURL, b, f.ContentType)
	return r.AssetID
}

// The table itself is tested in package netguard; this checks the loopback allowance.
func TestAddrRefusalLoopbackOption(t *testing.T) {
	for _, c := range []struct {
		ip       string
		loopback bool // admitted with AllowLoopbackFetch
		public   bool // admitted always
	}{
		{"127.0.0.1", true, false}, {"127.255.0.9", true, false}, {"::1", true, false}, {"::ffff:127.0.0.1", true, false},
		{"10.0.0.1", false, false}, {"169.254.169.254", false, false}, {"192.0.2.1", false, false}, {"192.88.99.1", false, false},
		{"8.8.8.8", true, true}, {"2606:4700::1111", true, true},
	} {
		ip := netip.MustParseAddr(c.ip)
		if got := addrRefusal(ip, false) == ""; got != c.public {
			t.Errorf("%s without loopback: admitted %v, want %v", c.ip, got, c.public)
		}
		if got := addrRefusal(ip, true) == ""; got != (c.public || c.loopback) {
			t.Errorf("%s with loopback: admitted %v", c.ip, got)
		}
	}
}

// fakeResolver answers each lookup with the next entry of its script (the last one repeats).
type fakeResolver struct {
	mu     sync.Mutex
	script [][]netip.Addr
	err    error
	calls  int
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	i := min(f.calls-1, len(f.script)-1)
	return f.script[i], nil
}

func fromURL(t *testing.T, e *env, link string) (Imported, error) {
	t.Helper()
	return e.s.FromURL(context.Background(), "ws_1", FromURLRequest{URL: &link})
}

func TestFromURLResolution(t *testing.T) {
	// A host that resolves to a private address is refused before any connection.
	r := &fakeResolver{script: [][]netip.Addr{{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.7")}}}
	e := newEnv(t, func(d *Deps) { d.Resolver = r })
	_, err := fromURL(t, e, "https://files.example.org/a.png")
	if code(t, err) != apierr.CodeInvalidConfig || !strings.Contains(err.Error(), "10.0.0.7") {
		t.Fatalf("%v", err)
	}
	// DNS rebinding: the check sees a public address, the dial sees a private one and refuses it
	// before connecting (no packet leaves: the dialer's Control runs first).
	r = &fakeResolver{script: [][]netip.Addr{{netip.MustParseAddr("8.8.8.8")}, {netip.MustParseAddr("192.168.1.20")}}}
	e = newEnv(t, func(d *Deps) { d.Resolver = r })
	_, err = fromURL(t, e, "http://rebind.example.org/a.png")
	if code(t, err) != apierr.CodeInvalidConfig || !strings.Contains(err.Error(), "192.168.1.20") || r.calls != 2 {
		t.Fatalf("rebinding: %v (%d lookups)", err, r.calls)
	}
	// Loopback allowed: a name resolving to loopback then rebinding to private is still refused.
	r = &fakeResolver{script: [][]netip.Addr{{netip.MustParseAddr("127.0.0.1")}, {netip.MustParseAddr("10.9.9.9")}}}
	e = newEnv(t, func(d *Deps) { d.Resolver = r; d.AllowLoopbackFetch = true })
	if _, err = fromURL(t, e, "http://rebind.example.org/a.png"); code(t, err) != apierr.CodeInvalidConfig {
		t.Fatalf("rebinding with loopback allowed: %v", err)
	}
	// A host that does not resolve: 502.
	e = newEnv(t, func(d *Deps) { d.Resolver = &fakeResolver{err: errors.New("no such host")} })
	if _, err = fromURL(t, e, "https://nowhere.example.org/a.png"); code(t, err) != apierr.CodeProviderUnavailable {
		t.Fatalf("unresolvable: %v", err)
	}
	// A queued provider_unavailable fault: 502 before any fetch.
	r = &fakeResolver{script: [][]netip.Addr{{netip.MustParseAddr("10.0.0.1")}}}
	e = newEnv(t, func(d *Deps) { d.Resolver = r })
	if _, err := e.s.d.Faults.Queue(faults.ProviderUnavailable, "", "", 1); err != nil {
		t.Fatal(err)
	}
	if _, err = fromURL(t, e, "https://files.example.org/a.png"); code(t, err) != apierr.CodeProviderUnavailable || r.calls != 0 {
		t.Fatalf("fault: %v (%d lookups)", err, r.calls)
	}
}

func TestFromURLTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	e := newEnv(t, func(d *Deps) { d.AllowLoopbackFetch = true; d.FetchTimeout = 150 * time.Millisecond })
	_, err := fromURL(t, e, srv.URL+"/slow.png")
	if code(t, err) != apierr.CodeProviderUnavailable || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("%v", err)
	}
}

func TestConcurrentFinalize(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	e := newEnv(t, func(d *Deps) {
		d.Inspect = func(declared string, b []byte) (media.Result, error) {
			entered <- struct{}{}
			<-release
			return media.Inspect(declared, b)
		}
	})
	id := e.reserveFixture(t, "ws_1", "image.png")
	done := make(chan error, 1)
	go func() {
		_, err := e.s.Finalize(context.Background(), "ws_1", id)
		done <- err
	}()
	<-entered
	_, err := e.s.Finalize(context.Background(), "ws_1", id)
	if code(t, err) != apierr.CodeRateLimited {
		t.Fatalf("second finalize during the first: %v", err)
	}
	var ae *apierr.Error
	if errors.As(err, &ae); !ae.Retryable {
		t.Error("not retryable")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f, err := e.s.Finalize(context.Background(), "ws_1", id)
	if err != nil || f.ScanStatus != ScanClean {
		t.Fatalf("after: %+v %v", f, err)
	}
}

func TestFinalizeHoldExpires(t *testing.T) {
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	e := newEnv(t, func(d *Deps) {
		d.Inspect = func(declared string, b []byte) (media.Result, error) {
			entered <- struct{}{}
			<-release
			return media.Inspect(declared, b)
		}
	})
	id := e.reserveFixture(t, "ws_1", "audio.wav")
	done := make(chan error, 2)
	finalize := func() {
		_, err := e.s.Finalize(context.Background(), "ws_1", id)
		done <- err
	}
	go finalize()
	<-entered
	e.clk.Advance(FinalizeHold)
	go finalize() // the hold of the first is over: this one runs too
	<-entered
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if u, ok := e.s.LookupUpload("ws_1", id); !ok || !u.Ready || u.Kind != "audio" {
		t.Fatalf("%+v", u)
	}
}

func TestLookupUpload(t *testing.T) {
	e := newEnv(t, nil)
	if _, ok := e.s.LookupUpload("ws_1", "ast_"+strings.Repeat("0", 32)); ok {
		t.Fatal("unknown id found")
	}
	clean := e.reserveFixture(t, "ws_1", "video.mov")
	flagged := e.reserveFixture(t, "ws_1", "flagged.jpg")
	pending := e.reserveFixture(t, "ws_1", "audio.mp3")
	for _, id := range []string{clean, flagged} {
		if _, err := e.s.Finalize(context.Background(), "ws_1", id); err != nil {
			t.Fatal(err)
		}
	}
	if u, ok := e.s.LookupUpload("ws_2", clean); ok {
		t.Fatalf("another workspace sees %+v", u)
	}
	u, _ := e.s.LookupUpload("ws_1", clean)
	if !u.Ready || u.Flagged || u.Kind != "video" || u.DurationMS == nil || *u.DurationMS != 1000 {
		t.Errorf("clean %+v", u)
	}
	u, _ = e.s.LookupUpload("ws_1", flagged)
	if u.Ready || !u.Flagged || u.Kind != "image" || u.DurationMS != nil {
		t.Errorf("flagged %+v", u)
	}
	u, _ = e.s.LookupUpload("ws_1", pending)
	if u.Ready || u.Flagged || u.Kind != "audio" {
		t.Errorf("pending %+v", u)
	}
	// Reset forgets them.
	e.s.Reset()
	if _, ok := e.s.LookupUpload("ws_1", clean); ok {
		t.Error("found after reset")
	}
}

func TestPutStillStreamingIsNotReady(t *testing.T) {
	e := newEnv(t, nil)
	f, b := fixtures.Get("image.gif")
	size := int64(len(b))
	r, err := e.s.Reserve("ws_1", ReserveRequest{FileName: &f.Name, ContentType: &f.ContentType, SizeBytes: &size})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := newBlockingBody()
	u, _ := url.Parse(r.UploadURL)
	req := httptest.NewRequest(http.MethodPut, u.RequestURI(), pr)
	req.Header.Set("Content-Type", f.ContentType)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		e.files.Handler().ServeHTTP(rec, req)
		done <- rec.Code
	}()
	pw.write(b[:10]) // the handler has claimed the slot and is reading
	if _, err := e.s.Finalize(context.Background(), "ws_1", r.AssetID); code(t, err) != apierr.CodeInputNotReady {
		t.Fatalf("mid-PUT finalize: %v", err)
	}
	pw.write(b[10:])
	pw.close()
	if c := <-done; c != 200 {
		t.Fatalf("PUT %d", c)
	}
	if fin, err := e.s.Finalize(context.Background(), "ws_1", r.AssetID); err != nil || !fin.Usable {
		t.Fatalf("%+v %v", fin, err)
	}
}

// blockingBody is a request body fed by the test; write returns once the reader took the bytes.
type blockingBody struct {
	ch   chan []byte
	took chan struct{}
	buf  []byte
}

type blockingWriter struct{ b *blockingBody }

func newBlockingBody() (*blockingBody, blockingWriter) {
	b := &blockingBody{ch: make(chan []byte), took: make(chan struct{})}
	return b, blockingWriter{b}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if len(b.buf) == 0 {
		chunk, ok := <-b.ch
		if !ok {
			return 0, io.EOF
		}
		b.buf = chunk
		b.took <- struct{}{}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (w blockingWriter) write(p []byte) { w.b.ch <- p; <-w.b.took }
func (w blockingWriter) close()         { close(w.b.ch) }

// Issue 24: the pending uploads of all workspaces together hold at most PendingBytesLimit bytes; a
// reservation past it is 429 quota_exceeded, and finalizing (or abandoning) one frees its bytes.
func TestPendingBytesLimit(t *testing.T) {
	f, b := fixtures.Get("image.png")
	size := int64(len(b))
	e := newEnv(t, func(d *Deps) { d.PendingBytesLimit = 2*size + size/2 })
	reserve := func(ws string) (Reservation, error) {
		return e.s.Reserve(ws, ReserveRequest{FileName: &f.Name, ContentType: &f.ContentType, SizeBytes: &size})
	}
	first, err := reserve("ws_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reserve("ws_b"); err != nil {
		t.Fatal(err)
	}
	_, err = reserve("ws_c")
	if code(t, err) != apierr.CodeQuotaExceeded || !strings.Contains(err.Error(), "pending uploads") {
		t.Fatalf("third reservation past the limit: %v", err)
	}
	e.put(t, first.UploadURL, b, f.ContentType)
	if o, ok := e.files.Get(first.AssetID); !ok || o.File == "" || o.Bytes != nil {
		t.Fatalf("the PUT is not in a spool file: %+v", o)
	}
	if _, err := e.s.Finalize(context.Background(), "ws_a", first.AssetID); err != nil {
		t.Fatal(err)
	}
	if _, err := reserve("ws_c"); err != nil {
		t.Fatalf("after a finalize freed its bytes: %v", err)
	}
	e.clk.Advance(PendingWindow)
	if _, err := reserve("ws_c"); err != nil {
		t.Fatalf("after abandoned reservations stopped counting: %v", err)
	}
}

// Issue 24 item 5: a filename that cannot name a stored object is refused with 400 invalid_config
// naming filename (spec/rules.yaml UPLOAD-047); ordinary names, non-ASCII ones included, pass.
func TestFileNamesThatCannotNameAStoredObject(t *testing.T) {
	e := newEnv(t, nil)
	ct, size := "image/png", int64(67)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"cat.png", true}, {"Ünïcødé 猫 photo (1).png", true}, {"..png", true}, {"a b.png", true},
		{"a\x00b.png", false}, {"   ", false}, {"\t", false}, {"../../etc/passwd", false}, {"a/b.png", false},
		{`a\b.png`, false}, {"..", false}, {".", false}, {"photo\u202egnp.exe", false}, {"a\u2066b.png", false}, {"a\nb.png", false},
	} {
		name := c.name
		_, err := e.s.Reserve("ws_a", ReserveRequest{FileName: &name, ContentType: &ct, SizeBytes: &size})
		if c.ok != (err == nil) {
			t.Errorf("filename %q: %v, want accepted %v", c.name, err, c.ok)
			continue
		}
		var ae *apierr.Error
		if err != nil && (!errors.As(err, &ae) || ae.Code != apierr.CodeInvalidConfig || ae.Field != "filename") {
			t.Errorf("filename %q: %v, want invalid_config naming filename", c.name, err)
		}
	}
	u, _ := url.Parse("https://example.com/a%00b.png")
	if got := defaultFileName(u); got != "download" {
		t.Errorf("default name of a link with NUL: %q", got)
	}
}
