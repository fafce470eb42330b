package jobs

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"sort"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/paging"
)

// Filter selects rows of GET /generations; zero fields match everything.
type Filter struct {
	Status        Status
	CapabilityID  string
	Source        string
	CreatedBefore *time.Time // strictly before
	UpdatedSince  *time.Time // strictly after; orders oldest first by updated_at
}

// Row is a GET /generations row (openapi GenerationListRow).
type Row struct {
	GenerationID     string   `json:"generation_id"`
	CapabilityID     *string  `json:"capability_id"`
	Status           Status   `json:"status"`
	Source           string   `json:"source"`
	Purpose          *string  `json:"purpose"`
	OutputKind       *string  `json:"output_kind"`
	BatchGroupID     *string  `json:"batch_group_id"`
	BatchIndex       *int     `json:"batch_index"`
	CreditsEstimated int64    `json:"credits_estimated"`
	CreditsCharged   *int64   `json:"credits_charged"`
	OutputAssetIDs   []string `json:"output_asset_ids"`
	CreatedAt        string   `json:"created_at"`
	UpdatedAt        string   `json:"updated_at"`
	CompletedAt      *string  `json:"completed_at"`
}

// RowOf renders a view as a list row (no link).
func RowOf(v View) Row {
	r := Row{
		GenerationID: v.GenerationID, CapabilityID: strPtr(v.CapabilityID), Status: v.Status, Source: v.Source,
		Purpose: strPtr(v.Purpose), OutputKind: strPtr(v.OutputKind), CreditsEstimated: v.CreditsEstimated,
		CreditsCharged: v.heldCredits().CreditsCharged, OutputAssetIDs: v.OutputAssetIDs(),
		CreatedAt: clock.Format(v.CreatedAt), UpdatedAt: clock.Format(v.UpdatedAt), CompletedAt: clock.FormatPtr(v.CompletedAt),
	}
	if v.BatchGroupID != "" {
		r.BatchGroupID = strPtr(v.BatchGroupID)
		i := v.BatchIndex
		r.BatchIndex = &i
	}
	return r
}

// List answers one page of GET /generations for workspaceID: only
// deliverables (purpose deliverable or null), filtered, newest first by
// created_at (ties: later submits first), or oldest first by updated_at
// with UpdatedSince. cursor is the previous page's next cursor: it carries
// the last row's sort key, and the page goes on after that place even when
// the row has moved since (updated during the walk); an unreadable one
// restarts from the first page. next is "" on the last page.
func (s *Store) List(workspaceID string, f Filter, cur string, limit int) (rows []Row, next string) {
	s.mu.Lock()
	var gs []*generation
	for _, g := range s.order {
		if g.forgotten || g.workspaceID != workspaceID || (g.purpose != "" && g.purpose != "deliverable") {
			continue
		}
		if (f.Status != "" && g.status != f.Status) || (f.CapabilityID != "" && g.cp.ID != f.CapabilityID) ||
			(f.Source != "" && g.source != f.Source) ||
			(f.CreatedBefore != nil && !g.createdAt.Before(*f.CreatedBefore)) ||
			(f.UpdatedSince != nil && !g.updatedAt.After(*f.UpdatedSince)) {
			continue
		}
		gs = append(gs, g)
	}
	if f.UpdatedSince != nil {
		sort.SliceStable(gs, func(i, j int) bool {
			if !gs[i].updatedAt.Equal(gs[j].updatedAt) {
				return gs[i].updatedAt.Before(gs[j].updatedAt)
			}
			return gs[i].seq < gs[j].seq
		})
	} else {
		sort.SliceStable(gs, func(i, j int) bool {
			if !gs[i].createdAt.Equal(gs[j].createdAt) {
				return gs[i].createdAt.After(gs[j].createdAt)
			}
			return gs[i].seq > gs[j].seq
		})
	}
	// key is a row's place in this order: the time the list orders by and the submit sequence.
	key := func(g *generation) paging.Key {
		if f.UpdatedSince != nil {
			return paging.Key{ID: g.id, At: g.updatedAt, Seq: g.seq}
		}
		return paging.Key{ID: g.id, At: g.createdAt, Seq: g.seq}
	}
	// follows reports whether a row with key k comes after the cursor's row c in this order.
	follows := func(k, c paging.Key) bool {
		if f.UpdatedSince != nil {
			return k.At.After(c.At) || (k.At.Equal(c.At) && k.Seq > c.Seq)
		}
		return k.At.Before(c.At) || (k.At.Equal(c.At) && k.Seq < c.Seq)
	}
	views := make([]View, len(gs))
	keys := make([]paging.Key, len(gs))
	for i, g := range gs {
		views[i], keys[i] = s.viewLocked(g), key(g)
	}
	s.mu.Unlock()
	start := 0
	if c, ok := paging.DecodeKey(cur); ok {
		// The cursor's row keeps its place even when it moved since (updated during the walk).
		start = len(keys)
		for i, k := range keys {
			if follows(k, c) {
				start = i
				break
			}
		}
	} else if id := paging.Decode(cur); id != "" {
		for i, v := range views {
			if v.GenerationID == id {
				start = i + 1
				break
			}
		}
	}
	if limit <= 0 {
		limit = contract.PageSizeDefault
	}
	end := min(start+limit, len(views))
	rows = make([]Row, 0, end-start)
	for _, v := range views[start:end] {
		rows = append(rows, RowOf(v))
	}
	if end < len(views) && len(rows) > 0 {
		next = paging.EncodeKey(keys[end-1])
	}
	return rows, next
}
