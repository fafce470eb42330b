package framework

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Catalogue states the operator of a server made in their app or catalogue admin, declared in the
// profile by id: the suite cannot discover them (none is listed) and makes them only through the
// control API otherwise. Each accessor skips the spec, naming the setting, when the profile lacks
// it.

// WithheldCapabilityID is the profile's withheld_capability_id: a capability withheld from agents
// (not listed; reading, estimating or running it answers 404 capability_unavailable).
func (s *Spec) WithheldCapabilityID() string {
	GinkgoHelper()
	id := s.f.cfg.WithheldCapabilityID
	if id == "" {
		SkipFor(NotDeclared("unsupported: needs a capability withheld from agents, which is not listed and which only the " +
			"control API or the operator's catalogue makes: set withheld_capability_id in the profile"))
	}
	return id
}

// InternalPresetID is the profile's internal_preset_id: a preset withheld from agents (internal),
// which GET /presets/{id}/templates refuses 404 not_found.
func (s *Spec) InternalPresetID() string {
	GinkgoHelper()
	id := s.f.cfg.InternalPresetID
	if id == "" {
		SkipFor(NotDeclared("unsupported: needs an internal preset (withheld from agents), which is not listed and which " +
			"only the control API or the operator's catalogue makes: set internal_preset_id in the profile"))
	}
	return id
}

// OwnHiddenActors is a client of own_catalogue_key, the profile's ready own actor (own_actor_id)
// and the two actors of that workspace that are hidden: own_processing_actor_id (still
// processing) and own_disabled_actor_id (disabled). It skips, naming the settings, unless the
// profile declares them all.
func (s *Spec) OwnHiddenActors() (c *Client, ready, processing, disabled string) {
	GinkgoHelper()
	cfg := s.f.cfg
	if cfg.OwnProcessingActorID == "" || cfg.OwnDisabledActorID == "" || cfg.OwnCatalogueKey == "" || cfg.OwnActorID == "" {
		SkipFor(NotDeclared("unsupported: needs a workspace's own actors still processing and disabled, which only the " +
			"control API or the operator's app makes: set own_catalogue_key, own_actor_id, " +
			"own_processing_actor_id and own_disabled_actor_id in the profile"))
	}
	c, ready, _ = s.OwnCatalogue()
	return c, ready, cfg.OwnProcessingActorID, cfg.OwnDisabledActorID
}

// OwnDeactivatedVoice is a client of own_catalogue_key, the profile's active cloned voice
// (own_cloned_voice_id) and own_deactivated_voice_id, a voice cloned in that workspace and
// deactivated. It skips, naming the settings, unless the profile declares them all.
func (s *Spec) OwnDeactivatedVoice() (c *Client, active, deactivated string) {
	GinkgoHelper()
	cfg := s.f.cfg
	if cfg.OwnDeactivatedVoiceID == "" || cfg.OwnCatalogueKey == "" || cfg.OwnClonedVoiceID == "" {
		SkipFor(NotDeclared("unsupported: needs a workspace's deactivated cloned voice, which only the control API or the " +
			"operator's app makes: set own_catalogue_key, own_cloned_voice_id and own_deactivated_voice_id " +
			"in the profile"))
	}
	c, _, active = s.OwnCatalogue()
	return c, active, cfg.OwnDeactivatedVoiceID
}
