package retention

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// records is an owner: a record ends at ended[id]; a forgotten one is removed from the map.
type records struct {
	mu     sync.Mutex
	after  time.Duration
	ended  map[string]time.Time
	checks int
}

func (r *records) forget(id string, now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks++
	at, ok := r.ended[id]
	if !ok {
		return time.Time{}
	}
	if due := at.Add(r.after); due.After(now) {
		return due
	}
	delete(r.ended, id)
	return time.Time{}
}

func (r *records) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ended[id]
	return ok
}

func TestNilSweeperDoesNothing(t *testing.T) {
	s := New(clock.NewManual(t0), 0, nil)
	if s != nil {
		t.Fatal("a zero retention made a sweeper")
	}
	s.Ended("x", t0)
	s.At("x", t0)
	s.Reset()
	if s.Len() != 0 || s.After() != 0 {
		t.Fatal("a nil sweeper holds entries")
	}
}

func TestForgetsAtTheRetentionOnTheClock(t *testing.T) {
	clk := clock.NewManual(t0)
	r := &records{after: time.Hour, ended: map[string]time.Time{"a": t0, "b": t0.Add(30 * time.Minute)}}
	s := New(clk, time.Hour, r.forget)
	s.Ended("a", t0)
	s.Ended("b", t0.Add(30*time.Minute))
	if clk.Pending() != 1 {
		t.Fatalf("%d timers pending, want one for the whole sweeper", clk.Pending())
	}
	clk.Advance(time.Hour - time.Second)
	if !r.has("a") || !r.has("b") {
		t.Fatal("forgotten before the retention passed")
	}
	clk.Advance(time.Second)
	if r.has("a") || !r.has("b") {
		t.Fatalf("at the retention of a: a kept %v, b kept %v; want a gone, b kept", r.has("a"), r.has("b"))
	}
	clk.Advance(time.Hour)
	if r.has("b") || s.Len() != 0 || clk.Pending() != 0 {
		t.Fatalf("b kept %v, %d entries, %d timers; want nothing left", r.has("b"), s.Len(), clk.Pending())
	}
}

// A record that ended again later (recovered) is looked at again at its new due time.
func TestStaleEntryNeverForgetsEarly(t *testing.T) {
	clk := clock.NewManual(t0)
	r := &records{after: time.Hour, ended: map[string]time.Time{"a": t0}}
	s := New(clk, time.Hour, r.forget)
	s.Ended("a", t0)
	clk.Advance(10 * time.Minute)
	r.mu.Lock()
	r.ended["a"] = clk.Now() // ended again
	r.mu.Unlock()
	clk.Advance(50 * time.Minute)
	if !r.has("a") {
		t.Fatal("a stale entry forgot a record that ended again")
	}
	clk.Advance(10 * time.Minute)
	if r.has("a") {
		t.Fatal("not forgotten at its new due time")
	}
}

func TestResetDropsEntries(t *testing.T) {
	clk := clock.NewManual(t0)
	r := &records{after: time.Minute, ended: map[string]time.Time{"a": t0}}
	s := New(clk, time.Minute, r.forget)
	s.Ended("a", t0)
	s.Reset()
	clk.Advance(time.Hour)
	if !r.has("a") || r.checks != 0 || clk.Pending() != 0 {
		t.Fatal("reset kept an entry or its timer")
	}
}

// Entries scheduled out of order are still handed over in due order, one timer at a time.
func TestOutOfOrderEntries(t *testing.T) {
	clk := clock.NewManual(t0)
	var got []string
	s := New(clk, time.Minute, func(id string, _ time.Time) time.Time { got = append(got, id); return time.Time{} })
	s.At("late", t0.Add(3*time.Minute))
	s.At("early", t0.Add(time.Minute))
	s.At("mid", t0.Add(2*time.Minute))
	if clk.Pending() != 1 {
		t.Fatalf("%d timers pending, want 1", clk.Pending())
	}
	clk.Advance(5 * time.Minute)
	if !slices.Equal(got, []string{"early", "mid", "late"}) {
		t.Fatalf("handed over %v", got)
	}
}

func BenchmarkSweeper(b *testing.B) {
	clk := clock.NewManual(t0)
	s := New(clk, time.Minute, func(string, time.Time) time.Time { return time.Time{} })
	b.ReportAllocs()
	for i := range b.N {
		s.Ended("x", clk.Now())
		if i%1000 == 999 {
			clk.Advance(time.Second)
		}
	}
}
