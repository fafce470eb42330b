package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/proxy"
	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// runProxy forwards a client's traffic to --upstream unchanged and judges every exchange against
// the contract, both sides, with state across exchanges (package proxy). With --webhook-forward it
// also stands in front of the client's webhook receiver. It prints a line per new finding, serves
// the findings at /_proxy/v1/findings, writes the reports when it stops (Ctrl-C), and exits 1 when a
// finding at the --fail-on level was recorded.
func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", "--upstream URL [--listen ADDR] [--webhook-forward URL --secret whsec_...] [flags]", stderr)
	upstream := fs.String("upstream", "", "the server to forward to: its origin or base URL, e.g. http://127.0.0.1:8080/api/v1 (required) [$MEDIASPEC_PROXY_UPSTREAM]")
	listen := fs.String("listen", "127.0.0.1:8090", "listen address of the proxy (127.0.0.1:0 picks a free port) [$MEDIASPEC_PROXY_LISTEN]")
	hookForward := fs.String("webhook-forward", "", "the client's webhook receiver (a loopback http(s) URL): deliveries sent to --webhook-listen are checked and forwarded there unchanged [$MEDIASPEC_PROXY_WEBHOOK_FORWARD]")
	hookListen := fs.String("webhook-listen", "127.0.0.1:8091", "listen address for webhook deliveries, with --webhook-forward [$MEDIASPEC_PROXY_WEBHOOK_LISTEN]")
	var secrets secretList
	fs.Var(&secrets, "secret", "signing secret whsec_... of the webhook endpoint, with --webhook-forward (repeat or separate with commas during a rotation) [$MEDIASPEC_PROXY_SECRET]")
	failOn := fs.String("fail-on", "must", "exit 1 at shutdown when a finding of this level was recorded: must, should (MUST or SHOULD) or none; advisories never count [$MEDIASPEC_PROXY_FAIL_ON]")
	failSide := fs.String("fail-side", "all", "which findings --fail-on counts: service (the server's answers and its webhook deliveries), client (the client's calls and its webhook receiver) or all [$MEDIASPEC_PROXY_FAIL_SIDE]")
	jsonReport := fs.String("json-report", "", "write the findings as JSON to this path at shutdown [$MEDIASPEC_PROXY_JSON_REPORT]")
	junitReport := fs.String("junit-report", "", "write a JUnit report (a case per finding, by rule area) to this path at shutdown [$MEDIASPEC_PROXY_JUNIT_REPORT]")
	htmlReport := fs.String("html-report", "", "write the HTML report (every rule with its verdict) to this path at shutdown [$MEDIASPEC_PROXY_HTML_REPORT]")
	quiet := fs.Bool("quiet", false, "print no line per finding (the summary at shutdown still comes) [$MEDIASPEC_PROXY_QUIET]")
	asJSON := fs.Bool("json", false, "print the start information as one JSON object, and each new finding as a JSON line [$MEDIASPEC_PROXY_JSON]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := applyEnv(fs, "MEDIASPEC_PROXY_"); err != nil {
		return err
	}
	if *upstream == "" {
		return usageError{msg: "proxy: --upstream is required: the server to forward to, e.g. http://127.0.0.1:8080/api/v1"}
	}
	switch *failOn {
	case "must", "should", "none":
	default:
		return usageError{msg: fmt.Sprintf("proxy: --fail-on %q: want must, should or none", *failOn)}
	}
	var sides []string
	switch *failSide {
	case "service":
		sides = proxy.ServiceSides
	case "client":
		sides = proxy.ClientSides
	case "all":
	default:
		return usageError{msg: fmt.Sprintf("proxy: --fail-side %q: want service, client or all", *failSide)}
	}
	if *hookForward != "" && len(secrets) == 0 {
		return usageError{msg: "proxy: --webhook-forward needs --secret: the whsec_... signing secret of the webhook endpoint"}
	}
	for _, path := range []string{*jsonReport, *junitReport, *htmlReport} {
		if path == "" {
			continue
		}
		if err := report.WriteFile(path, func(io.Writer) error { return nil }); err != nil {
			return exitError{code: 2, err: fmt.Errorf("proxy: the report %s cannot be written: %w", path, err)}
		}
	}

	out := &findingPrinter{w: stdout, json: *asJSON, quiet: *quiet}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rules, err := spec.LoadRules()
	if err != nil {
		return err
	}
	p, err := proxy.New(ctx, proxy.Config{Upstream: *upstream, Rules: rules, OnFinding: out.finding, Logger: logger})
	if err != nil {
		return usageError{msg: err.Error()}
	}
	started := time.Now()
	var hooks *proxy.Hooks
	if *hookForward != "" {
		hooks, err = proxy.NewHooks(p, proxy.HooksConfig{Secrets: secrets, Forward: *hookForward})
		switch {
		case errors.Is(err, receiver.ErrNoSecret), errors.Is(err, receiver.ErrBadSecret):
			return usageError{msg: "proxy: --secret: " + secretProblem(err)}
		case errors.Is(err, receiver.ErrBadForward):
			return usageError{msg: fmt.Sprintf("proxy: --webhook-forward %q: %v", *hookForward, err)}
		case err != nil:
			return exitError{code: 2, err: err}
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		p.Close()
		return exitError{code: 2, err: fmt.Errorf("proxy: listen on %s: %w", *listen, err)}
	}
	var hookLn net.Listener
	if hooks != nil {
		if hookLn, err = net.Listen("tcp", *hookListen); err != nil {
			_ = ln.Close()
			p.Close()
			return exitError{code: 2, err: fmt.Errorf("proxy: --webhook-listen %s: %w", *hookListen, err)}
		}
	}
	info := proxyInfo{URL: "http://" + ln.Addr().String(), BaseURL: "http://" + ln.Addr().String() + p.BasePath(), Upstream: *upstream,
		FindingsURL: "http://" + ln.Addr().String() + proxy.FindingsPath}
	if hookLn != nil {
		info.WebhookURL, info.WebhookForward = "http://"+hookLn.Addr().String()+"/", *hookForward
	}
	if err := out.start(info); err != nil {
		return err
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	wg.Add(1)
	go func() { defer wg.Done(); errs <- proxy.Serve(sctx, ln, p, logger) }()
	if hookLn != nil {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- proxy.Serve(sctx, hookLn, hooks, logger) }()
	}
	var serveErr error
	select {
	case serveErr = <-errs:
		stop()
	case <-ctx.Done():
	}
	wg.Wait()
	if hooks != nil {
		hooks.Close()
	}
	p.Close()
	if serveErr != nil {
		return fmt.Errorf("proxy: serve: %w", serveErr)
	}

	rep := p.Report()
	writeProxySummary(stdout, rep)
	run := proxyRun{Upstream: *upstream, Version: Version(), Contract: spec.Version, Started: started, Duration: time.Since(started), FailOn: *failOn, FailSide: *failSide}
	failed := (*failOn == "must" && p.Failed(false, sides...)) || (*failOn == "should" && p.Failed(true, sides...))
	if err := writeProxyReports(*jsonReport, *junitReport, *htmlReport, rules, run, rep, failed); err != nil {
		return err
	}
	if failed {
		return exitError{code: 1, err: fmt.Errorf("proxy: findings at the --fail-on %s level were recorded on the %s side (see above)", *failOn, *failSide)}
	}
	return nil
}

// proxyInfo is what the proxy prints at start.
type proxyInfo struct {
	URL            string `json:"url"`
	BaseURL        string `json:"base_url"`
	Upstream       string `json:"upstream"`
	FindingsURL    string `json:"findings_url"`
	WebhookURL     string `json:"webhook_url,omitempty"`
	WebhookForward string `json:"webhook_forward,omitempty"`
}

// findingPrinter prints the start line and one line per new finding; findings come from the
// proxy's judging goroutine.
type findingPrinter struct {
	mu    sync.Mutex // guards w
	w     io.Writer
	json  bool
	quiet bool
}

func (o *findingPrinter) start(info proxyInfo) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		return json.NewEncoder(o.w).Encode(info)
	}
	line := fmt.Sprintf("mediaspec proxy: forwarding %s to %s; point the client at %s; findings at %s", info.URL, info.Upstream, info.BaseURL, info.FindingsURL)
	if info.WebhookURL != "" {
		line += fmt.Sprintf("; register %s as the webhook endpoint (deliveries go on to %s)", info.WebhookURL, info.WebhookForward)
	}
	_, err := fmt.Fprintln(o.w, line+". Ctrl-C stops it.")
	syncFile(o.w)
	return err
}

func (o *findingPrinter) finding(f proxy.Finding) {
	if o.quiet {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json {
		_ = json.NewEncoder(o.w).Encode(f)
		return
	}
	fmt.Fprintln(o.w, findingLine(f))
}

// findingLine is a finding on one line: level (or ADVISORY), rule, side, key id, request, why.
func findingLine(f proxy.Finding) string {
	level := f.Level
	if f.Advisory {
		level = "ADVISORY"
	}
	key := f.KeyID
	if key == "" {
		key = "-"
	}
	ex := ""
	if len(f.Exchanges) > 0 {
		ex = fmt.Sprintf(" (#%d)", f.Exchanges[0])
	}
	return fmt.Sprintf("finding: %s %s %s %s %s%s: %s", level, f.RuleID, f.Side, key, f.Request, ex, f.Advice)
}

// writeProxySummary prints one line per rule and side with findings, advisories last, or a line
// saying there were none.
func writeProxySummary(w io.Writer, rep proxy.Report) {
	var failing, advisory []proxy.RuleCount
	for _, t := range rep.Totals {
		if t.Advisory {
			advisory = append(advisory, t)
		} else {
			failing = append(failing, t)
		}
	}
	fmt.Fprintf(w, "proxy: %d exchanges judged\n", rep.Exchanges)
	if len(failing) == 0 {
		fmt.Fprintln(w, "proxy: no findings")
	}
	for _, t := range failing {
		fmt.Fprintf(w, "proxy: %s %s %s: %d finding(s)\n", t.Level, t.RuleID, t.Side, t.Count)
	}
	for _, t := range advisory {
		fmt.Fprintf(w, "proxy: advisory %s %s: %d (differs from the reference's own choices; never a failure)\n", t.RuleID, t.Side, t.Count)
	}
	if rep.Dropped > 0 {
		fmt.Fprintf(w, "proxy: %d distinct findings beyond the first %d were counted, not kept\n", rep.Dropped, proxy.MaxFindings)
	}
	if rep.Unjudged > 0 {
		fmt.Fprintf(w, "proxy: %d exchanges were forwarded but not judged (the judging queue was full): their rules were not checked\n", rep.Unjudged)
	}
}

// proxyRun is the header of the proxy's reports.
type proxyRun struct {
	Upstream string        `json:"upstream"`
	Version  string        `json:"mediaspec_version"`
	Contract string        `json:"contract_version"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	FailOn   string        `json:"fail_on"`
	FailSide string        `json:"fail_side"`
}

func modeLine(r proxyRun) string {
	return "proxy: live traffic, fail on " + strings.ToUpper(r.FailOn) + " findings of the " + r.FailSide + " side"
}
