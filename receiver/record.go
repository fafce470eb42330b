package receiver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Verdict is the receiver's judgement of one attempt.
type Verdict string

// The verdicts. Only VerdictVerified records a new event.
const (
	// VerdictVerified: signed with an accepted secret, fresh, well formed, ids agree, first time seen.
	VerdictVerified Verdict = "verified"
	// VerdictDuplicate: as verified, but an earlier attempt with this webhook-id was verified already.
	VerdictDuplicate Verdict = "duplicate"
	// VerdictBadSignature: no v1 signature in webhook-signature matches the raw body under any secret.
	VerdictBadSignature Verdict = "bad_signature"
	// VerdictStaleTimestamp: webhook-timestamp is more than Tolerance before Now.
	VerdictStaleTimestamp Verdict = "stale_timestamp"
	// VerdictFutureTimestamp: webhook-timestamp is more than Tolerance after Now.
	VerdictFutureTimestamp Verdict = "future_timestamp"
	// VerdictMissingHeaders: webhook-id, webhook-timestamp or webhook-signature is missing or empty,
	// or webhook-timestamp is not integer Unix seconds.
	VerdictMissingHeaders Verdict = "missing_headers"
	// VerdictBadBody: the body is too long, unreadable, not JSON, or lacks a non-empty id and type,
	// an RFC 3339 created_at or an object data.
	VerdictBadBody Verdict = "bad_body"
	// VerdictIDMismatch: webhook-id differs from the envelope id.
	VerdictIDMismatch Verdict = "id_mismatch"
)

// Accepted reports whether the verdict is verified or duplicate.
func (v Verdict) Accepted() bool { return v == VerdictVerified || v == VerdictDuplicate }

// DefaultStatus is the status answered when Behavior does not choose one: 204 for an accepted
// attempt, 400 for a refused one.
func (v Verdict) DefaultStatus() int {
	if v.Accepted() {
		return http.StatusNoContent
	}
	return http.StatusBadRequest
}

// Attempt is one delivery POST as the receiver saw and answered it. Header and Body are shared
// with the receiver's records: do not modify them.
type Attempt struct {
	Seq        int64       // arrival order across all paths, from 1; Reset does not restart it
	Time       time.Time   // arrival, on the receiver's clock
	Method     string      // always POST
	Path       string      // request path: which endpoint this attempt was sent to
	DeliveryID string      // the webhook-id header; "" when missing
	Number     int         // 1 for the first attempt with this DeliveryID, 2 for the next...; 0 without one
	Header     http.Header // request headers as received, webhook-signature included
	Body       []byte      // raw body as read (at most MaxBody bytes)
	Verdict    Verdict     // accepted (VerdictVerified) or why not
	Detail     string      // why the attempt was refused; "" when accepted
	EventID    string      // envelope id, when the body parsed
	Type       string      // envelope type, when the body parsed
	ResourceID string      // see Event.ResourceID, when the body parsed
	// Status is the status answered; 0 until the answer is written, and 0 for good when the attempt
	// was abandoned or dropped.
	Status     int
	AnsweredAt time.Time // when the answer was settled (written, abandoned or dropped); zero until
	Abandoned  bool      // the client went away (or the receiver closed) during a hold, before any answer
	Dropped    bool      // the connection was closed on purpose without an answer
}

// Settled reports whether the attempt's answer is final: written, abandoned or dropped.
func (a Attempt) Settled() bool { return !a.AnsweredAt.IsZero() }

// attemptJSON is the wire form of an Attempt in the listing API and in `mediaspec receive --json`.
type attemptJSON struct {
	Seq        int64       `json:"seq"`
	Time       time.Time   `json:"time"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	DeliveryID string      `json:"delivery_id"`
	Number     int         `json:"number"`
	Header     http.Header `json:"headers"`
	Body       *string     `json:"body,omitempty"`        // when the body is valid UTF-8
	BodyBase64 *string     `json:"body_base64,omitempty"` // otherwise
	Verdict    Verdict     `json:"verdict"`
	Detail     string      `json:"detail,omitempty"`
	EventID    string      `json:"event_id,omitempty"`
	Type       string      `json:"type,omitempty"`
	ResourceID string      `json:"resource_id,omitempty"`
	Status     int         `json:"status"`
	AnsweredAt *time.Time  `json:"answered_at"`
	Abandoned  bool        `json:"abandoned"`
	Dropped    bool        `json:"dropped"`
}

// MarshalJSON writes the attempt with snake_case keys; the raw body is `body` when it is valid
// UTF-8 and `body_base64` otherwise.
func (a Attempt) MarshalJSON() ([]byte, error) {
	j := attemptJSON{Seq: a.Seq, Time: a.Time.UTC(), Method: a.Method, Path: a.Path, DeliveryID: a.DeliveryID,
		Number: a.Number, Header: a.Header, Verdict: a.Verdict, Detail: a.Detail, EventID: a.EventID,
		Type: a.Type, ResourceID: a.ResourceID, Status: a.Status, Abandoned: a.Abandoned, Dropped: a.Dropped}
	if utf8.Valid(a.Body) {
		s := string(a.Body)
		j.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(a.Body)
		j.BodyBase64 = &s
	}
	if !a.AnsweredAt.IsZero() {
		t := a.AnsweredAt.UTC()
		j.AnsweredAt = &t
	}
	return json.Marshal(j)
}

// Event is one unique verified delivery: the parsed envelope plus where and when it arrived.
// Data and Raw are shared with the receiver's records: do not modify them.
type Event struct {
	ID         string          `json:"id"`          // envelope id (= webhook-id)
	Type       string          `json:"type"`        // event name
	CreatedAt  time.Time       `json:"created_at"`  // envelope created_at
	Data       json.RawMessage `json:"data"`        // envelope data, raw
	Raw        json.RawMessage `json:"-"`           // the whole raw body
	Path       string          `json:"path"`        // the request path it was sent to
	ReceivedAt time.Time       `json:"received_at"` // receiver clock
	Seq        int64           `json:"seq"`         // Seq of the attempt that verified it

	resourceID string // ResourceID computed when the receiver recorded the event
}

// ResourceID is the id of the resource the event is about: data.generation_id,
// data.batch_group_id, data.workflow_run_id or data.webhook_id, the first one present as a
// non-empty string, in that order; "" when none is (credits.low).
func (e Event) ResourceID() string {
	if e.resourceID != "" {
		return e.resourceID
	}
	return resourceIDOf(e.Data)
}

func resourceIDOf(data json.RawMessage) string {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	for _, k := range []string{"generation_id", "batch_group_id", "workflow_run_id", "webhook_id"} {
		var s string
		if json.Unmarshal(d[k], &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// MarshalJSON adds resource_id to the event's fields.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event // without the methods, so no recursion; unexported fields are not encoded
	return json.Marshal(struct {
		plain
		ResourceID string `json:"resource_id"`
	}{plain(e), e.ResourceID()})
}

// Match selects events. Empty fields match anything.
type Match struct {
	Type       string           // event type, e.g. generation.completed
	ResourceID string           // Event.ResourceID()
	Path       string           // endpoint path the event arrived on
	Where      func(Event) bool // extra predicate; nil matches anything
}

func (m Match) matches(e Event) bool {
	return (m.Type == "" || m.Type == e.Type) &&
		(m.ResourceID == "" || m.ResourceID == e.ResourceID()) &&
		(m.Path == "" || m.Path == e.Path) &&
		(m.Where == nil || m.Where(e))
}

// String describes what the match selects.
func (m Match) String() string {
	var parts []string
	if m.Type != "" {
		parts = append(parts, "type "+m.Type)
	}
	if m.ResourceID != "" {
		parts = append(parts, "resource "+m.ResourceID)
	}
	if m.Path != "" {
		parts = append(parts, "path "+m.Path)
	}
	if m.Where != nil {
		parts = append(parts, "a predicate")
	}
	if len(parts) == 0 {
		return "any event"
	}
	return strings.Join(parts, ", ")
}

// attemptSize is about what a kept attempt holds: its body and its header block.
func attemptSize(a *Attempt) int64 {
	n := int64(len(a.Body))
	for k, vals := range a.Header {
		for _, v := range vals {
			n += int64(len(k) + len(v) + 4)
		}
	}
	return n
}

// record stores a checked attempt that arrived at now (and its event when it is the first verified
// one of its delivery id), turning a repeat into VerdictDuplicate. It returns the stored attempt, a
// copy of it, and the behavior to apply.
func (r *Receiver) record(a Attempt, ev *Event, now time.Time) (*Attempt, Attempt, Behavior) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	a.Seq = r.seq
	a.Time = now
	if a.DeliveryID != "" {
		d := r.deliveries[a.DeliveryID]
		if d == nil {
			d = &delivery{}
			r.deliveries[a.DeliveryID] = d
			r.order = append(r.order, a.DeliveryID)
			if len(r.order) > r.maxRecords {
				delete(r.deliveries, r.order[0])
				r.order = r.order[1:]
			}
		}
		d.attempts++
		a.Number = d.attempts
		if a.Verdict == VerdictVerified {
			if d.verified {
				a.Verdict = VerdictDuplicate
			} else {
				d.verified = true
				e := *ev
				e.Path, e.ReceivedAt, e.Seq = a.Path, a.Time, a.Seq
				i, _ := slices.BinarySearchFunc(r.events, e, func(x, t Event) int {
					if x.CreatedAt.After(t.CreatedAt) {
						return 1
					}
					return -1 // equal created_at: earlier arrivals stay first
				})
				r.events = slices.Insert(r.events, i, e)
				r.eventBytes += int64(len(e.Raw))
				for len(r.events) > r.maxRecords || (r.eventBytes > MaxRecordBytes && len(r.events) > 1) {
					r.eventBytes -= int64(len(r.events[0].Raw))
					r.events = slices.Delete(r.events, 0, 1)
				}
			}
		}
	}
	rec := &a
	r.attempts = append(r.attempts, rec)
	r.keptBytes += attemptSize(rec)
	for len(r.attempts) > r.maxRecords || (r.keptBytes > MaxRecordBytes && len(r.attempts) > 1) {
		r.keptBytes -= attemptSize(r.attempts[0])
		r.attempts[0] = nil
		r.attempts = r.attempts[1:]
	}
	r.broadcastLocked()
	return rec, a, r.behavior
}

// settle writes the final answer of a stored attempt and reports it to OnAttempt. The clock is
// read a second time for the attempt here, and must be: AnsweredAt closes the span the attempt
// took (arrival, then answer), which a Behavior's Hold or a slow client makes long. It is read
// before the lock is taken, as a slow clock must be.
func (r *Receiver) settle(rec *Attempt, status int, abandoned, dropped bool) {
	answered := r.now()
	r.mu.Lock()
	rec.Status, rec.Abandoned, rec.Dropped = status, abandoned, dropped
	rec.AnsweredAt = answered
	a := *rec
	r.broadcastLocked()
	r.mu.Unlock()
	if r.onAttempt != nil {
		r.onAttempt(a)
	}
}

// broadcastLocked wakes every waiter. r.mu must be held.
func (r *Receiver) broadcastLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Events returns the unique verified events, ordered by envelope created_at, then arrival.
func (r *Receiver) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Find returns the events that match m, in Events order.
func (r *Receiver) Find(m Match) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if m.matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// Attempts returns every recorded attempt (at most MaxRecords, the latest) in arrival order.
func (r *Receiver) Attempts() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Attempt, len(r.attempts))
	for i, a := range r.attempts {
		out[i] = *a
	}
	return out
}

// AttemptsFor returns the recorded attempts whose webhook-id is deliveryID, in arrival order.
func (r *Receiver) AttemptsFor(deliveryID string) []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attemptsForLocked(deliveryID)
}

func (r *Receiver) attemptsForLocked(deliveryID string) []Attempt {
	var out []Attempt
	for _, a := range r.attempts {
		if a.DeliveryID == deliveryID {
			out = append(out, *a)
		}
	}
	return out
}

// Reset forgets every attempt, event and delivery id (so a later repeat is verified again). The
// secrets and the behavior stay. Attempt numbers restart at 1.
func (r *Receiver) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts, r.keptBytes = nil, 0
	r.events, r.eventBytes = nil, 0
	r.deliveries = map[string]*delivery{}
	r.order = nil
	r.broadcastLocked()
}

// Await returns the first event (in Events order) that matches m. It returns at once when one was
// received already; otherwise it blocks until one arrives or ctx ends, and then returns an error
// wrapping ctx.Err(). Safe to call from many goroutines.
func (r *Receiver) Await(ctx context.Context, m Match) (Event, error) {
	for {
		r.mu.Lock()
		for _, e := range r.events {
			if m.matches(e) {
				r.mu.Unlock()
				return e, nil
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("receiver: no event with %s: %w", m, ctx.Err())
		}
	}
}

// AwaitAttempts blocks until at least n attempts with webhook-id deliveryID were received and
// answered (counted since the last Reset, verified or not, on any path), then returns them in
// arrival order. An attempt is seen only once its answer is settled (Status, Abandoned, Dropped
// and AnsweredAt final; see Attempt.Settled), so the snapshot never holds a half-recorded one;
// an attempt held by a Behavior is seen when its hold ends (use AwaitArrivals to see it
// arrive). When ctx ends first it returns the settled attempts seen so far and an error wrapping
// ctx.Err().
func (r *Receiver) AwaitAttempts(ctx context.Context, deliveryID string, n int) ([]Attempt, error) {
	return r.awaitAttempts(ctx, deliveryID, n, true)
}

// AwaitArrivals blocks until at least n attempts with webhook-id deliveryID arrived (counted since
// the last Reset, verified or not, on any path), then returns the recorded ones in arrival order,
// answered or not: the latest may not be settled yet (Status 0, see Attempt.Settled), as an
// attempt a Behavior holds is not. When ctx ends first it returns the attempts seen so far and an
// error wrapping ctx.Err().
func (r *Receiver) AwaitArrivals(ctx context.Context, deliveryID string, n int) ([]Attempt, error) {
	return r.awaitAttempts(ctx, deliveryID, n, false)
}

// awaitAttempts waits for n attempts of deliveryID, only settled ones when settled is set.
func (r *Receiver) awaitAttempts(ctx context.Context, deliveryID string, n int, settled bool) ([]Attempt, error) {
	// snapshot returns the attempts seen and their count, with the channel the next change closes.
	snapshot := func() ([]Attempt, int, chan struct{}) {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := r.attemptsForLocked(deliveryID)
		if settled {
			out = slices.DeleteFunc(out, func(a Attempt) bool { return !a.Settled() })
			return out, len(out), r.changed
		}
		seen := 0
		if d := r.deliveries[deliveryID]; d != nil {
			seen = d.attempts // also counts attempts whose records were dropped (MaxRecords)
		}
		return out, seen, r.changed
	}
	for {
		out, seen, changed := snapshot()
		if seen >= n {
			return out, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			out, seen, _ = snapshot()
			what := "attempts"
			if settled {
				what = "answered attempts"
			}
			return out, fmt.Errorf("receiver: %d of %d %s of delivery %s: %w", seen, n, what, deliveryID, ctx.Err())
		}
	}
}
