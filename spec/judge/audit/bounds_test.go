package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Detectors and spec/rules.yaml agree: every kind of finding is a rule with an audit field and the
// same level, and every rule with an audit field has a detector.
func TestDetectorsAreTheAuditedRules(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	var audited []string
	for _, r := range cat.Rules {
		if r.Audited() {
			audited = append(audited, r.ID)
		}
	}
	var detected []string
	for _, d := range Detectors {
		detected = append(detected, d.rule)
		r, ok := cat.Get(d.rule)
		if !ok {
			t.Errorf("%s: not a rule of spec/rules.yaml", d.rule)
			continue
		}
		if !r.Audited() || r.Level != d.level {
			t.Errorf("%s: rules.yaml level %s audit %q; detector level %s", d.rule, r.Level, r.Audit, d.level)
		}
	}
	slices.Sort(audited)
	slices.Sort(detected)
	if !slices.Equal(audited, detected) {
		t.Errorf("rules with an audit field %v, detectors %v", audited, detected)
	}
}

// The auditor's memory stays bounded whatever a client sends for days: windows per key, keys,
// workspaces, ids, links and findings are all capped; totals still count what was not kept.
func TestMemoryIsBounded(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	a := New(Config{Clock: clk})
	const n = MaxKeys + 200
	for i := range n {
		key := fmt.Sprintf("key_%032x", i)
		ws := fmt.Sprintf("ws_%032x", i%(MaxScopes+50))
		gen := fmt.Sprintf("gen_%032x", i)
		// an answer handing out an id and a link, then a call passing the id back upper-cased and
		// with an Origin header: two findings per call, each with its own request line
		a.Observe(Exchange{KeyID: key, WorkspaceID: ws, Method: "GET", Path: "/api/v1/generations/" + gen, Status: 200,
			Answer: fmt.Appendf(nil, `{"ok":true,"generation":{"generation_id":%q,"status":"completed","outputs":[{"url":"http://h/files/ast_%032x/a.png?expires=1&sig=x"}]},"next_cursor":"c%d"}`, gen, i, i),
			Start:  clk.Now(), End: clk.Now()})
		a.Observe(Exchange{KeyID: key, WorkspaceID: ws, Method: "GET", Path: "/api/v1/generations/" + strings.ToUpper(gen), Origin: "https://x", Status: 404,
			Answer: []byte(`{"error":{"ok":false,"code":"not_found","retryable":false}}`), Start: clk.Now(), End: clk.Now()})
		clk.Advance(time.Second)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.keys) > MaxKeys || len(a.scopes) > MaxScopes || len(a.links.m) > MaxLinks || len(a.order) > MaxFindings {
		t.Errorf("keys %d scopes %d links %d findings %d", len(a.keys), len(a.scopes), len(a.links.m), len(a.order))
	}
	for id, k := range a.keys {
		if len(k.window) > WindowSize || len(k.genReads.m) > 64 || len(k.estimates) > MaxEstimates {
			t.Fatalf("key %s: window %d reads %d", id, len(k.window), len(k.genReads.m))
		}
	}
	for id, s := range a.scopes {
		if len(s.ids.m) > MaxIDs || len(s.hexes.m) > MaxIDs || len(s.cursors.m) > MaxCursors || len(s.cursors.order) > 2*MaxCursors+1 {
			t.Fatalf("scope %s: ids %d cursors %d/%d", id, len(s.ids.m), len(s.cursors.m), len(s.cursors.order))
		}
	}
	if a.totals["ID-015"] != n || a.totals["CORE-014"] != n || a.dropped != 2*n-MaxFindings {
		t.Errorf("totals %v dropped %d", a.totals, a.dropped)
	}
}

// An id a workspace saw only inside a link, sent back as an id, was read out of the link.
func TestIDReadOutOfALink(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	a := New(Config{Clock: clk})
	id, other := fmt.Sprintf("ast_%032x", 1), fmt.Sprintf("ast_%032x", 2)
	a.Observe(Exchange{KeyID: "key_a", WorkspaceID: "ws_a", Method: "GET", Path: "/api/v1/generations/gen_x", Status: 200,
		Answer: fmt.Appendf(nil, `{"ok":true,"a":"http://h/files/%s/f.png","b":"http://h/files/%s/g.png","asset_id":%q}`, id, other, other)})
	a.Observe(Exchange{KeyID: "key_a", WorkspaceID: "ws_a", Method: "GET", Path: "/api/v1/assets/" + other, Status: 200})
	if r := a.Report(); len(r.Findings) != 0 {
		t.Fatalf("an id handed out as a field too: %+v", r.Findings)
	}
	a.Observe(Exchange{KeyID: "key_a", WorkspaceID: "ws_a", Method: "GET", Path: "/api/v1/assets/" + id, Status: 200})
	r := a.Report()
	if len(r.Findings) != 1 || r.Findings[0].RuleID != "ID-015" || !strings.Contains(r.Findings[0].Advice, "link") {
		t.Fatalf("findings %+v", r.Findings)
	}
}

func TestSummary(t *testing.T) {
	a := New(Config{Clock: clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))})
	var b strings.Builder
	if err := a.WriteSummary(&b); err != nil || !strings.Contains(b.String(), "no findings") {
		t.Errorf("empty summary %q %v", b.String(), err)
	}
	a.Observe(Exchange{KeyID: "key_a", Method: "GET", Path: "/api/v1/capabilities", Origin: "https://x", Status: 200})
	a.Observe(Exchange{KeyID: "key_a", Method: "GET", Path: "/api/v1/voices", Origin: "https://x", Status: 200})
	b.Reset()
	if err := a.WriteSummary(&b); err != nil || !strings.HasPrefix(b.String(), "audit: CORE-014 MUST 2 finding(s): ") || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("summary %q %v", b.String(), err)
	}
	if !a.HasMust() {
		t.Error("HasMust false")
	}
}

// BenchmarkObserve measures the audit's cost per exchange: a generation read answer (ids, a link)
// parsed and learned, on a key with a full window.
func BenchmarkObserve(b *testing.B) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	a := New(Config{Clock: clk})
	answer := fmt.Appendf(nil, `{"ok":true,"generation":{"generation_id":"gen_%032x","status":"completed","outputs":[{"index":0,"kind":"image","asset_id":"ast_%032x","url":"http://127.0.0.1:8080/files/ast_%032x/image.png?expires=1&sig=abc"}],"credits":{"credits_held":4,"credits_charged":3,"settlement":"captured","terminal":true}},"output_urls_expire_in_seconds":600}`, 1, 2, 2)
	ex := Exchange{KeyID: "key_a", WorkspaceID: "ws_a", Method: "GET", Path: fmt.Sprintf("/api/v1/generations/gen_%032x", 1), Status: 200, Answer: answer}
	b.ReportAllocs()
	for b.Loop() {
		ex.Start = clk.Now()
		a.Observe(ex)
	}
}

// An exchange handed over decoded (Exchange.Decoded, as the proxy does: one decoding for all its
// judges) is judged as the same exchange handed over as bytes.
func TestDecodedExchangeJudgesAlike(t *testing.T) {
	run := func(decoded bool) Report {
		clk := clock.NewManual(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
		a := New(Config{Clock: clk})
		key, ws := fmt.Sprintf("key_%032x", 1), fmt.Sprintf("ws_%032x", 1)
		body := []byte(`{"capability_id":"image_basic","config":{"prompt":"a cat"},"max_credits":1}`)
		refusal := []byte(`{"ok":false,"error":{"code":"invalid_config","message":"no","retryable":false}}`)
		gen := fmt.Sprintf("gen_%032x", 2)
		read := fmt.Appendf(nil, `{"ok":true,"generation":{"generation_id":%q,"status":"rendering"}}`, gen)
		for i, ex := range []Exchange{
			{Method: "POST", Path: "/api/v1/generations", Body: body, Status: 400, Answer: refusal},
			{Method: "POST", Path: "/api/v1/generations", Body: body, Status: 400, Answer: refusal},
			{Method: "GET", Path: "/api/v1/generations/" + gen, Status: 200, Answer: read},
			{Method: "GET", Path: "/api/v1/generations/" + strings.ToUpper(gen), Status: 404, Answer: refusal},
		} {
			ex.KeyID, ex.WorkspaceID, ex.Start, ex.End = key, ws, clk.Now(), clk.Now()
			if decoded {
				ex.Decoded, ex.BodyJSON, ex.AnswerJSON = true, judge.DecodeJSON(ex.Body), judge.DecodeJSON(ex.Answer)
			}
			a.Observe(ex)
			clk.Advance(time.Duration(i+1) * time.Second)
		}
		return a.Report()
	}
	raw, dec := run(false), run(true)
	if len(raw.Findings) < 2 {
		t.Fatalf("the exchanges gave %d findings, want the repeat and the altered id: %+v", len(raw.Findings), raw.Findings)
	}
	if fmt.Sprint(raw) != fmt.Sprint(dec) {
		t.Errorf("decoded exchanges judged otherwise:\nbytes   %+v\ndecoded %+v", raw, dec)
	}
}
