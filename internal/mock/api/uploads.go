package api

import (
	"net/http"

	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// RegisterUploads registers the three upload writes (scope generate): POST /uploads (buckets
// uploads and reservations), POST /uploads/{assetId}/finalize and POST /uploads/from-url (bucket
// uploads).
func (rt *Router) RegisterUploads(u *uploads.Service) {
	h := uploadHandlers{u: u}
	rt.Handle("POST /uploads", workspace.ScopeGenerate, ratelimit.Uploads, h.reserve, ratelimit.Reservations)
	rt.Handle("POST /uploads/{assetId}/finalize", workspace.ScopeGenerate, ratelimit.Uploads, h.finalize)
	rt.Handle("POST /uploads/from-url", workspace.ScopeGenerate, ratelimit.Uploads, h.fromURL)
}

type uploadHandlers struct {
	u *uploads.Service
}

// reserve serves POST /api/v1/uploads: a strict body, then uploads.Service.Reserve. Answer 201
// with the reservation and no Location header.
func (h uploadHandlers) reserve(w http.ResponseWriter, r *http.Request) error {
	var b uploads.ReserveRequest
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	res, err := h.u.Reserve(Caller(r.Context()).Workspace.ID(), b)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusCreated, struct {
		OK bool `json:"ok"`
		uploads.Reservation
	}{true, res})
}

// finalize serves POST /api/v1/uploads/{assetId}/finalize. The operation takes no body; a body
// sent anyway is ignored unread (finalize is safe to repeat and a body changes nothing, so refusing
// it would only make retries fail).
func (h uploadHandlers) finalize(w http.ResponseWriter, r *http.Request) error {
	res, err := h.u.Finalize(r.Context(), Caller(r.Context()).Workspace.ID(), r.PathValue("assetId"))
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK bool `json:"ok"`
		uploads.Finalized
	}{true, res})
}

// fromURL serves POST /api/v1/uploads/from-url: a strict body, then uploads.Service.FromURL.
// Answer 201 with the imported asset and no Location header.
func (h uploadHandlers) fromURL(w http.ResponseWriter, r *http.Request) error {
	var b uploads.FromURLRequest
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	res, err := h.u.FromURL(r.Context(), Caller(r.Context()).Workspace.ID(), b)
	if err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusCreated, struct {
		OK bool `json:"ok"`
		uploads.Imported
	}{true, res})
}
