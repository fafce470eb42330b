// Package clock is the mock's only source of time, as users of package mock see it. Every timer in
// the mock (render steps, the wait call, rolling windows, link and reservation expiry, webhook
// retries) goes through a Clock, so tests and the control API jump time forward instead of
// sleeping: pass a Manual clock in mock.Config and call Advance.
//
// Three implementations share one scheduler:
//
//   - NewReal: service time is wall time (plus whatever Advance added).
//   - NewScaled: service time runs scale times faster than wall time.
//   - NewManual: service time moves only on Advance.
//
// Due timers fire in deadline order (ties in scheduling order), each exactly once. All methods are
// safe for concurrent use.
//
// The implementation lives in internal/clock, below every concern of the mock that uses it; the
// names here are aliases of those, so a value from either package is the same type.
package clock

import (
	"context"
	"time"

	iclock "github.com/mediaspec/mediaspec/internal/clock"
)

// Clock is the injected time source: Now, AfterFunc, Advance, Scale, Headroom and Stop.
type Clock = iclock.Clock

// Timer is a scheduled callback; Stop cancels it if it has not fired.
type Timer = iclock.Timer

// Manual is a clock that moves only when Advance is called. Besides Clock it offers Pending and
// BlockUntil, so tests can wait for a goroutine to have scheduled its timer before advancing,
// without sleeping.
type Manual = iclock.Manual

// WaitResult says why WaitUntil returned.
type WaitResult = iclock.WaitResult

// The results of WaitUntil.
const (
	// WaitCondition: cond was closed (or sent on) before the deadline.
	WaitCondition = iclock.WaitCondition
	// WaitDeadline: service time reached the deadline first.
	WaitDeadline = iclock.WaitDeadline
	// WaitCanceled: ctx was done first.
	WaitCanceled = iclock.WaitCanceled
)

// MaxOffset bounds how far service time ever runs ahead of a clock's start: advances plus scaled
// wall time. At the bound service time stands still, so it never wraps around and an expired link
// never comes back to life.
const MaxOffset = iclock.MaxOffset

// MaxScale bounds a scaled clock's factor (a wall day is then ~27 years of service time).
const MaxScale = iclock.MaxScale

// NewReal returns a clock whose service time is wall time.
func NewReal() Clock { return iclock.NewReal() }

// NewScaled returns a clock that starts at start and runs scale times faster than wall time. scale
// must be > 0 and at most MaxScale; a non-positive (or NaN) scale is treated as 1, a larger one as
// MaxScale.
func NewScaled(start time.Time, scale float64) Clock { return iclock.NewScaled(start, scale) }

// NewManual returns a clock frozen at start until Advance moves it.
func NewManual(start time.Time) *Manual { return iclock.NewManual(start) }

// WaitUntil blocks until cond is closed or receives a value, service time on c reaches deadline,
// or ctx is done, whichever comes first. A nil cond never fires. A deadline not after c.Now()
// returns WaitDeadline at once unless cond is already ready.
func WaitUntil(ctx context.Context, c Clock, deadline time.Time, cond <-chan struct{}) WaitResult {
	return iclock.WaitUntil(ctx, c, deadline, cond)
}

// Format writes t as every answer of the service does: RFC 3339 in UTC with Z (fractional seconds
// when there are any).
func Format(t time.Time) string { return iclock.Format(t) }

// FormatPtr is Format for an optional time: nil stays nil (null in JSON).
func FormatPtr(t *time.Time) *string { return iclock.FormatPtr(t) }
