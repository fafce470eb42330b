package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// windowSlack is how far from "24 hours after its hold" rollsOnRealClock looks, on the target's
// clock, for the spend to still count and to be gone: ten minutes, plus two seconds of wall clock
// at the target's time scale (the spec reads the target's clock from the hold's created_at and
// counts on from there by the wall clock, so a request's latency is that far off at that scale).
func windowSlack(s *framework.Spec) time.Duration {
	return 10*time.Minute + time.Duration(2*float64(time.Second)*s.TimeScale())
}

// rollsOnRealClock is the rolling-window spec without the control API, on limited_key's workspace,
// whose declared daily limit a tts hold fits and, once its price is spent, no longer does: a tts
// hold is taken and spent, and the same hold is then refused with bound_by org_daily across the
// next midnight UTC of the target's clock (the window rolls, it does not reset) and until
// windowSlack before 24 hours after the hold; windowSlack after them the same hold is accepted.
// The day passes on the target's own clock (--real-time --long: at the mock's x1000 about 1.5
// minutes a day), counted from the hold's created_at.
func rollsOnRealClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := s.RoleKey(framework.LimitedKey)
	perGen, daily := s.LimitedKeyLimits()
	est, h := estimateOf(ctx, c, "tts", catalogue.TTSConfig(ctx, c), nil)
	price := int64(priceOf(est) + 0.999999)
	if h > min(perGen, daily) || daily-price >= h {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: limited_key's workspace limits (%d per generation, %d daily) "+
			"do not fit the rolling-window spec: a tts hold of %d credits must fit both, and once its price of %d is spent no longer "+
			"fit the daily limit (declare a daily limit from %d to %d)", perGen, daily, h, price, h, h+price-1)))
	}
	next := func() map[string]any { return submitBody("tts", catalogue.TTSConfig(ctx, c), h, nil) }
	post := func() *framework.Response { s.Spend(int(h)); return c.Post(ctx, "/generations", next()) }
	slack := windowSlack(s)
	// An earlier run's spend may still be in the window (24 hours of the target's clock): past it,
	// the hold is accepted.
	first := post()
	if first.Status == http.StatusPaymentRequired {
		first.ExpectError(http.StatusPaymentRequired, "spend_limit_exceeded")
		s.WaitOut(ctx, contract.SpendWindow+slack)
		first = post()
	}
	tk := takeHold(ctx, s, c, first.ExpectOK(http.StatusCreated))
	// The next midnight UTC must come before the spec looks at the window's last stretch: a hold
	// taken just after a midnight is spent, and the spec takes its hold again at noon once that
	// spend left the window (which the accepted hold judges).
	if nextMidnight(tk.taken).Add(slack).After(tk.taken.Add(contract.SpendWindow - 2*slack)) {
		gone := tk.taken.Add(contract.SpendWindow + slack)
		noon := nextMidnight(gone).Add(-12 * time.Hour)
		if noon.Before(gone) {
			noon = noon.Add(24 * time.Hour)
		}
		tk.waitUntil(ctx, s, noon)
		s.Step("LEDGER-017")
		tk = takeHold(ctx, s, c, post().ExpectOK(http.StatusCreated))
	}
	refused := func(why string) {
		r := refuse(ctx, c, next(), http.StatusPaymentRequired, "spend_limit_exceeded")
		Expect(r.String("error.limit.bound_by")).To(Equal("org_daily"), why+r.Describe())
		refusal.ExpectLimitAmounts(s, r, &daily, ptr(daily-tk.charged))
	}
	s.Step("LEDGER-009", "LEDGER-016")
	refused(fmt.Sprintf("a spend of %d in a daily limit of %d leaves no room for a hold of %d", tk.charged, daily, h))

	s.Step("LEDGER-017", "LEDGER-016")
	midnight := nextMidnight(tk.taken)
	tk.waitUntil(ctx, s, midnight.Add(slack))
	refused(fmt.Sprintf("after midnight UTC (the hold was taken at %s) the window still holds the spend: it rolls, it does not reset",
		tk.taken.Format(time.TimeOnly)))
	tk.waitUntil(ctx, s, tk.taken.Add(contract.SpendWindow-slack))
	refused(fmt.Sprintf("%s before 24 hours after its hold the spend still counts", slack.Round(time.Minute)))
	tk.waitUntil(ctx, s, tk.taken.Add(contract.SpendWindow+slack))
	s.Step("LEDGER-017")
	j := post()
	Expect(j.Status).To(Equal(http.StatusCreated), fmt.Sprintf("%s after 24 hours after its hold the spend left the window: "+
		"the same hold is accepted", slack.Round(time.Minute))+j.Describe())
	s.Finish(ctx, c, j.String("generation_id"))
}

// hold is a spent hold of rollsOnRealClock: taken on the target's clock (the generation's
// created_at), answered at wall on the local clock, and charged.
type hold struct {
	taken, wall time.Time
	charged     int64
	scale       float64
}

// takeHold reads the hold of the submit r answered and waits for its generation to finish.
func takeHold(ctx context.Context, s *framework.Spec, c *framework.Client, r *framework.Response) hold {
	GinkgoHelper()
	wall := time.Now()
	id := r.String("generation_id")
	taken := answer.Time(readGen(ctx, c, id), "generation.created_at")
	w := s.Finish(ctx, c, id)
	Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
	return hold{taken: taken, wall: wall, charged: w.Int("generation.credits.credits_charged"), scale: s.TimeScale()}
}

// at is the target's clock at the local time t, counted on from the hold at the time scale.
func (h hold) at(t time.Time) time.Time {
	return h.taken.Add(time.Duration(float64(t.Sub(h.wall)) * h.scale))
}

// waitUntil lets the target's clock reach t (at most once more than is needed: Spec.WaitOut).
func (h hold) waitUntil(ctx context.Context, s *framework.Spec, t time.Time) {
	GinkgoHelper()
	if d := t.Sub(h.at(time.Now())); d > 0 {
		s.WaitOut(ctx, d)
	}
}

// nextMidnight is the first midnight UTC after t.
func nextMidnight(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC).Add(24 * time.Hour)
}
