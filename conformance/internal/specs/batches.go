package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/receiver"
)

// batchSpecs registers the specs of variants, batches and fan-out list settings.
func batchSpecs(f *framework.Framework) {
	variantSpecs(f)
	batchGroupSpecs(f)
	fanOutSpecs(f)
}

// variantSpecs registers the specs of variants.
func variantSpecs(f *framework.Framework) {
	Describe("variants: takes, ceilings and charges", func() {
		variantRefusalSpecs(f)
		variantChargeSpecs(f)
	})
}

// variantRefusalSpecs registers the specs of variants refused or priced before a submit (in the container that calls it).
func variantRefusalSpecs(f *framework.Framework) {
	f.Rule(rules("VAR-002", "VAR-003", "ERR-020", "ERR-024")...).It("variants above the ceiling, zero, negative or not whole answer 400 invalid_config naming variants, never clamped", func(ctx context.Context, s *framework.Spec) {
		rc := &rotating{s: s}
		c := s.Client()
		d := catalogue.ImageModel(ctx, c)
		id := d.String("capability_id")
		ceiling := catalogue.VariantCeiling(d)
		_, need := estimateOf(ctx, c, id, catalogue.CheapConfig(d), map[string]any{"variants": ceiling})
		over := submitBody(id, catalogue.CheapConfig(d), need*4, map[string]any{"variants": ceiling + 1})
		s.Step("VAR-002", "ERR-020", "ERR-024")
		refusal.ExpectField(refuse(ctx, rc.client(), over, http.StatusBadRequest, "invalid_config", framework.Invalid()), "variants")
		s.Step("VAR-003", "ERR-020", "ERR-024")
		for _, bad := range []any{0, -1, 1.5, "2"} {
			body := submitBody(id, catalogue.CheapConfig(d), need, map[string]any{"variants": bad})
			refusal.ExpectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), "variants")
		}
	})

	f.Rule(rules("VAR-002", "ERR-020", "ERR-024")...).It("variants above a capability's own max_variants (below 4) answer 400 invalid_config naming variants, never clamped", func(ctx context.Context, s *framework.Spec) {
		rc := &rotating{s: s}
		c := s.Client()
		checked := 0
		for _, row := range catalogue.Rows(ctx, c) {
			if row["status"] != "available" {
				continue
			}
			d := catalogue.Detail(ctx, c, row["capability_id"].(string))
			mv := catalogue.Ceiling(d)
			if mv <= 1 || mv >= 4 {
				continue
			}
			cfg := catalogue.CheapConfig(d)
			if catalogue.NamesUpload(cfg) {
				continue
			}
			id := d.String("capability_id")
			est := catalogue.Clone(cfg)
			est["count"] = mv
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": est})
			if r.Status != http.StatusOK {
				continue
			}
			over := submitBody(id, cfg, r.Int("max_credits_needed")*4, map[string]any{"variants": mv + 1})
			refusal.ExpectField(refuse(ctx, rc.client(), over, http.StatusBadRequest, "invalid_config"), "variants")
			checked++
		}
		if checked == 0 {
			s.Lacks("no available capability with max_variants 2 or 3 can be priced without an upload (VAR-002 below 4 unverified)")
		}
	})

	f.Rule(rules("VAR-004", "ERR-020")...).It("any variants on a capability that makes one result (tts) answers 400 invalid_config, even variants 1", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		cfg := catalogue.TTSConfig(ctx, c)
		_, need := estimateOf(ctx, c, "tts", cfg, nil)
		for _, n := range []int{1, 2} {
			refusal.ExpectField(refuse(ctx, c, submitBody("tts", cfg, need*2, map[string]any{"variants": n}), http.StatusBadRequest, "invalid_config"), "variants")
		}
	})

	f.Rule(rules("VAR-009", "ERR-025")...).It("every take is charged and padded: variants N needs max_credits_needed estimated with count N; one less answers 402", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		for _, d := range []*framework.Response{catalogue.ImageModel(ctx, c), catalogue.VideoModel(ctx, c)} {
			id := d.String("capability_id")
			_, one := estimateOf(ctx, c, id, catalogue.CheapConfig(d), nil)
			twoEst, two := estimateOf(ctx, c, id, catalogue.CheapConfig(d), map[string]any{"variants": 2})
			s.Step("VAR-009")
			Expect(two).To(BeElementOf(padsOf(s, 2*one, priceOf(twoEst))), "every take is padded: twice one padded take, or the padded total rounded once"+twoEst.Describe())
			s.Step("VAR-009", "ERR-025")
			r := refuse(ctx, c, submitBody(id, catalogue.CheapConfig(d), two-1, map[string]any{"variants": 2}), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.Int("error.limit.required_credits")).To(Equal(two), r.Describe())
		}
	})
}

// variantChargeSpecs registers the specs of what the takes of an accepted variants submit are held and
// charged (in the container that calls it).
func variantChargeSpecs(f *framework.Framework) {
	f.Rule("VAR-008", "VAR-005", "VAR-007", "SUBMIT-004", "GEN-007", "GEN-013", "VAR-009").Needs(framework.Spends).It("an image model with variants 2 (over config.count 3) makes one generation with two outputs and no batch, charged for both takes", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		cfg := catalogue.CheapConfig(d)
		if catalogue.VariantCeiling(d) >= 3 {
			cfg["count"] = 3
		}
		oneEst, _ := estimateOf(ctx, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), map[string]any{"variants": 1})
		one := priceOf(oneEst)
		before := availableOf(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), cfg, map[string]any{"variants": 2})
		s.Step("VAR-008", "VAR-005")
		Expect(j.ids).To(Equal([]string{j.id}), "image-model variants make one generation"+j.r.Describe())
		Expect(j.r.Doc()).NotTo(HaveKey("batch_group_id"), j.r.Describe())
		// The takes are the one generation's outputs: the submit answer expects both (N outputs,
		// variants winning over config.count), as the read then does.
		s.Step("VAR-008", "VAR-005")
		Expect(j.r.Int("outputs_expected")).To(Equal(int64(2)), "image-model variants 2 make one generation with 2 outputs: variants wins over config.count"+j.r.Describe())
		s.Finish(ctx, sp.c, j.id)
		r := readGen(ctx, sp.c, j.id)
		s.Step("GEN-013")
		Expect(r.Int("generation.outputs_expected")).To(Equal(j.r.Int("outputs_expected")), "the read expects the outputs the submit answer said"+r.Describe())
		s.Step("GEN-007")
		checkCompleted(r, "generation")
		s.Step("VAR-008")
		Expect(r.Field("generation.batch_group_id")).To(BeNil(), r.Describe())
		Expect(r.Array("generation.outputs")).To(HaveLen(2), r.Describe())
		for _, link := range outputLinks(r, "generation") {
			expectPNG(s, s.FetchLink(ctx, link), 0, 0)
		}
		s.Step("VAR-009")
		// Both takes are priced, held and charged: the price of count 2 is twice one take's.
		Expect(j.price).To(BeNumerically("~", 2*one, 1e-6), "two takes are priced as two: twice the estimate of one take")
		Expect(r.Int("generation.credits_estimated")).To(chargeOf(2*one), "credits_estimated covers both takes"+r.Describe())
		Expect(r.Int("generation.credits.credits_charged")).To(chargesOf(one, 2), "both delivered takes are charged, each at one take's price"+r.Describe())
		if sp.ws != nil {
			after, held := balanceOf(ctx, sp.c)
			Expect(held).To(BeZero())
			Expect(before-after).To(chargesOf(one, 2), "the balance paid for both takes")
		}
	})

	// Without control the balance is read where the workspace is the spec's alone (sp.ws), as the
	// documented flow does; every sibling's own hold and charge are read on any target.
	f.Rule("VAR-009", "VAR-006", "BATCH-009", "LEDGER-002").Needs(framework.Spends).It("every sibling of a video batch is held and charged its own take, not only the first: the balance pays each one", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.VideoModel(ctx, sp.c)
		id := d.String("capability_id")
		oneEst, oneNeed := estimateOf(ctx, sp.c, id, catalogue.CheapConfig(d), nil)
		one := priceOf(oneEst)
		exact := !oneEst.Bool("is_ceiling")
		before := availableOf(ctx, sp.c)
		j := videoBatch(ctx, s, sp.c)
		s.Step("VAR-009", "LEDGER-002")
		Expect(j.need).To(Equal(2*oneNeed), "two takes hold twice one padded take")
		if sp.ws != nil {
			avail, held := balanceOf(ctx, sp.c)
			Expect(held).To(Equal(2*oneNeed), "each sibling holds its own padded take")
			Expect(before-avail).To(Equal(2*oneNeed), "the holds leave the available balance")
		}
		for _, gid := range j.ids {
			r := readGen(ctx, sp.c, gid)
			Expect(r.Int("generation.credits.credits_held")).To(Equal(oneNeed), "every sibling holds one padded take"+r.Describe())
			Expect(r.Int("generation.credits_estimated")).To(chargeOf(one), "every sibling is priced as one take"+r.Describe())
		}
		finishAll(ctx, s, sp.c, j.ids)
		var charged int64
		for _, gid := range j.ids {
			r := readGen(ctx, sp.c, gid)
			s.Step("VAR-009", "LEDGER-002")
			Expect(r.String("generation.status")).To(Equal("completed"), r.Describe())
			c := r.Int("generation.credits.credits_charged")
			Expect(c).To(And(BeNumerically(">", 0), BeNumerically("<=", oneNeed)), "every delivered sibling is charged, within its hold"+r.Describe())
			if exact {
				Expect(c).To(chargeOf(one), "every delivered sibling is charged one take's price"+r.Describe())
			}
			charged += c
		}
		if exact {
			Expect(charged).To(chargesOf(one, 2), "the siblings together pay two takes")
		}
		if sp.ws != nil {
			after, held := balanceOf(ctx, sp.c)
			Expect(held).To(BeZero(), "no hold is left once every sibling settled")
			Expect(before-after).To(Equal(charged), "the balance paid every sibling's charge")
		}
		s.Step("BATCH-009")
		b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
		Expect(b.Int("credits.credits_charged")).To(Equal(charged), "the batch charge is the siblings' sum"+b.Describe())
	})

	f.Rule("EVT-003", "BATCH-007", "BATCH-002", "EVT-027", "EVT-028", "EVT-023").Needs(framework.Receiver, framework.Spends, framework.TestInputs).It("with one sibling slow, batch.settled waits for the last sibling and then fires once with variants_finished equal to variants", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		h := registerHook(ctx, s, sp.c, "batch.settled", "generation.completed", "generation.failed")
		j := videoBatch(ctx, s, slowSibling(ctx, s, sp.c))
		bg := j.r.String("batch_group_id")
		completed, running := oneSiblingDone(ctx, s, sp.c, j.ids)
		s.Step("EVT-003")
		// The first sibling's own event arrives, so deliveries work; the batch's must not.
		_, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.completed", Path: h.path, ResourceID: completed}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no generation.completed for the sibling that completed first ("+completed+")")
		nothingFor(ctx, s, h.id, receiver.Match{Type: "batch.settled", Path: h.path, ResourceID: bg}, "batch.settled was sent while sibling "+running+" still ran")
		s.Step("BATCH-002", "BATCH-007")
		b := sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		Expect(b.String("status")).To(Equal("running"), b.Describe())
		Expect(b.Int("variants_finished")).To(Equal(int64(1)), b.Describe())
		last := s.Finish(ctx, sp.c, running)
		lastDone := answer.Time(last, "generation.completed_at")
		s.Step("EVT-003", "EVT-027", "BATCH-007")
		ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "batch.settled", Path: h.path, ResourceID: bg}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no batch.settled once the last sibling ("+running+") finished")
		data := checkEnvelope(s, ev)
		raw := string(ev.Raw)
		Expect(data["batch_group_id"]).To(Equal(bg), raw)
		Expect(data["variants"]).To(BeNumerically("==", len(j.ids)), raw)
		Expect(data["variants_finished"]).To(BeNumerically("==", len(j.ids)), "batch.settled comes when every sibling finished: variants_finished equals variants: "+raw)
		Expect(data["status"]).To(Equal("completed"), raw)
		gens, _ := data["generations"].([]any)
		Expect(gens).To(HaveLen(len(j.ids)), raw)
		for _, g := range gens {
			Expect(g).To(HaveKeyWithValue("status", "completed"), "every sibling in batch.settled has finished: "+raw)
		}
		expectSettledFixed(s, ev, data)
		s.Step("EVT-003", "EVT-027", "BATCH-007")
		var env map[string]any
		Expect(json.Unmarshal(ev.Raw, &env)).To(Succeed())
		at, err := answer.ParseStamp(fmt.Sprint(env["created_at"]))
		Expect(err).NotTo(HaveOccurred(), raw)
		Expect(at).NotTo(BeTemporally("<", lastDone), "batch.settled happened when the last sibling finished, not before: "+raw)
		s.Step("EVT-003")
		// A receiver reads the resource before acting (the text's advice): that read must not
		// settle the batch a second time.
		sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "batch.settled", ResourceID: bg}, 1, "batch.settled fires once, also after the settled batch is read")
	})

	f.Rule("EVT-027", "BATCH-005", "EVT-003").Needs(framework.Receiver, framework.Spends, framework.TestInputs).It("a partial batch's batch.settled carries status partial, and fires once, also after the settled batch is read", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		h := registerHook(ctx, s, sp.c, "batch.settled")
		j := videoBatch(ctx, s, failingSiblings(ctx, s, sp.c, 1))
		bg := j.r.String("batch_group_id")
		finishAll(ctx, s, sp.c, j.ids)
		s.Step("EVT-027", "BATCH-005")
		ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "batch.settled", Path: h.path, ResourceID: bg}, arrival(s))
		Expect(err).NotTo(HaveOccurred(), "no batch.settled once every sibling finished")
		data := checkEnvelope(s, ev)
		raw := string(ev.Raw)
		gens, _ := data["generations"].([]any)
		Expect(gens).To(HaveLen(len(j.ids)), raw)
		Expect(data["status"]).To(Equal("partial"), "one sibling completed and one failed: the batch settles partial, in the event as on the read: "+raw)
		s.Step("BATCH-005")
		b := sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		Expect(b.String("status")).To(Equal("partial"), b.Describe())
		s.Step("EVT-003")
		expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "batch.settled", ResourceID: bg}, 1, "batch.settled fires once, also after the settled batch is read")
	})
}

// batchGroupSpecs registers the specs of batches of sibling generations.
func batchGroupSpecs(f *framework.Framework) {
	Describe("batches: siblings, status and settlement", func() {
		batchRollupSpecs(f)
		batchIDSpecs(f)
	})
}

// batchRollupSpecs registers the specs of a batch rolling its siblings up: status, counts and charge (in the container that calls it).
func batchRollupSpecs(f *framework.Framework) {
	f.Rule("VAR-006", "VAR-007", "VAR-010", "ID-003", "BATCH-001", "BATCH-002", "BATCH-003", "BATCH-006", "BATCH-007", "BATCH-008", "BATCH-009", "BATCH-010", "BATCH-011", "BATCH-012", "LINK-001", "SUBMIT-006", "SUBMIT-002").Needs(framework.Spends).It("a video model with variants 2 fans out under one bg_ id; the batch rolls its siblings up and completes", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		s.Step("VAR-006")
		j := videoBatch(ctx, s, sp.c)
		s.Step("SUBMIT-006", "SUBMIT-002")
		expectSubmitFixed(j.r)
		bg := j.r.String("batch_group_id")
		s.Step("VAR-006", "ID-003")
		Expect(bg).To(MatchRegexp(bgIDPattern), j.r.Describe())
		s.Step("VAR-007")
		Expect(j.id).To(Equal(j.ids[0]), "generation_id is the first sibling"+j.r.Describe())
		s.Step("BATCH-009")
		Expect(j.r.Int("credits.credits_held")).To(Equal(j.need), j.r.Describe())
		s.Step("BATCH-001")
		b := sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		s.Step("BATCH-001", "BATCH-002", "BATCH-006", "BATCH-007", "BATCH-008", "BATCH-009", "BATCH-010", "BATCH-011", "BATCH-012", "VAR-010")
		checkBatch(ctx, s, sp.c, b, j.ids)
		s.Step("BATCH-002")
		Expect(b.String("status")).To(Equal("running"), b.Describe())
		finishAll(ctx, s, sp.c, j.ids)
		b = sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		s.Step("BATCH-003", "BATCH-006", "BATCH-007", "BATCH-008", "BATCH-009", "BATCH-010", "BATCH-011", "BATCH-012", "VAR-010", "LINK-001")
		checkBatch(ctx, s, sp.c, b, j.ids)
		s.Step("BATCH-003")
		Expect(b.String("status")).To(Equal("completed"), b.Describe())
		s.Step("BATCH-009")
		Expect(b.Int("credits.credits_charged")).To(BeNumerically("<=", j.need), b.Describe())
	})

	f.Rule(rules("SUBMIT-019", "ERR-031")...).Needs(framework.Spends).It("a variants submit is one job holding one slot: a second submit while the batch runs gets 409", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		j := videoBatch(ctx, s, sp.c)
		cfg := catalogue.TTSConfig(ctx, sp.c)
		_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
		r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusConflict, "submission_in_flight")
		Expect(j.ids).To(ContainElement(r.String("error.in_flight.generation_id")), r.Describe())
	})

	f.Rule("BATCH-005", "BATCH-013", "BATCH-007").Needs(framework.Spends, framework.TestInputs).It("one sibling failing (a forced render_fail) makes the batch partial, charged only for the delivered sibling", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		j := videoBatch(ctx, s, failingSiblings(ctx, s, sp.c, 1))
		finishAll(ctx, s, sp.c, j.ids)
		b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
		s.Step("BATCH-005")
		Expect(b.String("status")).To(Equal("partial"), b.Describe())
		// The charge is checked on its own rule before the batch's general rollup (checkBatch),
		// so a wrong partial charge fails BATCH-013, not the rules checked alongside it.
		s.Step("BATCH-013")
		var charged int64
		for _, id := range j.ids {
			r := readGen(ctx, sp.c, id)
			if r.String("generation.status") == "completed" {
				charged += r.Int("generation.credits.credits_charged")
			} else {
				Expect(r.Int("generation.credits.credits_charged")).To(BeZero(), "a failed sibling costs nothing"+r.Describe())
			}
		}
		Expect(b.Int("credits.credits_charged")).To(Equal(charged), "a partial batch is charged for its completed siblings only"+b.Describe())
		s.Step("BATCH-005", "BATCH-007")
		checkBatch(ctx, s, sp.c, b, j.ids)
	})

	f.Rule("BATCH-004").Needs(framework.Spends, framework.TestInputs).It("every sibling failing makes the batch failed, charged nothing", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		j := videoBatch(ctx, s, failingSiblings(ctx, s, sp.c, 2))
		finishAll(ctx, s, sp.c, j.ids)
		b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
		checkBatch(ctx, s, sp.c, b, j.ids)
		Expect(b.String("status")).To(Equal("failed"), b.Describe())
		Expect(b.Int("credits.credits_charged")).To(BeZero(), b.Describe())
	})

	// One sibling fails at its render start (a forced render_fail), the other renders on.
	f.Rule("BATCH-009", "BATCH-002").Needs(framework.Spends, framework.TestInputs).It("the batch charge stays null while one sibling is done and another runs", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		j := videoBatch(ctx, s, failingSiblings(ctx, s, sp.c, 1))
		oneSiblingEnded(ctx, s, sp.c, j.ids, "failed")
		b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
		checkBatch(ctx, s, sp.c, b, j.ids)
		s.Step("BATCH-002")
		Expect(b.String("status")).To(Equal("running"), b.Describe())
		Expect(b.Int("variants_finished")).To(Equal(int64(1)), b.Describe())
		s.Step("BATCH-009")
		Expect(b.Field("credits.credits_charged")).To(BeNil(), "null until every sibling is done, not the finished sibling's 0"+b.Describe())
	})

	f.Rule("BATCH-002", "BATCH-009", "BATCH-007", "SUBMIT-001").Needs(framework.Spends, framework.TestInputs).It("a batch with one sibling completed and one still running reads running with no charge; its submit's Location names generation_id", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		j := videoBatch(ctx, s, slowSibling(ctx, s, sp.c))
		loc := j.r.Header.Get("Location")
		s.Step("SUBMIT-001")
		Expect(loc).To(Or(Equal(s.APIPath("/generations/"+j.id)), HaveSuffix("://"+hostOf(j.r)+s.APIPath("/generations/"+j.id))),
			"a batch submit's Location names generation_id, the sibling to wait on"+j.r.Describe())
		oneSiblingDone(ctx, s, sp.c, j.ids)
		b := sp.c.Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectOK(http.StatusOK)
		checkBatch(ctx, s, sp.c, b, j.ids)
		s.Step("BATCH-002")
		Expect(b.String("status")).To(Equal("running"), "a batch runs while any sibling runs, even when another completed"+b.Describe())
		s.Step("BATCH-007")
		Expect(b.Int("variants_finished")).To(Equal(int64(1)), b.Describe())
		s.Step("BATCH-009")
		Expect(b.Field("credits.credits_charged")).To(BeNil(), "the batch charge stays null until every sibling is done"+b.Describe())
		Expect(b.Bool("credits.terminal")).To(BeFalse(), b.Describe())
	})
}

// batchIDSpecs registers the specs of batch ids and fan-out list sizes (in the container that calls it).
func batchIDSpecs(f *framework.Framework) {
	f.Rule(rules("BATCH-014", "ERR-029")...).It("an unknown bg_ id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
		s.Client().Get(ctx, "/batches/bg_"+framework.RandomHex(32)).ExpectError(http.StatusNotFound, "not_found")
	})

	f.Rule(rules("BATCH-014", "GEN-025", "ERR-029")...).Needs(framework.Spends).It("the batch route answers 404 not_found for a real gen_ id (a lone generation's or a sibling's), and the generation route for a real bg_ id", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		// The batch is a video's: a run that skips video at real time skips before the image renders.
		skipRealTimeVideo(ctx, s, sp.c, catalogue.VideoModel(ctx, sp.c).String("capability_id"))
		d := catalogue.ImageModel(ctx, sp.c)
		lone := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, sp.c, lone.id)
		j := videoBatch(ctx, s, sp.c)
		bg := j.r.String("batch_group_id")
		s.Step("BATCH-014", "ERR-029")
		// The batch exists and is the caller's: the route is there, so a 404 below is about the id.
		sp.c.Get(ctx, "/batches/"+bg).ExpectOK(http.StatusOK)
		for _, id := range []string{lone.id, j.ids[0], j.ids[1]} {
			sp.c.Get(ctx, "/batches/"+id).ExpectError(http.StatusNotFound, "not_found")
		}
		s.Step("GEN-025", "ERR-029")
		sp.c.Get(ctx, "/generations/"+bg).ExpectError(http.StatusNotFound, "not_found")
	})

	f.Rule(rules("BATCH-015", "ID-016", "ERR-029")...).Needs(framework.Spends, framework.SecondWorkspace).It("another workspace's bg_ id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		j := videoBatch(ctx, s, c)
		s.OtherClient().Get(ctx, "/batches/"+j.r.String("batch_group_id")).ExpectError(http.StatusNotFound, "not_found")
	})

	f.Rule(rules("VAR-014", "ERR-024")...).It("more than 4 values in a fan-out list setting answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		// The list setting is found by its shape (catalogue.ListSettings), as the text names no key.
		var target *framework.Response
		var field string
		for _, row := range catalogue.Rows(ctx, c) {
			if row["status"] != "available" {
				continue
			}
			det := catalogue.Detail(ctx, c, row["capability_id"].(string))
			if fields := catalogue.ListSettings(answer.SchemaProps(det)); len(fields) > 0 {
				target, field = det, fields[0]
				break
			}
		}
		if target == nil {
			s.Lacks("no available capability has a list setting (an array of enum strings) that runs once per value (VAR-014 unverified)")
		}
		enum := catalogue.EnumOf(answer.SchemaProps(target), field)
		if len(enum) < 5 {
			s.Lacks("%s's list setting %s offers %d values: five different ones cannot be sent (VAR-014 unverified)", target.String("capability_id"), field, len(enum))
		}
		values := make([]any, 5)
		for i, v := range enum[:5] {
			values[i] = v
		}
		cfg := catalogue.Clone(answer.ObjectAt(target, "example_config"))
		cfg[field] = values
		refuse(ctx, c, submitBody(target.String("capability_id"), cfg, 600, nil), http.StatusBadRequest, "invalid_config")
	})
}

// fanOutSpecs registers the specs of fan-out list settings.
func fanOutSpecs(f *framework.Framework) {
	Describe("variants: fan-out list settings", func() {
		f.Rule("VAR-012", "VAR-013").Needs(framework.Spends, framework.Uploads).It("two values answer a batch_group_id and one generation per value, each labelled with its value and charged on its own", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			fo := fanOutCapability(ctx, s, sp.c)
			two := fo.values[:2]
			one, needOne := estimateOf(ctx, sp.c, fo.id, fo.withValues(two[0]), nil)
			priceOne := priceOf(one)
			before := availableOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, fo.id, fo.withValues(two...), nil)
			s.Step("VAR-012")
			Expect(j.r.String("batch_group_id")).To(MatchRegexp(bgIDPattern), "two values fan out into a batch"+j.r.Describe())
			Expect(j.ids).To(HaveLen(2), "one generation per value"+j.r.Describe())
			Expect(j.ids[0]).NotTo(Equal(j.ids[1]), j.r.Describe())
			Expect(j.ids).To(ContainElement(j.id), "generation_id is one of generation_ids"+j.r.Describe())
			s.Step("VAR-013")
			holds := padsOf(s, 2*needOne, j.price)
			Expect(j.need).To(BeElementOf(holds), "the hold pads every value's price: one padded price per value, or the padded total rounded once")
			Expect(j.r.Int("credits.credits_held")).To(BeElementOf(holds), "each value's price is held padded"+j.r.Describe())
			labels := map[string]string{}
			var base, siblingHolds int64
			for i, id := range j.ids {
				r := readGen(ctx, sp.c, id)
				checkGeneration(r, "generation")
				Expect(r.String("generation.batch_group_id")).To(Equal(j.r.String("batch_group_id")), r.Describe())
				expectPosition(s, r, r.Int("generation.batch_index"), &base, i)
				label := r.String("generation.fan_out_label")
				Expect(label).To(BeElementOf(two[0], two[1]), "fan_out_label names the generation's value"+r.Describe())
				labels[label] = id
				// One padded price per value; where the padded total is rounded once (EST-003: the
				// rounding place is open) a sibling may hold less, never more, and the siblings'
				// holds add up to the batch's.
				held := r.Int("generation.credits.credits_held")
				siblingHolds += held
				if s.Strict() {
					Expect(held).To(Equal(needOne), "each fanned-out generation holds one value's padded price"+r.Describe())
				} else {
					Expect(held).To(BeNumerically("<=", needOne), "a fanned-out generation holds at most one value's padded price"+r.Describe())
				}
				Expect(r.Int("generation.credits_estimated")).To(chargeOf(priceOne), "each fanned-out generation is priced as one value"+r.Describe())
			}
			Expect(labels).To(HaveLen(2), fmt.Sprintf("each value labels one generation: %v", labels))
			Expect(siblingHolds).To(BeElementOf(holds), "the siblings hold every value's padded price, rounded per value or once")
			var charged int64
			for _, id := range j.ids {
				s.Finish(ctx, sp.c, id)
				r := readGen(ctx, sp.c, id)
				Expect(r.Bool("generation.credits.terminal")).To(BeTrue(), r.Describe())
				c := r.Int("generation.credits.credits_charged")
				if r.String("generation.status") == "completed" {
					Expect(c).To(chargeOf(priceOne), "each completed value is charged its own price"+r.Describe())
				}
				charged += c
			}
			if sp.ws != nil {
				after, held := balanceOf(ctx, sp.c)
				Expect(held).To(BeZero())
				Expect(before-after).To(Equal(charged), "the balance moved by the sum of the values' charges")
			}
		})

		f.Rule("VAR-015", "SUBMIT-004").Needs(framework.Spends, framework.Uploads).It("a single value makes one generation without batch_group_id", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			fo := fanOutCapability(ctx, s, sp.c)
			j := submit(ctx, s, sp.c, fo.id, fo.withValues(fo.values[0]), nil)
			Expect(j.r.Doc()).NotTo(HaveKey("batch_group_id"), "one value is no batch"+j.r.Describe())
			Expect(j.ids).To(Equal([]string{j.id}), "generation_ids is [generation_id]"+j.r.Describe())
			r := readGen(ctx, sp.c, j.id)
			checkGeneration(r, "generation")
			Expect(r.Field("generation.batch_group_id")).To(BeNil(), r.Describe())
			Expect(r.Field("generation.batch_index")).To(BeNil(), r.Describe())
		})
	})

}

// slowSibling returns c forcing one slow render (slow_render, count 1) on the video model's next
// generation: the submit of a video batch through it holds one sibling back while the other
// completes. The render is 1800 s longer with control (the spec moves the clock), 60 s without
// (the run waits it out in real time).
func slowSibling(ctx context.Context, s *framework.Spec, c *framework.Client) *framework.Client {
	GinkgoHelper()
	extra := 60
	if s.HasControl() {
		extra = 1800
	}
	d := catalogue.VideoModel(ctx, c)
	return s.Force(ctx, c, framework.Outcome{Kind: "slow_render", Seconds: extra, Count: 1, CapabilityID: d.String("capability_id")})
}

// failingSiblings returns c forcing a render failure (render_fail) on the video model's next n
// generations: the submit of a video batch through it fails n of its siblings at their render start.
func failingSiblings(ctx context.Context, s *framework.Spec, c *framework.Client, n int) *framework.Client {
	GinkgoHelper()
	d := catalogue.VideoModel(ctx, c)
	return s.Force(ctx, c, framework.Outcome{Kind: "render_fail", Count: n, CapabilityID: d.String("capability_id")})
}

// oneSiblingDone is oneSiblingEnded for a completed sibling (a slow_render holds the other back).
func oneSiblingDone(ctx context.Context, s *framework.Spec, c *framework.Client, ids []string) (completed, running string) {
	GinkgoHelper()
	return oneSiblingEnded(ctx, s, c, ids, "completed")
}

// oneSiblingEnded lets the service clock run 5 s at a time (moved by control, or waited out in
// real time without it; up to 1700 s) until one sibling of ids has ended with status while another
// still runs, and returns the two. It ends the spec through Lacks when both end together.
func oneSiblingEnded(ctx context.Context, s *framework.Spec, c *framework.Client, ids []string, status string) (ended, running string) {
	GinkgoHelper()
	for elapsed := 0; elapsed < 1700; elapsed += 5 {
		ended, running = "", ""
		for _, id := range ids {
			switch st := readGen(ctx, c, id).String("generation.status"); {
			case st == status:
				ended = id
			case st != "completed" && st != "failed":
				running = id
			}
		}
		if ended != "" && running == "" {
			s.Lacks("both siblings ended together; the forced outcome did not hold one back")
		}
		if ended != "" {
			return ended, running
		}
		if s.HasControl() {
			s.Advance(ctx, 5)
		} else {
			letPass(ctx, s, 5*time.Second)
		}
	}
	Fail("no sibling " + status + " within 1700 s of service time")
	return "", ""
}
