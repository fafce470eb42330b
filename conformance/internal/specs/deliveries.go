package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/receiver"
)

// deliverySpecs registers the specs of webhook deliveries, over this file, deliveries_attempts.go
// and deliveries_endpoints.go under one container text, the prefix of their spec names.
func deliverySpecs(f *framework.Framework) {
	deliveryRetrySpecs(f)
	deliveryAttemptSpecs(f)
	deliveryEndpointSpecs(f)
	deliveryPayloadSpecs(f)
}

// deliveryRetrySpecs registers the specs of webhook.test, the retry schedule, and a dropped
// connection and a redirect as failed attempts.
func deliveryRetrySpecs(f *framework.Framework) {
	Describe("deliveries: webhook deliveries", func() {
		// webhook.test is sent only when someone presses Send test in the app: control's Send test, or
		// a webhook_test test input on the registration.
		f.Rule("EVT-008", "ID-008").Needs(framework.Receiver, framework.TestInputs).It("webhook.test arrives signed, with {webhook_id, message} and the documented headers, and only where it was sent", func(ctx context.Context, s *framework.Spec) {
			// An endpoint nobody sends a test to: "only when someone presses Send test".
			quiet := registerHook(ctx, s, s.Client(), "credits.low")
			h, id := registerTestedHook(ctx, s, s.Client(), "", "credits.low")
			// Check the attempt first: a wrongly signed one is refused by the receiver and never
			// becomes an event, and the failure should say why.
			atts := attempts(ctx, s, id, 1)
			checkAttempt(atts[0], h.secret)
			// webhook-timestamp is the time of this attempt: the receiver's clock stands for the
			// target's, and the attempt was sent just before it arrived.
			sent := time.Unix(timestampOf(atts[0]), 0)
			Expect(atts[0].Time.Sub(sent)).To(BeNumerically("~", 0, 60*time.Second),
				fmt.Sprintf("webhook-timestamp %s is not the time of the attempt (it arrived at %s on the service clock)", sent.UTC(), atts[0].Time.UTC()))
			ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "webhook.test", Path: h.path}, arrival(s))
			Expect(err).NotTo(HaveOccurred())
			Expect(ev.ID).To(Equal(id))
			data := checkEnvelope(s, ev)
			Expect(data["webhook_id"]).To(Equal(h.id), string(ev.Raw))
			Expect(data["message"]).To(BeAssignableToTypeOf(""), string(ev.Raw))
			expectOnce(ctx, s, s.Client(), h, receiver.Match{Type: "webhook.test"}, 1, "webhook.test is sent once, when asked")
			expectOnce(ctx, s, s.Client(), quiet, receiver.Match{Type: "webhook.test"}, 0, "webhook.test comes only when someone sends it (none was sent to this endpoint)")
		})

		// Without the control API the five attempts come on the target's own clock, about 14.5 hours
		// of it (--real-time --long: a nightly job, or a target whose clock runs faster), and the
		// delivery is a generation's generation.completed (retriesOnRealClock).
		f.Rule("DLV-004", "DLV-005", "DLV-009", "DLV-014", "DLV-015", "DLV-016", "DLV-017", "DLV-018", "DLV-019", "EVT-017", "RECV-003").
			Needs(framework.RealTime, framework.Long, framework.Spends).WaitsOut(retrySchedule+retryWaits[3]*12/10).It(
			"a failing delivery is retried 5, 30, 120 and 720 minutes apart with the same id and fresh timestamps, then never again", func(ctx context.Context, s *framework.Spec) {
				if !s.HasControl() {
					retriesOnRealClock(ctx, s)
					return
				}
				retriesOnControlClock(ctx, s)
			}, Label("slow"))

		f.Rule("DLV-011", "DLV-012").WaitsOut(firstRetryWait).It("a dropped connection and a redirect are failed attempts, retried, and the redirect is not followed", func(ctx context.Context, s *framework.Spec) {
			c := newSpender(ctx, s).c
			targetPath, targetURL := s.Hooks().NewURL()
			// One endpoint per misbehaviour, so one delivery each and one wait for all retries.
			hooks := deliveryHooks(ctx, s, c,
				receiver.DropFirst(1),
				receiver.RedirectFirst(1, http.StatusFound, targetURL),
				receiver.RedirectFirst(1, http.StatusPermanentRedirect, targetURL))
			ids := fireAt(ctx, s, c, hooks...)
			var hookIDs []string
			for _, h := range hooks {
				hookIDs = append(hookIDs, h.id)
			}
			pastFirstRetry(ctx, s, hookIDs...)
			for i, h := range hooks {
				atts := attempts(ctx, s, ids[i], 2)
				Expect(atts[1].Path).To(Equal(h.path))
			}
			// A redirect followed would have reached the target before the attempt's outcome was
			// recorded (with the control API, its history shows it; without, the retry came after).
			if s.HasControl() {
				for _, id := range hookIDs {
					settled(ctx, s, id)
				}
			}
			Expect(s.Hooks().Attempts(targetPath)).To(BeEmpty(), "the redirect target received a delivery")
		})
	})

}

// deliveryPayloadSpecs registers the specs of what an attempt carries and where it goes: a payload
// that is not ASCII, the address checked again at each attempt, the service's own failures, and
// the generation events.
func deliveryPayloadSpecs(f *framework.Framework) {
	Describe("deliveries: webhook deliveries", func() {
		// The payload is a webhook.test message, sent only from the app: control's Send test, or a
		// webhook_test test input with its message.
		f.Rule("DLV-006", "EVT-008", "EVT-018").Needs(framework.Receiver, framework.TestInputs).It("a payload that is not ASCII is signed over the exact bytes sent", func(ctx context.Context, s *framework.Spec) {
			// Latin, CJK, an emoji, the characters HTML-escaping encoders rewrite, a quote, a
			// backslash and U+2028: an encoder that signs one form and sends another fails here.
			message := "Grüße, café — テスト ✓ 🚀 <a&b> \"quoted\" back\\slash \u2028end"
			h, id := registerTestedHook(ctx, s, s.Client(), message, "credits.low")
			atts := attempts(ctx, s, id, 1)
			s.Step("DLV-006")
			Expect(utf8.Valid(atts[0].Body)).To(BeTrue(), "the body is UTF-8")
			checkAttempt(atts[0], h.secret)
			s.Step("EVT-008")
			ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "webhook.test", Path: h.path}, arrival(s))
			Expect(err).NotTo(HaveOccurred())
			data := checkEnvelope(s, ev)
			Expect(data["message"]).To(Equal(message), "data.message is the text sent, character for character: "+string(ev.Raw))
			s.Step("EVT-018")
			answer.NoLinks(data, "data")
		})

		// Stays at the control API: re-pointing an admitted name at a private address between two
		// attempts needs the target's resolver to be told (control's MapHost), which no caller can do.
		f.Rule("DLV-013").ControlBecause("re-pointing an admitted name at a private address needs control's resolver override, MapHost").It("the address is checked again at each attempt: a name re-pointed from the receiver to a private address fails there, and arrives again once pointed back", func(ctx context.Context, s *framework.Spec) {
			host := mappedHost()
			s.MapHost(ctx, host, "127.0.0.1")
			path, u, ok := s.Hooks().NamedURL(host)
			if !ok {
				framework.SkipFor(framework.Unsupported(framework.Receiver, "the receiver is reached through its public URL, so no mapped name reaches it"))
			}
			h := registerHookAt(ctx, s, s.Client(), path, u, "credits.low")
			s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
			id := sendTest(ctx, s, h.id)
			// Attempt 1 reaches the receiver through the name.
			checkAttempt(attempts(ctx, s, id, 1)[0], h.secret)
			settled(ctx, s, h.id)
			// DNS rebinding: the admitted name now points at a private address.
			s.MapHost(ctx, host, "10.0.0.1")
			s.Advance(ctx, retryWaits[0].Seconds()*1.1)
			list, _ := settled(ctx, s, h.id)
			Expect(recordOf(list, id).Attempts).To(HaveLen(2), "the target's history lists attempt 2")
			Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(1), "attempt 2 reached the receiver after its name was pointed at 10.0.0.1: the address was not checked again at the attempt")
			// Pointed back: attempt 3 resolves again and arrives.
			s.MapHost(ctx, host, "127.0.0.1")
			s.Hooks().Behave(h.path, nil)
			s.Advance(ctx, retryWaits[1].Seconds()*1.1)
			attempts(ctx, s, id, 2)
			rec := recordOf(must(settled(ctx, s, h.id)), id)
			Expect(rec.Attempts).To(HaveLen(3), "the target's history lists attempt 3")
			Expect(rec.Status).To(Equal("delivered"), "attempt 3, to the name pointed back at the receiver, was answered 2XX")
		}, Label("slow"))

		f.Rule("DLV-028").ControlBecause("a failure on the service's own side is control's delivery_fail fault; no request causes one").It("failures on the service's own side never count against an endpoint: fifteen of them, as many as would exhaust three deliveries, leave it active with no failure", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
			h := registerHook(ctx, s, c, "credits.low")
			const faults = 3 * 5 // counted as failed attempts, they would exhaust three deliveries: failing
			r, err := s.Control().Call(ctx, http.MethodPost, "/faults", map[string]any{"kind": "delivery_fail", "workspace_id": ws.ID, "count": faults})
			Expect(err).NotTo(HaveOccurred())
			if r.Status == http.StatusBadRequest && r.String("error.field") == "kind" {
				s.Lacks("the control API has no delivery_fail fault")
			}
			Expect(r.Status).To(Equal(http.StatusCreated), "control POST /faults delivery_fail"+r.Describe())
			DeferCleanup(func(ctx SpecContext) { s.ClearFaults(ctx) })
			fault := r.String("fault.fault_id")
			ids := []string{sendTest(ctx, s, h.id), sendTest(ctx, s, h.id), sendTest(ctx, s, h.id)}
			// Each round lets every delivery make its next try, whatever the schedule.
			var list []deliveryRecord
			for round := 0; ; round++ {
				list = must(settled(ctx, s, h.id))
				done := 0
				for _, id := range ids {
					if st := recordOf(list, id).Status; st == "delivered" || st == "exhausted" {
						done++
					}
				}
				if done == len(ids) || round == 12 {
					break
				}
				s.Advance(ctx, retryWaits[3].Seconds()*1.1)
			}
			Expect(faultLeft(ctx, s, fault)).To(BeZero(), "the target did not use its delivery_fail fault, so nothing failed on its side")
			for _, id := range ids {
				Expect(recordOf(list, id).Status).To(Equal("delivered"), "a delivery failed only on the service's side was not delivered in the end")
				Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(1), "a failure on the service's side reached the receiver")
			}
			st, n := hookStatus(ctx, c, h.id)
			Expect([]any{st, n}).To(Equal([]any{"active", int64(0)}), "failures on the service's own side counted against the endpoint")
		}, Label("slow"))

		generationEventSpecs(f)
	})
}

// holdsOnRealClock is the DLV-010 spec without the control API: one delivery (a generation's
// event) reaches two endpoints, one held 11 seconds of real time and one answered 200 after 9
// seconds, each on a receiver path of its own (so neither hold delays the other's answer), and the
// first retry's wait passes in real time: the first is retried, the second is not.
func holdsOnRealClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := newSpender(ctx, s).c
	nine := func(receiver.Attempt) receiver.Response {
		return receiver.Response{Status: http.StatusOK, Hold: 9 * time.Second}
	}
	hooks := deliveryHooks(ctx, s, c, receiver.TimeoutFirst(1, 11*time.Second), nine)
	ids := fireAt(ctx, s, c, hooks...)
	settledAttempt := func(id string, within time.Duration, why string) receiver.Attempt {
		var a receiver.Attempt
		Eventually(func() bool { a = s.Hooks().AttemptsFor(id)[0]; return a.Settled() }).WithContext(ctx).WithTimeout(within).
			WithPolling(50*time.Millisecond).Should(BeTrue(), why)
		return a
	}
	s.Step("DLV-010")
	Expect(settledAttempt(ids[1], 15*time.Second, "the receiver's 200 after 9 seconds was not settled").Abandoned).To(BeFalse(),
		"the target gave up on an attempt answered 200 after 9 seconds")
	settledAttempt(ids[0], arrival(s), "the attempt held 11 seconds was neither given up nor answered")
	pastFirstRetry(ctx, s)
	s.Step("DLV-010")
	attempts(ctx, s, ids[0], 2)
	s.Step("DLV-010", "DLV-020")
	noMore(ctx, s, hooks[1].id, ids[1], 1, "a 2XX within 10 seconds was retried")
}

// retriesOnControlClock is the retry-schedule spec with the control API: webhook.test sent to an
// endpoint that answers 500, the clock moved through the schedule, the gaps read from the target's
// delivery history.
func retriesOnControlClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := s.Client()
	h := registerHook(ctx, s, c, "credits.low")
	s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
	id := sendTest(ctx, s, h.id)
	atts := attempts(ctx, s, id, 1)
	for n := 1; n <= 4; n++ {
		wait := retryWaits[n-1]
		s.Step("DLV-009", retryRule[n-1])
		// Not before its delay.
		s.Advance(ctx, wait.Seconds()*0.8)
		noMore(ctx, s, h.id, id, n, fmt.Sprintf("attempt %d came before about %s", n+1, wait))
		s.Advance(ctx, wait.Seconds()*0.3)
		// Attempt n+1 by arrival on the endpoint (only this delivery goes there), then by
		// webhook-id: a retry under a new webhook-id is DLV-004's failure, not a missing retry.
		Eventually(func() int { return len(s.Hooks().Attempts(h.path)) }).WithTimeout(arrival(s)).WithPolling(50*time.Millisecond).
			Should(BeNumerically(">=", n+1), fmt.Sprintf("attempt %d of delivery %s did not arrive", n+1, id))
		s.Step("DLV-004")
		for i, a := range s.Hooks().Attempts(h.path) {
			Expect(a.DeliveryID).To(Equal(id), fmt.Sprintf("webhook-id is the same on every retry: attempt %d came as %s", i+1, a.DeliveryID))
		}
		s.Step("DLV-009", retryRule[n-1])
		atts = attempts(ctx, s, id, n+1)
	}
	// The gaps on the target's own clock: its history's sent_at (webhook-timestamp may be
	// the wall clock on a running service clock, which the interface allows).
	list, _ := settled(ctx, s, h.id)
	rec := recordOf(list, id)
	s.Step("DLV-009")
	Expect(rec.Attempts).To(HaveLen(5), "the target's history lists the five attempts")
	for n := 1; n <= 4; n++ {
		wait := retryWaits[n-1]
		s.Step(retryRule[n-1])
		gap := rec.Attempts[n].SentAt.Sub(rec.Attempts[n-1].SentAt)
		Expect(gap).To(BeNumerically(">=", wait*8/10), fmt.Sprintf("attempt %d came %s after attempt %d", n+1, gap, n))
		Expect(gap).To(BeNumerically("<=", wait*12/10), fmt.Sprintf("attempt %d came %s after attempt %d", n+1, gap, n))
	}
	// Five attempts and no sixth: by now (the target's history shows the delivery settled)
	// an attempt sent after the fifth has reached the endpoint.
	s.Step("DLV-018")
	Expect(s.Hooks().Attempts(h.path)).To(HaveLen(5), "an exhausted delivery (5 attempts) was sent again")
	checkRetried(s, atts, h.secret, id)
	// Exhausted: never sent again, even once the endpoint answers 2XX.
	s.Step("DLV-018")
	s.Hooks().Behave(h.path, nil)
	s.Advance(ctx, (24 * time.Hour).Seconds())
	noMore(ctx, s, h.id, id, 5, "an exhausted delivery was sent again")
	s.Step("DLV-019")
	next := sendTest(ctx, s, h.id)
	attempts(ctx, s, next, 1)
	noMore(ctx, s, h.id, id, 5, "an exhausted delivery was replayed after a 2XX")
}

// checkRetried checks the attempts of one delivery id to an endpoint with secret: each signed and
// accepted by the receiver's tolerance, under the same webhook-id, with the same created_at and a
// fresh webhook-timestamp.
func checkRetried(s *framework.Spec, atts []receiver.Attempt, secret, id string) {
	GinkgoHelper()
	var created string
	for i, a := range atts {
		s.Step("RECV-003")
		checkAttempt(a, secret)
		s.Step("DLV-004")
		Expect(a.DeliveryID).To(Equal(id), "webhook-id is the same on every retry")
		s.Step("RECV-003")
		Expect(a.Verdict.Accepted()).To(BeTrue(),
			fmt.Sprintf("attempt %d: %s %s (its timestamp must be within 5 minutes of the service clock)", i+1, a.Verdict, a.Detail))
		s.Step("EVT-017")
		var env map[string]any
		Expect(json.Unmarshal(a.Body, &env)).To(Succeed())
		if i == 0 {
			created = env["created_at"].(string)
		}
		Expect(env["created_at"]).To(Equal(created), "created_at is the same on every retry")
		s.Step("DLV-005")
		if i > 0 {
			// Hours of service time lie between two attempts; on a running clock a target
			// that stamps the wall clock may send two within one second.
			fresh := BeNumerically(">", timestampOf(atts[i-1]))
			if !s.ManualClock() {
				fresh = BeNumerically(">=", timestampOf(atts[i-1]))
			}
			Expect(timestampOf(a)).To(fresh, "webhook-timestamp is fresh on each retry")
		}
	}
}

// retriesOnRealClock is the retry-schedule spec without the control API: a generation's
// generation.completed reaches an endpoint that answers 500, and its five attempts come on the
// target's own clock (--real-time --long), judged by when they reached the receiver
// (awaitSchedule); then, the endpoint answering 2XX, the schedule's longest wait passes again
// without a sixth attempt, and a second generation's delivery arrives while the exhausted one
// is not replayed.
func retriesOnRealClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := newSpender(ctx, s).c
	h := deliveryHooks(ctx, s, c, receiver.Always(http.StatusInternalServerError))[0]
	id := fireAt(ctx, s, c, h)[0]
	atts := awaitSchedule(ctx, s, h, id, func(n int) { s.Step("DLV-009", retryRule[n-1]) }, func(n int) { s.Step(retryRule[n-1]) })
	checkRetried(s, atts, h.secret, id)
	// Exhausted: never sent again, even once the endpoint answers 2XX.
	s.Step("DLV-018")
	s.Hooks().Behave(h.path, nil)
	s.WaitOut(ctx, retryWaits[3]*12/10)
	Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(5), "an exhausted delivery (5 attempts) was sent again")
	s.Step("DLV-019")
	fireAt(ctx, s, c, h)
	noMore(ctx, s, h.id, id, 5, "an exhausted delivery was replayed after a 2XX")
}

// fourXXOnRealClock is the 4XX spec without the control API: one generation's
// generation.completed reaches five endpoints, each answering its first attempt with one 4XX and
// then 2XX, and each is retried once, after the first retry's wait on the target's own clock; then
// a delivery to an endpoint answering 410 runs through the schedule (awaitSchedule), sends nothing
// more for the longest wait again, and counts against the endpoint.
func fourXXOnRealClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := newSpender(ctx, s).c
	statuses := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone, http.StatusTooManyRequests}
	behaviors := make([]receiver.Behavior, len(statuses))
	for i, status := range statuses {
		behaviors[i] = receiver.FailFirst(1, status)
	}
	s.Step("DLV-009")
	hooks := deliveryHooks(ctx, s, c, behaviors...)
	ids := fireAt(ctx, s, c, hooks...)
	pastFirstRetry(ctx, s)
	for i, status := range statuses {
		attempts(ctx, s, ids[i], 2)
		noMore(ctx, s, hooks[i].id, ids[i], 2, fmt.Sprintf("the 2XX after a %d was retried", status))
	}
	s.Step("DLV-025")
	for _, h := range hooks {
		st, n := hookStatus(ctx, c, h.id)
		Expect([]any{st, n}).To(Equal([]any{"active", int64(0)}), "each delivery succeeded on its second attempt")
	}
	// Five 410s exhaust a delivery: it counts like any other exhausted delivery.
	s.Step("DLV-009")
	h := deliveryHooks(ctx, s, c, receiver.Always(http.StatusGone))[0]
	id := fireAt(ctx, s, c, h)[0]
	awaitSchedule(ctx, s, h, id, func(int) { s.Step("DLV-009") }, func(int) { s.Step("DLV-009") })
	s.WaitOut(ctx, retryWaits[3]*12/10)
	Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(5), "five 410 answers exhaust the delivery: no sixth attempt")
	s.Step("DLV-027")
	st, n := hookStatus(ctx, c, h.id)
	Expect([]any{st, n}).To(Equal([]any{"active", int64(1)}), "an exhausted delivery answered 410 counts against the endpoint")
}

// endpointStatus is the endpoint-status spec: an endpoint whose deliveries are exhausted one after
// another goes failing after 3 and disabled after 20, a 2XX resets its count, and a disabled one
// receives nothing. With the control API the deliveries are webhook.test and the clock is moved
// through the schedule; without it they are generations' generation.completed, on the target's own
// clock (exhaustOnRealClock), and what the target records after an answer is read as it settles.
func endpointStatus(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	var c *framework.Client
	var ws *framework.TestWorkspace
	if s.HasControl() {
		ws = s.NewWorkspace(ctx, framework.WorkspaceOptions{Balance: ptr(1000)})
		c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
	} else {
		c = newSpender(ctx, s).c
	}
	event := "credits.low"
	if !s.HasControl() {
		event = "generation.completed"
	}
	h := registerHook(ctx, s, c, event)
	witness := registerHook(ctx, s, c, event)
	s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
	// exhaust has n deliveries sent to h and run through their five attempts.
	own := map[string]bool{} // without control: the deliveries this spec sent to h
	// foreign reports whether another delivery reached h (without control, another generation of
	// the workspace: another process's, the operator's): the target counts it too, so h's counts
	// are not this spec's to judge.
	foreign := func() bool {
		return !s.HasControl() && slices.ContainsFunc(s.Hooks().Attempts(h.path), func(a receiver.Attempt) bool { return !own[a.DeliveryID] })
	}
	undecidable := func() {
		if foreign() {
			framework.SkipFor(framework.Undecidable("other deliveries of the workspace reached the endpoint, and the target counts them too"))
		}
	}
	exhaust := func(n int) {
		if !s.HasControl() {
			for _, id := range exhaustOnRealClock(ctx, s, c, h, n) {
				own[id] = true
			}
			return
		}
		ids := make([]string, n)
		for i := range ids {
			ids[i] = sendTest(ctx, s, h.id)
		}
		exhaustAll(ctx, s, h.id, ids)
	}
	// expect checks h's status and count once the target has recorded the answers so far.
	expect := func(st string, n int64, why string) {
		if s.HasControl() {
			settled(ctx, s, h.id)
			got, m := hookStatus(ctx, c, h.id)
			Expect([]any{got, m}).To(Equal([]any{st, n}), why)
			return
		}
		Eventually(func() []any { got, m := hookStatus(ctx, c, h.id); return ifOwn(foreign, []any{got, m}, []any{st, n}) }).WithContext(ctx).
			WithTimeout(arrival(s)).WithPolling(100*time.Millisecond).Should(Equal([]any{st, n}), why)
		undecidable()
	}
	fire := func() string {
		if s.HasControl() {
			return sendTest(ctx, s, h.id)
		}
		id := fireAt(ctx, s, c, h)[0]
		own[id] = true
		return id
	}
	s.Step("DLV-021", "DLV-027")
	exhaust(2)
	expect("active", 2, "after 2 exhausted deliveries (failing needs 3)")
	exhaust(1)
	expect("failing", 3, "after 3 exhausted deliveries")
	// Still receives events; a failed attempt still being retried leaves the count alone.
	s.Step("DLV-021", "DLV-027")
	pending := fire()
	attempts(ctx, s, pending, 1)
	if s.HasControl() {
		expect("failing", 3, "a failed attempt that is still retried")
	} else {
		// Watched for less than the first retry's wait (at any time scale), the attempt retried.
		quiet := min(quietWindow, time.Duration(float64(retryWaits[0])/s.TimeScale()/2))
		Consistently(func() []any {
			got, m := hookStatus(ctx, c, h.id)
			return ifOwn(foreign, []any{got, m}, []any{"failing", int64(3)})
		}).WithContext(ctx).WithTimeout(quiet).WithPolling(50*time.Millisecond).Should(Equal([]any{"failing", int64(3)}),
			"a failed attempt that is still retried")
		undecidable()
	}
	// A 2XX: failing -> active, count 0.
	s.Step("DLV-024")
	s.Hooks().Behave(h.path, nil)
	if s.HasControl() {
		s.Advance(ctx, retryWaits[0].Seconds()*1.1)
		attempts(ctx, s, pending, 2)
	} else {
		// The next retry of the pending delivery is answered 2XX.
		Eventually(func() bool {
			return slices.ContainsFunc(s.Hooks().AttemptsFor(pending), func(a receiver.Attempt) bool { return a.Status/100 == 2 })
		}).WithContext(ctx).WithTimeout(time.Duration(float64(retryWaits[0]+retryWaits[1])*1.2/s.TimeScale())+arrival(s)).
			WithPolling(50*time.Millisecond).Should(BeTrue(), "the pending delivery's retry did not arrive")
	}
	expect("active", 0, "a 2XX moves a failing endpoint back")
	// Active with one exhausted delivery, then a 2XX: count back to 0.
	s.Step("DLV-025")
	s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
	exhaust(1)
	expect("active", 1, "one exhausted delivery")
	s.Hooks().Behave(h.path, nil)
	attempts(ctx, s, fire(), 1)
	expect("active", 0, "a 2XX resets an active endpoint's count")
	// 20 in a row: disabled, and then it receives nothing.
	s.Step("DLV-022")
	s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
	exhaust(19)
	expect("failing", 19, "after 19 exhausted deliveries (disabled needs 20)")
	exhaust(1)
	if s.HasControl() {
		settled(ctx, s, h.id)
	}
	Eventually(func() string { st, _ := hookStatus(ctx, c, h.id); return ifOwn(foreign, st, "disabled") }).WithContext(ctx).
		WithTimeout(arrival(s)).WithPolling(100*time.Millisecond).Should(Equal("disabled"), "after 20 exhausted deliveries")
	undecidable()
	_, n := hookStatus(ctx, c, h.id)
	Expect(n).To(BeNumerically(">=", 20))
	s.Hooks().Behave(h.path, nil)
	// An event the witness endpoint gets (h got none of its type before, or none of its resource).
	m := receiver.Match{Type: event, Path: h.path}
	if s.HasControl() {
		Expect(s.Control().PatchWorkspace(ctx, ws.ID, map[string]any{"low_balance_threshold_credits": 500})).To(Succeed())
		s.SetCredits(ctx, ws.ID, 100)
		_, err := s.Hooks().Await(ctx, receiver.Match{Type: event, Path: witness.path}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "the witness endpoint got no credits.low")
	} else {
		m.ResourceID = s.Hooks().AttemptsFor(fireAt(ctx, s, c, witness)[0])[0].ResourceID
	}
	nothingFor(ctx, s, h.id, m, "a disabled endpoint received an event")
}

// exhaustOnRealClock sends n deliveries to endpoint h, whose answers fail, one generation of c's
// workspace each, waits on the target's own clock until each has had its five attempts, and
// returns their ids.
func exhaustOnRealClock(ctx context.Context, s *framework.Spec, c *framework.Client, h hook, n int) []string {
	GinkgoHelper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fireAt(ctx, s, c, h)[0]
	}
	within := time.Duration(float64(retrySchedule*12/10+time.Duration(float64(arrivalSlack)*s.TimeScale()))/s.TimeScale()) + arrival(s)
	for _, id := range ids {
		_, err := s.Hooks().AwaitAttempts(ctx, id, 5, within)
		Expect(err).NotTo(HaveOccurred(),
			fmt.Sprintf("delivery %s did not have its five attempts within the schedule's 14.5 hours of the target's clock", id))
	}
	return ids
}

// ifOwn is got, or want once foreign reports another delivery at the endpoint: a count the target
// kept of deliveries not the spec's own is not waited for (the spec is then undecidable).
func ifOwn[T any](foreign func() bool, got, want T) T {
	if foreign() {
		return want
	}
	return got
}

// retrySchedule is the whole retry schedule: attempt 5 comes about 14.5 hours after attempt 1.
var retrySchedule = retryWaits[0] + retryWaits[1] + retryWaits[2] + retryWaits[3]

// arrivalSlack is how much wall time the arrival of an attempt at the receiver may lag its
// sending. Without the control API's history a gap between two attempts is cross-checked against their
// arrivals, on the wall clock, so on a target whose clock runs N times faster it is known to N
// times that lag: the text's "about" (a fifth either way, as the history is judged) widens by it.
const arrivalSlack = 100 * time.Millisecond

// stampSlack widens the text's "about" when a retry's gap is read from webhook-timestamp, whole
// seconds of the target's clock: each of the two stamps may be rounded down by up to a second. A
// target whose clock runs faster than real time may stamp the wall clock instead, which receivers
// check the stamp against (the mock does): stamps as far apart as the arrivals are not judged
// then, and the arrivals' loose check stands alone.
const stampSlack = 2 * time.Second

// awaitSchedule waits, on the target's own clock, for the five attempts of delivery id at endpoint
// h (other deliveries reaching h are not its: ofDelivery) and judges each gap: attempt n+1 is
// stamped about retryWaits[n-1] after attempt n (webhook-timestamp, fresh on each retry: a fifth
// either way, widened by stampSlack; not when a faster target stamps the wall clock), and, as a
// loose cross-check, arrives about that long after it (widened by arrivalSlack at the target's
// time scale), under the same webhook-id. arrive(n) and gap(n) set the step before attempt n+1 is
// awaited and before its gap is judged. It returns the five attempts.
func awaitSchedule(ctx context.Context, s *framework.Spec, h hook, id string, arrive, gap func(n int)) []receiver.Attempt {
	GinkgoHelper()
	scale := s.TimeScale()
	slack := time.Duration(float64(arrivalSlack) * scale)
	atts := attempts(ctx, s, id, 1)
	for n := 1; n <= 4; n++ {
		wait := retryWaits[n-1]
		arrive(n)
		within := time.Duration(float64(wait*12/10+slack)/scale) + arrival(s)
		Eventually(func() int { return len(ofDelivery(s.Hooks().Attempts(h.path), atts[0])) }).WithContext(ctx).WithTimeout(within).
			WithPolling(50*time.Millisecond).Should(BeNumerically(">=", n+1),
			fmt.Sprintf("attempt %d of delivery %s did not arrive about %s of the target's clock after attempt %d", n+1, id, wait, n))
		s.Step("DLV-004")
		for i, a := range ofDelivery(s.Hooks().Attempts(h.path), atts[0]) {
			Expect(a.DeliveryID).To(Equal(id), fmt.Sprintf("webhook-id is the same on every retry: attempt %d came as %s", i+1, a.DeliveryID))
		}
		arrive(n)
		atts = attempts(ctx, s, id, n+1)
		gap(n)
		stamped := time.Duration(timestampOf(atts[n])-timestampOf(atts[n-1])) * time.Second
		if wall := atts[n].Time.Sub(atts[n-1].Time); scale <= 1 || (stamped-wall).Abs() > stampSlack+arrivalSlack {
			// The stamp is this attempt's time, fresh on each retry (DLV-005): a stamp kept from
			// an earlier attempt fails that rule; a fresh stamp outside the window fails the
			// schedule's step, not DLV-005.
			s.Step("DLV-005")
			Expect(stamped).To(BeNumerically(">", stampSlack),
				fmt.Sprintf("attempt %d is stamped %s after attempt %d: webhook-timestamp is not fresh on the retry", n+1, stamped, n))
			gap(n)
			Expect(stamped).To(And(BeNumerically(">=", wait*8/10-stampSlack), BeNumerically("<=", wait*12/10+stampSlack)),
				fmt.Sprintf("attempt %d is stamped %s after attempt %d (webhook-timestamp, the target's clock), want about %s", n+1, stamped, n, wait))
		}
		got := time.Duration(float64(atts[n].Time.Sub(atts[n-1].Time)) * scale)
		why := fmt.Sprintf("attempt %d came about %s of the target's clock after attempt %d "+
			"(its arrivals %s apart at time scale %g), want about %s",
			n+1, got.Round(time.Second), n, atts[n].Time.Sub(atts[n-1].Time).Round(time.Millisecond), scale, wait)
		// An arrival only lags its sending, so a late first attempt is what shortens a gap: the lower
		// bound widens by the lag at the time scale, but never by more than a tenth of the wait, so
		// that at a large scale a schedule cut short (5 minutes sent as 2) is still refused.
		Expect(got).To(BeNumerically(">=", wait*8/10-min(slack, wait/10)), why)
		Expect(got).To(BeNumerically("<=", wait*12/10+slack), why)
	}
	return atts
}

// ofDelivery is what of the attempts at an endpoint belongs to the delivery whose first attempt is
// first: the same webhook-id, or the same event (envelope id, or type and resource), so that a retry
// sent under a new webhook-id is still its own, and other generations of the workspace (another
// process's, the operator's) reaching the endpoint are not.
func ofDelivery(atts []receiver.Attempt, first receiver.Attempt) []receiver.Attempt {
	return slices.DeleteFunc(atts, func(a receiver.Attempt) bool {
		return a.DeliveryID != first.DeliveryID && (first.EventID == "" || a.EventID != first.EventID) &&
			(first.ResourceID == "" || a.ResourceID != first.ResourceID || a.Type != first.Type)
	})
}

// retryRule is the rule of the wait before attempts 2 to 5 (retryWaits).
var retryRule = []string{"DLV-014", "DLV-015", "DLV-016", "DLV-017"}

// generationEventSpecs registers the specs of events that need a generation (they spend credits); deliverySpecs calls it inside its container.
func generationEventSpecs(f *framework.Framework) {
	f.Rule("EVT-001", "EVT-011", "EVT-013", "EVT-016", "EVT-018", "EVT-019", "EVT-020", "EVT-021", "EVT-022", "EVT-023", "EVT-024", "EVT-025",
		"EVT-026", "DLV-001", "DLV-002", "DLV-003", "DLV-006", "DLV-007", "DLV-008", "DLV-020", "DLV-029", "ID-009").It(
		"generation.completed reaches every subscribed endpoint once, signed, with the documented data and no link", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			a := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed")
			b := registerHook(ctx, s, sp.c, "generation.completed")
			other := registerHook(ctx, s, sp.c, "batch.settled")
			d := catalogue.ImageModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			s.Finish(ctx, sp.c, j.id)
			var seen []string
			hookOf := map[string]string{}
			for _, h := range []hook{a, b} {
				// An endpoint the event never reaches breaks DLV-029 too: a delivery id shared by two
				// endpoints is taken for a repeat by a receiver deduplicating on it, as it must.
				s.Step("EVT-001", "DLV-008", "DLV-029")
				ev := awaitDelivered(ctx, s, receiver.Match{Type: "generation.completed", Path: h.path, ResourceID: j.id})
				s.Step("DLV-029", "ID-009")
				Expect(ev.ID).NotTo(BeElementOf(seen), "each endpoint gets its own delivery id")
				seen = append(seen, ev.ID)
				hookOf[ev.ID] = h.id
				atts := attempts(ctx, s, ev.ID, 1)
				s.Step("DLV-001", "DLV-002", "DLV-003", "DLV-006", "DLV-007", "ID-009")
				checkAttempt(atts[0], h.secret)
				// The payload rules first: the schema check below fails on the same mistakes and
				// would charge them to EVT-016 and EVT-021 alone.
				data := eventData(ev)
				s.Step("EVT-021")
				Expect(data["generation_id"]).To(Equal(j.id))
				s.Step("EVT-001")
				Expect(data["status"]).To(Equal("completed"))
				s.Step("EVT-026")
				Expect(data["error"]).To(BeNil(), "error is null on generation.completed: "+string(ev.Raw))
				s.Step("EVT-024")
				Expect(data["batch_group_id"]).To(BeNil(), "batch_group_id is null outside a batch: "+string(ev.Raw))
				Expect(data["batch_index"]).To(BeNil(), "batch_index is null outside a batch: "+string(ev.Raw))
				s.Step("EVT-025")
				Expect(data["workflow_run_id"]).To(BeNil())
				s.Step("EVT-011")
				Expect(data["purpose"]).To(Or(BeNil(), BeElementOf("deliverable", "preview", "intermediate")))
				s.Step("EVT-020")
				Expect(data["disclosure"]).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())), "data carries a non-empty disclosure string: "+string(ev.Raw))
				// Sent when the charge was captured: the settled credits, the charge computed from
				// the estimate (every output of an image model delivered: the estimate's price).
				s.Step("EVT-001", "EVT-023")
				credits, _ := data["credits"].(map[string]any)
				Expect(credits).To(HaveKey("credits_held"), string(ev.Raw))
				Expect(credits["terminal"]).To(Equal(true), "generation.completed is sent once the charge is final: "+string(ev.Raw))
				Expect(credits["settlement"]).To(Equal("captured"), "generation.completed is sent when the charge was captured: "+string(ev.Raw))
				charged, whole := framework.AsInt(credits["credits_charged"])
				Expect(whole).To(BeTrue(), "credits_charged is a whole number once terminal: "+string(ev.Raw))
				Expect(charged).To(chargeOf(j.price), fmt.Sprintf("credits_charged is the estimate's %v credits (every output delivered): %s", j.price, ev.Raw))
				Expect(credits).NotTo(HaveKey("wallet_balance"), string(ev.Raw))
				s.Step("EVT-018")
				answer.NoLinks(data, "data")
				s.Step("EVT-019")
				answer.NoKeyAnywhere(data, "data", "output_text", "result")
				s.Step("EVT-016", "EVT-021")
				checkEnvelope(s, ev)
			}
			s.Step("DLV-020", "DLV-029")
			for _, id := range seen {
				noMore(ctx, s, hookOf[id], id, 1, "a delivery answered 204 was sent again")
			}
			for _, h := range []hook{a, b} {
				expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "generation.completed", ResourceID: j.id}, 1, "the generation's event reaches each endpoint once")
			}
			s.Step("EVT-013")
			nothingFor(ctx, s, other.id, receiver.Match{Path: other.path, ResourceID: j.id}, "an endpoint got an event type it did not subscribe to")
		})

	f.Rule("EVT-019", "EVT-022", "EVT-018", "DLV-029").Needs(framework.Receiver, framework.Spends).It(
		"a text result's generation.completed carries no outputs and not the text itself", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed")
			d := catalogue.TextCapability(ctx, sp.c)
			if catalogue.NamesUpload(answer.ObjectAt(d, "example_config")) {
				s.Lacks("a text capability whose example_config needs no upload (EVT-019, EVT-022 for text results unverified)")
			}
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			w := s.Finish(ctx, sp.c, j.id)
			Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			text := w.String("generation.output_text")
			Expect(text).NotTo(BeEmpty(), "the generation read carries the text result"+w.Describe())
			ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.completed", Path: h.path, ResourceID: j.id}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no generation.completed for "+j.id)
			data := checkEnvelope(s, ev)
			Expect(data["output_kind"]).To(Equal("text"), string(ev.Raw))
			Expect(data["outputs"]).To(BeEmpty(), "outputs is empty for a text result: "+string(ev.Raw))
			s.Step("EVT-019")
			answer.NoKeyAnywhere(data, "data", "output_text", "result", "text")
			s.Step("EVT-018")
			answer.NoLinks(data, "data")
			s.Step("EVT-019")
			// The text itself, under any name: look for it (JSON-escaped) in the raw body. A very
			// short text could occur by chance, so only a text of some length is looked for.
			quoted, _ := json.Marshal(text)
			if needle := strings.Trim(string(quoted), `"`); len(needle) >= 16 {
				Expect(strings.Contains(string(ev.Raw), needle)).To(BeFalse(), "the event body carries the text result: "+string(ev.Raw))
			}
			// Counted like any generation's event (issue 37): once per endpoint, a text result too.
			s.Step("DLV-029")
			expectOnce(ctx, s, sp.c, h, receiver.Match{ResourceID: j.id}, 1, "a text result's generation event reaches the endpoint once")
		})

	// The failure is forced with a test input (render_fail), or control's fault of the same kind:
	// a render failure is nothing a caller can ask a real server for otherwise.
	f.Rule("EVT-002", "EVT-026", "EVT-018", "DLV-029").Needs(framework.TestInputs).It("generation.failed carries status failed and error {code, message}, once", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		h := registerHook(ctx, s, sp.c, "generation.failed")
		d := catalogue.ImageModel(ctx, sp.c)
		failing := s.Force(ctx, sp.c, framework.Outcome{Kind: "render_fail", CapabilityID: d.String("capability_id")})
		j := submit(ctx, s, failing, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, sp.c, j.id)
		s.Step("EVT-002")
		ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.failed", Path: h.path, ResourceID: j.id}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no generation.failed for "+j.id)
		data := eventData(ev)
		Expect(data["status"]).To(Equal("failed"))
		s.Step("EVT-026")
		e, _ := data["error"].(map[string]any)
		Expect(e).To(HaveKey("code"), "error is {code, message} on generation.failed: "+string(ev.Raw))
		Expect(e).To(HaveKey("message"), "error is {code, message} on generation.failed: "+string(ev.Raw))
		s.Step("EVT-002")
		checkEnvelope(s, ev)
		Expect(data["outputs"]).To(BeEmpty())
		s.Step("EVT-018")
		answer.NoLinks(data, "data")
		s.Step("EVT-002")
		expectEventFixed(ev, data)
		s.Step("EVT-002", "DLV-029")
		expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "generation.failed", ResourceID: j.id}, 1, "the generation's event reaches the endpoint once")
	})

	f.Rule("EVT-003", "EVT-009", "EVT-027", "EVT-028", "EVT-018", "DLV-029", "EVT-001", "EVT-026", "EVT-023", "EVT-016", "EVT-021", "EVT-024").It("a video variants submit sends one generation event per sibling and one batch.settled", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		h := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed", "batch.settled")
		j := videoBatch(ctx, s, sp.c)
		finishAll(ctx, s, sp.c, j.ids)
		bg := j.r.String("batch_group_id")
		ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "batch.settled", Path: h.path, ResourceID: bg}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no batch.settled for "+bg)
		data := checkEnvelope(s, ev)
		Expect(data["status"]).To(BeElementOf("completed", "failed", "partial"))
		gens, _ := data["generations"].([]any)
		Expect(gens).To(HaveLen(len(j.ids)))
		for _, g := range gens {
			Expect(g).NotTo(HaveKey("disclosure"))
		}
		expectSettledFixed(s, ev, data)
		s.Step("EVT-018")
		answer.NoLinks(data, "data")
		s.Step()
		for _, id := range j.ids {
			ev, err := s.Hooks().Await(ctx, receiver.Match{Path: h.path, ResourceID: id}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no generation event for sibling "+id)
			// A sibling's event carries what the text fixes for any generation's event.
			s.Step("EVT-001", "EVT-026")
			sib := eventData(ev)
			expectEventFixed(ev, sib)
			// ... every documented field, and its batch and position as the sibling's read says
			// (a first sibling's batch_index 0 is not left out as empty).
			s.Step("EVT-016", "EVT-021")
			checkEnvelope(s, ev)
			rd := readGen(ctx, sp.c, id)
			s.Step("EVT-021", "EVT-024")
			Expect(sib).To(HaveKey("batch_index"), "a sibling's event carries batch_index: "+string(ev.Raw))
			Expect(sib["batch_group_id"]).To(Equal(bg), "a sibling's event names its batch: "+string(ev.Raw))
			at, whole := framework.AsInt(sib["batch_index"])
			want, known := framework.AsInt(rd.Field("generation.batch_index"))
			Expect(whole).To(BeTrue(), "a sibling's batch_index is a whole number: "+string(ev.Raw))
			if known {
				Expect(at).To(Equal(want), "a sibling's event has the batch_index its read has: "+string(ev.Raw)+rd.Describe())
			}
			s.Step()
		}
		s.Step("EVT-003")
		expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "batch.settled", ResourceID: bg}, 1, "batch.settled fires once")
		s.Step("EVT-009", "DLV-029")
		for _, id := range j.ids {
			expectOnce(ctx, s, sp.c, h, receiver.Match{ResourceID: id}, 1, "each sibling's generation event reaches the endpoint once")
		}
	})

	f.Rule("EVT-012", "DLV-029").It("image-model variants make one generation: one generation event, once, and never batch.settled", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		h := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed", "batch.settled")
		d := catalogue.ImageModel(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), map[string]any{"variants": 2})
		s.Finish(ctx, sp.c, j.id)
		s.Step("EVT-012")
		_, err := s.Hooks().Await(ctx, receiver.Match{Path: h.path, ResourceID: j.id}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no generation event for "+j.id)
		nothingFor(ctx, s, h.id, receiver.Match{Type: "batch.settled", Path: h.path}, "image-model variants never make a batch.settled")
		// One generation, so one event, however many outputs (issue 37): not one per output.
		s.Step("EVT-012", "DLV-029")
		expectOnce(ctx, s, sp.c, h, receiver.Match{ResourceID: j.id}, 1, "an image-model variants job is one generation: its event reaches the endpoint once")
	})

	f.Rule("EVT-014").It("another workspace's generations never reach this workspace's endpoints", func(ctx context.Context, s *framework.Spec) {
		h := registerHook(ctx, s, s.Client(), "generation.completed", "generation.failed")
		oc := s.OtherClient()
		d := catalogue.ImageModel(ctx, oc)
		j := submit(ctx, s, oc, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, oc, j.id)
		nothingFor(ctx, s, h.id, receiver.Match{Path: h.path, ResourceID: j.id}, "another workspace's generation reached this workspace's endpoint")
	})

}
