package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/receiver"
)

// deliveryEndpointSpecs registers the specs of an endpoint's health: credits.low once per refill, the
// failing and disabled states, and what a 4XX or a 2XX answer counts as.
func deliveryEndpointSpecs(f *framework.Framework) {
	Describe("deliveries: webhook deliveries", func() {
		f.Rule("EVT-006", "EVT-032").ControlBecause("the low-balance threshold and a refill are the app's and billing's, not the API's").It("credits.low fires when credits fall below the threshold, once per refill", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Balance: ptr(1000)})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
			Expect(s.Control().PatchWorkspace(ctx, ws.ID, map[string]any{"low_balance_threshold_credits": 500})).To(Succeed())
			h := registerHook(ctx, s, c, "credits.low")
			s.SetCredits(ctx, ws.ID, 100)
			first, err := s.Hooks().Await(ctx, receiver.Match{Type: "credits.low", Path: h.path}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no credits.low after the balance fell below the threshold")
			data := checkEnvelope(s, first)
			Expect(data["available_credits"]).To(BeNumerically("==", 100), string(first.Raw))
			Expect(data["threshold_credits"]).To(BeNumerically("==", 500), string(first.Raw))
			s.SetCredits(ctx, ws.ID, 50) // still low: no second event
			s.SetCredits(ctx, ws.ID, 1000)
			s.SetCredits(ctx, ws.ID, 10)
			second, err := s.Hooks().Await(ctx, receiver.Match{Type: "credits.low", Path: h.path, Where: func(e receiver.Event) bool { return e.ID != first.ID }}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no credits.low after a refill and a new fall")
			Expect(checkEnvelope(s, second)["available_credits"]).To(BeNumerically("==", 10), string(second.Raw))
			list, _ := settled(ctx, s, h.id)
			Expect(list).To(HaveLen(2), "the target's history holds two credits.low deliveries: once per refill")
			Expect(s.Hooks().Events(h.path)).To(HaveLen(2), "credits.low fires once per refill")
			expectOnce(ctx, s, c, h, receiver.Match{Type: "credits.low"}, 2, "credits.low fires once per refill (two falls, one refill between)")
		})

		// Without the control API each delivery is a generation's generation.completed and the
		// schedule passes on the target's own clock (--real-time --long): five rounds of 14.5 hours.
		f.Rule("DLV-021", "DLV-022", "DLV-024", "DLV-025", "DLV-027").
			Needs(framework.RealTime, framework.Long, framework.Spends).WaitsOut(5*(retrySchedule*12/10)+retryWaits[1]).It(
			"an endpoint goes failing after 3 exhausted deliveries, disabled after 20, back to active on a 2XX", func(ctx context.Context, s *framework.Spec) {
				endpointStatus(ctx, s)
			}, Label("slow"))

		f.Rule("DLV-023", "DLV-026").ControlBecause("only the app re-enables a disabled endpoint (no API route does)").It(
			"a disabled endpoint is active again only by the app's enable, and the events of its disabled time are not replayed", func(ctx context.Context, s *framework.Spec) {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Balance: ptr(1000)})
				c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
				h := registerHook(ctx, s, c, "credits.low")
				witness := registerHook(ctx, s, c, "credits.low")
				s.Hooks().Behave(h.path, receiver.Always(http.StatusInternalServerError))
				ids := make([]string, 20)
				for i := range ids {
					ids[i] = sendTest(ctx, s, h.id)
				}
				exhaustAll(ctx, s, h.id, ids)
				st, _ := hookStatus(ctx, c, h.id)
				Expect(st).To(Equal("disabled"), "after 20 exhausted deliveries")
				s.Hooks().Behave(h.path, nil)
				Expect(s.Control().PatchWorkspace(ctx, ws.ID, map[string]any{"low_balance_threshold_credits": 500})).To(Succeed())
				s.SetCredits(ctx, ws.ID, 100)
				low, err := s.Hooks().Await(ctx, receiver.Match{Type: "credits.low", Path: witness.path}, arrival(s))
				Expect(err).NotTo(HaveOccurred(), "the witness endpoint got no credits.low")
				// Only the app (control) re-enables; the disabled time is not replayed.
				s.Step("DLV-026", "DLV-023")
				en := controlHook(ctx, s, h.id, "enable")
				Expect(en["status"]).To(Equal("active"))
				s.Advance(ctx, (15 * time.Hour).Seconds())
				nothingFor(ctx, s, h.id, receiver.Match{Type: "credits.low", Path: h.path}, "the event "+low.ID+" of the disabled time was replayed")
				st, n := hookStatus(ctx, c, h.id)
				Expect([]any{st, n}).To(Equal([]any{"active", int64(0)}))
			}, Label("slow"))

		// Without the control API the schedule passes on the target's own clock (--real-time --long)
		// and the deliveries are generations' generation.completed (fourXXOnRealClock).
		f.Rule("DLV-009", "DLV-025", "DLV-027").Needs(framework.RealTime, framework.Long, framework.Spends).
			WaitsOut(firstRetryWait+retrySchedule+retryWaits[3]*12/10).It(
			"a 4XX answer is a failed attempt: retried on the schedule, and five of them exhaust the delivery and count against the endpoint", func(ctx context.Context, s *framework.Spec) {
				if !s.HasControl() {
					fourXXOnRealClock(ctx, s)
					return
				}
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
				h := registerHook(ctx, s, c, "credits.low")
				// A client error is no reason to stop: each 4XX here is answered once, then 2XX.
				s.Step("DLV-009")
				for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusGone, http.StatusTooManyRequests} {
					s.Hooks().Behave(h.path, receiver.FailFirst(1, status))
					id := sendTest(ctx, s, h.id)
					attempts(ctx, s, id, 1)
					settled(ctx, s, h.id)
					s.Advance(ctx, retryWaits[0].Seconds()*1.1)
					attempts(ctx, s, id, 2)
					noMore(ctx, s, h.id, id, 2, fmt.Sprintf("the 2XX after a %d was retried", status))
				}
				s.Step("DLV-025")
				st, n := hookStatus(ctx, c, h.id)
				Expect([]any{st, n}).To(Equal([]any{"active", int64(0)}), "each delivery succeeded on its second attempt")
				// Five 410s exhaust a delivery: it counts like any other exhausted delivery.
				s.Hooks().Behave(h.path, receiver.Always(http.StatusGone))
				id := sendTest(ctx, s, h.id)
				exhaustAll(ctx, s, h.id, []string{id})
				s.Step("DLV-009")
				Expect(recordOf(must(settled(ctx, s, h.id)), id).Status).To(Equal("exhausted"), "five 410 answers exhaust the delivery")
				s.Step("DLV-027")
				st, n = hookStatus(ctx, c, h.id)
				Expect([]any{st, n}).To(Equal([]any{"active", int64(1)}), "an exhausted delivery answered 410 counts against the endpoint")
			}, Label("slow"))

		f.Rule("DLV-020", "DLV-025").WaitsOut(firstRetryWait).It("a 2XX ends a delivery whatever its body says: a 200 with HTML and a 202 whose JSON claims failure are not retried", func(ctx context.Context, s *framework.Spec) {
			c := newSpender(ctx, s).c
			hooks := deliveryHooks(ctx, s, c,
				receiver.AnswerWith(http.StatusOK, "<html><body>not json</body></html>", "text/html"),
				receiver.AnswerWith(http.StatusAccepted, `{"ok":false,"error":"retry later","retry":true}`, "application/json"),
				receiver.AnswerWith(http.StatusOK, `{"ok":false}`, "text/plain"))
			ids := fireAt(ctx, s, c, hooks...)
			var hookIDs []string
			for i, h := range hooks {
				hookIDs = append(hookIDs, h.id)
				s.Step("DLV-020")
				if s.HasControl() {
					Expect(recordOf(must(settled(ctx, s, h.id)), ids[i]).Status).To(Equal("delivered"), "a 2XX with a body is a delivered attempt (the target's history)")
				}
			}
			pastFirstRetry(ctx, s, hookIDs...)
			for i, h := range hooks {
				s.Step("DLV-020")
				noMore(ctx, s, h.id, ids[i], 1, "a 2XX with a body was retried")
				s.Step("DLV-025")
				st, n := hookStatus(ctx, c, h.id)
				Expect([]any{st, n}).To(Equal([]any{"active", int64(0)}))
			}
		})
	})
}
