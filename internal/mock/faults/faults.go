// Package faults is the mock's queue of injected faults: the control API
// queues them (POST /_control/v1/faults) and the concern packages consume
// them at the point the fault describes (pricing, a provider call, ...).
//
// A fault makes its next Count matching events go wrong. Faults of one kind
// are consumed oldest first; a fault scoped to a capability matches only
// events for that capability, and a fault scoped to a workspace matches only
// events of that workspace (so a job another test left running elsewhere
// cannot take it). A Store accepts only the kinds it was told are consumed
// somewhere (New's kinds, or Enable), so a test never queues a fault that
// nothing would honour.
package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
)

// Kind names what goes wrong (control.yaml FaultKind).
type Kind string

// The fault kinds of control.yaml.
const (
	RenderFail            Kind = "render_fail"
	ProviderUnavailable   Kind = "provider_unavailable"
	PricingUnavailable    Kind = "pricing_unavailable"
	ModerationUnavailable Kind = "moderation_unavailable"
	ModerationBlock       Kind = "moderation_block"
	EstimateChanged       Kind = "estimate_changed"
	NotReady              Kind = "not_ready"
	// SlowRender makes the next matching job render Seconds longer than
	// its capability's render time.
	SlowRender Kind = "slow_render"
	// InternalError answers the next keyed API call (of the workspace, when scoped) with 500
	// internal_error, after the key checks.
	InternalError Kind = "internal_error"
	// SlowScan makes the content scan of the next matching upload finalize take Seconds of service
	// time: the finalize holds the file up to the two-minute finalize hold, then answers
	// scan_status pending until the scan ends (package uploads).
	SlowScan Kind = "slow_scan"
	// RenderOverrun makes the next matching generation accepted by a submit cost more to render
	// than its hold: the provider's cost is the hold plus the estimate. Settlement caps the charge
	// at the hold (package jobs): the real cost is never more than the hold.
	RenderOverrun Kind = "render_overrun"
	// DeliveryFail fails the next webhook delivery attempt (to an endpoint of the workspace, when
	// scoped) on the service's own side: no attempt is made or counted.
	DeliveryFail Kind = "delivery_fail"
	// ScanFlag makes the content scan of the next matching image upload whose bytes pass every
	// check flag the file (scan_status flagged, not usable), as the scanner flags a marked image.
	ScanFlag Kind = "scan_flag"
)

// The acts of the app that a test input may stand in for (spec/testmode.yaml): they are no fault
// kinds of control's POST /faults (control does them at once with its job hooks), only of a test
// input, and each takes optional Seconds (default 0), the service time before the app acts.
// WebhookTest also takes an optional Message.
const (
	// Cancel cancels, as the app does, the generation a submit accepted (or the run an invoke
	// accepted) Seconds after its acceptance.
	Cancel Kind = "cancel"
	// Recover writes off the render of the generation a submit accepted: it fails at render start
	// (provider_error), and Seconds later the operator recovers it (charged, completed).
	Recover Kind = "recover"
	// WebhookTest sends, as the app's Send test button does, one webhook.test delivery to the
	// endpoint a registration (POST /webhooks) made, Seconds after it; Message, when set, is its
	// data.message.
	WebhookTest Kind = "webhook_test"
)

// AppActs lists the kinds only a test input may name (Cancel, Recover, WebhookTest).
var AppActs = []Kind{Cancel, Recover, WebhookTest}

// Kinds lists every documented kind.
var Kinds = []Kind{RenderFail, ProviderUnavailable, PricingUnavailable, ModerationUnavailable, ModerationBlock, EstimateChanged, NotReady, SlowRender, InternalError, SlowScan, RenderOverrun, DeliveryFail, ScanFlag}

// ForRequest reports whether a test input (spec/testmode.yaml) may name kind: every kind an API
// request can cause, but not not_ready (the readiness probe takes no key) or delivery_fail (a
// delivery belongs to no request).
func (k Kind) ForRequest() bool {
	return k != NotReady && k != DeliveryFail && slices.Contains(Kinds, k) || slices.Contains(AppActs, k)
}

// Outlives reports whether a fault of kind, made by a test input, is consumed after its request
// has answered: a render_fail at the render start of a generation the request started, and a
// slow_render or render_overrun at the acceptance of a workflow step the request's run submits.
func (k Kind) Outlives() bool {
	return k == RenderFail || k == SlowRender || k == RenderOverrun || slices.Contains(AppActs, k)
}

// MaxRequestFaults is the most faults of ended requests (Outlives kinds a request left unused,
// such as a render_fail of a refused submit) the store keeps; beyond it the oldest are dropped.
const MaxRequestFaults = 1000

// MaxSlowSeconds is the most seconds a slow_render or slow_scan fault may add.
const MaxSlowSeconds = 86400

// Render-failure codes a render_fail fault may carry.
var RenderCodes = []string{"provider_error", "moderation", "timeout", "unknown"}

// IDPrefix prefixes fault ids (flt_ + 32 hex).
const IDPrefix = "flt_"

// TakesSeconds reports whether faults of kind carry Seconds (required there, refused elsewhere).
func (k Kind) TakesSeconds() bool { return k == SlowRender || k == SlowScan }

// SecondsOptional reports whether faults of kind may carry Seconds, 0 or above (the AppActs).
func (k Kind) SecondsOptional() bool { return slices.Contains(AppActs, k) }

// MaxCount is the most events one fault may affect.
const MaxCount = 1000

// Fault is a snapshot of one queued fault.
type Fault struct {
	ID   string
	Kind Kind
	// CapabilityID scopes the fault; "" matches every capability.
	CapabilityID string
	// WorkspaceID scopes the fault; "" matches every workspace.
	WorkspaceID string
	// Code is the render-failure code of a render_fail fault, else "".
	Code string
	// Seconds is the extra render time of a slow_render fault or the scan time of a slow_scan
	// fault, else 0.
	Seconds float64
	// Message is a webhook_test fault's data.message ("": the service's default text).
	Message string
	// Request, when not "", is the test input (spec/testmode.yaml) of the one request that made
	// the fault: it matches only the events of that request (TakeIn with the same request).
	Request string
	// Count is how many events the fault affects; Remaining how many are left.
	Count     int
	Remaining int
	CreatedAt time.Time
}

// Duration is Seconds as a duration of service time.
func (f Fault) Duration() time.Duration { return time.Duration(f.Seconds * float64(time.Second)) }

// Store holds the queued faults. It is safe for concurrent use.
type Store struct {
	clock clock.Clock
	ids   *ids.Source

	mu      sync.Mutex // guards enabled, queue
	enabled map[Kind]bool
	queue   []*Fault // oldest first; used-up faults are removed
}

// New returns an empty store that accepts the given kinds.
func New(c clock.Clock, src *ids.Source, kinds ...Kind) *Store {
	s := &Store{clock: c, ids: src, enabled: map[Kind]bool{}}
	s.Enable(kinds...)
	return s
}

// Enable makes the store accept more kinds (a package that starts
// consuming a kind enables it).
func (s *Store) Enable(kinds ...Kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range kinds {
		s.enabled[k] = true
	}
}

// Enabled reports whether kind may be queued.
func (s *Store) Enabled(kind Kind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enabled[kind]
}

// Spec describes a fault to queue (the body of control POST /faults).
type Spec struct {
	Kind Kind
	// CapabilityID and WorkspaceID scope the fault; "" matches every one.
	CapabilityID string
	WorkspaceID  string
	// Code is a render_fail fault's error code ("": provider_error).
	Code string
	// Count is how many events the fault affects (0: 1).
	Count int
	// Seconds is the extra render time of a slow_render fault or the scan time of a slow_scan
	// fault (required for those kinds, refused on the others).
	Seconds float64
	// Message is a webhook_test fault's data.message (refused on other kinds).
	Message string
	// Request scopes the fault to the events of one request (a test input); "" for a fault of
	// the control API.
	Request string
}

// Queue adds a fault scoped to a capability only. count 0 means 1. See Add.
func (s *Store) Queue(kind Kind, capabilityID, code string, count int) (Fault, error) {
	return s.Add(Spec{Kind: kind, CapabilityID: capabilityID, Code: code, Count: count})
}

// Add queues a fault. It answers invalid_config naming the field for an
// unknown or not-enabled kind, a code on a kind other than render_fail or
// outside RenderCodes, a count outside 1..MaxCount, or seconds missing or
// outside (0, MaxSlowSeconds] on slow_render or present on another kind.
func (s *Store) Add(sp Spec) (Fault, error) {
	kind, code, count := sp.Kind, sp.Code, sp.Count
	if !slices.Contains(Kinds, kind) && (sp.Request == "" || !slices.Contains(AppActs, kind)) {
		return Fault{}, apierr.InvalidConfig("kind", "kind must be one of the documented fault kinds.")
	}
	if count == 0 {
		count = 1
	}
	if count < 1 || count > MaxCount {
		return Fault{}, apierr.InvalidConfig("count", "count must be 1 to 1000.")
	}
	switch {
	case code != "" && kind != RenderFail:
		return Fault{}, apierr.InvalidConfig("code", "code applies to render_fail faults only.")
	case code != "" && !slices.Contains(RenderCodes, code):
		return Fault{}, apierr.InvalidConfig("code", "code must be provider_error, moderation, timeout or unknown.")
	case kind == RenderFail && code == "":
		code = "provider_error"
	}
	switch {
	case kind.TakesSeconds() && (sp.Seconds <= 0 || sp.Seconds > MaxSlowSeconds):
		return Fault{}, apierr.InvalidConfig("seconds", fmt.Sprintf("%s needs seconds above 0 and at most %d.", kind, MaxSlowSeconds))
	case sp.Message != "" && kind != WebhookTest:
		return Fault{}, apierr.InvalidConfig("message", "message applies to webhook_test only.")
	case kind.SecondsOptional() && (sp.Seconds < 0 || sp.Seconds > MaxSlowSeconds):
		return Fault{}, apierr.InvalidConfig("seconds", fmt.Sprintf("%s takes seconds from 0 to %d.", kind, MaxSlowSeconds))
	case !kind.TakesSeconds() && !kind.SecondsOptional() && sp.Seconds != 0:
		return Fault{}, apierr.InvalidConfig("seconds", "seconds applies to slow_render and slow_scan faults only.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.enabled[kind] {
		return Fault{}, apierr.InvalidConfig("kind", "This mock does not implement fault kind "+string(kind)+" yet.")
	}
	f := &Fault{
		ID: s.ids.ID(IDPrefix), Kind: kind, CapabilityID: sp.CapabilityID, WorkspaceID: sp.WorkspaceID, Code: code,
		Seconds: sp.Seconds, Message: sp.Message, Request: sp.Request, Count: count, Remaining: count, CreatedAt: s.clock.Now(),
	}
	s.queue = append(s.queue, f)
	return *f, nil
}

// List returns the faults of the control API not yet used up, oldest first (a test input's
// faults belong to its request and are not listed).
func (s *Store) List() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.queue))
	for _, f := range s.queue {
		if f.Request == "" {
			out = append(out, *f)
		}
	}
	return out
}

// EndRequest drops the faults request made that no later event can take: every one but those of
// a kind that Outlives its request. It keeps at most MaxRequestFaults of those, dropping the
// oldest. The API layer calls it when the request has answered.
func (s *Store) EndRequest(request string) {
	if request == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = slices.DeleteFunc(s.queue, func(f *Fault) bool { return f.Request == request && !f.Kind.Outlives() })
	n := 0
	for _, f := range s.queue {
		if f.Request != "" {
			n++
		}
	}
	for i := 0; n > MaxRequestFaults && i < len(s.queue); {
		if s.queue[i].Request != "" {
			s.queue = slices.Delete(s.queue, i, i+1)
			n--
			continue
		}
		i++
	}
}

// Clear drops every fault of the control API and returns how many there were (the faults of a
// test input stay with their request).
func (s *Store) Clear() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.queue)
	s.queue = slices.DeleteFunc(s.queue, func(f *Fault) bool { return f.Request == "" })
	return n - len(s.queue)
}

// Take consumes one event of the oldest fault of kind matching
// capabilityID, in any workspace. It is TakeFor with an unknown workspace.
func (s *Store) Take(kind Kind, capabilityID string) (Fault, bool) {
	return s.TakeFor(kind, "", capabilityID)
}

// TakeFor consumes one event of the oldest fault of kind matching the
// event's workspace and capability. A fault with no capability matches
// every capability; a fault with no workspace matches every workspace; an
// event whose workspace is unknown (workspaceID "", a consumer that does
// not pass it) matches faults of every workspace. It reports the fault as
// it was before the event was taken, and false when none matches. A fault
// whose events are used up leaves the queue.
func (s *Store) TakeFor(kind Kind, workspaceID, capabilityID string) (Fault, bool) {
	return s.TakeIn(kind, "", workspaceID, capabilityID)
}

// TakeIn is TakeFor for an event of request (its test input, "" for none): a fault of that
// request is taken first, then one of the control API; a fault of another request never matches.
func (s *Store) TakeIn(kind Kind, request, workspaceID, capabilityID string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if request != "" {
		if f, ok := s.takeLocked(kind, request, workspaceID, capabilityID); ok {
			return f, true
		}
	}
	return s.takeLocked(kind, "", workspaceID, capabilityID)
}

// takeLocked takes one event of the oldest fault of kind made by request ("": the control API's)
// matching the workspace and capability. s.mu must be held.
func (s *Store) takeLocked(kind Kind, request, workspaceID, capabilityID string) (Fault, bool) {
	for i, f := range s.queue {
		if f.Kind != kind || f.Request != request || (f.CapabilityID != "" && f.CapabilityID != capabilityID) {
			continue
		}
		if f.WorkspaceID != "" && workspaceID != "" && f.WorkspaceID != workspaceID {
			continue
		}
		snap := *f
		f.Remaining--
		if f.Remaining == 0 {
			s.queue = slices.Delete(s.queue, i, i+1)
		}
		return snap, true
	}
	return Fault{}, false
}

// Pending reports whether a fault of kind is queued (without consuming it),
// for state-like faults such as not_ready.
func (s *Store) Pending(kind Kind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.queue {
		if f.Kind == kind && f.Request == "" {
			return true
		}
	}
	return false
}

type requestKey struct{}

// WithRequest returns ctx carrying request, the test input of the request being served (for the
// consumers that read a context rather than a Request field, such as an upload finalize).
func WithRequest(ctx context.Context, request string) context.Context {
	if request == "" {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, request)
}

// RequestOf is the test input WithRequest put in ctx, "" for none.
func RequestOf(ctx context.Context) string {
	r, _ := ctx.Value(requestKey{}).(string)
	return r
}
