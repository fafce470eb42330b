package conformance_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/internal/conformancetest"
	"github.com/mediaspec/mediaspec/report"
)

// TestConformance is the in-process harness: it starts the mock on 127.0.0.1:0 with a manual clock
// and the control API on (conformancetest.StartMock), and runs the whole suite against it with control access (the suite makes
// its own workspaces and keys). The clock only moves when a spec advances it through control, so
// slow specs run at once and every bucket count is exact.
//
// Select specs with MEDIASPEC_LABEL_FILTER or -ginkgo.label-filter; MEDIASPEC_HTML_REPORT,
// MEDIASPEC_JSON_REPORT and MEDIASPEC_JUNIT_REPORT keep the reports (default: the test's temp dir).
func TestConformance(t *testing.T) {
	ctx := context.Background()
	srv, _ := conformancetest.StartMock(t)
	info := srv.Info()

	dir := t.TempDir()
	cfg := conformancetest.Config(info)
	cfg.LabelFilter = os.Getenv("MEDIASPEC_LABEL_FILTER")
	cfg.HTMLReport = envOr("MEDIASPEC_HTML_REPORT", filepath.Join(dir, "report.html"))
	cfg.JSONReport = envOr("MEDIASPEC_JSON_REPORT", filepath.Join(dir, "report.json"))
	cfg.JUnitReport = envOr("MEDIASPEC_JUNIT_REPORT", filepath.Join(dir, "junit.xml"))
	suite, err := conformance.NewSuite(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = suite.Configure(ctx, sc, rc)
	suite.RunSpecs(t, sc, rc)

	var out bytes.Buffer
	sum, err := suite.Finish(&out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Error(err)
	}
	if c := sum.Rules; c.Passed+c.PartlyJudged+c.Failed+c.Blocked+c.Skipped+c.Interrupted+c.NotSelected+c.StrictOnly+
		c.NotCovered+c.Unobservable != len(sum.Results.Rules) {
		t.Errorf("rule tallies %+v do not add up to %d rules", sum.Rules, len(sum.Results.Rules))
	}
	// Every rule is covered by a spec or marked unobservable with the reason, and the mock meets
	// every need the suite has, so a full run here leaves nothing uncovered and skips nothing: a new
	// rule without a spec, or a spec that quietly stopped running, fails the build.
	if cfg.LabelFilter == "" {
		for _, r := range sum.Results.Rules {
			switch r.Verdict {
			case report.NotCovered:
				t.Errorf("rule %s is covered by no spec and not marked unobservable", r.Rule.ID)
			case report.Skipped, report.PartlyJudged:
				t.Errorf("rule %s was %s against the in-process mock", r.Rule.ID, r.Verdict)
			}
		}
		if sum.Specs.Skipped != 0 {
			t.Errorf("%d specs were skipped against the in-process mock, which meets every need", sum.Specs.Skipped)
		}
	}
	for _, p := range []string{cfg.HTMLReport, cfg.JSONReport, cfg.JUnitReport} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("report %s was not written: %v", p, err)
		}
	}
	if html, err := os.ReadFile(cfg.HTMLReport); err == nil {
		for _, secret := range []string{info.ControlToken, info.GenerateKey, info.ReadKey} {
			if bytes.Contains(html, []byte(secret)) {
				t.Error("the HTML report contains a secret")
			}
		}
		if m := regexp.MustCompile(`sk_live_[A-Za-z0-9]{8}`).Find(html); m != nil {
			t.Errorf("the HTML report holds an unredacted key starting %.12s", m)
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// TestMain gives ExampleRun a process of its own. The suite runs once per process (Ginkgo keeps
// one spec tree), TestConformance runs it in this one, and go test runs examples after tests: so a
// run that selects everything (no -run) skips ExampleRun here, and TestExampleRunAlone runs it in
// a child process of this binary. A run that selects with -run is taken as given.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.run").Value.String() == "" {
		skip := flag.Lookup("test.skip")
		pattern := "^ExampleRun$"
		if s := skip.Value.String(); s != "" {
			pattern = s + "|" + pattern
		}
		if err := skip.Value.Set(pattern); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// TestExampleRunAlone runs ExampleRun (its output checked) in a child process (see TestMain).
func TestExampleRunAlone(t *testing.T) {
	out, err := exec.Command(os.Args[0], "-test.run=^ExampleRun$", "-test.v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: ExampleRun") {
		t.Fatalf("ExampleRun in its own process: %v\n%s", err, out)
	}
}
