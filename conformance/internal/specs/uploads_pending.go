package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// uploadPendingSpecs registers the specs of the pending uploads' cap per workspace and the upload
// buckets per key.
func uploadPendingSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
		// Without control the 50 are the run's own workspace's, once the reservations earlier specs
		// abandoned there stopped counting (15 minutes of the target's clock), reserved over two
		// minutes of the reservation brake, and the spec finishes them all at its end.
		f.Rule(rules("UPLOAD-045", "FROMURL-013", "ERR-037")...).Needs(framework.Slow, framework.RealTime).WaitsOut(contract.PendingWindow+3*time.Minute).It(
			"the 51st pending upload of a workspace answers 429 quota_exceeded; a finalized one frees a place", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 200)
				if !s.HasControl() {
					s.WaitOut(ctx, contract.PendingWindow+time.Second)
				}
				_, png := fixtures.Get("image.png")
				var last *framework.Response
				var pending []*framework.Response
				DeferCleanup(func(ctx SpecContext) { finishPending(ctx, s, c, pending) })
				for i := 0; i < 50; i++ {
					last = uploads.Reserve(ctx, c, "a.png", "image/png", len(png))
					pending = append(pending, last)
				}
				s.Step("UPLOAD-045", "ERR-037")
				c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": len(png)}).
					ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				if s.Strict() { // whether an import counts as a pending upload is the reference's (FROMURL-013)
					s.Step("FROMURL-013", "ERR-037")
					c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): "https://example.com/image.png"}).
						ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				}
				s.Step("UPLOAD-045")
				uploads.Put(ctx, s, last.String("upload_url"), png, "image/png")
				uploads.Finalize(ctx, c, last.String("asset_id")).ExpectOK(http.StatusOK)
				pending = append(pending[:49], uploads.Reserve(ctx, c, "a.png", "image/png", len(png)))
			})

		// Without control the two keys are the run's main key, once 15 minutes of the target's clock
		// have emptied its buckets and let the reservations earlier specs abandoned stop counting,
		// and the profile's sibling key (neither waits out a refusal); the spec finishes the 50
		// pending uploads of the run's workspace at its end.
		f.Rule(rules("UPLOAD-045", "RATE-008", "RATE-011", "ERR-037")...).Needs(framework.Slow, framework.RealTime, framework.Uploads, framework.SiblingKey).WaitsOut(contract.PendingWindow+time.Minute).It(
			"the upload bucket is per key and the pending cap per workspace: a second key reserves while the first is braked, until the workspace holds 50", func(ctx context.Context, s *framework.Spec) {
				a, b := pendingKeys(ctx, s)
				_, png := fixtures.Get("image.png")
				body := map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": len(png)}
				var pending []*framework.Response
				if !s.HasControl() {
					DeferCleanup(func(ctx SpecContext) { finishPending(ctx, s, s.Client(), pending) })
				}
				buckets.InWindow(ctx, s, func() {
					for i := 0; i < 30; i++ {
						pending = append(pending, uploads.Reserve(ctx, a, "a.png", "image/png", len(png)))
					}
					s.Step("RATE-008")
					buckets.ExpectRefusal(a.Post(ctx, "/uploads", body))
					// The other key of the workspace has its own bucket...
					s.Step("RATE-011")
					for i := 0; i < 20; i++ {
						r := b.Post(ctx, "/uploads", body)
						Expect(r.Status).To(Equal(http.StatusCreated), fmt.Sprintf("reservation %d of the second key while the first key's bucket is full", i+1)+r.Describe())
						pending = append(pending, r)
					}
					// ...but the 50 pending uploads are the workspace's, whichever key made them.
					s.Step("UPLOAD-045", "ERR-037")
					b.Post(ctx, "/uploads", body).ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				})
			})

		// Without control the 15 minutes pass on the target's own clock (--real-time), in the run's own
		// workspace once the reservations earlier specs abandoned there stopped counting; the 50 are
		// reserved over the reservation brake's minute, so the still-counting check is 14 minutes
		// after the first and the freed one 15 minutes after the last (target time: wall time times
		// the time scale).
		f.Rule(rules("UPLOAD-046")...).Needs(framework.Slow, framework.RealTime).WaitsOut(2*contract.PendingWindow+2*time.Minute).It(
			"an abandoned reservation stops counting toward the cap after 15 minutes", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 200)
				if !s.HasControl() {
					s.WaitOut(ctx, contract.PendingWindow+time.Second)
				}
				targetSince := func(t time.Time) time.Duration { return time.Duration(float64(time.Since(t)) * s.TimeScale()) }
				first := time.Now()
				for i := 0; i < contract.PendingUploads; i++ {
					uploads.Reserve(ctx, c, "a.png", "image/png", 10)
				}
				last := time.Now()
				c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10}).
					ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				// 14 minutes on, the abandoned reservations still count.
				if d := contract.PendingWindow - time.Minute - targetSince(first); d > 0 {
					s.WaitOut(ctx, d)
				}
				r := c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10})
				Expect(r.Status).To(Equal(http.StatusTooManyRequests), "reservations 14 minutes old still count toward the cap"+r.Describe())
				r.ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				s.WaitOut(ctx, max(contract.PendingWindow+time.Second-targetSince(last), time.Second))
				uploads.Reserve(ctx, c, "a.png", "image/png", 10)
			})

		f.Rule(rules("RATE-009", "RATE-013")...).Needs(framework.RealTime).It("from-url counts against the 30 upload calls a minute", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("RATE-009", "the bucket of POST /uploads/from-url (\"see below\")")
			c := bucketKey(ctx, s, "read", "generate")
			buckets.InWindow(ctx, s, func() {
				s.Step("RATE-009")
				for i := 0; i < 30; i++ {
					r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): "ftp://example.com/a.png"})
					Expect(r.Status).To(Equal(http.StatusBadRequest), fmt.Sprintf("call %d inside the bucket", i+1)+r.Describe())
				}
				s.Step("RATE-009", "RATE-013")
				buckets.ExpectRefusal(buckets.Upload.Do(ctx, c))
				// A finalize counts in the upload calls only (not in the reservation brake): the
				// imports filled that bucket, not the brake.
				buckets.ExpectRefusal(uploads.Finalize(ctx, c, "ast_"+framework.RandomHex(32)))
			})
		})

		f.Rule(rules("RATE-010", "RATE-013")...).ControlBecause("telling the reservation brake from the upload-calls bucket needs a key whose upload calls allow more than 30 a minute, a limit only the app sets: at the text's values both are 30, and the 31st reservation fills both").It("reservations are braked at 30 a minute even when the upload-calls bucket has room", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}, Buckets: map[string]int{"uploads": 100}})
			buckets.InWindow(ctx, s, func() {
				s.Step("RATE-010")
				id := uploads.PutForFinalize(ctx, s, c)
				buckets.Fill(ctx, c, buckets.Upload, 29)
				s.Step("RATE-010", "RATE-013")
				buckets.ExpectRefusal(buckets.Upload.Do(ctx, c))
				// The caller's own upload finalizes: the brake is on reservations only.
				s.Step("RATE-010")
				fin := uploads.Finalize(ctx, c, id)
				Expect(fin.Status).To(Equal(http.StatusOK), "a finalize passes while reservations are braked"+fin.Describe())
			})
		})
	})
}

// pendingKeys are two read+generate keys of one workspace with empty buckets and no pending
// upload, which answer a bucket refusal as it came: with control new keys of a workspace of the
// spec's own; without, the run's main key once 15 minutes of the target's clock have passed (the
// abandoned reservations stop counting) and the profile's sibling key (the spec needs RealTime and
// SiblingKey).
func pendingKeys(ctx context.Context, s *framework.Spec) (a, b *framework.Client) {
	GinkgoHelper()
	if s.HasControl() {
		ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
		a, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
		b, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
		return a, b
	}
	a = s.BucketClient(ctx, contract.PendingWindow)
	return a, s.WithKey(s.RoleKey(framework.SiblingKey).Key())
}

// finishPending PUTs the sample PNG to each reservation (made with its size) and finalizes it, so
// a spec that filled a workspace the run keeps (no control: its own) with pending uploads leaves
// none behind; c, a shared client of that workspace, waits out the upload-calls bucket. With
// control it does nothing: the spec's workspace goes with it.
func finishPending(ctx context.Context, s *framework.Spec, c *framework.Client, reserved []*framework.Response) {
	GinkgoHelper()
	if s.HasControl() {
		return
	}
	_, png := fixtures.Get("image.png")
	for _, r := range reserved {
		uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
		uploads.Finalize(ctx, c, r.String("asset_id")).ExpectOK(http.StatusOK)
	}
}
