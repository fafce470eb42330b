package framework

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// OwnCatalogue is the profile's own-catalogue fixtures: a client of own_catalogue_key, a workspace
// (not key's) in which the operator made an actor without tags (own_actor_id) and cloned a voice
// (own_cloned_voice_id), the workspace's own, which only their app makes without the control API.
// It skips the spec, naming the settings, unless the profile declares all three. The spec reads
// with the client, or spends what it says.
func (s *Spec) OwnCatalogue() (c *Client, actorID, clonedVoiceID string) {
	GinkgoHelper()
	cfg := s.f.cfg
	if cfg.OwnCatalogueKey == "" || cfg.OwnActorID == "" || cfg.OwnClonedVoiceID == "" {
		SkipFor(NotDeclared("unsupported: needs a workspace's own actor and cloned voice, which only the control API or the operator's app makes: set own_catalogue_key, own_actor_id and own_cloned_voice_id in the profile"))
	}
	c = s.f.client(cfg.OwnCatalogueKey)
	c.shared = true
	return c, cfg.OwnActorID, cfg.OwnClonedVoiceID
}
