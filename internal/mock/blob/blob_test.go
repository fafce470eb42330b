package blob

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func newStore(t *testing.T) (*Store, *clock.Manual, *httptest.Server) {
	t.Helper()
	clk := clock.NewManual(t0)
	var srv *httptest.Server
	s := New(clk, []byte("test-key"), func() string { return srv.URL })
	srv = httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(s.Close)
	return s, clk, srv
}

func do(t *testing.T, method, link string, body []byte, contentType string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, link, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func TestDownloadLinkLifetimeAndSignature(t *testing.T) {
	s, clk, _ := newStore(t)
	png := []byte("\x89PNG fake bytes")
	s.Put(Object{AssetID: "ast_1", WorkspaceID: "ws_1", ContentType: "image/png", FileName: "out 1.png", Bytes: png})
	link, exp := s.DownloadURL("ast_1", "out 1.png", 600*time.Second)
	if !exp.Equal(t0.Add(600 * time.Second)) {
		t.Errorf("expires at %v", exp)
	}
	res, body := do(t, "GET", link, nil, "")
	if res.StatusCode != 200 || !bytes.Equal(body, png) || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("fresh link: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "inline") {
		t.Errorf("Content-Disposition %q, want inline", cd)
	}
	res, _ = do(t, "GET", link+"&download=1", nil, "")
	if cd := res.Header.Get("Content-Disposition"); res.StatusCode != 200 || !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, `filename="out 1.png"`) {
		t.Errorf("download=1: %d %q", res.StatusCode, cd)
	}
	// Tampering with any signed part is refused.
	u, _ := url.Parse(link)
	for name, mut := range map[string]func(url.Values, *url.URL){
		"signature": func(q url.Values, _ *url.URL) { q.Set("sig", strings.Repeat("0", 64)) },
		"expiry":    func(q url.Values, _ *url.URL) { q.Set("expires", "99999999999") },
		"asset":     func(_ url.Values, u *url.URL) { u.Path = strings.Replace(u.Path, "ast_1", "ast_2", 1) },
		"no sig":    func(q url.Values, _ *url.URL) { q.Del("sig") },
	} {
		v := *u
		q := v.Query()
		mut(q, &v)
		v.RawQuery = q.Encode()
		if res, _ := do(t, "GET", v.String(), nil, ""); res.StatusCode != 401 {
			t.Errorf("tampered %s: %d, want 401", name, res.StatusCode)
		}
	}
	clk.Advance(599 * time.Second)
	if res, _ := do(t, "GET", link, nil, ""); res.StatusCode != 200 {
		t.Errorf("at 599 s: %d, want 200", res.StatusCode)
	}
	clk.Advance(time.Second)
	res, body = do(t, "GET", link, nil, "")
	if res.StatusCode != 401 || !strings.Contains(string(body), "expired") || !strings.Contains(string(body), `"code":"not_authorized"`) {
		t.Errorf("at 600 s: %d %s, want 401 not_authorized expired", res.StatusCode, body)
	}
	fresh, _ := s.DownloadURL("ast_1", "out 1.png", 600*time.Second)
	if res, _ := do(t, "HEAD", fresh, nil, ""); res.StatusCode != 200 || res.ContentLength != int64(len(png)) {
		t.Errorf("HEAD on a fresh link: %d, length %d", res.StatusCode, res.ContentLength)
	}
	s.Delete("ast_1")
	if res, _ := do(t, "GET", fresh, nil, ""); res.StatusCode != 404 {
		t.Errorf("deleted file: %d, want 404", res.StatusCode)
	}
	if res, body := do(t, "POST", fresh, nil, ""); res.StatusCode != 404 || res.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(string(body), `"code":"not_found"`) {
		t.Errorf("POST to a file link: %d %q %s, want 404 not_found with Allow", res.StatusCode, res.Header.Get("Allow"), body)
	}
}

func reserve(s *Store, id string, size int64) string {
	return s.ReserveUpload(Slot{AssetID: id, WorkspaceID: "ws_1", ContentType: "image/png", FileName: "a.png", Size: size, ExpiresAt: t0.Add(300 * time.Second)})
}

func TestUploadSlotRules(t *testing.T) {
	s, clk, _ := newStore(t)
	data := []byte("0123456789")
	cases := []struct {
		name, ct  string
		body      []byte
		wantCode  int
		violation string
	}{
		{"exact", "image/png", data, 200, ""},
		{"parameters and case are ignored", "Image/PNG; charset=binary", data, 200, ""},
		{"too short", "image/png", data[:9], 400, "sent 9 bytes"},
		{"too long", "image/png", append(data, 'x'), 400, "more than 10"},
		{"other type", "image/jpeg", data, 400, "Content-Type"},
		{"no type", "", data, 400, "Content-Type"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "ast_" + string(rune('a'+i))
			link := reserve(s, id, 10)
			res, _ := do(t, "PUT", link, c.body, c.ct)
			if res.StatusCode != c.wantCode {
				t.Fatalf("PUT answered %d, want %d", res.StatusCode, c.wantCode)
			}
			st, _ := s.SlotState(id)
			if !st.Used || st.Received != (c.violation == "") || !strings.Contains(st.Violation, c.violation) {
				t.Errorf("slot state %+v", st)
			}
			_, stored := s.Get(id)
			if stored != (c.violation == "") {
				t.Errorf("stored = %v", stored)
			}
			// The link is spent either way: a second PUT is refused and does not replace the file.
			res, _ = do(t, "PUT", link, data, "image/png")
			if res.StatusCode != 401 {
				t.Errorf("second PUT answered %d, want 401", res.StatusCode)
			}
			if st2, _ := s.SlotState(id); st2.Received != st.Received {
				t.Error("second PUT changed the outcome")
			}
		})
	}
	late := reserve(s, "ast_late", 10)
	clk.Advance(300 * time.Second)
	if res, _ := do(t, "PUT", late, data, "image/png"); res.StatusCode != 401 {
		t.Errorf("late PUT answered %d, want 401", res.StatusCode)
	}
	st, _ := s.SlotState("ast_late")
	if st.Used || st.Received || !st.Expired {
		t.Errorf("late slot %+v: want unused, not received, expired", st)
	}
}

// Two PUTs racing on one link: exactly one is accepted.
func TestUploadSlotIsSingleUseUnderRace(t *testing.T) {
	s, _, _ := newStore(t)
	link := reserve(s, "ast_race", 4)
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := do(t, "PUT", link, []byte("abcd"), "image/png")
			codes <- res.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == 200 {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d PUTs accepted, want exactly 1", ok)
	}
}

func TestParseLink(t *testing.T) {
	s, _, _ := newStore(t)
	d, _ := s.DownloadURL("ast_x", "f.wav", time.Minute)
	u := reserve(s, "ast_y", 1)
	for link, want := range map[string]string{d: "ast_x", u: "ast_y"} {
		if got, err := ParseLink(link); err != nil || got != want {
			t.Errorf("ParseLink(%s) = %q, %v", link, got, err)
		}
	}
	if _, err := ParseLink("http://h/other"); err == nil {
		t.Error("a foreign link parsed")
	}
}

// An upload PUT is streamed to a spool file, never held in the heap; the download streams it back;
// Delete removes the file and Close the spool directory.
func TestUploadIsSpooledToAFile(t *testing.T) {
	s, clk, _ := newStore(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	link := s.ReserveUpload(Slot{AssetID: "ast_big", WorkspaceID: "ws_1", ContentType: "video/mp4", FileName: "big.mp4",
		Size: int64(len(body)), ExpiresAt: clk.Now().Add(time.Minute)})
	if res, b := do(t, http.MethodPut, link, body, "video/mp4"); res.StatusCode != 200 {
		t.Fatalf("PUT: %d %s", res.StatusCode, b)
	}
	o, ok := s.Get("ast_big")
	if !ok || o.File == "" || o.Bytes != nil || o.Size != int64(len(body)) {
		t.Fatalf("stored %+v", o)
	}
	dl, _ := s.DownloadURL("ast_big", "big.mp4", time.Minute)
	if res, b := do(t, http.MethodGet, dl, nil, ""); res.StatusCode != 200 || !bytes.Equal(b, body) {
		t.Fatalf("download: %d, %d bytes", res.StatusCode, len(b))
	}
	s.Delete("ast_big")
	if _, err := os.Stat(o.File); !os.IsNotExist(err) {
		t.Fatalf("spool file left after Delete: %v", err)
	}
	s.Put(Object{AssetID: "ast_imp", ContentType: "video/mp4", Bytes: body})
	o, _ = s.Get("ast_imp")
	if o.File == "" {
		t.Fatal("a large Put is not spooled")
	}
	s.Close()
	if _, err := os.Stat(filepath.Dir(o.File)); !os.IsNotExist(err) {
		t.Fatalf("spool directory left after Close: %v", err)
	}
}
