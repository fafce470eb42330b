package specs

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
)

// webhookSpecs registers the specs of webhook endpoints, over three functions under one container
// text, the prefix of their spec names.
func webhookSpecs(f *framework.Framework) {
	webhookRegisterSpecs(f)
	webhookRefusalSpecs(f)
	webhookEndpointSpecs(f)
}

// webhookRegisterSpecs registers the specs of a registration's answer.
func webhookRegisterSpecs(f *framework.Framework) {
	Describe("webhooks: endpoint registration", func() {
		f.Rule("WH-001", "WH-002", "WH-003", "WH-004", "WH-005", "WH-006", "WH-007", "ID-008", "CORE-008").It(
			"POST /webhooks answers 201 {ok, webhook, secret} once; the endpoint is active and listed without the secret", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				before := availableOf(ctx, c)
				_, u := s.Hooks().NewURL()
				// Register with an upper-case scheme: normalizing keeps scheme, lowercased host and path.
				parsed, err := url.Parse(u)
				Expect(err).NotTo(HaveOccurred())
				sent := strings.ToUpper(parsed.Scheme) + "://" + strings.ToUpper(parsed.Host) + parsed.Path
				events := []string{"generation.failed", "generation.completed"}
				s.Step("WH-001")
				r := c.Post(ctx, "/webhooks", map[string]any{"url": sent, "events": events, "description": "conformance"}).ExpectOK(http.StatusCreated)
				Expect(r.Header.Get("Location")).To(BeEmpty(), "the registration answer has no Location"+r.Describe())
				secret := r.String("secret")
				s.Step("WH-002")
				Expect(secret).To(HavePrefix("whsec_"), "the signing secret has the prefix whsec_"+r.Describe())
				s.ReferenceOnly("WH-002", "the secret after whsec_ is 24 or more base64 characters", func() {
					Expect(secret).To(MatchRegexp(secretPattern), r.Describe())
				})
				wh := answer.ObjectAt(r, "webhook")
				s.Step("WH-004", "ID-008")
				checkHookRow(r, wh, "webhook")
				id := wh["webhook_id"].(string)
				DeferCleanup(func(ctx SpecContext) { c.Delete(ctx, "/webhooks/"+id) })
				s.Step("WH-005")
				expectFixed(r, wh, "webhook", newEndpointFixed)
				s.Step("WH-004")
				Expect(wh["description"]).To(Equal("conformance"), r.Describe())
				s.Step("WH-007")
				Expect(answer.Strings(r, wh, "events", "webhook")).To(Equal(events), "events echoes the names as registered"+r.Describe())
				s.Step("WH-006")
				stored, err := url.Parse(wh["url"].(string))
				Expect(err).NotTo(HaveOccurred(), r.Describe())
				Expect(stored.Scheme).To(Equal(strings.ToLower(parsed.Scheme)), r.Describe())
				Expect(stored.Hostname()).To(Equal(strings.ToLower(parsed.Hostname())), r.Describe())
				// The path of the URL as registered: the receiver URL's own path (--receiver-url
				// http://host/prefix) and then the endpoint's, not the endpoint's alone.
				Expect(stored.Path).To(Equal(parsed.Path), r.Describe())

				s.Step("WH-003")
				lr, rows := listHooks(ctx, c)
				Expect(strings.Contains(string(lr.Body), secret)).To(BeFalse(), "GET /webhooks carries the secret"+lr.Describe())
				s.Step("WH-004", "ID-008")
				found := false
				for i, row := range rows {
					checkHookRow(lr, row, fmt.Sprintf("webhooks[%d]", i))
					if row["webhook_id"] == id {
						found = true
						// "url: as stored, after normalizing": the list shows the stored URL, the same the
						// register answer showed (not the URL as sent, nor another normalization).
						s.Step("WH-006")
						Expect(row["url"]).To(Equal(wh["url"]), "the listed url is the stored one the register answer showed"+lr.Describe())
						s.Step("WH-005")
						expectFixed(lr, row, fmt.Sprintf("webhooks[%d]", i), newEndpointFixed)
						s.Step("WH-004", "ID-008")
					}
				}
				Expect(found).To(BeTrue(), "the new endpoint is listed"+lr.Describe())
				s.Step("WH-003")
				d := c.Delete(ctx, "/webhooks/"+id).ExpectOK(http.StatusOK)
				Expect(strings.Contains(string(d.Body), secret)).To(BeFalse(), "the delete answer carries the secret"+d.Describe())
				s.Step("CORE-008")
				after := availableOf(ctx, c)
				Expect(after).To(Equal(before), "registering and deleting cost nothing")
			})
	})

	Describe("webhooks: no request takes a webhook field", func() {
		f.Rule(rules("SUBMIT-011", "ERR-024", "ERR-020")...).It("webhook_url and callback_url set to a URL the target admits as an endpoint are refused on a submit with 400 invalid_config naming them", func(ctx context.Context, s *framework.Spec) {
			// The value is a URL the target admits (a refusal of "x" could be a URL check of a
			// field that exists): only the field itself is at fault.
			c := s.FreshClient()
			a := admittedURL(ctx, s, c)
			cfg := catalogue.TTSConfig(ctx, c)
			_, need := estimateOf(ctx, c, "tts", cfg, nil)
			for _, key := range []string{"webhook_url", "callback_url"} {
				body := submitBody("tts", catalogue.Clone(cfg), need, nil)
				body[key] = a.url
				r := refuse(ctx, c, body, http.StatusBadRequest, "invalid_config", framework.Invalid())
				s.Step("ERR-020")
				refusal.ExpectField(r, key)
				s.Step()
			}
		})
	})
}

// webhookRefusalSpecs registers the specs of the register bodies refused with 400 invalid_config,
// each one change of a body the target admits.
func webhookRefusalSpecs(f *framework.Framework) {
	Describe("webhooks: endpoint registration", func() {
		// refusal registers the body change makes from a URL the target admits (admittedURL: the
		// body {url, events} was seen to answer 201, so the change is the one cause) and requires
		// 400 invalid_config.
		ev := []string{"generation.completed"}
		refusal := func(rule, text string, change func(ctx context.Context, s *framework.Spec, a admitted) map[string]any, field string, needs ...framework.Need) {
			f.Rule(rules(rule, "ERR-024")...).Needs(needs...).It(text, func(ctx context.Context, s *framework.Spec) {
				c := s.FreshClient()
				a := admittedURL(ctx, s, c)
				body := change(ctx, s, a)
				r := c.Post(ctx, "/webhooks", body, framework.Invalid())
				if r.Status == http.StatusCreated {
					c.Delete(ctx, "/webhooks/"+r.String("webhook.webhook_id"))
				}
				s.Step(rule, "ERR-024")
				// The text does not say a registration refusal names the field (ERR-020 is not
				// judged here).
				r.ExpectError(http.StatusBadRequest, "invalid_config")
			})
		}
		// with returns a change that registers url(a) with ev.
		with := func(url func(a admitted) string) func(context.Context, *framework.Spec, admitted) map[string]any {
			return func(_ context.Context, _ *framework.Spec, a admitted) map[string]any {
				return map[string]any{"url": url(a), "events": ev}
			}
		}
		body := func(b func(u string) map[string]any) func(context.Context, *framework.Spec, admitted) map[string]any {
			return func(_ context.Context, _ *framework.Spec, a admitted) map[string]any { return b(a.url) }
		}
		refusal("WH-008", "an unknown key in an admitted register body answers 400 invalid_config naming it", body(func(u string) map[string]any {
			return map[string]any{"url": u, "events": ev, "secret": "mine"}
		}), "secret")
		refusal("WH-009", "a register body without url answers 400 invalid_config", body(func(string) map[string]any {
			return map[string]any{"events": ev}
		}), "url")
		refusal("WH-010", "an admitted url lengthened to 2049 characters answers 400 invalid_config", with(func(a admitted) string { return padTo(a.url, 2049) }), "url")
		f.Rule(rules("WH-010", "ERR-024")...).It("an admitted url lengthened to exactly 2048 characters is still admitted", func(ctx context.Context, s *framework.Spec) {
			c := s.FreshClient()
			a := admittedURL(ctx, s, c)
			u := padTo(a.url, 2048)
			r := c.Post(ctx, "/webhooks", map[string]any{"url": u, "events": ev}, framework.Invalid())
			if r.Status == http.StatusCreated {
				c.Delete(ctx, "/webhooks/"+r.String("webhook.webhook_id")).ExpectOK(http.StatusOK)
			}
			Expect(r.Status).To(Equal(http.StatusCreated), "a url of 2048 characters (1 to 2048 are accepted) was refused"+r.Describe())
		})
		refusal("WH-011", "an admitted https url changed to plain http answers 400 invalid_config", func(_ context.Context, s *framework.Spec, a admitted) map[string]any {
			if !a.https() {
				reason := "the URL this target admits (" + a.how + ") is not https, so no https URL can be changed to http alone; the control API's resolver override or an https receiver URL is needed"
				if s.HasControl() {
					s.Lacks("%s", reason) // the reference mock offers the resolver override
				}
				framework.SkipFor(framework.Unsupported(framework.Receiver, reason))
			}
			return map[string]any{"url": "http://" + strings.TrimPrefix(a.url, "https://"), "events": ev}
		}, "url")
		refusal("WH-012", "an admitted url given a username and password answers 400 invalid_config", with(func(a admitted) string { return withUserinfo(a.url, true) }), "url")
		refusal("WH-012", "an admitted url given a username alone answers 400 invalid_config", with(func(a admitted) string { return withUserinfo(a.url, false) }), "url")
		for _, addr := range []string{"10.0.0.1", "192.168.1.1", "169.254.169.254"} {
			refusal("WH-013", "an admitted url with its host changed to the private or local address "+addr+" answers 400 invalid_config",
				with(func(a admitted) string { return withHost(a.url, addr) }), "url")
		}
		refusal("WH-013", "an admitted url whose hostname now resolves to a private address answers 400 invalid_config", func(ctx context.Context, s *framework.Spec, a admitted) map[string]any {
			if a.host == "" {
				s.Lacks("the control API has no resolver override, so no admitted hostname can be pointed at a private address")
			}
			s.MapHost(ctx, a.host, "10.0.0.1")
			return map[string]any{"url": a.url, "events": ev}
		}, "url", framework.Control)
		refusal("WH-014", "an admitted url whose hostname no longer resolves answers 400 invalid_config", func(ctx context.Context, s *framework.Spec, a admitted) map[string]any {
			if a.host == "" {
				// No override: another host, under .invalid (RFC 6761: never resolves).
				return map[string]any{"url": withHost(a.url, "mediaspec-conformance-"+framework.RandomHex(12)+".invalid"), "events": ev}
			}
			s.MapHost(ctx, a.host)
			return map[string]any{"url": a.url, "events": ev}
		}, "url")
		events := func(list any) func(context.Context, *framework.Spec, admitted) map[string]any {
			return body(func(u string) map[string]any {
				b := map[string]any{"url": u}
				if list != nil {
					b["events"] = list
				}
				return b
			})
		}
		refusal("WH-015", "an admitted register body without events answers 400 invalid_config", events(nil), "events")
		refusal("WH-015", "an empty events list answers 400 invalid_config", events([]string{}), "events")
		refusal("WH-016", "an unknown event name answers 400 invalid_config", events([]string{"generation.started"}), "events")
		refusal("WH-016", "an unknown event name beside a known one answers 400 invalid_config (not dropped)", events([]string{"generation.completed", "generation.complete"}), "events")
		refusal("WH-017", "webhook.test is not subscribable: 400 invalid_config", events([]string{"webhook.test"}), "events")
		refusal("WH-017", "webhook.test is not subscribable beside a subscribable event: 400 invalid_config", events([]string{"credits.low", "webhook.test"}), "events")
	})
}

// webhookEndpointSpecs registers the specs of an endpoint once registered: its description, the ten
// a workspace holds and their list, its delete, another workspace's id, and the app's actions.
func webhookEndpointSpecs(f *framework.Framework) {
	Describe("webhooks: endpoint registration", func() {
		ev := []string{"generation.completed"}
		f.Rule(rules("WH-018", "ERR-024")...).It("description is optional and at most 200 characters", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			_, u := s.Hooks().NewURL()
			s.FreshClient().Post(ctx, "/webhooks", map[string]any{"url": u, "events": ev, "description": strings.Repeat("d", 201)}, framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
			// A refused register stores nothing: no endpoint at the refused url is listed (a server
			// that inserts before it validates keeps one, listed, counted and delivered to).
			sent, err := url.Parse(u)
			Expect(err).NotTo(HaveOccurred())
			lr, rows := listHooks(ctx, c)
			for _, row := range rows {
				stored, err := url.Parse(fmt.Sprint(row["url"]))
				Expect(err == nil && stored.Path == sent.Path).To(BeFalse(), "the refused register left an endpoint at its url"+lr.Describe())
			}
			for _, body := range []map[string]any{
				{"url": u, "events": ev, "description": strings.Repeat("d", 200)},
				{"url": u, "events": ev},
			} {
				r := c.Post(ctx, "/webhooks", body).ExpectOK(http.StatusCreated)
				id := r.String("webhook.webhook_id")
				if _, has := body["description"]; !has {
					Expect(r.Field("webhook.description")).To(BeNil(), "an omitted description reads null"+r.Describe())
				}
				c.Delete(ctx, "/webhooks/"+id).ExpectOK(http.StatusOK)
			}
		})

		f.Rule(rules("WH-019", "WH-020", "ERR-024")...).It("a workspace holds at most 10 endpoints, listed newest first without paging", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			_, rows := listHooks(ctx, c)
			var mine []string
			for len(rows)+len(mine) < 10 {
				mine = append(mine, registerHook(ctx, s, s.FreshClient(), "credits.low").id)
			}
			_, u := s.Hooks().NewURL()
			s.FreshClient().Post(ctx, "/webhooks", map[string]any{"url": u, "events": ev}).ExpectError(http.StatusBadRequest, "invalid_config")
			lr, all := listHooks(ctx, c)
			Expect(all).To(HaveLen(10), lr.Describe())
			_, paged := lr.Lookup("next_cursor")
			Expect(paged).To(BeFalse(), "GET /webhooks has no paging"+lr.Describe())
			if len(mine) >= 2 {
				// Newest first: this spec's endpoints appear in reverse registration order.
				var order []string
				for _, row := range all {
					for _, id := range mine {
						if row["webhook_id"] == id {
							order = append(order, id)
						}
					}
				}
				for i := range mine {
					Expect(order[len(order)-1-i]).To(Equal(mine[i]), "GET /webhooks lists newest first"+lr.Describe())
				}
			}
		})

		f.Rule(rules("WH-021", "WH-023")...).It("DELETE answers 200 {ok, webhook_id, deleted: true}, unlists the endpoint, and a second DELETE answers 404", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			h := registerHook(ctx, s, c, "credits.low")
			r := c.Delete(ctx, "/webhooks/"+h.id).ExpectOK(http.StatusOK)
			Expect(r.String("webhook_id")).To(Equal(h.id), r.Describe())
			Expect(r.Bool("deleted")).To(BeTrue(), r.Describe())
			Expect(hookRow(ctx, c, h.id)).To(BeNil(), "a deleted endpoint is not listed")
			c.Delete(ctx, "/webhooks/"+h.id).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("WH-024", "ID-016", "ERR-029")...).It("another workspace's webhook id answers 404 not_found and stays", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			h := registerHook(ctx, s, c, "credits.low")
			s.OtherClient().Delete(ctx, "/webhooks/"+h.id).ExpectError(http.StatusNotFound, "not_found")
			Expect(hookRow(ctx, c, h.id)).NotTo(BeNil(), "the endpoint survives another workspace's delete")
			_, rows := listHooks(ctx, s.OtherClient())
			for _, row := range rows {
				Expect(row["webhook_id"]).NotTo(Equal(h.id), "another workspace lists this workspace's endpoint")
			}
		})

		f.Rule("WH-025").It("the app's webhook actions have no API route: probed with the caller's own live endpoint, which stays as it was", func(ctx context.Context, s *framework.Spec) {
			// A route that exists also answers 404 for an unknown id, so the probes name a live
			// endpoint of the caller's own: only a missing route answers 404 or 405 for it.
			c := s.FreshClient()
			a := admittedURL(ctx, s, c)
			reg := c.Post(ctx, "/webhooks", map[string]any{"url": a.url, "events": []string{"credits.low"}}).ExpectOK(http.StatusCreated)
			id := reg.String("webhook.webhook_id")
			DeferCleanup(func(ctx SpecContext) { c.Delete(ctx, "/webhooks/"+id) })
			before := hookRow(ctx, c, id)
			Expect(before).NotTo(BeNil(), "the new endpoint is listed")
			probe := func(r *framework.Response, what string) {
				GinkgoHelper()
				Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), what+" on a live endpoint of the caller's"+r.Describe())
			}
			for _, op := range []string{"test", "rotate", "enable", "disable"} {
				probe(c.Post(ctx, "/webhooks/"+id+"/"+op, nil, framework.Invalid()), "POST /webhooks/{id}/"+op)
			}
			probe(c.Get(ctx, "/webhooks/"+id+"/deliveries", framework.Invalid()), "GET /webhooks/{id}/deliveries")
			// A read of one endpoint is none of the app's actions: that it has no route is the
			// reference's (WH-025), held with --strict.
			one := c.Get(ctx, "/webhooks/"+id, framework.Invalid())
			s.ReferenceOnly("WH-025", "GET /webhooks/{id} is no API route", func() { probe(one, "GET /webhooks/{id}") })
			probe(c.Do(ctx, http.MethodPatch, "/webhooks/"+id, framework.JSONBody(map[string]any{"status": "disabled"}), framework.Invalid()), "PATCH /webhooks/{id}")
			after := hookRow(ctx, c, id)
			Expect(after).To(Equal(before), "a probe changed the endpoint")
		})
	})
}
