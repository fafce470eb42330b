package proxy

import (
	"testing"
	"time"
)

// The judging yields only to a busy forwarding: with fewer requests in flight than busyInFlight it
// never waits; once the forwarding was busy within busyFor it may spend its reserve, then judges
// for share of each second of wall time, waiting for the rest; and a forwarding idle for busyFor
// frees it again. The clock is the test's: a wait advances it by what it sleeps.
func TestBudgetYieldsToABusyForwarding(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var slept time.Duration
	b := newBudget(0.1)
	b.now = func() time.Time { return at }
	b.sleep = func(d time.Duration) { at = at.Add(d); slept += d }
	b.last = at
	judge := func(d time.Duration) func() { return func() { at = at.Add(d) } }

	// Idle: judged at once and not counted, however long the judgement.
	b.forwarding(1)
	b.judged(judge(time.Second))
	if slept != 0 || b.balance != JudgeBurst {
		t.Fatalf("idle forwarding: slept %s, balance %s; want none and the whole reserve", slept, b.balance)
	}

	// Busy: the reserve goes first, with no wait.
	b.forwarding(b.busy)
	b.judged(judge(JudgeBurst))
	if slept != 0 {
		t.Fatalf("the reserve: slept %s, want none", slept)
	}
	// Spent: the next judgement waits until share of the wall time has paid it back.
	b.forwarding(b.busy)
	b.judged(judge(10 * time.Millisecond))
	if slept == 0 {
		t.Fatalf("spent budget: slept %s, want a wait", slept)
	}
	b.forwarding(b.busy)
	before := slept
	b.judged(judge(10 * time.Millisecond))
	// 10 ms of judging at a tenth of the wall time is about 100 ms of waiting.
	if w := slept - before; w < 90*time.Millisecond || w > 110*time.Millisecond {
		t.Fatalf("a 10 ms judgement on a spent budget waited %s, want about 100 ms", w)
	}

	// The forwarding goes idle: once busyFor has passed, no more waits.
	at = at.Add(busyFor + time.Millisecond)
	before = slept
	b.judged(judge(time.Second))
	if slept != before {
		t.Fatalf("after the forwarding went idle: slept %s more, want none", slept-before)
	}
}
