package assets

import (
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func ids(p []Asset) []string {
	var out []string
	for _, a := range p {
		out = append(out, a.ID)
	}
	return out
}

func TestOwnershipIsPartOfEveryLookup(t *testing.T) {
	r := NewRegistry()
	r.Put(Asset{ID: "ast_a", WorkspaceID: "ws_1", Kind: "image", Listed: true, CreatedAt: t0})
	if _, ok := r.Get("ws_2", "ast_a"); ok {
		t.Error("another workspace reads the asset")
	}
	if _, ok := r.Update("ws_2", "ast_a", func(a *Asset) { a.Usable = true }); ok {
		t.Error("another workspace updates the asset")
	}
	if r.Delete("ws_2", "ast_a") {
		t.Error("another workspace deletes the asset")
	}
	if a, ok := r.Update("ws_1", "ast_a", func(a *Asset) { a.Usable = true }); !ok || !a.Usable {
		t.Error("the owner cannot update")
	}
	if p, _ := r.List("ws_2", Filter{}, "", 10); len(p) != 0 {
		t.Errorf("another workspace lists %v", ids(p))
	}
	if !r.Delete("ws_1", "ast_a") {
		t.Error("the owner cannot delete")
	}
	if _, ok := r.Get("ws_1", "ast_a"); ok {
		t.Error("deleted asset still readable")
	}
}

func TestListOrderFiltersAndPaging(t *testing.T) {
	r := NewRegistry()
	// ast_0..ast_6: created one second apart; ast_5 and ast_6 share a second (added later wins).
	for i := 0; i < 7; i++ {
		at := t0.Add(time.Duration(min(i, 5)) * time.Second)
		kind, src := "image", SourceUpload
		if i%2 == 1 {
			kind, src = "video", SourceOutput
		}
		r.Put(Asset{ID: fmt.Sprintf("ast_%d", i), WorkspaceID: "ws_1", Kind: kind, Source: src, Listed: true, CreatedAt: at})
	}
	r.Put(Asset{ID: "ast_reserved", WorkspaceID: "ws_1", Kind: "image", Source: SourceUpload, Listed: false, CreatedAt: t0.Add(time.Hour)})

	p, next := r.List("ws_1", Filter{}, "", 3)
	if got := fmt.Sprint(ids(p)); got != "[ast_6 ast_5 ast_4]" || next != "ast_4" {
		t.Fatalf("page 1 = %s next %q", got, next)
	}
	p, next = r.List("ws_1", Filter{}, next, 3)
	if got := fmt.Sprint(ids(p)); got != "[ast_3 ast_2 ast_1]" || next != "ast_1" {
		t.Fatalf("page 2 = %s next %q", got, next)
	}
	p, next = r.List("ws_1", Filter{}, next, 3)
	if got := fmt.Sprint(ids(p)); got != "[ast_0]" || next != "" {
		t.Fatalf("last page = %s next %q", got, next)
	}
	// An exact last page ends with no cursor.
	if _, next := r.List("ws_1", Filter{}, "", 7); next != "" {
		t.Errorf("full page has next %q", next)
	}
	if p, _ := r.List("ws_1", Filter{}, "ast_unknown", 2); fmt.Sprint(ids(p)) != "[ast_6 ast_5]" {
		t.Errorf("unknown cursor did not restart: %v", ids(p))
	}
	if p, _ := r.List("ws_1", Filter{Kind: "video"}, "", 10); fmt.Sprint(ids(p)) != "[ast_5 ast_3 ast_1]" {
		t.Errorf("kind filter: %v", ids(p))
	}
	if p, _ := r.List("ws_1", Filter{Source: SourceUpload, Kind: "image"}, "", 10); fmt.Sprint(ids(p)) != "[ast_6 ast_4 ast_2 ast_0]" {
		t.Errorf("source+kind filter: %v", ids(p))
	}
	r.Reset()
	if p, _ := r.List("ws_1", Filter{}, "", 10); len(p) != 0 {
		t.Error("reset kept records")
	}
}
