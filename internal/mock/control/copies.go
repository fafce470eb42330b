package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// registerCapabilityCopies adds POST /workspaces/{id}/capabilities (spec/control.yaml tag
// catalogue): a copy of a listed capability under a new id that only this workspace's lists show
// (status coming_soon; see catalog.CopyCapability), so that lists of more than 50 rows can be
// paged. Reset removes the copies.
func (h *Handler) registerCapabilityCopies(c *catalog.Catalog) {
	h.Handle("POST /workspaces/{id}/capabilities", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		var b struct {
			CopyOf       *string `json:"copy_of"`
			CapabilityID *string `json:"capability_id"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		switch {
		case b.CopyOf == nil:
			return apierr.InvalidConfig("copy_of", "copy_of is required: the listed capability to copy.")
		case b.CapabilityID == nil:
			return apierr.InvalidConfig("capability_id", "capability_id is required: the copy's new id.")
		}
		src, id := *b.CopyOf, *b.CapabilityID
		cp, err := c.CopyCapability(ws.ID(), src, id)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, map[string]any{
			"ok": true, "capability_id": cp.ID, "copy_of": src, "workspace_id": ws.ID(),
			"category": cp.Category, "status": cp.Status,
		})
	})
}
