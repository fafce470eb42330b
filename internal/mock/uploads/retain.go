package uploads

import "time"

// Retention (Deps.Retain, mediaspec mock --retain): a finalized upload that nothing used for
// Retain — no finalize, estimate, submit or invoke named it — is forgotten with its asset
// record, and answers as an unknown upload does (404 not_found, or not_found naming the id on a
// submit: "gone"). The interface gives uploads no lifetime, so a use keeps one alive: a client
// that keeps reusing a library file keeps it. Its bytes go once the links already handed out to
// it expired (Deps.Retire).

// forgetDue is the retention sweeper's decision on upload id at service time now.
func (s *Service) forgetDue(id string, now time.Time) time.Time {
	s.mu.Lock()
	u, ok := s.uploads[id]
	if !ok || u.state != stateFinalized || !u.finalizingSince.IsZero() {
		s.mu.Unlock()
		return time.Time{}
	}
	if due := u.lastUsed.Add(s.d.Retain); due.After(now) {
		s.mu.Unlock()
		return due
	}
	delete(s.uploads, id)
	s.mu.Unlock()
	s.d.Assets.Delete(u.workspaceID, id)
	if s.d.Retire != nil {
		s.d.Retire(id, now)
	} else {
		s.d.Blob.Delete(id)
	}
	return time.Time{}
}
