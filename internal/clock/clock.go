// Package clock is the mock's only source of time. Every timer in the mock
// (render steps, the wait call, rolling windows, link expiry, webhook retries)
// goes through a Clock so that tests and the control API can jump time
// forward instead of sleeping.
//
// Three implementations share one scheduler:
//
//   - NewReal: service time is wall time (plus whatever Advance added).
//   - NewScaled: service time runs scale times faster than wall time.
//   - NewManual: service time moves only on Advance.
//
// Timers are kept in one heap per clock. Due timers fire in deadline order
// (ties in scheduling order), each exactly once. All methods are safe for
// concurrent use.
//
// It sits below every concern of the mock that keeps time (internal/mock/...); package mock/clock
// is its public face (aliases of these names) for users of package mock.
package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Clock is the injected time source.
type Clock interface {
	// Now returns the current service time in UTC without a monotonic reading.
	Now() time.Time
	// AfterFunc calls f once service time reaches Now()+d. A d <= 0 fires
	// as soon as possible on another goroutine (or within a running Advance).
	// f must not block for long: timers fired by Advance run on the caller's
	// goroutine, timers fired by wall time run on the clock's own goroutine.
	AfterFunc(d time.Duration, f func()) Timer
	// Advance jumps service time forward by d (d <= 0 does nothing; at most
	// Headroom: service time never passes MaxOffset). Before it
	// returns it fires, synchronously and in deadline order, every timer whose
	// deadline falls within the jumped span, including timers those callbacks
	// schedule within the span; while a callback runs, Now reports that
	// timer's deadline. Concurrent Advance calls run one after the other.
	// Callers must hold no lock a timer callback may take, and a callback
	// must not call Advance.
	Advance(d time.Duration)
	// Scale is how many seconds of service time pass per wall second:
	// 1 for a real clock, the factor for a scaled clock, 0 for a manual one.
	Scale() float64
	// Headroom is how much further service time may move ahead of its start
	// (MaxOffset minus the advances and scaled wall time so far); Advance
	// moves at most this far.
	Headroom() time.Duration
	// Stop ends the scheduler: pending timers are dropped unfired, the wall
	// timer is released and later AfterFunc calls schedule nothing. Now and
	// Advance keep working. Safe to call more than once.
	Stop()
}

// Timer is a scheduled callback.
type Timer interface {
	// Stop prevents the callback from firing. It reports true if the call
	// stopped the timer, false if it had already fired or been stopped.
	Stop() bool
}

// MaxOffset bounds how far service time ever runs ahead of a clock's start: advances plus scaled
// wall time. At the bound service time stands still, so it can never wrap around (time.Duration
// overflows after ~292 years) and an expired link never comes back to life.
const MaxOffset = 100 * 365 * 24 * time.Hour

// MaxScale bounds a scaled clock's factor (a wall day is then ~27 years of service time).
const MaxScale = 10000

// NewReal returns a clock whose service time is wall time.
func NewReal() Clock { return newEngine(time.Now(), 1, false) }

// NewScaled returns a clock that starts at start and runs scale times faster
// than wall time. scale must be > 0 and at most MaxScale; a non-positive
// (or NaN) scale is treated as 1, a larger one as MaxScale.
func NewScaled(start time.Time, scale float64) Clock {
	if !(scale > 0) {
		scale = 1
	}
	scale = min(scale, MaxScale)
	return newEngine(start, scale, false)
}

// Manual is a clock that moves only when Advance is called. Besides Clock it
// offers Pending and BlockUntil so tests can wait for a goroutine to have
// scheduled its timer before advancing, without sleeping.
type Manual struct{ *engine }

// NewManual returns a clock frozen at start until Advance moves it.
func NewManual(start time.Time) *Manual { return &Manual{newEngine(start, 0, true)} }

// Pending reports how many timers are scheduled and not yet fired or stopped.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.timers)
}

// BlockUntil returns nil once at least n timers are pending, or ctx.Err().
func (m *Manual) BlockUntil(ctx context.Context, n int) error {
	for {
		m.mu.Lock()
		if len(m.timers) >= n {
			m.mu.Unlock()
			return nil
		}
		ch := m.changed
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// engine implements Clock for all three kinds.
type engine struct {
	manual    bool
	scale     float64
	wallStart time.Time // wall reading (with monotonic clock) at creation
	svcStart  time.Time // service time at creation

	advMu sync.Mutex // serializes Advance calls; never held by timer callbacks' callers

	mu      sync.Mutex // guards offset, timers, seq, wake, changed, firing, stopped
	stopped bool
	offset  time.Duration
	timers  timerHeap
	seq     uint64
	wake    *time.Timer   // real timer armed for the earliest deadline (not manual)
	changed chan struct{} // closed and replaced whenever timers is pushed
	firing  *time.Time    // deadline of the callback Advance is running, if any
}

func newEngine(start time.Time, scale float64, manual bool) *engine {
	return &engine{
		manual:    manual,
		scale:     scale,
		wallStart: time.Now(),
		svcStart:  start.UTC().Round(0),
		changed:   make(chan struct{}),
	}
}

// aheadLocked is how far service time is ahead of svcStart, at most MaxOffset; e.mu must be held.
func (e *engine) aheadLocked() time.Duration {
	ahead := e.offset // never above MaxOffset (Advance clamps)
	if !e.manual {
		// Saturate before converting: a float beyond int64 does not convert to a Duration.
		ahead += time.Duration(min(float64(time.Since(e.wallStart))*e.scale, float64(MaxOffset)))
	}
	return min(ahead, MaxOffset)
}

// nowLocked computes service time; e.mu must be held.
func (e *engine) nowLocked() time.Time {
	if e.firing != nil {
		return *e.firing
	}
	return e.svcStart.Add(e.aheadLocked())
}

func (e *engine) Headroom() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return MaxOffset - e.aheadLocked()
}

func (e *engine) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nowLocked()
}

func (e *engine) Scale() float64 { return e.scale }

func (e *engine) AfterFunc(d time.Duration, f func()) Timer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return &timer{e: e, index: -1} // never fires; Stop reports false
	}
	e.seq++
	t := &timer{e: e, deadline: e.nowLocked().Add(d), seq: e.seq, f: f, index: -1}
	heap.Push(&e.timers, t)
	close(e.changed)
	e.changed = make(chan struct{})
	if e.manual {
		if d <= 0 && e.firing == nil {
			go e.fireDue()
		}
	} else {
		e.armLocked()
	}
	return t
}

// Stop ends the clock's scheduler: every pending timer is dropped without firing, the wall timer
// is released, and later AfterFunc calls schedule nothing. Now and Advance keep working (Advance
// then only moves time). Stop is safe to call more than once and concurrently with other methods;
// a callback already running finishes.
func (e *engine) Stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	for _, t := range e.timers {
		t.index = -1
	}
	e.timers = nil
	if e.wake != nil {
		e.wake.Stop()
	}
}

// armLocked points the wall timer at the earliest deadline.
func (e *engine) armLocked() {
	if e.stopped {
		return
	}
	if len(e.timers) == 0 {
		if e.wake != nil {
			e.wake.Stop()
		}
		return
	}
	svcWait := e.timers[0].deadline.Sub(e.nowLocked())
	wallWait := time.Duration(float64(svcWait) / e.scale)
	if wallWait < 0 {
		wallWait = 0
	}
	if e.wake == nil {
		e.wake = time.AfterFunc(wallWait, e.fireDue)
		return
	}
	e.wake.Reset(wallWait)
}

// fireDue runs every timer whose deadline is at or before the current
// service time, in order.
func (e *engine) fireDue() {
	for {
		e.mu.Lock()
		if len(e.timers) == 0 || e.timers[0].deadline.After(e.nowLocked()) {
			if !e.manual {
				e.armLocked()
			}
			e.mu.Unlock()
			return
		}
		t := heap.Pop(&e.timers).(*timer)
		e.mu.Unlock()
		t.f()
	}
}

func (e *engine) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	e.advMu.Lock()
	defer e.advMu.Unlock()
	e.mu.Lock()
	d = min(d, MaxOffset-e.aheadLocked())
	target := e.nowLocked().Add(d)
	for len(e.timers) > 0 && !e.timers[0].deadline.After(target) {
		t := heap.Pop(&e.timers).(*timer)
		dl := t.deadline
		if now := e.nowLocked(); dl.Before(now) {
			dl = now
		}
		e.firing = &dl
		e.mu.Unlock()
		t.f()
		e.mu.Lock()
		e.firing = nil
	}
	// Move the base so that Now() == target at this instant (never past MaxOffset).
	e.offset = min(e.offset+target.Sub(e.nowLocked()), MaxOffset)
	if !e.manual {
		e.armLocked()
	}
	e.mu.Unlock()
}

type timer struct {
	e        *engine
	deadline time.Time
	seq      uint64
	f        func()
	index    int // position in the heap, -1 when not scheduled
}

func (t *timer) Stop() bool {
	e := t.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&e.timers, t.index)
	if !e.manual {
		e.armLocked()
	}
	return true
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].deadline.Equal(h[j].deadline) {
		return h[i].seq < h[j].seq
	}
	return h[i].deadline.Before(h[j].deadline)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}

// WaitResult says why WaitUntil returned.
type WaitResult int

const (
	// WaitCondition: cond was closed (or sent on) before the deadline.
	WaitCondition WaitResult = iota
	// WaitDeadline: service time reached the deadline first.
	WaitDeadline
	// WaitCanceled: ctx was done first.
	WaitCanceled
)

// String is the result's name: condition, deadline or canceled.
func (r WaitResult) String() string {
	switch r {
	case WaitCondition:
		return "condition"
	case WaitDeadline:
		return "deadline"
	default:
		return "canceled"
	}
}

// WaitUntil blocks until cond is closed or receives a value, service time on
// c reaches deadline, or ctx is done, whichever comes first. A nil cond never
// fires. A deadline not after c.Now() returns WaitDeadline at once unless cond
// is already ready. It is the building block of the wait endpoint ("block
// until the state changes or about 18 seconds of service time pass"), and
// tests drive it with Manual.Advance.
func WaitUntil(ctx context.Context, c Clock, deadline time.Time, cond <-chan struct{}) WaitResult {
	select {
	case <-cond:
		return WaitCondition
	default:
	}
	if !deadline.After(c.Now()) {
		return WaitDeadline
	}
	reached := make(chan struct{})
	t := c.AfterFunc(deadline.Sub(c.Now()), func() { close(reached) })
	defer t.Stop()
	select {
	case <-cond:
		return WaitCondition
	case <-reached:
		return WaitDeadline
	case <-ctx.Done():
		return WaitCanceled
	}
}
