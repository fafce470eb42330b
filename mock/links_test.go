package mock

import (
	"net/url"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/blob"
)

// File links are served on the mock's own listener, are the same for the same seed, and die with a
// reset.
func TestFileLinksAreServedAndReset(t *testing.T) {
	e := newEnv(t)
	e.s.Blob.Put(blob.Object{AssetID: "ast_1", WorkspaceID: e.s.DefaultWorkspaceID(), ContentType: "audio/wav", FileName: "a.wav", Bytes: []byte("RIFF")})
	link, _ := e.s.Blob.DownloadURL("ast_1", "a.wav", 600*time.Second)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.call("GET", u.RequestURI(), ""); r.code != 200 || r.raw != "RIFF" || r.hdr.Get("Content-Type") != "audio/wav" {
		t.Fatalf("link answered %d %q %q", r.code, r.hdr.Get("Content-Type"), r.raw)
	}
	again, _ := newEnv(t).s.Blob.DownloadURL("ast_1", "a.wav", 600*time.Second)
	if again != link {
		t.Errorf("same seed, different link:\n%s\n%s", link, again)
	}
	e.s.Reset()
	if r := e.call("GET", u.RequestURI(), ""); r.code != 404 {
		t.Errorf("after reset the link answered %d, want 404", r.code)
	}
}
