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
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mediaspec/mediaspec/conformance/framework"
	"github.com/mediaspec/mediaspec/conformance/specs"
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

// Load builds a Config from the YAML file (--config or MEDIASPEC_CONFIG), then the environment
// (getenv; os.Getenv when nil), then the flags set on the command line (flags may be nil).
func Load(flags *Flags, getenv func(string) string) (Config, error) {
	return framework.Load(flags, getenv)
}

// Summary is the outcome of a run: spec and rule tallies and every verdict.
type Summary struct {
	Specs   framework.Counts // Passed, Failed, Skipped
	Rules   framework.Counts // Passed, Failed, Skipped, NotCovered, Unobservable
	Results framework.Results
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
	results *framework.Results
	repErr  error
}

// NewSuite loads the documents, builds the framework and registers the suite nodes and every spec.
// It makes no network call. It fails when a Suite was already made in this process.
func NewSuite(ctx context.Context, cfg Config) (*Suite, error) {
	if _, err := types.ParseLabelFilter(cfg.LabelFilter); err != nil {
		return nil, fmt.Errorf("conformance: label filter: %w", err)
	}
	f, err := framework.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if !claimed.CompareAndSwap(false, true) {
		return nil, errors.New("conformance: the suite can run once per process (Ginkgo keeps one spec tree)")
	}
	s := &Suite{f: f, cfg: cfg}
	gomega.RegisterFailHandler(ginkgo.Fail)
	f.RegisterSuiteNodes(s.onReport)
	specs.Register(f)
	return s, nil
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
	return sc, rc
}

// RunSpecs runs the specs with Ginkgo, reporting failure to t. Call it once.
func (s *Suite) RunSpecs(t ginkgo.GinkgoTestingT, sc types.SuiteConfig, rc types.ReporterConfig) bool {
	return ginkgo.RunSpecs(t, SuiteName, sc, rc)
}

// onReport runs in Ginkgo's ReportAfterSuite: it computes the verdicts and writes the reports.
func (s *Suite) onReport(r types.Report) {
	r = s.f.Redactor().Report(r)
	res := framework.BuildResults(s.f.Catalogue(), r)
	var errs []error
	if p := s.cfg.JUnitReport; p != "" {
		if err := reporters.GenerateJUnitReport(r, p); err != nil {
			errs = append(errs, fmt.Errorf("JUnit report: %w", err))
		}
	}
	if p := s.cfg.JSONReport; p != "" {
		errs = append(errs, writeFile(p, func(w io.Writer) error { return framework.WriteJSON(w, res) }))
	}
	if p := s.cfg.HTMLReport; p != "" {
		errs = append(errs, writeFile(p, func(w io.Writer) error { return framework.WriteHTML(w, res) }))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = &res
	s.repErr = errors.Join(errs...)
}

func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		_ = fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
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
	fmt.Fprintln(w, res.RuleLine())
	fmt.Fprintln(w, res.SpecLine())
	sum := Summary{Specs: res.SpecCounts, Rules: res.RuleCounts, Results: *res}
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

// Run runs the whole suite against cfg's target and writes Ginkgo's succinct console progress to
// stdout (stderr for warnings), keys redacted, followed by the rule tally and the spec tally as the
// last two lines.
// It returns an error when any spec failed, a suite node failed, no spec executed, or a report could
// not be written. It may be called once per process.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) (Summary, error) {
	s, err := NewSuite(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = s.Configure(ctx, sc, rc)
	rc.Succinct, rc.NoColor = true, true
	out := &lineWriter{w: stdout, atStart: true}
	red := s.f.Redactor()
	prevOut, prevErr := formatter.ColorableStdOut, formatter.ColorableStdErr
	formatter.ColorableStdOut, formatter.ColorableStdErr = red.Writer(out), red.Writer(stderr)
	defer func() { formatter.ColorableStdOut, formatter.ColorableStdErr = prevOut, prevErr }()
	t := &testingT{}
	s.RunSpecs(t, sc, rc)
	if !out.atStart {
		fmt.Fprintln(out)
	}
	sum, err := s.Finish(out)
	if err == nil && t.failed.Load() {
		err = errors.New("conformance: the suite failed")
	}
	return sum, err
}

// lineWriter passes writes on and remembers whether the output ends a line, so the tallies start
// on a line of their own after Ginkgo's succinct progress.
type lineWriter struct {
	w       io.Writer
	atStart bool
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.atStart = p[n-1] == '\n'
	}
	return n, err
}
