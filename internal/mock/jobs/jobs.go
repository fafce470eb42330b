// Package jobs is the mock's generations engine: generation and batch
// records, their state machine on the injected clock, the per-key in-flight
// slot and replay, request blocking, the render-concurrency brake, and every
// credit movement of a generation (hold on submit, capture on completion,
// release on failure) through the workspace's ledger.Wallet.
//
// # Submit
//
// Submit gathers what the checks read (admission.Deps.Assess), runs the
// submit check order (admission.Deps.Submit) under the workspace lock and
// Store.mu, and accepts in the same hold: no recheck is needed, since nothing
// the checks read can change before the generations start. This package
// answers the in-flight and blocked steps' questions from its own records
// (the key's slot, running identical requests, failure counts); package
// admission decides and words every refusal.
//
// # State machine
//
// A generation moves queued → rendering → post_processing → completed, or to
// failed. The capability's render_seconds (R) is split: queued for 10% of R,
// rendering until 90% of R, post_processing until R, then completed. A failure
// (the capability's render_failure trigger, a queued render_fail fault, or the
// control API's fail) happens when the job starts rendering (or at once for
// control fail); a cancel reads failed with error code "canceled". The only
// move out of a finished status is recovery: failed → completed, charged again
// (Recover). Finished is final otherwise.
//
// # Credits
//
// Each generation holds its own padded price (ceil(price × 1.1) per take) in
// one ledger hold, captured at completion for exactly its price (never above
// the hold; the rest is released in the same step) or released in full on
// failure. Every movement happens under the workspace lock with the record
// change it belongs to, exactly once.
//
// # Locking
//
// Store.mu guards every record map. Lock order: workspace.Workspace lock
// first, then Store.mu; never the reverse. Hooks (OnEvent, OnSettle) are
// called with no lock held, after the change they report.
package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"github.com/mediaspec/mediaspec/internal/contract"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/retention"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// Limits and timings of the engine (interface spec "Limits"; designed values
// are documented in spec/rules.yaml and spec/openapi.yaml).
const (
	// SlotLifetime is how long a submit holds its key's slot at most.
	SlotLifetime = contract.SlotLifetime
	// WaitTimeout is how long GET /generations/{id}/wait blocks at most.
	WaitTimeout = contract.WaitBudget
	// LinkTTL is the lifetime of an output link.
	LinkTTL = contract.OutputLinkLifetime
	// DefaultMaxConcurrentRenders is the workspace render-concurrency
	// threshold: a key submit that would make more generations of the
	// workspace run at once answers 429 rate_limited without
	// retry_after_seconds (designed; configurable per workspace).
	DefaultMaxConcurrentRenders = 5
	// BlockAfterFailures is how many failed jobs in a row of the same
	// request from the same key block it, when they all fall within
	// BlockWindow.
	BlockAfterFailures = 3
	// BlockWindow is the window of those failures.
	BlockWindow = time.Hour
	// BlockDuration is how long a blocked request stays blocked after its
	// last failure.
	BlockDuration = time.Hour
	// BlockedReason is error.blocked_reason of a request_blocked refusal.
	BlockedReason = "repeated_failures"
)

// Shares of render_seconds spent queued and rendering (the rest is
// post_processing).
const (
	queuedShare    = 0.10
	renderingShare = 0.80
)

// Disclosure is the fixed sentence every generation and batch event carries.
const Disclosure = "Nothing is published on your behalf; the files are AI generated and delivered to you only as ids and links."

// Status is a generation status.
type Status string

// The generation statuses.
const (
	StatusQueued         Status = "queued"
	StatusRendering      Status = "rendering"
	StatusPostProcessing Status = "post_processing"
	StatusCompleted      Status = "completed"
	StatusFailed         Status = "failed"
)

// Statuses lists every generation status.
var Statuses = []Status{StatusQueued, StatusRendering, StatusPostProcessing, StatusCompleted, StatusFailed}

// Running reports whether the status is not finished.
func (s Status) Running() bool { return s != StatusCompleted && s != StatusFailed }

// Sources lists the generation sources (GET /generations?source=).
var Sources = []string{"ui", "api", "mcp", "cli", "workflow", "agent", "preset"}

// Event types sent through OnEvent.
const (
	EventGenerationCompleted = "generation.completed"
	EventGenerationFailed    = "generation.failed"
	EventBatchSettled        = "batch.settled"
)

// Error codes of failed generations set by this package.
const (
	ErrorCodeCanceled      = "canceled"
	ErrorCodeProviderError = "provider_error"
)

// Deps are what a Store works with. All are required except Logger.
type Deps struct {
	Clock    clock.Clock
	IDs      *ids.Source
	Registry *workspace.Registry
	Catalog  *catalog.Catalog
	Faults   *faults.Store
	Blob     *blob.Store
	Assets   *assets.Registry
	// Seed is the server seed; with a generation id it fixes rendered bytes.
	Seed uint64
	// MaxConcurrentRenders is the default render-concurrency threshold
	// (0: DefaultMaxConcurrentRenders).
	MaxConcurrentRenders int
	// Retain forgets a finished generation this long after it ended (0: kept until Reset); see
	// retain.go.
	Retain time.Duration
	Logger *slog.Logger
}

// GenError is a failed generation's error.
type GenError struct {
	Code    string
	Message string
}

// Output is one delivered (or expected) file of a generation.
type Output struct {
	Index       int
	Kind        string
	AssetID     string
	FileName    string
	ContentType string
	Width       *int
	Height      *int
	DurationMS  *int64
}

// plan is what the renderer makes for one generation.
type plan struct {
	kind       string // output kind
	format     string // png, mp4, wav, text, json
	outputs    int    // files (0 for text)
	width      int
	height     int
	durationMS int64
	text       string
	listItems  int
}

// generation is the record of one generation. Guarded by Store.mu.
type generation struct {
	id            string
	workspaceID   string
	keyID         string
	testInput     string // the submit's test input: its render_fail is taken at render start
	cp            *fixtures.Capability
	source        string
	purpose       string // "" renders null
	workflowRunID string
	fanOutLabel   string
	batchGroupID  string
	batchIndex    int
	canonical     string
	config        map[string]any
	script        string // config.script (tts lookups)
	voiceID       string // the voice spoken (tts lookups)
	plan          plan

	status      Status
	runID       string
	estimated   int64 // the price at submit (credits_estimated)
	overrun     int64 // what the render cost beyond the estimate (render_overrun fault); settlement caps it at the hold
	holdAmount  int64
	hold        ledger.HoldID
	charged     *int64
	settlement  string // open | captured
	terminal    bool
	creditsLeft *int64
	err         *GenError
	outputs     []Output
	outputText  *string
	result      json.RawMessage
	createdAt   time.Time
	updatedAt   time.Time
	completedAt *time.Time
	// rev changes with every change of what a read shows (touchLocked), store-wide and never
	// reused, not even after a Reset: a read answer encoded at one rev is the answer at that rev.
	rev      uint64
	finishAt time.Time // expected end of the render
	// renderSeconds is this job's render time: the capability's, plus a
	// slow_render fault's seconds.
	renderSeconds float64
	seq           int64

	timers []clock.Timer
	done   chan struct{} // closed at the first finish
	closed bool
	// forgotten is set when the retention removed the record (it may still sit in Store.order
	// until the next compaction).
	forgotten bool
}

// batch is the record of one fanned-out submit. Guarded by Store.mu.
type batch struct {
	id          string
	workspaceID string
	genIDs      []string
	settled     bool // batch.settled was sent
}

// slot is a key's in-flight slot.
type slot struct {
	genIDs     []string
	canonical  string
	acceptedAt time.Time
}

// failures tracks the failed jobs in a row of one request of one key.
type failures struct {
	times []time.Time
}

// Store is the generations engine. It is safe for concurrent use.
type Store struct {
	d Deps

	hookMu   sync.Mutex // guards onEvent, onSettle
	onEvent  []func(workspaceID, eventType string, data any)
	onSettle []func(workspaceID, generationID string)

	// sweep forgets finished generations after the retention, links deletes their outputs'
	// bytes a link's lifetime later (both nil without a retention).
	sweep *retention.Sweeper
	links *retention.Sweeper

	mu       sync.Mutex // guards everything below
	gens     map[string]*generation
	order    []*generation // creation order; may hold forgotten records (see dead)
	dead     int           // forgotten records still in order
	batches  map[string]*batch
	slots    map[string]*slot     // by key id
	fails    map[string]*failures // by key id + "\x00" + canonical
	maxRuns  map[string]int       // per-workspace render-concurrency override
	seq      int64
	resetGen int64  // bumped by Reset; stale timers check it
	rev      uint64 // the last generation.rev handed out; never reset
}

// New returns an empty store over d and enables the fault kinds it
// consumes (render_fail, moderation_unavailable, moderation_block,
// estimate_changed, provider_unavailable, slow_render, render_overrun, and the test inputs cancel
// and recover). Every fault is taken
// for the workspace of the submit or job it affects.
func New(d Deps) *Store {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.MaxConcurrentRenders <= 0 {
		d.MaxConcurrentRenders = DefaultMaxConcurrentRenders
	}
	if d.Faults != nil {
		d.Faults.Enable(faults.RenderFail, faults.ModerationUnavailable, faults.ModerationBlock, faults.EstimateChanged, faults.ProviderUnavailable, faults.SlowRender, faults.RenderOverrun,
			faults.Cancel, faults.Recover)
	}
	s := &Store{d: d}
	if d.Retain > 0 {
		s.sweep = retention.New(d.Clock, d.Retain, s.forgetDue)
		s.links = retention.New(d.Clock, LinkTTL, s.dropFile)
	}
	s.resetLocked()
	return s
}

func (s *Store) resetLocked() {
	s.gens = map[string]*generation{}
	s.order = nil
	s.dead = 0
	s.batches = map[string]*batch{}
	s.slots = map[string]*slot{}
	s.fails = map[string]*failures{}
	s.maxRuns = map[string]int{}
	s.seq = 0
}

// Reset forgets every generation, batch, slot and block, stopping every
// pending timer. Hooks stay registered. Assets and blobs are reset by their
// own packages.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.gens {
		for _, t := range g.timers {
			t.Stop()
		}
		if !g.closed {
			g.closed = true
			close(g.done)
		}
	}
	s.resetGen++
	s.resetLocked()
	s.sweep.Reset()
	s.links.Reset()
}

// touchLocked records a change of g at now: its updated_at and a new rev. Every change of what a
// read of g shows goes through it (a cached read answer is keyed by the rev).
func (s *Store) touchLocked(g *generation, now time.Time) {
	g.updatedAt = now
	s.rev++
	g.rev = s.rev
}

// Revision returns the rev of generation id of workspaceID (View.Rev), without a snapshot;
// another workspace's id is reported absent, as by Get.
func (s *Store) Revision(workspaceID, id string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gens[id]
	if !ok || g.workspaceID != workspaceID {
		return 0, false
	}
	return g.rev, true
}

// LinkStamp is what the links of a read signed now share besides the generation (the public URL
// and the expiry second, blob.Store.LinkStamp): two renderings of one View with equal stamps sign
// the same links.
func (s *Store) LinkStamp() (publicURL string, expires int64) {
	return s.d.Blob.LinkStamp(LinkTTL)
}

// OnEvent registers f to receive generation.completed, generation.failed
// (data: GenerationEventData) and batch.settled (data: BatchEventData).
// Register before serving; f is called with no lock held, in the order the
// changes happened, and must not block for long.
func (s *Store) OnEvent(f func(workspaceID, eventType string, data any)) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.onEvent = append(s.onEvent, f)
}

// OnSettle registers f to be told when a generation reaches a finished
// status (completed or failed, including a recovery to completed), after its
// credits settled. Called with no lock held; read the generation with Get.
func (s *Store) OnSettle(f func(workspaceID, generationID string)) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	s.onSettle = append(s.onSettle, f)
}

// note is a change to report once locks are released.
type note struct {
	workspaceID string
	eventType   string
	data        any
	settledID   string // generation id for OnSettle, "" for batch events
}

func (s *Store) emit(notes []note) {
	if len(notes) == 0 {
		return
	}
	s.hookMu.Lock()
	ev := slices.Clone(s.onEvent)
	st := slices.Clone(s.onSettle)
	s.hookMu.Unlock()
	for _, n := range notes {
		for _, f := range ev {
			f(n.workspaceID, n.eventType, n.data)
		}
		if n.settledID != "" {
			for _, f := range st {
				f(n.workspaceID, n.settledID)
			}
		}
	}
}

// SetMaxConcurrentRenders sets the render-concurrency threshold of one
// workspace; n <= 0 restores the default.
func (s *Store) SetMaxConcurrentRenders(workspaceID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.maxRuns, workspaceID)
		return
	}
	s.maxRuns[workspaceID] = n
}

// MaxConcurrentRenders returns the workspace's render-concurrency threshold.
func (s *Store) MaxConcurrentRenders(workspaceID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRunsLocked(workspaceID)
}

func (s *Store) maxRunsLocked(workspaceID string) int {
	if n, ok := s.maxRuns[workspaceID]; ok {
		return n
	}
	return s.d.MaxConcurrentRenders
}

// renderSeed derives the render seed of one generation from the server seed
// and the generation id.
func (s *Store) renderSeed(genID string) uint64 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.d.Seed)
	h := sha256.Sum256(append(b[:], genID...))
	return binary.BigEndian.Uint64(h[:8])
}

// LookupVoiceGeneration implements catalog.VoiceGenerationLookup: the
// generation id of workspaceID with its capability, whether it completed,
// its config.script, the voice it spoke in and its audio length.
func (s *Store) LookupVoiceGeneration(workspaceID, generationID string) (catalog.VoiceGeneration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gens[generationID]
	if !ok || g.workspaceID != workspaceID {
		return catalog.VoiceGeneration{}, false
	}
	v := catalog.VoiceGeneration{
		GenerationID: g.id, CapabilityID: g.cp.ID, Completed: g.status == StatusCompleted,
		Script: g.script, VoiceID: g.voiceID,
	}
	for _, o := range g.outputs {
		if o.DurationMS != nil {
			v.DurationMS += *o.DurationMS
		}
	}
	if v.DurationMS == 0 {
		v.DurationMS = g.plan.durationMS
	}
	return v, true
}

var _ catalog.VoiceGenerationLookup = (*Store)(nil)
