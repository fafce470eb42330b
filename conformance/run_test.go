package conformance_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/internal/conformancetest"
)

// runHelperEnv makes the test binary act as the mediaspec check command: TestRun re-executes the
// binary with it, because Ginkgo runs specs once per process.
const runHelperEnv = "MEDIASPEC_CONFORMANCE_RUN_HELPER"

// TestRun checks conformance.Run end to end in a child process: the console ends with the rule
// tally and then the spec tally, a passing selection returns no error, and a selection that runs
// nothing fails.
func TestRun(t *testing.T) {
	if filter, ok := os.LookupEnv(runHelperEnv); ok {
		runHelper(t, filter)
		return
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	// The console's last lines: the rule line, the spec line and the headline.
	const (
		rulesLine = `^rules: \d+ passed, \d+ partly judged, 0 failed, \d+ skipped`
		rulesAll  = `^rules: [1-9]\d* passed, \d+ partly judged, 0 failed, \d+ skipped, [1-9]\d* not selected, \d+ not covered, ` +
			`\d+ unobservable; \d+ strict-only \(not judged against another server\)$`
		// selectedOut is the spec line's end when no spec is strict-only.
		selectedOut = `|^[1-9]\d* passed, 0 failed, \d+ skipped \([1-9]\d* not selected\)$`
		specsPassed = `^[1-9]\d* passed, 0 failed, \d+ skipped \(\d+ strict-only, judged with --strict; [1-9]\d* not selected\)$` + selectedOut
		onePassed   = `^1 passed, 0 failed, [1-9]\d* skipped \(\d+ strict-only, judged with --strict; [1-9]\d* not selected\)$` + selectedOut
		someSkipped = `^[1-9]\d* passed, 0 failed, [1-9]\d* skipped \(\d+ strict-only, judged with --strict; [1-9]\d* not selected\)$` +
			selectedOut
		headline = `^judged \d+ of \d+ text rules at profile [a-z+-]+ \(\d+\.\d%\), \d+ partly judged, \d+ not judged; ` +
			`mode: .+; target: http://127\.0\.0\.1:\d+/api/v1; credits spent: \d+`
	)
	tests := []struct {
		name, filter string
		noControl    bool
		wantErr      string
		wantLines    []string
		wantSkip     string // a reason the JSON report must give for a skipped spec
	}{
		{"passing selection", "HEALTH-001 || HEALTH-002", false, "", []string{rulesAll, specsPassed}, ""},
		{"without control, control specs skip with the reason", "HEALTH-001 || PRESET-014", true, "",
			[]string{rulesLine, onePassed},
			"no --control-url given"},
		{"the probes' paths unnamed, the probe specs skip with the reason", "HEALTH-001 || AUTH-001", true, "",
			[]string{rulesLine, someSkipped},
			"the text does not give the liveness probe's path"},
		{"a receiver URL with a path prefix, relayed to the receiver", "WH-006", false, "", []string{rulesLine, specsPassed}, ""},
		{"a selection of nothing is a setup error, before any spec", "NO-SUCH-LABEL", false,
			`the label filter "NO-SUCH-LABEL" selects no spec`, nil, ""},
		{"a refused key is a setup error, in one line", "HEALTH-001", false, "the key was refused (401)", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report.json")
			cmd := exec.Command(os.Args[0], "-test.run=^TestRun$")
			cmd.Env = append(os.Environ(), runHelperEnv+"="+tc.filter, "MEDIASPEC_JSON_REPORT="+report)
			if tc.noControl {
				cmd.Env = append(cmd.Env, "HELPER_NO_CONTROL=1")
			}
			if strings.Contains(tc.name, "unnamed") {
				cmd.Env = append(cmd.Env, "HELPER_UNNAMED=1")
			}
			if strings.Contains(tc.name, "path prefix") {
				cmd.Env = append(cmd.Env, "HELPER_HOOK_PREFIX=1")
			}
			if strings.Contains(tc.wantErr, "key was refused") {
				cmd.Env = append(cmd.Env, "HELPER_WRONG_KEY=1")
			}
			out, _ := cmd.CombinedOutput()
			text := string(out)
			for _, key := range regexp.MustCompile(`sk_live_[A-Za-z0-9]{8}`).FindAllString(text, -1) {
				t.Errorf("the console shows a key: %.12s...", key)
			}
			lines := strings.Split(strings.TrimSpace(text), "\n")
			// The helper prints RUN-ERROR: <err> after Run returns, then the test framework's verdict.
			var console []string
			var runErr string
			for _, l := range lines {
				if strings.HasPrefix(l, "RUN-ERROR: ") {
					runErr = strings.TrimPrefix(l, "RUN-ERROR: ")
					break
				}
				console = append(console, l)
			}
			if tc.wantLines == nil {
				// A setup error stops the run before any spec: no tallies, no progress.
				if len(console) > 0 {
					t.Errorf("a setup error printed %d lines before the error:\n%s", len(console), text)
				}
			} else if len(console) < 2 {
				t.Fatalf("too little output:\n%s", text)
			}
			// The last three lines: the rule tally, the spec tally, the headline.
			var last3 []string
			if len(console) >= 3 {
				last3 = console[len(console)-3:]
			}
			for i, re := range tc.wantLines {
				if len(last3) < 3 || !regexp.MustCompile(re).MatchString(last3[i]) {
					t.Errorf("console line %d from the end is %q, want %s\n%s", 3-i, last3[min(i, len(last3)-1)], re, text)
				}
			}
			if tc.wantLines != nil && (len(last3) < 3 || !regexp.MustCompile(headline).MatchString(last3[2])) {
				t.Errorf("the last line is not the headline:\n%s", text)
			}
			if tc.wantErr == "" && runErr != "<nil>" {
				t.Errorf("Run error %q, want none\n%s", runErr, text)
			}
			if tc.wantErr != "" && !strings.Contains(runErr, tc.wantErr) {
				t.Errorf("Run error %q, want it to mention %q", runErr, tc.wantErr)
			}
			if tc.wantSkip != "" {
				data, err := os.ReadFile(report)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data), tc.wantSkip) {
					t.Errorf("the JSON report gives no skip reason %q", tc.wantSkip)
				}
			}
		})
	}
}

// runHelper is the child: it serves the mock and calls conformance.Run as the check command would.
func runHelper(t *testing.T, filter string) {
	ctx := context.Background()
	srv, _ := conformancetest.StartMock(t)
	info := srv.Info()
	// A run that is not the reference's names the probes' paths itself (the text gives none).
	cfg := conformance.Config{
		BaseURL: info.BaseURL, ControlURL: info.ControlURL, ControlToken: info.ControlToken,
		TimeScale: 1, LabelFilter: filter, JSONReport: os.Getenv("MEDIASPEC_JSON_REPORT"),
		LivePath: "/health/live", ReadyPath: "/health/ready",
		// and the balance's layout (its specs that read the available credits skip without it)
		Shapes: framework.ShapeList{"balance.available": "/available_credits"},
	}
	if os.Getenv("HELPER_UNNAMED") != "" {
		cfg.LivePath, cfg.ReadyPath = "", ""
	}
	if os.Getenv("HELPER_NO_CONTROL") != "" {
		cfg.ControlURL, cfg.ControlToken, cfg.Key = "", "", info.GenerateKey
	}
	if os.Getenv("HELPER_WRONG_KEY") != "" {
		cfg.ControlURL, cfg.ControlToken, cfg.Key = "", "", "sk_live_"+strings.Repeat("x", 40)
	}
	if os.Getenv("HELPER_HOOK_PREFIX") != "" {
		cfg.ReceiverListen, cfg.ReceiverPublicURL = prefixRelay(t)
	}
	var stdout bytes.Buffer
	_, runErr := conformance.Run(ctx, cfg, &stdout, os.Stderr)
	os.Stdout.Write(stdout.Bytes())
	if runErr != nil {
		os.Stdout.WriteString("RUN-ERROR: " + runErr.Error() + "\n")
	} else {
		os.Stdout.WriteString("RUN-ERROR: <nil>\n")
	}
}

// prefixRelay starts a relay that serves the receiver under the path /relay, as a reverse proxy
// in front of it would: it strips /relay and forwards to the receiver's listen address. It
// returns that address and the relay's URL with the prefix (check --receiver-url).
func prefixRelay(t *testing.T) (listen, public string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen = ln.Addr().String()
	_ = ln.Close()
	target := &url.URL{Scheme: "http", Host: listen}
	proxy := httputil.NewSingleHostReverseProxy(target)
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := strings.CutPrefix(r.URL.Path, "/relay/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		r.URL.Path, r.URL.RawPath = "/"+p, ""
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(relay.Close)
	return listen, relay.URL + "/relay"
}
