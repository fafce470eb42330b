package workflows

import (
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/retention"
)

// Retention (Deps.Retain, mediaspec mock --retain): a run that ended (completed, partial, failed
// or canceled) more than Retain ago on the service clock is forgotten; it then answers as an
// unknown run id does (404 not_found) and GET /workflow-runs skips it (a cursor naming it
// restarts from the first page, the list's rule for a cursor naming no current run). Its steps
// are generations, forgotten by package jobs on their own end times. A run still queued or
// running is never forgotten.

// forgetDue is the retention sweeper's decision on run id at service time now.
func (e *Engine) forgetDue(id string, now time.Time) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[id]
	if !ok || r.finishedAt == nil {
		return time.Time{}
	}
	if due := r.finishedAt.Add(e.d.Retain); due.After(now) {
		return due
	}
	delete(e.runs, id)
	for _, n := range r.nodes {
		for _, g := range n.genIDs {
			delete(e.byGen, g)
		}
	}
	r.forgotten = true
	e.dead++
	e.order = retention.Compact(e.order, &e.dead, func(r *run) bool { return r.forgotten })
	return time.Time{}
}
