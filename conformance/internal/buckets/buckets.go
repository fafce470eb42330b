// Package buckets drives the API's rate-limit buckets for the suite's specs: calls that count
// against one bucket and are answered for their body without spending anything, filling a bucket
// with them, and the refusal a full bucket answers (429 rate_limited with retry_after_seconds and
// an equal Retry-After header).
//
// Its functions fail the running spec (Gomega's Expect) when an answer breaks the text; they are
// called from inside a spec.
package buckets

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// Call is one call that counts against a bucket; Want is the status it answers while the bucket
// has room.
type Call struct {
	Name string
	Do   func(ctx context.Context, c *framework.Client) *framework.Response
	Want int
}

var (
	// Read is a read of the reads bucket, answering 200.
	Read = Call{"GET /credits/balance", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, "/credits/balance")
	}, http.StatusOK}
	// Estimate is an estimate without config, refused with 400 after the bucket check, so it counts
	// and needs no catalogue knowledge.
	Estimate = Call{"POST /estimates", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts"}, framework.Invalid())
	}, http.StatusBadRequest}
	// Webhook is a registration without a URL, refused with 400 inside the webhook bucket.
	Webhook = Call{"POST /webhooks", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/webhooks", map[string]any{"events": []string{"generation.completed"}}, framework.Invalid())
	}, http.StatusBadRequest}
	// Upload is a reservation without its size and type, refused with 400 inside the upload bucket.
	Upload = Call{"POST /uploads", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/uploads", map[string]any{"filename": "a.png"}, framework.Invalid())
	}, http.StatusBadRequest}
)

// Submits are calls that count against agent_submit and are refused for their body inside the
// bucket (so nothing is spent).
var Submits = []Call{
	{"POST /generations", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/generations", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
	{"POST /workflows/{id}/invoke", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/workflows/wf_"+framework.RandomHex(32)+"/invoke", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
	{"POST /workflows/templates/{key}/invoke", func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Post(ctx, "/workflows/templates/conformance_"+framework.RandomHex(6)+"/invoke", map[string]any{}, framework.Invalid())
	}, http.StatusBadRequest},
}

// ReadKinds are reads of different kinds, each answering 200: the first row of a list.
var ReadKinds = []Call{
	firstRow("/capabilities"), firstRow("/presets"), firstRow("/actors"), firstRow("/voices"), firstRow("/generations"),
}

// firstRow is the read of the first row of the list at path.
func firstRow(path string) Call {
	return Call{"GET " + path, func(ctx context.Context, c *framework.Client) *framework.Response {
		return c.Get(ctx, path, framework.Query("limit", "1"))
	}, http.StatusOK}
}

// Fill makes n calls that must all answer call.Want.
func Fill(ctx context.Context, c *framework.Client, call Call, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		r := call.Do(ctx, c)
		Expect(r.Status).To(Equal(call.Want), fmt.Sprintf("%s call %d of %d, inside the bucket", call.Name, i+1, n)+r.Describe())
	}
}

// ExpectRefusal checks a 429 rate_limited with retry_after_seconds in 1..60 and an equal
// Retry-After header, and returns the wait.
func ExpectRefusal(r *framework.Response) int64 {
	GinkgoHelper()
	r.ExpectError(http.StatusTooManyRequests, "rate_limited")
	Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
	wait := r.Int("error.retry_after_seconds")
	window := int64(contract.BucketWindow.Seconds())
	Expect(wait).To(And(BeNumerically(">=", 1), BeNumerically("<=", window)),
		fmt.Sprintf("retry_after_seconds is 1..%d on a %d s window", window, window)+r.Describe())
	Expect(r.Header.Get("Retry-After")).To(Equal(strconv.FormatInt(wait, 10)), "Retry-After equals retry_after_seconds"+r.Describe())
	return wait
}

// ExpectWaitBetween checks a bucket refusal whose retry_after_seconds must lie between the
// shortest and the longest time the oldest call in the window can have left to go, as placed on
// the target's clock (whole seconds, so one second less than the shortest also passes). The text
// gives a per-minute bucket and a known wait; that the wait runs to the oldest call leaving a
// sliding window is the reference's (RATE-013), judged under --strict only.
func ExpectWaitBetween(s *framework.Spec, r *framework.Response, shortest, longest time.Duration) {
	GinkgoHelper()
	wait := ExpectRefusal(r)
	lo, hi := int64(shortest/time.Second)-1, int64((longest+time.Second-1)/time.Second)
	s.ReferenceOnly("RATE-013", "the wait runs until the oldest call leaves a sliding 60 s window", func() {
		Expect(wait).To(And(BeNumerically(">=", lo), BeNumerically("<=", hi)),
			fmt.Sprintf("retry_after_seconds is the seconds until the oldest call leaves the window: "+
				"%d to %d on the target's clock", lo, hi)+r.Describe())
	})
}

// InWindow runs do, whose calls must fall inside one bucket window; on a running clock that ran a
// whole window meanwhile, a failure is undecidable and skips the spec (Spec.InWindow).
func InWindow(ctx context.Context, s *framework.Spec, do func()) {
	GinkgoHelper()
	s.InWindow(ctx, contract.BucketWindow, "the spec made calls that must fall inside one 60 s bucket window", do)
}
