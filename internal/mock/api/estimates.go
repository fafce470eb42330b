package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// estimateBody is the strict POST /estimates body.
type estimateBody struct {
	CapabilityID              *string         `json:"capability_id"`
	Config                    json.RawMessage `json:"config"`
	ActorID                   *string         `json:"actor_id"`
	ActorImageAssetID         *string         `json:"actor_image_asset_id"`
	VoiceID                   *string         `json:"voice_id"`
	ApprovedVoiceGenerationID *string         `json:"approved_voice_generation_id"`
}

// refusedEstimateKeys are spend-call keys an estimate body must not carry.
var refusedEstimateKeys = map[string]string{
	"max_credits": "Do not send max_credits to POST /estimates; the answer's max_credits_needed is the value to send on submit.",
	"variants":    "Do not send variants to POST /estimates; price several takes with count inside config.",
}

// DecodeEstimateRequest reads a strict estimate body: capability_id
// (non-empty string) and config (object) required; actor_id,
// actor_image_asset_id, voice_id and approved_voice_generation_id optional
// strings; any other key (max_credits and variants included) is 400
// invalid_config naming it.
func DecodeEstimateRequest(r *http.Request) (catalog.Request, error) {
	var b estimateBody
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && refusedEstimateKeys[ae.Field] != "" {
			return catalog.Request{}, apierr.InvalidConfig(ae.Field, refusedEstimateKeys[ae.Field])
		}
		return catalog.Request{}, err
	}
	if b.CapabilityID == nil || *b.CapabilityID == "" {
		return catalog.Request{}, apierr.InvalidConfig("capability_id", "capability_id is required: a capability id from GET /capabilities.")
	}
	raw := bytes.TrimSpace(b.Config)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return catalog.Request{}, apierr.InvalidConfig("config", "config is required: an object, exactly as it will be submitted.")
	}
	if raw[0] != '{' {
		return catalog.Request{}, apierr.InvalidConfig("config", "config must be an object.")
	}
	var config map[string]any
	if err := json.Unmarshal(raw, &config); err != nil {
		return catalog.Request{}, apierr.InvalidConfig("config", "config must be an object.")
	}
	req := catalog.Request{CapabilityID: *b.CapabilityID, Config: config}
	for _, f := range []struct {
		dst *string
		src *string
	}{
		{&req.ActorID, b.ActorID}, {&req.ActorImageAssetID, b.ActorImageAssetID},
		{&req.VoiceID, b.VoiceID}, {&req.ApprovedVoiceGenerationID, b.ApprovedVoiceGenerationID},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return req, nil
}

// estimate serves POST /api/v1/estimates (read, agent_estimate): the body
// is read first, then the estimate checks run (package admission). Nothing is held,
// charged or started.
func (h catalogHandlers) estimate(w http.ResponseWriter, r *http.Request) error {
	req, err := DecodeEstimateRequest(r)
	if err != nil {
		return err
	}
	adm := h.adm
	adm.Request = Caller(r.Context()).TestInput
	e, err := adm.Estimate(ViewerOf(r), req)
	if err != nil {
		return err
	}
	if e.Breakdown == nil {
		e.Breakdown = []catalog.Line{}
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
		catalog.Estimate
	}{true, e})
}
