package specs

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// variantCeiling is the largest variants a capability allows: the smaller of max_variants and 4.
func variantCeiling(d *framework.Response) int64 { return min(d.Int("max_variants"), 4) }

// checkBatch checks a batch answer's fields and its roll-ups against its siblings' reads; it
// returns the siblings' reads.
func checkBatch(ctx context.Context, c *framework.Client, b *framework.Response, siblings []string) []*framework.Response {
	GinkgoHelper()
	Expect(b.String("batch_group_id")).To(MatchRegexp(bgIDPattern), b.Describe())
	Expect(b.Int("variants")).To(Equal(int64(len(siblings))), "variants is the number of siblings"+b.Describe())
	Expect(b.Doc()).NotTo(HaveKey("wallet_balance"), b.Describe())
	Expect(objectAt(b, "credits")).NotTo(HaveKey("wallet_balance"), "batch credits carry no wallet balance"+b.Describe())
	Expect(b.String("charge_summary")).NotTo(BeEmpty(), b.Describe())
	Expect(b.String("next_action")).NotTo(BeEmpty(), b.Describe())
	gens := b.Array("generations")
	Expect(gens).To(HaveLen(len(siblings)), b.Describe())
	byID := map[string]map[string]any{}
	for i, g := range gens {
		m := asObject(b, g, fmt.Sprintf("generations[%d]", i))
		id := stringField(b, m, "generation_id", "batch generation")
		intField(b, m, "batch_index", "batch generation")
		stringField(b, m, "status", "batch generation")
		byID[id] = m
	}
	var reads []*framework.Response
	var held, delivered, charged int64
	finished, completed, failed, allTerminal := 0, 0, 0, true
	linked := false
	for i, id := range siblings {
		Expect(byID).To(HaveKey(id), "the batch lists every sibling"+b.Describe())
		r := readGen(ctx, c, id)
		reads = append(reads, r)
		Expect(r.String("generation.batch_group_id")).To(Equal(b.String("batch_group_id")), r.Describe())
		Expect(r.Int("generation.batch_index")).To(Equal(int64(i)), "batch_index is the sibling's position, from 0"+r.Describe())
		Expect(intField(b, byID[id], "batch_index", "batch generation")).To(Equal(int64(i)), b.Describe())
		held += r.Int("generation.credits.credits_held")
		if n, ok := framework.AsInt(r.Field("generation.outputs_delivered")); ok {
			delivered += n
		}
		switch r.String("generation.status") {
		case "completed":
			finished++
			completed++
		case "failed":
			finished++
			failed++
		}
		if r.Bool("generation.credits.terminal") {
			charged += r.Int("generation.credits.credits_charged")
		} else {
			allTerminal = false
		}
		linked = linked || anyLink(r, "generation")
	}
	Expect(b.Int("variants_finished")).To(Equal(int64(finished)), "variants_finished counts siblings completed or failed"+b.Describe())
	Expect(b.Int("outputs_delivered")).To(Equal(delivered), "outputs_delivered is the siblings' sum"+b.Describe())
	Expect(b.Int("credits.credits_held")).To(Equal(held), "credits_held is the siblings' sum"+b.Describe())
	want := "running"
	switch {
	case finished < len(siblings):
	case completed == len(siblings):
		want = "completed"
	case failed == len(siblings):
		want = "failed"
	default:
		want = "partial"
	}
	Expect(b.String("status")).To(Equal(want), "the batch status is derived from its siblings"+b.Describe())
	if allTerminal && finished == len(siblings) {
		Expect(b.Bool("credits.terminal")).To(BeTrue(), b.Describe())
		Expect(b.Int("credits.credits_charged")).To(Equal(charged), "the batch charge is the siblings' sum"+b.Describe())
	} else {
		Expect(b.Field("credits.credits_charged")).To(BeNil(), "the batch credits_charged stays null until every sibling is done"+b.Describe())
		Expect(b.Bool("credits.terminal")).To(BeFalse(), b.Describe())
	}
	v, has := b.Lookup("output_urls_expire_in_seconds")
	if linked {
		Expect(has).To(BeTrue(), "output_urls_expire_in_seconds is present when a sibling has a link"+b.Describe())
		n, _ := framework.AsInt(v)
		Expect(n).To(Equal(int64(600)), b.Describe())
	} else {
		Expect(has).To(BeFalse(), "no sibling has a link yet"+b.Describe())
	}
	return reads
}

// videoBatch submits the cheapest config of a video model with variants 2 and returns the job.
func videoBatch(ctx context.Context, s *framework.Spec, c *framework.Client) job {
	GinkgoHelper()
	d := videoModel(ctx, c)
	j := submit(ctx, s, c, d.String("capability_id"), cheapConfig(d), map[string]any{"variants": 2})
	Expect(j.ids).To(HaveLen(2), "variants 2 on a video model answers two generation_ids"+j.r.Describe())
	return j
}

// finishAll drives every sibling to its end.
func finishAll(ctx context.Context, s *framework.Spec, c *framework.Client, ids []string) {
	GinkgoHelper()
	for _, id := range ids {
		s.Finish(ctx, c, id)
	}
}

func batchSpecs(f *framework.Framework) {
	Describe("variants", func() {
		f.Rule(rules("VAR-002", "VAR-003", "ERR-020", "ERR-024")...).It("variants above the ceiling, zero, negative or not whole answer 400 invalid_config naming variants, never clamped", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			c := s.Client()
			d := imageModel(ctx, c)
			id := d.String("capability_id")
			ceiling := variantCeiling(d)
			_, need := estimateOf(ctx, c, id, cheapConfig(d), map[string]any{"variants": ceiling})
			over := submitBody(id, cheapConfig(d), need*4, map[string]any{"variants": ceiling + 1})
			expectField(refuse(ctx, rc.client(), over, http.StatusBadRequest, "invalid_config", framework.Invalid()), "variants")
			for _, bad := range []any{0, -1, 1.5, "2"} {
				body := submitBody(id, cheapConfig(d), need, map[string]any{"variants": bad})
				expectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), "variants")
			}
		})

		f.Rule(rules("VAR-004", "ERR-020")...).It("any variants on a capability that makes one result (tts) answers 400 invalid_config, even variants 1", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := ttsConfig()
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			for _, n := range []int{1, 2} {
				expectField(refuse(ctx, c, submitBody("tts", cfg, need*2, map[string]any{"variants": n}), http.StatusBadRequest, "invalid_config"), "variants")
			}
		})

		f.Rule(rules("VAR-009", "ERR-025")...).It("every take is charged: variants N needs max_credits_needed estimated with count N; one less answers 402", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, d := range []*framework.Response{imageModel(ctx, c), videoModel(ctx, c)} {
				id := d.String("capability_id")
				_, one := estimateOf(ctx, c, id, cheapConfig(d), nil)
				_, two := estimateOf(ctx, c, id, cheapConfig(d), map[string]any{"variants": 2})
				Expect(two).To(Equal(2*one), "every take is padded on its own: two takes hold twice one padded take")
				r := refuse(ctx, c, submitBody(id, cheapConfig(d), two-1, map[string]any{"variants": 2}), http.StatusPaymentRequired, "max_credits_exceeded")
				Expect(r.Int("error.limit.required_credits")).To(Equal(two), r.Describe())
			}
		})

		f.Rule("VAR-008", "VAR-005", "VAR-007", "SUBMIT-004", "GEN-007").Needs(framework.Spends).It("an image model with variants 2 (over config.count 3) makes one generation with two outputs and no batch", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			cfg := cheapConfig(d)
			if variantCeiling(d) >= 3 {
				cfg["count"] = 3
			}
			j := submit(ctx, s, sp.c, d.String("capability_id"), cfg, map[string]any{"variants": 2})
			Expect(j.ids).To(Equal([]string{j.id}), "image-model variants make one generation"+j.r.Describe())
			Expect(j.r.Doc()).NotTo(HaveKey("batch_group_id"), j.r.Describe())
			Expect(j.r.Int("outputs_expected")).To(Equal(int64(2)), "variants wins over config.count"+j.r.Describe())
			s.Finish(ctx, sp.c, j.id)
			r := readGen(ctx, sp.c, j.id)
			checkCompleted(r, "generation")
			Expect(r.Field("generation.batch_group_id")).To(BeNil(), r.Describe())
			Expect(r.Array("generation.outputs")).To(HaveLen(2), r.Describe())
			for _, link := range outputLinks(r, "generation") {
				expectPNG(s.FetchLink(ctx, link), 0, 0)
			}
		})
	})

	Describe("batches", func() {
		f.Rule("VAR-006", "VAR-007", "VAR-010", "ID-003", "BATCH-001", "BATCH-002", "BATCH-003", "BATCH-006", "BATCH-007", "BATCH-008", "BATCH-009", "BATCH-010", "BATCH-011", "BATCH-012", "LINK-001").Needs(framework.Spends).It("a video model with variants 2 fans out under one bg_ id; the batch rolls its siblings up and completes", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			j := videoBatch(ctx, s, sp.c)
			bg := j.r.String("batch_group_id")
			Expect(bg).To(MatchRegexp(bgIDPattern), j.r.Describe())
			Expect(j.id).To(Equal(j.ids[0]), "generation_id is the first sibling"+j.r.Describe())
			Expect(j.r.Int("credits.credits_held")).To(Equal(j.need), j.r.Describe())
			b := sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
			checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("running"), b.Describe())
			finishAll(ctx, s, sp.c, j.ids)
			b = sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
			checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("completed"), b.Describe())
			Expect(b.Int("credits.credits_charged")).To(BeNumerically("<=", j.need), b.Describe())
		})

		f.Rule(rules("SUBMIT-019", "ERR-031")...).Needs(framework.Spends).It("a variants submit is one job holding one slot: a second submit while the batch runs gets 409", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			j := videoBatch(ctx, s, sp.c)
			cfg := ttsConfig()
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusConflict, "submission_in_flight")
			Expect(j.ids).To(ContainElement(r.String("error.in_flight.generation_id")), r.Describe())
		})

		f.Rule("BATCH-005", "BATCH-013", "BATCH-007").Needs(framework.Spends, framework.Control).It("one sibling failing (control fault) makes the batch partial, charged only for the delivered sibling", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			s.QueueFault(ctx, "render_fail", d.String("capability_id"), 1, "")
			j := videoBatch(ctx, s, sp.c)
			finishAll(ctx, s, sp.c, j.ids)
			b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
			reads := checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("partial"), b.Describe())
			var charged int64
			for _, r := range reads {
				if r.String("generation.status") == "completed" {
					charged += r.Int("generation.credits.credits_charged")
				} else {
					Expect(r.Int("generation.credits.credits_charged")).To(BeZero(), "a failed sibling costs nothing"+r.Describe())
				}
			}
			Expect(b.Int("credits.credits_charged")).To(Equal(charged), b.Describe())
		})

		f.Rule("BATCH-004").Needs(framework.Spends, framework.Control).It("every sibling failing makes the batch failed, charged nothing", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			s.QueueFault(ctx, "render_fail", d.String("capability_id"), 2, "")
			j := videoBatch(ctx, s, sp.c)
			finishAll(ctx, s, sp.c, j.ids)
			b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
			checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("failed"), b.Describe())
			Expect(b.Int("credits.credits_charged")).To(BeZero(), b.Describe())
		})

		f.Rule("BATCH-009", "BATCH-002").Needs(framework.Spends, framework.Control).It("the batch charge stays null while one sibling is done and another runs", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			j := videoBatch(ctx, s, sp.c)
			s.JobHook(ctx, j.ids[0], "fail", map[string]any{"code": "provider_error"})
			b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
			checkBatch(ctx, sp.c, b, j.ids)
			Expect(b.String("status")).To(Equal("running"), b.Describe())
			Expect(b.Int("variants_finished")).To(Equal(int64(1)), b.Describe())
			Expect(b.Field("credits.credits_charged")).To(BeNil(), "null until every sibling is done, not the finished sibling's 0"+b.Describe())
		})

		f.Rule(rules("BATCH-014", "ERR-029")...).It("an unknown bg_ id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			s.Client().Get(ctx, "/batches/bg_"+randomHex(32)).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("BATCH-015", "ID-016", "ERR-029")...).Needs(framework.Spends, framework.SecondWorkspace).It("another workspace's bg_ id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			j := videoBatch(ctx, s, c)
			s.OtherClient().Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("VAR-014", "ERR-024")...).It("more than 4 values in a fan-out list setting answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			var target *framework.Response
			for _, row := range catalogue(ctx, c) {
				if row["status"] != "available" {
					continue
				}
				det := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
				props, _ := objectAt(det, "config_schema")["properties"].(map[string]any)
				if p, ok := props["languages"].(map[string]any); ok && p["type"] == "array" {
					target = det
					break
				}
			}
			if target == nil {
				Skip("unsupported: no available capability has a languages list setting")
			}
			props := objectAt(target, "config_schema")["properties"].(map[string]any)
			items, _ := props["languages"].(map[string]any)["items"].(map[string]any)
			values := []any{"de", "es", "fr", "it", "ja"}
			if enum, ok := items["enum"].([]any); ok && len(enum) >= 5 {
				values = enum[:5]
			}
			cfg := clone(objectAt(target, "example_config"))
			cfg["languages"] = values
			refuse(ctx, c, submitBody(target.String("capability_id"), cfg, 600, nil), http.StatusBadRequest, "invalid_config")
		})
	})
}
