package clock

import (
	"context"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestManualNowMovesOnlyOnAdvance(t *testing.T) {
	c := NewManual(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(90 * time.Second)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("Now after advance = %v", got)
	}
	c.Advance(-time.Hour)
	if got := c.Now(); !got.Equal(t0.Add(90 * time.Second)) {
		t.Fatalf("negative advance moved the clock: %v", got)
	}
	if c.Scale() != 0 {
		t.Fatalf("manual scale = %v, want 0", c.Scale())
	}
}

func TestAdvanceFiresInDeadlineOrderWithNowAtDeadline(t *testing.T) {
	c := NewManual(t0)
	var got []string
	var at []time.Time
	add := func(name string, d time.Duration) {
		c.AfterFunc(d, func() { got = append(got, name); at = append(at, c.Now()) })
	}
	add("c", 30*time.Second)
	add("a", 10*time.Second)
	add("b", 20*time.Second)
	add("b2", 20*time.Second) // same deadline: scheduling order
	add("late", 2*time.Minute)
	c.Advance(time.Minute)
	want := []string{"a", "b", "b2", "c"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	if !at[0].Equal(t0.Add(10*time.Second)) || !at[3].Equal(t0.Add(30*time.Second)) {
		t.Fatalf("Now inside callbacks = %v", at)
	}
	if !c.Now().Equal(t0.Add(time.Minute)) {
		t.Fatalf("Now after = %v", c.Now())
	}
	if c.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", c.Pending())
	}
	c.Advance(time.Minute)
	if got[len(got)-1] != "late" {
		t.Fatalf("late timer did not fire: %v", got)
	}
}

func TestTimerScheduledByCallbackWithinSpanFires(t *testing.T) {
	c := NewManual(t0)
	var fired []time.Duration
	c.AfterFunc(10*time.Second, func() {
		fired = append(fired, c.Now().Sub(t0))
		c.AfterFunc(15*time.Second, func() { // at 25 s, inside the span
			fired = append(fired, c.Now().Sub(t0))
			c.AfterFunc(time.Hour, func() { fired = append(fired, -1) }) // outside
		})
	})
	c.Advance(30 * time.Second)
	if len(fired) != 2 || fired[0] != 10*time.Second || fired[1] != 25*time.Second {
		t.Fatalf("fired at %v, want [10s 25s]", fired)
	}
	if c.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", c.Pending())
	}
}

func TestStop(t *testing.T) {
	c := NewManual(t0)
	fired := false
	tm := c.AfterFunc(time.Second, func() { fired = true })
	if !tm.Stop() {
		t.Fatal("first Stop reported false")
	}
	if tm.Stop() {
		t.Fatal("second Stop reported true")
	}
	c.Advance(time.Minute)
	if fired {
		t.Fatal("stopped timer fired")
	}
	tm2 := c.AfterFunc(time.Second, func() {})
	c.Advance(time.Second)
	if tm2.Stop() {
		t.Fatal("Stop after firing reported true")
	}
}

func TestManualZeroDelayFiresWithoutAdvance(t *testing.T) {
	c := NewManual(t0)
	done := make(chan struct{})
	c.AfterFunc(0, func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("zero-delay timer never fired")
	}
}

func TestBlockUntilAndWaitUntilDeadline(t *testing.T) {
	c := NewManual(t0)
	ctx := context.Background()
	res := make(chan WaitResult, 1)
	go func() { res <- WaitUntil(ctx, c, t0.Add(18*time.Second), nil) }()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(17 * time.Second)
	select {
	case r := <-res:
		t.Fatalf("returned %v before the deadline", r)
	default:
	}
	c.Advance(time.Second)
	if r := <-res; r != WaitDeadline {
		t.Fatalf("result = %v, want deadline", r)
	}
	if c.Pending() != 0 {
		t.Fatalf("pending = %d after wait", c.Pending())
	}
}

func TestWaitUntilCondition(t *testing.T) {
	c := NewManual(t0)
	ctx := context.Background()
	cond := make(chan struct{})
	res := make(chan WaitResult, 1)
	go func() { res <- WaitUntil(ctx, c, t0.Add(18*time.Second), cond) }()
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	close(cond)
	if r := <-res; r != WaitCondition {
		t.Fatalf("result = %v, want condition", r)
	}
	if c.Pending() != 0 {
		t.Fatalf("wait left its timer scheduled (%d)", c.Pending())
	}
	// Already-ready condition and past deadline answer at once.
	if r := WaitUntil(ctx, c, t0.Add(time.Hour), cond); r != WaitCondition {
		t.Fatalf("ready cond: %v", r)
	}
	if r := WaitUntil(ctx, c, t0, nil); r != WaitDeadline {
		t.Fatalf("past deadline: %v", r)
	}
}

func TestWaitUntilCanceled(t *testing.T) {
	c := NewManual(t0)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan WaitResult, 1)
	go func() { res <- WaitUntil(ctx, c, t0.Add(time.Hour), nil) }()
	if err := c.BlockUntil(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if r := <-res; r != WaitCanceled {
		t.Fatalf("result = %v, want canceled", r)
	}
}

func TestBlockUntilHonoursContext(t *testing.T) {
	c := NewManual(t0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.BlockUntil(ctx, 1); err == nil {
		t.Fatal("BlockUntil returned nil with no timers and a canceled context")
	}
}

func TestConcurrentSchedulingAndAdvance(t *testing.T) {
	c := NewManual(t0)
	var mu sync.Mutex
	count := 0
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.AfterFunc(time.Duration(i+1)*time.Second, func() {
				mu.Lock()
				count++
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	var wg2 sync.WaitGroup
	for range 5 {
		wg2.Add(1)
		go func() { defer wg2.Done(); c.Advance(10 * time.Second) }()
	}
	wg2.Wait()
	// Any ordering of five 10 s jumps reaches 50 s and fires every timer
	// (deadlines 1..50 s) synchronously.
	mu.Lock()
	defer mu.Unlock()
	if count != 50 {
		t.Fatalf("fired %d of 50", count)
	}
}

func TestScaledAdvanceJumpsAndFires(t *testing.T) {
	// A huge scale would race ahead on its own; use scale 1 and jump.
	c := NewScaled(t0, 1)
	if c.Scale() != 1 {
		t.Fatalf("scale = %v", c.Scale())
	}
	fired := make(chan time.Time, 1)
	c.AfterFunc(time.Hour, func() { fired <- c.Now() })
	c.Advance(time.Hour)
	select {
	case at := <-fired:
		if at.Before(t0.Add(time.Hour)) {
			t.Fatalf("fired at %v, before the deadline", at)
		}
	default:
		t.Fatal("Advance did not fire the due timer synchronously")
	}
	if now := c.Now(); now.Before(t0.Add(time.Hour)) || now.After(t0.Add(time.Hour+time.Minute)) {
		t.Fatalf("Now = %v, want about t0+1h", now)
	}
}

func TestScaledRunsFasterThanWall(t *testing.T) {
	c := NewScaled(t0, 3600) // one service hour per wall second
	done := make(chan struct{})
	start := time.Now()
	c.AfterFunc(10*time.Second, func() { close(done) }) // ~2.8 ms of wall time
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("scaled timer did not fire on wall time")
	}
	if wall := time.Since(start); wall > 5*time.Second {
		t.Fatalf("took %v of wall time", wall)
	}
	if c.Now().Sub(t0) < 10*time.Second {
		t.Fatalf("service time %v behind the fired timer", c.Now().Sub(t0))
	}
}

func TestRealClock(t *testing.T) {
	c := NewReal()
	before := time.Now().Add(-time.Second)
	now := c.Now()
	if now.Before(before) || now.After(time.Now().Add(time.Second)) {
		t.Fatalf("real Now = %v far from wall time", now)
	}
	if now.Location() != time.UTC {
		t.Fatalf("Now not UTC: %v", now.Location())
	}
	c.Advance(24 * time.Hour)
	if c.Now().Sub(now) < 24*time.Hour {
		t.Fatal("Advance did not jump the real clock")
	}
}

// Stop drops pending timers unfired, schedules nothing afterwards, and leaves time readable.
func TestStopEndsTheScheduler(t *testing.T) {
	for _, c := range []Clock{NewManual(time.Unix(0, 0)), NewScaled(time.Unix(0, 0), 1000)} {
		fired := make(chan struct{}, 2)
		c.AfterFunc(time.Hour, func() { fired <- struct{}{} })
		c.Stop()
		c.Stop()
		if c.AfterFunc(time.Second, func() { fired <- struct{}{} }).Stop() {
			t.Fatal("a timer scheduled after Stop reports it was pending")
		}
		before := c.Now()
		c.Advance(2 * time.Hour)
		if !c.Now().After(before) {
			t.Fatal("Advance stopped moving time")
		}
		select {
		case <-fired:
			t.Fatal("a timer fired after Stop")
		default:
		}
	}
}

// Service time stops at MaxOffset however it is pushed: by advances, or by a huge scale.
func TestClockCannotWrap(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(start)
	prev := m.Now()
	for range 50 { // 500 years of ten-year advances
		m.Advance(10 * 365 * 24 * time.Hour)
		now := m.Now()
		if now.Before(prev) || now.After(start.Add(MaxOffset)) {
			t.Fatalf("now %v after %v (bound %v)", now, prev, start.Add(MaxOffset))
		}
		prev = now
	}
	if m.Headroom() != 0 || !m.Now().Equal(start.Add(MaxOffset)) {
		t.Fatalf("headroom %v, now %v", m.Headroom(), m.Now())
	}
	s := NewScaled(start, 1e10)
	if s.Scale() != MaxScale {
		t.Fatalf("scale %v, want it capped at %v", s.Scale(), float64(MaxScale))
	}
	a := s.Now()
	s.Advance(MaxOffset - time.Hour)
	b := s.Now()
	if b.Before(a) || b.After(start.Add(MaxOffset)) {
		t.Fatalf("scaled clock ran from %v to %v", a, b)
	}
}
