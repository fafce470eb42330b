package wrongservers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mediaspec/mediaspec/report"
)

// Verdicts of one wrong server.
const (
	Killed   = "KILLED"
	Survived = "SURVIVED"
	Broken   = "ERROR" // the harness could not judge: the run did not produce a report
	// Unreachable: below the control API (modes p and t), every selected spec of the server's
	// rules skipped for a need above the mode's tier: the mode cannot judge them, so the server
	// is neither killed nor a survivor there.
	Unreachable = "UNREACHABLE"
)

// Result is one wrong server's run.
type Result struct {
	Server  Server // the wrong server that ran
	Verdict string // Killed, Survived or Broken
	// Failed are the server's rules the suite failed; Passed those it passed; Other those it
	// skipped or did not cover.
	Failed, Passed, Other []string
	// Spec names the first failing spec of the server's rules and why it failed.
	Spec string
	// Stray are failed rules outside the server's list (a mistake may break more than it names).
	Stray []string
	// Above is, for an Unreachable server, the tiers its rules' specs needed (control, ...).
	Above    []string
	Err      error         // why the run could not be judged; nil when it could
	Duration time.Duration // how long the check ran
}

// checkTimeout bounds one check run; the suite's whole run takes well under a minute.
const checkTimeout = 5 * time.Minute

// Check runs `mediaspec check` from bin on srv's rules (all rules when srv has none) against the
// mock behind srv, keeping the logs and the JSON report in dir.
func Check(ctx context.Context, bin string, srv Server, dir string) Result {
	start := time.Now()
	res := Result{Server: srv}
	rep, err := check(ctx, bin, srv, dir)
	for try := 1; errors.Is(err, errPortTaken) && try < 3; try++ {
		rep, err = check(ctx, bin, srv, dir)
	}
	if err != nil {
		res.Verdict, res.Err = Broken, err
	} else {
		judge(&res, rep)
		if srv.mode == "t" && !srv.long && res.Verdict != Killed && waitsLong(rep, res.Server.Rules) {
			// As .ci/check-modes t's second pass: the specs that wait out hours of the target's
			// clock run with --long against a mock whose clock runs longTimeScale times faster.
			long := srv
			long.long = true
			lr := Check(ctx, bin, long, filepath.Join(dir, "long"))
			switch lr.Verdict {
			case Killed, Broken:
				lr.Server, lr.Duration = srv, 0
				res = lr
			case Survived:
				res.Verdict, res.Above = Survived, nil
				res.Passed = append(res.Passed, lr.Passed...)
			}
		}
	}
	res.Duration = time.Since(start)
	return res
}

func check(ctx context.Context, bin string, srv Server, dir string) (*report.Results, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	st, err := startStack(ctx, bin, srv, dir)
	if err != nil {
		return nil, err
	}
	defer st.stop()
	reportPath := filepath.Join(dir, "report.json")
	timeout := checkTimeout
	if srv.timeout > 0 {
		timeout = srv.timeout
	}
	var keysFile string
	if srv.mode == "c" {
		keysFile = filepath.Join(dir, "keys.txt")
		if err := os.WriteFile(keysFile, []byte(st.keySets()), 0o600); err != nil {
			return nil, err
		}
	}
	args := checkArgs(bin, srv, target{info: st.info, rcvListen: st.rcvListen, hookURL: st.hookURL, profile: st.profile, keysFile: keysFile},
		reportPath, timeout)
	logFile, err := os.Create(filepath.Join(dir, "check.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.ExitCode() <= 2) {
		return nil, fmt.Errorf("mediaspec check: %v (see %s)", runErr, logFile.Name())
	}
	if out, _ := os.ReadFile(logFile.Name()); bytes.Contains(out, []byte("address already in use")) {
		return nil, errPortTaken
	}
	b, err := os.ReadFile(reportPath)
	if err != nil && exit != nil && exit.ExitCode() == 2 {
		// The check refused the target before any spec ran (its preflight): the run fails loudly. The
		// baseline runs the same command, so this is the server's doing, not the harness's.
		out, _ := os.ReadFile(logFile.Name())
		return &report.Results{SuiteFailures: []string{"preflight: " + lastLine(out)}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mediaspec check wrote no report: %w (see %s)", err, logFile.Name())
	}
	var rep report.Results
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", reportPath, err)
	}
	return &rep, nil
}

// target is what a check run is pointed at: the mock's start line, the receiver's address behind
// the webhook proxy, and the files the run wrote (the mock's profile, the keys file of mode c).
type target struct {
	info               mockInfo
	rcvListen, hookURL string
	profile, keysFile  string
}

// checkArgs are the `mediaspec check` arguments that run srv's rules in srv's mode against t,
// writing the JSON report to reportPath.
func checkArgs(bin string, srv Server, t target, reportPath string, timeout time.Duration) []string {
	var args []string
	switch {
	case srv.mode == "c":
		args = []string{"check", "--base-url", t.info.BaseURL, "--keys-file", t.keysFile, "--procs", strconv.Itoa(max(srv.procs, 1)),
			"--budget", "500", "--reference", "--retired-capability-id", "actor_classic",
			"--json-report", reportPath, "--timeout", timeout.String()}
	case profileMode(srv.mode):
		// As .ci/check-modes p and t: the profile alone (no control URL, no --reference), with the
		// specs that wait on the target's running clock. The profile names no receiver (the
		// suite's default listener is on loopback): the run's receiver listens behind the webhook
		// proxy and the mock is told to deliver there, as in mode b, so the row's Hooks see every
		// delivery. The profile's time_scale paces the waits.
		args = []string{"check", "--config", t.profile,
			"--receiver-listen", t.rcvListen, "--receiver-url", t.hookURL,
			"--budget", "2000", "--slow", "--real-time",
			"--json-report", reportPath, "--timeout", timeout.String()}
		if srv.split() {
			// As .ci/check-modes: a process per key set of the profile, each with its own
			// receiver (registered through the webhook proxy's rewrite).
			args = slices.Delete(args, 3, 7)
			args = append(args, "--procs", strconv.Itoa(srv.procs))
		}
		if srv.long {
			args = append(args, "--long")
		}
	default:
		args = []string{"check",
			"--base-url", t.info.BaseURL, "--control-url", t.info.ControlURL, "--control-token", t.info.ControlToken,
			"--receiver-listen", t.rcvListen, "--receiver-url", t.hookURL,
			"--budget", "5000", "--slow", "--reference", "--retired-capability-id", "actor_classic",
			"--json-report", reportPath, "--timeout", timeout.String(),
		}
	}
	if srv.outsider {
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--reference" })
	}
	f := srv.Filter()
	if srv.long {
		f = "long"
		if srv.Filter() != "" {
			f = "(" + srv.Filter() + ") && long"
		}
	}
	if f != "" {
		args = append(args, "--label-filter", f)
	}
	args = append(args, srv.checkArgs...)
	if len(srv.shapes) > 0 && knowsFlag(bin, "check", "shape") {
		for _, s := range srv.shapes {
			args = append(args, "--shape", s)
		}
	}
	return args
}

// knowsFlag reports whether `bin sub --help` lists -name (a flag another branch may not have
// landed yet: the variant then runs without it).
func knowsFlag(bin, sub, name string) bool {
	out, _ := exec.Command(bin, sub, "--help").CombinedOutput()
	return regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).Match(out)
}

// lastLine is the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// errPortTaken: the port picked for the suite's receiver was taken before it listened; the run is
// made again on other ports.
var errPortTaken = errors.New("a port picked for the run was taken meanwhile")

// waitsLong reports whether a spec of rules (all when empty) skipped in rep because it waits out
// hours of the target's clock (need long, run only with --long).
func waitsLong(rep *report.Results, rules []string) bool {
	for _, s := range rep.Specs {
		if s.State == report.Skipped && slices.Contains(s.Labels, "long") &&
			(len(rules) == 0 || slices.ContainsFunc(s.Rules, func(id string) bool { return slices.Contains(rules, id) })) {
			return true
		}
	}
	return false
}

// modeTiers is the highest tier each mode below the control API offers.
var modeTiers = map[string]report.Tier{"p": report.TierProfile, "t": report.TierTestInputs}

// unreachable reports whether rep judged none of the rules mine selects because each of their
// selected specs skipped for a need above top, and the tiers they needed; false when one of them
// ran, or skipped for something else (the budget, a state the server broke: those count).
func unreachable(rep *report.Results, mine func(string) bool, top report.Tier) (bool, []string) {
	var above []string
	seen := false
	for _, s := range rep.Specs {
		if s.State == report.NotSelected || s.State == report.StrictOnly || !slices.ContainsFunc(s.Rules, mine) {
			continue // a strict-only spec judges no rule in any mode the harness runs (no --strict)
		}
		seen = true
		if s.State != report.Skipped {
			return false, nil
		}
		t := s.Why().Tier
		if t == "" || !top.Less(t) {
			return false, nil
		}
		if !slices.Contains(above, string(t)) {
			above = append(above, string(t))
		}
	}
	return seen, above
}

// judge sets the verdict: killed when one of the server's rules failed. The baseline (no rules)
// is killed by any failure, which is a harness fault.
func judge(res *Result, rep *report.Results) {
	mine := func(id string) bool { return len(res.Server.Rules) == 0 || slices.Contains(res.Server.Rules, id) }
	for _, v := range rep.Rules {
		id := v.Rule.ID
		switch {
		case !mine(id):
			if v.Verdict == report.Failed {
				res.Stray = append(res.Stray, id)
			}
		case v.Verdict == report.Failed:
			res.Failed = append(res.Failed, id)
		case v.Verdict == report.Passed:
			res.Passed = append(res.Passed, id)
		case len(res.Server.Rules) > 0:
			res.Other = append(res.Other, id+" "+v.Verdict)
		}
	}
	for _, s := range rep.Specs {
		if !s.Stopped() || !slices.ContainsFunc(s.Blamed(), mine) {
			continue
		}
		res.Spec = fmt.Sprintf("%s (%s): %s", s.Text, s.FailureLocation, report.Sentence(s.Reason))
		break
	}
	res.Verdict = Survived
	if len(res.Failed) > 0 {
		res.Verdict = Killed
	} else if top, ok := modeTiers[res.Server.mode]; ok && len(res.Server.Rules) > 0 {
		if no, above := unreachable(rep, mine, top); no {
			res.Verdict, res.Above = Unreachable, above
		}
	}
	// A setup the server breaks (the suite refuses to run at all) fails the run loudly: killed.
	if len(rep.SuiteFailures) > 0 {
		res.Verdict = Killed
		res.Spec = "the run's setup: " + report.Sentence(rep.SuiteFailures[0])
	}
}

// Options configure a pass.
type Options struct {
	Bin       string         // the mediaspec binary
	Only      *regexp.Regexp // run only servers whose name matches (nil: all)
	Parallel  int            // runs at once
	Baseline  bool           // first run the whole suite through the unchanged proxy
	MinKill   float64        // percent; under it Run fails (0: never)
	Dir       string         // logs and reports, one directory per server (empty: a temporary one)
	Survivors string         // write the survivor list here (empty: nowhere)
	// Mode is the target mode every server (and the baseline) runs in: "" or "b" (each row's
	// own: the control API, manual clock), "p" (keys + profile) or "t" (+ test-mode inputs):
	// the mock without its control API checked through the profile it writes, as
	// .ci/check-modes p and t do.
	Mode string
	// Procs splits each check of modes p and t over this many processes (0 or 1: one).
	Procs int
}

// profileCheckTimeout bounds one check run in modes p and t, whose specs wait on the target's
// running clock.
const profileCheckTimeout = 15 * time.Minute

// inMode is srv run in mode (unchanged for "" and "b": a row keeps the mode it was written for).
func inMode(srv Server, mode string, procs int) Server {
	if profileMode(mode) {
		srv.mode, srv.procs = mode, procs
		srv.timeout = max(srv.timeout, profileCheckTimeout)
	}
	return srv
}

// Pass runs the baseline and the selected servers and writes the table to w. It returns the
// results in table order.
func Pass(ctx context.Context, opts Options, servers []Server, w io.Writer) (baseline *Result, results []Result, err error) {
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.Baseline {
		b := Check(ctx, opts.Bin, inMode(Server{Name: "baseline"}, opts.Mode, opts.Procs), filepath.Join(opts.Dir, "baseline"))
		baseline = &b
		fmt.Fprintf(w, "baseline (whole suite through the unchanged proxy): %s, %d rules passed, %d failed, %s\n",
			map[bool]string{true: "ok", false: "WRONG"}[b.Verdict == Survived], len(b.Passed), len(b.Failed), b.Duration.Round(time.Second))
		if b.Verdict != Survived {
			if b.Err != nil {
				return baseline, nil, fmt.Errorf("baseline: %w", b.Err)
			}
			return baseline, nil, fmt.Errorf("baseline: the unchanged proxy fails %s (%s): the harness is wrong", strings.Join(b.Failed, ", "), b.Spec)
		}
	}
	results = make([]Result, len(servers))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range opts.Parallel {
		wg.Go(func() {
			for i := range jobs {
				results[i] = Check(ctx, opts.Bin, inMode(servers[i], opts.Mode, opts.Procs), filepath.Join(opts.Dir, servers[i].Name))
			}
		})
	}
	for i := range servers {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if ctx.Err() != nil {
		return baseline, results, ctx.Err()
	}
	return baseline, results, nil
}

// Tally counts verdicts.
type Tally struct {
	Killed, Survived, Broken int // servers of each verdict
	Unreachable              int // servers the mode cannot judge (modes p and t)
}

// Rate is the kill rate in percent over the servers judged.
func (t Tally) Rate() float64 {
	if n := t.Killed + t.Survived; n > 0 {
		return 100 * float64(t.Killed) / float64(n)
	}
	return 0
}

func tally(results []Result) Tally {
	var t Tally
	for _, r := range results {
		switch r.Verdict {
		case Killed:
			t.Killed++
		case Survived:
			t.Survived++
		case Unreachable:
			t.Unreachable++
		default:
			t.Broken++
		}
	}
	return t
}

// WriteTable writes one row per server: name, verdict, rules, and the failing spec or what passed.
// Below the control API (mode p or t) a column says whether the mode reaches the server's rules at
// all, and which tier they need when it does not.
func WriteTable(w io.Writer, results []Result, mode string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	below := profileMode(mode)
	if below {
		fmt.Fprintf(tw, "WRONG SERVER\tVERDICT\tAT %s\tRULES\tFAILING SPEC / WHY NOT\n", mode)
	} else {
		fmt.Fprintln(tw, "WRONG SERVER\tVERDICT\tRULES\tFAILING SPEC / WHY NOT")
	}
	for _, r := range results {
		var why string
		switch r.Verdict {
		case Killed:
			why = report.Clip(r.Spec, 160)
		case Survived:
			why = survivorNote(r)
		case Unreachable:
			why = "every spec of its rules skipped"
		default:
			why = report.Clip(r.Err.Error(), 160)
		}
		if below {
			reach := "reachable"
			if r.Verdict == Unreachable {
				reach = "not reachable (needs " + strings.Join(r.Above, ", ") + ")"
			} else if r.Verdict == Broken {
				reach = "?"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Server.Name, r.Verdict, reach, strings.Join(r.Server.Rules, " "), why)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server.Name, r.Verdict, strings.Join(r.Server.Rules, " "), why)
	}
	_ = tw.Flush()
}

// survivorNote says what the suite made of a survivor's rules, and which other rules it failed
// (a failure charged to the wrong rule).
func survivorNote(r Result) string {
	var parts []string
	if len(r.Passed) > 0 {
		parts = append(parts, "passed "+strings.Join(r.Passed, " "))
	}
	if len(r.Other) > 0 {
		parts = append(parts, strings.Join(r.Other, ", "))
	}
	if len(r.Stray) > 0 {
		parts = append(parts, "failed instead "+strings.Join(r.Stray, " "))
	}
	return strings.Join(parts, "; ")
}

// WriteSurvivors writes each survivor with its mistake and the rules the suite passed, for the
// spec owners.
func WriteSurvivors(w io.Writer, results []Result) {
	for _, r := range results {
		if r.Verdict != Survived {
			continue
		}
		fmt.Fprintf(w, "%s [%s]: %s\n    %s\n", r.Server.Name, strings.Join(r.Server.Rules, " "), r.Server.Mistake, survivorNote(r))
	}
}

// Run is the wrong-servers command: flags, the pass, the table and the kill rate. It fails when the
// baseline fails, when a run could not be judged, or (with --min-kill-rate) under the rate.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wrongservers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts Options
	only := fs.String("only", "", "run only the wrong servers whose name matches this regular expression")
	fs.StringVar(&opts.Bin, "bin", "bin/mediaspec", "the mediaspec binary to run the mock and the check with")
	fs.IntVar(&opts.Parallel, "parallel", 2, "wrong servers checked at once")
	fs.BoolVar(&opts.Baseline, "baseline", true, "first check the whole suite through the unchanged proxy (it must pass)")
	fs.Float64Var(&opts.MinKill, "min-kill-rate", 0, "fail when the kill rate (percent) is under this (0: report only)")
	fs.StringVar(&opts.Dir, "dir", "", "keep each run's logs and JSON report under this directory (default: a temporary one, removed)")
	fs.StringVar(&opts.Survivors, "survivors", "", "write the survivors, with the rules the suite passed, to this file")
	fs.StringVar(&opts.Mode, "mode", "b", "target mode: b (each row's own: the control API, manual clock), p (keys + profile) or t (keys + profile + test-mode inputs): "+
		"below the control API, the mock with --no-control and its profile, as .ci/check-modes p and t run it (a row whose rules' specs all need more is UNREACHABLE, not a survivor)")
	fs.IntVar(&opts.Procs, "procs", 1, "in modes p and t, split each check over this many processes (check --procs, a key set each), as .ci/check-modes does")
	list := fs.Bool("list", false, "list the wrong servers and their rules, run nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !slices.Contains([]string{"b", "p", "t"}, opts.Mode) {
		return fmt.Errorf("--mode %q: want b, p or t", opts.Mode)
	}
	servers := All()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("--only: %w", err)
		}
		servers = slices.DeleteFunc(servers, func(s Server) bool { return !re.MatchString(s.Name) })
	}
	if *list {
		for _, s := range servers {
			fmt.Fprintf(stdout, "%s [%s]: %s\n", s.Name, strings.Join(s.Rules, " "), s.Mistake)
		}
		return nil
	}
	if _, err := os.Stat(opts.Bin); err != nil {
		return fmt.Errorf("--bin: %w (make build)", err)
	}
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "wrongservers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		opts.Dir = d
	}
	start := time.Now()
	_, results, err := Pass(ctx, opts, servers, stdout)
	if err != nil {
		return err
	}
	WriteTable(stdout, results, opts.Mode)
	t := tally(results)
	if profileMode(opts.Mode) {
		fmt.Fprintf(stdout, "\nmode %s: %d of %d wrong servers reachable (%d need a higher tier)", opts.Mode, len(results)-t.Unreachable-t.Broken, len(results), t.Unreachable)
	}
	fmt.Fprintf(stdout, "\nkilled %d of %d wrong servers: kill rate %.1f%%", t.Killed, t.Killed+t.Survived, t.Rate())
	if t.Broken > 0 {
		fmt.Fprintf(stdout, "; %d could not be judged", t.Broken)
	}
	fmt.Fprintf(stdout, " (%s, %d at once)\n", time.Since(start).Round(time.Second), opts.Parallel)
	if opts.Survivors != "" {
		f, err := os.Create(opts.Survivors)
		if err != nil {
			return err
		}
		WriteSurvivors(f, results)
		if err := f.Close(); err != nil {
			return err
		}
	}
	switch {
	case t.Broken > 0:
		return fmt.Errorf("%d wrong servers could not be judged (see the table)", t.Broken)
	case opts.MinKill > 0 && t.Rate() < opts.MinKill:
		return fmt.Errorf("kill rate %.1f%% is under %.1f%%", t.Rate(), opts.MinKill)
	}
	return nil
}
