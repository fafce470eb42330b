package control

import (
	"net/http"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock/api/wire"
	"github.com/mediaspec/mediaspec/mock/apierr"
	"github.com/mediaspec/mediaspec/mock/catalog"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// RegisterCatalog adds the catalogue operations (spec/control.yaml tag catalogue) over c:
// PATCH /capabilities/{id} (withdraw or publish the price; withhold from or offer to agents), PUT and DELETE
// /capabilities/{id}/aliases/{alias} (deprecated config names), PATCH /templates/{id} and
// POST /presets/{id}/templates (withdraw, restore or add templates), PATCH /voices/{id} and
// POST /workspaces/{id}/voices (deactivate voices, clone one), PATCH /actors/{id}, POST /actors
// and POST /workspaces/{id}/actors (actor state, cast and own actors), POST
// /workspaces/{id}/capabilities (copies.go). Reset undoes them all.
func (h *Handler) RegisterCatalog(c *catalog.Catalog) {
	h.Handle("PATCH /capabilities/{id}", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Priced  *bool `json:"priced"`
			Offered *bool `json:"offered"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, ok := c.Fixtures().Capability(id); !ok {
			return apierr.NotFound("No capability " + id + ".")
		}
		if b.Priced == nil && b.Offered == nil {
			return apierr.InvalidConfigFields([]string{"priced", "offered"}, "Send priced (false withdraws the published price, true publishes it again), offered (false withholds the capability from agents, true offers it again), or both.")
		}
		if b.Priced != nil {
			if err := c.SetPriced(id, *b.Priced); err != nil {
				return err
			}
		}
		if b.Offered != nil {
			if err := c.SetOffered(id, *b.Offered); err != nil {
				return err
			}
		}
		return wire.WriteJSON(w, http.StatusOK, capabilityStateJSON(c, id))
	})
	h.Handle("PUT /capabilities/{id}/aliases/{alias}", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Field   *string `json:"field"`
			StopsIn *string `json:"stops_in"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, ok := c.Fixtures().Capability(id); !ok {
			return apierr.NotFound("No capability " + id + ".")
		}
		a := catalog.Alias{Name: r.PathValue("alias")}
		if b.Field != nil {
			a.Field = *b.Field
		}
		if b.StopsIn != nil {
			a.StopsIn = *b.StopsIn
			if a.StopsIn == "" {
				return apierr.InvalidConfig("stops_in", "stops_in must be a version MAJOR.MINOR.PATCH, or left out.")
			}
		}
		a, err := c.SetAlias(id, a)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "alias": aliasJSON(c, a)})
	})
	h.Handle("DELETE /capabilities/{id}/aliases/{alias}", func(w http.ResponseWriter, r *http.Request) error {
		id, name := r.PathValue("id"), r.PathValue("alias")
		if err := c.RemoveAlias(id, name); err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "alias": name, "deleted": true})
	})
	h.Handle("PATCH /templates/{id}", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Live *bool `json:"live"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, ok := c.Template(id); !ok {
			return apierr.NotFound("No template " + id + ".")
		}
		if b.Live == nil {
			return apierr.InvalidConfig("live", "live is required: false withdraws the template, true restores it.")
		}
		t, err := c.SetTemplateLive(id, *b.Live)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, templateJSON(t))
	})
	h.Handle("POST /presets/{id}/templates", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Name         *string               `json:"name"`
			Description  wire.Optional[string] `json:"description"`
			Category     wire.Optional[string] `json:"category"`
			PreviewKind  *string               `json:"preview_kind"`
			GalleryOrder *int                  `json:"gallery_order"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if cp, ok := c.Fixtures().Capability(id); !ok || !cp.IsPreset() {
			return apierr.NotFound("No preset " + id + ".")
		}
		p := catalog.TemplateParams{Description: b.Description.Ptr(), Category: b.Category.Ptr()}
		if b.Name != nil {
			p.Name = *b.Name
		}
		if b.PreviewKind != nil {
			p.PreviewKind = *b.PreviewKind
			if p.PreviewKind == "" {
				return apierr.InvalidConfig("preview_kind", "preview_kind must be image or video.")
			}
		}
		if b.GalleryOrder == nil {
			return apierr.InvalidConfig("gallery_order", "gallery_order is required: the template's place in the gallery (ascending).")
		}
		p.GalleryOrder = *b.GalleryOrder
		t, err := c.AddTemplate(id, p)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, templateJSON(t))
	})
	h.Handle("PATCH /voices/{id}", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Active *bool `json:"active"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, ok := c.Voice(id); !ok {
			return apierr.NotFound("No voice " + id + ".")
		}
		if b.Active == nil {
			return apierr.InvalidConfig("active", "active is required: false deactivates the voice, true activates it.")
		}
		vc, err := c.SetVoiceActive(id, *b.Active)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, voiceJSON(vc))
	})
	h.Handle("POST /workspaces/{id}/voices", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		var b struct {
			Name      *string  `json:"name"`
			Tags      []string `json:"tags"`
			IsPremium *bool    `json:"is_premium"`
			Active    *bool    `json:"active"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		p := catalog.VoiceParams{Tags: b.Tags, Active: true}
		if b.Name != nil {
			p.Name = *b.Name
		}
		if b.IsPremium != nil {
			p.IsPremium = *b.IsPremium
		}
		if b.Active != nil {
			p.Active = *b.Active
		}
		vc, err := c.CloneVoice(ws.ID(), p)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, voiceJSON(vc))
	})
	h.Handle("PATCH /actors/{id}", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			State *string `json:"state"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		id := r.PathValue("id")
		if _, ok := c.Actor(id); !ok {
			return apierr.NotFound("No actor " + id + ".")
		}
		if b.State == nil {
			return apierr.InvalidConfig("state", "state is required: ready, processing or disabled.")
		}
		a, err := c.SetActorState(id, *b.State)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, actorJSON(a))
	})
	addActor := func(w http.ResponseWriter, r *http.Request, workspaceID string) error {
		var b struct {
			Name           *string               `json:"name"`
			Description    wire.Optional[string] `json:"description"`
			Gender         wire.Optional[string] `json:"gender"`
			AgeBand        wire.Optional[string] `json:"age_band"`
			Tags           []string              `json:"tags"`
			DefaultVoiceID wire.Optional[string] `json:"default_voice_id"`
			State          *string               `json:"state"`
			CreatedAt      *time.Time            `json:"created_at"`
			CoreCast       *bool                 `json:"core_cast"`
			MinPlan        *fixtures.Plan        `json:"min_plan"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		p := catalog.ActorParams{
			WorkspaceID: workspaceID, Description: b.Description.Ptr(), Gender: b.Gender.Ptr(), AgeBand: b.AgeBand.Ptr(),
			Tags: b.Tags, DefaultVoiceID: b.DefaultVoiceID.Ptr(), MinPlan: b.MinPlan, CreatedAt: h.deps.Clock.Now(),
		}
		if b.Name != nil {
			p.Name = *b.Name
		}
		if b.State != nil {
			p.State = *b.State
			if p.State == "" {
				return apierr.InvalidConfig("state", "state must be ready, processing or disabled.")
			}
		}
		if b.CreatedAt != nil {
			p.CreatedAt = *b.CreatedAt
		}
		if b.CoreCast != nil {
			p.CoreCast = *b.CoreCast
			if workspaceID != "" {
				return apierr.InvalidConfig("core_cast", "core_cast is for cast actors (POST /actors), not a workspace's own.")
			}
		}
		if b.MinPlan != nil && workspaceID != "" {
			return apierr.InvalidConfig("min_plan", "min_plan is for cast actors (POST /actors), not a workspace's own.")
		}
		a, err := c.AddActor(p)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, actorJSON(a))
	}
	h.Handle("POST /actors", func(w http.ResponseWriter, r *http.Request) error { return addActor(w, r, "") })
	h.Handle("POST /workspaces/{id}/actors", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		return addActor(w, r, ws.ID())
	})
	h.registerCapabilityCopies(c)
}

func aliasJSON(c *catalog.Catalog, a catalog.Alias) map[string]any {
	return map[string]any{"alias": a.Name, "field": a.Field, "stops_in": a.StopsIn, "accepted": c.AliasAccepted(a)}
}

func capabilityStateJSON(c *catalog.Catalog, id string) map[string]any {
	aliases := []map[string]any{}
	for _, a := range c.Aliases(id) {
		aliases = append(aliases, aliasJSON(c, a))
	}
	return map[string]any{"ok": true, "capability_id": id, "priced": c.Priced(id), "offered": c.Offered(id), "aliases": aliases}
}

func templateJSON(t *fixtures.Template) map[string]any {
	return map[string]any{
		"ok": true, "template_id": t.ID, "capability_id": t.CapabilityID, "name": t.Name, "live": t.Live,
		"gallery_order": t.GalleryOrder, "preview_kind": t.PreviewKind,
	}
}

func voiceJSON(v *fixtures.Voice) map[string]any {
	return map[string]any{
		"ok": true, "voice_id": v.ID, "name": v.Name, "language": v.Language, "gender": v.Gender, "tags": v.Tags,
		"is_cloned": v.IsCloned, "is_premium": v.IsPremium, "is_platform": v.IsPlatform, "active": v.Active,
		"workspace_id": v.WorkspaceID,
	}
}

func actorJSON(a *fixtures.Actor) map[string]any {
	return map[string]any{
		"ok": true, "actor_id": a.ID, "name": a.Name, "description": a.Description, "gender": a.Gender,
		"age_band": a.AgeBand, "tags": a.Tags, "default_voice_id": a.DefaultVoiceID, "is_platform": a.IsPlatform,
		"core_cast": a.CoreCast, "min_plan": a.MinPlan, "state": a.State, "workspace_id": a.WorkspaceID,
		"created_at": clock.Format(a.CreatedAt),
	}
}
