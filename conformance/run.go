// Package conformance runs the conformance suite — black-box Ginkgo specs of the media generation
// service's interface — against any implementation over HTTP, and reports a verdict for every rule
// of spec/rules.yaml.
//
// Two harnesses share the same specs: Run, for the mediaspec check command (any URL), and
// go test ./conformance/..., whose test starts the mock in-process and calls Suite.RunSpecs with its
// *testing.T. Ginkgo keeps one spec tree per process, so one Suite may be made per process.
package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/specs"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// SuiteName is the description Ginkgo reports the suite under.
const SuiteName = "mediaspec conformance"

// Config is the suite's configuration (see framework.Config for the fields, their YAML keys and
// environment variables).
type Config = framework.Config

// Flags is the handle RegisterFlags returns.
type Flags = framework.Flags

// RegisterFlags defines the suite's flags (--config, --base-url, --key, --read-key, --other-key,
// --control-url, --control-token, --budget, --label-filter, --json-report, --junit-report,
// --html-report, --time-scale, --slow, --randomize, --seed) on fs.
func RegisterFlags(fs *flag.FlagSet) *Flags { return framework.RegisterFlags(fs) }

// FlagEnv maps each flag RegisterFlags defines to its environment variable.
func FlagEnv() map[string]string { return framework.FlagEnv() }

// Load builds a Config from the YAML file (--config or MEDIASPEC_CONFIG), then the environment
// (getenv; os.Getenv when nil), then the flags set on the command line (flags may be nil).
func Load(flags *Flags, getenv func(string) string) (Config, error) {
	return framework.Load(flags, getenv)
}

// Summary is the outcome of a run: spec and rule tallies and every verdict; Results.Coverage is
// how much of the text rules it judged.
type Summary struct {
	Specs   report.Counts  // every state a spec may have (report.Counts)
	Rules   report.Counts  // every verdict a rule may have, partly judged included
	Results report.Results // every spec and rule verdict, as the reports write them
}

// claimed is set by the first NewSuite of the process: Ginkgo's spec tree and RunSpecs are
// process-wide and may be used once, and this turns a second attempt into an error instead of
// Ginkgo's os.Exit.
var claimed atomic.Bool

// Suite is a prepared conformance run: the framework, with the suite nodes and every spec
// registered in Ginkgo's tree.
type Suite struct {
	f   *framework.Framework
	cfg Config

	mu      sync.Mutex // guards results, repErr
	results *report.Results
	repErr  error

	stopAt atomic.Pointer[time.Time] // when Ctrl-C or the run's timeout stopped the run

	preview  types.Report   // the dry run of NewSuite: every spec, in tree order
	perArea  map[string]int // specs the label filter selects, per area
	selected int            // and in all
	match    func([]string) bool
	shard    map[string]bool // with --procs, a process's share (full texts); nil: every spec
	focus    string          // and the focus expression that selects it

	child    *childLink     // with --procs, this process's link to the parent
	info     report.RunInfo // the reports' header (RunWith)
	progress progress       // the console, or a process's events to its parent; nil under go test
}

// progress hears of each selected spec as it starts and ends.
type progress interface {
	willRun(specEvent)
	didRun(specEvent)
}

// NewSuite loads the documents, builds the framework and registers the suite nodes and every spec.
// It makes no network call. It fails when a Suite was already made in this process.
func NewSuite(ctx context.Context, cfg Config) (*Suite, error) {
	if err := framework.CheckLocal(Config{LabelFilter: cfg.LabelFilter}); err != nil {
		return nil, err
	}
	f, err := framework.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if !claimed.CompareAndSwap(false, true) {
		return nil, errors.New("conformance: the suite can run once per process (Ginkgo keeps one spec tree)")
	}
	s := &Suite{f: f, cfg: cfg}
	gomega.RegisterFailHandler(f.Fail)
	specs.Register(f)
	// A dry run counts what the filter selects. Ginkgo's preview keeps the containers and suite
	// nodes but drops top-level setup and report nodes, so those are registered after it.
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = s.Configure(ctx, sc, rc)
	s.preview = ginkgo.PreviewSpecs(SuiteName, sc, rc)
	s.match, _ = types.ParseLabelFilter(cfg.LabelFilter)
	s.perArea, s.selected = s.selection()
	f.RegisterSuiteNodes(s.onReport)
	ginkgo.BeforeEach(func() {
		if s.child != nil && s.child.stop.Load() {
			ginkgo.Skip("not run: a spec failed in another process (--fail-fast)")
		}
	})
	ginkgo.ReportBeforeEach(func(r types.SpecReport) {
		if s.progress != nil && s.counted(r) {
			s.progress.willRun(eventOf(r, s.stopAt.Load()))
		}
	})
	ginkgo.ReportAfterEach(func(r types.SpecReport) {
		if s.progress != nil && s.counted(r) {
			s.progress.didRun(eventOf(r, s.stopAt.Load()))
		}
	})
	return s, nil
}

// counted reports a spec the run selects: an It the label filter selects, in this process's share.
func (s *Suite) counted(r types.SpecReport) bool {
	return r.LeafNodeType == types.NodeTypeIt && s.match(r.Labels()) && (s.shard == nil || s.shard[r.FullText()])
}

// restrict makes the suite run only the specs whose full texts are in texts (a process's share of
// a split run), through a Ginkgo focus expression that matches exactly those texts.
func (s *Suite) restrict(texts []string) {
	s.shard = map[string]bool{}
	quoted := make([]string, 0, len(texts))
	for _, t := range texts {
		if !s.shard[t] {
			s.shard[t] = true
			quoted = append(quoted, regexp.QuoteMeta(SuiteName+" "+t))
		}
	}
	s.focus = "^(?:" + strings.Join(quoted, "|") + ")$"
	s.perArea, s.selected = s.selection()
}

// restrictToShard makes the suite run only the K-th of the N shares planShards makes of the
// selection (shard is K/N): every machine of a split run plans the same shares from the same
// program, label filter and weight table, so each selected spec runs on exactly one of them.
func (s *Suite) restrictToShard(shard string) error {
	k, n, err := report.ParseShard(shard, framework.MaxShards)
	if err != nil {
		return &framework.SetupError{Msg: "--" + err.Error()}
	}
	shares := planShards(s.preview, n, weightsFor(s.f.Config()).withCaps(s.f.Config(), nil))
	if k > len(shares) {
		// The selection splits into fewer shares (specs of one ordered container stay together):
		// this shard has nothing to run, and says so (emptyShare).
		s.restrict(nil)
		return nil
	}
	s.restrict(shares[k-1])
	return nil
}

// Framework returns the suite's framework.
func (s *Suite) Framework() *framework.Framework { return s.f }

// Configure overlays the suite's configuration on Ginkgo's: label filter, randomization and seed
// when set, and a timeout from ctx's deadline.
func (s *Suite) Configure(ctx context.Context, sc types.SuiteConfig, rc types.ReporterConfig) (types.SuiteConfig, types.ReporterConfig) {
	if s.cfg.LabelFilter != "" {
		sc.LabelFilter = s.cfg.LabelFilter
	}
	if s.cfg.Randomize {
		sc.RandomizeAllSpecs = true
	}
	if s.cfg.Seed != 0 {
		sc.RandomSeed = s.cfg.Seed
	}
	if d, ok := ctx.Deadline(); ok {
		sc.Timeout = time.Until(d)
	}
	if s.focus != "" {
		sc.FocusStrings = append(sc.FocusStrings, s.focus)
	}
	return sc, rc
}

// RunSpecs runs the specs with Ginkgo, reporting failure to t. Call it once.
func (s *Suite) RunSpecs(t ginkgo.GinkgoTestingT, sc types.SuiteConfig, rc types.ReporterConfig) bool {
	return ginkgo.RunSpecs(t, SuiteName, sc, rc)
}

// onReport runs in Ginkgo's ReportAfterSuite: it computes the verdicts and writes the reports.
func (s *Suite) onReport(r types.Report) {
	r = s.f.Redactor().Report(r)
	s.markInterrupted(&r)
	res := framework.BuildResultsOf(s.f.Catalogue(), r, s.selectionOf())
	res.Advisories = s.f.Advisories()
	res.Run = s.info
	res.Run.CreditsSpent = s.f.Budget().Spent()
	if !res.Run.Started.IsZero() {
		res.Run.Duration = time.Since(res.Run.Started).Round(time.Millisecond)
	}
	if len(r.SpecialSuiteFailureReasons) > 0 {
		res.Run.Cancelled = strings.Join(r.SpecialSuiteFailureReasons, "; ")
		if n := s.f.AbandonedJobs(); n > 0 {
			// Waiting for them would not end the run on time; the next run should know.
			res.Run.Cancelled += fmt.Sprintf("; %d jobs started on a shared key were left running and end on their own "+
				"(a run started before then may find the key busy: 409 submission_in_flight)", n)
		}
	}
	err := writeReports(s.cfg, res)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = &res
	s.repErr = err
}

// selectionOf is what the run selected, for the reports (framework.Selection).
func (s *Suite) selectionOf() framework.Selection {
	sel := framework.Selection{Match: s.match, Unjudged: s.f.UnjudgedRules}
	if s.shard != nil {
		sel.InShare = func(text string) bool { return s.shard[text] }
		sel.ShareReason = "run by another process of this run (--procs)"
		if s.cfg.Shard != "" {
			sel.ShareReason = report.OtherShardReason(s.cfg.Shard)
		}
	}
	return sel
}

// writeReports writes the reports cfg asks for (JUnit, JSON, HTML).
func writeReports(cfg Config, res report.Results) error {
	var errs []error
	if p := cfg.JUnitReport; p != "" {
		errs = append(errs, report.WriteFile(p, func(w io.Writer) error { return res.WriteJUnit(w) }))
	}
	if p := cfg.JSONReport; p != "" {
		errs = append(errs, report.WriteFile(p, func(w io.Writer) error { return res.WriteJSON(w) }))
	}
	if p := cfg.HTMLReport; p != "" {
		errs = append(errs, report.WriteFile(p, func(w io.Writer) error { return res.WriteHTML(w) }))
	}
	return errors.Join(errs...)
}

// Finish prints the two tally lines to w (rules, then specs, last) and returns the Summary and the
// run's error: failed specs, a failed suite node, no spec executed, or a report that could not be
// written.
func (s *Suite) Finish(w io.Writer) (Summary, error) {
	s.mu.Lock()
	res, repErr := s.results, s.repErr
	s.mu.Unlock()
	if res == nil {
		return Summary{}, errors.New("conformance: the suite produced no report (did RunSpecs run?)")
	}
	return finish(w, *res, repErr)
}

func finish(w io.Writer, res report.Results, repErr error) (Summary, error) {
	if n := len(res.Advisories); n > 0 {
		fmt.Fprintf(w, "advisories: %d differences from the reference's own choices (never failures)\n", n)
	}
	fmt.Fprintln(w, res.RuleLine())
	fmt.Fprintln(w, res.SpecLine())
	if res.Run.Shard != "" && res.SpecCounts.Executed() == 0 && res.Run.Cancelled == "" {
		fmt.Fprintf(w, "shard %s: no spec of its share ran (%d skipped, %d strict-only, %d of other shards): "+
			"merge-reports gives the run's verdict\n",
			res.Run.Shard, res.SpecCounts.Skipped, res.SpecCounts.StrictOnly, res.SpecCounts.NotSelected)
	}
	fmt.Fprintln(w, res.Headline())
	sum := Summary{Specs: res.SpecCounts, Rules: res.RuleCounts, Results: res}
	if err := res.Err(); err != nil {
		return sum, err
	}
	if repErr != nil {
		return sum, fmt.Errorf("conformance: %w", repErr)
	}
	return sum, nil
}

// testingT is the GinkgoTestingT of Run: it only records that the suite failed.
type testingT struct{ failed atomic.Bool }

func (t *testingT) Fail() { t.failed.Store(true) }

// Options are how mediaspec check runs the suite, beyond what it checks (Config).
type Options struct {
	// RequestTimeout bounds every call (0: framework.DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Timeout bounds the whole run (0: none); when it runs out the run stops, writes its reports
	// and fails.
	Timeout time.Duration
	// FailFast stops at the first failed spec.
	FailFast bool
	// Verbose prints a line per spec.
	Verbose bool
	// Version is the mediaspec version the reports name; Mode describes the target (e.g. "embedded
	// mock", "out of process, control API", "keys only").
	Version, Mode string
	// Spawn makes the command of one process of a run split over Config.Procs processes: the
	// process must call RunChild with the command's stdin and stdout (mediaspec check runs its own
	// binary). Without it Config.Procs is ignored.
	Spawn func() *exec.Cmd
	// OwnTarget, with Spawn, gives each process of a split run a target of its own instead of
	// Config's: the process starts one (RunChildWith's own; mediaspec check: the embedded mock)
	// and checks it, so processes need no key sets of their own and may use the control API
	// (each moves only its own target's clock). The parent checks Config's target before the
	// processes start, as for any run.
	OwnTarget func(context.Context, *Config) (stop func(), err error)

	child *childLink // set by RunChild: this run is one process of a split run
}

// Run runs the suite with default Options (see RunWith).
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (Summary, error) {
	return RunWith(ctx, cfg, Options{}, stdout, stderr)
}

// RunWith checks the setup first — report paths, label filter, then the target (CheckLocal and
// Framework.Preflight) — and returns a *framework.SetupError before any spec runs when it is
// wrong. It then runs the selected specs against cfg's target, printing a line per area (per spec
// with Verbose), keys redacted, then failures grouped by cause, skips by reason, and the rule tally
// and the spec tally as the last two lines. Ctrl-C (SIGINT) or the Timeout stops the run; the
// reports are written with what ran. With Config.Procs above 1 and Options.Spawn, the specs run in
// that many processes at once (see runProcs), with the same console, reports and errors.
// It returns an error when any spec failed, a suite node failed, no spec executed, or a report could
// not be written. It may be called once per process.
func RunWith(ctx context.Context, cfg Config, opts Options, stdout, stderr io.Writer) (Summary, error) {
	if err := framework.CheckLocal(cfg); err != nil {
		return Summary{}, err
	}
	if cfg.Procs > 1 && opts.Spawn != nil && opts.child == nil {
		return runProcs(ctx, cfg, opts, stdout, stderr)
	}
	s, err := NewSuite(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	if opts.child != nil {
		s.child = opts.child
		s.restrict(opts.child.setup.Specs)
		s.f.Budget().Share(opts.child.take, opts.child.give)
	} else if cfg.Shard != "" {
		if err := s.restrictToShard(cfg.Shard); err != nil {
			return Summary{}, err
		}
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = framework.DefaultRequestTimeout
	}
	s.f.SetRequestTimeout(opts.RequestTimeout)
	red := s.f.Redactor()
	out := red.Writer(stdout)
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = s.Configure(ctx, sc, rc)
	_, wall := s.realTimeSpecs()
	sc.Timeout = suiteTimeout(ctx, opts.Timeout, wall, sc.Timeout)
	sc.FailFast = opts.FailFast
	rc.Succinct, rc.NoColor = true, true
	total, selected := s.perArea, s.selected
	if selected == 0 && opts.child == nil && cfg.Shard != "" && slices.ContainsFunc(s.preview.SpecReports, selectedIn) {
		return s.emptyShare(out, opts)
	}
	if selected == 0 && opts.child == nil {
		return Summary{}, framework.NothingSelected(cfg.LabelFilter)
	}
	if err := s.f.Preflight(ctx); err != nil {
		return Summary{}, err
	}
	s.info = runInfo(s.f, cfg, opts)
	var con *console
	if opts.child != nil {
		// One process of a split run: its parent prints; it sends what happens and waits for the
		// parent's go, so no process starts before every one is ready.
		out = io.Discard
		s.progress = opts.child
		if err := opts.child.ready(ctx); err != nil {
			return Summary{}, err
		}
		s.info.Started = time.Now()
		if dl := opts.child.setup.Deadline; !dl.IsZero() {
			sc.Timeout = max(time.Until(dl), time.Millisecond)
		}
	} else {
		con = newConsole(out, opts.Verbose, total)
		s.progress = con
	}
	// Ginkgo's own console (progress, interrupt reports with goroutine stacks) is not shown: the
	// console above says what a person needs, the reports hold the rest.
	prevOut, prevErr := formatter.ColorableStdOut, formatter.ColorableStdErr
	formatter.ColorableStdOut, formatter.ColorableStdErr = io.Discard, red.Writer(stderr)
	defer func() { formatter.ColorableStdOut, formatter.ColorableStdErr = prevOut, prevErr }()
	if con != nil {
		con.start(s.openingLine(s.info))
	}
	t := &testingT{}
	ran := make(chan struct{})
	go s.watchStop(ctx, sc.Timeout, ran)
	s.RunSpecs(t, sc, rc)
	close(ran)
	s.mu.Lock()
	res, repErr := s.results, s.repErr
	s.mu.Unlock()
	if res == nil {
		if con != nil {
			con.finish()
		}
		return Summary{}, errors.New("conformance: the suite produced no report (did RunSpecs run?)")
	}
	sum, err := conclude(out, con, cfg, *res, repErr)
	if err == nil && t.failed.Load() {
		err = errors.New("conformance: the suite failed")
	}
	return sum, err
}

// emptyShare ends the run of a shard whose share is empty (the selection splits into fewer
// shares than --shard's N): it says so, writes reports that give every spec to the other shards,
// for merge-reports, and succeeds: the merge gives the run's verdict.
func (s *Suite) emptyShare(out io.Writer, opts Options) (Summary, error) {
	res := framework.BuildResultsOf(s.f.Catalogue(), s.preview, s.selectionOf())
	res.Run = runInfo(s.f, s.cfg, opts)
	res.Succeeded = true
	fmt.Fprintf(out, "shard %s: nothing to run: its share of the selection is empty (the selection splits into fewer shares); "+
		"merge-reports gives the run's verdict\n", s.cfg.Shard)
	err := writeReports(s.cfg, res)
	sum := Summary{Specs: res.SpecCounts, Rules: res.RuleCounts, Results: res}
	if err != nil {
		return sum, fmt.Errorf("conformance: %w", err)
	}
	return sum, nil
}

// outOfProcessMode names what an out-of-process target offers, from the tiers of its run: keys
// only, keys and a target profile (with test-mode inputs), or the control API.
func outOfProcessMode(offered []framework.Tier) string {
	has := func(t framework.Tier) bool { return slices.Contains(offered, t) }
	switch {
	case has(framework.TierControl):
		return "out of process, with the control API"
	case has(framework.TierProfile) && has(framework.TierTestInputs):
		return "out of process, keys + profile + test-mode inputs"
	case has(framework.TierProfile):
		return "out of process, keys + profile"
	case has(framework.TierTestInputs):
		return "out of process, keys + test-mode inputs"
	}
	return "out of process, keys only"
}

// runInfo is the reports' header of a run that starts now.
func runInfo(f *framework.Framework, cfg Config, opts Options) report.RunInfo {
	info := report.RunInfo{Target: f.Redactor().String(f.Config().BaseURL), Version: opts.Version, Contract: spec.Version,
		Started: time.Now(), Filter: cfg.LabelFilter, Mode: opts.Mode}
	if info.Mode == "" {
		info.Mode = outOfProcessMode(f.Config().Offered())
	}
	if cfg.Procs > 1 {
		info.Mode += fmt.Sprintf(", %d processes", cfg.Procs)
	}
	info.Shard = cfg.Shard
	info.Budget, info.Strict = cfg.Budget, cfg.Strict
	info.Profile = report.ProfileName(f.Config().Offered())
	return info
}

// conclude ends the console (when there is one) with failures by cause, skips by reason and the two
// tallies, and returns the run's outcome.
func conclude(out io.Writer, con *console, cfg Config, res report.Results, repErr error) (Summary, error) {
	if con != nil {
		con.finish()
		hint := ""
		if cfg.HTMLReport != "" {
			hint = " (every call of each is in " + cfg.HTMLReport + ")"
		} else if cfg.JSONReport != "" {
			hint = " (every call of each is in " + cfg.JSONReport + ")"
		}
		con.summary(res, hint)
		if res.Run.Cancelled != "" {
			fmt.Fprintln(out, "stopped early: "+res.Run.Cancelled)
		}
	}
	sum, err := finish(out, res, repErr)
	if setupFailed(res) {
		return sum, &framework.SetupError{Msg: report.Sentence(strings.Join(res.SuiteFailures, "; "))}
	}
	return sum, err
}

// markInterrupted turns a spec that failed after the run was stopped (Ctrl-C, --timeout) into an
// interrupted one: its context was cancelled under it, which says nothing about the target.
func (s *Suite) markInterrupted(r *types.Report) {
	at := s.stopAt.Load()
	if at == nil {
		return
	}
	for i, sr := range r.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt && sr.State.Is(types.SpecStateFailureStates) && !sr.EndTime.Before(*at) {
			r.SpecReports[i].State = types.SpecStateInterrupted
		}
	}
}

// watchStop records when ctx ends (Ctrl-C) or the timeout passes, until done is closed.
func (s *Suite) watchStop(ctx context.Context, timeout time.Duration, done <-chan struct{}) {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ctx.Done():
	case <-deadline:
	case <-done:
		return
	}
	now := time.Now()
	s.stopAt.Store(&now)
	s.f.Stop()
}

// selection counts the specs the run selects, per area and in all.
// It also tells the framework whether a selected spec needs a webhook receiver (only then does
// the setup start one and register it at the target).
func (s *Suite) selection() (map[string]int, int) {
	perArea := map[string]int{}
	n := 0
	receiver := false
	for _, r := range s.preview.SpecReports {
		if !selectedIn(r) || (s.shard != nil && !s.shard[r.FullText()]) {
			continue
		}
		perArea[framework.AreaOf(r.LeafNodeLocation.FileName)]++
		n++
		receiver = receiver || slices.Contains(r.Labels(), string(framework.Receiver))
	}
	s.f.WantReceiver(receiver)
	return perArea, n
}

// openingLine is the console's first line: the run's mode, target and budget, and what the
// selection can judge at most.
func (s *Suite) openingLine(info report.RunInfo) string {
	atMost, texts := s.plan()
	line := fmt.Sprintf("mediaspec check: mode: %s; profile: %s; target: %s; a budget of %d credits; "+
		"%d specs in %d areas selected: they can judge at most %d of %d text rules",
		info.Mode, info.Profile, info.Target, info.Budget, s.selected, len(s.perArea), atMost, texts)
	if n, wall := s.realTimeSpecs(); n > 0 {
		line += fmt.Sprintf("; --real-time: %d specs wait out the target's clock, about %s of wall clock over %d processes",
			n, wall, max(s.f.Config().Procs, 1))
	}
	return line
}

// realTimeSpecs counts the selected specs that will wait out real time, in a run with --real-time
// and without the control API (which advances its clock instead): those that need RealTime and
// whose every need the configuration meets (runnable: Long is met only with --long). wall is about
// how long their waits take spread over the run's processes: what each declares it waits out of
// the target's clock (framework.RealTimeWait), in wall time at the target's time scale; at least
// the longest one.
func (s *Suite) realTimeSpecs() (n int, wall time.Duration) {
	cfg := s.f.Config()
	if !cfg.RealTime || cfg.ControlURL != "" {
		return 0, 0
	}
	caps := configCaps(cfg, nil)
	var waits []time.Duration
	for _, r := range s.preview.SpecReports {
		if s.runnable(r, caps) && slices.Contains(r.Labels(), string(framework.RealTime)) {
			waits = append(waits, framework.RealTimeWait(r.LeafNodeLocation))
		}
	}
	return len(waits), realTimeWall(waits, cfg.Procs, cfg.TimeScale)
}

// suiteTimeout is the Ginkgo timeout of a run: --timeout when given, else what is left of ctx's
// deadline (configured, see Configure), else (0 means no limit) far above the run's real-time waits in
// wall time: Ginkgo's own default of an hour would cut a --long run on a target's real clock.
func suiteTimeout(ctx context.Context, timeout, wall, configured time.Duration) time.Duration {
	if timeout > 0 {
		return timeout
	}
	if _, ok := ctx.Deadline(); ok {
		return configured
	}
	return noLimit + 4*wall
}

// noLimit is the least suite timeout of a run with no --timeout: a day, above any run's checks
// but its real-time waits (see suiteTimeout).
const noLimit = 24 * time.Hour

// realTimeWall is about how long waits of a target's clock running scale times faster than real
// time take in wall time, spread over procs processes: their sum shared out, at least the longest.
func realTimeWall(waits []time.Duration, procs int, scale float64) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	var sum, longest time.Duration
	for _, w := range waits {
		w = time.Duration(float64(w) / scale)
		sum += w
		longest = max(longest, w)
	}
	n := time.Duration(max(procs, 1))
	return max(longest, (sum+n-1)/n).Round(time.Second)
}

// plan is what the selected specs can judge at most, before they run: the text rules (report
// Rule.OfText) every spec of which is selected and declares no need the configuration cannot meet
// (a spec may still skip for what only the target tells). total is every text rule.
func (s *Suite) plan() (atMost, total int) {
	caps := configCaps(s.f.Config(), nil)
	canRun := map[string]bool{} // rule id -> every spec of it can run
	for _, r := range s.preview.SpecReports {
		if r.LeafNodeType != types.NodeTypeIt {
			continue
		}
		ok := s.runnable(r, caps)
		for _, id := range ruleLabels(r.Labels()) {
			if prev, seen := canRun[id]; !seen || prev {
				canRun[id] = ok
			}
		}
	}
	for _, rule := range s.f.Catalogue().Rules {
		if !report.Rule(rule).OfText() {
			continue
		}
		total++
		if canRun[rule.ID] {
			atMost++
		}
	}
	return atMost, total
}

// runnable reports an It of the dry run that this run selects (its label filter, and its shard
// when split) and whose every declared need caps meets.
func (s *Suite) runnable(r types.SpecReport, caps framework.Capabilities) bool {
	return selectedIn(r) && (s.shard == nil || s.shard[r.FullText()]) && caps.Unmet(needsOf(r.Labels())) == ""
}

// selectedIn reports an It of a dry run that the label filter selects.
func selectedIn(r types.SpecReport) bool {
	return r.LeafNodeType == types.NodeTypeIt && !r.State.Is(types.SpecStateSkipped|types.SpecStatePending)
}

// setupFailed reports a run whose BeforeSuite failed: no spec ran for lack of setup.
func setupFailed(r report.Results) bool {
	for _, f := range r.SuiteFailures {
		if strings.HasPrefix(f, types.NodeTypeBeforeSuite.String()+" failed") {
			return true
		}
	}
	return false
}

// RuleNeeds maps every rule of the catalogue to what a run must offer for every spec that checks
// it to run, as the specs declare it (their need labels; report.Need* names, in report.NeedOrder;
// none: keys alone run them all), with how many specs check it. It builds the spec tree without
// running anything or touching a network, and so claims the process's one suite (NewSuite).
func RuleNeeds(ctx context.Context) (needs map[string][]string, specCount map[string]int, err error) {
	labels, err := SpecLabels(ctx)
	if err != nil {
		return nil, nil, err
	}
	needs, specCount = map[string][]string{}, map[string]int{}
	for _, ls := range labels {
		var own []string
		for _, l := range ls {
			// uploads is met by every run (the public API) and is not listed
			if n := framework.Need(l); slices.Contains(framework.AllNeeds, n) && n != framework.Uploads {
				own = append(own, n.Report())
			}
		}
		for _, id := range ruleLabels(ls) {
			specCount[id]++
			for _, n := range own {
				if !slices.Contains(needs[id], n) {
					needs[id] = append(needs[id], n)
				}
			}
		}
	}
	for id := range needs {
		slices.SortFunc(needs[id], func(a, b string) int { return slices.Index(report.NeedOrder, a) - slices.Index(report.NeedOrder, b) })
	}
	return needs, specCount, nil
}

// SpecLabels are the labels of every spec (It) of the suite, one list per spec in tree order: the
// rule ids it checks and the needs it declares. A label filter selects a spec when it matches that
// spec's list. It builds the spec tree without running anything or touching a network, and so
// claims the process's one suite (NewSuite).
func SpecLabels(ctx context.Context) ([][]string, error) {
	cfg, err := Load(nil, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg.BaseURL, cfg.Key = "http://127.0.0.1:1/api/v1", "placeholder"
	s, err := NewSuite(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, r := range s.preview.SpecReports {
		if r.LeafNodeType == types.NodeTypeIt {
			out = append(out, r.Labels())
		}
	}
	return out, nil
}
