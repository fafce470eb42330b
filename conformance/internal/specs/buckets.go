package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// bucketSpecs registers the specs of the rate-limit buckets.
func bucketSpecs(f *framework.Framework) {
	rateLimitSpecs(f)
	bucketWindowSpecs(f)
	sharedBucketSpecs(f)
}

// rateLimitSpecs registers the specs of the rate-limit buckets.
func rateLimitSpecs(f *framework.Framework) {
	Describe("limits: rate-limit buckets", func() {
		exact := func(rule string, call buckets.Call, size int, scopes ...string) {
			f.Rule(rules(rule, "RATE-013", "ERR-009", "ERR-036")...).Needs(framework.RealTime).It(
				fmt.Sprintf("%s: %d calls a minute per key pass, the next answers 429 rate_limited with Retry-After", call.Name, size),
				func(ctx context.Context, s *framework.Spec) {
					c := bucketKey(ctx, s, scopes...)
					buckets.InWindow(ctx, s, func() {
						s.Step(rule)
						buckets.Fill(ctx, c, call, size)
						s.Step(rule, "RATE-013", "ERR-009", "ERR-036")
						buckets.ExpectRefusal(call.Do(ctx, c))
					})
				})
		}
		exact("RATE-001", buckets.Read, 120, "read")
		exact("RATE-002", buckets.Estimate, 60, "read")
		exact("RATE-005", buckets.Webhook, 20, "read", "generate")
		f.Rule(rules("RATE-008", "RATE-013", "ERR-009")...).Needs(framework.RealTime).It("POST /uploads: 30 upload calls a minute per key pass, the next answers 429 with Retry-After",
			func(ctx context.Context, s *framework.Spec) {
				c := bucketKey(ctx, s, "read", "generate")
				buckets.InWindow(ctx, s, func() {
					s.Step("RATE-008")
					buckets.Fill(ctx, c, buckets.Upload, 30)
					s.Step("RATE-008", "RATE-013", "ERR-009")
					buckets.ExpectRefusal(buckets.Upload.Do(ctx, c))
				})
			})

		// Without control both windows are the run's main key's, each after a minute of the
		// target's clock has emptied its buckets (the finalized uploads leave nothing pending).
		f.Rule(rules("RATE-008", "RATE-013", "ERR-009")...).Needs(framework.RealTime, framework.Uploads).WaitsOut(2*framework.DefaultRealTimeWait).It(
			"finalize counts in the 30 upload calls with reserve: 15 finalizes and 15 reserves fill it, and so do 29 finalizes after one reserve",
			func(ctx context.Context, s *framework.Spec) {
				mixed := bucketKey(ctx, s, "read", "generate")
				buckets.InWindow(ctx, s, func() {
					// One reserve, 14 finalizes of the stored file, 15 refused reserves: 30 calls.
					s.Step("RATE-008")
					id := uploads.PutForFinalize(ctx, s, mixed)
					fillFinalizes(ctx, mixed, id, 14)
					buckets.Fill(ctx, mixed, buckets.Upload, 15)
					s.Step("RATE-008", "RATE-013", "ERR-009")
					buckets.ExpectRefusal(uploads.Finalize(ctx, mixed, id))
					buckets.ExpectRefusal(buckets.Upload.Do(ctx, mixed))
				})
				finalizes := bucketKey(ctx, s, "read", "generate")
				buckets.InWindow(ctx, s, func() {
					// One reserve and 29 finalizes: the reservation brake holds 1 of its 30, so only
					// the upload-calls bucket can refuse the next reserve.
					s.Step("RATE-008")
					id := uploads.PutForFinalize(ctx, s, finalizes)
					fillFinalizes(ctx, finalizes, id, 29)
					s.Step("RATE-008", "RATE-013", "ERR-009")
					buckets.ExpectRefusal(buckets.Upload.Do(ctx, finalizes))
					buckets.ExpectRefusal(uploads.Finalize(ctx, finalizes, id))
				})
			})

		f.Rule(rules("RATE-015")...).Needs(framework.RealTime).It("a read of the live description counts against agent_read", func(ctx context.Context, s *framework.Spec) {
			desc := s.DescriptionPath()
			c := bucketKey(ctx, s, "read")
			s.Step("RATE-015")
			buckets.InWindow(ctx, s, func() {
				buckets.Fill(ctx, c, buckets.Read, 119)
				c.Get(ctx, desc).ExpectStatus(http.StatusOK)
				buckets.ExpectRefusal(buckets.Read.Do(ctx, c))
			})
		})

		f.Rule("RATE-016").Needs(framework.RealTime).It("health probes are not counted: a full agent_read bucket leaves them answering", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("RATE-016", "whether a probe sent with a key counts in the key's buckets")
			live := s.LivePath()
			c := bucketKey(ctx, s, "read")
			for i := 0; i < 5; i++ {
				expect2XX(c.Get(ctx, live), "the liveness probe")
			}
			buckets.InWindow(ctx, s, func() {
				buckets.Fill(ctx, c, buckets.Read, 120)
				buckets.ExpectRefusal(buckets.Read.Do(ctx, c))
				expect2XX(c.Get(ctx, live), "the liveness probe with a full agent_read bucket")
			})
		})

		Describe("the agent_read window", Ordered, func() {
			var c *framework.Client
			var wait int64
			var named time.Time // when the wait was named, on the target's clock
			f.BeforeAll([]framework.Need{framework.RealTime}, func(ctx context.Context, s *framework.Spec) {
				c = bucketKey(ctx, s, "read")
			})
			f.Rule(rules("RATE-001", "RATE-013")...).Needs(framework.RealTime).It("fills after 120 reads and names the wait", func(ctx context.Context, s *framework.Spec) {
				buckets.InWindow(ctx, s, func() {
					s.Step("RATE-001")
					buckets.Fill(ctx, c, buckets.Read, 120)
					s.Step("RATE-001", "RATE-013")
					wait = buckets.ExpectRefusal(buckets.Read.Do(ctx, c))
				})
				named = s.ClockNow(ctx)
			})
			f.Rule("RATE-014").Needs(framework.RealTime).It("slides: after retry_after_seconds of service time the read passes again", func(ctx context.Context, s *framework.Spec) {
				Expect(wait).To(BeNumerically(">", 0), "the previous step named no wait")
				if ran := s.ClockNow(ctx).Sub(named); ran >= time.Duration(wait)*time.Second {
					s.Undecidable("the previous step named the wait", ran)
				}
				buckets.Read.Do(ctx, c).ExpectError(http.StatusTooManyRequests, "rate_limited")
				s.WaitOut(ctx, time.Duration(wait)*time.Second)
				buckets.Read.Do(ctx, c).ExpectOK(http.StatusOK)
			})
		})

		f.Rule(rules("RATE-011")...).Needs(framework.RealTime, framework.ReadKey).It("buckets are per key: a second key of the workspace is not limited", func(ctx context.Context, s *framework.Spec) {
			a, b := bucketKeys(ctx, s)
			s.Step("RATE-011")
			buckets.InWindow(ctx, s, func() {
				buckets.Fill(ctx, a, buckets.Read, 120)
				buckets.ExpectRefusal(buckets.Read.Do(ctx, a))
				buckets.Read.Do(ctx, b).ExpectOK(http.StatusOK)
			})
		})

		f.Rule(rules("RATE-012")...).Needs(framework.RealTime, framework.ReadKey).It("buckets are independent: a full estimate bucket leaves reads open and the reverse", func(ctx context.Context, s *framework.Spec) {
			est, rd := bucketKeys(ctx, s)
			s.Step("RATE-012")
			buckets.InWindow(ctx, s, func() {
				buckets.Fill(ctx, est, buckets.Estimate, 60)
				buckets.ExpectRefusal(buckets.Estimate.Do(ctx, est))
				buckets.Read.Do(ctx, est).ExpectOK(http.StatusOK)
			})

			buckets.InWindow(ctx, s, func() {
				buckets.Fill(ctx, rd, buckets.Read, 120)
				buckets.ExpectRefusal(buckets.Read.Do(ctx, rd))
				r := buckets.Estimate.Do(ctx, rd)
				Expect(r.Status).To(Equal(http.StatusBadRequest), "a full agent_read bucket must not limit estimates"+r.Describe())
			})
		})

		f.Rule(rules("AUTH-028")...).Needs(framework.RealTime, framework.ReadKey).It("the bucket comes before the scope check: a read-only key over its bucket gets 429, not 403", func(ctx context.Context, s *framework.Spec) {
			_, c := bucketKeys(ctx, s)
			s.Step("AUTH-028")
			buckets.InWindow(ctx, s, func() {
				for i := 0; i < 20; i++ {
					buckets.Webhook.Do(ctx, c).ExpectError(http.StatusForbidden, "insufficient_scope")
				}
				buckets.ExpectRefusal(buckets.Webhook.Do(ctx, c))
			})
		})
	})

}

// bucketWindowSpecs registers the specs of the sliding bucket window.
func bucketWindowSpecs(f *framework.Framework) {
	Describe("limits: the bucket window slides", func() {
		f.Rule(rules("RATE-013", "RATE-014", "RATE-001")...).Needs(framework.RealTime).It("the wait counts from the oldest call in the window, and only the calls that left it free room", func(ctx context.Context, s *framework.Spec) {
			c := bucketKey(ctx, s, "read")
			// Every step is placed on the target's clock (exact on a manual clock; on a running one
			// each span also holds the time that passed by itself).
			s.Step("RATE-001")
			first := s.During(ctx, func() { buckets.Fill(ctx, c, buckets.Read, 60) })
			s.WaitOut(ctx, 20*time.Second)
			second := s.During(ctx, func() { buckets.Fill(ctx, c, buckets.Read, 60) })
			var r *framework.Response
			at := s.During(ctx, func() { r = buckets.Read.Do(ctx, c) })
			// The oldest calls leave the window 60 s after they were made (20 s old on a manual clock:
			// 40 s to go).
			if ran := at.To.Sub(first.From); ran > 45*time.Second {
				s.Undecidable("the spec filled the bucket twice", ran)
			}
			s.Step("RATE-013")
			buckets.ExpectWaitBetween(s, r, first.From.Add(time.Minute).Sub(at.To), first.To.Add(time.Minute).Sub(at.From))
			s.Step("RATE-014")
			s.WaitOut(ctx, 40*time.Second)
			// The first 60 left; the 60 made 40 s ago are still in the window (a refused call may or
			// may not count, so one fewer pass is accepted).
			passed := 0
			var refusal *framework.Response
			third := s.During(ctx, func() {
				for i := 0; i < 61; i++ {
					r := buckets.Read.Do(ctx, c)
					if r.Status != http.StatusOK {
						refusal = r
						break
					}
					passed++
				}
			})
			if ran := third.To.Sub(second.From); ran >= time.Minute {
				s.Undecidable("the spec filled the bucket and waited for its oldest calls to leave", ran)
			}
			Expect(passed).To(BeElementOf(59, 60), "after the oldest calls left, only their room is free, not a fresh window of 120")
			Expect(refusal).NotTo(BeNil(), "the window still holds the later calls: the bucket fills again")
			s.Step("RATE-013")
			buckets.ExpectWaitBetween(s, refusal, second.From.Add(time.Minute).Sub(third.To), second.To.Add(time.Minute).Sub(third.From))
		})
	})

}

// sharedBucketSpecs registers the specs of buckets shared by several routes.
func sharedBucketSpecs(f *framework.Framework) {
	Describe("limits: buckets shared by several routes", func() {
		f.Rule(rules("RATE-004", "RATE-013", "ERR-036")...).Needs(framework.RealTime).It("POST /generations and both workflow invokes share the 20-a-minute agent_submit bucket", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("RATE-004", "the bucket of the workflow invokes")
			c := bucketKey(ctx, s, "read", "generate")
			s.Step("RATE-004")
			buckets.InWindow(ctx, s, func() {
				for i := 0; i < 20; i++ {
					call := buckets.Submits[i%3]
					r := call.Do(ctx, c)
					Expect(r.Status).To(BeElementOf(http.StatusBadRequest, http.StatusNotFound), fmt.Sprintf("%s, call %d of 20 inside the bucket", call.Name, i+1)+r.Describe())
				}
				s.Step("RATE-004", "RATE-013", "ERR-036")
				for _, call := range buckets.Submits {
					buckets.ExpectRefusal(call.Do(ctx, c))
				}
				s.Step("RATE-004")
				buckets.Read.Do(ctx, c).ExpectOK(http.StatusOK)
			})
		})

		f.Rule(rules("RATE-006", "RATE-013")...).Needs(framework.RealTime).It("GET /webhooks counts against agent_read, not webhook_manage", func(ctx context.Context, s *framework.Spec) {
			c := bucketKey(ctx, s, "read", "generate")
			s.Step("RATE-006")
			buckets.InWindow(ctx, s, func() {
				for i := 0; i < 25; i++ {
					c.Get(ctx, "/webhooks").ExpectOK(http.StatusOK)
				}
				r := buckets.Webhook.Do(ctx, c)
				Expect(r.Status).To(Equal(http.StatusBadRequest), "25 webhook reads leave webhook_manage (20 a minute) untouched"+r.Describe())
				buckets.Fill(ctx, c, buckets.Read, 95)
				s.Step("RATE-006", "RATE-013")
				buckets.ExpectRefusal(c.Get(ctx, "/webhooks"))
				buckets.ExpectRefusal(buckets.Read.Do(ctx, c))
			})
		})

		f.Rule(rules("RATE-007", "RATE-001", "RATE-013")...).Needs(framework.RealTime).It("reads of every kind share the one agent_read bucket", func(ctx context.Context, s *framework.Spec) {
			c := bucketKey(ctx, s, "read")
			s.Step("RATE-007", "RATE-001")
			buckets.InWindow(ctx, s, func() {
				for i := 0; i < 120; i++ {
					call := buckets.ReadKinds[i%len(buckets.ReadKinds)]
					r := call.Do(ctx, c)
					Expect(r.Status).To(Equal(http.StatusOK), fmt.Sprintf("%s, read %d of 120", call.Name, i+1)+r.Describe())
				}
				s.Step("RATE-007", "RATE-001", "RATE-013")
				for _, call := range append(slices.Clone(buckets.ReadKinds), buckets.Read) {
					buckets.ExpectRefusal(call.Do(ctx, c))
				}
			})
		})
	})

}

// bucketKey returns a key of scopes whose buckets are empty: with control, a new key of a workspace
// of the spec's own; without, the run's main key (read and generate) once a minute of the target's
// clock has passed (framework.Spec.BucketClient: the spec needs RealTime).
func bucketKey(ctx context.Context, s *framework.Spec, scopes ...string) *framework.Client {
	GinkgoHelper()
	if s.HasControl() {
		c, _ := s.NewWorkspace(ctx, framework.WorkspaceOptions{}).NewKey(ctx, framework.KeyOptions{Scopes: scopes})
		return c
	}
	return s.BucketClient(ctx, time.Minute)
}

// bucketKeys returns two keys of one workspace with empty buckets, the second a read-only key:
// with control, new keys of a workspace of the spec's own; without, the run's main and read-only
// keys once a minute of the target's clock has passed (the spec needs RealTime and ReadKey).
func bucketKeys(ctx context.Context, s *framework.Spec) (a, readOnly *framework.Client) {
	GinkgoHelper()
	if s.HasControl() {
		ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
		a, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
		readOnly, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
		return a, readOnly
	}
	return s.BucketClient(ctx, time.Minute), s.BucketReadClient()
}
