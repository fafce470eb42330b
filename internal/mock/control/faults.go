package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// registerFaults adds GET, POST and DELETE /faults over the store.
func (h *Handler) registerFaults(s *faults.Store) {
	h.Handle("GET /faults", func(w http.ResponseWriter, _ *http.Request) error {
		list := s.List()
		out := make([]map[string]any, len(list))
		for i, f := range list {
			out[i] = faultJSON(f)
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "faults": out})
	})
	h.Handle("POST /faults", func(w http.ResponseWriter, r *http.Request) error {
		var b struct {
			Kind         *faults.Kind `json:"kind"`
			CapabilityID *string      `json:"capability_id"`
			WorkspaceID  *string      `json:"workspace_id"`
			Code         *string      `json:"code"`
			Count        *int         `json:"count"`
			Seconds      *float64     `json:"seconds"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		if b.Kind == nil {
			return apierr.InvalidConfig("kind", "kind is required: one of the documented fault kinds.")
		}
		var capID, wsID, code string
		var seconds float64
		if b.CapabilityID != nil {
			capID = *b.CapabilityID
		}
		if b.WorkspaceID != nil {
			wsID = *b.WorkspaceID
			if wsID == "" {
				return apierr.InvalidConfig("workspace_id", "workspace_id must name a workspace; leave it out to match every workspace.")
			}
			if _, ok := h.deps.Registry.Get(wsID); !ok {
				return apierr.NotFound("No workspace " + wsID + ".")
			}
		}
		if b.Seconds != nil {
			seconds = *b.Seconds
			if seconds == 0 {
				seconds = -1 // 0 is out of range, not "absent"
			}
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
		f, err := s.Add(faults.Spec{Kind: *b.Kind, CapabilityID: capID, WorkspaceID: wsID, Code: code, Count: count, Seconds: seconds})
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "fault": faultJSON(f)})
	})
	h.Handle("DELETE /faults", func(w http.ResponseWriter, _ *http.Request) error {
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "cleared": s.Clear()})
	})
}

func faultJSON(f faults.Fault) map[string]any {
	var capID, wsID, code, seconds any
	if f.CapabilityID != "" {
		capID = f.CapabilityID
	}
	if f.WorkspaceID != "" {
		wsID = f.WorkspaceID
	}
	if f.Kind.TakesSeconds() {
		seconds = f.Seconds
	}
	if f.Code != "" {
		code = f.Code
	}
	return map[string]any{
		"fault_id": f.ID, "kind": f.Kind, "capability_id": capID, "workspace_id": wsID, "code": code, "seconds": seconds,
		"count": f.Count, "remaining": f.Remaining, "created_at": clock.Format(f.CreatedAt),
	}
}
