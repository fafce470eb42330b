package control

import (
	"bytes"
	"net/http"
	"slices"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// RegisterJobs adds the generation operations over the jobs store:
// POST /generations/{id}/cancel, /fail and /recover, and
// PUT /workspaces/{id}/render-limit (the render-concurrency threshold), and
// POST /workspaces/{id}/generations (a job started in the app).
func (h *Handler) RegisterJobs(s *jobs.Store) {
	h.registerAppJobs(s)
	answer := func(w http.ResponseWriter, id string, st jobs.Status, changed bool) error {
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "generation_id": id, "status": st, "changed": changed})
	}
	h.Handle("POST /generations/{id}/cancel", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		st, changed, err := s.Cancel(id)
		if err != nil {
			return err
		}
		return answer(w, id, st, changed)
	})
	h.Handle("POST /generations/{id}/fail", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		}
		data, err := wire.ReadBody(r, 0)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := wire.DecodeStrictBytes(data, &b); err != nil {
				return err
			}
		}
		var code, msg string
		if b.Code != nil {
			if !slices.Contains(faults.RenderCodes, *b.Code) {
				return apierr.InvalidConfig("code", "code must be provider_error, moderation, timeout or unknown.")
			}
			code = *b.Code
		}
		if b.Message != nil {
			if len(*b.Message) > 500 {
				return apierr.InvalidConfig("message", "message must be at most 500 characters.")
			}
			msg = *b.Message
		}
		id := r.PathValue("id")
		st, changed, err := s.Fail(id, code, msg)
		if err != nil {
			return err
		}
		return answer(w, id, st, changed)
	})
	h.Handle("POST /generations/{id}/recover", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		st, changed, err := s.Recover(id)
		if err != nil {
			return err
		}
		return answer(w, id, st, changed)
	})
	h.Handle("PUT /workspaces/{id}/render-limit", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		var b struct {
			Max wire.Optional[int] `json:"max_concurrent_renders"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		if !b.Max.Set {
			return apierr.InvalidConfig("max_concurrent_renders", "max_concurrent_renders is required: a whole number of at least 1, or null for the default.")
		}
		n := 0
		if v := b.Max.Ptr(); v != nil {
			if *v < 1 {
				return apierr.InvalidConfig("max_concurrent_renders", "max_concurrent_renders must be at least 1, or null for the default.")
			}
			n = *v
		}
		s.SetMaxConcurrentRenders(ws.ID(), n)
		return wire.WriteJSON(w, http.StatusOK, map[string]any{
			"ok": true, "workspace_id": ws.ID(), "max_concurrent_renders": s.MaxConcurrentRenders(ws.ID()),
		})
	})
}
