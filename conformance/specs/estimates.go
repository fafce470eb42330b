package specs

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

func strictInput(f *framework.Framework) {
	Describe("strict request bodies", func() {
		invalid := func(ctx context.Context, c *framework.Client, body []byte, field string) *framework.Response {
			GinkgoHelper()
			r := c.Do(ctx, http.MethodPost, "/estimates", framework.RawBody(body, "application/json"), framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
			if field != "" {
				Expect(r.String("error.field")).To(Equal(field), "the refusal names the field at fault"+r.Describe())
			}
			return r
		}

		f.Rule(rules("ERR-024")...).It("malformed JSON answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, body := range []string{`{"capability_id": `, `not json`, `["capability_id"]`, `{"capability_id":"tts","config":{}} trailing`} {
				invalid(ctx, c, []byte(body), "")
			}
		})

		f.Rule(rules("EST-006", "ERR-020", "ERR-024", "VER-005")...).It("an unknown body key answers 400 invalid_config naming it in error.field", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, key := range []string{"bogus", "idempotency_key", "webhook_url", "maxCredits"} {
				invalid(ctx, c, fmt.Appendf(nil, `{"capability_id":"tts","config":{},%q:1}`, key), key)
			}
		})

		f.Rule(rules("EST-007", "ERR-020")...).It("max_credits or variants in an estimate body answers 400 invalid_config naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			invalid(ctx, c, []byte(`{"capability_id":"tts","config":{},"max_credits":10}`), "max_credits")
			invalid(ctx, c, []byte(`{"capability_id":"tts","config":{},"variants":2}`), "variants")
		})

		f.Rule(rules("EST-008", "ERR-020")...).It("a missing capability_id or config answers 400 invalid_config naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			invalid(ctx, c, []byte(`{"config":{}}`), "capability_id")
			invalid(ctx, c, []byte(`{"capability_id":"tts"}`), "config")
			invalid(ctx, c, []byte(`{}`), "")
		})

		f.Rule(rules("ERR-024", "ERR-020")...).It("a value of the wrong type answers 400 invalid_config naming the field", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			invalid(ctx, c, []byte(`{"capability_id":5,"config":{}}`), "capability_id")
			invalid(ctx, c, []byte(`{"capability_id":"tts","config":"x"}`), "config")
			invalid(ctx, c, []byte(`{"capability_id":"tts","config":null}`), "config")
		})

		f.Rule(rules("ERR-024")...).It("an oversized body answers 400 invalid_config, not 413 or 500", func(ctx context.Context, s *framework.Spec) {
			var b bytes.Buffer
			b.WriteString(`{"capability_id":"tts","config":{"script":"`)
			b.Write(bytes.Repeat([]byte("a"), 4<<20))
			b.WriteString(`"}}`)
			invalid(ctx, s.Client(), b.Bytes(), "")
		})

		f.Rule(rules("VER-011", "EST-012", "ERR-020")...).It("an unknown config key answers 400 invalid_config naming config.<key>", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d := availableDetails(ctx, c, 1)[0]
			config := objectAt(d, "example_config")
			config["conformance_bogus"] = 1
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": config}, framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
			Expect(r.String("error.field")).To(Equal("config.conformance_bogus"), r.Describe())
		})
	})
}

func estimates(f *framework.Framework) {
	Describe("estimates", func() {
		f.Rule("EST-001", "EST-002", "EST-004", "CAP-023", "CORE-005", "CORE-010").It("prices each available capability's example_config with the documented answer", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			priced := 0
			for _, d := range availableDetails(ctx, c, 25) {
				id := d.String("capability_id")
				config := objectAt(d, "example_config")
				if namesUpload(config) {
					continue // needs a real upload: the upload specs price these
				}
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": config})
				if r.Status == http.StatusConflict {
					r.ExpectError(http.StatusConflict, "not_priced") // a capability with no published price
					continue
				}
				r.ExpectOK(http.StatusOK)
				priced++
				Expect(r.String("capability_id")).To(Equal(id), r.Describe())
				credits, ok := framework.AsInt(r.Field("credits"))
				Expect(ok).To(BeTrue(), "credits is a whole number"+r.Describe())
				Expect(credits).To(BeNumerically(">=", 0), r.Describe())
				need := r.Int("max_credits_needed")
				Expect(need).To(BeNumerically(">=", credits), "the hold is at least the price"+r.Describe())
				r.Bool("is_ceiling")
				for i, v := range r.Array("breakdown") {
					row := asObject(r, v, fmt.Sprintf("breakdown[%d]", i))
					stringField(r, row, "label", "breakdown row")
					Expect(stringField(r, row, "unit", "breakdown row")).To(oneOf("second", "image", "thousand_chars", "million_tokens", "request"), r.Describe())
					Expect(row["quantity"]).NotTo(BeNil(), r.Describe())
					intField(r, row, "credits", "breakdown row")
				}
				Expect(r.String("note")).NotTo(BeEmpty(), r.Describe())
				Expect(r.String("summary")).NotTo(BeEmpty(), r.Describe())
			}
			if priced == 0 {
				Skip("unsupported: no available capability's example_config can be priced without an upload")
			}
		})

		f.Rule("EST-003").It("max_credits_needed is takes x ceil(price x 1.1) when the config prices one take", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, d := range availableDetails(ctx, c, 25) {
				config := objectAt(d, "example_config")
				if _, hasCount := config["count"]; hasCount || namesUpload(config) {
					continue
				}
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": config})
				if r.Status == http.StatusConflict {
					r.ExpectError(http.StatusConflict, "not_priced")
					continue
				}
				r.ExpectOK(http.StatusOK)
				credits, _ := framework.AsInt(r.Field("credits"))
				Expect(r.Int("max_credits_needed")).To(Equal(ceilPad(credits)), "one take: ceil(price x 1.1)"+r.Describe())
				checked++
			}
			if checked == 0 {
				Skip("unsupported: every available capability's example_config sets count")
			}
		})

		f.Rule(rules("EST-026", "ERR-016", "ERR-028")...).It("an estimate of an unknown or coming_soon capability answers 404 capability_unavailable", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": "no_such_capability_" + randomHex(8), "config": map[string]any{}}).
				ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
			if row := withStatus(catalogue(ctx, c), "coming_soon"); row != nil {
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": row["capability_id"], "config": map[string]any{}}).
					ExpectError(http.StatusNotFound, "capability_unavailable")
				Expect(r.String("error.capability_status")).To(Equal("coming_soon"), r.Describe())
			}
		})

		f.Rule("EST-010", "CORE-006", "AUTH-015").Needs(framework.ReadKey).It("an estimate holds and charges nothing and a read-only key may make it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d := availableDetails(ctx, c, 1)[0]
			before := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			gens := getPage(ctx, c, "/generations", "generations")
			s.ReadClient().Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": objectAt(d, "example_config")}).ExpectOK(http.StatusOK)
			c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": objectAt(d, "example_config")}).ExpectOK(http.StatusOK)
			after := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(after.Int("available_credits")).To(Equal(before.Int("available_credits")), after.Describe())
			Expect(after.Int("held_credits")).To(Equal(before.Int("held_credits")), after.Describe())
			gens2 := getPage(ctx, c, "/generations", "generations")
			Expect(ids(gens2.rows, "generation_id")).To(Equal(ids(gens.rows, "generation_id")), "an estimate starts no generation"+gens2.r.Describe())
		})

		f.Rule(rules("EST-017", "ERR-029")...).It("an estimate naming a well-formed upload id that does not exist answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			var target *framework.Response
			var field string
			for _, row := range catalogue(ctx, c) {
				if row["status"] != "available" {
					continue
				}
				d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
				for name, v := range objectAt(d, "example_config") {
					if arr, ok := v.([]any); ok && len(arr) > 0 {
						if str, ok := arr[0].(string); ok && len(str) == 36 && str[:4] == "ast_" {
							target, field = d, name
						}
					}
				}
				if target != nil {
					break
				}
			}
			if target == nil {
				Skip("unsupported: no available capability's example_config names an upload as a plain id array")
			}
			config := objectAt(target, "example_config")
			config[field] = []any{"ast_" + randomHex(32)}
			c.Post(ctx, "/estimates", map[string]any{"capability_id": target.String("capability_id"), "config": config}).
				ExpectError(http.StatusNotFound, "not_found")
		})
	})
}

func balance(f *framework.Framework) {
	Describe("credit balance", func() {
		f.Rule("LEDGER-018", "LEDGER-019", "LEDGER-020", "LEDGER-021", "LEDGER-011", "CORE-002", "CORE-010").It("answers the balance, its sum and the limits with their defaults", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), r.Describe())
			avail, held := r.Int("available_credits"), r.Int("held_credits")
			Expect(r.Int("balance_credits")).To(Equal(avail+held), "balance = available + held"+r.Describe())
			r.Int("low_balance_threshold_credits")
			Expect(r.String("summary")).NotTo(BeEmpty(), r.Describe())
			daily := r.Int("limits.daily_credits")
			spent := r.Int("limits.daily_spent_credits")
			Expect(r.Int("limits.daily_remaining_credits")).To(Equal(max(daily-spent, 0)), r.Describe())
			r.Int("limits.per_generation_credits")
			r.Int("limits.key_spent_credits")
			kb, present := r.Lookup("limits.key_budget_credits")
			Expect(present).To(BeTrue(), "limits.key_budget_credits is present (null without a budget)"+r.Describe())
			kr, present := r.Lookup("limits.key_remaining_credits")
			Expect(present).To(BeTrue(), r.Describe())
			if kb == nil {
				Expect(kr).To(BeNil(), "without a key budget key_remaining_credits is null, not 0"+r.Describe())
			}
		})

		f.Rule("LEDGER-020", "LEDGER-011", "LEDGER-010").It("a fresh workspace reads the default limits: 600 per generation, 2000 daily, no key budget", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			r := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			Expect(r.Int("limits.per_generation_credits")).To(Equal(int64(600)), r.Describe())
			Expect(r.Int("limits.daily_credits")).To(Equal(int64(2000)), r.Describe())
			Expect(r.Int("limits.daily_spent_credits")).To(BeZero(), r.Describe())
			Expect(r.Int("limits.daily_remaining_credits")).To(Equal(int64(2000)), r.Describe())
			Expect(r.Field("limits.key_budget_credits")).To(BeNil(), "no key budget reads null, not 0"+r.Describe())
			Expect(r.Field("limits.key_remaining_credits")).To(BeNil(), r.Describe())
			Expect(r.Int("held_credits")).To(BeZero(), r.Describe())
		})
	})
}

// namesUpload reports whether a config names an upload (an ast_ id anywhere in it): such a config
// can only be priced once the named file exists in the caller's workspace.
func namesUpload(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.HasPrefix(x, "ast_")
	case map[string]any:
		for _, e := range x {
			if namesUpload(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if namesUpload(e) {
				return true
			}
		}
	}
	return false
}
