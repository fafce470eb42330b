// Package workflows is the mock's workflow engine: the workflow templates of
// the fixtures, workflows saved per workspace (wf_), and workflow runs (wfr_)
// whose steps are generations of package jobs.
//
// # Invoke
//
// An invoke checks, first failing wins, in package admission's invoke order:
// inputs against the workflow's inputs_schema (400 invalid_config naming the
// field, e.g. inputs.script); then every step in node order: its capability
// (404 capability_unavailable), its config built from the inputs (400
// invalid_config naming the input), the resources the inputs name (actor,
// voice, uploads: 404 not_found, 409 input_not_ready, 422
// moderation_blocked), a talking actor's voice length (400 invalid_config)
// and its price (409 not_priced); the cap (402 max_credits_exceeded with
// limit.required_credits); the caller key's spend limits (402
// spend_limit_exceeded) and the balance (402 insufficient_credits), both on
// the sum; then the first step whose capability needs a plan the workspace
// lacks (403 required_plan) or whose moderated fields the content check
// refuses (422 moderation_blocked). Nothing is held at invoke and the key's
// one-job slot is not taken. This package resolves the graph (which config
// each step gets); package admission decides every refusal.
//
// # Pricing rule
//
// required_credits = the sum over nodes of ceil(node price x 1.1), where a
// node's price is catalog.Price of its config resolved from the inputs
// (absent inputs take the inputs_schema default). A binding to an earlier
// node's output is priced from the estimate of that output: its outputs
// count as uploads whose length is the earlier node's estimated output
// length (Quote.Seconds), and an approved tts generation counts as a
// completed tts of that length. So auto_caption on the actor video is priced
// on the actor video's estimated length, which is the tts length, which is
// chars(script)/15 seconds. credits_estimated is the sum of the unpadded
// node prices.
//
// # Runs
//
// A run is queued for StartDelay of service time, then runs its nodes in
// dependency order: a node whose inputs all completed becomes ready, then
// dispatching while its generation is submitted through jobs.Store.Submit
// (KeyID "", Source "workflow", Purpose "intermediate", or "deliverable"
// for a node no other node depends on, WorkflowRunID, SpendKeyID the
// invoking key), then running until the generation settles: completed, or
// failed (error code provider_error, moderation, timeout, canceled,
// insufficient_credits, invalid_input or unknown). A node whose input
// failed, was skipped or canceled is skipped. Each step holds its own
// padded price when it is dispatched and is charged what its generation is
// charged; broken steps cost nothing. A node's credits are null until it
// settles (0 for a failed step; null for a skipped or canceled one).
//
// Run status: queued until the first dispatch, running while a step works;
// once every node is finished: completed (every node completed), partial
// (some completed, some not), canceled (canceled with no node completed),
// failed (no node completed). credits_charged (the sum of the nodes'
// credits) is null until then; terminal and settlement captured come with
// it. workflow_run.completed (completed, partial) or workflow_run.failed
// (failed, canceled) is sent through OnEvent once.
//
// A generation recovered after its node failed (jobs.Store.Recover) does not
// revive the node: the node's dependents were already skipped.
//
// # Locking
//
// Engine.mu guards every map and run. It is never held while calling into
// jobs (whose hooks call back into the engine) or into OnEvent hooks.
package workflows

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/retention"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// StartDelay is how long a run stays queued before its first step is
// dispatched (service time).
const StartDelay = time.Second

// Disclosure is the fixed sentence of every run event.
const Disclosure = jobs.Disclosure

// Event types sent through OnEvent.
const (
	EventRunCompleted = "workflow_run.completed"
	EventRunFailed    = "workflow_run.failed"
)

// Status is a run status.
type Status string

// The run statuses.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusPartial   Status = "partial"
	StatusFailed    Status = "failed"
	StatusCanceled  Status = "canceled"
)

// Statuses lists every run status (GET /workflow-runs?status=).
var Statuses = []Status{StatusQueued, StatusRunning, StatusCompleted, StatusPartial, StatusFailed, StatusCanceled}

// Finished reports whether the status is final.
func (s Status) Finished() bool { return s != StatusQueued && s != StatusRunning }

// NodeStatus is a node status.
type NodeStatus string

// The node statuses.
const (
	NodePending     NodeStatus = "pending"
	NodeReady       NodeStatus = "ready"
	NodeDispatching NodeStatus = "dispatching"
	NodeRunning     NodeStatus = "running"
	NodeCompleted   NodeStatus = "completed"
	NodeFailed      NodeStatus = "failed"
	NodeSkipped     NodeStatus = "skipped"
	NodeCanceled    NodeStatus = "canceled"
)

func (s NodeStatus) finished() bool {
	return s == NodeCompleted || s == NodeFailed || s == NodeSkipped || s == NodeCanceled
}

// Node error codes.
const (
	CodeProviderError       = "provider_error"
	CodeModeration          = "moderation"
	CodeTimeout             = "timeout"
	CodeCanceled            = "canceled"
	CodeInsufficientCredits = "insufficient_credits"
	CodeInvalidInput        = "invalid_input"
	CodeUnknown             = "unknown"
)

// NodeError is why a step broke.
type NodeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Deps are what an Engine works with. All are required except Logger.
type Deps struct {
	Clock    clock.Clock
	IDs      *ids.Source
	Registry *workspace.Registry
	Catalog  *catalog.Catalog
	Jobs     *jobs.Store
	// Faults, when set, carries the test inputs of invokes (spec/testmode.yaml): a cancel
	// cancels the run an invoke accepted, as the app does. Optional.
	Faults *faults.Store
	// Retain forgets an ended run this long after it ended (0: kept until Reset); see retain.go.
	Retain time.Duration
	Logger *slog.Logger
}

// definition is an invocable workflow: a template, or a saved workflow
// (which may copy a template or carry its own nodes).
type definition struct {
	tpl         *fixtures.WorkflowTemplate
	workflowID  string // "" for a template
	templateKey string // the template invoked or copied; "" for a saved node list
	validate    func(inputs map[string]any) error
	workspaceID string // owner of a saved workflow
	name        string
	createdAt   time.Time
}

// node is one step of a run. Guarded by Engine.mu.
type node struct {
	def     *fixtures.WorkflowNode
	purpose string
	status  NodeStatus
	genIDs  []string
	credits *int64
	err     *NodeError
	settled map[string]bool // generation ids that settled
}

// run is one workflow run. Guarded by Engine.mu.
type run struct {
	id          string
	workspaceID string
	def         *definition
	inputs      map[string]any
	keyID       string
	keyBudget   *int64
	testInput   string // the invoke's test input, passed to every step's submit
	plan        fixtures.Plan
	status      Status
	nodes       []*node
	results     map[string]fixtures.NodeResult
	estimated   int64
	charged     *int64
	canceled    bool
	createdAt   time.Time
	startedAt   *time.Time
	finishedAt  *time.Time
	seq         int64
	timer       clock.Timer
	forgotten   bool // removed by the retention; may still sit in Engine.order until compaction
}

type genRef struct {
	runID string
	node  int
}

// Engine is the workflow engine. It is safe for concurrent use.
type Engine struct {
	d Deps

	hookMu  sync.Mutex // guards onEvent
	onEvent []func(workspaceID, eventType string, data any)

	sweep *retention.Sweeper // forgets ended runs (nil without a retention)

	mu       sync.Mutex // guards everything below
	saved    map[string]*definition
	runs     map[string]*run
	order    []*run // invoke order; may hold forgotten runs (see dead)
	dead     int    // forgotten runs still in order
	byGen    map[string]genRef
	seq      int64
	resetGen int64
}

// New returns an engine over d and registers its settle hook on d.Jobs.
func New(d Deps) *Engine {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{d: d}
	if d.Faults != nil {
		d.Faults.Enable(faults.Cancel)
	}
	e.sweep = retention.New(d.Clock, d.Retain, e.forgetDue)
	e.resetLocked()
	d.Jobs.OnSettle(e.onSettle)
	return e
}

func (e *Engine) resetLocked() {
	e.saved = map[string]*definition{}
	e.runs = map[string]*run{}
	e.order = nil
	e.dead = 0
	e.byGen = map[string]genRef{}
	e.seq = 0
}

// Reset forgets every saved workflow and run and stops pending starts.
// Hooks stay registered.
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runs {
		if r.timer != nil {
			r.timer.Stop()
		}
	}
	e.resetGen++
	e.resetLocked()
	e.sweep.Reset()
}

// OnEvent registers f to receive workflow_run.completed and
// workflow_run.failed (data: RunEventData). Register before serving; f is
// called with no lock held and must not block for long.
func (e *Engine) OnEvent(f func(workspaceID, eventType string, data any)) {
	e.hookMu.Lock()
	defer e.hookMu.Unlock()
	e.onEvent = append(e.onEvent, f)
}

type event struct {
	workspaceID string
	eventType   string
	data        any
}

func (e *Engine) emit(evs []event) {
	if len(evs) == 0 {
		return
	}
	e.hookMu.Lock()
	hooks := slices.Clone(e.onEvent)
	e.hookMu.Unlock()
	for _, ev := range evs {
		for _, f := range hooks {
			f(ev.workspaceID, ev.eventType, ev.data)
		}
	}
}
