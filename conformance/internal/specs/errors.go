package specs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/spec"
)

// errorSpecs registers the specs of the error table and of strict request bodies.
func errorSpecs(f *framework.Framework) {
	strictInputSpecs(f)
	internalErrorSpecs(f)
	testModeSpecs(f)
	errorTableSpecs(f)
}

// strictInputSpecs registers the specs of strict request bodies.
func strictInputSpecs(f *framework.Framework) {
	Describe("errors: strict request bodies", func() {
		invalid := func(ctx context.Context, c *framework.Client, body []byte, field string) *framework.Response {
			GinkgoHelper()
			r := c.Do(ctx, http.MethodPost, "/estimates", framework.RawBody(body, "application/json"), framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
			if field != "" {
				refusal.ExpectField(r, field)
			}
			return r
		}

		f.Rule(rules("ERR-024")...).It("malformed JSON answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, body := range []string{`{"capability_id": `, `not json`, `["capability_id"]`, `{"capability_id":"tts","config":{}} trailing`} {
				invalid(ctx, c, []byte(body), "")
			}
		})

		// Each refusal is an accepted estimate body changed in exactly one way, so the refusal has
		// one cause and names one field.
		accepted := func(ctx context.Context, c *framework.Client) map[string]any {
			GinkgoHelper()
			body := map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, c)}
			c.Post(ctx, "/estimates", body).ExpectOK(http.StatusOK)
			return body
		}
		with := func(body map[string]any, key string, v any) []byte {
			b := catalogue.Clone(body)
			if v == nil {
				delete(b, key)
			} else {
				b[key] = v
			}
			out, err := json.Marshal(b)
			Expect(err).NotTo(HaveOccurred())
			return out
		}

		f.Rule(rules("EST-006", "ERR-020", "ERR-024", "VER-005")...).It("an unknown body key answers 400 invalid_config naming it in error.field", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			body := accepted(ctx, c)
			for _, key := range []string{"bogus", "idempotency_key", "webhook_url", "maxCredits"} {
				invalid(ctx, c, with(body, key, 1), key)
			}
		})

		f.Rule(rules("EST-007", "ERR-020")...).It("max_credits or variants in an estimate body answers 400 invalid_config naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			body := accepted(ctx, c)
			invalid(ctx, c, with(body, "max_credits", 10), "max_credits")
			invalid(ctx, c, with(body, "variants", 2), "variants")
		})

		f.Rule(rules("EST-008", "ERR-020")...).It("a missing capability_id or config answers 400 invalid_config naming it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			body := accepted(ctx, c)
			invalid(ctx, c, with(body, "capability_id", nil), "capability_id")
			invalid(ctx, c, with(body, "config", nil), "config")
			invalid(ctx, c, []byte(`{}`), "")
		})

		f.Rule(rules("ERR-024", "ERR-020")...).It("a value of the wrong type answers 400 invalid_config naming the field", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			body := accepted(ctx, c)
			invalid(ctx, c, with(body, "capability_id", 5), "capability_id")
			invalid(ctx, c, with(body, "config", "x"), "config")
			raw := with(body, "config", "x")
			invalid(ctx, c, bytes.Replace(raw, []byte(`"config":"x"`), []byte(`"config":null`), 1), "config")
		})

		f.Rule(rules("ERR-024")...).It("an oversized body answers 400 invalid_config, not 413 or 500", func(ctx context.Context, s *framework.Spec) {
			key, _ := json.Marshal(catalogue.ScriptKey(ctx, s.Client(), "tts"))
			var b bytes.Buffer
			b.WriteString(`{"capability_id":"tts","config":{` + string(key) + `:"`)
			b.Write(bytes.Repeat([]byte("a"), 4<<20))
			b.WriteString(`"}}`)
			invalid(ctx, s.Client(), b.Bytes(), "")
		})

		f.Rule(rules("EST-012", "ERR-024")...).It("an estimate refuses a config value of the wrong type and a config missing a required key, as submit does", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			// POST /estimates rule 2: "The config is checked as on submit: unknown key, wrong type,
			// missing required key ... is refused, not priced." A server that coerces "2" to 2, or
			// fills a missing key from a default, prices what it should refuse.
			checked := 0
			for _, d := range catalogue.AvailableDetails(ctx, c, 40) {
				id := d.String("capability_id")
				ex := answer.ObjectAt(d, "example_config")
				if catalogue.NamesUpload(ex) || checked == 3 {
					continue
				}
				if c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": ex}).Status != http.StatusOK {
					continue
				}
				schema := answer.ObjectAt(d, "config_schema")
				props, _ := schema["properties"].(map[string]any)
				req, _ := schema["required"].([]any)
				probed := false
				for _, k := range req {
					name, _ := k.(string)
					if _, inExample := ex[name]; !inExample {
						continue
					}
					cfg := catalogue.Clone(ex)
					delete(cfg, name)
					r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg}, framework.Invalid())
					Expect(r.Status).To(Equal(http.StatusBadRequest), id+": an estimate without the required key "+name+" is refused, not priced"+r.Describe())
					r.ExpectError(http.StatusBadRequest, "invalid_config")
					probed = true
					break
				}
				for name, v := range ex {
					p, _ := props[name].(map[string]any)
					wrong, ok := wrongTyped(p, v)
					if !ok {
						continue
					}
					cfg := catalogue.Clone(ex)
					cfg[name] = wrong
					r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg}, framework.Invalid())
					Expect(r.Status).To(Equal(http.StatusBadRequest), fmt.Sprintf("%s: an estimate with %s of the wrong type (%#v) is refused, not coerced and priced", id, name, wrong)+r.Describe())
					r.ExpectError(http.StatusBadRequest, "invalid_config")
					probed = true
				}
				if probed {
					checked++
				}
			}
			if checked == 0 {
				s.Lacks("no available capability's example_config, priced without an upload, has a typed or required key")
			}
		})

		f.Rule(rules("VER-011", "EST-012", "ERR-020")...).It("an unknown config key answers 400 invalid_config naming config.<key>", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d := catalogue.AvailableDetails(ctx, c, 1)[0]
			config := answer.ObjectAt(d, "example_config")
			config["conformance_bogus"] = 1
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": config}, framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
			refusal.ExpectField(r, "config.conformance_bogus")
		})
	})

}

// internalErrorSpecs registers the specs of internal errors.
func internalErrorSpecs(f *framework.Framework) {
	Describe("errors: internal errors", func() {
		f.Rule(rules("ERR-039")...).It("an internal_error is answered with HTTP 500 and retryable true, and the next call is served", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			// A correct service fails on its own only by accident: the control API's internal_error
			// fault, or the same test input, makes it fail on demand. A control API that does not
			// offer the fault refuses the kind.
			failing := c
			if s.HasControl() {
				q, err := s.Control().Call(ctx, http.MethodPost, "/faults", map[string]any{"kind": "internal_error"})
				Expect(err).NotTo(HaveOccurred())
				if q.Status == http.StatusBadRequest {
					if fld, _ := q.Lookup("error.field"); fld == "kind" {
						s.Lacks("the control API does not offer the internal_error fault, so the suite cannot make the target fail internally")
					}
				}
				Expect(q.Status).To(Equal(http.StatusCreated), "control POST /faults internal_error"+q.Describe())
				DeferCleanup(func(ctx SpecContext) { s.ClearFaults(ctx) })
			} else {
				failing = s.Force(ctx, c, framework.Outcome{Kind: "internal_error"})
			}
			r := failing.Get(ctx, "/credits/balance").ExpectError(http.StatusInternalServerError, "internal_error")
			Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
		})
	})

}

// errorTableSpecs registers the specs of the contract sets of the error table.
func errorTableSpecs(f *framework.Framework) {
	Describe("errors: the contract sets of the error table", func() {
		f.Rule(rules("VER-012", "ERR-002", "ERR-011", "ERR-025", "ERR-021", "ERR-028")...).It("the live description's error codes and bound_by values are the contract sets, and refusals keep the table's verdicts", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			// The description is read where the target names it (the text gives no path).
			if s.HasDescription() {
				doc := c.Get(ctx, s.DescriptionPath()).ExpectStatus(http.StatusOK)
				want := make([]string, 0, len(spec.ErrorCodes))
				for _, e := range spec.ErrorCodes {
					want = append(want, e.Code)
				}
				// The text does not say what the description holds beyond its paths and
				// info.version: an error code or bound_by enum is judged when it has one.
				s.Step("VER-012", "ERR-002")
				found := 0
				for _, e := range answer.EnumsOf(doc.Doc(), doc.Doc(), "code") {
					if slices.Contains(e, "not_authorized") {
						// New enum values ship without warning (Versioning): the table's codes are all there.
						Expect(e).To(ContainElements(want), "the error code enum holds every code of the error table")
						found++
					}
				}
				s.Step("VER-012", "ERR-011")
				bound := answer.EnumsOf(doc.Doc(), doc.Doc(), "bound_by")
				if found == 0 || len(bound) == 0 {
					AddReportEntry("description", "the live description has no error code enum or no limit.bound_by enum (the text does not ask for one): the live refusals alone were checked")
				}
				for _, e := range bound {
					Expect(e).To(ContainElements("max_credits", "org_per_generation", "api_key_budget", "org_daily"))
				}
			}
			// Live refusals keep the table's status and retryable verdict (ExpectError checks both).
			s.Step("VER-012", "ERR-021")
			s.Anonymous().Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			s.Step("VER-012", "ERR-028")
			c.Get(ctx, "/capabilities/no_such_capability_"+framework.RandomHex(6)).ExpectError(http.StatusNotFound, "capability_unavailable")
			s.Step("VER-012", "ERR-025")
			r := refuse(ctx, c, ttsBody(ctx, c, 1), http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(r.String("error.limit.bound_by")).To(Equal("max_credits"), r.Describe())
		})
	})

}

// wrongTyped is a value of another JSON type than the property schema p declares for value v: a
// string holding v's number for a number, a number for a string, a string for a boolean. ok is false
// when p declares no single type or admits both (a union type).
func wrongTyped(p map[string]any, v any) (any, bool) {
	t, _ := p["type"].(string)
	switch t {
	case "integer", "number":
		return fmt.Sprint(v), true
	case "string":
		if _, isEnum := p["enum"]; isEnum {
			return 1, true
		}
		return 12345, true
	case "boolean":
		return "true", true
	}
	return nil, false
}
