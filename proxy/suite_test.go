package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/internal/conformancetest"
)

// suiteFilter is the part of the conformance suite make test runs through the proxy: the areas a
// client's session crosses most (auth, errors, estimates, submits, generation reads and waits,
// batches, ledger, ids, lists, uploads, links). make proxy-proof runs the whole suite through the
// built binary's proxy. MEDIASPEC_PROXY_SUITE_FILTER overrides it ("" runs every spec).
const suiteFilter = "AUTH-001 || AUTH-016 || ERR-021 || ERR-024 || ERR-029 || EST-001 || EST-003 || SUBMIT-001 || SUBMIT-003 || SUBMIT-007 || SUBMIT-018 || " +
	"GEN-001 || GEN-005 || GEN-009 || GEN-028 || GEN-037 || BATCH-001 || LEDGER-001 || LEDGER-002 || ID-002 || CORE-012 || CAP-001 || ACTOR-001 || " +
	"VOICE-001 || UPLOAD-002 || UPLOAD-022 || LINK-001 || RATE-001 || WH-001 || CLIENT-001"

// The suite run through the proxy in front of the correct mock: the suite's verdict is unchanged
// (it passes) and the proxy records no failing finding on the server's side. The suite is a client
// that breaks the client duties on purpose (it repeats refused calls, sends ids altered and bodies
// the description refuses, to see the server refuse them), so its client-side findings are
// counted and logged, not failed.
func TestSuiteThroughTheProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs conformance specs")
	}
	ctx := context.Background()
	srv, up := conformancetest.StartMock(t)
	p, err := New(ctx, Config{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	defer p.Close()
	srv.SetPublicURL(front.URL) // file links and upload PUTs pass through the proxy too

	filter, set := os.LookupEnv("MEDIASPEC_PROXY_SUITE_FILTER")
	if !set {
		filter = suiteFilter
	}
	cfg := conformancetest.Config(srv.Info())
	cfg.LabelFilter = filter
	cfg.JSONReport = filepath.Join(t.TempDir(), "report.json")
	suite, err := conformance.NewSuite(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = suite.Configure(ctx, sc, rc)
	suite.RunSpecs(t, sc, rc)
	var out bytes.Buffer
	sum, err := suite.Finish(&out)
	if err != nil {
		t.Errorf("the suite failed through the proxy: %v\n%s", err, out.String())
	}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	rep := p.Report()
	var server, advisory, client int
	for _, f := range rep.Findings {
		switch {
		case f.Side == SideServer && !f.Advisory:
			server++
			t.Errorf("server finding on the correct mock: %s %s %s: %s", f.RuleID, f.Level, f.Request, f.Advice)
		case f.Side == SideServer:
			advisory++
			t.Errorf("advisory on the reference mock (which holds the reference's shapes): %s %s: %s", f.RuleID, f.Request, f.Advice)
		default:
			client++
		}
		if strings.Contains(f.Request+f.Advice, "sk_live_") && !strings.Contains(f.Request+f.Advice, "sk_live_[REDACTED]") {
			t.Errorf("a finding holds a key: %s %s", f.RuleID, f.Request)
		}
	}
	t.Logf("through the proxy: %d specs passed, %d failed, %d skipped; %d exchanges judged; findings: %d server, %d advisory, %d client (the suite's deliberate mistakes)",
		sum.Specs.Passed, sum.Specs.Failed, sum.Specs.Skipped, rep.Exchanges, server, advisory, client)
	var clientRules []string
	for _, tot := range rep.Totals {
		if tot.Side == SideClient {
			clientRules = append(clientRules, fmt.Sprintf("%s %d", tot.RuleID, tot.Count))
		}
	}
	t.Logf("client findings by rule: %s", strings.Join(clientRules, ", "))
	if rep.Exchanges < 100 {
		t.Errorf("only %d exchanges went through the proxy", rep.Exchanges)
	}
}
