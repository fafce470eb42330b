package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/mock/api"
	"github.com/mediaspec/mediaspec/mock/apierr"
	"github.com/mediaspec/mediaspec/mock/faults"
)

// registerFaults adds GET, POST and DELETE /faults over the store.
func (h *Handler) registerFaults(s *faults.Store) {
	h.Handle("GET /faults", func(w http.ResponseWriter, _ *http.Request) error {
		list := s.List()
		out := make([]map[string]any, len(list))
		for i, f := range list {
			out[i] = faultJSON(f)
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "faults": out})
	})
	h.Handle("POST /faults", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Kind         *faults.Kind `json:"kind"`
			CapabilityID *string      `json:"capability_id"`
			Code         *string      `json:"code"`
			Count        *int         `json:"count"`
		}
		if err := api.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		if b.Kind == nil {
			return apierr.InvalidConfig("kind", "kind is required: one of the documented fault kinds.")
		}
		var capID, code string
		if b.CapabilityID != nil {
			capID = *b.CapabilityID
		}
		if b.Code != nil {
			code = *b.Code
		}
		count := 1
		if b.Count != nil {
			count = *b.Count
			if count == 0 {
				count = -1 // 0 is out of range, not "default"
			}
		}
		f, err := s.Queue(*b.Kind, capID, code, count)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "fault": faultJSON(f)})
	})
	h.Handle("DELETE /faults", func(w http.ResponseWriter, _ *http.Request) error {
		return api.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "cleared": s.Clear()})
	})
}

func faultJSON(f faults.Fault) map[string]any {
	var capID, code any
	if f.CapabilityID != "" {
		capID = f.CapabilityID
	}
	if f.Code != "" {
		code = f.Code
	}
	return map[string]any{
		"fault_id": f.ID, "kind": f.Kind, "capability_id": capID, "code": code,
		"count": f.Count, "remaining": f.Remaining, "created_at": ts(f.CreatedAt),
	}
}
