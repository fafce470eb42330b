package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// TestReadCacheFollowsEveryChange: a read answered from the cache of recent reads is never stale.
// Reads repeated with nothing changed answer the same bytes; each thing a read depends on changes
// its next answer: the generation's state, the service clock's second (the links' expiry), the
// wallet balance (spent by another job), the workspace (another's key reads 404 after a cached
// read).
func TestReadCacheFollowsEveryChange(t *testing.T) {
	f := newGenFixture(t)
	id, _ := f.mustSubmit(f.key, tts("Read me again and again.", f.voice, 100)).body["generation_id"].(string)
	read := func() answer { f.t.Helper(); return f.mustGet(f.key, "/generations/"+id) }
	status := func(a answer) any { return obj(a.body, "generation")["status"] }
	expires := func(a answer) string {
		outs, _ := obj(a.body, "generation")["outputs"].([]any)
		if len(outs) == 0 {
			t.Fatalf("no outputs: %s", a.raw)
		}
		u, err := url.Parse(outs[0].(map[string]any)["url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return u.Query().Get("expires")
	}
	wallet := func(a answer) any { return obj(obj(a.body, "generation"), "credits")["wallet_balance"] }

	first := read()
	if again := read(); again.raw != first.raw {
		t.Fatalf("two reads with nothing changed differ:\n%s\n%s", first.raw, again.raw)
	}
	for range 100 {
		f.advance(1)
		if a := read(); status(a) == "completed" {
			break
		}
	}
	done := read()
	if status(done) != "completed" || status(first) == "completed" {
		t.Fatalf("status %v then %v", status(first), status(done))
	}
	if again := read(); again.raw != done.raw {
		t.Fatalf("two reads at one second differ:\n%s\n%s", done.raw, again.raw)
	}
	f.advance(1)
	later := read()
	if expires(later) == expires(done) {
		t.Fatalf("a read a second later kept the link expiring at %s", expires(done))
	}
	f.mustSubmit(f.key, tts("Spend some credits.", f.voice, 100))
	avail, _ := f.balance()
	if spent := read(); wallet(spent) != float64(avail) || wallet(spent) == wallet(later) {
		t.Fatalf("wallet_balance %v after another job's hold, want %d (was %v)", wallet(spent), avail, wallet(later))
	}
	other := f.newKey(f.ws, workspace.ScopeRead)
	if a := f.get(other, "/generations/"+id); a.code != http.StatusOK {
		t.Fatalf("another key of the workspace: %d", a.code)
	}
	if a := f.get(f.workspaceKey(workspace.PlanPro), "/generations/"+id); a.code != http.StatusNotFound {
		t.Fatalf("another workspace's key read the cached answer: %d %s", a.code, a.raw)
	}
}
