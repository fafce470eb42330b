package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/proxy"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

func TestProxyRefusesABadCommandLine(t *testing.T) {
	for _, args := range [][]string{
		{"proxy"}, // no upstream
		{"proxy", "--upstream", "ftp://example.invalid"},
		{"proxy", "--upstream", "http://127.0.0.1:1", "--fail-on", "may"},
		{"proxy", "--upstream", "http://127.0.0.1:1", "--webhook-forward", "http://127.0.0.1:2/hooks"}, // no secret
		{"proxy", "--upstream", "http://127.0.0.1:1", "--webhook-forward", "http://example.com/hooks", "--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{"proxy", "--upstream", "http://127.0.0.1:1", "--webhook-forward", "http://127.0.0.1:2/hooks", "--secret", "not-a-secret"},
	} {
		_, _, err := run(t, args...)
		if code := exitCode(err); err == nil || code != 2 {
			t.Errorf("%v: err %v (exit %d), want a setup error (exit 2)", args, err, code)
		}
	}
	// A report that cannot be written is found before anything is forwarded.
	_, _, err := run(t, "proxy", "--upstream", "http://127.0.0.1:1", "--json-report", filepath.Join(t.TempDir(), "no", "such", "dir.json"))
	if exitCode(err) != 2 {
		t.Errorf("unwritable report: %v", err)
	}
}

// The proxy in front of the mock: a line per new finding, a summary at shutdown, the three reports,
// and exit 1 on a MUST finding (exit 0 with --fail-on none).
func TestProxyCommandJudgesTraffic(t *testing.T) {
	info, stopMock := mockWithAudit(t)
	defer stopMock()
	dir := t.TempDir()
	for _, failOn := range []string{"must", "none"} {
		paths := map[string]string{"json": filepath.Join(dir, failOn+".json"), "junit": filepath.Join(dir, failOn+".xml"), "html": filepath.Join(dir, failOn+".html")}
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		var stderr lockedBuilder
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, []string{"proxy", "--upstream", info.BaseURL, "--listen", "127.0.0.1:0", "--json", "--fail-on", failOn,
				"--json-report", paths["json"], "--junit-report", paths["junit"], "--html-report", paths["html"]}, pw, &stderr)
			_ = pw.Close()
		}()
		rd := bufio.NewReader(pr)
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("no start line: %v (%v)", err, <-done)
		}
		var start proxyInfo
		if err := json.Unmarshal([]byte(line), &start); err != nil || !strings.HasPrefix(start.BaseURL, "http://127.0.0.1:") {
			t.Fatalf("start line %q: %v", line, err)
		}
		lines := make(chan string, 100)
		go func() {
			for {
				l, err := rd.ReadString('\n')
				if l != "" {
					lines <- l
				}
				if err != nil {
					close(lines)
					return
				}
			}
		}()
		// The same non-retryable refusal twice: CLIENT-001 (MUST), printed once as it happens.
		for range 3 {
			req, _ := http.NewRequest("POST", start.BaseURL+"/estimates", strings.NewReader(`{"capability_id":"no_such_capability","config":{}}`))
			req.Header.Set("Authorization", "Bearer "+info.GenerateKey)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		res, err := http.Get(start.FindingsURL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), `"CLIENT-001"`) {
			t.Fatalf("findings endpoint: %s", b)
		}
		select {
		case l := <-lines:
			if !strings.Contains(l, `"rule_id":"CLIENT-001"`) || strings.Contains(l, info.GenerateKey) {
				t.Errorf("finding line %q", l)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no finding line")
		}
		cancel()
		err = <-done
		var rest strings.Builder
		for l := range lines {
			rest.WriteString(l)
		}
		if !strings.Contains(rest.String(), "proxy: MUST CLIENT-001 client: 2 finding(s)") {
			t.Errorf("summary:\n%s", rest.String())
		}
		if strings.Count(rest.String(), `"rule_id":"CLIENT-001"`) != 0 {
			t.Errorf("a repeat was printed again:\n%s", rest.String())
		}
		if failOn == "must" && exitCode(err) != 1 {
			t.Errorf("--fail-on must: exit %d (%v), want 1", exitCode(err), err)
		}
		if failOn == "none" && err != nil {
			t.Errorf("--fail-on none: %v", err)
		}
		checkProxyReports(t, paths, info.GenerateKey)
	}
}

func checkProxyReports(t *testing.T, paths map[string]string, key string) {
	t.Helper()
	for kind, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			t.Errorf("%s report: %v", kind, err)
			continue
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s report holds the key", kind)
		}
		switch kind {
		case "json":
			var doc struct {
				Findings []struct {
					RuleID string `json:"rule_id"`
				} `json:"findings"`
			}
			if err := json.Unmarshal(b, &doc); err != nil || len(doc.Findings) == 0 || doc.Findings[0].RuleID != "CLIENT-001" {
				t.Errorf("JSON report: %v %s", err, b)
			}
		case "junit":
			var doc report.JUnit
			if err := xml.Unmarshal(b, &doc); err != nil || doc.Failures != 1 {
				t.Errorf("JUnit report: %v %s", err, b)
			}
		case "html":
			if !strings.Contains(string(b), "CLIENT-001") || !strings.Contains(string(b), "mediaspec proxy") {
				t.Errorf("HTML report lacks the finding")
			}
		}
	}
}

// A clean proxy run writes one passing case that says what was judged (or one skipped case when
// nothing was forwarded), never a JUnit file of no tests.
func TestProxyCleanRunJUnitIsNotEmpty(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rep           proxy.Report
		tests, passed int
		says          string
	}{
		{proxy.Report{Exchanges: 12}, 1, 1, "12 exchanges forwarded and judged"},
		{proxy.Report{}, 1, 0, "no exchange was forwarded"},
	} {
		res := proxyResults(cat, proxyRun{Upstream: "http://127.0.0.1:1", FailOn: "must", FailSide: "server"}, tc.rep, false)
		var out strings.Builder
		if err := res.WriteJUnit(&out); err != nil {
			t.Fatal(err)
		}
		var doc report.JUnit
		if err := xml.Unmarshal([]byte(out.String()), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Tests != tc.tests || doc.Tests-doc.Skipped-doc.Failures != tc.passed || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%+v: JUnit tests=%d skipped=%d failures=%d:\n%s", tc.rep, doc.Tests, doc.Skipped, doc.Failures, out.String())
		}
	}
}
