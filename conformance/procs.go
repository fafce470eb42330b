package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// A run split over processes (mediaspec check --procs N): Ginkgo runs the specs of one process one
// after another and one spec tree per process, so the parent starts N processes of its own binary
// (Options.Spawn), each running a share of the spec tree (planShards) with keys of its own, and
// merges what they report into one console, one verdict per rule and one set of reports.
//
// The parent and a process talk in lines of JSON: the parent writes the setup (setupMsg) on the
// process's stdin, then "go" once every process is ready, then the answers to budget requests; the
// process writes events (procMsg) on its stdout: ready, each spec starting and ending, budget
// requests, and why it could not start. Keys travel only through that pipe, never on a command line.

// childEnv is the environment variable that tells mediaspec check it runs as one process of a
// split run (it then calls RunChild instead of parsing flags).
const childEnv = "MEDIASPEC_CHECK_PROCESS"

// ChildEnv is the environment variable (and its value) Options.Spawn sets on the command it makes,
// so the command knows to call RunChild.
func ChildEnv() string { return childEnv + "=1" }

// IsChild reports whether this process was started as one process of a split run.
func IsChild(getenv func(string) string) bool { return getenv(childEnv) == "1" }

// setupMsg is the first line a process reads: what to check and which specs are its share.
type setupMsg struct {
	Config         Config        `json:"config"`
	Proc           int           `json:"proc"`
	Procs          int           `json:"procs"`
	Specs          []string      `json:"specs"` // full texts of its share
	RequestTimeout time.Duration `json:"request_timeout"`
	Deadline       time.Time     `json:"deadline,omitzero"` // --timeout: the whole run's end`
	FailFast       bool          `json:"fail_fast"`
	Version        string        `json:"version"`
	Mode           string        `json:"mode"`
	// OwnTarget: the process starts a target of its own (Options.OwnTarget, given to
	// RunChildWith) and checks it instead of Config's.
	OwnTarget bool `json:"own_target,omitempty"`
}

// parentMsg is a later line a process reads: go, or the answer to a budget request.
type parentMsg struct {
	Go   bool   `json:"go,omitempty"`
	Stop bool   `json:"stop,omitempty"` // --fail-fast: another process failed; skip what is left
	ID   int    `json:"id,omitempty"`
	Err  string `json:"err,omitempty"`
}

// procMsg is a line a process writes.
type procMsg struct {
	Ev   string     `json:"ev"` // ready, will, did, take, give, fail
	Spec *specEvent `json:"spec,omitempty"`
	ID   int        `json:"id,omitempty"` // take: the request's id
	N    int        `json:"n,omitempty"`  // take, give: credits
	Msg  string     `json:"msg,omitempty"`
	Code int        `json:"code,omitempty"` // fail: the exit status
}

// childLink is a process's end of the pipes to its parent.
type childLink struct {
	setup setupMsg

	wmu sync.Mutex // guards enc
	enc *json.Encoder

	mu      sync.Mutex // guards next, waiting
	next    int
	waiting map[int]chan string
	goCh    chan struct{} // closed on the parent's go
	gone    chan struct{} // closed when the parent's pipe ends
	stop    atomic.Bool   // the parent said stop (--fail-fast)
}

func (c *childLink) send(m procMsg) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.enc.Encode(m)
}

// read dispatches the parent's lines until its pipe ends.
func (c *childLink) read(sc *bufio.Scanner) {
	defer close(c.gone)
	started := false
	for sc.Scan() {
		var m parentMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Go && !started {
			started = true
			close(c.goCh)
			continue
		}
		if m.Stop {
			c.stop.Store(true)
			continue
		}
		c.mu.Lock()
		ch := c.waiting[m.ID]
		delete(c.waiting, m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m.Err
		}
	}
}

// ready tells the parent this process passed its preflight and waits for its go.
func (c *childLink) ready(ctx context.Context) error {
	c.send(procMsg{Ev: "ready"})
	select {
	case <-c.goCh:
		return nil
	case <-c.gone:
		return errors.New("conformance: the parent process stopped the run before it started")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take asks the parent for n credits of the run's budget.
func (c *childLink) take(n int) error {
	ch := make(chan string, 1)
	c.mu.Lock()
	c.next++
	id := c.next
	c.waiting[id] = ch
	c.mu.Unlock()
	c.send(procMsg{Ev: "take", ID: id, N: n})
	select {
	case msg := <-ch:
		if msg != "" {
			return errors.New(msg)
		}
		return nil
	case <-c.gone:
		return errors.New("disabled: the parent process is gone, so no credits can be spent")
	}
}

func (c *childLink) give(n int) { c.send(procMsg{Ev: "give", N: n}) }

func (c *childLink) willRun(ev specEvent) {
	ev.Proc = c.setup.Proc
	c.send(procMsg{Ev: "will", Spec: &ev})
}

func (c *childLink) didRun(ev specEvent) {
	ev.Proc = c.setup.Proc
	c.send(procMsg{Ev: "did", Spec: &ev})
}

// RunChild runs one process of a split run: it reads its setup from in, runs its share of the
// specs, writes its events to out and its JSON report where the setup says. An error that stops it
// before its specs run is also sent to the parent, which reports it.
func RunChild(ctx context.Context, in io.Reader, out io.Writer, stderr io.Writer) error {
	return RunChildWith(ctx, in, out, stderr, nil)
}

// RunChildWith is RunChild for a binary that can start a target of its own in each process
// (Options.OwnTarget): own starts it when the parent's setup asks for one, pointing the
// configuration at it, and the process stops it when its specs are done.
func RunChildWith(ctx context.Context, in io.Reader, out io.Writer, stderr io.Writer,
	own func(context.Context, *Config) (stop func(), err error)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	if !sc.Scan() {
		return errors.New("conformance: no setup from the parent process")
	}
	c := &childLink{enc: json.NewEncoder(out), waiting: map[int]chan string{}, goCh: make(chan struct{}), gone: make(chan struct{})}
	if err := json.Unmarshal(sc.Bytes(), &c.setup); err != nil {
		return fmt.Errorf("conformance: the parent's setup: %w", err)
	}
	go c.read(sc)
	st := c.setup
	if st.OwnTarget {
		if own == nil {
			err := errors.New("conformance: the parent asked this process to start a target of its own, and it cannot")
			c.send(procMsg{Ev: "fail", Msg: err.Error(), Code: 1})
			return err
		}
		stop, err := own(context.WithoutCancel(ctx), &st.Config)
		if err != nil {
			c.send(procMsg{Ev: "fail", Msg: err.Error(), Code: 1})
			return err
		}
		defer stop()
	}
	opts := Options{RequestTimeout: st.RequestTimeout, FailFast: st.FailFast, Version: st.Version, Mode: st.Mode, child: c}
	_, err := RunWith(ctx, st.Config, opts, io.Discard, stderr)
	if err != nil {
		select {
		case <-c.goCh:
		default:
			// Stopped before its specs ran: the parent says why.
			code := 1
			var coded interface{ ExitCode() int }
			if errors.As(err, &coded) {
				code = coded.ExitCode()
			}
			c.send(procMsg{Ev: "fail", Msg: err.Error(), Code: code})
		}
	}
	return err
}

// proc is the parent's handle on one process.
type proc struct {
	cmd    *exec.Cmd
	report string         // where it writes its JSON report
	in     io.WriteCloser // its stdin
	wmu    sync.Mutex     // guards in
	err    error          // how it ended
	sigint bool           // it was told to stop
}

func (p *proc) tell(m parentMsg) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	b, _ := json.Marshal(m)
	_, _ = p.in.Write(append(b, '\n'))
}

// procEvent is a line from process n, or its end (msg nil).
type procEvent struct {
	n   int
	msg *procMsg
}

// stopGrace is how long the processes of a stopped run (Ctrl-C, --timeout) get to write their
// reports before they are killed.
const stopGrace = 30 * time.Second

// runProcs runs the suite split over cfg.Procs processes (see RunWith), in steps: check the setup
// and plan the shares, start a process per share, wait until every one is ready, let them run
// while the console shows their specs, then merge their reports into one run's and report it.
func runProcs(ctx context.Context, cfg Config, opts Options, stdout, stderr io.Writer) (Summary, error) {
	var deadline time.Time // --timeout bounds the whole run, the processes' start included
	if opts.Timeout > 0 {
		deadline = time.Now().Add(opts.Timeout)
	}
	sets, w := make([]*framework.KeySet, cfg.Procs), ownTargetWeights()
	if opts.OwnTarget == nil {
		var err error
		if sets, err = cfg.ShardKeySets(cfg.Procs); err != nil {
			return Summary{}, err
		}
		w = weightsFor(cfg)
	}
	if err := checkSplitReceiver(cfg); err != nil {
		return Summary{}, err
	}
	s, err := NewSuite(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	r := newProcRun(s.f.Redactor(), sets, stderr)
	out := r.red.Writer(stdout)
	if s.selected == 0 {
		return Summary{}, framework.NothingSelected(cfg.LabelFilter)
	}
	// Each process with a target of its own (the embedded mock: a manual clock, no bucket waits)
	// is balanced by weights-embedded.json: weights.json holds a keys-only run's times, whose
	// bucket waits an own target does not have.
	if opts.OwnTarget == nil {
		w = w.withCaps(cfg, sets[0])
	}
	shares := planShards(s.preview, cfg.Procs, w)
	dir, err := os.MkdirTemp("", "mediaspec-check-")
	if err != nil {
		return Summary{}, fmt.Errorf("conformance: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = framework.DefaultRequestTimeout
	}
	info := runInfo(s.f, cfg, opts)
	if err := r.start(cfg, opts, shares, dir, deadline, info.Mode); err != nil {
		return Summary{}, err
	}
	if err := r.awaitReady(ctx); err != nil {
		return Summary{}, err
	}
	con := newConsole(out, opts.Verbose, s.perArea)
	con.start(s.openingLine(info))
	info.Started = time.Now()
	budget := framework.NewBudget(cfg.Budget)
	r.supervise(ctx, con, budget, opts.FailFast, deadline)
	parts, notes := r.collect()
	res := mergeShards(s.f.Catalogue(), s.preview, shares, parts, notes)
	res.Run = info
	res.Run.CreditsSpent = budget.Spent()
	res.Run.Duration = time.Since(info.Started).Round(time.Millisecond)
	res.Run.Cancelled = cancelledOf(parts)
	return conclude(out, con, cfg, res, writeReports(cfg, res))
}

// checkSplitReceiver refuses a receiver address a split run cannot give every process: each
// starts a receiver of its own.
// CanSplit reports why cfg cannot run split over several processes (a receiver or file server
// address that names one listener), nil when it can.
func CanSplit(cfg Config) error {
	cfg.Procs = max(cfg.Procs, 2)
	return checkSplitReceiver(cfg)
}

func checkSplitReceiver(cfg Config) error {
	if l := cfg.ReceiverListen; l != "" && l != "off" && !strings.HasSuffix(l, ":0") {
		return &framework.SetupError{Msg: fmt.Sprintf("--receiver-listen %s is one address and --procs %d starts a receiver per process: "+
			"leave it unset (each takes a free port) or end it in :0", l, cfg.Procs)}
	}
	if cfg.ReceiverPublicURL != "" {
		return &framework.SetupError{Msg: fmt.Sprintf("--receiver-url names one receiver and --procs %d starts one per process, "+
			"each on its own port: leave it unset, or run one process", cfg.Procs)}
	}
	// The file server likewise: one address cannot serve every process's files at once.
	if l := cfg.FilesListen; l != "" && !strings.HasSuffix(l, ":0") {
		return &framework.SetupError{Msg: fmt.Sprintf("--files-listen %s is one address and --procs %d serves files from every process: "+
			"leave it unset or end it in :0, or run one process", l, cfg.Procs)}
	}
	if cfg.FilesPublicURL != "" {
		return &framework.SetupError{Msg: fmt.Sprintf("--files-url names one file server and --procs %d starts one per process: "+
			"leave it unset, or run one process", cfg.Procs)}
	}
	return nil
}

// childConfig is the configuration of process i of a split run: one process, with key set ks
// (nil: the suite makes its own keys), writing only its JSON report, into dir, for the parent to
// merge.
func childConfig(cfg Config, i int, ks *framework.KeySet, dir string) Config {
	c := cfg
	c.Procs, c.KeySetList, c.KeysFile = 1, nil, ""
	c.JUnitReport, c.HTMLReport = "", ""
	c.JSONReport = filepath.Join(dir, fmt.Sprintf("process-%d.json", i+1))
	if ks != nil {
		c.Key, c.ReadKey, c.OtherKey, c.SiblingKey = ks.Key, ks.ReadKey, ks.OtherKey, ks.SiblingKey
		// The saved workflows are one per key set, in order: process i has set i's.
		c.SavedWorkflowIDs = nil
		if i < len(cfg.SavedWorkflowIDs) {
			c.SavedWorkflowIDs = framework.IDList{cfg.SavedWorkflowIDs[i]}
		}
	}
	return c
}

// procRun is the parent's side of a split run: the processes it started and their events, which
// one goroutine per process reads into events. Only the goroutine of runProcs uses the rest.
type procRun struct {
	red    *framework.Redactor // the keys of every set among its secrets
	sets   []*framework.KeySet // process i's key set (nil: the suite makes its own keys)
	stderr io.Writer           // the processes' stderr, and their lines that are not events
	events chan procEvent
	procs  []*proc
	ended  int // processes whose end came through events
}

func newProcRun(red *framework.Redactor, sets []*framework.KeySet, stderr io.Writer) *procRun {
	for _, ks := range sets {
		if ks != nil {
			red.Add(ks.Key, ks.ReadKey, ks.OtherKey, ks.SiblingKey)
		}
	}
	return &procRun{red: red, sets: sets, stderr: stderr, events: make(chan procEvent, 64)}
}

// start starts a process per share (opts.Spawn) and sends each its setup. When one cannot be
// started, the ones already started are stopped.
func (r *procRun) start(cfg Config, opts Options, shares [][]string, dir string, deadline time.Time, mode string) error {
	for i, share := range shares {
		c := childConfig(cfg, i, r.sets[i], dir)
		setup, err := json.Marshal(setupMsg{Config: c, Proc: i, Procs: len(shares), Specs: share, RequestTimeout: opts.RequestTimeout,
			Deadline: deadline, FailFast: opts.FailFast, Version: opts.Version, Mode: mode, OwnTarget: opts.OwnTarget != nil})
		if err != nil {
			return fmt.Errorf("conformance: %w", err)
		}
		if err := r.spawn(opts.Spawn(), c.JSONReport, setup); err != nil {
			r.drain()
			return fmt.Errorf("conformance: start process %d: %w", i+1, err)
		}
	}
	return nil
}

// spawn starts cmd as the next process, which writes its JSON report to report, reads its stdout
// into events and writes setup on its stdin.
func (r *procRun) spawn(cmd *exec.Cmd, report string, setup []byte) error {
	p := &proc{report: report, cmd: cmd}
	p.cmd.Stderr = r.stderr
	var rd io.ReadCloser
	var err error
	if p.in, err = p.cmd.StdinPipe(); err == nil {
		if rd, err = p.cmd.StdoutPipe(); err == nil {
			err = p.cmd.Start()
		}
	}
	if err != nil {
		return err
	}
	r.procs = append(r.procs, p)
	go r.read(len(r.procs)-1, rd)
	_, _ = p.in.Write(append(setup, '\n'))
	return nil
}

// read sends process n's events to events as they come, then its end. A line that is no event (a
// panic's trace, say) goes to stderr, keys redacted.
func (r *procRun) read(n int, rd io.Reader) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m procMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			fmt.Fprintf(r.stderr, "process %d: %s\n", n+1, r.red.String(sc.Text()))
			continue
		}
		r.events <- procEvent{n: n, msg: &m}
	}
	r.events <- procEvent{n: n}
}

// reap records the end of process n's events and waits for the process to exit.
func (r *procRun) reap(n int) {
	r.ended++
	r.procs[n].err = r.procs[n].cmd.Wait()
}

// tellAll sends m to every process.
func (r *procRun) tellAll(m parentMsg) {
	for _, p := range r.procs {
		p.tell(m)
	}
}

// drain closes every process's stdin (a process not yet started then stops) and waits until each
// has ended; their other events are dropped.
func (r *procRun) drain() {
	for _, p := range r.procs {
		p.wmu.Lock()
		_ = p.in.Close()
		p.wmu.Unlock()
	}
	for r.ended < len(r.procs) {
		if ev := <-r.events; ev.msg == nil {
			r.reap(ev.n)
		}
	}
}

// awaitReady waits until every process has checked its keys and the target (its preflight) and is
// ready: none starts before all are. A process that fails its preflight or ends first, or ctx
// ending, stops them all, and the error says which process and why (startError).
func (r *procRun) awaitReady(ctx context.Context) error {
	for ready := 0; ready < len(r.procs); {
		select {
		case ev := <-r.events:
			switch {
			case ev.msg == nil:
				r.reap(ev.n)
				return r.stopBeforeStart(ev.n, &procMsg{Msg: fmt.Sprintf("it ended before it was ready (%v)", r.procs[ev.n].err), Code: 1})
			case ev.msg.Ev == "ready":
				ready++
			case ev.msg.Ev == "fail":
				return r.stopBeforeStart(ev.n, ev.msg)
			}
		case <-ctx.Done():
			return r.stopBeforeStart(-1, &procMsg{Msg: "stopped before any spec ran", Code: 1})
		}
	}
	return nil
}

// stopBeforeStart stops every process, because process n (-1: none of them) failed as failed
// says before the run started, and returns startError.
func (r *procRun) stopBeforeStart(n int, failed *procMsg) error {
	r.drain()
	return r.startError(n, failed)
}

// startError is the run's error when process n (-1: none of them) failed as failed says before
// the run started: it names the process and its key set, keys redacted, and is a
// *framework.SetupError when the process's exit status says its setup was wrong (2).
func (r *procRun) startError(n int, failed *procMsg) error {
	where := ""
	if n >= 0 {
		where = fmt.Sprintf("process %d of %d", n+1, len(r.procs))
		if r.sets[n] != nil {
			where += fmt.Sprintf(" (key set %d)", n+1)
		}
		where += ": "
	}
	msg := r.red.String(where + strings.TrimPrefix(failed.Msg, "conformance: "))
	if failed.Code == 2 {
		return &framework.SetupError{Msg: msg}
	}
	return errors.New("conformance: " + msg)
}

// supervise runs the ready processes until every one has ended: it tells each to go and handles
// their events (handle). ctx ending, or the deadline passing by stopGrace (each process stops
// itself at the deadline; this is for one that does not), interrupts them; a process still
// running stopGrace after that is killed.
func (r *procRun) supervise(ctx context.Context, con *console, budget *framework.Budget, failFast bool, deadline time.Time) {
	r.tellAll(parentMsg{Go: true})
	var timeout, kill <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline) + stopGrace)
		defer t.Stop()
		timeout = t.C
	}
	done := ctx.Done()
	for r.ended < len(r.procs) {
		select {
		case ev := <-r.events:
			r.handle(ev, con, budget, failFast)
		case <-done:
			done = nil
			kill = r.interrupt(kill)
		case <-timeout:
			timeout = nil
			kill = r.interrupt(kill)
		case <-kill:
			r.kill()
		}
	}
}

// handle is the parent's part of an event of a running process: its end, a spec starting or
// ending (on the console; with failFast a failure stops every process), a budget request
// (answered from budget) or credits given back.
func (r *procRun) handle(ev procEvent, con *console, budget *framework.Budget, failFast bool) {
	if ev.msg == nil {
		r.reap(ev.n)
		return
	}
	switch m := ev.msg; m.Ev {
	case "will":
		con.willRun(*m.Spec)
	case "did":
		con.didRun(*m.Spec)
		if failFast && (m.Spec.State == "FAIL" || m.Spec.State == "BLKD") {
			// --fail-fast: the first failure in any process ends the run; the others skip what
			// they have not begun.
			r.tellAll(parentMsg{Stop: true})
		}
	case "take":
		ans := parentMsg{ID: m.ID}
		if err := budget.Take(m.N); err != nil {
			ans.Err = err.Error()
		}
		r.procs[ev.n].tell(ans)
	case "give":
		budget.Give(m.N)
	}
}

// interrupt sends SIGINT to every process still running and not yet told (one that cannot take it
// is killed), and returns kill, or when it is nil a channel that fires stopGrace from now.
func (r *procRun) interrupt(kill <-chan time.Time) <-chan time.Time {
	for _, p := range r.procs {
		if !p.sigint && p.cmd.ProcessState == nil {
			p.sigint = true
			if p.cmd.Process.Signal(os.Interrupt) != nil {
				_ = p.cmd.Process.Kill()
			}
		}
	}
	if kill == nil {
		kill = time.After(stopGrace)
	}
	return kill
}

// kill kills every process still running.
func (r *procRun) kill() {
	for _, p := range r.procs {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	}
}

// collect reads the processes' JSON reports: parts[i] is process i's (nil where it wrote none,
// and a note says so).
func (r *procRun) collect() (parts []*report.Results, notes []string) {
	parts = make([]*report.Results, len(r.procs))
	for i, p := range r.procs {
		data, err := os.ReadFile(p.report)
		var res report.Results
		if err == nil {
			res, err = report.ReadResults(data)
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("process %d of %d wrote no report (it ended: %v)", i+1, len(r.procs), p.err))
			continue
		}
		parts[i] = &res
	}
	return parts, notes
}

// cancelledOf is why the processes' runs were cancelled (Ctrl-C, --timeout), each reason once, in
// the processes' order, joined by "; "; "" when none was.
func cancelledOf(parts []*report.Results) string {
	var cancelled []string
	for _, part := range parts {
		if part != nil && part.Run.Cancelled != "" && !slices.Contains(cancelled, part.Run.Cancelled) {
			cancelled = append(cancelled, part.Run.Cancelled)
		}
	}
	return strings.Join(cancelled, "; ")
}

// mergeShards makes one run's results of the processes' (parts[i] ran shares[i]; nil: it wrote
// none), in the order of the preview: each selected spec from the process that ran it, each spec
// the label filter left out from the first process that reported, and every verdict and count
// computed again over them all. notes are failures of the run itself (a process without a report).
func mergeShards(cat *spec.Catalogue, preview types.Report, shares [][]string, parts []*report.Results, notes []string) report.Results {
	res := report.Results{Suite: SuiteName}
	res.Specs = mergeSpecs(cat, preview, shares, parts)
	res.SuiteFailures = append(suiteFailuresOf(parts), notes...)
	for _, p := range parts {
		if p != nil {
			res.Advisories = report.MergeAdvisories(res.Advisories, p.Advisories)
		}
	}
	res.Rules = report.Verdicts(framework.Rules(cat), res.Specs)
	res.Tally()
	res.Succeeded = len(res.SuiteFailures) == 0 && res.SpecCounts.Failed+res.SpecCounts.Blocked == 0 && res.SpecCounts.Passed > 0
	return res
}

// mergeSpecs are the results of the preview's specs, in its order (see mergeShards): a spec the
// process that owned it did not report is skipped, and says so.
func mergeSpecs(cat *spec.Catalogue, preview types.Report, shares [][]string, parts []*report.Results) []report.SpecResult {
	owner := map[string]int{}
	for i, share := range shares {
		for _, t := range share {
			owner[t] = i
		}
	}
	first := slices.IndexFunc(parts, func(p *report.Results) bool { return p != nil })
	by := specsByText(parts)
	templates, _ := framework.SpecResultsFromReport(cat, preview)
	var specs []report.SpecResult
	seen := map[string]int{}
	for _, t := range templates {
		n := seen[t.Text]
		seen[t.Text]++
		src, selected := owner[t.Text]
		if !selected {
			src = first
		}
		if src >= 0 && n < len(by[src][t.Text]) {
			specs = append(specs, by[src][t.Text][n])
			continue
		}
		t.State, t.Duration = report.NotSelected, 0
		t.Reason = report.NotSelectedReason
		if selected {
			t.State = report.Skipped
			t.Reason = fmt.Sprintf("not run: process %d of %d ended without reporting it", src+1, len(shares))
		}
		specs = append(specs, t)
	}
	return specs
}

// specsByText indexes the processes' results: by[i][text] are process i's results of the specs
// with that text, in its order (none for a process without a report).
func specsByText(parts []*report.Results) []map[string][]report.SpecResult {
	by := make([]map[string][]report.SpecResult, len(parts))
	for i, p := range parts {
		by[i] = map[string][]report.SpecResult{}
		if p == nil {
			continue
		}
		for _, sr := range p.Specs {
			by[i][sr.Text] = append(by[i][sr.Text], sr)
		}
	}
	return by
}

// suiteFailuresOf are the processes' suite failures, each once, in the processes' order.
func suiteFailuresOf(parts []*report.Results) []string {
	var failures []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		for _, f := range p.SuiteFailures {
			if !slices.Contains(failures, f) {
				failures = append(failures, f)
			}
		}
	}
	return failures
}
