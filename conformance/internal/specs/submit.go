package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mediaspec/mediaspec/internal/contract"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// submitSpecs registers the specs of the submit body, the submit check order and the one job a key
// may hold.
func submitSpecs(f *framework.Framework) {
	submitBodySpecs(f)
	submitConfigSpecs(f)
	checkOrderSpecs(f)
	checkOrderPlanSpecs(f)
	checkOrderFaultSpecs(f)
	oneJobPerKeySpecs(f)
	blockedRequestSpecs(f)
	keySlotSpecs(f)
	unusableUploadSpecs(f)
}

// submitBodySpecs registers the specs of the submit body.
func submitBodySpecs(f *framework.Framework) {
	Describe("submit: body", func() {
		f.Rule(rules("SUBMIT-010", "SUBMIT-011", "CHECK-018", "SUBMIT-030", "ERR-020", "ERR-024", "VER-005")...).It("refuses each field that does not exist with 400 invalid_config naming it", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			cfg := catalogue.TTSConfig(ctx, s.Client())
			_, need := estimateOf(ctx, s.Client(), "tts", cfg, nil)
			for _, key := range []string{"project_id", "organization_id", "quote", "source", "purpose", "idempotency_key", "workflow_run_id", "pending_actor", "webhook_url", "callback_url", "maxCredits", "conformance_bogus"} {
				body := submitBody("tts", catalogue.Clone(cfg), need, nil)
				body[key] = "x"
				if key == "maxCredits" {
					body[key] = need
				}
				refusal.ExpectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), key)
			}
		})

		f.Rule(rules("CHECK-005", "CHECK-001", "ERR-020", "ERR-025")...).It("an unknown top-level key sent with max_credits 1 is refused either as the body is read (400 naming it) or at config validity, after max_credits (402)", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := catalogue.TTSConfig(ctx, c)
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			body := submitBody("tts", cfg, 1, nil)
			body["conformance_bogus"] = "x"
			before := takeSnapshot(ctx, c)
			r := c.Post(ctx, "/generations", body, framework.Invalid())
			switch r.Status {
			case http.StatusPaymentRequired:
				r.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
				Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
				Expect(r.Int("error.limit.required_credits")).To(Equal(need), r.Describe())
			default:
				refusal.ExpectField(r.ExpectError(http.StatusBadRequest, "invalid_config"), "conformance_bogus")
			}
			after := takeSnapshot(ctx, c)
			Expect(after).To(Equal(before), "a refused submit spends, holds and starts nothing"+r.Describe())
		})

		f.Rule(rules("SUBMIT-012", "SUBMIT-013", "CHECK-004", "CHECK-006", "ERR-020", "ERR-024")...).It("refuses a missing field, a bad max_credits, a config that is no object and malformed JSON with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			// Each refusal is the accepted body (max_credits the estimate's max_credits_needed)
			// changed in exactly one way.
			cfg := catalogue.TTSConfig(ctx, s.Client())
			_, need := estimateOf(ctx, s.Client(), "tts", cfg, nil)
			accepted := func() map[string]any { return submitBody("tts", catalogue.Clone(cfg), need, nil) }
			s.Step("SUBMIT-012", "ERR-020")
			for _, missing := range []string{"capability_id", "config", "max_credits"} {
				body := accepted()
				delete(body, missing)
				refusal.ExpectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), missing)
			}
			s.Step("SUBMIT-013", "CHECK-006", "ERR-020")
			for _, bad := range []any{0, -5, 2.5, "100", nil} {
				body := accepted()
				body["max_credits"] = bad
				refusal.ExpectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), "max_credits")
			}
			s.Step("CHECK-006", "ERR-020")
			for _, bad := range []any{"x", []any{}, nil, 5} {
				body := accepted()
				body["config"] = bad
				refusal.ExpectField(refuse(ctx, rc.client(), body, http.StatusBadRequest, "invalid_config", framework.Invalid()), "config")
			}
			s.Step("CHECK-004", "ERR-024")
			for _, raw := range []string{`{"capability_id":"tts",`, `not json`, `[]`} {
				refuse(ctx, rc.client(), []byte(raw), http.StatusBadRequest, "invalid_config", framework.Invalid())
			}
		})
	})
}

// submitConfigSpecs registers the specs of the submit body's config: checked against the
// capability's schema, its file fields, and an unknown voice.
func submitConfigSpecs(f *framework.Framework) {
	Describe("submit: body", func() {
		f.Rule(rules("SUBMIT-015", "SUBMIT-016", "SUBMIT-017", "ERR-020", "ERR-024")...).It("checks config against the capability's schema: unknown key, wrong type, outside the enum, missing required", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			d := catalogue.ImageModel(ctx, s.Client())
			id := d.String("capability_id")
			base := catalogue.CheapConfig(d)
			_, need := estimateOf(ctx, s.Client(), id, base, nil)
			schema := answer.ObjectAt(d, "config_schema")
			props, _ := schema["properties"].(map[string]any)

			s.Step("SUBMIT-015", "ERR-020")
			cfg := catalogue.Clone(base)
			cfg["conformance_bogus"] = true
			refusal.ExpectField(refuse(ctx, rc.client(), submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config.conformance_bogus")

			s.Step("SUBMIT-016", "ERR-020")
			if k := catalogue.TextKey(d); k != "" {
				cfg = catalogue.Clone(base)
				cfg[k] = 12345
				refusal.ExpectField(refuse(ctx, rc.client(), submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config."+k)
			}
			enumChecked := false
			for name, v := range props {
				p, _ := v.(map[string]any)
				if _, hasEnum := p["enum"]; hasEnum && p["type"] == "string" {
					cfg = catalogue.Clone(base)
					cfg[name] = "conformance-not-in-enum"
					refusal.ExpectField(refuse(ctx, rc.client(), submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config."+name)
					enumChecked = true
					break
				}
			}
			if !enumChecked {
				s.Lacks("the image model %s has no string enum in its config schema: a value outside an enum cannot be sent", id)
			}
			s.Step("SUBMIT-017", "ERR-020")
			req, _ := schema["required"].([]any)
			if len(req) == 0 {
				s.Lacks("the image model %s has no required config field: a missing one cannot be sent", id)
			}
			cfg = catalogue.Clone(base)
			delete(cfg, req[0].(string))
			refusal.ExpectField(refuse(ctx, rc.client(), submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config."+req[0].(string))
		})

		f.Rule(rules("SUBMIT-027", "SUBMIT-028", "ERR-024", "ERR-020")...).Needs(framework.Uploads).It("file fields: tools take plain id arrays, image models take {assetId, alias, role} objects; the other form is 400", func(ctx context.Context, s *framework.Spec) {
			rc := &rotating{s: s}
			c := s.Client()
			checked := 0
			// Each refusal is an accepted config (real uploads of the caller, max_credits from
			// its estimate) whose one file field is sent in the other form, naming the same files.
			var image string
			for _, row := range catalogue.Rows(ctx, c) {
				if row["status"] != "available" {
					continue
				}
				cat := row["category"]
				if cat != "tool" && cat != "image" {
					continue
				}
				d := catalogue.Detail(ctx, c, row["capability_id"].(string))
				props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
				for name, v := range props {
					p, _ := v.(map[string]any)
					items, _ := p["items"].(map[string]any)
					if p["type"] != "array" || items == nil {
						continue
					}
					cfg := catalogue.Clone(answer.ObjectAt(d, "example_config"))
					switch {
					case checked&1 == 0 && cat == "tool" && items["type"] == "string":
						ready, ok := uploads.WithSampleUploads(ctx, s, c, props, cfg)
						ids, _ := ready[name].([]any)
						if !ok || len(ids) == 0 {
							continue
						}
						_, need := estimateOf(ctx, c, d.String("capability_id"), ready, nil)
						ready[name] = []any{map[string]any{"assetId": ids[0], "alias": "file1"}}
						s.Step("SUBMIT-027", "ERR-020")
						refusal.ExpectField(refuse(ctx, rc.client(), submitBody(d.String("capability_id"), ready, need, nil), http.StatusBadRequest, "invalid_config"), "config."+name)
						checked |= 1
					case checked&2 == 0 && cat == "image" && items["type"] == "object" && !catalogue.NamesUpload(cfg):
						_, need := estimateOf(ctx, c, d.String("capability_id"), cfg, nil)
						if image == "" {
							fx, data := fixtures.Get("image.png")
							image, _ = uploads.Clean(ctx, s, c, fx.Name, fx.ContentType, data)
						}
						cfg[name] = []any{image}
						s.Step("SUBMIT-028", "ERR-020")
						refusal.ExpectField(refuse(ctx, rc.client(), submitBody(d.String("capability_id"), cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config."+name)
						checked |= 2
					}
				}
				if checked == 3 {
					break
				}
			}
			if checked&1 == 0 {
				s.Lacks("no available tool has a plain id array file field the suite can fill: SUBMIT-027 is left unverified")
			}
			if checked&2 == 0 {
				s.Lacks("no available image model has a file object array field: SUBMIT-028 is left unverified")
			}
		})

		f.Rule(rules("SUBMIT-036", "ERR-029")...).It("an unknown voice_id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := catalogue.TTSConfig(ctx, c)
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			refuse(ctx, c, submitBody("tts", cfg, need, map[string]any{"voice_id": "voc_" + framework.RandomHex(32)}), http.StatusNotFound, "not_found")
		})
	})
}

// oneJobPerKeySpecs registers the specs of the one job a key may hold.
func oneJobPerKeySpecs(f *framework.Framework) {
	Describe("submit: one job per key", func() {
		f.Rule(rules("SUBMIT-018", "SUBMIT-022", "SUBMIT-023", "ERR-015", "ERR-031", "CHECK-001")...).Needs(framework.Spends).It("while a job runs: the identical request replays it, a different one gets 409 submission_in_flight naming it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.VideoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			if !stillRunning(ctx, sp.c, j.id) {
				s.Lacks("the video job %s had already finished when the spec could resend it (the target renders faster than a running job can be observed)", j.id)
			}
			before := takeSnapshot(ctx, sp.c)
			s.Step("SUBMIT-022")
			// The identical request while the job runs: a replay of it ("replay: true: an already
			// running job was returned") or 409 submission_in_flight naming it ("a second submit
			// while one runs"); the text allows both readings (issue 35). Never a second job.
			again := sp.c.Post(ctx, "/generations", j.body, framework.Unjudged())
			if again.Status != http.StatusConflict && !stillRunning(ctx, sp.c, j.id) {
				s.Lacks("the video job %s finished before its resend was answered: the resend rightly started a job of its own", j.id)
			}
			if again.Status == http.StatusConflict {
				again.ExpectError(http.StatusConflict, "submission_in_flight")
				Expect(again.String("error.in_flight.generation_id")).To(Equal(j.id), "the refusal names the running job"+again.Describe())
			} else {
				again = sp.c.Post(ctx, "/generations", j.body).ExpectOK(http.StatusCreated)
				Expect(again.Bool("replay")).To(BeTrue(), "the identical request while the job runs is a replay"+again.Describe())
				Expect(again.String("generation_id")).To(Equal(j.id), again.Describe())
				Expect(again.Field("generation_ids")).To(Equal(j.r.Field("generation_ids")), again.Describe())
			}
			after := takeSnapshot(ctx, sp.c)
			Expect([]int64{after.available, after.held}).To(Equal([]int64{before.available, before.held}), "a replay charges and holds nothing new")
			Expect(after.newest).To(Equal(before.newest), "the resend starts no second job")
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			// ERR-015 rides along: an in_flight object of the wrong shape fails the REST description
			// on this very call, before the fields are read below.
			s.Step("SUBMIT-023", "ERR-031", "ERR-015")
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusConflict, "submission_in_flight")
			s.Step("SUBMIT-018", "ERR-015")
			Expect(r.String("error.in_flight.generation_id")).To(Equal(j.id), r.Describe())
			Expect(r.String("error.in_flight.status")).To(answer.OneOf(runningStatuses...), r.Describe())
		})

		f.Rule(rules("SUBMIT-024", "ERR-010", "ERR-008", "ERR-031", "ERR-015")...).Needs(framework.Spends, framework.SiblingKey).It("the identical request from another key of the workspace gets 409 submission_in_flight with retry_after_seconds", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.VideoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			other := sp.siblingKey(ctx, s)
			// Judged on the 409 only: the refusal's status is this spec's subject (SUBMIT-024), and a
			// replayed 201 that also broke the submit answer's description would be charged to
			// SUBMIT-003 and only block the spec; the refusal's body is judged on this very call
			// (issue 37: its in_flight object and retry_after_seconds against the description,
			// ERR-015 riding along as in the same key's spec). ExpectError checks the envelope the
			// text gives, and ERR-010 the Retry-After header when one is sent.
			r := refuse(ctx, other, j.body, http.StatusConflict, "submission_in_flight", framework.JudgedOn(http.StatusConflict))
			Expect(r.Int("error.retry_after_seconds")).To(BeNumerically(">=", 0), r.Describe())
			if _, has := r.Lookup("error.in_flight"); has {
				s.Step("ERR-015")
				Expect(r.String("error.in_flight.generation_id")).To(Equal(j.id), "in_flight names the running job the identical request waits on"+r.Describe())
				Expect(r.String("error.in_flight.status")).To(answer.OneOf(runningStatuses...), r.Describe())
			}
		})

		f.Rule("SUBMIT-037").Needs(framework.Spends, framework.SiblingKey).It("the slot is per key: a different request from another key of the workspace is not refused as in flight", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.VideoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			other := sp.siblingKey(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, other, "tts", cfg, map[string]any{"voice_id": catalogue.FirstVoice(ctx, other)})
			if !runningNow(ctx, sp.c, j.id) {
				s.Undecidable("the first key's job ended before the second key submitted", 0)
			}
			s.Spend(int(need))
			r := other.Post(ctx, "/generations", submitBody("tts", cfg, need, map[string]any{"voice_id": catalogue.FirstVoice(ctx, other)}))
			if r.Status == http.StatusCreated {
				DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, other, r.String("generation_id")) })
				return
			}
			if r.Status == http.StatusTooManyRequests {
				r.ExpectError(http.StatusTooManyRequests, "rate_limited") // the workspace render threshold is not shown
				return
			}
			Fail("a different request from another key of the workspace while the first key's job " + j.id + " runs must not be refused: one job per key, not per workspace" + r.Describe())
		})

		f.Rule(rules("CHECK-013", "CHECK-001", "ERR-030")...).Needs(framework.Spends, framework.Uploads).It("upload readiness before in-flight: while a job runs, a submit naming a not-finalized upload gets 409 input_not_ready", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
			if _, ok := props["reference_images"]; !ok {
				s.Lacks("the image model has no reference_images field: CHECK-013 is left unverified")
			}
			v := catalogue.VideoModel(ctx, sp.c)
			submit(ctx, s, sp.c, v.String("capability_id"), catalogue.CheapConfig(v), nil)
			cfg := catalogue.CheapConfig(d)
			_, need := estimateOf(ctx, sp.c, d.String("capability_id"), cfg, nil)
			up := sp.c.Post(ctx, "/uploads", uploads.Reservation()).ExpectOK(http.StatusCreated)
			cfg["reference_images"] = []any{map[string]any{"assetId": up.String("asset_id"), "alias": "image1"}}
			refuse(ctx, sp.c, submitBody(d.String("capability_id"), cfg, need, nil), http.StatusConflict, "input_not_ready")
		})
	})
}

// blockedRequestSpecs registers the specs of the requests a key's one job shapes after it: one that
// failed repeatedly is blocked, and a resend after the job finished is a new job.
func blockedRequestSpecs(f *framework.Framework) {
	Describe("submit: one job per key", func() {
		f.Rule(rules("CHECK-014", "CHECK-015", "CHECK-001", "ERR-019", "ERR-038", "ERR-008")...).Needs(framework.Spends, framework.TestInputs).It("a request that failed repeatedly is blocked; the block comes after in-flight and before estimate change", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			id := d.String("capability_id")
			cfg := catalogue.CheapConfig(d)
			_, need := estimateOf(ctx, sp.c, id, cfg, nil)
			body := submitBody(id, cfg, need, nil)
			failing := s.Force(ctx, sp.c, framework.Outcome{Kind: "render_fail", CapabilityID: id, Count: 10})
			var blocked *framework.Response
			for i := 0; i < 10 && blocked == nil; i++ {
				s.Spend(int(need))
				r := failing.Post(ctx, "/generations", body)
				if r.Status == http.StatusTooManyRequests {
					blocked = r
					break
				}
				r.ExpectOK(http.StatusCreated)
				Expect(s.Finish(ctx, sp.c, r.String("generation_id")).String("generation.status")).To(Equal("failed"))
			}
			if blocked == nil {
				s.Lacks("the same request failing 10 times in a row was not blocked: CHECK-014, CHECK-015 and ERR-038 are left unverified")
			}
			if s.HasControl() {
				s.ClearFaults(ctx)
			}
			s.Step("ERR-038")
			blocked.ExpectError(http.StatusTooManyRequests, "request_blocked")
			s.Step("ERR-019")
			Expect(blocked.String("error.blocked_reason")).NotTo(BeEmpty(), blocked.Describe())
			s.Step("ERR-008", "ERR-038")
			if ras, has := blocked.Lookup("error.retry_after_seconds"); has {
				n, ok := framework.AsInt(ras)
				Expect(ok && n >= 0).To(BeTrue(), blocked.Describe())
				// The text gives a temporary block retry_after_seconds; a Retry-After, when sent, agrees.
				if ra := blocked.Header.Get("Retry-After"); ra != "" {
					Expect(ra).To(Equal(fmt.Sprint(n)), "Retry-After agrees with retry_after_seconds"+blocked.Describe())
				}
			}
			changed := s.Force(ctx, sp.c, framework.Outcome{Kind: "estimate_changed", CapabilityID: id})
			s.Step("CHECK-015", "CHECK-001")
			refuse(ctx, changed, body, http.StatusTooManyRequests, "request_blocked")
			if s.HasControl() {
				s.ClearFaults(ctx)
			}
			running := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), nil)
			s.Step("CHECK-014", "CHECK-001")
			r := refuse(ctx, sp.c, body, http.StatusConflict, "submission_in_flight")
			Expect(r.String("error.in_flight.generation_id")).To(Equal(running.id), r.Describe())
		})

		f.Rule("SUBMIT-025").Needs(framework.Spends).It("resending after the job finished starts and charges a second job", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
			s.Finish(ctx, sp.c, j.id)
			a, h := balanceOf(ctx, sp.c)
			s.Spend(int(j.need))
			// Unjudged: whether this answer is a replay is this spec's subject (SUBMIT-025); judged, a
			// replayed answer that also broke the submit answer's description would be charged to
			// SUBMIT-003 and only block the spec. Other specs judge the submit answer.
			again := sp.c.Post(ctx, "/generations", j.body, framework.Unjudged()).ExpectOK(http.StatusCreated)
			Expect(again.Bool("replay")).To(BeFalse(), "the first job finished: the resend starts a new job, not a replay"+again.Describe())
			Expect(again.String("generation_id")).NotTo(Equal(j.id), "a new job, a new id"+again.Describe())
			if sp.ws != nil {
				a2, h2 := balanceOf(ctx, sp.c)
				Expect(a-a2).To(Equal(j.need), "the second job holds again")
				Expect(h2 - h).To(Equal(j.need))
			}
		})
	})
}

// keySlotSpecs registers the specs of the 10-minute key slot and the render brake.
func keySlotSpecs(f *framework.Framework) {
	Describe("submit: the key slot and the render brake", func() {
		f.Rule(rules("SUBMIT-020", "ERR-031")...).Needs(framework.TestInputs, framework.Spends, framework.Slow, framework.RealTime).WaitsOut(contract.SlotLifetime).It("a job stops holding its key's slot 10 minutes after submit, though it still runs", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				slotWithoutControl(ctx, s)
				return
			}
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			capID := d.String("capability_id")
			s.QueueFaultIn(ctx, sp.ws.ID, map[string]any{"kind": "slow_render", "seconds": 1800}, capID, 1, "")
			first := submit(ctx, s, sp.c, capID, catalogue.CheapConfig(d), nil)
			next := catalogue.CheapConfig(d)
			_, need := estimateOf(ctx, sp.c, capID, next, nil)
			r := refuse(ctx, sp.c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
			Expect(r.String("error.in_flight.generation_id")).To(Equal(first.id), r.Describe())
			s.Advance(ctx, contract.SlotLifetime.Seconds()-10)
			refuse(ctx, sp.c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
			s.Advance(ctx, 15)
			g := readGen(ctx, sp.c, first.id)
			Expect(g.String("generation.status")).To(answer.OneOf(runningStatuses...), "the slow_render fault keeps the first job running past 10 minutes"+g.Describe())
			s.Spend(int(need))
			again := sp.c.Post(ctx, "/generations", submitBody(capID, next, need, nil)).ExpectOK(http.StatusCreated)
			Expect(again.Bool("replay")).To(BeFalse(), again.Describe())
			Expect(again.String("generation_id")).NotTo(Equal(first.id), again.Describe())
			DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, sp.c, again.String("generation_id")) })
			Expect(readGen(ctx, sp.c, first.id).String("generation.status")).To(answer.OneOf(runningStatuses...), "the first job still runs")
		})

		f.Rule("SUBMIT-021").Needs(framework.Spends).ControlBecause(becauseAppJob).It("a job started in the app holds no key's slot: the key submits a different job beside it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			s.QueueFaultIn(ctx, sp.ws.ID, map[string]any{"kind": "slow_render", "seconds": 1800}, "tts", 1, "")
			app, err := s.Control().StartAppGeneration(ctx, sp.ws.ID, "tts", cfg)
			hookDone(s, err)
			DeferCleanup(func(ctx SpecContext) {
				_, _ = s.Control().Call(ctx, http.MethodPost, "/generations/"+app+"/fail", map[string]any{})
			})
			g := readGen(ctx, sp.c, app)
			Expect(g.String("generation.status")).To(answer.OneOf(runningStatuses...), "the app job runs (slow_render)"+g.Describe())
			j := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), nil)
			Expect(j.r.Bool("replay")).To(BeFalse(), j.r.Describe())
			Expect(j.id).NotTo(Equal(app), j.r.Describe())
			s.Finish(ctx, sp.c, j.id)
		})

		f.Rule(rules("ERR-043", "ERR-036")...).Needs(framework.Spends).ControlBecause(becauseRenderThreshold).It("too many renders at once answers 429 rate_limited without retry_after_seconds; a bucket refusal carries it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			setRenderLimit(ctx, s, sp.ws.ID, 1)
			v := catalogue.VideoModel(ctx, sp.c)
			running := submit(ctx, s, sp.c, v.String("capability_id"), catalogue.CheapConfig(v), nil)
			Expect(readGen(ctx, sp.c, running.id).String("generation.status")).To(answer.OneOf(runningStatuses...))
			other, _ := sp.newKey(ctx, framework.KeyOptions{})
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, other, "tts", cfg, nil)
			r := refuse(ctx, other, submitBody("tts", cfg, need, nil), http.StatusTooManyRequests, "rate_limited")
			Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
			Expect(answer.ObjectAt(r, "error")).NotTo(HaveKey("retry_after_seconds"), "the render brake carries no retry_after_seconds"+r.Describe())
			Expect(r.Header.Get("Retry-After")).To(BeEmpty(), "the render brake sends no Retry-After"+r.Describe())
			// The other flavour: a key over its agent_submit bucket is told how long to wait.
			small, _ := sp.newKey(ctx, framework.KeyOptions{Buckets: map[string]int{"agent_submit": 1}})
			small.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)).ExpectError(http.StatusTooManyRequests, "rate_limited")
			buckets.ExpectRefusal(small.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)))
			// Once the running job ends, the brake lets the same request through.
			s.Finish(ctx, sp.c, running.id)
			s.Spend(int(need))
			ok := other.Post(ctx, "/generations", submitBody("tts", cfg, need, nil)).ExpectOK(http.StatusCreated)
			DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, other, ok.String("generation_id")) })
		})
	})
}

// unusableUploadSpecs registers the specs of submits naming uploads that are not usable.
func unusableUploadSpecs(f *framework.Framework) {
	Describe("submit: naming uploads that are not usable", func() {
		f.Rule(rules("UPLOAD-041", "ERR-030")...).Needs(framework.Uploads).It("an upload reserved but not finalized answers 409 input_not_ready naming it, with or without its bytes", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			capID, cfg, need := referenceModel(ctx, c)
			bare := uploads.Reserve(ctx, c, "a.png", "image/png", 217).String("asset_id")
			r := refuse(ctx, c, submitBody(capID, naming(cfg, bare), need*2, nil), http.StatusConflict, "input_not_ready")
			refusal.ExpectAssetIDsIfNamed(r, bare)
			fx, data := fixtures.Get("image.png")
			sent := uploads.ReservePut(ctx, s, c, fx.Name, fx.ContentType, data)
			r = refuse(ctx, c, submitBody(capID, naming(cfg, sent), need*2, nil), http.StatusConflict, "input_not_ready")
			refusal.ExpectAssetIDsIfNamed(r, sent)
		})

		f.Rule(rules("UPLOAD-042", "ERR-035")...).Needs(framework.Uploads, framework.Profile).It("an upload the content check refused answers 422 moderation_blocked naming it", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			capID, cfg, need := referenceModel(ctx, c)
			// What the content check flags is the service's own: the image the profile declares it
			// flags (flagged_upload), else the suite forces the verdict on a sample image's finalize
			// (the scan_flag outcome: a test input or control's fault).
			flagged, fin, _ := flaggedUpload(ctx, s, c, "image.png")
			expectFlagged(fin)
			r := refuse(ctx, c, submitBody(capID, naming(cfg, flagged), need*2, nil), http.StatusUnprocessableEntity, "moderation_blocked")
			refusal.ExpectAssetIDs(r, flagged)
		})

		f.Rule(rules("UPLOAD-043", "ERR-029")...).Needs(framework.Uploads).It("another workspace's upload answers 404 not_found naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			capID, cfg, need := referenceModel(ctx, c)
			theirs, fin := uploads.Fixture(ctx, s, s.OtherClient(), "image.png")
			fin.ExpectOK(http.StatusOK)
			r := refuse(ctx, c, submitBody(capID, naming(cfg, theirs), need*2, nil), http.StatusNotFound, "not_found")
			refusal.ExpectAssetIDs(r, theirs)
		})
	})
}

// invalidOrOverCap judges a submit that breaks both the max_credits check and config validity:
// either refusal, each in full (CHECK-020).
func invalidOrOverCap(r *framework.Response) {
	GinkgoHelper()
	if r.Status == http.StatusPaymentRequired {
		r.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
		return
	}
	r.ExpectError(http.StatusBadRequest, "invalid_config")
}

// lowBalanceCaps is the per-generation limit of the low-balance key's workspace, the text's
// default (the profile declares that key's workspace with its limits left at the defaults: the
// balance answer's shape, where the limits show, is not shown), skipping, naming the setting,
// unless a hold of need is above both that limit and the workspace's available credits.
func lowBalanceCaps(ctx context.Context, s *framework.Spec, c *framework.Client, need int64) int64 {
	GinkgoHelper()
	limit := contract.PerGenerationCap
	if avail := availableOf(ctx, c); need <= limit || need <= avail {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: a hold of %d is not above both the per-generation limit (%d) and the balance (%d) "+
			"of low_balance_key's workspace: declare a key of a workspace with the default limits and a balance under it", need, limit, avail)))
	}
	return limit
}

// slotWithoutControl is SUBMIT-020 on the main key without the control API: the first job renders
// 11 minutes longer (the slow_render test input on its submit: past the slot, and not so long that
// the specs after it wait on it), and the 10 minutes of the slot pass in real time (--real-time).
func slotWithoutControl(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := s.Client()
	d := catalogue.ImageModel(ctx, c)
	capID := d.String("capability_id")
	slow := s.Force(ctx, c, framework.Outcome{Kind: "slow_render", Seconds: 660, CapabilityID: capID})
	first := submit(ctx, s, slow, capID, catalogue.CheapConfig(d), nil)
	DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, c, first.id) })
	next := catalogue.CheapConfig(d)
	_, need := estimateOf(ctx, c, capID, next, nil)
	r := refuse(ctx, c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
	Expect(r.String("error.in_flight.generation_id")).To(Equal(first.id), r.Describe())
	// The waits are counted from here, a few calls after the submit: 20 seconds short of the slot's
	// end leaves room for those calls, and 25 seconds more is past it.
	s.WaitOut(ctx, contract.SlotLifetime-20*time.Second)
	refuse(ctx, c, submitBody(capID, next, need, nil), http.StatusConflict, "submission_in_flight")
	s.WaitOut(ctx, 25*time.Second)
	g := readGen(ctx, c, first.id)
	Expect(g.String("generation.status")).To(answer.OneOf(runningStatuses...), "the slow_render outcome keeps the first job running past 10 minutes"+g.Describe())
	s.Spend(int(need))
	again := c.Post(ctx, "/generations", submitBody(capID, next, need, nil)).ExpectOK(http.StatusCreated)
	Expect(again.Bool("replay")).To(BeFalse(), again.Describe())
	Expect(again.String("generation_id")).NotTo(Equal(first.id), again.Describe())
	DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, c, again.String("generation_id")) })
	Expect(readGen(ctx, c, first.id).String("generation.status")).To(answer.OneOf(runningStatuses...), "the first job still runs")
}

// Why these specs stay at the control tier (Decl.ControlBecause): an operation only the app or
// control can do.
const (
	becauseAppJob          = "it starts a job in the app (control's app generation): the public API starts agent jobs only"
	becauseRenderThreshold = "it sets the workspace's concurrent-render threshold to 1: the text does not show that " +
		"threshold, so no profile can declare a value that trips it"
)
