package framework

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Time without a clock hook (issue 36 item 4). A rule about a window of the target's clock (a rate
// bucket's minute, ...) needs that time to pass. With the control API the spec advances the clock;
// a target without one is waited on in real time, only when the run says --real-time (a spec that
// does needs RealTime), and the first line of the run says how long that takes.

// WaitOut lets d of the target's clock pass: with the control API it advances the clock, else it
// waits d of wall clock divided by the target's time scale (the spec must need RealTime). The
// spec's context ends the wait early, failing the spec.
func (s *Spec) WaitOut(ctx context.Context, d time.Duration) {
	GinkgoHelper()
	if s.HasControl() {
		s.Advance(ctx, d.Seconds())
		return
	}
	if !s.f.Capabilities().RealTime {
		Fail("conformance: the spec waits out real time without declaring Needs(RealTime)")
	}
	wall := time.Duration(float64(d) / max(s.f.wallScale(), 1e-9))
	By("waiting out " + wall.Round(time.Second).String() + " of real time for the target's clock (--real-time)")
	t := time.NewTimer(wall)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		Fail("the spec ended while it waited out real time: " + context.Cause(ctx).Error())
	}
}

// BucketClient returns a client of the run's main key that answers a bucket refusal as it came
// (it does not wait one out), after window of the target's clock has passed, so the key's buckets
// are empty: for a spec about the key's own buckets on a target without the control API, which
// cannot make a key with empty buckets. A process runs its specs one at a time with a key set of
// its own, so nothing else calls the key meanwhile. The spec must need RealTime.
func (s *Spec) BucketClient(ctx context.Context, window time.Duration) *Client {
	GinkgoHelper()
	key := s.Client().Key()
	s.WaitOut(ctx, window+time.Second)
	return s.f.client(key)
}

// BucketReadClient is BucketClient of the run's read-only key (the spec must need ReadKey too),
// for a spec that already waited the window out with BucketClient.
func (s *Spec) BucketReadClient() *Client {
	GinkgoHelper()
	return s.f.client(s.ReadClient().Key())
}
