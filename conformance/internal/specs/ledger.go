package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mediaspec/mediaspec/internal/contract"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
)

// ledgerSpecs registers the specs of the credit balance, holds, charges and spend limits.
func ledgerSpecs(f *framework.Framework) {
	balanceSpecs(f)
	holdSpecs(f)
	spendLimitSpecs(f)
	spendDailySpecs(f)
	spendWindowSpecs(f)
}

// balanceSpecs registers the specs of the credit balance.
func balanceSpecs(f *framework.Framework) {
	Describe("ledger: credit balance", func() {
		f.Rule("LEDGER-018", "LEDGER-019", "LEDGER-020", "LEDGER-021", "LEDGER-011", "CORE-002", "CORE-010").It("answers the balance, its sum and the limits with their defaults", func(ctx context.Context, s *framework.Spec) {
			// The balance's shape is not shown, so ok is checked there only when sent: CORE-002 is
			// also held on an answer the text shows with ok (GET /voices: ok, voices[], total, ...).
			s.Step("CORE-002")
			s.Client().Get(ctx, "/voices", framework.Query("limit", "1")).ExpectOK(http.StatusOK)
			s.Step("LEDGER-018", "CORE-002")
			r := s.Client().Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), r.Describe())
			// The balance's fields are the reference's ("GET /credits/balance answer shape: not
			// shown"): LEDGER-018 to LEDGER-021 are judged only with --strict, so a failure below
			// under their steps alone never fails a run that is not strict.
			s.Step("LEDGER-018")
			avail, held := r.Int("available_credits"), r.Int("held_credits")
			r.Int("low_balance_threshold_credits")
			s.Step("LEDGER-019")
			Expect(r.Int("balance_credits")).To(Equal(avail+held), "balance = available + held"+r.Describe())
			s.Step("CORE-010")
			if _, has := r.Lookup("summary"); has || s.Strict() {
				Expect(r.String("summary")).NotTo(BeEmpty(), r.Describe())
			}
			s.Step("LEDGER-020")
			daily := r.Int("limits.daily_credits")
			spent := r.Int("limits.daily_spent_credits")
			r.Int("limits.per_generation_credits")
			r.Int("limits.key_spent_credits")
			kb, present := r.Lookup("limits.key_budget_credits")
			Expect(present).To(BeTrue(), "limits.key_budget_credits is present (null without a budget)"+r.Describe())
			kr, present := r.Lookup("limits.key_remaining_credits")
			Expect(present).To(BeTrue(), r.Describe())
			s.Step("LEDGER-021")
			Expect(r.Int("limits.daily_remaining_credits")).To(Equal(max(daily-spent, 0)), r.Describe())
			s.Step("LEDGER-011")
			if kb == nil {
				Expect(kr).To(BeNil(), "without a key budget key_remaining_credits is null, not 0"+r.Describe())
			}
		})

		f.Rule("LEDGER-020", "LEDGER-011", "LEDGER-010").It("a fresh workspace reads the default limits: 600 per generation, 2000 daily, no key budget", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The main key's workspace reads the limits the profile declares (the text's
				// defaults where it declares none), and the key has no budget of its own.
				perGeneration, daily := s.WorkspaceLimits()
				r := s.Client().Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
				expectBalance(s, r, "limits.per_generation_credits", perGeneration)
				expectBalance(s, r, "limits.daily_credits", daily)
				expectBalance(s, r, "limits.key_budget_credits", nil)
				expectBalance(s, r, "limits.key_remaining_credits", nil)
				return
			}
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			r := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			expectBalance(s, r, "limits.per_generation_credits", contract.PerGenerationCap)
			expectBalance(s, r, "limits.daily_credits", contract.DailyBudget)
			expectBalance(s, r, "limits.daily_spent_credits", 0)
			expectBalance(s, r, "limits.daily_remaining_credits", contract.DailyBudget)
			expectBalance(s, r, "limits.key_budget_credits", nil)
			expectBalance(s, r, "limits.key_remaining_credits", nil)
			expectBalance(s, r, "held_credits", 0)
		})
	})
}

// holdSpecs registers the specs of holds and charges.
func holdSpecs(f *framework.Framework) {
	Describe("ledger: holds and charges", func() {
		f.Rule("LEDGER-001", "SUBMIT-007", "SUBMIT-008", "LEDGER-019").Needs(framework.Spends).It("a submit holds the padded estimate, not max_credits: available falls and held rises by credits_held", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			if sp.ws == nil {
				settleOwnWork(ctx, s, sp.c)
			}
			a0, h0 := balanceOf(ctx, sp.c)
			s.Spend(int(need))
			sent := time.Now()
			r := sp.c.Post(ctx, "/generations", submitBody("tts", cfg, need+25, nil)).ExpectOK(http.StatusCreated)
			s.Step("SUBMIT-007")
			Expect(r.Int("credits.credits_held")).To(Equal(need), "the hold is max_credits_needed; max_credits is only a cap"+r.Describe())
			s.Step("LEDGER-019")
			b := readBalance(ctx, sp.c)
			a1, h1 := b.available, b.heldOf(sp.c)
			if id := r.String("generation_id"); !runningNow(ctx, sp.c, id) {
				// The job ended (its hold settled) by the time it was read: whether the balance was
				// read before or after that cannot be told.
				s.Undecidable("the tts job "+id+" ended before the spec could tell its hold was still open when the balance was read", time.Since(sent))
			}
			if b.hasSum {
				Expect(b.total).To(Equal(a1+h1), "the whole balance is available plus held while a hold is open"+b.r.Describe())
			}
			s.Step("LEDGER-001")
			Expect(a0-a1).To(Equal(need), "available_credits falls by the hold")
			Expect(h1-h0).To(Equal(need), "held_credits rises by the hold")
			s.Step("SUBMIT-008")
			Expect(r.Int("credits.wallet_balance")).To(Equal(a1), "wallet_balance is available_credits right after the hold"+r.Describe())
		})

		f.Rule("SUBMIT-008").Needs(framework.Spends).It("a variants submit's wallet_balance is available_credits after every sibling's hold, not the first one's", func(ctx context.Context, s *framework.Spec) {
			// A variants submit is one job holding every take ("each charged"): its answer is sent
			// when the work is accepted, so its wallet_balance is read after all the siblings' holds.
			sp := newSpender(ctx, s)
			if sp.ws == nil {
				settleOwnWork(ctx, s, sp.c)
			}
			sent := time.Now()
			j := videoBatch(ctx, s, sp.c)
			b := readBalance(ctx, sp.c)
			for _, id := range j.ids {
				if !runningNow(ctx, sp.c, id) {
					s.Undecidable("sibling "+id+" ended before the spec could tell every hold was still open when the balance was read", time.Since(sent))
				}
			}
			s.Step("SUBMIT-008")
			Expect(j.r.Int("credits.wallet_balance")).To(Equal(b.available), "wallet_balance of a variants submit is available_credits after every sibling's hold"+j.r.Describe()+b.r.Describe())
		})

		f.Rule("LEDGER-002", "GEN-017", "CORE-020").Needs(framework.Spends).It("a completed job with an exact estimate is charged the estimate's credits, not the padded hold", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.ImageModel(ctx, sp.c)
			cfg := catalogue.CheapConfig(d)
			est, _ := estimateOf(ctx, sp.c, d.String("capability_id"), cfg, nil)
			if est.Bool("is_ceiling") {
				s.Lacks("the image model's estimate is a ceiling, not an exact price: LEDGER-002 and CORE-020 need an exact one")
			}
			before := availableOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cfg, nil)
			Expect(s.Finish(ctx, sp.c, j.id).String("generation.status")).To(Equal("completed"))
			r := readGen(ctx, sp.c, j.id)
			s.Step("GEN-017")
			Expect(r.Bool("generation.credits.terminal")).To(BeTrue(), "a completed job's charge is final"+r.Describe())
			s.Step("CORE-020")
			Expect(r.Int("generation.credits.credits_charged")).To(BeNumerically("<=", r.Int("generation.credits.credits_held")), "the charge is never above the hold"+r.Describe())
			s.Step("LEDGER-002")
			Expect(r.Int("generation.credits.credits_charged")).To(chargeOf(j.price), "an exact estimate's credits is the price charged; the pad is only held"+r.Describe())
			if sp.ws != nil {
				after, held := balanceOf(ctx, sp.c)
				Expect(held).To(BeZero())
				Expect(before-after).To(chargeOf(j.price), "the balance moved by the price, the rest of the hold was released")
			}
		})

		f.Rule("LEDGER-014", "LEDGER-002").Needs(framework.Spends).ControlBecause(becauseLimitMidJob).It("lowering a limit below a running job's hold does not stop it: it settles", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			a0 := availableOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), nil)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 0, "daily_credits": 0})
			w := s.Finish(ctx, sp.c, j.id)
			s.Step("LEDGER-014")
			Expect(w.String("generation.status")).To(Equal("completed"), "a lowered limit does not stop a started job"+w.Describe())
			s.Step("LEDGER-002")
			Expect(w.Int("generation.credits.credits_charged")).To(chargeOf(j.price), "the charge is the exact estimate's credits"+w.Describe())
			a1, h1 := balanceOf(ctx, sp.c)
			Expect(a0-a1).To(chargeOf(j.price), "the balance moved by the estimate's credits")
			Expect(h1).To(BeZero())
		})
	})
}

// spendLimitSpecs registers the specs of spend limits.
func spendLimitSpecs(f *framework.Framework) {
	Describe("ledger: spend limits", func() {
		f.Rule(rules("LEDGER-005", "LEDGER-007", "ERR-027", "ERR-014")...).It("the default per-generation cap of 600 refuses a hold above it even within max_credits", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			id, cfg, need := catalogue.OverCapConfig(ctx, sp.c)
			s.Step("LEDGER-005", "ERR-027")
			r := refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			s.Step("LEDGER-007")
			Expect(r.String("error.limit.bound_by")).To(Equal("org_per_generation"), r.Describe())
			s.Step("ERR-014")
			refusal.ExpectLimitAmounts(s, r, ptr(contract.PerGenerationCap), nil)
		})

		f.Rule(rules("LEDGER-006", "ERR-018", "ERR-026")...).It("a hold above available credits answers 402 insufficient_credits with the shortfall", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's key of a workspace too poor to submit: its balance, read where the
				// text names it, against a tts hold.
				c, cfg, need, avail := lowBalanceHold(ctx, s)
				r := refuse(ctx, c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "insufficient_credits")
				Expect(r.Int("error.shortfall")).To(Equal(need-avail), "shortfall = padded hold - available"+r.Describe())
				return
			}
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			s.SetCredits(ctx, sp.ws.ID, int(need-1))
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "insufficient_credits")
			Expect(r.Int("error.shortfall")).To(Equal(int64(1)), "shortfall = padded hold - available"+r.Describe())
		})

		f.Rule(rules("LEDGER-008", "ERR-014", "ERR-027")...).It("a key budget refuses a hold above it with bound_by api_key_budget", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's budget key: a tts hold above its declared budget.
				c := s.RoleKey(framework.BudgetKey)
				budget := s.BudgetKeyCredits()
				cfg := catalogue.TTSConfig(ctx, c)
				_, need := estimateOf(ctx, c, "tts", cfg, nil)
				if need <= budget {
					framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: budget_key_credits %d is at or above a tts hold of %d: declare a budget key with a smaller budget", budget, need)))
				}
				r := refuse(ctx, c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
				Expect(r.String("error.limit.bound_by")).To(Equal("api_key_budget"), r.Describe())
				refusal.ExpectLimitAmounts(s, r, &budget, nil)
				return
			}
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			c, _ := sp.newKey(ctx, framework.KeyOptions{BudgetCredits: ptr(int(need - 1))})
			r := refuse(ctx, c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			refusal.ExpectSpend(s, r, "api_key_budget", need-1, need-1)
		})

		f.Rule(rules("LEDGER-012", "ERR-027")...).Needs(framework.BudgetKey).It("a limit of 0 means no spend at all", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's budget key, when its declared budget is 0: the one limit of 0 the
				// profile offers (control sets the workspace limits to 0 too).
				c := s.RoleKey(framework.BudgetKey)
				if budget := s.BudgetKeyCredits(); budget != 0 {
					framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: budget_key_credits is %d, not 0: a limit of 0 needs a budget key of 0 credits, or the control API", budget)))
				}
				cfg := catalogue.TTSConfig(ctx, c)
				_, need := estimateOf(ctx, c, "tts", cfg, nil)
				refusal.ExpectSpend(s, refuse(ctx, c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "api_key_budget", 0, 0)
				return
			}
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			zero, _ := sp.newKey(ctx, framework.KeyOptions{BudgetCredits: ptr(0)})
			refusal.ExpectSpend(s, refuse(ctx, zero, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "api_key_budget", 0, 0)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": 0})
			refusal.ExpectSpend(s, refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", 0, 0)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": nil, "per_generation_credits": 0})
			r := refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("org_per_generation"), r.Describe())
			refusal.ExpectLimitAmounts(s, r, ptr(int64(0)), nil)
		})

		// With control the spec sets three caps under one hold and lifts them one by one (three
		// orderings); without it, the profile's limited_key has two limits under any video hold.
		f.Rule(rules("LEDGER-013", "ERR-027")...).Needs(framework.LimitedKey).It("the smallest limit the hold exceeds names the refusal", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				smallestDeclaredLimit(ctx, s)
				return
			}
			sp := newSpender(ctx, s)
			d := catalogue.VideoModel(ctx, sp.c)
			cfg := catalogue.CheapConfig(d)
			id := d.String("capability_id")
			_, need := estimateOf(ctx, sp.c, id, cfg, nil)
			if need < 4 {
				s.Lacks("the cheapest video take holds under 4 credits: three distinct caps below it do not fit, so LEDGER-013 is left unverified")
			}
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": need - 1, "daily_credits": need - 2})
			c, k := sp.newKey(ctx, framework.KeyOptions{BudgetCredits: ptr(int(need - 3))})
			refusal.ExpectSpend(s, refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "api_key_budget", need-3, need-3)
			s.PatchKey(ctx, k.ID, map[string]any{"budget_credits": nil})
			refusal.ExpectSpend(s, refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", need-2, need-2)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": nil})
			r := refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("org_per_generation"), r.Describe())
			refusal.ExpectLimitAmounts(s, r, ptr(need-1), nil)
		})
	})
}

// spendDailySpecs registers the specs of the daily limit (a null limit is the default, the window
// over all keys, the default spent against) and of app jobs, which the limits do not restrict.
func spendDailySpecs(f *framework.Framework) {
	Describe("ledger: spend limits", func() {
		f.Rule("LEDGER-010", "LEDGER-020").ControlBecause(becauseNullLimit).It("an empty (null) workspace limit means the default", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 5, "daily_credits": 7})
			r := sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			expectBalance(s, r, "limits.per_generation_credits", 5)
			expectBalance(s, r, "limits.daily_credits", 7)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": nil, "daily_credits": nil})
			r = sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			expectBalance(s, r, "limits.per_generation_credits", contract.PerGenerationCap)
			expectBalance(s, r, "limits.daily_credits", contract.DailyBudget)
		})

		f.Rule(rules("LEDGER-016", "LEDGER-009", "LEDGER-022", "LEDGER-021", "ERR-027")...).Needs(framework.Spends, framework.Control).StrictOnly("LEDGER-016", "whether a hold counts in the daily window when taken and what the balance shows of it").It("the daily window counts holds of all keys, gives a released hold back and keeps a captured amount", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, h := estimateOf(ctx, sp.c, "tts", cfg, nil)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": 2*h - 1})
			// The first job holds its credits until the spec fails it through control: a render_fail
			// fault would end it at its first render step, which a running clock reaches before the
			// second key's refusal below.
			s.QueueFaultIn(ctx, sp.ws.ID, map[string]any{"kind": "slow_render", "seconds": 3600}, "tts", 1, "")
			first := submit(ctx, s, sp.c, "tts", cfg, nil)
			bal := sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(bal.Int("limits.daily_spent_credits")).To(Equal(h), "the hold counts in the daily window"+bal.Describe())
			Expect(bal.Int("limits.daily_remaining_credits")).To(Equal(h-1), bal.Describe())
			Expect(bal.Int("limits.key_spent_credits")).To(Equal(h), "key_spent_credits counts this key's holds"+bal.Describe())
			Expect(bal.Field("limits.key_remaining_credits")).To(BeNil(), "no key budget: key_remaining_credits is null"+bal.Describe())

			second, _ := sp.newKey(ctx, framework.KeyOptions{BudgetCredits: ptr(100)})
			cfg2 := catalogue.TTSConfig(ctx, sp.c)
			refusal.ExpectSpend(s, refuse(ctx, second, submitBody("tts", cfg2, h, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", 2*h-1, h-1)

			failed, err := s.Control().Call(ctx, http.MethodPost, "/generations/"+first.id+"/fail", map[string]any{})
			Expect(err).NotTo(HaveOccurred())
			Expect(failed.Status).To(Equal(http.StatusOK), failed.Describe())
			Expect(s.Finish(ctx, sp.c, first.id).String("generation.status")).To(Equal("failed"))
			bal = sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(bal.Int("limits.daily_spent_credits")).To(BeZero(), "a released hold is given back to the window"+bal.Describe())

			j := submit(ctx, s, second, "tts", cfg2, nil)
			kb := second.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(kb.Int("limits.key_spent_credits")).To(Equal(h), kb.Describe())
			Expect(kb.Int("limits.key_remaining_credits")).To(Equal(100-h), "key_remaining = budget - spent"+kb.Describe())
			w := s.Finish(ctx, second, j.id)
			Expect(w.Int("generation.credits.credits_charged")).To(chargeOf(j.price), "the charge is the exact estimate's credits"+w.Describe())
			bal = sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(bal.Int("limits.daily_spent_credits")).To(chargeOf(j.price), "a captured amount stays in the window"+bal.Describe())
		})

		f.Rule(rules("LEDGER-009", "LEDGER-010", "ERR-027")...).Needs(framework.Spends).ControlBecause(becauseDailySpent).It("the default daily limit is spent against: jobs are accepted up to 2000 credits in the window and the one past it is refused org_daily", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			s.SetCredits(ctx, sp.ws.ID, 100000) // the balance is never the bound; the workspace limits stay empty (the defaults)
			capID, cfg, h := bigHold(ctx, s, sp.c)
			key := catalogue.TextKey(catalogue.Detail(ctx, sp.c, capID)) // a fresh marker in its free text keeps the jobs apart
			// "Workspace daily limit | all agents, rolling 24 hours | 2000 credits" and "An empty
			// workspace limit means the default": a window of captured charges S takes a job of
			// hold h while S + h stays within 2000 and refuses it once S + h is above.
			var window int64
			for i := 0; i < 40; i++ {
				c := catalogue.Clone(cfg)
				if v, ok := c[key].(string); ok && key != "" {
					c[key] = v + " " + framework.RandomHex(4)
				}
				body := submitBody(capID, c, h, nil)
				if window+h > contract.DailyBudget {
					s.Step(rules("LEDGER-009", "LEDGER-010", "ERR-027")...)
					r := refuse(ctx, sp.c, body, http.StatusPaymentRequired, "spend_limit_exceeded")
					Expect(r.String("error.limit.bound_by")).To(Equal("org_daily"), fmt.Sprintf("with %d credits captured today, a hold of %d goes past the default daily %d", window, h, contract.DailyBudget)+r.Describe())
					return
				}
				s.Step("LEDGER-009", "LEDGER-010")
				// No s.Spend: the credit budget bounds what the suite spends of a target's own
				// credits, and these are credits the spec granted through control above. Counting
				// them would spend the run's whole budget in this one spec and skip every spec
				// that follows it.
				r := sp.c.Post(ctx, "/generations", body)
				if window+h == contract.DailyBudget && r.Status != http.StatusCreated {
					return // exactly at the limit: the text does not say whether "up to" includes it
				}
				Expect(r.Status).To(Equal(http.StatusCreated), fmt.Sprintf("with %d credits captured today, a hold of %d stays within the default daily %d: accepted", window, h, contract.DailyBudget)+r.Describe())
				w := s.Finish(ctx, sp.c, r.String("generation_id"))
				charged, _ := framework.AsInt(w.Field("generation.credits.credits_charged"))
				window += charged
			}
			Fail("40 jobs did not reach the default daily limit")
		})

		f.Rule("LEDGER-015").Needs(framework.Spends).ControlBecause(becauseAppJob).It("spend limits restrict agents only: a job started in the app runs and settles where the key's submit is refused", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			est, h := estimateOf(ctx, sp.c, "tts", cfg, nil)
			price := priceOf(est)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": h - 1})
			refuse(ctx, sp.c, submitBody("tts", cfg, h, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
			app, err := s.Control().StartAppGeneration(ctx, sp.ws.ID, "tts", cfg)
			hookDone(s, err)
			w := s.Finish(ctx, sp.c, app)
			Expect(w.String("generation.status")).To(Equal("completed"), "a job started in the app is not stopped by the agents' limit"+w.Describe())
			Expect(w.Int("generation.credits.credits_charged")).To(chargeOf(price), "it settles at its price"+w.Describe())
		})

		f.Rule("LEDGER-015", "LEDGER-016").Needs(framework.Spends).ControlBecause(becauseAppJob).It("an app job's hold is not in the agents' daily window: beside it the key still spends the whole daily limit", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			_, h := estimateOf(ctx, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), nil)
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": h})
			app, err := s.Control().StartAppGeneration(ctx, sp.ws.ID, "tts", catalogue.TTSConfig(ctx, sp.c))
			hookDone(s, err)
			s.Step("LEDGER-016")
			b := sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.ReferenceOnly("LEDGER-016", "the balance's daily window leaves an app job's hold out", func() {
				Expect(b.Int("limits.daily_spent_credits")).To(BeZero(), "the daily window counts the API keys' holds only, not an app job's"+b.Describe())
				Expect(b.Int("limits.daily_remaining_credits")).To(Equal(h), b.Describe())
			})
			s.Step("LEDGER-015")
			j := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), nil)
			s.Finish(ctx, sp.c, j.id)
			s.Finish(ctx, sp.c, app)
		})
	})
}

// spendWindowSpecs registers the specs of the rolling windows across a calendar day, of key
// budgets beside other keys, and of a render that costs more than its hold.
func spendWindowSpecs(f *framework.Framework) {
	Describe("ledger: rolling windows, key budgets and overruns", func() {
		f.Rule(rules("LEDGER-024", "CORE-020", "LEDGER-002", "LEDGER-016")...).Needs(framework.Spends, framework.TestInputs).It("a render that costs more than its hold is charged the hold and not a credit more", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			overrun := sp.c
			if s.HasControl() {
				q, err := s.Control().Call(ctx, http.MethodPost, "/faults", map[string]any{"kind": "render_overrun", "capability_id": "tts", "workspace_id": sp.ws.ID})
				Expect(err).NotTo(HaveOccurred())
				if fld, _ := q.Lookup("error.field"); q.Status == http.StatusBadRequest && fld == "kind" {
					s.Lacks("the control API does not offer the render_overrun fault, so the suite cannot make a render cost more than its hold")
				}
				Expect(q.Status).To(Equal(http.StatusCreated), "control POST /faults render_overrun"+q.Describe())
				DeferCleanup(func(ctx SpecContext) { s.ClearFaults(ctx) })
			} else {
				overrun = s.Force(ctx, sp.c, framework.Outcome{Kind: "render_overrun", CapabilityID: "tts"})
			}
			a0 := availableOf(ctx, sp.c)
			j := submit(ctx, s, overrun, "tts", cfg, nil)
			held := j.r.Int("credits.credits_held")
			w := s.Finish(ctx, sp.c, j.id)
			Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			charged := w.Int("generation.credits.credits_charged")

			s.Step("CORE-020", "LEDGER-024")
			Expect(held).To(Equal(need), "the hold is the estimate's max_credits_needed"+j.r.Describe())
			Expect(charged).To(BeNumerically("<=", held), "the charge is never more than the hold"+w.Describe())
			s.Step("LEDGER-024")
			Expect(charged).To(Equal(held), "a render that cost more than its hold is settled at the hold (the cap), not at its estimate"+w.Describe())
			s.Step("LEDGER-002", "LEDGER-024")
			a1, h1 := balanceOf(ctx, sp.c)
			Expect(h1).To(BeZero(), "the hold is settled")
			Expect(a0-a1).To(Equal(charged), "the balance moved by the charge: nothing beyond the hold left it")
			s.Step("LEDGER-016")
			bal := sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(bal.Int("limits.daily_spent_credits")).To(Equal(charged), "the daily window keeps the captured hold, not the overrun"+bal.Describe())
		})

		// Without the control API the day passes on the target's own clock (--real-time --long) and
		// the window is limited_key's workspace's (rollsOnRealClock).
		f.Rule(rules("LEDGER-017", "LEDGER-016", "LEDGER-009", "ERR-027")...).Needs(framework.Spends, framework.LimitedKey, framework.RealTime, framework.Long).
			WaitsOut(contract.SpendWindow*3/2).It(
			"the daily window rolls: spend from before midnight UTC still counts after it, until 24 hours after its hold", func(ctx context.Context, s *framework.Spec) {
				if !s.HasControl() {
					rollsOnRealClock(ctx, s)
					return
				}
				rollsOnControlClock(ctx, s)
			})

		f.Rule(rules("LEDGER-008", "LEDGER-022", "LEDGER-016", "ERR-027")...).Needs(framework.Spends).ControlBecause(becauseBudgetSpent).It("a key budget counts that key's spend only: another key spending beside it neither uses it nor is bound by it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := catalogue.TTSConfig(ctx, sp.c)
			_, h := estimateOf(ctx, sp.c, "tts", cfg, nil)
			budgeted, _ := sp.newKey(ctx, framework.KeyOptions{BudgetCredits: ptr(int(h))})
			other := sp.c // no budget

			// The other key spends first: none of it counts against the budgeted key.
			first := submit(ctx, s, other, "tts", cfg, nil)
			firstCharge := s.Finish(ctx, other, first.id).Int("generation.credits.credits_charged")
			s.Step("LEDGER-022")
			kb := budgeted.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(kb.Int("limits.key_spent_credits")).To(BeZero(), "another key's spend is not this key's"+kb.Describe())
			Expect(kb.Int("limits.key_remaining_credits")).To(Equal(h), "the whole budget is left"+kb.Describe())
			s.Step("LEDGER-008")
			j := submit(ctx, s, budgeted, "tts", catalogue.TTSConfig(ctx, budgeted), nil)
			price := s.Finish(ctx, budgeted, j.id).Int("generation.credits.credits_charged")
			Expect(price).To(chargeOf(j.price), "the charge is the estimate's price")

			// Now the budgeted key is spent (its charge stays in its window); the other key is not bound by it.
			s.Step("LEDGER-008", "LEDGER-022")
			refusal.ExpectSpend(s, refuse(ctx, budgeted, submitBody("tts", catalogue.TTSConfig(ctx, sp.c), h, nil), http.StatusPaymentRequired, "spend_limit_exceeded"), "api_key_budget", h, h-price)
			ob := other.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.Step("LEDGER-022")
			Expect(ob.Int("limits.key_spent_credits")).To(Equal(firstCharge), "key_spent_credits counts this key's own charge only"+ob.Describe())
			Expect(ob.Field("limits.key_remaining_credits")).To(BeNil(), "a key without a budget has no remaining"+ob.Describe())
			s.Step("LEDGER-016")
			Expect(ob.Int("limits.daily_spent_credits")).To(Equal(firstCharge+price), "the workspace's daily window counts both keys"+ob.Describe())
			s.Step("LEDGER-008")
			third := submit(ctx, s, other, "tts", catalogue.TTSConfig(ctx, other), nil)
			s.Finish(ctx, other, third.id)
		})
	})
}

// expectBalance checks the credit balance's field at path holds want (an integer, or nil for
// null). The balance "shows the workspace limits", but its shape is not shown: the names are the
// reference's (LEDGER-020). A balance with the field is judged on its value, which the text's limits
// and defaults fix; one without it differs from the reference only, an advisory unless --strict.
func expectBalance(s *framework.Spec, r *framework.Response, path string, want any) {
	GinkgoHelper()
	v, has := r.Lookup(path)
	if !has {
		s.ReferenceOnly("LEDGER-020", "the balance shows "+path, func() { r.Field(path) })
		return
	}
	if want == nil {
		Expect(v).To(BeNil(), path+" is null"+r.Describe())
		return
	}
	n, ok := framework.AsInt(v)
	Expect(ok).To(BeTrue(), path+" is an integer"+r.Describe())
	Expect(n).To(BeEquivalentTo(want), path+r.Describe())
}

// settleOwnWork waits for the generations of c's workspace that still run (the first page of its
// list) to end, and skips the spec when credits are held all the same: without control the spec
// shares its workspace with what the run did before it, and a hold that settles while it reads the
// balance twice would move the balance by more than its own hold.
func settleOwnWork(ctx context.Context, s *framework.Spec, c *framework.Client) {
	GinkgoHelper()
	for _, row := range paging.Get(ctx, c, "/generations", paging.Open).Rows {
		if st, _ := row["status"].(string); slices.Contains(runningStatuses, st) {
			s.Finish(ctx, c, row["generation_id"].(string))
		}
	}
	if _, held := balanceOf(ctx, c); held != 0 {
		framework.SkipFor(framework.LacksState(fmt.Sprintf("the main key's workspace holds %d credits for work the spec did not start "+
			"(a workflow run, a job in the app): the balance cannot be read as moved by the spec's hold alone", held)))
	}
}

// Why these specs stay at the control tier (Decl.ControlBecause): an operation only the app or
// control can do.
const (
	becauseLimitMidJob = "it lowers the workspace's limit while a job runs: limits are set in the app, not through the API"
	becauseNullLimit   = "it empties (sets null) a workspace limit: limits are set in the app, not through the API"
	becauseDailySpent  = "it spends the whole 2000-credit default daily limit, which control tops up and a shared " +
		"staging workspace could not spare"
	becauseBudgetSpent = "it gives a key of the workspace a budget of one tts hold and spends it: a pre-made budget " +
		"key's 24-hour window would carry that spend into the next run"
)

// smallestDeclaredLimit judges LEDGER-013 on the profile's limited_key: a video hold above both
// limits of its workspace (limited_key_per_generation_limit, limited_key_daily_limit) is refused
// naming the smaller.
func smallestDeclaredLimit(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := s.RoleKey(framework.LimitedKey)
	perGen, daily := s.LimitedKeyLimits()
	if perGen == daily {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: limited_key_per_generation_limit and limited_key_daily_limit "+
			"are both %d: of two equal limits the smallest is neither; declare two amounts", perGen)))
	}
	d := catalogue.VideoModel(ctx, c)
	cfg := catalogue.CheapConfig(d)
	id := d.String("capability_id")
	_, need := estimateOf(ctx, c, id, cfg, nil)
	if need <= max(perGen, daily) {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: the cheapest video take holds %d credits, not above both "+
			"limits of limited_key's workspace (%d and %d): declare limits under any video hold", need, perGen, daily)))
	}
	r := refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusPaymentRequired, "spend_limit_exceeded")
	bound, limit := "org_per_generation", perGen
	if daily < perGen {
		bound, limit = "org_daily", daily
	}
	Expect(r.String("error.limit.bound_by")).To(Equal(bound), fmt.Sprintf("the hold of %d exceeds the per-generation limit %d and the daily "+
		"limit %d: the smaller names the refusal", need, perGen, daily)+r.Describe())
	refusal.ExpectLimitAmounts(s, r, &limit, nil)
}

// rollsOnControlClock is the rolling-window spec with the control API: a workspace's daily limit
// set to one tts hold, the hold taken an hour before midnight UTC, and the clock moved across
// midnight and to a minute before and a second after 24 hours after the hold.
func rollsOnControlClock(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	sp := newSpender(ctx, s)
	cfg := catalogue.TTSConfig(ctx, sp.c)
	est, h := estimateOf(ctx, sp.c, "tts", cfg, nil)
	// Take the hold an hour before midnight UTC on the target's clock.
	now := s.ClockNow(ctx).UTC()
	at := time.Date(now.Year(), now.Month(), now.Day(), 23, 0, 0, 0, time.UTC)
	if at.Before(now.Add(time.Minute)) {
		at = at.Add(24 * time.Hour)
	}
	s.Advance(ctx, at.Sub(now).Seconds())
	s.SetLimits(ctx, sp.ws.ID, map[string]any{"daily_credits": h})
	j := submit(ctx, s, sp.c, "tts", cfg, nil)
	taken := answer.Time(readGen(ctx, sp.c, j.id), "generation.created_at")
	w := s.Finish(ctx, sp.c, j.id)
	// The charge is whole; a fractional price is charged a whole number next to it.
	price := w.Int("generation.credits.credits_charged")
	Expect(price).To(chargeOf(priceOf(est)), "an exact estimate's credits is the charge"+w.Describe())
	next := submitBody("tts", catalogue.TTSConfig(ctx, sp.c), h, nil)
	s.Step("LEDGER-009", "LEDGER-016")
	refusal.ExpectSpend(s, refuse(ctx, sp.c, next, http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", h, h-price)

	// Two hours later the calendar day has changed; the rolling window has not.
	s.Step("LEDGER-017", "LEDGER-016")
	now = s.ClockNow(ctx)
	s.Advance(ctx, taken.Add(2*time.Hour).Sub(now).Seconds())
	Expect(s.ClockNow(ctx).UTC().Day()).NotTo(Equal(taken.UTC().Day()), "the clock crossed midnight UTC")
	bal := sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	s.Step("LEDGER-016") // the balance's fields are the reference's
	Expect(bal.Int("limits.daily_spent_credits")).To(Equal(price), "after midnight the window still holds the spend of 23:00: it rolls, it does not reset"+bal.Describe())
	s.Step("LEDGER-017", "LEDGER-016")
	refusal.ExpectSpend(s, refuse(ctx, sp.c, next, http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", h, h-price)

	// A minute before 24 hours after the hold it still counts; a second after, it is gone.
	now = s.ClockNow(ctx)
	s.Advance(ctx, taken.Add(contract.SpendWindow-time.Minute).Sub(now).Seconds())
	refusal.ExpectSpend(s, refuse(ctx, sp.c, next, http.StatusPaymentRequired, "spend_limit_exceeded"), "org_daily", h, h-price)
	now = s.ClockNow(ctx)
	s.Advance(ctx, taken.Add(contract.SpendWindow+time.Second).Sub(now).Seconds())
	bal = sp.c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	s.Step("LEDGER-016")
	Expect(bal.Int("limits.daily_spent_credits")).To(BeZero(), "24 hours after its hold the spend left the window"+bal.Describe())
	s.Step("LEDGER-017", "LEDGER-016")
	s.Spend(int(h))
	sp.c.Post(ctx, "/generations", next).ExpectOK(http.StatusCreated)
}
