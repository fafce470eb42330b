package specs

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// bucketCall is one call that counts against a bucket; want is the status it answers while the
// bucket has room.
type bucketCall struct {
	name string
	do   func(ctx context.Context, c *framework.Client) *framework.Response
	want int
}

var (
	readCall = bucketCall{"GET /credits/balance", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/credits/balance")
	}, http.StatusOK}
	// An estimate without config is refused with 400 after the bucket check, so it counts and
	// needs no catalogue knowledge.
	estimateCall = bucketCall{"POST /estimates", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts"}, framework.Invalid())
	}, http.StatusBadRequest}
	webhookCall = bucketCall{"POST /webhooks", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/webhooks", map[string]any{"events": []string{"generation.completed"}}, framework.Invalid())
	}, http.StatusBadRequest}
	uploadCall = bucketCall{"POST /uploads", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/uploads", map[string]any{"filename": "a.png"}, framework.Invalid())
	}, http.StatusBadRequest}
)

// fill makes n calls that must all answer call.want.
func fill(ctx context.Context, c *framework.Client, call bucketCall, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		r := call.do(ctx, c)
		Expect(r.Status).To(Equal(call.want), fmt.Sprintf("%s call %d of %d, inside the bucket", call.name, i+1, n)+r.Describe())
	}
}

// expectBucketRefusal checks a 429 rate_limited with retry_after_seconds in 1..60 and an equal
// Retry-After header, and returns the wait.
func expectBucketRefusal(r *framework.Response) int64 {
	GinkgoHelper()
	r.ExpectError(http.StatusTooManyRequests, "rate_limited")
	Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
	wait := r.Int("error.retry_after_seconds")
	Expect(wait).To(And(BeNumerically(">=", 1), BeNumerically("<=", 60)), "retry_after_seconds is 1..60 on a 60 s window"+r.Describe())
	Expect(r.Header.Get("Retry-After")).To(Equal(strconv.FormatInt(wait, 10)), "Retry-After equals retry_after_seconds"+r.Describe())
	return wait
}

func buckets(f *framework.Framework) {
	Describe("rate-limit buckets", func() {
		exact := func(rule string, call bucketCall, size int, scopes ...string) {
			f.Rule(rules(rule, "RATE-013", "ERR-009", "ERR-036")...).Needs(framework.Control).It(
				fmt.Sprintf("%s: %d calls a minute per key pass, the next answers 429 rate_limited with Retry-After", call.name, size),
				func(ctx context.Context, s *framework.Spec) {
					ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
					c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: scopes})
					fill(ctx, c, call, size)
					expectBucketRefusal(call.do(ctx, c))
				})
		}
		exact("RATE-001", readCall, 120, "read")
		exact("RATE-002", estimateCall, 60, "read")
		exact("RATE-005", webhookCall, 20, "read", "generate")
		f.Rule(rules("RATE-008", "RATE-013", "ERR-009")...).Needs(framework.Control).It("POST /uploads: 30 upload calls a minute per key pass, the next answers 429 with Retry-After",
			func(ctx context.Context, s *framework.Spec) {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
				fill(ctx, c, uploadCall, 30)
				expectBucketRefusal(uploadCall.do(ctx, c))
			})

		f.Rule(rules("RATE-015")...).Needs(framework.Control).It("GET /openapi.json counts against agent_read", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			fill(ctx, c, readCall, 119)
			c.Get(ctx, "/openapi.json").ExpectStatus(http.StatusOK)
			expectBucketRefusal(readCall.do(ctx, c))
		})

		f.Rule("RATE-016").Needs(framework.Control).It("health probes are not counted: a full agent_read bucket leaves them answering", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			for i := 0; i < 5; i++ {
				c.Get(ctx, "/health/live").ExpectOK(http.StatusOK)
			}
			fill(ctx, c, readCall, 120)
			expectBucketRefusal(readCall.do(ctx, c))
			c.Get(ctx, "/health/live").ExpectOK(http.StatusOK)
		})

		Describe("the agent_read window", Ordered, func() {
			var c *framework.Client
			var wait int64
			f.BeforeAll([]framework.Need{framework.Control}, func(ctx context.Context, s *framework.Spec) {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			})
			f.Rule(rules("RATE-001", "RATE-013")...).Needs(framework.Control).It("fills after 120 reads and names the wait", func(ctx context.Context, s *framework.Spec) {
				fill(ctx, c, readCall, 120)
				wait = expectBucketRefusal(readCall.do(ctx, c))
			})
			f.Rule("RATE-014").It("slides: after retry_after_seconds of service time the read passes again", func(ctx context.Context, s *framework.Spec) {
				Expect(wait).To(BeNumerically(">", 0), "the previous step named no wait")
				readCall.do(ctx, c).ExpectError(http.StatusTooManyRequests, "rate_limited")
				Expect(s.Control().AdvanceClock(ctx, float64(wait))).To(Succeed())
				readCall.do(ctx, c).ExpectOK(http.StatusOK)
			})
		})

		f.Rule(rules("RATE-011")...).Needs(framework.Control).It("buckets are per key: a second key of the workspace is not limited", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			a, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			b, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			fill(ctx, a, readCall, 120)
			expectBucketRefusal(readCall.do(ctx, a))
			readCall.do(ctx, b).ExpectOK(http.StatusOK)
		})

		f.Rule(rules("RATE-012")...).Needs(framework.Control).It("buckets are independent: a full estimate bucket leaves reads open and the reverse", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			est, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			fill(ctx, est, estimateCall, 60)
			expectBucketRefusal(estimateCall.do(ctx, est))
			readCall.do(ctx, est).ExpectOK(http.StatusOK)

			rd, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			fill(ctx, rd, readCall, 120)
			expectBucketRefusal(readCall.do(ctx, rd))
			r := estimateCall.do(ctx, rd)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "a full agent_read bucket must not limit estimates"+r.Describe())
		})

		f.Rule(rules("AUTH-028")...).Needs(framework.Control).It("the bucket comes before the scope check: a read-only key over its bucket gets 429, not 403", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			for i := 0; i < 20; i++ {
				webhookCall.do(ctx, c).ExpectError(http.StatusForbidden, "insufficient_scope")
			}
			expectBucketRefusal(webhookCall.do(ctx, c))
		})
	})
}
