package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// embeddedBudget is the credit budget of a run against the embedded mock, whose credits are free.
const embeddedBudget = 5000

// embeddedRetiredCapability is a capability the embedded mock's catalogue has retired: retired ids
// are not listed, so the suite takes one from its configuration (fixtures/README.md lists them).
const embeddedRetiredCapability = "actor_classic"

// runCheck runs the conformance suite against --base-url, or, with no target configured, against
// the embedded mock it starts on a free loopback port with the control API on and a clock that moves
// only when a spec advances it (so time-dependent specs run at once and bucket counts are exact).
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	defer collectForCheck()()
	if conformance.IsChild(os.Getenv) {
		// One process of a run split with --procs: its setup comes from the parent on stdin, its
		// events go back on stdout, and the parent reports whatever goes wrong.
		own := func(ctx context.Context, cfg *conformance.Config) (func(), error) {
			return startEmbeddedMock(ctx, cfg, stderr)
		}
		if err := conformance.RunChildWith(ctx, os.Stdin, stdout, stderr, own); err != nil {
			return quietExit{code: exitCode(err)}
		}
		return nil
	}
	fs := newFlagSet("check", "[--base-url URL --key KEY ...] [--label-filter EXPR] [--html-report FILE] ...", stderr)
	flags := conformance.RegisterFlags(fs)
	img := registerImageFlags(fs)
	opts := conformance.Options{Version: Version()}
	fs.DurationVar(&opts.RequestTimeout, "request-timeout", conformance.DefaultRequestTimeout, "longest wait for one answer; a call without an answer by then fails its spec, naming the call")
	fs.DurationVar(&opts.Timeout, "timeout", 0, "longest the whole run may take (e.g. 20m; 0: no limit); the reports are written with what ran")
	fs.BoolVar(&opts.FailFast, "fail-fast", false, "stop at the first failed spec")
	fs.BoolVar(&opts.Verbose, "v", false, "print a line per spec")
	var floor minJudged
	fs.Var(&floor, "min-judged", "fail (exit 1) when the run judged fewer of the text rules than this, e.g. 85% (a rule is judged when every spec that checks it ran)")
	env := conformance.FlagEnv()
	env["request-timeout"], env["timeout"], env["fail-fast"], env["v"] = "MEDIASPEC_REQUEST_TIMEOUT", "MEDIASPEC_TIMEOUT", "MEDIASPEC_FAIL_FAST", "MEDIASPEC_VERBOSE"
	env["min-judged"] = "MEDIASPEC_MIN_JUDGED"
	own := map[string]string{"request-timeout": env["request-timeout"], "timeout": env["timeout"], "fail-fast": env["fail-fast"], "v": env["v"],
		"min-judged": env["min-judged"]}
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "image") {
			own[f.Name] = "MEDIASPEC_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			env[f.Name] = own[f.Name]
		}
	})
	fs.VisitAll(func(f *flag.Flag) {
		if name, ok := env[f.Name]; ok {
			f.Usage += " [$" + name + "]"
		}
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := applyEnvNames(fs, own); err != nil {
		return err
	}
	cfg, err := conformance.Load(flags, os.Getenv)
	if err != nil {
		return usageError{msg: strings.TrimPrefix(err.Error(), "conformance: ")}
	}
	if opts.RequestTimeout <= 0 {
		return usageError{msg: "--request-timeout must be above 0"}
	}
	// What needs no target is checked before the embedded mock or an image starts.
	if err := validateSettings(cfg, img.image != ""); err != nil {
		return err
	}
	if err := conformance.CheckLocal(cfg); err != nil {
		return err
	}
	// The line naming the target is written with the run's first output, after the setup has been
	// checked (the target's preflight included): a setup error is the only thing a failed start
	// prints. It follows the run's opening line (its headline: mode, target, budget, what the
	// selection can judge), which stays the first.
	banner := &firstLine{w: stdout, second: true}
	if img.image != "" {
		stop, err := startImage(ctx, img, &cfg, banner.keep(), stderr)
		if err != nil {
			return asSetup(err)
		}
		defer stop()
	} else if cfg.BaseURL == "" {
		if splitByDefault(fs, cfg) {
			cfg.Procs = embeddedProcs
		}
		// The mock outlives Ctrl-C: the run stops first and writes its reports, then the mock.
		stop, err := startEmbeddedMock(context.WithoutCancel(ctx), &cfg, stderr)
		if err != nil {
			return asSetup(err)
		}
		defer stop()
		opts.Mode = "embedded mock, control API, manual clock"
		if cfg.Procs > 1 {
			// Each process checks an embedded mock of its own: its own clock and catalogue, so
			// the control API's specs of one process never meet another's.
			opts.OwnTarget = func(ctx context.Context, c *conformance.Config) (func(), error) {
				return startEmbeddedMock(ctx, c, stderr)
			}
			opts.Mode = "embedded mocks (one per process), control API, manual clock"
		}
		banner.line = fmt.Sprintf("checking the embedded mock at %s (give --base-url to check another server)\n", cfg.BaseURL)
	}
	stdout = banner
	if cfg.Procs > 1 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--procs: find this program to start its processes: %w", err)
		}
		opts.Spawn = func() *exec.Cmd {
			cmd := exec.Command(exe, "check")
			cmd.Env = append(os.Environ(), conformance.ChildEnv())
			ownProcessGroup(cmd)
			return cmd
		}
	}
	sum, err := conformance.RunWith(ctx, cfg, opts, stdout, stderr)
	if err == nil && floor.set && cfg.Shard == "" {
		if c := sum.Results.Coverage; c.Percent() < floor.percent {
			return fmt.Errorf("judged %d of %d text rules (%.1f%%), below --min-judged %s", c.Judged, c.Total, c.Percent(), floor.String())
		}
	}
	return err
}

// checkGCPercent is the garbage collector's target of a check process (and of its embedded mock)
// when $GOGC does not set one: a check allocates about 1.7 GB over a live heap of about 15 MB, and
// at Go's default of 100 collected about 120 times. At 200 the embedded check took 15 % less CPU
// (6.8 to 7.4 s against 8.1 to 9.1 s, alternating runs at load 10 to 17) for 190 to 200 MB of
// peak RSS against 150 to 185.
const checkGCPercent = 200

// collectForCheck sets checkGCPercent unless $GOGC is set, and returns what restores the former
// setting (tests run check in their own process).
func collectForCheck() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(checkGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// embeddedProcs is how many processes the README's first command (the whole suite on the
// embedded mock) runs in when --procs is not given: its specs wait more than they work (the
// service's answers, the text's quiet windows), so two processes, each with an embedded mock of
// its own, take 0.55 to 0.9 of one's wall time on a busy 2-CPU machine (docs/development.md).
const embeddedProcs = 2

// splitByDefault reports whether a run of the embedded mock splits over embeddedProcs processes:
// the whole suite (no --label-filter: a few selected specs cost more to start in a process than
// they take), not one --shard of it, --procs not given (flag, $MEDIASPEC_PROCS or the YAML file's
// procs above 1), without a receiver or file server address that names one listener (which a
// split run refuses: conformance.CanSplit), with embeddedProcs CPUs or more to run on (GOMAXPROCS:
// a container's CPU limit, not the host's CPUs).
func splitByDefault(fs *flag.FlagSet, cfg conformance.Config) bool {
	given := os.Getenv("MEDIASPEC_PROCS") != "" || cfg.Procs != 1
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "procs" })
	return !given && cfg.LabelFilter == "" && cfg.Shard == "" && conformance.CanSplit(cfg) == nil &&
		runtime.GOMAXPROCS(0) >= embeddedProcs
}

// minJudged is --min-judged: a floor on the share of the text rules a run judged, in percent
// ("85%", "85" or "0.85").
type minJudged struct {
	percent float64
	set     bool
}

func (m *minJudged) String() string {
	if m == nil || !m.set {
		return ""
	}
	return strconv.FormatFloat(m.percent, 'f', -1, 64) + "%"
}

func (m *minJudged) Set(s string) error {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 {
		return fmt.Errorf("%q: want a share of the text rules such as 85%%", s)
	}
	if !pct && v <= 1 && strings.Contains(t, ".") {
		v *= 100 // 0.85
	}
	if v > 100 {
		return fmt.Errorf("%q: want at most 100%%", s)
	}
	m.percent, m.set = v, true
	return nil
}

// validateSettings refuses, as a usage error, a configuration that cannot describe a run whatever
// the target: a base or control URL that is not http(s), a negative budget, a time scale of 0, a
// --procs out of range, a control URL without its token. With no --base-url the embedded mock (or
// the image's container) is the target and supplies the URLs and the control token, so those are
// not asked for here.
func validateSettings(cfg conformance.Config, image bool) error {
	if cfg.Shard != "" && cfg.ControlURL != "" {
		// The embedded mock and an --image container are each shard's own target; a control URL
		// given here is a target the shards would share, clock and catalogue included.
		return usageError{msg: "--shard with --control-url: the shards of a run would share the target's one clock and catalogue, and one shard's spec would fail another's; give each shard a target of its own (the embedded mock, --image) or run keys only with a key set per shard"}
	}
	if cfg.BaseURL == "" || image {
		if cfg.BaseURL == "" {
			cfg.BaseURL = "http://127.0.0.1:1/api/v1"
		}
		if cfg.ControlURL == "" && cfg.Key == "" {
			cfg.ControlURL, cfg.ControlToken = "http://127.0.0.1:1/_control/v1", "placeholder"
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{msg: strings.TrimPrefix(err.Error(), "conformance: ")}
	}
	return nil
}

// firstLine writes line before the first bytes written through it (nothing when line is empty or
// nothing is ever written); with second, after the first write, which must be a whole line.
type firstLine struct {
	w      io.Writer
	line   string
	done   bool
	second bool
}

// keep is a writer whose bytes become the line (startImage names its container there).
func (f *firstLine) keep() io.Writer { return keepWriter{f} }

type keepWriter struct{ f *firstLine }

func (k keepWriter) Write(p []byte) (int, error) { k.f.line += string(p); return len(p), nil }

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.done && f.second {
		f.done = true
		n, err := f.w.Write(p)
		if err == nil && f.line != "" {
			_, err = io.WriteString(f.w, f.line)
		}
		return n, err
	}
	if !f.done {
		f.done = true
		if f.line != "" {
			if _, err := io.WriteString(f.w, f.line); err != nil {
				return 0, err
			}
		}
	}
	return f.w.Write(p)
}

// quietExit ends the process with code and prints nothing (what went wrong was said already).
type quietExit struct{ code int }

func (e quietExit) Error() string { return "" }

// ExitCode is the process's exit status.
func (e quietExit) ExitCode() int { return e.code }

// startEmbeddedMock starts the mock on 127.0.0.1:0 and points cfg at it, with control access. The
// returned stop shuts it down.
func startEmbeddedMock(ctx context.Context, cfg *conformance.Config, stderr io.Writer) (func(), error) {
	srv, err := mock.New(mock.Config{
		Seed:  1,
		Clock: clock.NewManual(time.Now().UTC().Truncate(time.Second)),
		// The suite's webhook receiver and media file server listen on loopback.
		AllowLoopbackWebhooks: true,
		AllowLoopbackFetch:    true,
		// Its start-state keys are test keys: the specs of test-mode inputs themselves run too.
		TestInputs: true,
		Logger:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded mock: %w", err)
	}
	srv.SetPublicURL("http://" + ln.Addr().String())
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	info := srv.Info()
	cfg.BaseURL = info.BaseURL
	cfg.ControlURL = info.ControlURL
	cfg.ControlToken = info.ControlToken
	_ = cfg.Features.Set(conformance.FeatureTestInputs)
	_ = cfg.TestKeys.Set(info.GenerateKey)
	useMockTargetDefaults(cfg)
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(stderr, "mediaspec: embedded mock:", err)
		}
	}, nil
}
