package ratelimit

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// exactLog is the sliding window as the interface states it: every call's time, each leaving
// Window after it was made.
type exactLog struct{ calls []time.Duration }

func (e *exactLog) allow(now time.Duration, limit int) (bool, time.Duration) {
	e.calls = slices.DeleteFunc(e.calls, func(c time.Duration) bool { return c <= now-Window })
	if len(e.calls) < limit {
		e.calls = append(e.calls, now)
		return true, 0
	}
	if limit == 0 {
		return false, Window
	}
	return false, e.calls[len(e.calls)-limit] + Window - now
}

// The runs of a window answer exactly as a log of every call whenever calls a millisecond or
// more apart are what the clock shows (the manual clock moved by whole milliseconds, several
// calls at one instant), over random limits, bursts and gaps.
func TestRunsAnswerAsTheExactLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for round := range 40 {
		c := clock.NewManual(t0)
		l := New(c, nil)
		limit := []int{0, 1, 2, 5, 20, 120, 1000}[round%7]
		over := map[Bucket]int{AgentRead: limit}
		var ref exactLog
		var now time.Duration
		for i := range 3000 {
			switch r := rng.IntN(10); {
			case r < 3: // the same instant
			case r < 8:
				d := time.Duration(rng.IntN(200)) * time.Millisecond
				c.Advance(d)
				now += d
			default:
				d := time.Duration(rng.IntN(70_000)) * time.Millisecond
				c.Advance(d)
				now += d
			}
			ok, wait := l.AllowKey("k", over, AgentRead)
			wantOK, wantWait := ref.allow(now, limit)
			if ok != wantOK || wait != wantWait {
				t.Fatalf("round %d (limit %d) call %d at %s: allowed %v wait %s, the exact log says %v %s", round, limit, i, now, ok, wait, wantOK, wantWait)
			}
		}
	}
}

// Calls within one millisecond share a run: each leaves the window no earlier than Window after
// it was made and at most a millisecond later, and a busy key holds at most one run per
// millisecond of the window however many calls it makes.
func TestRunsLeaveLateByLessThanAMillisecond(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, nil)
	over := map[Bucket]int{AgentRead: 10_000_000}
	// 20 calls every millisecond for a whole window, each 50 µs after the one before.
	for range 60_000 {
		for range 20 {
			if ok, _ := l.AllowKey("k", over, AgentRead); !ok {
				t.Fatal("refused under the limit")
			}
			c.Advance(50 * time.Microsecond)
		}
	}
	w := l.windows[winKey{"k", AgentRead}]
	if w.n <= 1_190_000 {
		t.Fatalf("%d calls held: want the minute's", w.n)
	}
	if len(w.runs) > 60_001 {
		t.Fatalf("%d runs for a minute of calls: want at most one a millisecond", len(w.runs))
	}
	// The limit is reached: the wait names the oldest call's run, which leaves with its latest
	// call, 950 µs after the run's first.
	over[AgentRead] = w.n
	ok, wait := l.AllowKey("k", over, AgentRead)
	first := w.runs[0].last - 950*time.Microsecond
	now := c.Now().Sub(l.base)
	if ok || wait < first+Window-now || wait > first+Window-now+time.Millisecond {
		t.Fatalf("allowed %v, wait %s: want the oldest call's %s, at most a millisecond more", ok, wait, first+Window-now)
	}
}
