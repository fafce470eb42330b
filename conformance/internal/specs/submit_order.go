package specs

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// checkOrderSpecs registers the specs of the submit check order.
func checkOrderSpecs(f *framework.Framework) {
	Describe("submit: check order", func() {
		f.Rule(rules("CHECK-002", "CHECK-001", "RATE-003", "ERR-036")...).Needs(framework.ReadKey).It("rate limit before scope: a read-only key past its 20 agent_submit calls gets 429, not 403", func(ctx context.Context, s *framework.Spec) {
			c := s.ReadClient()
			if !s.HasControl() {
				// A shared read key may have spent part of its bucket in earlier specs: the
				// refusal then comes sooner. Every answer before it is the scope refusal.
				for i := 0; i < 20; i++ {
					r := c.Post(ctx, "/generations", ttsBody(ctx, c, 10), framework.KeepRefusal())
					if r.Status == http.StatusTooManyRequests {
						buckets.ExpectRefusal(r)
						return
					}
					r.ExpectError(http.StatusForbidden, "insufficient_scope")
				}
				buckets.ExpectRefusal(c.Post(ctx, "/generations", ttsBody(ctx, c, 10), framework.KeepRefusal()))
				return
			}
			for i := 0; i < 20; i++ {
				c.Post(ctx, "/generations", ttsBody(ctx, c, 10)).ExpectError(http.StatusForbidden, "insufficient_scope")
			}
			buckets.ExpectRefusal(c.Post(ctx, "/generations", ttsBody(ctx, c, 10)))
		})

		f.Rule(rules("CHECK-003", "CHECK-001", "ERR-022")...).Needs(framework.ReadKey).It("scope before body: a read-only key sending malformed JSON gets 403 insufficient_scope", func(ctx context.Context, s *framework.Spec) {
			s.ReadClient().Do(ctx, http.MethodPost, "/generations", framework.RawBody([]byte(`{"capability_id":`), "application/json"), framework.Invalid()).
				ExpectError(http.StatusForbidden, "insufficient_scope")
		})

		f.Rule(rules("SUBMIT-014", "CHECK-019", "ERR-011", "ERR-012", "ERR-025")...).It("max_credits one below max_credits_needed answers 402 max_credits_exceeded naming the number that passes", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d := catalogue.ImageModel(ctx, c)
			cfg := catalogue.CheapConfig(d)
			delete(cfg, "count") // schema defaults fill missing pricing fields
			_, need := estimateOf(ctx, c, d.String("capability_id"), cfg, nil)
			r := refuse(ctx, c, submitBody(d.String("capability_id"), cfg, need-1, nil), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
			Expect(r.Int("error.limit.required_credits")).To(Equal(need), "required_credits is the estimate's max_credits_needed"+r.Describe())
		})

		f.Rule(rules("CHECK-019", "CHECK-001", "SUBMIT-014", "ERR-025")...).It("max_credits before config validity: a config with an unknown key sent with max_credits 1 gets 402 max_credits_exceeded", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := catalogue.TTSConfig(ctx, c)
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			bad := catalogue.Clone(cfg)
			bad["conformance_bogus"] = true
			r := refuse(ctx, c, submitBody("tts", bad, 1, nil), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
			Expect(r.Int("error.limit.required_credits")).To(Equal(need), "the price checks price the config as sent, before config validity"+r.Describe())
		})

		f.Rule(rules("ERR-013", "CORE-019")...).Needs(framework.Spends).It("resubmitting with max_credits equal to limit.required_credits is accepted", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			cfg := catalogue.TTSConfig(ctx, c)
			voice := catalogue.FirstVoice(ctx, c)
			r := refuse(ctx, c, submitBody("tts", cfg, 1, map[string]any{"voice_id": voice}), http.StatusPaymentRequired, "max_credits_exceeded")
			need := r.Int("error.limit.required_credits")
			s.Spend(int(need))
			c.Post(ctx, "/generations", submitBody("tts", cfg, need, map[string]any{"voice_id": voice})).ExpectOK(http.StatusCreated)
		})

		f.Rule(rules("CHECK-007", "CHECK-001", "ERR-025")...).It("max_credits before spend caps: a config above the 600-credit cap sent with max_credits 1 gets max_credits_exceeded", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			id, cfg, need := catalogue.OverCapConfig(ctx, c)
			r := refuse(ctx, c, submitBody(id, cfg, 1, nil), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
			Expect(r.Int("error.limit.required_credits")).To(Equal(need), r.Describe())
		})

		f.Rule(rules("CHECK-008", "CHECK-001", "ERR-027", "ERR-014")...).It("spend caps before credits: an empty wallet and a hold above the cap answer spend_limit_exceeded", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's low-balance key: a hold above its workspace's per-generation limit
				// (the text's default 600, or what its balance shows) and above its balance.
				c := s.RoleKey(framework.LowBalanceKey)
				id, cfg, need := catalogue.OverCapConfig(ctx, c)
				limit := lowBalanceCaps(ctx, s, c, need)
				r := refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
				Expect(r.String("error.limit.bound_by")).To(Equal("org_per_generation"), r.Describe())
				refusal.ExpectLimitAmounts(s, r, &limit, nil)
				return
			}
			sp := newSpender(ctx, s)
			s.SetCredits(ctx, sp.ws.ID, 0)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 1})
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("org_per_generation"), r.Describe())
			refusal.ExpectLimitAmounts(s, r, ptr(int64(1)), nil)
		})

		f.Rule(rules("CHECK-009", "CHECK-001", "ERR-026", "ERR-018")...).It("credits before config validity: an empty wallet and an unknown config key answer insufficient_credits", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's low-balance key: a tts hold above its balance, with an unknown key.
				c, cfg, need, avail := lowBalanceHold(ctx, s)
				cfg["conformance_bogus"] = true
				r := refuse(ctx, c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "insufficient_credits")
				Expect(r.Int("error.shortfall")).To(Equal(need-avail), "shortfall = padded hold - available"+r.Describe())
				return
			}
			sp := newSpender(ctx, s)
			s.SetCredits(ctx, sp.ws.ID, 0)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			cfg["conformance_bogus"] = true
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "insufficient_credits")
			Expect(r.Int("error.shortfall")).To(Equal(need), "shortfall = padded hold - available (0)"+r.Describe())
		})
	})
}

// checkOrderPlanSpecs registers the specs of the checks after credits: config validity before plan,
// moderation before upload readiness, and a price that cannot be computed.
func checkOrderPlanSpecs(f *framework.Framework) {
	Describe("submit: check order", func() {
		Describe("with a requires_plan capability", func() {
			// planSetup finds a requires_plan capability, reads its detail through a workspace on the
			// plan it needs, and returns a spender on the default plan whose caps and wallet cannot refuse.
			// Without control the detail is read with the profile's business-plan key and the main key
			// submits, the capability's hold within its limits and balance.
			planSetup := func(ctx context.Context, s *framework.Spec) (spender, *framework.Response, map[string]any) {
				GinkgoHelper()
				row := catalogue.WithStatus(catalogue.Rows(ctx, s.Client()), "requires_plan")
				if row == nil {
					s.Lacks("the target lists no requires_plan capability: CHECK-010 and CHECK-011 are left unverified")
				}
				if !s.HasControl() {
					rc := s.RoleKey(framework.BusinessKey)
					d := catalogue.Detail(ctx, rc, row["capability_id"].(string))
					cfg := catalogue.Clone(answer.ObjectAt(d, "example_config"))
					_, need := estimateOf(ctx, rc, d.String("capability_id"), cfg, nil)
					perGeneration, _ := s.WorkspaceLimits()
					if avail := availableOf(ctx, s.Client()); need > perGeneration || need > avail {
						framework.SkipFor(framework.LacksState(fmt.Sprintf("a hold of %d for %s is above the main key's per-generation limit (%d) or balance (%d), "+
							"which are checked before the config and the plan", need, d.String("capability_id"), perGeneration, avail)))
					}
					return spender{c: s.Client()}, d, cfg
				}
				rich := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: row["required_plan"].(string)})
				rc, _ := rich.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
				d := catalogue.Detail(ctx, rc, row["capability_id"].(string))
				sp := newSpender(ctx, s)
				s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 1000000, "daily_credits": 1000000})
				s.SetCredits(ctx, sp.ws.ID, 1000000)
				return sp, d, catalogue.Clone(answer.ObjectAt(d, "example_config"))
			}

			f.Rule(rules("CHECK-010", "CHECK-001")...).Needs(framework.BusinessKey).It("config validity before plan: an invalid config for a requires_plan capability gets 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				sp, d, cfg := planSetup(ctx, s)
				id := d.String("capability_id")
				cfg["conformance_bogus"] = true
				refuse(ctx, sp.c, submitBody(id, cfg, 100000, nil), http.StatusBadRequest, "invalid_config")
			})

			f.Rule(rules("CHECK-011", "CHECK-001", "ERR-023", "ERR-017")...).Needs(framework.BusinessKey, framework.Profile).It("plan before moderation: a requires_plan capability with a refused prompt gets 403 required_plan", func(ctx context.Context, s *framework.Spec) {
				sp, d, cfg := planSetup(ctx, s)
				id := d.String("capability_id")
				// The profile's refused_prompt as the capability's free text, else a forced moderation_block.
				rf := refusedOf(ctx, s, sp.c, d, cfg)
				r := refuse(ctx, rf.c, submitBody(id, rf.cfg, 100000, nil), http.StatusForbidden, "required_plan")
				Expect(r.String("error.capability_status")).To(Equal("requires_plan"), r.Describe())
				r.String("error.required_plan")
			})
		})

		f.Rule(rules("CHECK-012", "CHECK-001", "ERR-035", "ERR-030")...).Needs(framework.Profile, framework.Uploads).It("moderation before upload readiness: a refused prompt naming a not-finalized upload gets 422, without the fault 409 input_not_ready", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
			if _, ok := props["reference_images"]; !ok {
				s.Lacks("the image model has no reference_images field: CHECK-012 is left unverified")
			}
			base := catalogue.CheapConfig(d)
			_, need := estimateOf(ctx, sp.c, d.String("capability_id"), base, nil)
			up := sp.c.Post(ctx, "/uploads", uploads.Reservation()).ExpectOK(http.StatusCreated)
			cfg := catalogue.Clone(base)
			cfg["reference_images"] = []any{map[string]any{"assetId": up.String("asset_id"), "alias": "image1"}}
			r := refuse(ctx, sp.c, submitBody(d.String("capability_id"), cfg, need, nil), http.StatusConflict, "input_not_ready")
			refusal.ExpectAssetIDsIfNamed(r, up.String("asset_id"))
			// The profile's refused_prompt as the prompt, else a forced moderation_block. A declared
			// prompt is first shown refused on its own, so that a 409 below is the server's order and
			// not a prompt its moderation lets pass.
			rf := refusedOf(ctx, s, sp.c, d, cfg)
			if rf.natural {
				refusedOf(ctx, s, sp.c, d, base).expectBlocked(ctx, s, d.String("capability_id"), need)
			}
			refuse(ctx, rf.c, submitBody(d.String("capability_id"), rf.cfg, need, nil), http.StatusUnprocessableEntity, "moderation_blocked")
		})

		f.Rule(rules("CHECK-020")...).It("a config whose price cannot be computed (pricing field of the wrong type) fails at config validity even with max_credits 1", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			key := catalogue.ScriptKey(ctx, c, "tts")
			// max_credits 1 breaks the max_credits check too, which the check order puts first: the
			// text does not say whether a price that cannot be computed is compared at all, so
			// either refusal passes (issue 35); accepting the submit never does.
			r := refuseBy(ctx, c, submitBody("tts", catalogue.ExampleWith(ctx, c, "tts", map[string]any{key: 12345}), 1, nil), invalidOrOverCap)
			if r.Status == http.StatusBadRequest {
				refusal.ExpectField(r, "config."+key)
			}
			d := catalogue.ImageModel(ctx, c)
			cfg := catalogue.CheapConfig(d)
			cfg["count"] = "two"
			refuseBy(ctx, c, submitBody(d.String("capability_id"), cfg, 1, nil), invalidOrOverCap)
		})
	})
}

// checkOrderFaultSpecs registers the specs of the checks a capability's state decides: one that
// will not run has no price, and the faults that come after every check.
func checkOrderFaultSpecs(f *framework.Framework) {
	Describe("submit: check order", func() {
		f.Rule(rules("CHECK-021", "ERR-016", "ERR-028")...).It("a capability that will not run has no price: max_credits 1 gets 404 capability_unavailable, not 402", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			// As CHECK-020: max_credits 1 is checked before availability, and whether a capability
			// without a price is compared with it is not said: 402 max_credits_exceeded passes too.
			r := refuseBy(ctx, c, submitBody("no_such_capability_"+framework.RandomHex(8), map[string]any{}, 1, nil), func(r *framework.Response) {
				GinkgoHelper()
				if r.Status == http.StatusPaymentRequired {
					r.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
					return
				}
				r.ExpectError(http.StatusNotFound, "capability_unavailable")
				Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
			})
			_ = r
			rows := catalogue.Rows(ctx, c)
			for _, st := range []string{"coming_soon", "unknown"} {
				if row := catalogue.WithStatus(rows, st); row != nil {
					id := row["capability_id"].(string)
					cfg, valid := catalogue.NotLiveConfig(ctx, c, id)
					refuseBy(ctx, c, submitBody(id, cfg, 1, nil), func(r *framework.Response) {
						GinkgoHelper()
						if r.Status == http.StatusPaymentRequired {
							r.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
							return
						}
						catalogue.ExpectNotLive(r, st, valid)
					})
				}
			}
		})

		Describe("faults", func() {
			fault := func(rule, kind string, status int, code string, extra ...string) {
				f.Rule(rules(append([]string{rule}, extra...)...)...).Needs(framework.TestInputs).It(fmt.Sprintf("with fault %s forced a submit answers %d %s and spends nothing", kind, status, code), func(ctx context.Context, s *framework.Spec) {
					c := s.Client()
					cfg := catalogue.TTSConfig(ctx, c)
					_, need := estimateOf(ctx, c, "tts", cfg, nil)
					refuse(ctx, s.Force(ctx, c, framework.Outcome{Kind: kind, CapabilityID: "tts"}), submitBody("tts", cfg, need, nil), status, code)
				})
			}
			fault("SUBMIT-032", "moderation_unavailable", http.StatusServiceUnavailable, "moderation_unavailable", "ERR-041")
			fault("SUBMIT-033", "estimate_changed", http.StatusConflict, "estimate_changed", "ERR-032")
			fault("ERR-040", "provider_unavailable", http.StatusBadGateway, "provider_unavailable")
			fault("ERR-042", "pricing_unavailable", http.StatusServiceUnavailable, "pricing_unavailable")

			f.Rule(rules("SUBMIT-034", "ERR-035")...).Needs(framework.Profile).It("a submit whose prompt moderation refuses answers 422 moderation_blocked and spends nothing", func(ctx context.Context, s *framework.Spec) {
				// The profile's refused_prompt as an image model's prompt, else a forced moderation_block.
				c := s.Client()
				d := catalogue.ImageModel(ctx, c)
				base := catalogue.CheapConfig(d)
				_, need := estimateOf(ctx, c, d.String("capability_id"), base, nil)
				refusedOf(ctx, s, c, d, base).expectBlocked(ctx, s, d.String("capability_id"), need)
			})

			notPriced := func(ctx context.Context, s *framework.Spec, c *framework.Client) string {
				GinkgoHelper()
				for _, row := range catalogue.Rows(ctx, c) {
					if row["status"] != "available" {
						continue
					}
					d := catalogue.Detail(ctx, c, row["capability_id"].(string))
					cfg := answer.ObjectAt(d, "example_config")
					if catalogue.NamesUpload(cfg) {
						continue
					}
					if r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}); r.Status == http.StatusConflict {
						r.ExpectError(http.StatusConflict, "not_priced")
						return d.String("capability_id")
					}
				}
				s.Lacks("the target has no available capability without a published price: CHECK-016 and CHECK-017 are left unverified")
				return ""
			}

			f.Rule(rules("CHECK-016", "CHECK-001", "ERR-032")...).Needs(framework.TestInputs).It("estimate change before not priced: both at once answer 409 estimate_changed", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				id := notPriced(ctx, s, c)
				d := catalogue.Detail(ctx, c, id)
				refuse(ctx, s.Force(ctx, c, framework.Outcome{Kind: "estimate_changed", CapabilityID: id}), submitBody(id, answer.ObjectAt(d, "example_config"), 50, nil), http.StatusConflict, "estimate_changed")
			})

			f.Rule(rules("CHECK-017", "CHECK-001", "ERR-033")...).Needs(framework.TestInputs).It("not priced before pricing: both at once answer 409 not_priced, not 503", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				id := notPriced(ctx, s, c)
				d := catalogue.Detail(ctx, c, id)
				refuse(ctx, s.Force(ctx, c, framework.Outcome{Kind: "pricing_unavailable", CapabilityID: id}), submitBody(id, answer.ObjectAt(d, "example_config"), 50, nil), http.StatusConflict, "not_priced")
			})
		})
	})
}
