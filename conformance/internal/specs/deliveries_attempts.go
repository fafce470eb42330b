package specs

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/receiver"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// deliveryAttemptSpecs registers the specs of an attempt's life: the 10 s answer window, a secret rotated
// under pending retries, and an endpoint deleted under them.
func deliveryAttemptSpecs(f *framework.Framework) {
	Describe("deliveries: webhook deliveries", func() {
		f.Rule("DLV-010", "DLV-020").Needs(framework.RealTime).WaitsOut(firstRetryWait).It("no 2XX within 10 seconds is a failed attempt; a 2XX after 9 seconds counts", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				holdsOnRealClock(ctx, s)
				return
			}
			c := s.Client()
			h := registerHook(ctx, s, c, "credits.low")
			// An answer after 11 seconds: the receiver holds the first attempt 11 s of real time,
			// and once it has arrived the target's clock moves 11 s on. A target that times the
			// attempt on its clock gives up at once, one that times it on real time after 10 s;
			// either way the attempt fails (given up, or answered late) and is retried.
			s.Hooks().Behave(h.path, receiver.TimeoutFirst(1, 11*time.Second))
			// A 2XX after 9 seconds counts. Against any target the receiver answers after 9 s of
			// real time. The reference mock times an attempt on its clock as well as on real time
			// (a clock scaled above 1 stretches the clock's deadline with it), so on its manual or
			// real clock the spec moves the clock 9 s on instead and the receiver answers then.
			release := make(chan struct{})
			nine := func(a receiver.Attempt) receiver.Response {
				return receiver.Response{Status: http.StatusOK, Hold: 9 * time.Second, Release: release}
			}
			moveNine := s.Reference() && (s.ManualClock() || s.ClockScale() == 1)
			// The reference mock sends to each endpoint from a pool of workers (a slow receiver
			// never holds up another endpoint), so against it both attempts are held at once, on two
			// endpoints, and the run waits the longer hold only, not both one after the other
			// (on a running clock, both are real seconds). Another target may send one attempt at
			// a time, which would hold the second attempt until the first is given up on a clock
			// the spec has not moved yet: it is held on the one endpoint, in turn.
			h2 := h
			if s.Reference() {
				h2 = registerHook(ctx, s, c, "credits.low")
				s.Hooks().Behave(h2.path, nine)
			}
			id := sendTest(ctx, s, h.id)
			attempts(ctx, s, id, 1)
			var id2 string
			var atts []receiver.Attempt
			gaveUp := func() {
				Eventually(func() bool { return s.Hooks().AttemptsFor(id)[0].Settled() }).WithContext(ctx).WithTimeout(arrival(s)).WithPolling(50*time.Millisecond).
					Should(BeTrue(), "the attempt held 11 seconds was neither given up nor answered")
			}
			counted := func() {
				Eventually(func() bool { return s.Hooks().AttemptsFor(id2)[0].Settled() }).WithContext(ctx).WithTimeout(15*time.Second).WithPolling(50*time.Millisecond).
					Should(BeTrue(), "the receiver's 200 after 9 seconds was not settled")
				Expect(s.Hooks().AttemptsFor(id2)[0].Abandoned).To(BeFalse(), "the target gave up on an attempt answered 200 after 9 seconds")
			}
			if s.Reference() {
				id2 = sendTest(ctx, s, h2.id)
				atts = attempts(ctx, s, id2, 1)
				if moveNine {
					s.Advance(ctx, 9)
					close(release)
					counted()
					s.Advance(ctx, 2) // 11 s since the first attempt came
				} else {
					s.Advance(ctx, 11)
					counted()
				}
				gaveUp()
				settled(ctx, s, h2.id)
				advanceSettled(ctx, s, h.id, retryWaits[0].Seconds()*1.1)
				attempts(ctx, s, id, 2)
			} else {
				s.Advance(ctx, 11)
				gaveUp()
				advanceSettled(ctx, s, h.id, retryWaits[0].Seconds()*1.1)
				attempts(ctx, s, id, 2)
				s.Hooks().Behave(h.path, nine)
				id2 = sendTest(ctx, s, h.id)
				atts = attempts(ctx, s, id2, 1)
				counted()
				settled(ctx, s, h.id)
				s.Advance(ctx, retryWaits[0].Seconds()*1.1)
			}
			noMore(ctx, s, h2.id, id2, 1, "a 2XX within 10 seconds was retried")
			Expect(atts).To(HaveLen(1))
		}, Label("slow"))

		f.Rule("RECV-006").ControlBecause("the signing secret is rotated in the app, not through the API").It("a rotated secret signs the pending retries at once", func(ctx context.Context, s *framework.Spec) {
			h := registerHook(ctx, s, s.Client(), "credits.low")
			s.Hooks().Behave(h.path, receiver.FailFirst(1, http.StatusServiceUnavailable))
			id := sendTest(ctx, s, h.id)
			attempts(ctx, s, id, 1)
			rot := controlHook(ctx, s, h.id, "rotate")
			secret, _ := rot["secret"].(string)
			Expect(secret).To(MatchRegexp(secretPattern))
			Expect(secret).NotTo(Equal(h.secret))
			s.Hooks().Trust(secret)
			advanceSettled(ctx, s, h.id, retryWaits[0].Seconds()*1.1)
			atts := attempts(ctx, s, id, 2)
			checkAttempt(atts[1], secret)
			old, _ := standardwebhooks.NewWebhook(h.secret)
			Expect(old.VerifyIgnoringTimestamp(atts[1].Body, atts[1].Header)).NotTo(Succeed(), "the retry is still signed with the old secret")
		})

		f.Rule("WH-022").WaitsOut(firstRetryWait).It("deleting an endpoint removes its pending deliveries", func(ctx context.Context, s *framework.Spec) {
			c := newSpender(ctx, s).c
			if s.HasControl() {
				// A witness endpoint failing alike, fired alike and kept: once the target's history of
				// it is quiet with its retry received, the target's clock has passed the moment the
				// deleted endpoint's pending retry was due, so watching the receiver for a quiet
				// window (all a deleted endpoint's empty history leaves) is not needed.
				hs := deliveryHooks(ctx, s, c, receiver.Always(http.StatusInternalServerError), receiver.Always(http.StatusInternalServerError))
				ids := fireAt(ctx, s, c, hs...)
				c.Delete(ctx, "/webhooks/"+hs[0].id).ExpectOK(http.StatusOK)
				s.Advance(ctx, (15 * time.Hour).Seconds())
				if _, ok := settled(ctx, s, hs[1].id); ok && len(s.Hooks().AttemptsFor(ids[1])) > 1 {
					Expect(s.Hooks().AttemptsFor(ids[0])).To(HaveLen(1), "a retry arrived after the endpoint was deleted")
					return
				}
				noMore(ctx, s, hs[0].id, ids[0], 1, "a retry arrived after the endpoint was deleted")
				return
			}
			h := deliveryHooks(ctx, s, c, receiver.Always(http.StatusInternalServerError))[0]
			id := fireAt(ctx, s, c, h)[0]
			c.Delete(ctx, "/webhooks/"+h.id).ExpectOK(http.StatusOK)
			// Past the retry that was pending: attempt 2's wait in real time.
			pastFirstRetry(ctx, s)
			noMore(ctx, s, h.id, id, 1, "a retry arrived after the endpoint was deleted")
		})
	})
}
