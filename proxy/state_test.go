package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// scripted is an upstream that answers each path with the next body of its script (the last one
// again once the script ends).
type scripted struct {
	mu     sync.Mutex
	script map[string][]string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	bodies := s.script[key]
	body := `{"error":{"ok":false,"code":"not_found","message":"No such thing.","retryable":false,"credits_charged":0}}`
	status := 404
	if len(bodies) > 0 {
		body, status = bodies[0], 200
		if len(bodies) > 1 {
			s.script[key] = bodies[1:]
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

func genRead(id, status string, terminal bool, charged string) string {
	return fmt.Sprintf(`{"ok":true,"generation":{"generation_id":%q,"status":%q,"credits":{"credits_held":10,"credits_charged":%s,"settlement":"open","terminal":%v}}}`, id, status, charged, terminal)
}

// scriptedProxy is a proxy in front of an upstream answering script, and a client of the proxy;
// all three close when the test ends.
func scriptedProxy(t *testing.T, script map[string][]string) (*Proxy, *client) {
	t.Helper()
	up := httptest.NewServer(&scripted{script: script})
	t.Cleanup(up.Close)
	p, err := New(context.Background(), Config{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(func() { front.Close(); p.Close() })
	return p, &client{t: t, base: front.URL, key: "sk_live_abcdefghijklmnopqrstuvwxyz0123456789ABCD"}
}

func runScript(t *testing.T, script map[string][]string, calls []string) []string {
	t.Helper()
	p, c := scriptedProxy(t, script)
	for _, path := range calls {
		c.do("GET", path, nil)
	}
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range p.Report().Findings {
		if f.Side == SideServer && !f.Advisory {
			rules = append(rules, f.RuleID)
		}
	}
	return rules
}

const (
	genA = "gen_0000000000000000000000000000000a"
	genB = "gen_0000000000000000000000000000000b"
)

// Statuses across reads: a step back (GEN-009), a finished status moving (GEN-008) and a final
// charge changing (GEN-017) are found; a skipped step and the stated recovery (failed to completed,
// with its charge) are not.
func TestStatusesAcrossExchanges(t *testing.T) {
	got := runScript(t, map[string][]string{
		"/api/v1/generations/" + genA: {genRead(genA, "rendering", false, "null"), genRead(genA, "queued", false, "null"),
			genRead(genA, "completed", true, "7"), genRead(genA, "completed", true, "9"), genRead(genA, "rendering", false, "null")},
		"/api/v1/generations/" + genB: {genRead(genB, "queued", false, "null"), genRead(genB, "post_processing", false, "null"),
			genRead(genB, "failed", true, "0"), genRead(genB, "completed", true, "7")},
	}, []string{
		"/generations/" + genA, "/generations/" + genA, "/generations/" + genA, "/generations/" + genA, "/generations/" + genA,
		"/generations/" + genB, "/generations/" + genB, "/generations/" + genB, "/generations/" + genB,
	})
	for _, want := range []string{"GEN-009", "GEN-017", "GEN-008"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s finding; got %v", want, got)
		}
	}
	// genB's legal moves alone: nothing about its statuses.
	got = runScript(t, map[string][]string{
		"/api/v1/generations/" + genB: {genRead(genB, "queued", false, "null"), genRead(genB, "post_processing", false, "null"),
			genRead(genB, "failed", true, "0"), genRead(genB, "completed", true, "7")},
	}, []string{"/generations/" + genB, "/generations/" + genB, "/generations/" + genB, "/generations/" + genB})
	for _, r := range got {
		if r == "GEN-008" || r == "GEN-009" || r == "GEN-017" {
			t.Errorf("%s on legal moves (a skipped step, the recovery)", r)
		}
	}
}

// A wait's still_running must agree with the status; a wait longer than the bound is found.
func TestWaitAnswers(t *testing.T) {
	wait := func(status string, running bool, waited int) string {
		return fmt.Sprintf(`{"ok":true,"generation":{"generation_id":%q,"status":%q},"still_running":%v,"waited_seconds":%d,"age_seconds":30,"retry_after_seconds":0,"next_action":"Wait again."}`, genA, status, running, waited)
	}
	got := runScript(t, map[string][]string{
		"/api/v1/generations/" + genA + "/wait": {wait("rendering", false, 18), wait("rendering", true, 45), wait("completed", false, 3)},
	}, []string{"/generations/" + genA + "/wait", "/generations/" + genA + "/wait", "/generations/" + genA + "/wait"})
	for _, want := range []string{"GEN-005", "GEN-027"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s finding; got %v", want, got)
		}
	}
}

// An actors walk that shows a row again is found (the actors cursor is a keyset); a generations
// walk that does is not (the text does not say how that cursor is built).
func TestCursorWalks(t *testing.T) {
	act := func(id string) string {
		return fmt.Sprintf(`{"actor_id":"act_%032d","name":"A","tags":[],"is_platform":true}`, mustAtoi(id))
	}
	gen := func(id string) string {
		return fmt.Sprintf(`{"generation_id":"gen_%032d","status":"completed"}`, mustAtoi(id))
	}
	got := runScript(t, map[string][]string{
		"/api/v1/actors?limit=2":           {`{"ok":true,"actors":[` + act("1") + `,` + act("2") + `],"next_cursor":"c1"}`},
		"/api/v1/actors?limit=2&cursor=c1": {`{"ok":true,"actors":[` + act("2") + `,` + act("3") + `],"next_cursor":null}`},
	}, []string{"/actors?limit=2", "/actors?limit=2&cursor=c1"})
	if !slices.Contains(got, "CORE-012") {
		t.Errorf("an actors row shown twice in one walk: no CORE-012; got %v", got)
	}
	got = runScript(t, map[string][]string{
		"/api/v1/generations?limit=2":           {`{"ok":true,"generations":[` + gen("1") + `,` + gen("2") + `],"next_cursor":"c1"}`},
		"/api/v1/generations?limit=2&cursor=c1": {`{"ok":true,"generations":[` + gen("2") + `,` + gen("3") + `],"next_cursor":null}`},
	}, []string{"/generations?limit=2", "/generations?limit=2&cursor=c1"})
	if slices.Contains(got, "CORE-012") {
		t.Errorf("a generations row shown again flagged CORE-012; the text leaves that cursor open")
	}
}

func mustAtoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// Memory is bounded whatever the traffic: distinct findings past MaxFindings are counted, not
// kept; the LRU maps forget their least recently used entries.
func TestBounds(t *testing.T) {
	p, err := New(context.Background(), Config{Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range MaxFindings + 50 {
		p.store.add(Finding{RuleID: "CORE-003", Side: SideServer, LastSeen: time.Now()}, fmt.Sprintf("server GET /r%d", i), int64(i+1))
	}
	p.store.add(Finding{RuleID: "CORE-003", Side: SideServer, LastSeen: time.Now()}, "server GET /r0", 99)
	rep := p.Report()
	if len(rep.Findings) != MaxFindings || rep.Dropped != 50 || rep.Totals[0].Count != MaxFindings+51 || rep.Findings[0].Count != 2 {
		t.Errorf("kept %d findings, dropped %d, totals %+v, first counted %d", len(rep.Findings), rep.Dropped, rep.Totals, rep.Findings[0].Count)
	}
	l := newLRU[int](3)
	for i := range 10 {
		l.put(fmt.Sprint(i), i)
		if i == 5 {
			l.get("4") // used: kept over 5
		}
	}
	if l.order.Len() != 3 || len(l.m) != 3 {
		t.Fatalf("lru holds %d entries, want 3", l.order.Len())
	}
	for _, k := range []string{"7", "8", "9"} {
		if _, ok := l.get(k); !ok {
			t.Errorf("lru forgot %s", k)
		}
	}
	// The ring of exchange summaries keeps the latest MaxExchanges.
	for i := range MaxExchanges + 10 {
		p.remember(&exchange{n: int64(i + 1), method: "GET", path: "/x"})
	}
	if ex := p.Exchanges(); len(ex) != MaxExchanges || ex[0].N != 11 || ex[len(ex)-1].N != MaxExchanges+10 {
		t.Errorf("ring: %d summaries from #%d to #%d", len(ex), ex[0].N, ex[len(ex)-1].N)
	}
}
