// Package retention forgets the mock's ended records a fixed time after they ended (mediaspec
// mock --retain), on the service clock.
//
// A Sweeper keeps one min-heap of (due, id) entries and one clock timer armed for the earliest
// due time: no goroutine and no timer per record, and no scan of a store per request. When the
// timer fires, every due entry is handed to the owner's Forget function, which checks the record
// itself (an entry may be stale: the record was forgotten already, reset, or ended again later)
// and either forgets it or answers when to check again. Because the owner always judges the
// record's own end time, a stale entry can never make a record go early.
//
// A nil *Sweeper (no retention) accepts every call and does nothing. A Sweeper is safe for
// concurrent use.
package retention

import (
	"container/heap"
	"slices"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// Forget is the owner's decision on one due entry at service time now: it forgets the record
// when its retention has passed and returns the zero time, or returns the later time at which to
// look again (when the record ended again since, or is not due yet). It is called with no lock of
// the Sweeper held, from the clock's timer.
type Forget func(id string, now time.Time) (again time.Time)

// Sweeper schedules the forgetting of ended records.
type Sweeper struct {
	clk    clock.Clock
	after  time.Duration
	forget Forget

	mu    sync.Mutex // guards h, timer, armed
	h     entries
	timer clock.Timer
	armed time.Time // the deadline timer fires at (zero: no timer)
}

// New returns a Sweeper that hands each record to forget after it ended plus after, or nil (no
// retention) when after <= 0.
func New(clk clock.Clock, after time.Duration, forget Forget) *Sweeper {
	if after <= 0 {
		return nil
	}
	return &Sweeper{clk: clk, after: after, forget: forget}
}

// After is the retention (0 for a nil Sweeper).
func (s *Sweeper) After() time.Duration {
	if s == nil {
		return 0
	}
	return s.after
}

// Ended schedules record id, which ended at service time at, for at plus the retention.
func (s *Sweeper) Ended(id string, at time.Time) {
	if s == nil {
		return
	}
	s.At(id, at.Add(s.after))
}

// At schedules record id for service time due.
func (s *Sweeper) At(id string, due time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	heap.Push(&s.h, entry{due: due, id: id})
	s.armLocked()
}

// Len is how many entries are scheduled.
func (s *Sweeper) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.h)
}

// Reset drops every entry and the timer.
func (s *Sweeper) Reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = nil
	s.disarmLocked()
}

// armLocked makes the timer fire at the earliest due time. s.mu must be held.
func (s *Sweeper) armLocked() {
	if len(s.h) == 0 {
		s.disarmLocked()
		return
	}
	due := s.h[0].due
	if s.timer != nil && !s.armed.After(due) {
		return // fires in time already
	}
	s.disarmLocked()
	s.armed = due
	s.timer = s.clk.AfterFunc(due.Sub(s.clk.Now()), s.sweep)
}

func (s *Sweeper) disarmLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.armed = time.Time{}
}

// sweep hands every due entry to forget, schedules the ones it wants to see again and re-arms.
func (s *Sweeper) sweep() {
	now := s.clk.Now()
	s.mu.Lock()
	s.timer, s.armed = nil, time.Time{}
	var due []string
	for len(s.h) > 0 && !s.h[0].due.After(now) {
		due = append(due, heap.Pop(&s.h).(entry).id)
	}
	s.mu.Unlock()
	var again []entry
	for _, id := range due {
		if t := s.forget(id, now); !t.IsZero() {
			if !t.After(now) {
				t = now.Add(time.Second) // a time not after now would spin: look again a second later
			}
			again = append(again, entry{due: t, id: id})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range again {
		heap.Push(&s.h, e)
	}
	s.armLocked()
}

type entry struct {
	due time.Time
	id  string
}

// entries is a min-heap of entries by due time.
type entries []entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h entries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entries) Push(x any)        { *h = append(*h, x.(entry)) }
func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Compact drops the forgotten records from an ordered slice once they are more than half of it
// (and more than a few), so removing one record costs amortised O(1) instead of a copy of the
// slice. dead counts the forgotten records still in order; it is reset when they are dropped.
// Readers of order skip the records gone reports.
func Compact[T any](order []T, dead *int, gone func(T) bool) []T {
	if *dead <= 64 || *dead <= len(order)/2 {
		return order
	}
	*dead = 0
	return slices.DeleteFunc(order, gone)
}
