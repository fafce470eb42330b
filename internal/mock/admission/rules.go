package admission

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
)

// One function per rule, each with its one message. The lookups a rule reads (a capability, a
// config schema, an upload) are the catalogue's; what is refused, and how it is said, is here.

// MaxCredits is the max_credits step (rules SUBMIT-014, CHECK-007, VAR-009, WF-009, ERR-012):
// 402 max_credits_exceeded when the padded hold need is above the cap sent. steps is the number
// of workflow steps the hold sums over (0: a submit). A cap of 0 or less is no cap.
func MaxCredits(sent, need int64, steps int) error {
	if sent <= 0 && steps == 0 || need <= sent {
		return nil
	}
	if steps > 0 {
		return apierr.MaxCreditsExceeded(sent, need, fmt.Sprintf(
			"This workflow needs %d credits: every step padded by 10%% (the sum over its %d steps of ceil(price x 1.1)), and max_credits is %d. Send max_credits %d; nothing was started.",
			need, steps, sent, need))
	}
	return apierr.MaxCreditsExceeded(sent, need, fmt.Sprintf(
		"This request needs a hold of %d credits (the estimate plus the 10%% hold pad on every take) and max_credits is %d. Send max_credits %d (the estimate's max_credits_needed); nothing was started.",
		need, sent, need))
}

// Hold is the spend caps and credits steps (rules CHECK-008, CHECK-009, ERR-014, ERR-018): can
// sp hold amount on w (ledger.Wallet.CanHold: spend_limit_exceeded, then insufficient_credits).
// The caller holds the workspace lock.
func Hold(w *ledger.Wallet, amount int64, sp ledger.Spender) error {
	return w.CanHold(amount, sp)
}

// Variants checks variants (nil: absent) against the capability (rules VAR-002, VAR-003, VAR-004,
// VAR-011, TALK-017): refused (never clamped) on a capability that makes one result, or outside 1
// to the smaller of its ceiling and 4.
func Variants(cp *fixtures.Capability, v *int) error {
	if v == nil {
		return nil
	}
	if cp.VariantMode == fixtures.VariantNone || cp.MaxVariants <= 1 {
		return apierr.InvalidConfig("variants", cp.ID+" makes one result and does not take variants; leave it out.")
	}
	ceiling := min(cp.MaxVariants, fixtures.MaxVariantsCeiling)
	if *v < 1 || *v > ceiling {
		return apierr.InvalidConfig("variants", fmt.Sprintf("variants must be 1 to %d for %s; it is refused, never clamped.", ceiling, cp.ID))
	}
	return nil
}

// FanOut checks the size of a fan-out list (rule VAR-014): at most fixtures.MaxFanOutValues
// values, one job each.
func FanOut(cp *fixtures.Capability, config map[string]any) error {
	if cp.FanOutField == "" {
		return nil
	}
	if arr, _ := config[cp.FanOutField].([]any); len(arr) > fixtures.MaxFanOutValues {
		return apierr.InvalidConfig("config."+cp.FanOutField, fmt.Sprintf("config.%s takes at most %d values, one job each.", cp.FanOutField, fixtures.MaxFanOutValues))
	}
	return nil
}

// NotPriced is the not priced step (rules EST-020, CHECK-017, ERR-033): 409 not_priced for a
// capability without a published price; nil otherwise.
func NotPriced(cp *fixtures.Capability) error {
	if !cp.Pricing.NotPriced {
		return nil
	}
	return apierr.NotPriced("Capability " + cp.ID + " has no published price yet; it cannot be estimated or run.")
}

// PricingAvailable is the pricing step (rules EST-021, ERR-042): a queued pricing_unavailable
// fault for the workspace and capability is consumed and answers 503 pricing_unavailable.
func (d Deps) PricingAvailable(workspaceID, capabilityID string) error {
	if d.take(faults.PricingUnavailable, workspaceID, capabilityID) {
		return apierr.PricingUnavailable("Pricing failed for a moment; nothing was charged. Try again.")
	}
	return nil
}

// EstimateChanged is the estimate change step (rules SUBMIT-033, CHECK-016, ERR-032): a queued
// estimate_changed fault answers 409 estimate_changed.
func (d Deps) EstimateChanged(workspaceID, capabilityID string) error {
	if d.take(faults.EstimateChanged, workspaceID, capabilityID) {
		return apierr.EstimateChanged("The published price changed while this request was placed; estimate again and resubmit. Nothing was held.")
	}
	return nil
}

// ProviderAvailable is the mock's own last submit step (rule ERR-040): a queued
// provider_unavailable fault refuses the job before acceptance with 502 provider_unavailable.
func (d Deps) ProviderAvailable(workspaceID, capabilityID string) error {
	if d.take(faults.ProviderUnavailable, workspaceID, capabilityID) {
		return apierr.ProviderUnavailable("The provider for " + capabilityID + " failed before the job was accepted; nothing was held. Try again.")
	}
	return nil
}

// Moderation is the submit's content check (rules SUBMIT-032, SUBMIT-034, CHECK-012, ERR-035,
// ERR-041): a queued moderation_unavailable fault (503), a moderated config field carrying the
// marker word (Moderated, 422), or a queued moderation_block fault (422).
func (d Deps) Moderation(workspaceID string, cp *fixtures.Capability, config map[string]any) error {
	if d.take(faults.ModerationUnavailable, workspaceID, cp.ID) {
		return apierr.ModerationUnavailable("Content checks are not running right now; nothing was held or charged. Try again shortly.")
	}
	if err := Moderated(cp, config, func(f string) string { return "config." + f }); err != nil {
		return err
	}
	if d.take(faults.ModerationBlock, workspaceID, cp.ID) {
		return apierr.ModerationBlocked(nil, "The content policy refused this request. Do not reword it to get past the check.")
	}
	return nil
}

// Moderated is the content policy on the moderated fields of cp (rules SUBMIT-034, ERR-035): 422
// moderation_blocked naming the first field whose text carries fixtures.ModerationMarker, as
// name(field) calls it to the client (config.prompt on a submit, the run input on an invoke).
func Moderated(cp *fixtures.Capability, config map[string]any, name func(field string) string) error {
	for _, f := range cp.ModeratedFields {
		if strings.Contains(stringAt(config, f), fixtures.ModerationMarker) {
			return apierr.ModerationBlocked(nil, "The content policy refused "+name(f)+". Do not reword it to get past the check.")
		}
	}
	return nil
}

// Template is the preset template check (rules PRESET-019, PRESET-020): not a template of this
// preset answers 404 not_found (reported at the ownership step); withdrawn answers 404
// capability_unavailable (at the availability step).
func Template(cat *catalog.Catalog, cp *fixtures.Capability, config map[string]any) error {
	id := stringAt(config, "template_id")
	if !cp.IsPreset() || id == "" {
		return nil
	}
	t, ok := cat.Template(id)
	if !ok || t.CapabilityID != cp.ID {
		return apierr.NotFound("No template " + id + " of " + cp.ID + "; read GET /presets/" + cp.ID + "/templates.")
	}
	if !t.Live {
		return apierr.CapabilityUnavailable(string(fixtures.StatusRetired), "Template "+id+" was withdrawn; pick a live one from GET /presets/"+cp.ID+"/templates.")
	}
	return nil
}

// TalkingActor applies the talking-actor rules at config validity (rules TALK-002, TALK-006,
// TALK-007, TALK-008, TALK-009, TALK-012, TALK-013, TALK-014, TALK-015, TALK-020): voice
// resolution, approval match, voice_audio exclusivity and the voice length limits, all before any
// hold. res are the request's resources; approved is the generation named by
// approved_voice_generation_id (nil when none or unknown). It returns the voice spoken ("" when a
// recording drives the actor or cp is no talking actor).
func TalkingActor(cat *catalog.Catalog, cp *fixtures.Capability, req catalog.Request, res catalog.Resources, approved *catalog.VoiceGeneration) (string, error) {
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
		if req.ApprovedVoiceGenerationID != "" {
			return "", apierr.InvalidConfig("approved_voice_generation_id", cp.ID+" makes its own voice from the script and does not take approved_voice_generation_id.")
		}
		secs := fixtures.ScriptSeconds(stringAt(req.Config, "script"))
		if !ta.VoiceSecondsOK(secs) {
			return "", lengthErr("config.script", secs)
		}
		return "", nil
	}
	if _, has := req.Config["voice_audio"]; has {
		switch {
		case !ta.AcceptsVoiceAudio:
			return "", apierr.InvalidConfig("config.voice_audio", cp.ID+" does not take a recording.")
		case stringAt(req.Config, "script") != "":
			return "", apierr.InvalidConfig("config.voice_audio", "Send config.voice_audio or a script, not both.")
		case req.VoiceID != "" || stringAt(req.Config, "voiceId") != "":
			return "", apierr.InvalidConfig("voice_id", "A recording in config.voice_audio replaces the voice; send no voice_id.")
		case req.ApprovedVoiceGenerationID != "":
			return "", apierr.InvalidConfig("approved_voice_generation_id", "A recording in config.voice_audio replaces the approved tts; send one or the other.")
		}
		var ms int64
		known := true
		arr, _ := req.Config["voice_audio"].([]any)
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
	if req.ApprovedVoiceGenerationID == "" {
		return "", apierr.InvalidConfig("approved_voice_generation_id", "Submit tts with the script and voice first, wait for it, then send its generation_id as approved_voice_generation_id.")
	}
	voice := req.VoiceID
	if voice == "" {
		voice = stringAt(req.Config, "voiceId")
	}
	if voice == "" && req.ActorID != "" {
		if a, ok := cat.Actor(req.ActorID); ok && a.DefaultVoiceID != nil {
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

// StepConfig is config validity of one workflow step (rule WF-008's invoke checks, CHECK-010):
// catalog.CheckConfig of the step's resolved config, an invalid_config refusal renamed to the run
// input field(key) the config key is bound to.
func StepConfig(cat *catalog.Catalog, cp *fixtures.Capability, req catalog.Request, nodeID string, field func(key string) string) error {
	err := cat.CheckConfig(cp, req)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Code == apierr.CodeInvalidConfig {
		return apierr.InvalidConfig(field(fieldKey(ae.Field)), "Step "+nodeID+" ("+cp.ID+") cannot take these inputs: "+ae.Message)
	}
	return err
}

// StepVoiceLength is the talking-actor voice length of one workflow step (rules TALK-012,
// TALK-013): the approved tts the step is fed must speak within cp's limits; field is the run
// input the script comes from.
func StepVoiceLength(cp *fixtures.Capability, nodeID, field string, approved *catalog.VoiceGeneration) error {
	ta := cp.TalkingActor
	if ta == nil || approved == nil {
		return nil
	}
	secs := float64(approved.DurationMS) / 1000
	if ta.VoiceSecondsOK(secs) {
		return nil
	}
	return apierr.InvalidConfig(field, fmt.Sprintf("Step %s (%s) takes a voice within its length limits; this script speaks for about %.1f seconds.", nodeID, cp.ID, secs))
}

// InFlightOwn is the in-flight step for the key's own running job (rules SUBMIT-018, SUBMIT-019,
// SUBMIT-023, ERR-015): 409 submission_in_flight naming it.
func InFlightOwn(generationID, status string) error {
	return apierr.SubmissionInFlight(apierr.InFlight{GenerationID: generationID, Status: status}, 0,
		"This key already has generation "+generationID+" running; wait for it (GET /generations/"+generationID+"/wait) before submitting another.")
}

// InFlightIdentical is the in-flight step for an identical request of another key of the
// workspace (rules SUBMIT-024, ERR-010): 409 submission_in_flight with retry_after_seconds wait.
func InFlightIdentical(generationID, status string, wait int) error {
	return apierr.SubmissionInFlight(apierr.InFlight{GenerationID: generationID, Status: status}, wait,
		"An identical request from another key of this workspace is running as "+generationID+"; read it instead, or retry after retry_after_seconds.")
}

// RenderConcurrency is the last part of the in-flight step (rules ERR-043, RATE-018): 429
// rate_limited without retry_after_seconds when running + takes renders would exceed limit.
func RenderConcurrency(running, takes, limit int) error {
	if running+takes <= limit {
		return nil
	}
	return apierr.RateLimited(0, fmt.Sprintf("The workspace has %d renders running and allows %d at once; try again when one finishes.", running, limit))
}

// RequestBlocked is the blocked request step (rules CHECK-015, ERR-019, ERR-038): 429
// request_blocked after failures failed jobs of the same request in a row, for wait more seconds.
func RequestBlocked(reason string, failures, wait int) error {
	return apierr.RequestBlocked(reason, wait, fmt.Sprintf(
		"This exact request failed %d times in a row; it is blocked for %d more seconds. Change the request instead of retrying it.", failures, wait))
}

func stringAt(config map[string]any, name string) string {
	s, _ := config[name].(string)
	return s
}

// fieldKey is the first key of a "config.key..." field path.
func fieldKey(field string) string {
	f := strings.TrimPrefix(field, "config.")
	if i := strings.IndexAny(f, ".["); i >= 0 {
		f = f[:i]
	}
	return f
}
