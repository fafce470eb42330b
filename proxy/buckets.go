package proxy

import (
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"math"
	"strconv"
	"strings"
	"time"
)

// The per-key buckets across exchanges. The interface sends no header that shows a bucket's fill
// (only Retry-After on a refusal), so what the proxy judges is what one key's own calls prove
// whatever other clients of the same key did unseen (their calls only fill the bucket more):
//
//   - too many calls accepted: more than twice a bucket's limit accepted for one key within less
//     than 60 seconds of service time breaks the bucket's rule (RATE-001 and its kin). The text
//     says "N per minute" without saying how the minute is counted: a fixed minute lets up to 2N
//     through across its boundary, a token bucket N plus its refill, a sliding window N; only
//     more than 2N is broken under every reading. At one instant of service time (a manual clock
//     the control API reported, not advanced in between) more than N is.
//   - a refusal's wait against the calls seen (RATE-013): a bucket refusal that says "retry after
//     R seconds" while a call of the same bucket that this key made less than 60 s before leaves
//     the window sooner; and a call of the same bucket accepted well before the R seconds passed.
//
// A refusal without retry_after_seconds is the workspace's render concurrency flavour and says
// nothing about a bucket; finalize's 429 may be "another finalize runs" and is left alone. A key
// whose buckets the control API changed (in traffic the proxy carried) is not judged.

// bucketRoutes are the buckets of the text's Endpoints and Limits tables, per route, with their
// limits and the rule that states each. Reads are every documented GET but the health probes and
// the live description (which the text does not place in a bucket).
var bucketRoutes = map[string]struct {
	name  string
	limit int
	rule  string
}{
	"POST /estimates":                  {"agent_estimate", contract.EstimatesPerMinute, "RATE-002"},
	"POST /generations":                {"agent_submit", contract.SubmitsPerMinute, "RATE-003"},
	"POST /webhooks":                   {"webhook_manage", contract.WebhookManagePerMinute, "RATE-005"},
	"DELETE /webhooks/{id}":            {"webhook_manage", contract.WebhookManagePerMinute, "RATE-005"},
	"POST /uploads":                    {"uploads", contract.UploadCallsPerMinute, "RATE-008"},
	"POST /uploads/{assetId}/finalize": {"uploads", contract.UploadCallsPerMinute, "RATE-008"},
}

// bucketOf is the bucket of a documented route ("" when the route has none the text states).
func bucketOf(route string) (name string, limit int, rule string) {
	if b, ok := bucketRoutes[route]; ok {
		return b.name, b.limit, b.rule
	}
	if strings.HasPrefix(route, "GET ") && !strings.HasPrefix(route, "GET /health/") && route != "GET /openapi.json" {
		return "agent_read", contract.ReadsPerMinute, "RATE-001"
	}
	return "", 0, ""
}

// BucketWindow is the span of the per-minute buckets.
const BucketWindow = contract.BucketWindow

// bucketSeen is one key's traffic on one bucket: the latest accepted calls (at most 2N+1) and the
// latest refusal that carried a wait.
type bucketSeen struct {
	accepted []seenCall
	refusal  *seenRefusal
}

type seenCall struct {
	start, end time.Time // wall times of the exchange
	n          int64
	reserve    bool // POST /uploads (also counted by the reservations brake)
}

type seenRefusal struct {
	seenCall
	wait int64 // retry_after_seconds (or Retry-After)
}

// observeBucket runs the bucket rules on one keyed call of a documented route.
func (s *state) observeBucket(p *Proxy, c *call) {
	name, limit, rule := bucketOf(c.route)
	key := c.ex.keyID
	if name == "" || key == "" || c.ex.failed || s.bucketsOff || s.exempt.has(key) {
		return
	}
	id := key + " " + name
	b, _ := s.buckets.get(id)
	if b == nil {
		b = &bucketSeen{}
	}
	this := seenCall{start: c.ex.start, end: c.ex.end, n: c.ex.n, reserve: c.route == "POST /uploads"}
	switch st := c.ex.status; {
	case st >= 200 && st < 300:
		s.acceptedCall(p, c, b, this, limit, rule, name)
	case st == 429:
		s.refusedCall(p, c, b, this, name)
	}
	s.buckets.put(id, b)
}

// acceptedCall: an accepted call after a refusal's wait, and too many accepted calls in a window.
func (s *state) acceptedCall(p *Proxy, c *call, b *bucketSeen, this seenCall, limit int, rule, name string) {
	// A refusal on POST /uploads may be the reservations brake, which a finalize does not count in.
	if r := b.refusal; r != nil && (!r.reserve || this.reserve) {
		_, hi, known := p.serviceElapsed(r.start, r.end, this.start, this.end)
		if known && hi < time.Duration(r.wait-1)*time.Second-time.Second {
			p.find(c, SideServer, "RATE-013", false, fmt.Sprintf("The %s bucket refused this key (exchange #%d) saying retry after %d seconds, and accepted this call at most %s later: the wait is the time until the bucket has room.",
				name, r.n, r.wait, hi.Round(time.Second)))
			b.refusal = nil
		}
	}
	b.accepted = append(b.accepted, this)
	if len(b.accepted) > 2*limit+1 {
		b.accepted = append(b.accepted[:0], b.accepted[len(b.accepted)-(2*limit+1):]...)
	}
	if len(b.accepted) > limit {
		// On a manual clock the calls between two advances share one instant of service time, and
		// one instant lies in one minute however the minute is counted: more than N there is broken.
		first := b.accepted[len(b.accepted)-limit-1]
		if _, hi, known := p.serviceElapsed(first.start, first.end, this.start, this.end); known && hi == 0 {
			p.find(c, SideServer, rule, false, fmt.Sprintf("The %s bucket (%d a minute per key) accepted %d calls of this key at one instant of service time (exchanges #%d to #%d, a manual clock not advanced in between).",
				name, limit, limit+1, first.n, this.n))
			b.accepted = b.accepted[:0]
			return
		}
	}
	if len(b.accepted) == 2*limit+1 {
		first := b.accepted[0]
		if _, hi, known := p.serviceElapsed(first.start, first.end, this.start, this.end); known && hi < BucketWindow {
			p.find(c, SideServer, rule, false, fmt.Sprintf("The %s bucket (%d a minute per key) accepted %d calls of this key within %s of service time (exchanges #%d to #%d): more than twice the limit, broken however the minute is counted.",
				name, limit, len(b.accepted), hi.Round(time.Millisecond), first.n, this.n))
			b.accepted = b.accepted[:0]
		}
	}
}

// refusedCall: a bucket refusal whose wait is longer than a call this key made in the window
// needs to leave it.
func (s *state) refusedCall(p *Proxy, c *call, b *bucketSeen, this seenCall, name string) {
	e, _ := c.obj["error"].(map[string]any)
	if code, _ := e["code"].(string); code != "rate_limited" || !p.bucketed(c) {
		return
	}
	wait := int64(-1)
	if w, ok := number(e["retry_after_seconds"]); ok && w == math.Trunc(w) {
		wait = int64(w)
	} else if h, err := strconv.ParseInt(strings.TrimSpace(c.ex.respHeader.Get("Retry-After")), 10, 64); err == nil {
		wait = h
	}
	if wait < 0 {
		return // the render concurrency flavour: no bucket, no wait
	}
	for _, a := range b.accepted {
		if this.reserve && !a.reserve {
			continue // the refusal may be the reservations brake, which counts only reservations
		}
		lo, hi, known := p.serviceElapsed(a.start, a.end, this.start, this.end)
		if !known || hi >= BucketWindow {
			continue // maybe no longer in the window
		}
		// The call lies in the window and leaves it within 60 s - lo: the oldest call in the
		// window (this one or an older one, seen or not) leaves no later.
		leaves := int64(math.Ceil((BucketWindow - lo).Seconds()))
		if wait > leaves+1 {
			p.find(c, SideServer, "RATE-013", false, fmt.Sprintf("The %s bucket refused this key saying retry after %d seconds, but the call it accepted at least %s earlier (exchange #%d) leaves the 60-second window within %d seconds: the wait is the time until the oldest call in the window leaves it.",
				name, wait, lo.Round(time.Second), a.n, leaves))
		}
		break // the oldest call in the window gives the tightest bound
	}
	b.refusal = &seenRefusal{seenCall: this, wait: wait}
}
