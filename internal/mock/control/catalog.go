package control

import (
	"net/http"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// RegisterCatalog adds the catalogue operations (spec/control.yaml tag catalogue) over c:
// PATCH /capabilities/{id} (withdraw or publish the price; withhold from or offer to agents), PUT and DELETE
// /capabilities/{id}/aliases/{alias} (deprecated config names), PUT and DELETE
// /capabilities/{id}/enum-removals/{field}/{value} (removed enum values), PATCH /templates/{id} and
// POST /presets/{id}/templates (withdraw, restore or add templates), DELETE /presets/{id}/templates
// (withdraw every template of a preset), PATCH /voices/{id} and
// POST /workspaces/{id}/voices (deactivate voices, clone one), PATCH /actors/{id}, POST /actors
// and POST /workspaces/{id}/actors (actor state, cast and own actors), POST
// /workspaces/{id}/capabilities (copies.go). Reset undoes them all.
func (h *Handler) RegisterCatalog(c *catalog.Catalog) {
	o := catalogOps{h: h, c: c}
	h.Handle("PATCH /capabilities/{id}", o.patchCapability)
	h.Handle("PUT /capabilities/{id}/aliases/{alias}", o.putAlias)
	h.Handle("DELETE /capabilities/{id}/aliases/{alias}", o.deleteAlias)
	h.Handle("PUT /capabilities/{id}/enum-removals/{field}/{value}", o.removeEnumValue)
	h.Handle("DELETE /capabilities/{id}/enum-removals/{field}/{value}", o.restoreEnumValue)
	h.Handle("PATCH /templates/{id}", o.patchTemplate)
	h.Handle("POST /presets/{id}/templates", o.addTemplate)
	h.Handle("DELETE /presets/{id}/templates", o.withdrawTemplates)
	h.Handle("PATCH /voices/{id}", o.patchVoice)
	h.Handle("POST /workspaces/{id}/voices", o.cloneVoice)
	h.Handle("PATCH /actors/{id}", o.patchActor)
	h.Handle("POST /actors", o.addCastActor)
	h.Handle("POST /workspaces/{id}/actors", o.addOwnActor)
	h.registerCapabilityCopies(c)
}

// catalogOps are the catalogue operations over one catalogue.
type catalogOps struct {
	h *Handler
	c *catalog.Catalog
}

// patchCapability serves PATCH /capabilities/{id}: it withdraws or publishes the price of a capability, withholds it from or offers it to agents.
func (o catalogOps) patchCapability(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Priced  *bool `json:"priced"`
		Offered *bool `json:"offered"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, ok := o.c.Fixtures().Capability(id); !ok {
		return apierr.NotFound("No capability " + id + ".")
	}
	if b.Priced == nil && b.Offered == nil {
		return apierr.InvalidConfigFields([]string{"priced", "offered"}, "Send priced (false withdraws the published price, true publishes it again), offered (false withholds the capability from agents, true offers it again), or both.")
	}
	if b.Priced != nil {
		if err := o.c.SetPriced(id, *b.Priced); err != nil {
			return err
		}
	}
	if b.Offered != nil {
		if err := o.c.SetOffered(id, *b.Offered); err != nil {
			return err
		}
	}
	return wire.WriteJSON(w, http.StatusOK, capabilityStateJSON(o.c, id))
}

// putAlias serves PUT /capabilities/{id}/aliases/{alias}: it adds or changes a deprecated config name of a capability.
func (o catalogOps) putAlias(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Field   *string `json:"field"`
		StopsIn *string `json:"stops_in"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, ok := o.c.Fixtures().Capability(id); !ok {
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
	a, err := o.c.SetAlias(id, a)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "alias": aliasJSON(o.c, a)})
}

// deleteAlias serves DELETE /capabilities/{id}/aliases/{alias}: it removes a deprecated config name.
func (o catalogOps) deleteAlias(w http.ResponseWriter, r *http.Request) error {
	id, name := r.PathValue("id"), r.PathValue("alias")
	if err := o.c.RemoveAlias(id, name); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "alias": name, "deleted": true})
}

// removeEnumValue serves PUT /capabilities/{id}/enum-removals/{field}/{value}: it removes one
// value of a config property's enum (catalog/enums.go).
func (o catalogOps) removeEnumValue(w http.ResponseWriter, r *http.Request) error {
	id, field, value := r.PathValue("id"), r.PathValue("field"), r.PathValue("value")
	if err := o.c.RemoveEnumValue(id, field, value); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "field": field, "value": value, "removed": true})
}

// restoreEnumValue serves DELETE /capabilities/{id}/enum-removals/{field}/{value}: the value is
// listed and accepted again.
func (o catalogOps) restoreEnumValue(w http.ResponseWriter, r *http.Request) error {
	id, field, value := r.PathValue("id"), r.PathValue("field"), r.PathValue("value")
	if err := o.c.RestoreEnumValue(id, field, value); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "field": field, "value": value, "removed": false})
}

// patchTemplate serves PATCH /templates/{id}: it withdraws or restores a template.
func (o catalogOps) patchTemplate(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Live *bool `json:"live"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, ok := o.c.Template(id); !ok {
		return apierr.NotFound("No template " + id + ".")
	}
	if b.Live == nil {
		return apierr.InvalidConfig("live", "live is required: false withdraws the template, true restores it.")
	}
	t, err := o.c.SetTemplateLive(id, *b.Live)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, templateJSON(t))
}

// addTemplate serves POST /presets/{id}/templates: it adds a template to a preset.
func (o catalogOps) addTemplate(w http.ResponseWriter, r *http.Request) error {
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
	if cp, ok := o.c.Fixtures().Capability(id); !ok || !cp.IsPreset() {
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
	t, err := o.c.AddTemplate(id, p)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusCreated, templateJSON(t))
}

// withdrawTemplates serves DELETE /presets/{id}/templates: it withdraws every live template of a
// preset, so that a preset requiring a template has templates_total 0 and cannot run.
func (o catalogOps) withdrawTemplates(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ts, err := o.c.WithdrawTemplates(id)
	if err != nil {
		return err
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "capability_id": id, "withdrawn": out})
}

// patchVoice serves PATCH /voices/{id}: it deactivates or activates a voice.
func (o catalogOps) patchVoice(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Active *bool `json:"active"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, ok := o.c.Voice(id); !ok {
		return apierr.NotFound("No voice " + id + ".")
	}
	if b.Active == nil {
		return apierr.InvalidConfig("active", "active is required: false deactivates the voice, true activates it.")
	}
	vc, err := o.c.SetVoiceActive(id, *b.Active)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, voiceJSON(vc))
}

// cloneVoice serves POST /workspaces/{id}/voices: it clones a voice for a workspace.
func (o catalogOps) cloneVoice(w http.ResponseWriter, r *http.Request) error {
	ws, err := o.h.workspace(r)
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
	vc, err := o.c.CloneVoice(ws.ID(), p)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusCreated, voiceJSON(vc))
}

// patchActor serves PATCH /actors/{id}: it sets an actor's state.
func (o catalogOps) patchActor(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		State *string `json:"state"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	id := r.PathValue("id")
	if _, ok := o.c.Actor(id); !ok {
		return apierr.NotFound("No actor " + id + ".")
	}
	if b.State == nil {
		return apierr.InvalidConfig("state", "state is required: ready, processing or disabled.")
	}
	a, err := o.c.SetActorState(id, *b.State)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, actorJSON(a))
}

// addActor adds a cast actor (workspaceID "") or a workspace's own actor.
func (o catalogOps) addActor(w http.ResponseWriter, r *http.Request, workspaceID string) error {
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
		Tags: b.Tags, DefaultVoiceID: b.DefaultVoiceID.Ptr(), MinPlan: b.MinPlan, CreatedAt: o.h.deps.Clock.Now(),
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
	a, err := o.c.AddActor(p)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusCreated, actorJSON(a))
}

// addCastActor serves POST /actors: it adds an actor to the cast every workspace sees.
func (o catalogOps) addCastActor(w http.ResponseWriter, r *http.Request) error {
	return o.addActor(w, r, "")
}

// addOwnActor serves POST /workspaces/{id}/actors: it adds a workspace's own actor.
func (o catalogOps) addOwnActor(w http.ResponseWriter, r *http.Request) error {
	ws, err := o.h.workspace(r)
	if err != nil {
		return err
	}
	return o.addActor(w, r, ws.ID())
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
