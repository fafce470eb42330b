package catalog

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Upload is what pricing needs to know about an upload named in a request.
type Upload struct {
	AssetID string
	// Kind is image, video or audio.
	Kind string
	// Ready is true once the upload is finalized and its scan found it
	// clean; false answers input_not_ready (unless Flagged).
	Ready bool
	// Flagged is true when the content check refused the file (scan_status
	// flagged): it is never usable and answers 422 moderation_blocked.
	Flagged bool
	// DurationMS is the measured length of audio and video; nil when unknown
	// or not applicable.
	DurationMS *int64
}

// AssetLookup finds uploads; the uploads package implements it (a nil
// lookup treats every id as unknown). Implementations may record a
// measured duration when asked (the estimate's only write).
type AssetLookup interface {
	// LookupUpload returns the upload assetID when it exists and belongs to
	// workspaceID; ok false when it does not exist or is another
	// workspace's (both answer not_found).
	LookupUpload(workspaceID, assetID string) (u Upload, ok bool)
}

// VoiceGeneration is what pricing needs to know about an approved voice
// (the tts generation named by approved_voice_generation_id).
type VoiceGeneration struct {
	GenerationID string
	CapabilityID string
	// Completed is true when the generation finished successfully.
	Completed bool
	// Script is the tts config.script; VoiceID the voice it spoke in.
	Script  string
	VoiceID string
	// DurationMS is the length of the audio output.
	DurationMS int64
}

// VoiceGenerationLookup finds generations by id; the jobs package
// implements it (a nil lookup treats every id as unknown).
type VoiceGenerationLookup interface {
	// LookupVoiceGeneration returns generationID when it exists and belongs
	// to workspaceID.
	LookupVoiceGeneration(workspaceID, generationID string) (g VoiceGeneration, ok bool)
}

// Request is what is priced: an estimate body (and the pricing part of a
// submit body). Empty resource fields are absent.
type Request struct {
	CapabilityID              string
	Config                    map[string]any
	ActorID                   string
	ActorImageAssetID         string
	VoiceID                   string
	ApprovedVoiceGenerationID string
}

// Line is one breakdown line: one generation.
type Line struct {
	Label    string               `json:"label"`
	Unit     fixtures.PricingUnit `json:"unit"`
	Quantity float64              `json:"quantity"`
	Credits  int64                `json:"credits"`
	Hold     int64                `json:"-"`
	FanOut   string               `json:"-"` // the fan-out value of this generation, or ""
	Take     int                  `json:"-"` // 1-based take index of a batch, else 0
}

// Quote is the price of a request.
type Quote struct {
	CapabilityID string
	// Generations is one line per generation the request makes.
	Generations []Line
	// Credits is the sum of the generations' prices.
	Credits int64
	// MaxCreditsNeeded is the sum of every take's padded price
	// (ceil(take price x 1.1) each).
	MaxCreditsNeeded int64
	// IsCeiling is true when the quantity is an upper bound.
	IsCeiling bool
	// Seconds is the length of one output when the capability makes audio
	// or video; nil otherwise.
	Seconds *float64
	// Takes is the number of takes (count, variants or fan-out values).
	Takes int
}

// Estimate is the estimate answer without ok (openapi EstimateResponse).
type Estimate struct {
	CapabilityID     string   `json:"capability_id"`
	Credits          int64    `json:"credits"`
	MaxCreditsNeeded int64    `json:"max_credits_needed"`
	IsCeiling        bool     `json:"is_ceiling"`
	Breakdown        []Line   `json:"breakdown"`
	Seconds          *float64 `json:"seconds,omitempty"`
	Note             string   `json:"note"`
	Summary          string   `json:"summary"`
}

// Pad returns ceil(price x 1.1) in integer arithmetic.
func Pad(price int64) int64 { return (price*11 + 9) / 10 }

// Runnable checks that capability id can be estimated or run by anyone: 404
// capability_unavailable with capability_status unknown (not in the
// catalogue, not offered to agents, or catalogue status unknown), retired or
// coming_soon. It does not check the plan (PlanAllows).
func (c *Catalog) Runnable(id string) (*fixtures.Capability, error) {
	cp, err := c.offered(id)
	if err != nil {
		return nil, err
	}
	if cp.Status == fixtures.StatusUnknown {
		return nil, apierr.CapabilityUnavailable(string(fixtures.StatusUnknown), "Capability "+id+" has an unknown status and cannot be estimated or run now.")
	}
	return cp, nil
}

// RunnableFor is Runnable as viewer v sees the catalogue: a copy listed in v's workspace only
// (copies.go) is coming soon there, so estimating or running it answers 404 capability_unavailable
// with capability_status coming_soon, as its detail does.
func (c *Catalog) RunnableFor(v Viewer, id string) (*fixtures.Capability, error) {
	if _, ok := c.copyOf(v.WorkspaceID, id); ok {
		return nil, apierr.CapabilityUnavailable(string(fixtures.StatusComingSoon), "Capability "+id+" is coming soon and cannot be used yet.")
	}
	return c.Runnable(id)
}

// PlanAllows answers 403 required_plan (capability_status requires_plan)
// when cp needs a plan the viewer does not have.
func PlanAllows(cp *fixtures.Capability, v Viewer) error {
	if cp.Status == fixtures.StatusRequiresPlan && !v.Plan.Covers(cp.RequiredPlan) {
		return apierr.RequiredPlan(string(cp.RequiredPlan), string(fixtures.StatusRequiresPlan),
			"Capability "+cp.ID+" needs the "+string(cp.RequiredPlan)+" plan; this workspace is on "+string(v.Plan)+".")
	}
	return nil
}

// CheckConfig checks req against cp as submit does: the config schema
// (unknown key, wrong type, missing required key, bounds; invalid_config
// naming the field, e.g. "config.aspect_ratio"), count above the
// capability's ceiling, and the resource fields the capability cannot take
// (approved_voice_generation_id on anything but an approved-tts talking
// actor).
func (c *Catalog) CheckConfig(cp *fixtures.Capability, req Request) error {
	if err := c.checkRemovedValues(cp.ID, req.Config); err != nil {
		return err
	}
	if err := c.Fixtures().Validate(cp.ID, req.Config); err != nil {
		var ce *fixtures.ConfigError
		if errors.As(err, &ce) {
			e := apierr.InvalidConfig(ce.Field, ce.Message)
			return e
		}
		return apierr.Internal(err, "The service could not check the config.")
	}
	if n, ok := intValue(req.Config["count"]); ok {
		if ceiling := int64(min(cp.MaxVariants, fixtures.MaxVariantsCeiling)); n > ceiling {
			return apierr.InvalidConfig("config.count", fmt.Sprintf("config.count must be at most %d for %s; it is refused, never clamped.", ceiling, cp.ID))
		}
	}
	if req.ApprovedVoiceGenerationID != "" && (cp.TalkingActor == nil || cp.TalkingActor.VoiceMode != fixtures.VoiceModeApprovedTTS) {
		return apierr.InvalidConfig("approved_voice_generation_id", cp.ID+" does not take approved_voice_generation_id.")
	}
	return nil
}

var assetIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(fixtures.AssetIDPattern) })

// AssetIDs returns the upload ids a config names, in order of appearance
// (sorted keys), without repeats: plain id arrays and file objects'
// assetId.
func AssetIDs(config map[string]any) []string {
	var out []string
	add := func(s string) {
		if assetIDPattern().MatchString(s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if s, ok := x[k].(string); ok && k == "assetId" {
					add(s)
					continue
				}
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					add(s)
					continue
				}
				walk(e)
			}
		}
	}
	walk(config)
	return out
}

// Resources are the looked-up things a request names.
type Resources struct {
	Uploads    map[string]Upload
	ApprovedTT *VoiceGeneration
}

// CheckResources looks up what req names for the viewer: uploads in config
// and actor_image_asset_id (422 moderation_blocked naming the ones the
// content check flagged, then 404 not_found naming the missing ones, both
// in asset_ids), actor_id (a visible actor), voice_id and config.voiceId (a
// visible voice), approved_voice_generation_id (404 not_found when unknown;
// 400 invalid_config when it is not a completed tts generation with the
// same script and voice); then readiness (409 input_not_ready naming the
// uploads not yet finalized and scanned).
func (c *Catalog) CheckResources(v Viewer, req Request) (Resources, error) {
	res := Resources{Uploads: map[string]Upload{}}
	ids := AssetIDs(req.Config)
	if req.ActorImageAssetID != "" && !slices.Contains(ids, req.ActorImageAssetID) {
		ids = append(ids, req.ActorImageAssetID)
	}
	var missing, notReady, flagged []string
	for _, id := range ids {
		var u Upload
		ok := false
		if c.d.Assets != nil {
			u, ok = c.d.Assets.LookupUpload(v.WorkspaceID, id)
		}
		if !ok {
			missing = append(missing, id)
			continue
		}
		res.Uploads[id] = u
		switch {
		case u.Flagged:
			flagged = append(flagged, id)
		case !u.Ready:
			notReady = append(notReady, id)
		}
	}
	if len(flagged) > 0 {
		// Moderation comes before upload readiness and ownership (CHECK-001).
		return res, apierr.ModerationBlocked(flagged, "Upload "+strings.Join(flagged, ", ")+" was refused by the content check and is never usable; upload another file.")
	}
	if len(missing) > 0 {
		e := apierr.NotFound("No upload " + strings.Join(missing, ", ") + " in this workspace; upload and finalize the file first.")
		e.AssetIDs = missing
		return res, e
	}
	if req.ActorID != "" {
		a, ok := c.Actor(req.ActorID)
		if !ok || !c.ActorVisible(a, v) {
			return res, apierr.NotFound("No actor " + quote(req.ActorID) + " for this workspace; read GET /actors.")
		}
	}
	voice := req.VoiceID
	for _, id := range []string{req.VoiceID, stringValue(req.Config["voiceId"])} {
		if id == "" {
			continue
		}
		vc, ok := c.Voice(id)
		if !ok || !c.VoiceVisible(vc, v) {
			return res, apierr.NotFound("No voice " + quote(id) + " for this workspace; read GET /voices.")
		}
		if voice == "" {
			voice = id
		}
	}
	if id := req.ApprovedVoiceGenerationID; id != "" {
		var g VoiceGeneration
		ok := false
		if c.d.VoiceGenerations != nil {
			g, ok = c.d.VoiceGenerations.LookupVoiceGeneration(v.WorkspaceID, id)
		}
		if !ok {
			return res, apierr.NotFound("No generation " + quote(id) + " in this workspace.")
		}
		switch {
		case g.CapabilityID != "tts" || !g.Completed:
			return res, apierr.InvalidConfig("approved_voice_generation_id", "approved_voice_generation_id must name a completed tts generation.")
		case g.Script != stringValue(req.Config["script"]):
			return res, apierr.InvalidConfig("approved_voice_generation_id", "The approved tts generation spoke a different script; send the same script.")
		case voice != "" && g.VoiceID != voice:
			return res, apierr.InvalidConfig("approved_voice_generation_id", "The approved tts generation used another voice; send the same voice_id.")
		}
		res.ApprovedTT = &g
	}
	if len(notReady) > 0 {
		return res, apierr.InputNotReady(notReady, "Upload "+strings.Join(notReady, ", ")+" has not finished its scan; finalize it and try again.")
	}
	return res, nil
}

// NewEstimate is the estimate answer of quote q of cp (package admission runs the checks before
// it).
func NewEstimate(cp *fixtures.Capability, q Quote) Estimate {
	return Estimate{
		CapabilityID: cp.ID, Credits: q.Credits, MaxCreditsNeeded: q.MaxCreditsNeeded, IsCeiling: q.IsCeiling,
		Breakdown: q.Generations, Seconds: q.Seconds, Note: note(cp, q), Summary: summary(cp, q),
	}
}

func perUnit(p fixtures.Pricing) string {
	h := p.CreditsPerUnitHundredths()
	if h%100 == 0 {
		return fmt.Sprintf("%d", h/100)
	}
	if h%10 == 0 {
		return fmt.Sprintf("%d.%d", h/100, (h%100)/10)
	}
	return fmt.Sprintf("%d.%02d", h/100, h%100)
}

var unitNames = map[fixtures.PricingUnit]string{
	fixtures.UnitSecond: "second", fixtures.UnitImage: "image", fixtures.UnitThousandChars: "thousand characters",
	fixtures.UnitMillionTokens: "million tokens", fixtures.UnitRequest: "request",
}

func note(cp *fixtures.Capability, q Quote) string {
	s := fmt.Sprintf("Priced at %s credits per %s", perUnit(cp.Pricing), unitNames[cp.Pricing.Unit])
	if cp.Pricing.MinCredits > 0 {
		s += fmt.Sprintf(", at least %d per generation", cp.Pricing.MinCredits)
	}
	s += "."
	if q.IsCeiling {
		s += " The quantity is estimated from the text, so credits is an upper bound; the charge can be lower."
	}
	if len(q.Generations) > 1 {
		s += fmt.Sprintf(" %d generations, each priced and padded on its own.", len(q.Generations))
	}
	return s
}

func summary(cp *fixtures.Capability, q Quote) string {
	verb := "costs"
	if q.IsCeiling {
		verb = "costs at most"
	}
	return fmt.Sprintf("This %s request %s %d credits; submit with max_credits %d. Nothing was held or charged.", cp.ID, verb, q.Credits, q.MaxCreditsNeeded)
}
