package jobs

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock/apierr"
	"github.com/mediaspec/mediaspec/mock/catalog"
	"github.com/mediaspec/mediaspec/mock/faults"
	"github.com/mediaspec/mediaspec/mock/ledger"
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

// talkCheck applies the talking-actor rules (config validity): voice
// resolution, approval match, voice_audio exclusivity and the voice length
// limits, all before any hold. approved is the generation named by
// approved_voice_generation_id (nil when none or unknown). It returns the
// voice spoken ("" when a recording drives the actor).
func (s *Store) talkCheck(cp *fixtures.Capability, p SubmitParams, res catalog.Resources, approved *catalog.VoiceGeneration) (string, error) {
	ta := cp.TalkingActor
	if ta == nil {
		return "", nil
	}
	seconds := func(ms int64) float64 { return float64(ms) / 1000 }
	lengthErr := func(field string, secs float64) error {
		bound := fmt.Sprintf("%g to %g seconds", ta.MinVoiceSeconds, ta.MaxVoiceSeconds)
		if ta.MaxExclusive {
			bound = fmt.Sprintf("under %g seconds", ta.MaxVoiceSeconds)
		}
		return apierr.InvalidConfig(field, fmt.Sprintf("%s takes a voice of %s; this one is %.1f seconds.", cp.ID, bound, secs))
	}
	if ta.VoiceMode == fixtures.VoiceModeOwnVoice {
		if p.ApprovedVoiceGenerationID != "" {
			return "", apierr.InvalidConfig("approved_voice_generation_id", cp.ID+" makes its own voice from the script and does not take approved_voice_generation_id.")
		}
		secs := fixtures.ScriptSeconds(stringAt(p.Config, "script"))
		if !ta.VoiceSecondsOK(secs) {
			return "", lengthErr("config.script", secs)
		}
		return "", nil
	}
	if _, has := p.Config["voice_audio"]; has {
		switch {
		case !ta.AcceptsVoiceAudio:
			return "", apierr.InvalidConfig("config.voice_audio", cp.ID+" does not take a recording.")
		case stringAt(p.Config, "script") != "":
			return "", apierr.InvalidConfig("config.voice_audio", "Send config.voice_audio or a script, not both.")
		case p.VoiceID != "" || stringAt(p.Config, "voiceId") != "":
			return "", apierr.InvalidConfig("voice_id", "A recording in config.voice_audio replaces the voice; send no voice_id.")
		case p.ApprovedVoiceGenerationID != "":
			return "", apierr.InvalidConfig("approved_voice_generation_id", "A recording in config.voice_audio replaces the approved tts; send one or the other.")
		}
		var ms int64
		known := true
		arr, _ := p.Config["voice_audio"].([]any)
		for _, e := range arr {
			id, _ := e.(string)
			u, ok := res.Uploads[id]
			if !ok || u.DurationMS == nil {
				known = false
				continue
			}
			ms += *u.DurationMS
		}
		if known && !ta.VoiceSecondsOK(seconds(ms)) {
			return "", lengthErr("config.voice_audio", seconds(ms))
		}
		return "", nil
	}
	if p.ApprovedVoiceGenerationID == "" {
		return "", apierr.InvalidConfig("approved_voice_generation_id", "Submit tts with the script and voice first, wait for it, then send its generation_id as approved_voice_generation_id.")
	}
	voice := p.VoiceID
	if voice == "" {
		voice = stringAt(p.Config, "voiceId")
	}
	if voice == "" && p.ActorID != "" {
		if a, ok := s.d.Catalog.Actor(p.ActorID); ok && a.DefaultVoiceID != nil {
			voice = *a.DefaultVoiceID
		}
	}
	if voice == "" {
		return "", apierr.InvalidConfig("voice_id", "No voice: send voice_id, config.voiceId, or an actor with a default voice.")
	}
	if g := approved; g != nil && g.CapabilityID == "tts" && g.Completed {
		if g.VoiceID != voice {
			return "", apierr.InvalidConfig("approved_voice_generation_id", "The approved tts generation used another voice; send the same voice.")
		}
		if !ta.VoiceSecondsOK(seconds(g.DurationMS)) {
			return "", lengthErr("approved_voice_generation_id", seconds(g.DurationMS))
		}
	}
	return voice, nil
}

// templateCheck applies the preset template rules: not a template of this
// preset → 404 not_found; withdrawn → 404 capability_unavailable.
func (s *Store) templateCheck(cp *fixtures.Capability, config map[string]any) error {
	id := stringAt(config, "template_id")
	if !cp.IsPreset() || id == "" {
		return nil
	}
	t, ok := s.d.Catalog.Template(id)
	if !ok || t.CapabilityID != cp.ID {
		return apierr.NotFound("No template " + id + " of " + cp.ID + "; read GET /presets/" + cp.ID + "/templates.")
	}
	if !t.Live {
		return apierr.CapabilityUnavailable(string(fixtures.StatusRetired), "Template "+id+" was withdrawn; pick a live one from GET /presets/"+cp.ID+"/templates.")
	}
	return nil
}

// moderate is the content check of a submit of workspaceID: a queued
// moderation_unavailable fault (503), the marker word in a moderated field or
// a queued moderation_block fault (422).
func (s *Store) moderate(workspaceID string, cp *fixtures.Capability, config map[string]any) error {
	if _, ok := s.d.Faults.TakeFor(faults.ModerationUnavailable, workspaceID, cp.ID); ok {
		return apierr.ModerationUnavailable("Content checks are not running right now; nothing was held or charged. Try again shortly.")
	}
	for _, f := range cp.ModeratedFields {
		if strings.Contains(stringAt(config, f), fixtures.ModerationMarker) {
			return apierr.ModerationBlocked(nil, "The content policy refused config."+f+". Do not reword it to get past the check.")
		}
	}
	if _, ok := s.d.Faults.TakeFor(faults.ModerationBlock, workspaceID, cp.ID); ok {
		return apierr.ModerationBlocked(nil, "The content policy refused this request. Do not reword it to get past the check.")
	}
	return nil
}

// submission is one submit passing its checks: the request, what the
// catalog says about it (gathered once, by prepare, before any check
// runs), and what the steps decided.
type submission struct {
	p     SubmitParams
	canon string

	// What the catalog says about the request (cp is a.Cap).
	a  catalog.Assessment
	cp *fixtures.Capability
	// approved is the generation named by approved_voice_generation_id.
	approved *catalog.VoiceGeneration

	// Decided by the steps.
	voice  string
	replay *SubmitAnswer
}

// takes is how many generations the submit starts (1 when not priced).
func (sub *submission) takes() int {
	if sub.a.Priced {
		return len(sub.a.Quote.Generations)
	}
	return 1
}

// submitStep is one named check of the submit check order. It runs with
// the workspace lock and s.mu held, on the wallet w.
type submitStep struct {
	name  string
	check func(s *Store, sub *submission, w *ledger.Wallet) error
}

// submitSteps is the interface's submit check order, the first failing
// check wins. Rate limit and scope come first and are the HTTP adapter's
// (mock/api), checked before Submit is called. After pricing, a queued
// provider fault refuses a job before acceptance. Each runs once.
var submitSteps = []submitStep{
	{"max_credits", checkMaxCredits},
	{"spend caps, credits", checkCanHold},
	{"config validity", (*Store).checkConfigValidity},
	{"capability availability and plan", (*Store).checkAvailability},
	{"moderation", (*Store).checkModeration},
	{"upload readiness and ownership", checkOwnership},
	{"in-flight", (*Store).checkInFlight},
	{"blocked request", (*Store).checkBlocked},
	{"estimate change", (*Store).checkEstimateChange},
	{"not priced", checkNotPriced},
	{"pricing", (*Store).checkPricing},
	{"provider", (*Store).checkProvider},
}

// Submit runs the submit checks in the documented order (submitSteps; the
// body shape was checked by the caller) and, when every check passes,
// holds credits and starts the generations. The steps and the acceptance
// run under the workspace lock and s.mu, so what a step decided (the
// wallet can hold the price, the key has no job running) still holds when
// the generations start. Every refusal holds nothing.
func (s *Store) Submit(p SubmitParams) (SubmitAnswer, error) {
	ws, ok := s.d.Registry.Get(p.WorkspaceID)
	if !ok {
		return SubmitAnswer{}, apierr.NotFound("No workspace " + p.WorkspaceID + ".")
	}
	sub := s.prepare(p)
	var pl plan
	if sub.a.Priced {
		pl = s.planFor(p.WorkspaceID, sub.cp, sub.p.Config, sub.a.Resources, outputsOf(sub.cp, sub.a.Quote))
	}
	ws.Lock()
	defer ws.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := ws.Wallet()
	for _, st := range submitSteps {
		if err := st.check(s, sub, w); err != nil {
			return SubmitAnswer{}, err
		}
		if sub.replay != nil {
			bal := w.Available()
			sub.replay.Credits.WalletBalance = &bal
			return *sub.replay, nil
		}
	}
	if !sub.a.Priced {
		return SubmitAnswer{}, sub.a.PriceErr
	}
	return s.acceptLocked(sub, pl, w)
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
	sub := &submission{p: p}
	sub.a = s.d.Catalog.Assess(catalog.Viewer{WorkspaceID: p.WorkspaceID, Plan: p.Plan}, catalog.Request{
		CapabilityID: p.CapabilityID, Config: p.Config, ActorID: p.ActorID, ActorImageAssetID: p.ActorImageAssetID,
		VoiceID: p.VoiceID, ApprovedVoiceGenerationID: p.ApprovedVoiceGenerationID,
	}, p.Variants)
	// A deprecated config name counts as its new name from here on: priced, checked and
	// deduplicated alike (Versioning 6).
	sub.p.Config = sub.a.NormalConfig
	sub.canon = canonical(sub.p)
	sub.cp = sub.a.Cap
	if sub.cp != nil && sub.cp.TalkingActor != nil && p.ApprovedVoiceGenerationID != "" {
		if g, ok := s.LookupVoiceGeneration(p.WorkspaceID, p.ApprovedVoiceGenerationID); ok {
			sub.approved = &g
		}
	}
	return sub
}

func checkMaxCredits(_ *Store, sub *submission, _ *ledger.Wallet) error {
	if !sub.a.Priced || sub.p.MaxCredits <= 0 || sub.a.Quote.MaxCreditsNeeded <= sub.p.MaxCredits {
		return nil
	}
	need := sub.a.Quote.MaxCreditsNeeded
	return apierr.MaxCreditsExceeded(sub.p.MaxCredits, need, fmt.Sprintf(
		"This request needs a hold of %d credits (the estimate plus the 10%% hold pad on every take) and max_credits is %d. Send max_credits %d (the estimate's max_credits_needed); nothing was started.",
		need, sub.p.MaxCredits, need))
}

// checkCanHold is the spend caps and the credits: can the spender hold
// every generation's hold together.
func checkCanHold(_ *Store, sub *submission, w *ledger.Wallet) error {
	if !sub.a.Priced {
		return nil
	}
	if err := w.CanHold(sub.a.Quote.MaxCreditsNeeded, sub.p.spender()); err != nil {
		return err
	}
	return nil
}

// checkConfigValidity: a body key that is not a submit field, the
// capability exists, the config schema, variants,
// fan-out size, what the request names that is malformed, and the talking
// actor rules.
func (s *Store) checkConfigValidity(sub *submission, _ *ledger.Wallet) error {
	cp := sub.cp
	switch {
	case sub.p.BodyKeyErr != nil:
		return sub.p.BodyKeyErr
	case cp == nil:
		return sub.a.Unavailable
	case sub.a.Config != nil:
		return sub.a.Config
	case sub.a.Variants != nil:
		return sub.a.Variants
	}
	if cp.FanOutField != "" {
		if arr, _ := sub.p.Config[cp.FanOutField].([]any); len(arr) > fixtures.MaxFanOutValues {
			return apierr.InvalidConfig("config."+cp.FanOutField, fmt.Sprintf("config.%s takes at most %d values, one job each.", cp.FanOutField, fixtures.MaxFanOutValues))
		}
	}
	if apierr.CodeOf(sub.a.ResourcesErr) == apierr.CodeInvalidConfig {
		return sub.a.ResourcesErr
	}
	voice, err := s.talkCheck(cp, sub.p, sub.a.Resources, sub.approved)
	sub.voice = voice
	return err
}

// checkAvailability: the plan, and a preset's template being live (a
// template that is not this preset's is reported at the ownership step).
func (s *Store) checkAvailability(sub *submission, _ *ledger.Wallet) error {
	if err := catalog.PlanAllows(sub.cp, sub.a.Viewer); err != nil {
		return err
	}
	if err := s.templateCheck(sub.cp, sub.p.Config); err != nil {
		if apierr.CodeOf(err) == apierr.CodeCapabilityUnavailable {
			return err
		}
		if sub.a.ResourcesErr == nil {
			sub.a.ResourcesErr = err // not_found: reported at the ownership step
		}
	}
	return nil
}

// checkModeration: the content check, then a named upload it flagged.
func (s *Store) checkModeration(sub *submission, _ *ledger.Wallet) error {
	if err := s.moderate(sub.p.WorkspaceID, sub.cp, sub.p.Config); err != nil {
		return err
	}
	if apierr.CodeOf(sub.a.ResourcesErr) == apierr.CodeModerationBlocked {
		return sub.a.ResourcesErr
	}
	return nil
}

// checkOwnership: the uploads, actor, voice, approved generation and
// template the request names exist, are the caller's and are ready.
func checkOwnership(_ *Store, sub *submission, _ *ledger.Wallet) error {
	return sub.a.ResourcesErr
}

// checkInFlight: a replay of the key's running identical request (sets
// sub.replay), the key's slot, an identical request of another key, and
// render concurrency.
func (s *Store) checkInFlight(sub *submission, _ *ledger.Wallet) error {
	replay, err := s.inFlightLocked(sub.p, sub.canon, sub.takes())
	sub.replay = replay
	return err
}

func (s *Store) checkBlocked(sub *submission, _ *ledger.Wallet) error {
	return s.blockedLocked(sub.p.KeyID, sub.canon)
}

func (s *Store) checkEstimateChange(sub *submission, _ *ledger.Wallet) error {
	if _, ok := s.d.Faults.TakeFor(faults.EstimateChanged, sub.p.WorkspaceID, sub.cp.ID); ok {
		return apierr.EstimateChanged("The published price changed while this request was placed; estimate again and resubmit. Nothing was held.")
	}
	return nil
}

func checkNotPriced(_ *Store, sub *submission, _ *ledger.Wallet) error {
	if sub.cp.Pricing.NotPriced {
		return apierr.NotPriced("Capability " + sub.cp.ID + " has no published price yet; it cannot be run.")
	}
	return nil
}

func (s *Store) checkPricing(sub *submission, _ *ledger.Wallet) error {
	return s.d.Catalog.PricingAvailable(sub.p.WorkspaceID, sub.cp.ID)
}

func (s *Store) checkProvider(sub *submission, _ *ledger.Wallet) error {
	if _, ok := s.d.Faults.TakeFor(faults.ProviderUnavailable, sub.p.WorkspaceID, sub.cp.ID); ok {
		return apierr.ProviderUnavailable("The provider for " + sub.cp.ID + " failed before the job was accepted; nothing was held. Try again.")
	}
	return nil
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
			return nil, apierr.SubmissionInFlight(apierr.InFlight{GenerationID: first.id, Status: string(first.status)}, 0,
				"This key already has generation "+first.id+" running; wait for it (GET /generations/"+first.id+"/wait) before submitting another.")
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
			return nil, apierr.SubmissionInFlight(apierr.InFlight{GenerationID: g.id, Status: string(g.status)}, wait,
				"An identical request from another key of this workspace is running as "+g.id+"; read it instead, or retry after retry_after_seconds.")
		}
	}
	if limit := s.maxRunsLocked(p.WorkspaceID); running+takes > limit {
		return nil, apierr.RateLimited(0, fmt.Sprintf("The workspace has %d renders running and allows %d at once; try again when one finishes.", running, limit))
	}
	return nil, nil
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
	return apierr.RequestBlocked(BlockedReason, wait, fmt.Sprintf(
		"This exact request failed %d times in a row; it is blocked for %d more seconds. Change the request instead of retrying it.", BlockAfterFailures, wait))
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
