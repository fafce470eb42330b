package api

import (
	"net/http"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/admission"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// RegisterCatalog registers the catalogue reads and the estimator:
// GET /capabilities, GET /capabilities/{id}, GET /presets,
// GET /presets/{id}/templates, GET /actors, GET /voices (read, agent_read)
// and POST /estimates (read, agent_estimate), whose checks are adm's.
func (rt *Router) RegisterCatalog(adm admission.Deps) {
	h := catalogHandlers{c: adm.Catalog, adm: adm}
	rt.Handle("GET /capabilities", workspace.ScopeRead, ratelimit.AgentRead, h.listCapabilities)
	rt.Handle("GET /capabilities/{id}", workspace.ScopeRead, ratelimit.AgentRead, h.getCapability)
	rt.Handle("GET /presets", workspace.ScopeRead, ratelimit.AgentRead, h.listPresets)
	rt.Handle("GET /presets/{id}/templates", workspace.ScopeRead, ratelimit.AgentRead, h.presetTemplates)
	rt.Handle("GET /actors", workspace.ScopeRead, ratelimit.AgentRead, h.listActors)
	rt.Handle("GET /voices", workspace.ScopeRead, ratelimit.AgentRead, h.listVoices)
	rt.Handle("POST /estimates", workspace.ScopeRead, ratelimit.AgentEstimate, h.estimate)
}

type catalogHandlers struct {
	c   *catalog.Catalog
	adm admission.Deps
}

// ViewerOf returns the catalogue viewer of a keyed request's caller.
func ViewerOf(r *http.Request) catalog.Viewer {
	c := Caller(r.Context())
	return catalog.Viewer{WorkspaceID: c.Workspace.ID(), Plan: fixtures.Plan(c.Plan)}
}

// nullable renders "" as JSON null (next_cursor at the end of a list).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// listCapabilities serves GET /api/v1/capabilities?limit&cursor.
func (h catalogHandlers) listCapabilities(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	cursor, _ := wire.QueryString(q, "cursor")
	rows, next := h.c.ListCapabilities(ViewerOf(r), wire.QueryLimit(q, "limit", catalog.DefaultLimit, catalog.MaxLimit), cursor)
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK           bool                    `json:"ok"`
		Capabilities []catalog.CapabilityRow `json:"capabilities"`
		NextCursor   *string                 `json:"next_cursor"`
	}{true, rows, nullable(next)})
}

// getCapability serves GET /api/v1/capabilities/{id}.
func (h catalogHandlers) getCapability(w http.ResponseWriter, r *http.Request) error {
	d, err := h.c.Capability(ViewerOf(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
		catalog.CapabilityDetail
	}{true, d})
}

// listPresets serves GET /api/v1/presets?limit&cursor.
func (h catalogHandlers) listPresets(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	cursor, _ := wire.QueryString(q, "cursor")
	rows, total, next := h.c.ListPresets(ViewerOf(r), wire.QueryLimitClamped(q, "limit", catalog.DefaultLimit, catalog.MaxLimit), cursor)
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool                `json:"ok"`
		Presets    []catalog.PresetRow `json:"presets"`
		Total      int                 `json:"total"`
		NextCursor *string             `json:"next_cursor"`
	}{true, rows, total, nullable(next)})
}

// presetTemplates serves GET /api/v1/presets/{id}/templates.
func (h catalogHandlers) presetTemplates(w http.ResponseWriter, r *http.Request) error {
	t, err := h.c.PresetTemplates(ViewerOf(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
		catalog.PresetTemplates
	}{true, t})
}

// listActors serves GET /api/v1/actors?search&limit&cursor.
func (h catalogHandlers) listActors(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	search, _ := wire.QueryString(q, "search")
	cursor, _ := wire.QueryString(q, "cursor")
	rows, next := h.c.ListActors(ViewerOf(r), search, wire.QueryLimitClamped(q, "limit", catalog.DefaultLimit, catalog.MaxLimit), cursor)
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool               `json:"ok"`
		Actors     []catalog.ActorRow `json:"actors"`
		NextCursor *string            `json:"next_cursor"`
	}{true, rows, nullable(next)})
}

// listVoices serves GET /api/v1/voices?search&language&limit&cursor.
func (h catalogHandlers) listVoices(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	search, _ := wire.QueryString(q, "search")
	language, _ := wire.QueryString(q, "language")
	cursor, _ := wire.QueryString(q, "cursor")
	rows, total, next := h.c.ListVoices(ViewerOf(r), search, language, wire.QueryLimitClamped(q, "limit", catalog.DefaultLimit, catalog.MaxLimit), cursor)
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool               `json:"ok"`
		Voices     []catalog.VoiceRow `json:"voices"`
		Total      int                `json:"total"`
		NextCursor *string            `json:"next_cursor"`
	}{true, rows, total, nullable(next)})
}
