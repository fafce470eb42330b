package mock

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/uploads"
)

// An upload whose bytes arrived but that was never finalized is forgotten, bytes included, once
// its slot expired and the grace passed; until then it can still be finalized.
func TestAbandonedUploadIsFreed(t *testing.T) {
	e := newEnv(t)
	key := e.s.Info().GenerateKey
	data := strings.Repeat("x", 1000)
	reserve := func() (string, string) {
		r := e.call("POST", "/api/v1/uploads", `{"filename":"a.wav","content_type":"audio/wav","size_bytes":1000}`, bearer(key), "Content-Type: application/json")
		if r.code != 200 && r.code != 201 {
			t.Fatalf("reserve: %d %s", r.code, r.raw)
		}
		u, _ := url.Parse(r.body["upload_url"].(string))
		id := r.body["asset_id"].(string)
		if p := e.call("PUT", u.RequestURI(), data, "Content-Type: audio/wav"); p.code != 200 {
			t.Fatalf("put: %d %s", p.code, p.raw)
		}
		return id, u.RequestURI()
	}
	id, _ := reserve()
	if _, ok := e.s.Blob.Get(id); !ok {
		t.Fatal("the PUT bytes are not stored")
	}
	e.clk.Advance(uploads.PendingWindow - time.Second)
	if _, ok := e.s.Blob.Get(id); !ok {
		t.Fatal("bytes freed before the grace ended")
	}
	e.clk.Advance(time.Second)
	if _, ok := e.s.Blob.Get(id); ok {
		t.Fatal("an abandoned upload's bytes are still resident after slot expiry + grace")
	}
	if _, ok := e.s.Assets.Get(e.s.DefaultWorkspaceID(), id); ok {
		t.Fatal("its asset record is still listed")
	}
	if r := e.call("POST", "/api/v1/uploads/"+id+"/finalize", "", bearer(key)); r.code != 404 || r.errField("code") != "not_found" {
		t.Fatalf("finalize after the grace: %d %s, want 404 not_found", r.code, r.raw)
	}
}
