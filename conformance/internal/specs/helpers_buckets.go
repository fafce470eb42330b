package specs

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Rate-limit bucket helpers: calls that count against a bucket, and the refusal when one is full.

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

// submitBucketCalls are calls that count against agent_submit and are refused for their body
// inside the bucket (so nothing is spent).
var submitBucketCalls = []bucketCall{
	{"POST /generations", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/generations", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
	{"POST /workflows/{id}/invoke", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/workflows/wf_"+randomHex(32)+"/invoke", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
	{"POST /workflows/templates/{key}/invoke", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/workflows/templates/conformance_"+randomHex(6)+"/invoke", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
}

// readKinds are reads of different kinds, each answering 200.
var readKinds = []bucketCall{
	{"GET /capabilities", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/capabilities", framework.Query("limit", "1"))
	}, http.StatusOK},
	{"GET /presets", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/presets", framework.Query("limit", "1"))
	}, http.StatusOK},
	{"GET /actors", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/actors", framework.Query("limit", "1"))
	}, http.StatusOK},
	{"GET /voices", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/voices", framework.Query("limit", "1"))
	}, http.StatusOK},
	{"GET /generations", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/generations", framework.Query("limit", "1"))
	}, http.StatusOK},
}

// fill makes n calls that must all answer call.want.
func fill(ctx context.Context, c *framework.Client, call bucketCall, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		r := call.do(ctx, c)
		Expect(r.Status).To(Equal(call.want), fmt.Sprintf("%s call %d of %d, inside the bucket", call.name, i+1, n)+r.Describe())
	}
}

// fillFinalizes finalizes upload id (its bytes in place) n times, each answering 200 (a repeat
// answers the stored result): n upload calls that change nothing after the first.
func fillFinalizes(ctx context.Context, c *framework.Client, id string, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		r := finalizeUpload(ctx, c, id)
		Expect(r.Status).To(Equal(http.StatusOK), fmt.Sprintf("finalize %d of %d, inside the bucket", i+1, n)+r.Describe())
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

// inWindow runs do, whose calls must fall inside one 60 s bucket window; on a running clock that ran
// a whole window meanwhile, a failure is undecidable and skips the spec (Spec.InWindow).
func inWindow(ctx context.Context, s *framework.Spec, do func()) {
	GinkgoHelper()
	s.InWindow(ctx, time.Minute, "the spec made calls that must fall inside one 60 s bucket window", do)
}
