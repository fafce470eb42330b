package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/conformance/wrongservers"
)

// The credit arithmetic and the buckets across exchanges (ledger.go, buckets.go): each judgement
// is proved with a wrong server behind the proxy that breaks it (from the wrong-server table where
// it has one), and with the correct mock, each legal variant and the combined one behind the proxy
// giving none (TestLegalVariantsBehindTheProxy runs ledgerWalk and bucketWalk too).

// budgetKey makes a generate key with a key budget in the default workspace, through the proxy (so
// the proxy learns its workspace).
func budgetKey(t testing.TB, tg *target) *client {
	t.Helper()
	a := tg.control(t, "POST", "/workspaces/"+tg.info.DefaultWorkspaceID+"/keys", map[string]any{"scopes": []string{"read", "generate"}, "budget_credits": 5000})
	if a.status != 201 {
		t.Fatalf("make a key: %d %s", a.status, a.raw)
	}
	return tg.client(t, a.str("key"))
}

// ledgerWalk is a session that shows the credit arithmetic: a balance read while a job holds its
// credits (proved still running by a read after it), the job's end, a balance read after; a submit
// refused for a max_credits below the hold.
func ledgerWalk(t testing.TB, tg *target, c *client) {
	t.Helper()
	capID, cfg := imageCapability(t, c)
	est := c.do("POST", "/estimates", map[string]any{"capability_id": capID, "config": cfg})
	needed, _ := est.body["max_credits_needed"].(json.Number)
	price, _ := est.body["credits"].(json.Number)
	n, _ := needed.Int64()
	sub := c.do("POST", "/generations", map[string]any{"capability_id": capID, "config": cfg, "max_credits": n})
	gen := sub.str("generation_id")
	c.do("GET", "/credits/balance", nil)
	c.do("GET", "/generations/"+gen, nil) // still queued: the hold was held during the balance read
	for range 10 {
		tg.control(t, "POST", "/clock/advance", map[string]any{"seconds": 30})
		if w := c.do("GET", "/generations/"+gen+"/wait", nil); w.status != 200 || w.body["still_running"] != true {
			break
		}
	}
	c.do("GET", "/generations/"+gen, nil)
	c.do("GET", "/credits/balance", nil)
	if p, err := price.Float64(); err == nil && int64(p) < n {
		c.do("POST", "/generations", map[string]any{"capability_id": capID, "config": cfg, "max_credits": int64(p)}) // max_credits_exceeded
	}
}

// bucketWalk fills one key's read bucket over two instants of service time 30 s apart (60 reads,
// then the rest and one more), then reads again once the first reads left the window.
func bucketWalk(t testing.TB, tg *target) {
	t.Helper()
	a := tg.control(t, "POST", "/workspaces/"+tg.info.DefaultWorkspaceID+"/keys", map[string]any{"scopes": []string{"read"}})
	c := tg.client(t, a.str("key"))
	for range 60 {
		c.do("GET", "/credits/balance", nil)
	}
	tg.control(t, "POST", "/clock/advance", map[string]any{"seconds": 30})
	for range 61 {
		if r := c.do("GET", "/credits/balance", nil); r.status == 429 {
			break
		}
	}
	tg.control(t, "POST", "/clock/advance", map[string]any{"seconds": 31})
	c.do("GET", "/credits/balance", nil)
}

// serverRules are the rules of the server-side findings (advisories included).
func serverRules(fs []Finding) []string {
	var got []string
	for _, f := range fs {
		if f.Side == SideServer {
			got = append(got, f.RuleID)
		}
	}
	return got
}

// editJSON wraps next so that the answers of the requests match picks, when JSON objects, are
// changed by edit before they reach the proxy.
func editJSON(match func(*http.Request) bool, edit func(r *http.Request, status int, d map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !match(r) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var d map[string]any
			if dec.Decode(&d) == nil {
				edit(r, rec.Code, d)
				body, _ = json.Marshal(d)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
}

func isPath(method, suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == method && strings.HasSuffix(r.URL.Path, suffix) }
}

func num(v int64) json.Number { return json.Number(fmt.Sprint(v)) }

func asInt(v any) int64 {
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return i
}

// Entries of the wrong-server table whose mistake the credit arithmetic shows, behind the proxy:
// each gives a failing finding naming one of its rules.
func TestLedgerWrongServersBehindTheProxy(t *testing.T) {
	all := wrongservers.All()
	for _, name := range []string{"ledger-no-budget-zero", "err-required-credits-off"} {
		i := slices.IndexFunc(all, func(s wrongservers.Server) bool { return s.Name == name })
		if i < 0 {
			t.Fatalf("%s is not in the wrong-server table", name)
		}
		srv := all[i]
		t.Run(name, func(t *testing.T) {
			tg := startTarget(t, func(next http.Handler) http.Handler { return srv.API(&wrongservers.Env{}, next) })
			ledgerWalk(t, tg, tg.client(t, tg.info.GenerateKey))
			var got []string
			for _, f := range tg.findings(t) {
				if f.Side == SideServer && !f.Advisory {
					got = append(got, f.RuleID)
				}
			}
			t.Logf("failing server findings: %v", got)
			if !slices.ContainsFunc(srv.Rules, func(r string) bool { return slices.Contains(got, r) }) {
				t.Errorf("%s (%s): no failing server finding names %v; got %v", name, srv.Mistake, srv.Rules, got)
			}
		})
	}
}

// Legal variants that depart from the reference's own choices in the balance's arithmetic and a
// bucket refusal's wait (moved from the wrong-server table: the text allows them): behind the proxy
// each gives an advisory naming the reference's rule, and nothing that fails.
func TestReferenceDeparturesAreAdvisories(t *testing.T) {
	vs, err := wrongservers.LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, rule string }{
		{"ledger-balance-sum-off", "LEDGER-019"}, {"ledger-daily-remaining-negative", "LEDGER-021"},
		{"ledger-key-remaining-ignores-spend", "LEDGER-022"}, {"rate-retry-after-full-window", "RATE-013"},
	} {
		i := slices.IndexFunc(vs, func(v wrongservers.Variant) bool { return v.Name == tc.name })
		if i < 0 {
			t.Fatalf("%s is not a legal variant", tc.name)
		}
		v := vs[i]
		t.Run(tc.name, func(t *testing.T) {
			tg := startTarget(t, func(next http.Handler) http.Handler { return v.API(&wrongservers.Env{}, next) })
			ledgerWalk(t, tg, budgetKey(t, tg))
			bucketWalk(t, tg)
			advisory := false
			for _, f := range tg.findings(t) {
				switch {
				case f.Side == SideServer && !f.Advisory:
					t.Errorf("a failing finding on a legal variant: %+v", f)
				case f.Side == SideServer && f.RuleID == tc.rule:
					advisory = true
				}
			}
			if !advisory {
				t.Errorf("no %s advisory; got %v", tc.rule, serverRules(tg.findings(t)))
			}
		})
	}
}

// The judgements across exchanges no table entry breaks, each with a server made for it here: a
// balance read that leaves out a running job's hold (LEDGER-001), a final charge above the hold
// the submit took, reported with a raised credits_held (CORE-020), a read bucket that never
// refuses (RATE-001).
func TestAcrossExchangesWrongServers(t *testing.T) {
	balance := isPath("GET", "/credits/balance")
	read := func(r *http.Request) bool {
		return r.Method == "GET" && strings.Contains(r.URL.Path, "/generations/gen_") && !strings.HasSuffix(r.URL.Path, "/wait")
	}
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		walk func(t *testing.T, tg *target)
		rule string
	}{
		{"held-leaves-out-running-hold", editJSON(balance, func(_ *http.Request, status int, d map[string]any) {
			if status == 200 {
				d["held_credits"], d["balance_credits"] = num(0), d["available_credits"]
			}
		}), func(t *testing.T, tg *target) { ledgerWalk(t, tg, tg.client(t, tg.info.GenerateKey)) }, "LEDGER-001"},
		{"charge-above-submit-hold", editJSON(read, func(_ *http.Request, status int, d map[string]any) {
			g, _ := d["generation"].(map[string]any)
			cr, _ := g["credits"].(map[string]any)
			if status == 200 && cr != nil && cr["terminal"] == true && g["status"] == "completed" {
				more := asInt(cr["credits_held"]) + 5
				cr["credits_held"], cr["credits_charged"] = num(more), num(more)
			}
		}), func(t *testing.T, tg *target) { ledgerWalk(t, tg, tg.client(t, tg.info.GenerateKey)) }, "CORE-020"},
		{"read-bucket-never-refuses", nil, func(t *testing.T, tg *target) {}, "RATE-001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rule == "RATE-001" {
				// A server with no read bucket at all: 241 reads of one key in a moment.
				got := runScript(t, map[string][]string{"/api/v1/actors": {`{"ok":true,"actors":[],"next_cursor":null}`}}, slices.Repeat([]string{"/actors"}, 241))
				if !slices.Contains(got, "RATE-001") {
					t.Errorf("241 reads accepted at once: no RATE-001; got %v", got)
				}
				return
			}
			tg := startTarget(t, tc.wrap)
			tc.walk(t, tg)
			got := serverRules(tg.findings(t))
			t.Logf("server findings: %v", got)
			if !slices.Contains(got, tc.rule) {
				t.Errorf("no %s finding; got %v (all: %+v)", tc.rule, got, tg.findings(t))
			}
		})
	}
}

// The correct mock gives none of these findings on the same sessions, and a bucket filled far past
// its limit by one key is refused, not found.
func TestAcrossExchangesCorrectMock(t *testing.T) {
	tg := startTarget(t, nil)
	ledgerWalk(t, tg, tg.client(t, tg.info.GenerateKey))
	ledgerWalk(t, tg, budgetKey(t, tg))
	bucketWalk(t, tg)
	c := tg.client(t, tg.info.GenerateKey)
	refused := 0
	for range 250 {
		if c.do("GET", "/capabilities?limit=1", nil).status == 429 {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the mock refused none of 250 reads")
	}
	for _, f := range tg.findings(t) {
		if f.Side == SideServer || f.Side == SideSender {
			t.Errorf("finding on the correct mock: %+v", f)
		}
	}
	if tg.proxy.Report().Unjudged != 0 {
		t.Errorf("%d exchanges unjudged", tg.proxy.Report().Unjudged)
	}
}

// A full judging queue never holds an answer back: exchanges past it are forwarded, counted as
// unjudged and said in the report.
func TestFullQueueCountsUnjudged(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"actors":[],"next_cursor":null}`)
	}))
	defer up.Close()
	block := make(chan struct{})
	p, err := New(t.Context(), Config{Upstream: up.URL, Judge: blockingJudge{block}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	c := &client{t: t, base: front.URL, key: "sk_live_abcdefghijklmnopqrstuvwxyz0123456789ABCD"}
	n := QueueSize + Workers() + 20
	for range n {
		if a := c.do("GET", "/actors", nil); a.status != 200 {
			t.Fatalf("answered %d", a.status)
		}
	}
	close(block)
	if err := p.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	rep := p.Report()
	p.Close()
	if rep.Unjudged < 19 || rep.Unjudged > int64(n) {
		t.Errorf("unjudged %d of %d exchanges with a queue of %d", rep.Unjudged, n, QueueSize)
	}
	if rep.Exchanges != int64(n) {
		t.Errorf("exchanges %d, want %d", rep.Exchanges, n)
	}
}

// blockingJudge holds every answer's judgement until its channel is closed.
type blockingJudge struct{ c chan struct{} }

func (j blockingJudge) Request(context.Context, *http.Request, []byte) error { return nil }

func (j blockingJudge) Response(context.Context, *http.Request, int, http.Header, []byte) (error, error) {
	<-j.c
	return nil, nil
}

// A read bucket that lets everything through, in front of the mock on its manual clock: 121 reads
// of one key at one instant of service time are more than 120 a minute however the minute is
// counted (RATE-001), once the proxy knows the clock is manual.
func TestReadBucketAtOneInstant(t *testing.T) {
	var mu sync.Mutex
	var good []byte
	noBucket := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != "GET" || !strings.HasSuffix(r.URL.Path, "/credits/balance") {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			mu.Lock()
			defer mu.Unlock()
			if rec.Code == 200 {
				good = rec.Body.Bytes()
			}
			w.Header().Set("Content-Type", "application/json")
			if rec.Code == 429 && good != nil {
				_, _ = w.Write(good)
				return
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})
	}
	for _, tc := range []struct {
		wrap func(http.Handler) http.Handler
		want bool
	}{{noBucket, true}, {nil, false}} {
		tg := startTarget(t, tc.wrap)
		tg.control(t, "GET", "/clock", nil) // the proxy learns the clock is manual
		a := tg.control(t, "POST", "/workspaces/"+tg.info.DefaultWorkspaceID+"/keys", map[string]any{"scopes": []string{"read"}})
		c := tg.client(t, a.str("key"))
		for range 121 {
			c.do("GET", "/credits/balance", nil)
		}
		if got := slices.Contains(serverRules(tg.findings(t)), "RATE-001"); got != tc.want {
			t.Errorf("a bucket that refuses nothing: %v; RATE-001 found: %v, want %v", tc.wrap != nil, got, tc.want)
		}
	}
}

// On a manual service clock, wall time passing is no service time: a bucket filled while the
// proxy's clock runs fast (here 200 ms per reading) and refused with the full window's wait is
// right, and gives no finding.
func TestBucketWaitOnAManualClock(t *testing.T) {
	var mu sync.Mutex
	wall := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		wall = wall.Add(200 * time.Millisecond)
		return wall
	}
	tg := startTargetWith(t, nil, Config{Now: now})
	a := tg.control(t, "POST", "/workspaces/"+tg.info.DefaultWorkspaceID+"/keys", map[string]any{"scopes": []string{"read"}})
	c := tg.client(t, a.str("key"))
	refused := false
	for range 125 {
		if r := c.do("GET", "/credits/balance", nil); r.status == 429 {
			refused = true
			if w := asInt(r.body["error"].(map[string]any)["retry_after_seconds"]); w != 60 {
				t.Fatalf("the mock says retry after %d on a frozen clock", w)
			}
		}
	}
	if !refused {
		t.Fatal("the mock refused none of 125 reads")
	}
	for _, f := range tg.findings(t) {
		if f.Side == SideServer {
			t.Errorf("finding on the correct mock: %+v", f)
		}
	}
}
