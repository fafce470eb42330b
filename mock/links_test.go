package mock

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/blob"
)

// File links are served on the mock's own listener, are the same for the same seed, and die with a
// reset.
func TestFileLinksAreServedAndReset(t *testing.T) {
	e := newEnv(t)
	e.s.svc.Blob.Put(blob.Object{AssetID: "ast_1", WorkspaceID: e.s.DefaultWorkspaceID(), ContentType: "audio/wav",
		FileName: "a.wav", Bytes: []byte("RIFF")})
	link, _ := e.s.svc.Blob.DownloadURL("ast_1", "a.wav", 600*time.Second)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.call("GET", u.RequestURI(), ""); r.code != 200 || r.raw != "RIFF" || r.hdr.Get("Content-Type") != "audio/wav" {
		t.Fatalf("link answered %d %q %q", r.code, r.hdr.Get("Content-Type"), r.raw)
	}
	again, _ := newEnv(t).s.svc.Blob.DownloadURL("ast_1", "a.wav", 600*time.Second)
	if again != link {
		t.Errorf("same seed, different link:\n%s\n%s", link, again)
	}
	e.s.Reset()
	if r := e.call("GET", u.RequestURI(), ""); r.code != 404 {
		t.Errorf("after reset the link answered %d, want 404", r.code)
	}
}

// An expired link stays expired after any sequence of advances: the clock stops at its bound
// instead of wrapping, and an advance past the bound is refused naming seconds.
func TestExpiredLinkStaysExpiredAfter400Years(t *testing.T) {
	e := newEnv(t)
	e.s.svc.Blob.Put(blob.Object{AssetID: "ast_1", WorkspaceID: e.s.DefaultWorkspaceID(), ContentType: "audio/wav",
		FileName: "a.wav", Bytes: []byte("RIFF")})
	link, _ := e.s.svc.Blob.DownloadURL("ast_1", "a.wav", 600*time.Second)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/clock/advance", `{"seconds":601}`, 200)
	if r := e.call("GET", u.RequestURI(), ""); r.code == 200 {
		t.Fatal("the link answered 200 after it expired")
	}
	tenYears := 10 * 365 * 24 * 3600
	refused := 0
	for range 40 { // 400 years
		r := e.call("POST", "/_control/v1/clock/advance", fmt.Sprintf(`{"seconds":%d}`, tenYears), ctl())
		switch {
		case r.code == 400 && r.errField("code") == "invalid_config" && r.errField("field") == "seconds":
			refused++
		case r.code != 200:
			t.Fatalf("advance: %d %s", r.code, r.raw)
		}
		if r := e.call("GET", u.RequestURI(), ""); r.code == 200 {
			t.Fatalf("the expired link answered 200 again after %d advances", refused)
		}
	}
	if refused == 0 {
		t.Fatal("400 years of advances were all accepted")
	}
	// The last seconds up to the bound are accepted; one more is refused.
	e.control("POST", "/clock/advance", fmt.Sprintf(`{"seconds":%.0f}`, e.s.svc.Clock.Headroom().Seconds()), 200)
	e.control("POST", "/clock/advance", `{"seconds":1}`, 400)
}
