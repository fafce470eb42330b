package specs

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// generationSpecs registers the specs of the documented flow, generation states and waits.
func generationSpecs(f *framework.Framework) {
	f.SetWaitCheck(expectWaitFixed)
	documentedFlowSpecs(f)
	generationStateSpecs(f)
	generationWaitSpecs(f)
}

// documentedFlowSpecs registers the specs of the documented flow.
func documentedFlowSpecs(f *framework.Framework) {
	Describe("generations: the documented flow", Ordered, func() {
		// The flow runs once, in BeforeAll (so that a label filter selecting any one step still runs
		// it); each step checks one part of it.
		var sp spender
		var d, est, after, done *framework.Response
		var j job
		var before int64
		f.BeforeAll([]framework.Need{framework.Spends}, func(ctx context.Context, s *framework.Spec) {
			fl := runDocumentedFlow(ctx, s)
			sp, d, est, before, j, after, done = fl.sp, fl.d, fl.est, fl.before, fl.j, fl.after, fl.done
		})
		ran := func() {
			GinkgoHelper()
			Expect(done).NotTo(BeNil(), "the flow did not run to its end")
		}

		f.Rule("CAP-019", "CAP-021", "EST-001").Needs(framework.Spends).It("1. reads the image model's strict config schema and estimates its config", func(ctx context.Context, s *framework.Spec) {
			ran()
			s.Step("CAP-019", "CAP-021")
			Expect(answer.ObjectAt(d, "config_schema")["additionalProperties"]).To(Equal(false), d.Describe())
			s.Step("EST-001")
			price := priceOf(est)
			Expect(est.Int("max_credits_needed")).To(BeNumerically(">=", price), est.Describe())
		})

		f.Rule("CORE-019", "CORE-009", "SUBMIT-001", "SUBMIT-002", "SUBMIT-003", "SUBMIT-004", "SUBMIT-005", "SUBMIT-006", "SUBMIT-009", "VAR-001", "ID-002", "ID-011", "CORE-010", "LEDGER-004").Needs(framework.Spends).It("2. submits with max_credits equal to max_credits_needed and is answered 201 at acceptance", func(ctx context.Context, s *framework.Spec) {
			ran()
			r := j.r
			s.Step("ID-002")
			Expect(j.id).To(MatchRegexp(genIDPattern), r.Describe())
			s.Step("SUBMIT-001", "CORE-019")
			Expect(r.Header.Get("Location")).To(Or(Equal(s.APIPath("/generations/"+j.id)), HaveSuffix("://"+hostOf(r)+s.APIPath("/generations/"+j.id))),
				"Location names the generation's path"+r.Describe())
			s.Step("SUBMIT-002")
			Expect(r.Header.Values("Cache-Control")).To(ContainElement(ContainSubstring("no-store")), r.Describe())
			s.Step("SUBMIT-004", "VAR-001")
			Expect(j.ids).To(Equal([]string{j.id}), "without variants generation_ids is [generation_id]"+r.Describe())
			Expect(r.Doc()).NotTo(HaveKey("batch_group_id"), "no batch_group_id without variants or fan-out"+r.Describe())
			s.Step("SUBMIT-005")
			Expect(r.Bool("replay")).To(BeFalse(), r.Describe())
			s.Step("ID-011", "SUBMIT-003")
			Expect(r.Doc()).To(HaveKey("run_id"), "run_id is always present"+r.Describe())
			if run, _ := r.Lookup("run_id"); run != nil {
				Expect(run).To(BeAssignableToTypeOf(""), "run_id is null or an opaque string"+r.Describe())
			}
			s.Step("SUBMIT-006", "CORE-009")
			Expect(r.Field("credits.credits_charged")).To(BeNil(), "credits_charged is null at submit"+r.Describe())
			Expect(r.String("credits.settlement")).To(Equal("open"), r.Describe())
			Expect(r.Bool("credits.terminal")).To(BeFalse(), "the answer comes at acceptance, before the work is done"+r.Describe())
			Expect(r.Int("credits.credits_held")).To(Equal(j.need), "the hold is the estimate's max_credits_needed"+r.Describe())
			s.Step("LEDGER-004")
			Expect(j.need).To(Equal(ceilPad(j.price)), "one take holds ceil(price x 1.1)")
			s.Step("SUBMIT-003")
			r.Int("credits.wallet_balance")
			Expect(r.String("capability_id")).To(Equal(d.String("capability_id")), r.Describe())
			Expect(r.String("capability_name")).NotTo(BeEmpty(), r.Describe())
			s.Step("SUBMIT-009")
			Expect(r.String("output_kind")).To(Equal(d.String("output_kind")), r.Describe())
			Expect(r.Int("outputs_expected")).To(BeNumerically(">=", 1), r.Describe())
			s.Step("CORE-010")
			for _, k := range []string{"charge_summary", "next_action", "summary"} {
				Expect(r.String(k)).NotTo(BeEmpty(), r.Describe())
			}
			s.Step("CORE-009")
			Expect(after.String("generation.status")).To(answer.OneOf(runningStatuses...), "a just-accepted job is still running"+after.Describe())
			checkGeneration(after, "generation")
		})

		f.Rule("GEN-005", "GEN-028", "GEN-032", "GEN-035", "GEN-013", "GEN-014", "GEN-003", "GEN-042", "CORE-010").Needs(framework.Spends).It("3. waits until still_running is false", func(ctx context.Context, s *framework.Spec) {
			ran()
			s.Step("GEN-005", "GEN-028", "GEN-003")
			checkGeneration(done, "generation")
			Expect(done.String("generation.status")).To(Equal("completed"), done.Describe())
			s.Step("GEN-028")
			for _, k := range []string{"waited_seconds", "age_seconds", "retry_after_seconds"} {
				Expect(done.Int(k)).To(BeNumerically(">=", 0), done.Describe())
			}
			s.Step("GEN-028", "CORE-010")
			Expect(done.String("next_action")).NotTo(BeEmpty(), "the finished wait's next_action is a sentence too"+done.Describe())
			s.Step("GEN-035", "GEN-032")
			checkExpiry(done, "generation")
			s.Step("GEN-013")
			Expect(done.Int("generation.outputs_expected")).To(Equal(j.r.Int("outputs_expected")), "outputs_expected is the submit's"+done.Describe())
			s.Step("GEN-014")
			Expect(done.Int("generation.credits_estimated")).To(chargeOf(j.price), "credits_estimated is the estimate's credits"+done.Describe())
			// source and output_kind are not in the Generation table: checked when the read has them.
			if _, has := done.Lookup("generation.source"); has {
				s.Step("GEN-042")
				Expect(done.String("generation.source")).To(Equal("api"), "a REST submit has source api"+done.Describe())
			}
			if _, has := done.Lookup("generation.output_kind"); has {
				s.Step("GEN-003")
				Expect(done.String("generation.output_kind")).To(Equal(d.String("output_kind")), done.Describe())
			}
		})

		f.Rule("GEN-001", "GEN-002", "GEN-007", "GEN-011", "GEN-015", "GEN-016", "GEN-017", "GEN-018", "GEN-019", "GEN-022", "GEN-024", "CORE-020", "LEDGER-002", "ID-014", "CORE-005").Needs(framework.Spends).It("4. reads the completed generation: outputs stored, charge captured, never above the hold", func(ctx context.Context, s *framework.Spec) {
			ran()
			s.Step("GEN-001", "GEN-002", "ID-014")
			r := readGen(ctx, sp.c, j.id)
			// The id is taken exactly as given: the same id in upper case names no generation (a
			// server that normalizes ids would answer it under the lower-case id).
			s.Step("ID-014")
			upper := strings.ToUpper(j.id)
			u := sp.c.Get(ctx, "/generations/"+upper, framework.Invalid())
			if u.Status == http.StatusOK {
				Expect(u.String("generation.generation_id")).To(Equal(upper), "a read answers with the very id it was asked for"+u.Describe())
			} else {
				u.ExpectError(http.StatusNotFound, "not_found")
			}
			s.Step("GEN-001", "GEN-002", "ID-014")
			// wallet_balance against the balance first: checkCompleted compares credits_left with
			// wallet_balance, which cannot tell which of the two is wrong, and charges it to GEN-019.
			s.Step("GEN-018")
			avail, held := balanceOf(ctx, sp.c)
			Expect(r.Int("generation.credits.wallet_balance")).To(Equal(avail), "wallet_balance is available_credits"+r.Describe())
			s.Step("GEN-007", "GEN-011", "GEN-015", "GEN-016", "GEN-017", "GEN-019", "GEN-022", "GEN-024", "CORE-020", "CORE-005")
			checkCompleted(r, "generation")
			s.Step("LEDGER-002")
			if sp.ws != nil {
				Expect(held).To(BeZero(), "the hold is gone once the charge is captured")
				Expect(before-avail).To(Equal(r.Int("generation.credits.credits_charged")), "the balance moved by exactly credits_charged"+r.Describe())
			}
		})

		f.Rule("LINK-001", "LINK-002", "LINK-007", "ID-004").Needs(framework.Spends).It("5. downloads the file through its link without a key and keeps the asset id", func(ctx context.Context, s *framework.Spec) {
			ran()
			r := readGen(ctx, sp.c, j.id)
			s.Step("LINK-001")
			checkExpiry(r, "generation")
			for i := range r.Array("generation.outputs") {
				p := fmt.Sprintf("generation.outputs.%d", i)
				s.Step("LINK-002", "LINK-007")
				file := s.FetchLink(ctx, r.String(p+".url"))
				w, _ := framework.AsInt(r.Field(p + ".width"))
				h, _ := framework.AsInt(r.Field(p + ".height"))
				expectPNG(s, file, w, h)
				// The text asks a client to keep the asset_id but does not place it on outputs[]:
				// an output that carries one names an asset of the caller's.
				if v, has := r.Lookup(p + ".asset_id"); has && v != nil {
					s.Step("ID-004")
					asset := sp.c.Get(ctx, "/assets/"+r.String(p+".asset_id")).ExpectOK(http.StatusOK)
					Expect(recordView(asset, "asset_id", "the asset read").String("asset_id")).To(Equal(r.String(p+".asset_id")), asset.Describe())
				}
			}
		})
	})

}

// documentedFlow is what the documented flow's run leaves for its steps to judge: the spender, the
// image model's detail (d), its estimate, the balance before the submit (0 when the target shows
// none), the job, its read right after the submit and its read once finished.
type documentedFlow struct {
	sp                  spender
	d, est, after, done *framework.Response
	j                   job
	before              int64
}

// runDocumentedFlow runs the documented flow once: estimate the image model's cheapest config,
// read the balance, submit, read the job, and wait for its end.
func runDocumentedFlow(ctx context.Context, s *framework.Spec) documentedFlow {
	var fl documentedFlow
	fl.sp = newSpender(ctx, s)
	fl.d = catalogue.ImageModel(ctx, fl.sp.c)
	config := catalogue.CheapConfig(fl.d)
	fl.est, _ = estimateOf(ctx, fl.sp.c, fl.d.String("capability_id"), config, nil)
	if _, declared := fl.sp.c.ShapeIf("balance.available"); declared {
		fl.before = availableOf(ctx, fl.sp.c) // the balance's layout is the target's (step 4 skips without it)
	}
	fl.j = submit(ctx, s, fl.sp.c, fl.d.String("capability_id"), config, nil)
	fl.after = readGen(ctx, fl.sp.c, fl.j.id)
	fl.done = s.Finish(ctx, fl.sp.c, fl.j.id)
	return fl
}

// generationStateSpecs registers the specs of generation states.
func generationStateSpecs(f *framework.Framework) {
	Describe("generations: states", func() {
		stateProgressSpecs(f)
		stateEndSpecs(f)
	})
}

// stateProgressSpecs registers the specs of a job moving through its statuses, to completed or failed (in the container that calls it).
func stateProgressSpecs(f *framework.Framework) {
	// With control a video job, its clock moved 2 s between reads; without, an image job at its
	// own render time, read every half second of service time.
	f.Rule("GEN-004", "GEN-005", "GEN-009", "GEN-012", "GEN-013", "GEN-015", "GEN-016", "GEN-022", "GEN-008", "CORE-009", "GEN-019").Needs(framework.Spends).It("moves forward through queued, rendering, post_processing to completed as the clock advances, and stays completed", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := stagedModel(ctx, s, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		last := -1
		seen := []string{}
		for i := 0; i < 2000; i++ {
			r := readGen(ctx, sp.c, j.id)
			s.Step("GEN-004", "GEN-012", "GEN-015", "GEN-016", "GEN-022")
			checkGeneration(r, "generation")
			st := r.String("generation.status")
			Expect(st).To(answer.OneOf("queued", "rendering", "post_processing", "completed"), "no failure was asked for"+r.Describe())
			// On every read, running ones too: what the job will deliver, not what it delivered so far.
			s.Step("GEN-013")
			Expect(r.Int("generation.outputs_expected")).To(Equal(j.r.Int("outputs_expected")), "outputs_expected on the read is the submit's"+r.Describe())
			s.Step("GEN-009")
			Expect(statusRank[st]).To(BeNumerically(">=", last), fmt.Sprintf("status stepped back to %s after %v", st, seen)+r.Describe())
			if len(seen) == 0 || seen[len(seen)-1] != st {
				seen = append(seen, st)
			}
			last = statusRank[st]
			if st == "completed" {
				// A wait on a running job blocks on the service clock; on a finished one it answers at once.
				s.Step("GEN-005")
				w := sp.c.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
				Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
				break
			}
			if s.HasControl() {
				s.Advance(ctx, 2)
			} else {
				letPass(ctx, s, 500*time.Millisecond)
			}
		}
		s.Step("GEN-009")
		Expect(seen[len(seen)-1]).To(Equal("completed"), fmt.Sprintf("statuses seen: %v", seen))
		s.Step("CORE-009")
		Expect(seen[0]).To(answer.OneOf(runningStatuses...), "the job is running right after the submit answered")
		s.Step("GEN-008")
		final := readGen(ctx, sp.c, j.id)
		if s.HasControl() {
			s.Advance(ctx, 3600)
		} else {
			letPass(ctx, s, 2*time.Second)
		}
		later := readGen(ctx, sp.c, j.id)
		Expect(later.String("generation.status")).To(Equal("completed"), "a finished status does not change"+later.Describe())
		Expect(later.Int("generation.credits.credits_charged")).To(Equal(final.Int("generation.credits.credits_charged")), later.Describe())
	})

	f.Rule("GEN-010", "GEN-017", "CORE-021", "LEDGER-003", "GEN-012", "GEN-005", "GEN-022", "GEN-024").Needs(framework.Spends, framework.TestInputs).It("a render that fails (a forced render_fail) reads failed with error {code, message}, completed_at set and no link, and costs nothing", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		before, heldBefore := balanceOf(ctx, sp.c)
		failing := s.Force(ctx, sp.c, framework.Outcome{Kind: "render_fail", CapabilityID: d.String("capability_id")})
		j := submit(ctx, s, failing, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Step("GEN-010")
		running := readGen(ctx, sp.c, j.id)
		Expect(running.String("generation.status")).To(answer.OneOf(runningStatuses...), "the job runs until the clock moves"+running.Describe())
		Expect(running.Field("generation.error")).To(BeNil(), "error is null, not an empty object, while the job has not failed"+running.Describe())
		s.Step("LEDGER-003")
		avail, held := balanceOf(ctx, sp.c)
		Expect(before - avail).To(Equal(j.need))
		Expect(held - heldBefore).To(Equal(j.need))
		if s.HasControl() {
			s.Advance(ctx, 7) // without control the render's own time passes first
		}
		w := s.Finish(ctx, sp.c, j.id)
		s.Step("GEN-005", "GEN-022")
		checkGeneration(w, "generation")
		Expect(w.String("generation.status")).To(Equal("failed"), w.Describe())
		Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
		s.Step("GEN-022")
		r := readGen(ctx, sp.c, j.id)
		Expect(r.Field("generation.completed_at")).NotTo(BeNil(), "completed_at is set once the job fails, not only when it completes"+r.Describe())
		Expect(answer.Time(r, "generation.completed_at")).To(BeTemporally(">", answer.Time(r, "generation.created_at")), "the job failed after it was created (the clock moved 7 s first)"+r.Describe())
		s.Step("GEN-010")
		Expect(w.String("generation.error.message")).NotTo(BeEmpty(), "a failed generation carries error.message"+w.Describe())
		Expect(w.Field("generation.error.code")).To(Equal("provider_error"), "the fault's default code"+w.Describe())
		s.Step("GEN-017", "CORE-021")
		Expect(w.Bool("generation.credits.terminal")).To(BeTrue(), w.Describe())
		Expect(w.Int("generation.credits.credits_charged")).To(BeZero(), "a failed job is charged 0"+w.Describe())
		s.Step("GEN-012")
		for _, u := range w.Array("generation.outputs") {
			Expect(u.(map[string]any)["url"]).To(BeNil(), "a failed generation has no link"+w.Describe())
		}
		s.Step("GEN-024")
		Expect(r.Doc()).NotTo(HaveKey("output_urls_expire_in_seconds"), "a failed generation has no link, so no link lifetime"+r.Describe())
		Expect(w.Doc()).NotTo(HaveKey("output_urls_expire_in_seconds"), "a failed generation has no link, so no link lifetime"+w.Describe())
		s.Step("LEDGER-003", "CORE-021")
		avail, held = balanceOf(ctx, sp.c)
		Expect(avail).To(Equal(before), "the hold is released in full")
		Expect(held).To(Equal(heldBefore))
	})
}

// recoverAfter is the service time after a write-off at which the operator recovers it, asked with
// a recover test input (spec/testmode.yaml): long enough that the spec reads the failure first.
// recoverSlack is what the spec waits out beyond it before it reads the recovery.
// recoverRender bounds how long a recovery's render may take before a recovered job reads
// completed, beyond the slack.
const (
	recoverAfter  = 60 * time.Second
	recoverSlack  = 20 * time.Second
	recoverRender = 5 * time.Minute
)

// stateEndSpecs registers the specs of a job ended by recovery or a cancel, and of a text result (in the container that calls it).
func stateEndSpecs(f *framework.Framework) {
	f.Rule("GEN-008", "GEN-007", "LEDGER-002", "CORE-020").Needs(framework.Spends, framework.TestInputs, framework.RealTime).
		WaitsOut(recoverAfter+recoverSlack).It("a recovered write-off moves failed to completed and is charged at most its hold", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		before := availableOf(ctx, sp.c)
		ti, forced := s.AppAct(sp.c, framework.Outcome{Kind: "recover", Seconds: int(recoverAfter.Seconds())})
		if !forced {
			s.QueueFault(ctx, "render_fail", d.String("capability_id"), 1, "")
		}
		j := submit(ctx, s, ti, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		Expect(s.Finish(ctx, sp.c, j.id).String("generation.status")).To(Equal("failed"))
		if forced {
			s.WaitOut(ctx, recoverAfter) // the operator recovers it after recoverAfter
			// The recovery renders again, and when it ends is the target's own: read until it does.
			Eventually(func() string { return readGen(ctx, sp.c, j.id).String("generation.status") }).WithContext(ctx).
				WithTimeout(time.Duration(float64(recoverSlack+recoverRender)/s.TimeScale())).WithPolling(time.Second).
				Should(Equal("completed"), "the recovered "+j.id+" reads completed once its recovery has rendered")
		} else {
			s.JobHook(ctx, j.id, "recover", nil)
		}
		w := s.Finish(ctx, sp.c, j.id)
		r := readGen(ctx, sp.c, j.id)
		s.Step("GEN-008")
		Expect(w.String("generation.status")).To(Equal("completed"), "recovery turns failed into completed"+w.Describe())
		s.Step("GEN-007")
		checkCompleted(r, "generation")
		s.Step("CORE-020")
		charged := r.Int("generation.credits.credits_charged")
		Expect(charged).To(BeNumerically(">", 0), "a recovered render is charged"+r.Describe())
		Expect(charged).To(BeNumerically("<=", j.need), r.Describe())
		s.Step("LEDGER-002")
		avail, held := balanceOf(ctx, sp.c)
		Expect(before - avail).To(Equal(charged))
		Expect(held).To(BeZero())
	})

	f.Rule("GEN-006", "GEN-004", "LEDGER-003").Needs(framework.Spends, framework.TestInputs).It("a canceled job (the app's cancel) reads failed, never canceled, and its hold is released", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.VideoModel(ctx, sp.c)
		before := availableOf(ctx, sp.c)
		ti, forced := s.AppAct(sp.c, framework.Outcome{Kind: "cancel"})
		j := submit(ctx, s, ti, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		if !forced {
			s.JobHook(ctx, j.id, "cancel", nil)
		}
		s.Finish(ctx, sp.c, j.id)
		r := readGen(ctx, sp.c, j.id)
		s.Step("GEN-004", "GEN-006")
		checkGeneration(r, "generation")
		s.Step("GEN-006")
		Expect(r.String("generation.status")).To(Equal("failed"), "a canceled job reads failed"+r.Describe())
		s.Step("LEDGER-003")
		Expect(r.Int("generation.credits.credits_charged")).To(BeZero(), r.Describe())
		avail, held := balanceOf(ctx, sp.c)
		Expect(avail).To(Equal(before))
		Expect(held).To(BeZero())
		s.Step("GEN-006")
		list := paging.Get(ctx, sp.c, "/generations", paging.Open, framework.Query("status", "failed"))
		Expect(paging.IDs(list.Rows, "generation_id")).To(ContainElement(j.id), "status=failed also matches canceled jobs"+list.R.Describe())
	})

	f.Rule("GEN-020", "GEN-005", "GEN-024", "GEN-022").Needs(framework.Spends).It("a text capability answers in output_text with has_result true, and no link lifetime where no output has a link", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.TextCapability(ctx, sp.c)
		cfg := answer.ObjectAt(d, "example_config")
		if catalogue.NamesUpload(cfg) {
			s.Lacks("the text capability's example_config needs an upload")
		}
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		w := s.Finish(ctx, sp.c, j.id)
		s.Step("GEN-005", "GEN-022")
		checkGeneration(w, "generation")
		Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
		s.Step("GEN-020")
		Expect(w.Bool("generation.has_result")).To(BeTrue(), w.Describe())
		Expect(w.String("generation.output_text")).NotTo(BeEmpty(), w.Describe())
		s.Step("GEN-024")
		r := readGen(ctx, sp.c, j.id)
		Expect(anyLink(r, "generation")).To(BeFalse(), "a text result has no file link"+r.Describe())
		checkExpiry(r, "generation")
		checkExpiry(w, "generation")
	})
}

// generationWaitSpecs registers the specs of generation waits.
func generationWaitSpecs(f *framework.Framework) {
	Describe("generations: waits", func() {
		blockingWaitSpecs(f)
		waitAnswerSpecs(f)
	})
}

// blockingWaitSpecs registers the specs of a wait on a running job: how long it blocks and when it
// answers (in the container that calls it).
func blockingWaitSpecs(f *framework.Framework) {
	// The job is held running by a forced slow render (a test input, or control's fault) longer
	// than the three waits, or, where the run can force nothing, is the catalogue's cheapest video
	// (its longest-running kind of job; no render time is published, so one that ends within the
	// waits skips as undecidable); its running wait answers carry the fixed values of a running
	// record (expectWaitFixed: GEN-010, GEN-012, GEN-015, GEN-022).
	f.Rule("GEN-027", "GEN-029", "GEN-030", "GEN-031", "GEN-034", "GEN-028", "GEN-005", "GEN-024", "GEN-010", "GEN-012", "GEN-015", "GEN-022").Needs(framework.Spends).It("a wait on a running job answers 200 after about 18 s with still_running true; ?timeout neither shortens nor lengthens it", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d, slow := catalogue.ImageModel(ctx, sp.c), sp.c
		if s.CanForce() {
			slow = s.Force(ctx, sp.c, framework.Outcome{Kind: "slow_render", Seconds: slowWaitRender, CapabilityID: d.String("capability_id")})
		} else {
			d = catalogue.VideoModel(ctx, sp.c)
		}
		j := submit(ctx, s, slow, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		for _, opts := range [][]framework.CallOption{nil, {framework.Query("timeout", "1")}, {framework.Query("timeout", "120")}} {
			var w *framework.Response
			var advanced float64
			s.Step("GEN-027", "GEN-030", "GEN-031")
			// Before 15 s the wait must not answer, so with control the clock jumps 14 s and then
			// moves 1 s at a time: an answer within the jump shows as a span of 14 s, short of 15
			// either way. Without control the target's clock runs on its own.
			span := s.During(ctx, func() {
				if s.HasControl() {
					w, advanced = s.WaitAdvancingFrom(ctx, sp.c, j.id, 14, 1, 30, opts...)
					return
				}
				w = sp.c.Get(ctx, "/generations/"+j.id+"/wait", opts...)
			})
			if opts != nil && w.Status != http.StatusOK {
				// "No timeout parameter": what a wait does with one the text does not say. The
				// reference ignores it (GEN-031, held with --strict); a refusal is the error table's.
				s.ReferenceOnly("GEN-031", "a wait ignores ?timeout, a query parameter it does not have", func() { w.ExpectOK(http.StatusOK) })
				w.ExpectError(http.StatusBadRequest, "invalid_config")
				continue
			}
			w.ExpectOK(http.StatusOK)
			// The wait's own waited_seconds decides on any clock, before whether the job still
			// runs: a wait that held past 20 s (obeying ?timeout=120 until the job ended, say) says
			// so itself, also when the job ended inside it on a fast running clock.
			s.Step("GEN-034")
			n, isInt := framework.AsInt(w.Field("waited_seconds"))
			Expect(isInt).To(BeTrue(), "waited_seconds is an integer"+w.Describe())
			s.Step("GEN-027", "GEN-031")
			Expect(n).To(BeNumerically("<=", 20), "the wait held for more than 20 s of service time; it blocks about 18 s (up to 20), whatever ?timeout says"+w.Describe())
			if !w.Bool("still_running") {
				lacksUnlessRunning(s, "the job finished within one wait; a wait timeout cannot be observed")
			}
			s.Step("GEN-005", "GEN-028")
			checkGeneration(w, "generation")
			Expect(w.String("generation.status")).To(answer.OneOf(runningStatuses...), w.Describe())
			s.Step("GEN-027", "GEN-031")
			waited := w.Int("waited_seconds")
			Expect(waited).To(And(BeNumerically(">=", 15), BeNumerically("<=", 20)), "a wait blocks about 18 s (15 to 20 accepted)"+w.Describe())
			// The span is the longest the wait can have lasted on the target's clock (it also holds the
			// clock reads around it), so a span under 15 s is a wait cut short on any clock.
			Expect(serviceSpan(s, span)).To(BeNumerically(">=", blockingWait), "the wait answered before 15 s of service time passed"+w.Describe())
			if s.ManualClock() {
				// On a manual clock the run moved the clock 1 s at a time until the answer came: a wait
				// that held past 20 s (obeying ?timeout=120, say) shows here.
				Expect(time.Duration(advanced)*time.Second).To(BeNumerically("<=", longestWait), fmt.Sprintf("the wait held for %.0f s of service time; it blocks about 18 s (up to 20), whatever ?timeout says", advanced)+w.Describe())
			}
			s.Step("GEN-029")
			Expect(w.Int("retry_after_seconds")).To(BeZero(), "retry_after_seconds is 0 while running: call again at once"+w.Describe())
			s.Step("GEN-034")
			Expect(w.Int("age_seconds")).To(BeNumerically(">=", waited), "age counts from creation, before the wait began"+w.Describe())
			s.Step("GEN-028")
			Expect(w.String("next_action")).NotTo(BeEmpty(), w.Describe())
			s.Step("GEN-024")
			Expect(w.Doc()).NotTo(HaveKey("output_urls_expire_in_seconds"), "no link while running"+w.Describe())
		}
	})

	// With control a video job, its clock moved 1 s between reads; without, an image job at its
	// own render time, read every quarter second of service time.
	f.Rule("GEN-005", "GEN-027", "GEN-009", "GEN-024").Needs(framework.Spends).It("a wait during post_processing blocks like any running wait: it answers when the job completes or after about 18 s, never at once", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := stagedModel(ctx, s, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		var r *framework.Response
		for i := 0; i < 7200; i++ {
			r = readGen(ctx, sp.c, j.id)
			if st := r.String("generation.status"); st == "post_processing" || st == "completed" || st == "failed" {
				break
			}
			if s.HasControl() {
				s.Advance(ctx, 1)
			} else {
				letPass(ctx, s, 250*time.Millisecond)
			}
		}
		if r.String("generation.status") != "post_processing" {
			lacksUnlessRunning(s, "the job ended %s without a read seeing post_processing (the clock moved between reads)", r.String("generation.status"))
		}
		var w *framework.Response
		var advanced float64
		if s.HasControl() {
			w, advanced = s.WaitAdvancing(ctx, sp.c, j.id, 1, 30)
		} else {
			w = sp.c.Get(ctx, "/generations/"+j.id+"/wait")
		}
		w.ExpectOK(http.StatusOK)
		s.Step("GEN-005")
		checkGeneration(w, "generation")
		st := w.String("generation.status")
		Expect(w.Bool("still_running")).To(Equal(st != "completed" && st != "failed"), "still_running is true exactly while the status is a running one"+w.Describe())
		s.Step("GEN-009")
		Expect(st).To(answer.OneOf("post_processing", "completed"), "post_processing moves on only to completed"+w.Describe())
		s.Step("GEN-027")
		if w.Bool("still_running") {
			Expect(w.Int("waited_seconds")).To(BeNumerically(">=", 15), "a wait during post_processing blocks about 18 s like any running wait"+w.Describe())
		}
		if s.ManualClock() {
			Expect(advanced).To(BeNumerically(">", 0), "the wait answered at once during post_processing, while the job still ran"+w.Describe())
		}
		s.Step("GEN-024")
		checkExpiry(w, "generation")
	})

	f.Rule("GEN-027", "GEN-005", "GEN-030").Needs(framework.Spends).It("a wait answers as soon as the job ends, before its 18 s are up", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		if !s.HasControl() {
			waitEndsWithJob(ctx, s, sp)
			return
		}
		d := catalogue.VideoModel(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
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
		from := s.ClockNow(ctx)
		go func() {
			defer GinkgoRecover()
			defer close(exited)
			done <- sp.c.Get(wctx, "/generations/"+j.id+"/wait")
		}()
		// Let the wait start while the job runs: on a manual clock three seconds of service time,
		// slowly; on a running clock a moment, since the wait's own 18 s pass by themselves.
		steps := 3
		if !s.ManualClock() {
			steps = 1
		}
		for i := 0; i < steps; i++ {
			select {
			case early := <-done:
				early.ExpectOK(http.StatusOK)
				framework.SkipFor(framework.Undecidable("the wait answered before the job could be ended; a wait cut short by the job's end cannot be observed" + early.Describe()))
			case <-time.After(50 * time.Millisecond):
			}
			if s.ManualClock() {
				s.Advance(ctx, 1)
			}
		}
		s.JobHook(ctx, j.id, "fail", map[string]any{"code": "provider_error"})
		// The job ended within this span after the wait began: a wait that answers only at its
		// own 18 s is told apart from one the job's end released only while the span is short.
		if ran := s.ClockNow(ctx).Sub(from); ran > 12*time.Second {
			s.Undecidable("the spec started a wait and ended the job", ran)
		}
		// On a manual clock time stands still from here: only the job's end can release the wait.
		select {
		case w := <-done:
			w.ExpectOK(http.StatusOK)
			Expect(w.Bool("still_running")).To(BeFalse(), "the wait answers the ended job"+w.Describe())
			Expect(w.String("generation.status")).To(Equal("failed"), w.Describe())
			Expect(w.Int("waited_seconds")).To(BeNumerically("<", 15), "the wait ended with the job, not at its 18 s"+w.Describe())
		case <-time.After(5 * time.Second):
			s.Advance(ctx, contract.WaitCeiling.Seconds())
			w := <-done
			Fail("GET /generations/{id}/wait did not answer when the job ended; it answered only once its 18 s had passed" + w.Describe())
		}
	})
}

// waitAnswerSpecs registers the specs of a wait that answers at once, its bucket and its ages (in the container that calls it).
func waitAnswerSpecs(f *framework.Framework) {
	f.Rule("GEN-032", "GEN-035", "GEN-034").Needs(framework.Spends).It("a wait on a finished job answers at once with still_running false", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, sp.c, j.id)
		s.Step("GEN-032")
		w := atOnce(ctx, s, "a wait on a finished job", func(ctx context.Context) *framework.Response {
			return sp.c.Get(ctx, "/generations/"+j.id+"/wait")
		}).ExpectOK(http.StatusOK)
		Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
		s.Step("GEN-034", "GEN-032")
		Expect(w.Int("waited_seconds")).To(BeNumerically("<=", 2), w.Describe())
		s.Step("GEN-035")
		checkExpiry(w, "generation")
		Expect(w.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), w.Describe())
	})

	// With control a key whose agent_read bucket holds 3; without, the run's key once a minute
	// of the target's clock has emptied its buckets (--real-time), and the text's 120.
	f.Rule(rules("GEN-033", "RATE-001", "ERR-036")...).Needs(framework.Spends, framework.RealTime).It("each wait call costs one read from the agent_read bucket", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, sp.c, j.id)
		var small *framework.Client
		room := 3
		if s.HasControl() {
			small, _ = sp.newKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, Buckets: map[string]int{"agent_read": room}})
		} else {
			small, room = s.BucketClient(ctx, time.Minute), 120
		}
		buckets.InWindow(ctx, s, func() {
			for i := 0; i < room; i++ {
				small.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
			}
			buckets.ExpectRefusal(small.Get(ctx, "/generations/"+j.id+"/wait"))
		})
	})

	f.Rule(rules("GEN-025", "GEN-036", "ERR-029")...).It("a read or wait of an unknown generation id answers 404 not_found, the wait at once", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		id := "gen_" + framework.RandomHex(32)
		s.Step("GEN-025")
		c.Get(ctx, "/generations/"+id).ExpectError(http.StatusNotFound, "not_found")
		s.Step("GEN-036")
		// An unknown id has nothing to wait for: the 404 comes at once, on the target's clock.
		atOnce(ctx, s, "a wait on an unknown generation id", func(ctx context.Context) *framework.Response {
			return c.Get(ctx, "/generations/"+id+"/wait")
		}).ExpectError(http.StatusNotFound, "not_found")
	})

	f.Rule(rules("GEN-026", "GEN-036", "ID-016", "GEN-053", "ERR-029")...).Needs(framework.Spends, framework.SecondWorkspace).It("another workspace's generation answers 404 not_found on read and wait and is not listed", func(ctx context.Context, s *framework.Spec) {
		c := s.Client()
		j := submit(ctx, s, c, "tts", catalogue.TTSConfig(ctx, c), map[string]any{"voice_id": catalogue.FirstVoice(ctx, c)})
		other := s.OtherClient()
		s.Step("GEN-026", "ID-016")
		other.Get(ctx, "/generations/"+j.id).ExpectError(http.StatusNotFound, "not_found")
		s.Step("GEN-036", "ID-016")
		// The job runs: a wait that looked it up before checking the workspace would block.
		atOnce(ctx, s, "another workspace's wait", func(ctx context.Context) *framework.Response {
			return other.Get(ctx, "/generations/"+j.id+"/wait")
		}).ExpectError(http.StatusNotFound, "not_found")
		s.Step("GEN-053")
		rows, _ := paging.Walk(ctx, other, "/generations", paging.Open, 50, 40)
		Expect(paging.IDs(rows, "generation_id")).NotTo(ContainElement(j.id), "only this workspace's generations are listed")
	})

	f.Rule("GEN-034", "GEN-032").Needs(framework.Spends).It("age_seconds counts from created_at, not from the start of the wait", func(ctx context.Context, s *framework.Spec) {
		sp := newSpender(ctx, s)
		d := catalogue.ImageModel(ctx, sp.c)
		j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
		s.Finish(ctx, sp.c, j.id)
		// The job ended; now service time passes before the wait: 120 s moved by the control API,
		// or, on a running clock without it, 5 s waited out in real time at the clock's scale.
		passed := 120.0
		if s.HasControl() {
			s.Advance(ctx, passed)
		} else {
			scale := s.ClockScale()
			if scale <= 0 {
				framework.SkipFor(framework.Undecidable("the target's clock does not run and no control API moves it, so no service time passes before the wait"))
			}
			passed = 5
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(passed / scale * float64(time.Second))):
			}
		}
		w := sp.c.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
		s.Step("GEN-032")
		Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
		Expect(w.Int("waited_seconds")).To(BeNumerically("<=", 2), "a finished job's wait answers at once"+w.Describe())
		s.Step("GEN-034")
		Expect(w.Int("age_seconds")).To(BeNumerically(">=", int64(passed)), fmt.Sprintf("the job was created more than %.0f s of service time ago", passed)+w.Describe())
	})
}
