package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega" //nolint:revive
)

// TranscriptEntry is the name of the report entry that carries a failed spec's transcript.
const TranscriptEntry = "transcript"

// Decl is a spec declaration under construction: the rules it checks and what it needs. Make one
// with Framework.Rule; finish it with It.
type Decl struct {
	f     *Framework
	rules []string
	needs []Need
	// strict is the reason of a spec judged only with --strict (StrictOnly), nil for any other.
	strict *SkipReason
	// controlWhy says why the spec needs the control API (ControlBecause), "" when not said.
	controlWhy string
	// wait is the target-clock time a RealTime spec waits out (WaitsOut), 0 when not said.
	wait time.Duration
}

// WaitsOut says how much of the target's clock the spec waits out when it needs RealTime and the
// run has no control API to advance it (a webhook retry's five minutes, a link's 600 s); without
// it a RealTime spec is taken to wait a rate bucket's minute and the calls that fill it. The first
// line of a --real-time run adds these up into the wall time it announces.
func (d *Decl) WaitsOut(wait time.Duration) *Decl {
	d.wait = wait
	return d
}

// realTimeWaits holds the WaitsOut of each spec, by the code location of its declaration.
var realTimeWaits sync.Map // "file:line" -> time.Duration

// DefaultRealTimeWait is about how long a RealTime spec without WaitsOut takes on a real clock: a
// rate bucket's minute, and the calls that fill it (Spec.BucketClient).
const DefaultRealTimeWait = 70 * time.Second

// RealTimeWait is the target-clock time the spec declared at loc waits out (WaitsOut), or
// DefaultRealTimeWait.
func RealTimeWait(loc types.CodeLocation) time.Duration {
	if w, ok := realTimeWaits.Load(fmt.Sprintf("%s:%d", loc.FileName, loc.LineNumber)); ok {
		return w.(time.Duration)
	}
	return DefaultRealTimeWait
}

// ControlBecause says why the spec needs the control API (an operation only the app or control
// can do): a run without it skips the spec with that said in the reason, so a report shows what
// keeps the spec at the control tier.
func (d *Decl) ControlBecause(why string) *Decl {
	d.controlWhy = why
	return d.Needs(Control)
}

// Rule starts a spec declaration that checks the given rules. It panics — at tree construction,
// before any spec runs — when an id is not in the catalogue or names a rule marked unobservable, so
// a typo cannot silently cover nothing.
func (f *Framework) Rule(ids ...string) *Decl {
	if err := f.CheckRules(ids); err != nil {
		panic(err.Error())
	}
	d := &Decl{f: f, rules: append([]string(nil), ids...)}
	for _, id := range ids {
		r, _ := f.catalogue.Get(id)
		for _, n := range r.Needs {
			d.needs = appendNeed(d.needs, Need(n))
		}
	}
	return d
}

// CheckRules reports the first id that is missing from the catalogue or unobservable, and refuses
// an empty list.
func (f *Framework) CheckRules(ids []string) error {
	if len(ids) == 0 {
		return errors.New("conformance: a spec must name at least one rule id")
	}
	for _, id := range ids {
		r, ok := f.catalogue.Get(id)
		if !ok {
			return fmt.Errorf("conformance: rule %q is not in spec/rules.yaml: a spec cannot cover a rule that does not exist", id)
		}
		if !r.Observable() {
			return fmt.Errorf("conformance: rule %s is marked unobservable (%s): no spec can check it", id, r.Unobservable)
		}
	}
	return nil
}

// Needs adds needs beyond those the rules declare. It panics on a need the suite does not know.
func (d *Decl) Needs(needs ...Need) *Decl {
	for _, n := range needs {
		known := false
		for _, k := range AllNeeds {
			if n == k {
				known = true
			}
		}
		if !known {
			panic(fmt.Sprintf("conformance: unknown need %q", n))
		}
		d.needs = appendNeed(d.needs, n)
	}
	return d
}

func appendNeed(list []Need, n Need) []Need {
	for _, x := range list {
		if x == n {
			return list
		}
	}
	return append(list, n)
}

// StrictOnly declares a spec that asserts only the reference's own choice for rule (rules.yaml
// basis reference, judged strict-only), where the text leaves open what the phrase open names, as
// Spec.StrictOnly does in a body. On a run that is not strict the spec skips as strict-only before
// its needs are looked at: no tier a target offers would make it judge there, so a need the run
// lacks (the control API, say) is not what keeps it from running, and the text rules its calls
// touch are not counted as left unjudged by it (report.Verdicts).
func (d *Decl) StrictOnly(rule, open string) *Decl {
	r := strictOnlyReason(rule, open)
	d.strict = &r
	return d
}

// Labels are the Ginkgo labels the declaration gives its spec: the rule ids, then the needs.
func (d *Decl) Labels() []string {
	out := append([]string(nil), d.rules...)
	needs := make([]string, 0, len(d.needs))
	for _, n := range d.needs {
		needs = append(needs, string(n))
	}
	sort.Strings(needs)
	return append(out, needs...)
}

// It declares the spec. Before body runs, an unmet need skips the spec with the reason. body gets
// the spec's context (cancelled on timeout or interrupt) and its handle. Extra Ginkgo decorators
// (SpecTimeout, Serial, ...) may follow.
func (d *Decl) It(text string, body func(ctx context.Context, s *Spec), decorators ...any) bool {
	// The spec's location is its caller's line in the spec file, not this line.
	loc := types.NewCodeLocation(1)
	if d.wait > 0 {
		realTimeWaits.Store(fmt.Sprintf("%s:%d", loc.FileName, loc.LineNumber), d.wait)
	}
	args := []any{loc, Label(d.Labels()...)}
	args = append(args, decorators...)
	needs := append([]Need(nil), d.needs...)
	f := d.f
	rules := append([]string(nil), d.rules...)
	strict, controlWhy := d.strict, d.controlWhy
	args = append(args, func(ctx SpecContext) {
		if unjudged := f.unjudged(rules); len(unjudged) > 0 {
			AddReportEntry(UnjudgedRulesEntry, strings.Join(unjudged, " "), ReportEntryVisibilityNever)
		}
		if strict != nil && !f.cfg.Strict {
			SkipFor(*strict)
		}
		if reason, ok := f.Capabilities().Lack(needs); ok {
			if controlWhy != "" && reason.Need == Control.Report() {
				reason = Unsupported(Control, "needs the control API ("+controlWhy+"): no --control-url given")
			}
			SkipFor(reason)
		}
		if reason := f.Unresponsive(); reason != "" {
			SkipFor(NotRun(reason))
		}
		body(ctx, &Spec{f: f})
	})
	return It(text, args...)
}

// BeforeAll registers a Ginkgo BeforeAll for an Ordered container whose specs share what body sets
// up. When needs are unmet it does nothing: the container's specs, declared with the same needs,
// then skip with the reason instead of failing on a setup that could not run.
func (f *Framework) BeforeAll(needs []Need, body func(ctx context.Context, s *Spec)) bool {
	needs = append([]Need(nil), needs...)
	return BeforeAll(func(ctx SpecContext) {
		if f.Capabilities().Unmet(needs) != "" {
			return
		}
		body(ctx, &Spec{f: f})
	})
}

// Spec is the handle a running spec uses: its clients, the control API and the budget. Its
// methods fail or skip the spec through Ginkgo.
//
// When the run made its own workspaces through control, each spec gets a workspace and keys of its
// own (made on first use), so one spec's calls never fill another spec's rate-limit buckets, no
// other spec's job settles into its balance (on a running clock jobs end by themselves), and every
// count a spec makes is exact. Otherwise specs share the configured keys, and a shared-key call answered
// 429 rate_limited with retry_after_seconds is retried after that wait (scaled by the time scale).
type Spec struct {
	f                 *Framework
	main, read, other *Client
	// workspaceID is the workspace the spec made last (NewWorkspace), which QueueFault scopes
	// its faults to; "" when it made none.
	workspaceID string
	// home is the workspace of Client, FreshClient and ReadClient when the run made its own main
	// workspace: one made for the spec on first use; "" until then, or without control.
	home string
}

// homeWorkspace returns the workspace the spec's main clients use: with control and a main
// workspace the run made, one of the spec's own (made now, deleted when the spec ends), else the
// run's main workspace ("" when the run was given keys).
func (s *Spec) homeWorkspace(e environment) string {
	GinkgoHelper()
	ctl := s.f.control()
	if ctl == nil || e.workspaceID == "" {
		return e.workspaceID
	}
	if s.home == "" {
		ws, err := ctl.CreateWorkspace(context.Background(), WorkspaceOptions{Name: "conformance " + CurrentSpecReport().LeafNodeText})
		Expect(err).NotTo(HaveOccurred(), "make the spec's workspace")
		s.home = ws.ID
		DeferCleanup(func(ctx SpecContext) { deleteWorkspace(ctx, ctl, ws.ID) })
	}
	return s.home
}

// Client returns a client with a read+generate key of the main workspace, sent as a bearer token.
func (s *Spec) Client() *Client {
	GinkgoHelper()
	if s.main == nil {
		s.main = s.key(func(e environment) (string, string) { return s.homeWorkspace(e), e.key }, []string{"read", "generate"})
	}
	return s.main
}

// FreshClient returns a client with a new read+generate key of the main workspace (its buckets
// empty) when the run made its own workspace, else the shared client.
func (s *Spec) FreshClient() *Client {
	GinkgoHelper()
	return s.key(func(e environment) (string, string) { return s.homeWorkspace(e), e.key }, []string{"read", "generate"})
}

// SpreadClient returns a read+generate client for a spec that needs some workspace, not the main
// one in particular, and spends many calls of one bucket (uploads). Without control, with a second
// workspace's key, successive calls alternate between the main key and the other key, so that such
// specs spread over both keys' buckets instead of waiting out one; otherwise it is Client.
func (s *Spec) SpreadClient() *Client {
	GinkgoHelper()
	caps := s.f.Capabilities()
	if caps.Control || !caps.SecondWorkspace || s.f.spread.Add(1)%2 == 1 {
		return s.Client()
	}
	return s.OtherClient()
}

// ReadClient returns a client with a read-only key of the main workspace. The spec must need
// ReadKey.
func (s *Spec) ReadClient() *Client {
	GinkgoHelper()
	if s.read == nil {
		s.read = s.key(func(e environment) (string, string) { return s.homeWorkspace(e), e.readKey }, []string{"read"})
	}
	return s.read
}

// OtherClient returns a client with a read+generate key of the second workspace. The spec must
// need SecondWorkspace.
func (s *Spec) OtherClient() *Client {
	GinkgoHelper()
	if s.other == nil {
		s.other = s.key(func(e environment) (string, string) { return e.otherWorkspaceID, e.otherKey }, []string{"read", "generate"})
	}
	return s.other
}

// key makes a per-spec key in the workspace pick names, or falls back to the shared key.
func (s *Spec) key(pick func(environment) (workspaceID, shared string), scopes []string) *Client {
	GinkgoHelper()
	ws, shared := pick(s.f.envCopy())
	if ws != "" {
		if ctl := s.f.control(); ctl != nil {
			k, err := ctl.CreateKey(context.Background(), ws, KeyOptions{Name: "conformance spec", Scopes: scopes})
			Expect(err).NotTo(HaveOccurred(), "make a key for the spec")
			return s.f.client(k.Key)
		}
	}
	Expect(shared).NotTo(BeEmpty(), "the spec uses a key the run does not have; declare the need (ReadKey, SecondWorkspace)")
	c := s.f.client(shared)
	c.shared = true
	return c
}

// Anonymous returns a client that sends no key.
func (s *Spec) Anonymous() *Client { return &Client{f: s.f, scheme: NoAuth} }

// WithKey returns a client that sends key (deliberately wrong, unknown or malformed) as a bearer
// token. Transcripts redact it like any key when it has the sk_live_ form; a malformed key is shown
// as sent, since it is no secret.
func (s *Spec) WithKey(key string) *Client {
	return s.f.client(key)
}

// Control returns the control client. The spec must need Control.
func (s *Spec) Control() *ControlAPI {
	GinkgoHelper()
	c := s.f.control()
	Expect(c).NotTo(BeNil(), "the spec uses the control API without declaring Needs(Control)")
	return c
}

// Spend reserves n credits from the run's budget, skipping the spec with the reason when the
// budget would be exceeded.
func (s *Spec) Spend(n int) {
	if err := s.f.budget.Take(n); err != nil {
		SkipFor(OverBudget(err.Error()))
	}
}

// TimeScale is how many times faster than real time the target's clock runs, for waits in real
// time: the control API's report on a running clock, else the configured --time-scale (on a manual
// clock a spec advances time instead of waiting for it).
func (s *Spec) TimeScale() float64 { return s.f.wallScale() }

// Slow reports whether the run takes slow specs (--slow).
func (s *Spec) Slow() bool { return s.f.Capabilities().Slow }

// NewWorkspace makes a fresh workspace through control, deleted when the spec ends. It fails the
// spec when control refuses.
func (s *Spec) NewWorkspace(ctx context.Context, o WorkspaceOptions) *TestWorkspace {
	GinkgoHelper()
	ctl := s.Control()
	if o.Name == "" {
		o.Name = "conformance " + CurrentSpecReport().LeafNodeText
	}
	ws, err := ctl.CreateWorkspace(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	s.workspaceID = ws.ID
	DeferCleanup(func(ctx SpecContext) { deleteWorkspace(ctx, ctl, ws.ID) })
	return &TestWorkspace{s: s, ctl: ctl, Workspace: ws}
}

// TestWorkspace is a workspace a spec made.
type TestWorkspace struct {
	Workspace // its id and plan
	s         *Spec
	ctl       *ControlAPI
}

// NewKey makes a key in the workspace and returns a client for it and the key's id.
func (w *TestWorkspace) NewKey(ctx context.Context, o KeyOptions) (*Client, Key) {
	GinkgoHelper()
	if o.Name == "" {
		o.Name = "conformance"
	}
	k, err := w.ctl.CreateKey(ctx, w.ID, o)
	Expect(err).NotTo(HaveOccurred())
	return w.s.f.client(k.Key), k
}

// Delete deletes the workspace through control.
func (w *TestWorkspace) Delete(ctx context.Context) {
	GinkgoHelper()
	Expect(w.ctl.DeleteWorkspace(ctx, w.ID)).To(Succeed())
}

func (f *Framework) envCopy() environment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.env
}

// RegisterSuiteNodes adds the suite-level Ginkgo nodes: a BeforeSuite that runs Setup, an
// AfterSuite that runs Teardown, per-spec transcript handling (reset before each spec; attached as
// a report entry to a failed spec), and a ReportAfterSuite that hands the final report to
// onReport. Call it once, before RunSpecs.
func (f *Framework) RegisterSuiteNodes(onReport func(types.Report)) {
	BeforeSuite(func(ctx SpecContext) {
		if err := f.Setup(ctx); err != nil {
			Fail("the run's setup failed: " + err.Error())
		}
	})
	AfterSuite(func(ctx SpecContext) {
		Expect(f.Teardown(ctx)).To(Succeed(), "delete the run's workspaces")
	})
	ReportBeforeEach(func(r SpecReport) { f.transcript.Reset(); f.takeStep(); f.adv.setSpec(r.FullText()) })
	AfterEach(f.settleJobs)   // jobs.go
	AfterEach(f.afterFailure) // steps.go
	ReportAfterSuite("conformance rule report", func(r Report) { onReport(r) })
}

func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %w", err)
	}
	if m == nil {
		return nil, errors.New("the body is null, want a JSON object")
	}
	return m, nil
}

// deleteWorkspace deletes a workspace a spec made; the spec may have deleted it already, and a 404
// or 410 then is fine.
func deleteWorkspace(ctx context.Context, ctl *ControlAPI, id string) {
	GinkgoHelper()
	r, err := ctl.Call(ctx, "DELETE", "/workspaces/"+id, nil)
	if err == nil && r.Status != 200 && r.Status != 404 && r.Status != 410 {
		Fail("control DELETE /workspaces/{id} answered " + fmt.Sprint(r.Status) + r.Describe())
	}
}

// Lacks ends the spec when the target does not hold a state the spec needs (no unpriced capability,
// no coming_soon preset, ...): against the reference mock (Config.Reference), which holds every
// such state, the spec fails, since the state went missing there; against any other target it
// skips with "unsupported: " and the reason, which should name what is missing and so which rules
// are left unverified.
func (s *Spec) Lacks(format string, args ...any) {
	GinkgoHelper()
	s.f.lacks(fmt.Sprintf(format, args...))
}

// Lacks is Spec.Lacks for a helper that holds a client of the spec but not the spec: the target
// the client calls lacks a state the spec needs (fails against the reference mock, skips
// elsewhere).
func (c *Client) Lacks(format string, args ...any) {
	GinkgoHelper()
	c.f.lacks(fmt.Sprintf(format, args...))
}

func (f *Framework) lacks(reason string) {
	GinkgoHelper()
	if f.cfg.Reference {
		Fail("the reference mock lacks a state this spec needs: " + reason)
	}
	SkipFor(LacksState(reason))
}
