package jobs

import (
	"slices"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/retention"
)

// Retention (Deps.Retain, mediaspec mock --retain): a generation that ended (completed or failed)
// more than Retain ago on the service clock is forgotten with its output asset records; it then
// answers as an unknown id does (404 not_found), lists skip it, and a list cursor that named it
// goes on from its place (the cursor carries the row's sort key). The siblings of a batch are
// forgotten together with the batch, Retain after the last of them ended, so a batch never reads
// with a sibling missing. A running generation is never forgotten, and neither is anything of
// the ledger: holds, captures and balances stay exact.
//
// An output's bytes outlive its record by LinkTTL, so a link handed out while the record was
// readable keeps working for its whole lifetime (interface text: a link lasts 600 seconds).

// forgetDue is the retention sweeper's decision on generation id at service time now.
func (s *Store) forgetDue(id string, now time.Time) time.Time {
	s.mu.Lock()
	g, ok := s.gens[id]
	if !ok || g.status.Running() {
		s.mu.Unlock()
		return time.Time{} // gone already, or its end schedules it again
	}
	group, ended := []*generation{g}, g.updatedAt
	b := s.batches[g.batchGroupID]
	if b != nil {
		group = group[:0]
		for _, sid := range b.genIDs {
			sg, ok := s.gens[sid]
			if !ok {
				continue
			}
			if sg.status.Running() {
				s.mu.Unlock()
				return time.Time{} // the last sibling to end schedules the batch
			}
			group = append(group, sg)
			if sg.updatedAt.After(ended) {
				ended = sg.updatedAt
			}
		}
	}
	if due := ended.Add(s.d.Retain); due.After(now) {
		s.mu.Unlock()
		return due
	}
	type file struct{ workspaceID, assetID string }
	var files []file
	for _, x := range group {
		for _, o := range x.outputs {
			files = append(files, file{x.workspaceID, o.AssetID})
		}
		s.forgetLocked(x, now)
	}
	if b != nil {
		delete(s.batches, b.id)
	}
	s.order = retention.Compact(s.order, &s.dead, func(g *generation) bool { return g.forgotten })
	s.mu.Unlock()
	for _, f := range files {
		s.d.Assets.Delete(f.workspaceID, f.assetID)
		s.RetireFile(f.assetID, now)
	}
	return time.Time{}
}

// forgetLocked removes a finished generation, its key's spent slot and a request-blocking count
// that can no longer block. s.mu must be held.
func (s *Store) forgetLocked(g *generation, now time.Time) {
	delete(s.gens, g.id)
	g.forgotten = true
	s.dead++
	if g.keyID == "" {
		return
	}
	if sl, ok := s.slots[g.keyID]; ok && slices.Contains(sl.genIDs, g.id) {
		delete(s.slots, g.keyID)
	}
	k := failKey(g.keyID, g.canonical)
	if f, ok := s.fails[k]; ok && len(f.times) > 0 && !now.Before(f.times[len(f.times)-1].Add(max(BlockWindow, BlockDuration))) {
		delete(s.fails, k)
	}
}

// RetireFile deletes the bytes of assetID, whose asset record was forgotten at service time at,
// once the links handed out before then expired (LinkTTL later); without a retention at once.
// Uploads forgotten by their own retention go this way too.
func (s *Store) RetireFile(assetID string, at time.Time) {
	if s.links == nil {
		s.d.Blob.Delete(assetID)
		return
	}
	s.links.Ended(assetID, at)
}

// dropFile deletes the bytes of a forgotten asset once its last link expired, unless an asset
// record owns that id again (a reset restarted the id stream).
func (s *Store) dropFile(assetID string, _ time.Time) time.Time {
	if o, ok := s.d.Blob.Get(assetID); ok {
		if _, owned := s.d.Assets.Get(o.WorkspaceID, assetID); !owned {
			s.d.Blob.Delete(assetID)
		}
	}
	return time.Time{}
}
