// Package ratelimit implements the per-key request buckets: each (key,
// bucket) pair allows a number of calls in any sliding 60 second window of
// service time (the injected clock).
//
// Memory is bounded: a window holds at most its limit of timestamps, and
// windows whose calls have all left the window are pruned periodically.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
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
const Window = 60 * time.Second

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
		AgentRead: 120, AgentEstimate: 60, AgentSubmit: 20,
		WebhookManage: 20, Uploads: 30, Reservations: 30,
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
	windows   map[winKey][]time.Duration // call times - base, oldest first, all within Window
	calls     int                        // calls since the last prune
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
		windows:   map[winKey][]time.Duration{},
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
		k := winKey{key, b}
		w := trim(l.windows[k], cutoff)
		l.windows[k] = w
		if len(w) < limit {
			continue
		}
		ok = false
		wait := Window
		if limit > 0 {
			// The call that must leave before one more fits.
			wait = w[len(w)-limit] + Window - now
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
			l.windows[k] = append(l.windows[k], now)
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
	l.windows = map[winKey][]time.Duration{}
	l.overrides = map[string]map[Bucket]int{}
	l.calls = 0
}

// Windows reports how many (key, bucket) windows are held (for tests).
func (l *Limiter) Windows() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}

// trim drops calls at or before cutoff. It reslices rather than moves the calls left: a busy key
// with a high limit drops one call per call, and moving the rest each time made every call cost
// the whole window. append copies only the calls still held when it next grows the array.
func trim(w []time.Duration, cutoff time.Duration) []time.Duration {
	i := 0
	for i < len(w) && w[i] <= cutoff {
		i++
	}
	return w[i:]
}

const pruneEvery = 1024

func (l *Limiter) maybePruneLocked(cutoff time.Duration) {
	l.calls++
	if l.calls < pruneEvery {
		return
	}
	l.calls = 0
	for k, w := range l.windows {
		if w = trim(w, cutoff); len(w) == 0 {
			delete(l.windows, k)
		} else {
			l.windows[k] = w
		}
	}
}
