package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// Specs added by the mutation pass over generations, submits, batches and waits: each closes a gap
// a plausible wrong server slipped through (a capability ceiling below 4 clamped instead of
// refused, config validity checked before max_credits, the hold charged instead of the price, a
// wait that ignores the job's end, age_seconds counted from the wait, a date read in another
// zone, a batch reading completed while a sibling still runs).

func mutationGenerationSpecs(f *framework.Framework) {
	Describe("mutation pass: submits", func() {
		f.Rule(rules("VAR-002", "ERR-020", "ERR-024")...).It("variants above a capability's own max_variants (below 4) answer 400 invalid_config naming variants, never clamped", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			c := s.Client()
			checked := 0
			for _, row := range catalogue(ctx, c) {
				mv := maxVariants(row)
				if row["status"] != "available" || mv <= 1 || mv >= 4 {
					continue
				}
				d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
				cfg := cheapConfig(d)
				if namesUpload(cfg) {
					continue
				}
				id := d.String("capability_id")
				est := clone(cfg)
				est["count"] = mv
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": est})
				if r.Status != http.StatusOK {
					continue
				}
				over := submitBody(id, cfg, r.Int("max_credits_needed")*4, map[string]any{"variants": mv + 1})
				expectField(refuse(ctx, rc.client(), over, http.StatusBadRequest, "invalid_config"), "variants")
				checked++
			}
			if checked == 0 {
				Skip("unsupported: no available capability with max_variants 2 or 3 can be priced without an upload")
			}
		})

		f.Rule(rules("CHECK-019", "CHECK-001", "SUBMIT-014", "ERR-025")...).It("max_credits before config validity: a config with an unknown key sent with max_credits 1 gets 402 max_credits_exceeded", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := ttsConfig()
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			bad := clone(cfg)
			bad["conformance_bogus"] = true
			r := refuse(ctx, c, submitBody("tts", bad, 1, nil), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
			Expect(r.Int("error.limit.required_credits")).To(Equal(need), "the price checks price the config as sent, before config validity"+r.Describe())
		})

		f.Rule("LEDGER-002", "GEN-017", "CORE-020").Needs(framework.Spends).It("a completed job with an exact estimate is charged the estimate's credits, not the padded hold", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			cfg := cheapConfig(d)
			est, _ := estimateOf(ctx, sp.c, d.String("capability_id"), cfg, nil)
			if est.Bool("is_ceiling") {
				Skip("unsupported: the image model's estimate is a ceiling, not an exact price")
			}
			before, _ := balanceOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cfg, nil)
			Expect(s.Finish(ctx, sp.c, j.id).String("generation.status")).To(Equal("completed"))
			r := readGen(ctx, sp.c, j.id)
			Expect(r.Int("generation.credits.credits_charged")).To(Equal(j.price), "an exact estimate's credits is the price charged; the pad is only held"+r.Describe())
			if sp.ws != nil {
				after, held := balanceOf(ctx, sp.c)
				Expect(held).To(BeZero())
				Expect(before-after).To(Equal(j.price), "the balance moved by the price, the rest of the hold was released")
			}
		})
	})

	Describe("mutation pass: waits", func() {
		f.Rule("GEN-027", "GEN-005", "GEN-030").Needs(framework.Spends, framework.Control).It("a wait answers as soon as the job ends, before its 18 s are up", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			done := make(chan *framework.Response, 1)
			// The wait runs on its own context so that it is never cut off by the spec ending (a
			// skip below): the cleanup that finishes the job releases it.
			wctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			exited := make(chan struct{})
			DeferCleanup(func(ctx SpecContext) {
				s.Finish(ctx, sp.c, j.id)
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
				}
				cancel()
			})
			go func() {
				defer GinkgoRecover()
				defer close(exited)
				done <- sp.c.Get(wctx, "/generations/"+j.id+"/wait")
			}()
			// Let the wait start while the job runs: three seconds of service time, slowly.
			for i := 0; i < 3; i++ {
				select {
				case early := <-done:
					early.ExpectOK(http.StatusOK)
					Skip("unsupported: the job ended within 3 s of service time; a wait cut short by the job's end cannot be observed" + early.Describe())
				case <-time.After(50 * time.Millisecond):
				}
				s.Advance(ctx, 1)
			}
			s.JobHook(ctx, j.id, "fail", map[string]any{"code": "provider_error"})
			// The service clock stands still from here: only the job's end can release the wait.
			select {
			case w := <-done:
				w.ExpectOK(http.StatusOK)
				Expect(w.Bool("still_running")).To(BeFalse(), "the wait answers the ended job"+w.Describe())
				Expect(w.String("generation.status")).To(Equal("failed"), w.Describe())
				Expect(w.Int("waited_seconds")).To(BeNumerically("<", 15), "the wait ended with the job, not at its 18 s"+w.Describe())
			case <-time.After(5 * time.Second):
				s.Advance(ctx, 20)
				w := <-done
				Fail("GET /generations/{id}/wait did not answer when the job ended; it answered only once its 18 s had passed" + w.Describe())
			}
		})

		f.Rule("GEN-034", "GEN-032").Needs(framework.Spends, framework.Control).It("age_seconds counts from created_at, not from the start of the wait", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			s.Finish(ctx, sp.c, j.id)
			s.Advance(ctx, 120)
			w := sp.c.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
			Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
			Expect(w.Int("waited_seconds")).To(BeNumerically("<=", 2), "a finished job's wait answers at once"+w.Describe())
			Expect(w.Int("age_seconds")).To(BeNumerically(">=", 120), "the job was created more than 120 s of service time ago"+w.Describe())
		})
	})

	Describe("mutation pass: lists and batches", func() {
		f.Rule("GEN-043").Needs(framework.Spends, framework.Control, framework.Slow).It("created_before with a date cuts at midnight UTC: a job two minutes before it is kept, one two minutes after is not", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			voice := firstVoice(ctx, sp.c)
			now := serviceNow(ctx, s)
			midnight := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
			s.Advance(ctx, midnight.Add(-2*time.Minute).Sub(now).Seconds())
			before := submit(ctx, s, sp.c, "tts", ttsConfig(), map[string]any{"voice_id": voice})
			s.Finish(ctx, sp.c, before.id)
			if gap := midnight.Add(2 * time.Minute).Sub(serviceNow(ctx, s)); gap > 0 {
				s.Advance(ctx, gap.Seconds())
			}
			after := submit(ctx, s, sp.c, "tts", ttsConfig(), map[string]any{"voice_id": voice})
			s.Finish(ctx, sp.c, after.id)
			day := midnight.Format("2006-01-02")
			Expect(listIDs(ctx, sp.c, [2]string{"created_before", day})).To(Equal([]string{before.id}),
				fmt.Sprintf("created_before=%s keeps what was made before %s midnight UTC and nothing after", day, day))
			next := midnight.AddDate(0, 0, 1).Format("2006-01-02")
			Expect(listIDs(ctx, sp.c, [2]string{"created_before", next})).To(Equal([]string{after.id, before.id}), "created_before the next day keeps both, newest first")
		})

		f.Rule("BATCH-002", "BATCH-009", "BATCH-007", "SUBMIT-001").Needs(framework.Spends, framework.Control).It("a batch with one sibling completed and one still running reads running with no charge; its submit's Location names generation_id", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			s.QueueFaultIn(ctx, sp.ws.ID, map[string]any{"kind": "slow_render", "seconds": 1800}, d.String("capability_id"), 1, "")
			j := videoBatch(ctx, s, sp.c)
			loc := j.r.Header.Get("Location")
			Expect(loc).To(Or(Equal(s.APIPath("/generations/"+j.id)), HaveSuffix("://"+hostOf(j.r)+s.APIPath("/generations/"+j.id))),
				"a batch submit's Location names generation_id, the sibling to wait on"+j.r.Describe())
			var completed, running string
			for elapsed := 0; elapsed < 1700 && completed == ""; elapsed += 5 {
				sts := map[string]string{}
				for _, id := range j.ids {
					sts[id] = readGen(ctx, sp.c, id).String("generation.status")
				}
				completed, running = "", ""
				for id, st := range sts {
					switch {
					case st == "completed":
						completed = id
					case st != "failed":
						running = id
					}
				}
				if completed != "" && running == "" {
					Skip("unsupported: both siblings ended together; the slow_render fault did not hold one back")
				}
				if completed == "" {
					s.Advance(ctx, 5)
				}
			}
			Expect(completed).NotTo(BeEmpty(), "no sibling completed within 1700 s of service time")
			b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
			checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("running"), "a batch runs while any sibling runs, even when another completed"+b.Describe())
			Expect(b.Int("variants_finished")).To(Equal(int64(1)), b.Describe())
			Expect(b.Field("credits.credits_charged")).To(BeNil(), "the batch charge stays null until every sibling is done"+b.Describe())
			Expect(b.Bool("credits.terminal")).To(BeFalse(), b.Describe())
		})
	})
}
