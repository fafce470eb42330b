package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// appJobBody is the body of POST /workspaces/{id}/generations: what a person starts in the app.
type appJobBody struct {
	CapabilityID string         `json:"capability_id"`
	Config       map[string]any `json:"config"`
	Variants     *int           `json:"variants"`
}

// registerAppJobs adds POST /workspaces/{id}/generations: a generation started in the app, as a
// person does. It holds no key's slot and no spend limit applies to it (the interface's
// Authentication 6 and POST /generations 2); its credits and lifecycle are those of any job.
func (h *Handler) registerAppJobs(s *jobs.Store) {
	h.Handle("POST /workspaces/{id}/generations", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		var b appJobBody
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		if b.CapabilityID == "" {
			return apierr.InvalidConfig("capability_id", "capability_id is required.")
		}
		if b.Config == nil {
			return apierr.InvalidConfig("config", "config is required (an object).")
		}
		a, err := s.Submit(jobs.SubmitParams{
			WorkspaceID:  ws.ID(),
			Plan:         fixtures.Plan(ws.Snapshot().Plan),
			Source:       "ui",
			CapabilityID: b.CapabilityID,
			Config:       b.Config,
			Variants:     b.Variants,
		})
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, map[string]any{
			"ok": true, "generation_id": a.GenerationID, "generation_ids": a.GenerationIDs, "source": "ui",
		})
	})
}
