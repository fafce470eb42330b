package admission

import (
	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
)

// The three check orders, side by side. Each is a list of named steps; the first failing step
// alone answers. order_test.go holds them against spec/rules.yaml.

// estimateOrder is the order of POST /estimates (rules EST-*): nothing is held, charged or started
// and no content check runs (rule EST-011). A capability nobody can run is refused before its
// config is read; a requires_plan capability checks the config before the plan (rule CHECK-010).
var estimateOrder = []Step[*Estimation]{
	{Name: "capability availability", Rules: []string{"EST-026", "CAP-025", "CAP-029", "TALK-011"}, Check: func(e *Estimation) (err error) {
		e.cap, err = e.d.Catalog.RunnableFor(e.Viewer, e.Request.CapabilityID)
		return err
	}},
	{Name: "deprecated names", Rules: []string{"EST-015"}, Own: true, Check: func(e *Estimation) (err error) {
		e.Request.Config, err = e.d.Catalog.Normalize(e.cap, e.Request.Config)
		return err
	}},
	{Name: "config validity", Rules: []string{"EST-007", "EST-016", "CHECK-010"}, Check: func(e *Estimation) error {
		return e.d.Catalog.CheckConfig(e.cap, e.Request)
	}},
	{Name: "plan", Rules: []string{"CAP-028", "CHECK-010"}, Check: func(e *Estimation) error {
		return catalog.PlanAllows(e.cap, e.Viewer)
	}},
	{Name: "upload readiness and ownership", Rules: []string{"EST-019", "EST-025", "SUBMIT-036"}, Check: func(e *Estimation) (err error) {
		e.res, err = e.d.Catalog.CheckResources(e.Viewer, e.Request)
		return err
	}},
	{Name: "not priced", Rules: []string{"EST-020"}, Check: func(e *Estimation) error { return NotPriced(e.cap) }},
	{Name: "pricing", Rules: []string{"EST-021"}, Check: func(e *Estimation) error {
		return e.d.PricingAvailable(e.Viewer.WorkspaceID, e.cap.ID)
	}},
	{Name: "price", Own: true, Check: func(e *Estimation) (err error) {
		e.quote, err = catalog.Price(e.cap, e.Request.Config, 0, e.res)
		return err
	}},
}

// submitOrder is the submit check order of interface spec "Errors" (rule CHECK-001), then the
// mock's own provider step and the price itself. Rate limit and scope are the HTTP adapter's.
var submitOrder = []Step[*Submission]{
	{Name: "rate limit", Rules: []string{"CHECK-002"}, Adapter: true},
	{Name: "scope", Rules: []string{"CHECK-003"}, Adapter: true},
	{Name: "max_credits", Rules: []string{"CHECK-007", "CHECK-019", "SUBMIT-014"}, Check: func(s *Submission) error {
		if !s.A.Priced {
			return nil // no computable price: the price checks pass through (CHECK-020, CHECK-021)
		}
		return MaxCredits(s.MaxCredits, s.A.Quote.MaxCreditsNeeded, 0)
	}},
	{Name: "spend caps, credits", Rules: []string{"CHECK-008", "CHECK-009"}, Check: func(s *Submission) error {
		if !s.A.Priced {
			return nil
		}
		return Hold(s.Wallet, s.A.Quote.MaxCreditsNeeded, s.Spender)
	}},
	{Name: "config validity", Rules: []string{"CHECK-005", "CHECK-010", "CHECK-020", "CHECK-021", "VAR-014"}, Check: (*Submission).configValidity},
	{Name: "capability availability and plan", Rules: []string{"CHECK-011", "PRESET-020", "PRESET-021"}, Check: (*Submission).availability},
	{Name: "moderation", Rules: []string{"CHECK-012", "SUBMIT-032", "SUBMIT-034"}, Check: func(s *Submission) error {
		if err := s.d.Moderation(s.WorkspaceID, s.cap(), s.Request.Config); err != nil {
			return err
		}
		if apierr.CodeOf(s.A.ResourcesErr) == apierr.CodeModerationBlocked {
			return s.A.ResourcesErr // a named upload the content check flagged
		}
		return nil
	}},
	{Name: "upload readiness and ownership", Rules: []string{"CHECK-013", "PRESET-019", "SUBMIT-036"}, Check: func(s *Submission) error {
		return s.A.ResourcesErr
	}},
	{Name: "in-flight", Rules: []string{"CHECK-014", "SUBMIT-018", "SUBMIT-023", "SUBMIT-024"}, Check: func(s *Submission) (err error) {
		s.Replay, err = s.InFlight()
		return err
	}},
	{Name: "blocked request", Rules: []string{"CHECK-015"}, Check: func(s *Submission) error { return s.Blocked() }},
	{Name: "estimate change", Rules: []string{"CHECK-016", "SUBMIT-033"}, Check: func(s *Submission) error {
		return s.d.EstimateChanged(s.WorkspaceID, s.cap().ID)
	}},
	{Name: "not priced", Rules: []string{"CHECK-017"}, Check: func(s *Submission) error { return NotPriced(s.cap()) }},
	{Name: "pricing", Rules: []string{"CHECK-017"}, Check: func(s *Submission) error {
		return s.d.PricingAvailable(s.WorkspaceID, s.cap().ID)
	}},
	{Name: "provider", Own: true, Check: func(s *Submission) error {
		return s.d.ProviderAvailable(s.WorkspaceID, s.cap().ID)
	}},
	{Name: "price", Own: true, Check: func(s *Submission) error {
		if !s.A.Priced {
			return s.A.PriceErr
		}
		return nil
	}},
}

// invokeOrder is the order of a workflow invoke (rules WF-*): nothing is held at invoke and the
// key's one-job slot is not taken. The steps step checks every node in node order (its
// capability, its config resolved from the inputs, the resources the inputs name, the talking
// actor's voice length, not priced, the price); a node's plan and content check are deferred
// until after the credit checks, and the first node refusing them answers.
var invokeOrder = []Step[*Invocation]{
	{Name: "inputs", Rules: []string{"WF-008"}, Own: true, Check: func(c *Invocation) error { return c.Inputs() }},
	{Name: "steps", Own: true, Check: func(c *Invocation) (err error) {
		c.Steps, c.deferred, err = c.Resolve()
		for _, q := range c.Steps {
			c.Estimated += q.Credits
			c.Required += q.Hold
		}
		return err
	}},
	{Name: "max_credits", Rules: []string{"WF-009"}, Check: func(c *Invocation) error {
		return MaxCredits(c.MaxCredits, c.Required, len(c.Steps))
	}},
	{Name: "spend caps, credits", Own: true, Check: func(c *Invocation) error {
		c.Workspace.Lock()
		defer c.Workspace.Unlock()
		return Hold(c.Workspace.Wallet(), c.Required, c.Spender)
	}},
	{Name: "capability availability and plan, moderation", Own: true, Check: func(c *Invocation) error { return c.deferred }},
}

// Estimation is one estimate being checked.
type Estimation struct {
	d       Deps
	Viewer  catalog.Viewer
	Request catalog.Request

	cap   *fixtures.Capability
	res   catalog.Resources
	quote catalog.Quote
}

// Estimate answers POST /estimates for the viewer after estimateOrder.
func (d Deps) Estimate(v catalog.Viewer, req catalog.Request) (catalog.Estimate, error) {
	e := &Estimation{d: d, Viewer: v, Request: req}
	if err := run(estimateOrder, e, nil); err != nil {
		return catalog.Estimate{}, err
	}
	return catalog.NewEstimate(e.cap, e.quote), nil
}

// Submission is one submit being checked: the request, what the catalog says about it (A, from
// Assess, gathered before any lock is taken), the wallet, and the jobs store's answers for the
// in-flight and blocked steps.
type Submission struct {
	d           Deps
	WorkspaceID string
	// Request is the request with its config normalized (A.NormalConfig).
	Request    catalog.Request
	MaxCredits int64
	Spender    ledger.Spender
	// BodyKeyErr is the refusal of a body key that is not a submit field (the HTTP adapter's
	// strict body), answered first at config validity (rule CHECK-005).
	BodyKeyErr error
	// Approved is the generation named by approved_voice_generation_id, when known.
	Approved *catalog.VoiceGeneration
	A        Assessment
	// Wallet is the workspace's; the caller holds the workspace lock while Submit runs.
	Wallet *ledger.Wallet
	// InFlight decides the in-flight step (InFlightOwn, InFlightIdentical, RenderConcurrency);
	// replay true ends the order without a refusal (the key's identical request runs). Blocked
	// decides the blocked request step (RequestBlocked). Both are the jobs store's, called with
	// its lock held.
	InFlight func() (replay bool, err error)
	Blocked  func() error

	// Decided by the steps: the voice a talking actor speaks, and whether the request is a
	// replay.
	Voice  string
	Replay bool
}

func (s *Submission) cap() *fixtures.Capability { return s.A.Cap }

// Submit runs submitOrder on s. nil with s.Replay set answers the key's running identical
// request; nil otherwise means s.A.Quote may be accepted.
func (d Deps) Submit(s *Submission) error {
	s.d = d
	return run(submitOrder, s, func(s *Submission) bool { return s.Replay })
}

// configValidity: a body key that is not a submit field, the capability exists, the config schema,
// variants, fan-out size, what the request names that is malformed, and the talking actor rules.
func (s *Submission) configValidity() error {
	cp := s.cap()
	switch {
	case s.BodyKeyErr != nil:
		return s.BodyKeyErr
	case cp == nil:
		return s.A.Unavailable
	case s.A.Config != nil:
		return s.A.Config
	case s.A.Variants != nil:
		return s.A.Variants
	}
	if err := FanOut(cp, s.Request.Config); err != nil {
		return err
	}
	if apierr.CodeOf(s.A.ResourcesErr) == apierr.CodeInvalidConfig {
		return s.A.ResourcesErr
	}
	voice, err := TalkingActor(s.d.Catalog, cp, s.Request, s.A.Resources, s.Approved)
	s.Voice = voice
	return err
}

// availability: the plan, and a preset's template being live (a template that is not this
// preset's is reported at the ownership step).
func (s *Submission) availability() error {
	if err := catalog.PlanAllows(s.cap(), s.A.Viewer); err != nil {
		return err
	}
	if err := Template(s.d.Catalog, s.cap(), s.Request.Config); err != nil {
		if apierr.CodeOf(err) == apierr.CodeCapabilityUnavailable {
			return err
		}
		if s.A.ResourcesErr == nil {
			s.A.ResourcesErr = err // not_found: reported at the ownership step
		}
	}
	return nil
}

// StepQuote is the price of one workflow step at invoke.
type StepQuote struct {
	NodeID string
	// Credits is the estimated price, Hold its padded hold (the sum of ceil(price x 1.1) over
	// the step's generations).
	Credits int64
	Hold    int64
}

// Workspace is the locked wallet an invoke's credit checks read.
type Workspace interface {
	Lock()
	Unlock()
	Wallet() *ledger.Wallet
}

// Invocation is one workflow invoke being checked. Inputs and Resolve are package workflows'
// (the inputs_schema, the graph resolution); the rest is checked here.
type Invocation struct {
	MaxCredits int64
	Spender    ledger.Spender
	Workspace  Workspace
	// Inputs checks the run inputs against the workflow's inputs_schema.
	Inputs func() error
	// Resolve checks and prices every step in node order; deferred is the first step's plan or
	// content refusal, answered after the credit checks.
	Resolve func() (steps []StepQuote, deferred error, err error)

	// Worked out by the steps.
	Steps               []StepQuote
	Estimated, Required int64
	deferred            error
}

// Invoke runs invokeOrder on c.
func Invoke(c *Invocation) error { return run(invokeOrder, c, nil) }
