package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The proxy hands the answer on byte for byte: the same status, headers and body as the server's.
func TestForwardsUnchanged(t *testing.T) {
	tg := startTarget(t, nil)
	for _, path := range []string{"/api/v1/credits/balance", "/api/v1/capabilities?limit=3", "/api/v1/generations/gen_00000000000000000000000000000000", "/api/v1/health/live"} {
		var got [2]*http.Response
		var body [2][]byte
		for i, origin := range []string{tg.direct, tg.through} {
			req, _ := http.NewRequest("GET", origin+path, nil)
			req.Header.Set("Authorization", "Bearer "+tg.info.GenerateKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body[i], _ = io.ReadAll(res.Body)
			res.Body.Close()
			got[i] = res
		}
		if got[0].StatusCode != got[1].StatusCode || !bytes.Equal(body[0], body[1]) {
			t.Errorf("%s: direct %d %s, through the proxy %d %s", path, got[0].StatusCode, body[0], got[1].StatusCode, body[1])
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Content-Length", "Retry-After", "Location"} {
			if got[0].Header.Get(h) != got[1].Header.Get(h) {
				t.Errorf("%s: header %s direct %q, through the proxy %q", path, h, got[0].Header.Get(h), got[1].Header.Get(h))
			}
		}
	}
	// A request body arrives whole (a refusal names the unknown key it read), and a body larger than
	// what the proxy reads for judging still arrives whole.
	c := tg.client(t, tg.info.GenerateKey)
	a := c.do("POST", "/estimates", map[string]any{"capability_id": "tts", "config": map[string]any{}, "zz_unknown": strings.Repeat("x", 2*MaxRequestBody)})
	if a.status != 400 || !strings.Contains(string(a.raw), "zz_unknown") {
		t.Errorf("a large body through the proxy: %d %.200s", a.status, a.raw)
	}
}

// A well-behaved client in front of the correct mock: no finding on either side.
func TestCleanSessionHasNoFindings(t *testing.T) {
	tg := startTarget(t, nil)
	c := tg.client(t, tg.info.GenerateKey)
	goodWalk(t, tg, c)
	if fs := tg.findings(t); len(fs) > 0 {
		for _, f := range fs {
			t.Errorf("finding: %+v", f)
		}
	}
	if n := tg.proxy.Report().Exchanges; n < 12 {
		t.Errorf("%d exchanges judged, want the whole walk", n)
	}
}

// A client making the audit's mistakes through the proxy gets the audit's findings, named by the
// audit's rules, on the client side, with the key named by its id only.
func TestClientMistakesGetTheAuditsFindings(t *testing.T) {
	tg := startTarget(t, nil)
	c := tg.client(t, tg.info.GenerateKey)
	gen := goodWalk(t, tg, c)
	capID, cfg := imageCapability(t, c)
	est := c.do("POST", "/estimates", map[string]any{"capability_id": capID, "config": cfg})
	needed, _ := est.body["max_credits_needed"].(json.Number)
	n, _ := needed.Int64()

	// CLIENT-001: a non-retryable refusal sent again unchanged.
	for range 2 {
		c.do("POST", "/estimates", map[string]any{"capability_id": "no_such_capability", "config": map[string]any{}})
	}
	// CLIENT-005: max_credits padded again over the estimate's max_credits_needed.
	c.do("POST", "/generations", map[string]any{"capability_id": capID, "config": cfg, "max_credits": n * 2})
	// ID-015: an id passed back upper-cased.
	c.do("GET", "/generations/"+strings.ToUpper(gen), nil)
	// CLIENT-007: a cursor the service never handed out.
	c.do("GET", "/generations?cursor=made-up-cursor", nil)
	// CORE-014: the key used from a browser.
	c.hdr = map[string]string{"Origin": "https://app.example"}
	c.do("GET", "/credits/balance", nil)

	fs := tg.findings(t)
	got := map[string]bool{}
	for _, f := range fs {
		if f.Side != SideClient {
			t.Errorf("finding on the %s side: %+v", f.Side, f)
			continue
		}
		got[f.RuleID] = true
		if strings.Contains(fmt.Sprint(f), tg.info.GenerateKey) {
			t.Errorf("a finding holds the key: %+v", f)
		}
		if !strings.HasPrefix(f.KeyID, "key_") || f.Level == "" || f.Advice == "" || len(f.Exchanges) == 0 {
			t.Errorf("finding shape: %+v", f)
		}
	}
	for _, want := range []string{"CLIENT-001", "CLIENT-005", "ID-015", "CLIENT-007", "CORE-014"} {
		if !got[want] {
			t.Errorf("no %s finding; got %v", want, got)
		}
	}
}

// GET and DELETE on the findings endpoint; repeats are counted, not listed again.
func TestFindingsEndpoint(t *testing.T) {
	tg := startTarget(t, nil)
	c := tg.client(t, tg.info.GenerateKey)
	for range 3 {
		c.do("POST", "/estimates", map[string]any{"capability_id": "no_such_capability", "config": map[string]any{}})
	}
	a := c.do("GET", FindingsPath, nil)
	var rep Report
	if err := json.Unmarshal(a.raw, &rep); err != nil || a.status != 200 {
		t.Fatalf("GET findings: %d %v %s", a.status, err, a.raw)
	}
	i := slices.IndexFunc(rep.Findings, func(f Finding) bool { return f.RuleID == "CLIENT-001" })
	if i < 0 || rep.Findings[i].Count != 2 || len(rep.Findings) != 1 {
		t.Fatalf("want one CLIENT-001 finding counted twice: %s", a.raw)
	}
	if d := c.do("DELETE", FindingsPath, nil); d.status != 200 {
		t.Fatalf("DELETE findings: %d %s", d.status, d.raw)
	}
	a = c.do("GET", FindingsPath, nil)
	if err := json.Unmarshal(a.raw, &rep); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("after DELETE: %s", a.raw)
	}
	if x := c.do("GET", ExchangesPath, nil); x.status != 200 || !strings.Contains(string(x.raw), "/api/v1/estimates") || strings.Contains(string(x.raw), tg.info.GenerateKey) {
		t.Fatalf("GET exchanges: %d %s", x.status, x.raw)
	}
	if x := c.do("PUT", FindingsPath, nil); x.status != 405 {
		t.Fatalf("PUT findings: %d", x.status)
	}
}
