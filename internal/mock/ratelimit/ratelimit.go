// Package ratelimit implements the per-key request buckets: each (key,
// bucket) pair allows a number of calls in any sliding 60 second window of
// service time (the injected clock).
//
// Memory is bounded: a window holds at most its limit of calls, as at most one
// run per millisecond of the window, and windows whose calls have all left the
// window are pruned periodically.
package ratelimit

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"math"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// Bucket names a per-key bucket.
type Bucket string

// The buckets of the interface spec.
const (
	AgentRead     Bucket = "agent_read"
	AgentEstimate Bucket = "agent_estimate"
	AgentSubmit   Bucket = "agent_submit"
	WebhookManage Bucket = "webhook_manage"
	Uploads       Bucket = "uploads"
	Reservations  Bucket = "reservations"
)

// Window is the sliding window length.
const Window = contract.BucketWindow

// Buckets lists every bucket in a fixed order.
func Buckets() []Bucket {
	return []Bucket{AgentRead, AgentEstimate, AgentSubmit, WebhookManage, Uploads, Reservations}
}

// Valid reports whether b is a known bucket.
func (b Bucket) Valid() bool {
	_, ok := DefaultLimits()[b]
	return ok
}

// DefaultLimits returns the calls per window of each bucket.
func DefaultLimits() map[Bucket]int {
	return map[Bucket]int{
		AgentRead: contract.ReadsPerMinute, AgentEstimate: contract.EstimatesPerMinute,
		AgentSubmit: contract.SubmitsPerMinute, WebhookManage: contract.WebhookManagePerMinute,
		Uploads: contract.UploadCallsPerMinute, Reservations: contract.ReservationsPerMinute,
	}
}

type winKey struct {
	key    string
	bucket Bucket
}

// Limiter is safe for concurrent use.
type Limiter struct {
	clock clock.Clock
	base  time.Time // the clock at New: call times are held as offsets from it (no pointer for the collector to scan)

	mu        sync.Mutex // guards everything below
	limits    map[Bucket]int
	overrides map[string]map[Bucket]int
	windows   map[winKey]*window
	calls     int // calls since the last prune
}

// New returns a limiter on clock c with the given per-bucket limits (nil:
// DefaultLimits). A bucket missing from limits is unlimited.
func New(c clock.Clock, limits map[Bucket]int) *Limiter {
	if limits == nil {
		limits = DefaultLimits()
	}
	return &Limiter{
		clock:     c,
		limits:    limits,
		overrides: map[string]map[Bucket]int{},
		base:      c.Now(),
		windows:   map[winKey]*window{},
	}
}

// SetOverride sets key's own limit for bucket (0 allows no call); a negative
// limit removes the override.
func (l *Limiter) SetOverride(key string, b Bucket, limit int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if limit < 0 {
		delete(l.overrides[key], b)
		if len(l.overrides[key]) == 0 {
			delete(l.overrides, key)
		}
		return
	}
	if l.overrides[key] == nil {
		l.overrides[key] = map[Bucket]int{}
	}
	l.overrides[key][b] = limit
}

// Limit reports key's effective limit for b and whether b is limited at all.
func (l *Limiter) Limit(key string, b Bucket) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limitLocked(key, b)
}

func (l *Limiter) limitLocked(key string, b Bucket) (int, bool) {
	if o, ok := l.overrides[key][b]; ok {
		return o, true
	}
	n, ok := l.limits[b]
	return n, ok
}

// Allow records a call by key in bucket b if the window has room. When it
// has none it records nothing and reports how long until the oldest call in
// the window leaves it (the whole Window for a limit of 0).
func (l *Limiter) Allow(key string, b Bucket) (ok bool, retryAfter time.Duration) {
	return l.AllowAll(key, b)
}

// AllowAll is Allow for a call that counts in several buckets at once (a
// reservation counts in uploads and reservations): the call is recorded in
// every bucket only if all have room; otherwise nothing is recorded and
// retryAfter is the longest wait among the full buckets.
func (l *Limiter) AllowAll(key string, buckets ...Bucket) (ok bool, retryAfter time.Duration) {
	return l.AllowKey(key, nil, buckets...)
}

// AllowKey is AllowAll with the key's own limits passed in: a bucket present
// in overrides uses that limit instead of the limiter's (the API layer passes
// the key record's bucket overrides, which are the source of truth).
func (l *Limiter) AllowKey(key string, overrides map[Bucket]int, buckets ...Bucket) (ok bool, retryAfter time.Duration) {
	now := l.clock.Now().Sub(l.base)
	cutoff := now - Window
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maybePruneLocked(cutoff)
	ok = true
	for _, b := range buckets {
		limit, limited := l.limitLocked(key, b)
		if o, has := overrides[b]; has {
			limit, limited = o, true
		}
		if !limited {
			continue
		}
		w := l.windows[winKey{key, b}]
		held := 0
		if w != nil {
			w.trim(cutoff)
			held = w.n
		}
		if held < limit {
			continue
		}
		ok = false
		wait := Window
		if limit > 0 {
			// The call that must leave before one more fits.
			wait = w.callAt(held-limit) + Window - now
		}
		retryAfter = max(retryAfter, wait)
	}
	if !ok {
		return false, retryAfter
	}
	for _, b := range buckets {
		_, limited := l.limitLocked(key, b)
		if _, has := overrides[b]; limited || has {
			k := winKey{key, b}
			w := l.windows[k]
			if w == nil {
				w = &window{}
				l.windows[k] = w
			}
			w.add(now)
		}
	}
	return true, 0
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}

// Reset forgets every recorded call and every override.
func (l *Limiter) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.windows = map[winKey]*window{}
	l.overrides = map[string]map[Bucket]int{}
	l.calls = 0
}

// Windows reports how many (key, bucket) windows are held (for tests).
func (l *Limiter) Windows() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}

// window is one (key, bucket)'s calls in the last Window, oldest first, as runs: the calls of one
// millisecond share a run, which leaves the window with its latest call (so a call leaves at most
// a millisecond late, never early). A busy key with a high limit held one time per call: tens of
// megabytes and a copy of them at each growth of the array, at the rates a load test makes.
type window struct {
	runs []run // oldest first
	n    int   // calls held
}

// run is calls of one millisecond: count of them, the latest at last.
type run struct {
	last  time.Duration
	count int
}

// runGrain is the span of service time whose calls share a run.
const runGrain = time.Millisecond

// add records a call at now (a caller that read the clock before another took the lock may come
// a moment behind it: its run's latest stays the later).
func (w *window) add(now time.Duration) {
	if k := len(w.runs) - 1; k >= 0 && now/runGrain == w.runs[k].last/runGrain {
		w.runs[k].last = max(w.runs[k].last, now)
		w.runs[k].count++
	} else {
		w.runs = append(w.runs, run{last: now, count: 1})
	}
	w.n++
}

// trim drops the runs whose latest call is at or before cutoff. It reslices rather than moves the
// runs left (a busy key drops a run every millisecond); append copies only the runs still held when
// it next grows the array.
func (w *window) trim(cutoff time.Duration) {
	i := 0
	for i < len(w.runs) && w.runs[i].last <= cutoff {
		w.n -= w.runs[i].count
		i++
	}
	w.runs = w.runs[i:]
}

// callAt is when the i-th call held (0: the oldest) leaves with its run, less Window.
func (w *window) callAt(i int) time.Duration {
	for _, r := range w.runs {
		if i < r.count {
			return r.last
		}
		i -= r.count
	}
	return w.runs[len(w.runs)-1].last
}

const pruneEvery = 1024

func (l *Limiter) maybePruneLocked(cutoff time.Duration) {
	l.calls++
	if l.calls < pruneEvery {
		return
	}
	l.calls = 0
	for k, w := range l.windows {
		if w.trim(cutoff); w.n == 0 {
			delete(l.windows, k)
		}
	}
}
