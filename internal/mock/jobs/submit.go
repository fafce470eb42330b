package jobs

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/admission"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
)

// SubmitParams is one submit: a POST /generations body that passed its shape
// check, or a workflow step.
type SubmitParams struct {
	WorkspaceID string
	// KeyID is the submitting API key; "" is an app or workflow submit: it
	// holds no slot, is never replayed or blocked, and no spend limit or
	// render-concurrency brake applies.
	KeyID string
	// KeyBudget is the key's rolling 24 h budget (nil: none).
	KeyBudget *int64
	// Plan is the workspace plan (capability plan checks).
	Plan fixtures.Plan
	// Source is the generation's source (default "api" with a key, else
	// "ui"); workflow steps pass "workflow".
	Source string
	// Purpose is deliverable, preview, intermediate or "" (null).
	Purpose string
	// WorkflowRunID is set for a workflow step.
	WorkflowRunID string
	// SpendKeyID, on a workflow step (KeyID ""), is the API key that invoked
	// the run: the step's hold is taken under that key's spend limits and
	// counted in its rolling windows (SpendKeyBudget is its budget), but the
	// step still holds no slot and is never replayed or blocked.
	SpendKeyID     string
	SpendKeyBudget *int64

	CapabilityID string
	Config       map[string]any
	// MaxCredits caps the hold; 0 means no cap (workflow steps, whose
	// invoke checked its own cap).
	MaxCredits int64
	// Variants is the body's variants; nil when absent.
	Variants *int

	ActorID                   string
	ActorImageAssetID         string
	VoiceID                   string
	ApprovedVoiceGenerationID string

	// BodyKeyErr is the refusal of a body key that is not a submit field
	// (the HTTP adapter's strict body); the config validity step answers it
	// first, so the price checks before it still win (rule CHECK-005).
	BodyKeyErr error

	// TestInput is the test input (spec/testmode.yaml) of the request that
	// submits, or of the invoke that started the workflow step: its faults
	// (faults.Fault.Request) are taken first, by the submit checks, at
	// acceptance and at render start. "" for none.
	TestInput string
}

// Credits is the credits object of a submit or read answer.
type Credits struct {
	CreditsHeld    int64  `json:"credits_held"`
	CreditsCharged *int64 `json:"credits_charged"`
	Settlement     string `json:"settlement"`
	Terminal       bool   `json:"terminal"`
	WalletBalance  *int64 `json:"wallet_balance,omitempty"`
}

// SubmitAnswer is the submit answer (openapi GenerationSubmitResponse).
type SubmitAnswer struct {
	OK              bool     `json:"ok"`
	GenerationID    string   `json:"generation_id"`
	GenerationIDs   []string `json:"generation_ids"`
	RunID           *string  `json:"run_id"`
	BatchGroupID    string   `json:"batch_group_id,omitempty"`
	Replay          bool     `json:"replay"`
	Credits         Credits  `json:"credits"`
	CapabilityID    string   `json:"capability_id"`
	CapabilityName  string   `json:"capability_name"`
	OutputKind      string   `json:"output_kind"`
	OutputsExpected int      `json:"outputs_expected"`
	ChargeSummary   string   `json:"charge_summary"`
	NextAction      string   `json:"next_action"`
	Summary         string   `json:"summary"`
}

// spender is who the holds of p count against: the submitting key, else
// the invoking key of a workflow step, else nobody (an app submit).
func (p SubmitParams) spender() ledger.Spender {
	if p.KeyID == "" && p.SpendKeyID != "" {
		return ledger.Spender{KeyID: p.SpendKeyID, KeyBudget: p.SpendKeyBudget}
	}
	return ledger.Spender{KeyID: p.KeyID, KeyBudget: p.KeyBudget}
}

// canonical is the identity of a request for replay and blocking: the
// JSON of its fields with keys sorted (encoding/json sorts map keys at every
// level), numbers as JSON numbers.
func canonical(p SubmitParams) string {
	m := map[string]any{"capability_id": p.CapabilityID, "config": p.Config, "max_credits": p.MaxCredits}
	if p.Variants != nil {
		m["variants"] = *p.Variants
	}
	for k, v := range map[string]string{
		"actor_id": p.ActorID, "actor_image_asset_id": p.ActorImageAssetID,
		"voice_id": p.VoiceID, "approved_voice_generation_id": p.ApprovedVoiceGenerationID,
	} {
		if v != "" {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprintf("%v", m)
	}
	return string(b)
}

func stringAt(config map[string]any, name string) string {
	s, _ := config[name].(string)
	return s
}

// submission is one submit passing its checks: the request, the checks' own record of it
// (admission.Submission: what the catalog says about it, gathered once by prepare before any
// lock is taken, and what the steps decided), and the replay the in-flight step found.
type submission struct {
	p     SubmitParams
	canon string
	a     *admission.Submission
	// cp is the capability (a.A.Cap).
	cp     *fixtures.Capability
	replay *SubmitAnswer
}

// takes is how many generations the submit starts (1 when not priced).
func (sub *submission) takes() int {
	if sub.a.A.Priced {
		return len(sub.a.A.Quote.Generations)
	}
	return 1
}

// Submit runs the submit checks in the documented order (package admission; the body shape was
// checked by the caller) and, when every check passes, holds credits and starts the generations.
// The checks and the acceptance run under the workspace lock and s.mu, so what a check decided
// (the wallet can hold the price, the key has no job running) still holds when the generations
// start. Every refusal holds nothing.
func (s *Store) Submit(p SubmitParams) (SubmitAnswer, error) {
	ws, ok := s.d.Registry.Get(p.WorkspaceID)
	if !ok {
		return SubmitAnswer{}, apierr.NotFound("No workspace " + p.WorkspaceID + ".")
	}
	sub := s.prepare(p)
	var pl plan
	if sub.a.A.Priced {
		pl = s.planFor(p.WorkspaceID, sub.cp, sub.p.Config, sub.a.A.Resources, sub.a.A.Quote.Takes)
	}
	ws.Lock()
	defer ws.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := ws.Wallet()
	sub.a.Wallet = w
	sub.a.InFlight = func() (bool, error) {
		replay, err := s.inFlightLocked(sub.p, sub.canon, sub.takes())
		sub.replay = replay
		return replay != nil, err
	}
	sub.a.Blocked = func() error { return s.blockedLocked(sub.p.KeyID, sub.canon) }
	adm := s.admit()
	adm.Request = p.TestInput
	if err := adm.Submit(sub.a); err != nil {
		return SubmitAnswer{}, err
	}
	if sub.replay != nil {
		bal := w.Available()
		sub.replay.Credits.WalletBalance = &bal
		return *sub.replay, nil
	}
	return s.acceptLocked(sub, pl, w)
}

// admit is what the checks read: the catalogue and the fault queue.
func (s *Store) admit() admission.Deps {
	return admission.Deps{Catalog: s.d.Catalog, Faults: s.d.Faults}
}

// prepare normalizes p and asks the catalog, once, everything the checks
// read. It takes no lock of the Store or the workspace (the catalog's
// lookups reach the uploads and this Store's generations).
func (s *Store) prepare(p SubmitParams) *submission {
	if p.Source == "" {
		p.Source = "ui"
		if p.KeyID != "" {
			p.Source = "api"
		}
	}
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	req := catalog.Request{
		CapabilityID: p.CapabilityID, Config: p.Config, ActorID: p.ActorID, ActorImageAssetID: p.ActorImageAssetID,
		VoiceID: p.VoiceID, ApprovedVoiceGenerationID: p.ApprovedVoiceGenerationID,
	}
	a := s.admit().Assess(catalog.Viewer{WorkspaceID: p.WorkspaceID, Plan: p.Plan}, req, p.Variants)
	// A deprecated config name counts as its new name from here on: priced, checked and
	// deduplicated alike (Versioning 6).
	p.Config = a.NormalConfig
	req.Config = a.NormalConfig
	sub := &submission{p: p, cp: a.Cap, a: &admission.Submission{
		WorkspaceID: p.WorkspaceID, Request: req, MaxCredits: p.MaxCredits, Spender: p.spender(),
		BodyKeyErr: p.BodyKeyErr, A: a,
	}}
	sub.canon = canonical(sub.p)
	if sub.cp != nil && sub.cp.TalkingActor != nil && p.ApprovedVoiceGenerationID != "" {
		if g, ok := s.LookupVoiceGeneration(p.WorkspaceID, p.ApprovedVoiceGenerationID); ok {
			sub.a.Approved = &g
		}
	}
	return sub
}

// inFlightLocked decides the in-flight step. It returns a replay answer
// (an identical request of the same key whose job runs), or an error, or
// (nil, nil) to go on. Called with s.mu held.
func (s *Store) inFlightLocked(p SubmitParams, canon string, takes int) (*SubmitAnswer, error) {
	if p.KeyID == "" {
		return nil, nil
	}
	now := s.d.Clock.Now()
	if sl, ok := s.slots[p.KeyID]; ok && now.Before(sl.acceptedAt.Add(SlotLifetime)) {
		if first := s.firstRunningLocked(sl.genIDs); first != nil {
			if sl.canonical == canon {
				a := s.submitAnswerLocked(sl.genIDs, true)
				return &a, nil
			}
			return nil, admission.InFlightOwn(first.id, string(first.status))
		}
	}
	running := 0
	for _, g := range s.order {
		if g.forgotten || g.workspaceID != p.WorkspaceID || !g.status.Running() {
			continue
		}
		running++
		if g.keyID != "" && g.keyID != p.KeyID && g.canonical == canon {
			wait := max(1, int(math.Ceil(g.finishAt.Sub(now).Seconds())))
			return nil, admission.InFlightIdentical(g.id, string(g.status), wait)
		}
	}
	return nil, admission.RenderConcurrency(running, takes, s.maxRunsLocked(p.WorkspaceID))
}

func (s *Store) firstRunningLocked(ids []string) *generation {
	for _, id := range ids {
		if g, ok := s.gens[id]; ok && g.status.Running() {
			return g
		}
	}
	return nil
}

func failKey(keyID, canon string) string { return keyID + "\x00" + canon }

// blockedLocked answers request_blocked when the same request of the same
// key failed BlockAfterFailures times in a row within BlockWindow, for
// BlockDuration after the last failure.
func (s *Store) blockedLocked(keyID, canon string) error {
	if keyID == "" {
		return nil
	}
	f, ok := s.fails[failKey(keyID, canon)]
	if !ok || len(f.times) < BlockAfterFailures {
		return nil
	}
	last := f.times[len(f.times)-1]
	first := f.times[len(f.times)-BlockAfterFailures]
	now := s.d.Clock.Now()
	if last.Sub(first) > BlockWindow || !now.Before(last.Add(BlockDuration)) {
		return nil
	}
	wait := max(1, int(math.Ceil(last.Add(BlockDuration).Sub(now).Seconds())))
	return admission.RequestBlocked(BlockedReason, BlockAfterFailures, wait)
}

// recordOutcomeLocked counts a failed job of a key's request (canceled jobs
// do not count) or clears the count on a completion.
func (s *Store) recordOutcomeLocked(g *generation, failed bool) {
	if g.keyID == "" {
		return
	}
	k := failKey(g.keyID, g.canonical)
	if !failed {
		delete(s.fails, k)
		return
	}
	f := s.fails[k]
	if f == nil {
		f = &failures{}
		s.fails[k] = f
	}
	f.times = append(f.times, s.d.Clock.Now())
	if len(f.times) > BlockAfterFailures {
		f.times = slices.Delete(f.times, 0, len(f.times)-BlockAfterFailures)
	}
}

// dur converts seconds to a Duration.
func dur(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }
