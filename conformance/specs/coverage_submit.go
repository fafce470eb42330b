package specs

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Specs of submits naming uploads that are not usable, the 10-minute key slot and the
// render-concurrency refusal.

// referenceModel is an image model whose config takes reference_images ({assetId, alias}
// objects), with its cheapest config and hold. It skips the spec when the image model has no such
// field.
func referenceModel(ctx context.Context, c *framework.Client) (string, map[string]any, int64) {
	GinkgoHelper()
	d := imageModel(ctx, c)
	if _, ok := schemaProps(d)["reference_images"]; !ok {
		Skip("unsupported: the image model has no reference_images field")
	}
	cfg := cheapConfig(d)
	_, need := estimateOf(ctx, c, d.String("capability_id"), cfg, nil)
	return d.String("capability_id"), cfg, need
}

// naming is cfg with reference_images naming the upload id.
func naming(cfg map[string]any, id string) map[string]any {
	out := clone(cfg)
	out["reference_images"] = []any{map[string]any{"assetId": id, "alias": "image1"}}
	return out
}

// expectAssetIDs checks the refusal names id in error.asset_ids.
func expectAssetIDs(r *framework.Response, id string) {
	GinkgoHelper()
	Expect(stringList(r, objectAt(r, "error"), "asset_ids", "error")).To(ContainElement(id), "the refusal names the upload in error.asset_ids"+r.Describe())
}

// setRenderLimit sets a workspace's render-concurrency threshold through control, skipping the
// spec when the control API does not offer it.
func setRenderLimit(ctx context.Context, s *framework.Spec, workspaceID string, n int) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPut, "/workspaces/"+workspaceID+"/render-limit", map[string]any{"max_concurrent_renders": n})
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		Skip("unsupported: the control API does not offer PUT /workspaces/{id}/render-limit")
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control PUT /workspaces/{id}/render-limit"+r.Describe())
}

func coverageSubmitSpecs(f *framework.Framework) {
	Describe("submits naming uploads", func() {
		f.Rule(rules("UPLOAD-041", "ERR-030")...).Needs(framework.Uploads).It("an upload reserved but not finalized answers 409 input_not_ready naming it, with or without its bytes", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			capID, cfg, need := referenceModel(ctx, c)
			bare := reserve(ctx, c, "a.png", "image/png", 217).String("asset_id")
			r := refuse(ctx, c, submitBody(capID, naming(cfg, bare), need*2, nil), http.StatusConflict, "input_not_ready")
			expectAssetIDs(r, bare)
			fx, data := fixtures.Get("image.png")
			put := reserve(ctx, c, fx.Name, fx.ContentType, len(data))
			sent := putFile(ctx, s, put.String("upload_url"), data, fx.ContentType)
			Expect(sent.Status).To(BeNumerically("<", 300), sent.Describe())
			r = refuse(ctx, c, submitBody(capID, naming(cfg, put.String("asset_id")), need*2, nil), http.StatusConflict, "input_not_ready")
			expectAssetIDs(r, put.String("asset_id"))
		})

		f.Rule(rules("UPLOAD-042", "ERR-035")...).Needs(framework.Uploads).It("an upload the content check refused answers 422 moderation_blocked naming it", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			capID, cfg, need := referenceModel(ctx, c)
			var flagged string
			for _, fx := range fixtures.Files() {
				if fx.Outcome == fixtures.OutcomeFlagged && fx.Kind == "image" {
					id, fin := uploadFixture(ctx, s, c, fx.Name)
					fin.ExpectOK(http.StatusOK)
					Expect(fin.String("scan_status")).To(Equal("flagged"), fin.Describe())
					flagged = id
					break
				}
			}
			Expect(flagged).NotTo(BeEmpty(), "the sample media have a flagged image")
			r := refuse(ctx, c, submitBody(capID, naming(cfg, flagged), need*2, nil), http.StatusUnprocessableEntity, "moderation_blocked")
			expectAssetIDs(r, flagged)
		})

		f.Rule(rules("UPLOAD-043", "ERR-029")...).Needs(framework.Uploads).It("another workspace's upload answers 404 not_found naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			capID, cfg, need := referenceModel(ctx, c)
			theirs, fin := uploadFixture(ctx, s, s.OtherClient(), "image.png")
			fin.ExpectOK(http.StatusOK)
			r := refuse(ctx, c, submitBody(capID, naming(cfg, theirs), need*2, nil), http.StatusNotFound, "not_found")
			expectAssetIDs(r, theirs)
		})
	})

	Describe("the key slot and the render brake", func() {
		f.Rule(rules("SUBMIT-020", "ERR-031")...).Needs(framework.Control, framework.Spends, framework.Slow).It("a job stops holding its key's slot 10 minutes after submit, though it still runs", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			capID := d.String("capability_id")
			s.QueueFaultIn(ctx, sp.ws.ID, map[string]any{"kind": "slow_render", "seconds": 1800}, capID, 1, "")
			first := submit(ctx, s, sp.c, capID, cheapConfig(d), nil)
			next := cheapConfig(d)
			_, need := estimateOf(ctx, sp.c, capID, next, nil)
			r := refuse(ctx, sp.c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
			Expect(r.String("error.in_flight.generation_id")).To(Equal(first.id), r.Describe())
			s.Advance(ctx, 590)
			refuse(ctx, sp.c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
			s.Advance(ctx, 15)
			g := readGen(ctx, sp.c, first.id)
			Expect(g.String("generation.status")).To(oneOf(runningStatuses...), "the slow_render fault keeps the first job running past 10 minutes"+g.Describe())
			s.Spend(int(need))
			again := sp.c.Post(ctx, "/generations", submitBody(capID, next, need, nil)).ExpectOK(http.StatusCreated)
			Expect(again.Bool("replay")).To(BeFalse(), again.Describe())
			Expect(again.String("generation_id")).NotTo(Equal(first.id), again.Describe())
			DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, sp.c, again.String("generation_id")) })
			Expect(readGen(ctx, sp.c, first.id).String("generation.status")).To(oneOf(runningStatuses...), "the first job still runs")
		})

		f.Rule(rules("ERR-043", "ERR-036")...).Needs(framework.Control, framework.Spends).It("too many renders at once answers 429 rate_limited without retry_after_seconds; a bucket refusal carries it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			setRenderLimit(ctx, s, sp.ws.ID, 1)
			v := videoModel(ctx, sp.c)
			running := submit(ctx, s, sp.c, v.String("capability_id"), cheapConfig(v), nil)
			Expect(readGen(ctx, sp.c, running.id).String("generation.status")).To(oneOf(runningStatuses...))
			other, _ := sp.newKey(ctx, framework.KeyOptions{})
			cfg := ttsConfig()
			_, need := estimateOf(ctx, other, "tts", cfg, nil)
			r := refuse(ctx, other, submitBody("tts", cfg, need, nil), http.StatusTooManyRequests, "rate_limited")
			Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
			Expect(objectAt(r, "error")).NotTo(HaveKey("retry_after_seconds"), "the render brake carries no retry_after_seconds"+r.Describe())
			Expect(r.Header.Get("Retry-After")).To(BeEmpty(), "the render brake sends no Retry-After"+r.Describe())
			// The other flavour: a key over its agent_submit bucket is told how long to wait.
			small, _ := sp.newKey(ctx, framework.KeyOptions{Buckets: map[string]int{"agent_submit": 1}})
			small.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)).ExpectError(http.StatusTooManyRequests, "rate_limited")
			expectBucketRefusal(small.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)))
			// Once the running job ends, the brake lets the same request through.
			s.Finish(ctx, sp.c, running.id)
			s.Spend(int(need))
			ok := other.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)).ExpectOK(http.StatusCreated)
			DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, other, ok.String("generation_id")) })
		})
	})
}
