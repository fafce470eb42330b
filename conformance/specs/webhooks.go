package specs

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// webhookSpecs registers the specs of webhook endpoints.
func webhookSpecs(f *framework.Framework) {
	Describe("webhooks: endpoint registration", func() {
		f.Rule("WH-001", "WH-002", "WH-003", "WH-004", "WH-005", "WH-006", "WH-007", "ID-008", "CORE-008").It(
			"POST /webhooks answers 201 {ok, webhook, secret} once; the endpoint is active and listed without the secret", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				before, _ := balanceOf(ctx, c)
				path, u := s.Hooks().NewURL()
				// Register with an upper-case scheme: normalizing keeps scheme, lowercased host and path.
				parsed, err := url.Parse(u)
				Expect(err).NotTo(HaveOccurred())
				sent := strings.ToUpper(parsed.Scheme) + "://" + strings.ToUpper(parsed.Host) + parsed.Path
				events := []string{"generation.failed", "generation.completed"}
				r := c.Post(ctx, "/webhooks", map[string]any{"url": sent, "events": events, "description": "conformance"}).ExpectOK(http.StatusCreated)
				Expect(r.Header.Get("Location")).To(BeEmpty(), "the registration answer has no Location"+r.Describe())
				secret := r.String("secret")
				Expect(secret).To(MatchRegexp(secretPattern.String()), r.Describe())
				wh := objectAt(r, "webhook")
				checkHookRow(r, wh, "webhook")
				id := wh["webhook_id"].(string)
				DeferCleanup(func(ctx SpecContext) { c.Delete(ctx, "/webhooks/"+id) })
				Expect(wh["status"]).To(Equal("active"), r.Describe())
				Expect(intField(r, wh, "consecutive_failures", "webhook")).To(BeZero(), r.Describe())
				Expect(wh["description"]).To(Equal("conformance"), r.Describe())
				Expect(stringList(r, wh, "events", "webhook")).To(Equal(events), "events echoes the names as registered"+r.Describe())
				stored, err := url.Parse(wh["url"].(string))
				Expect(err).NotTo(HaveOccurred(), r.Describe())
				Expect(stored.Scheme).To(Equal(strings.ToLower(parsed.Scheme)), r.Describe())
				Expect(stored.Hostname()).To(Equal(strings.ToLower(parsed.Hostname())), r.Describe())
				Expect(stored.Path).To(Equal(path), r.Describe())

				lr, rows := listHooks(ctx, c)
				Expect(strings.Contains(string(lr.Body), secret)).To(BeFalse(), "GET /webhooks carries the secret"+lr.Describe())
				found := false
				for i, row := range rows {
					checkHookRow(lr, row, fmt.Sprintf("webhooks[%d]", i))
					if row["webhook_id"] == id {
						found = true
					}
				}
				Expect(found).To(BeTrue(), "the new endpoint is listed"+lr.Describe())
				d := c.Delete(ctx, "/webhooks/"+id).ExpectOK(http.StatusOK)
				Expect(strings.Contains(string(d.Body), secret)).To(BeFalse(), "the delete answer carries the secret"+d.Describe())
				after, _ := balanceOf(ctx, c)
				Expect(after).To(Equal(before), "registering and deleting cost nothing")
			})

		// goodURL is a url the target must admit: the receiver's when the target admits it, so
		// that a refusal can only come from the fault under test; else a public https url, which
		// may not resolve where the suite runs (then a refusal may have two causes).
		goodURL := func(s *framework.Spec) (string, bool) {
			if s.HasReceiver() {
				_, u := s.Hooks().NewURL()
				return u, true
			}
			return "https://hooks.example.com/mediaspec", false
		}
		// refusal registers body (its url "GOOD" replaced by goodURL) and requires 400
		// invalid_config naming field (ERR-020) when the url is known good or at fault itself.
		refusal := func(rule, text string, body map[string]any, field string) {
			f.Rule(rules(rule, "ERR-024", "ERR-020")...).It(text, func(ctx context.Context, s *framework.Spec) {
				c := s.FreshClient()
				u, known := goodURL(s)
				sent := maps.Clone(body)
				if sent["url"] == "GOOD" {
					sent["url"] = u
				}
				r := c.Post(ctx, "/webhooks", sent, framework.Invalid())
				if r.Status == http.StatusCreated {
					c.Delete(ctx, "/webhooks/"+r.String("webhook.webhook_id"))
				}
				r.ExpectError(http.StatusBadRequest, "invalid_config")
				if known || field == "url" {
					expectField(r, field)
				}
			})
		}
		good := "GOOD"
		ev := []string{"generation.completed"}
		refusal("WH-008", "an unknown key in the register body answers 400 invalid_config", map[string]any{"url": good, "events": ev, "secret": "mine"}, "secret")
		refusal("WH-009", "a register body without url answers 400 invalid_config", map[string]any{"events": ev}, "url")
		refusal("WH-010", "a url over 2048 characters answers 400 invalid_config", map[string]any{"url": "https://hooks.example.com/" + strings.Repeat("a", 2048), "events": ev}, "url")
		refusal("WH-011", "a plain http url to a public host answers 400 invalid_config", map[string]any{"url": "http://example.com/hooks", "events": ev}, "url")
		refusal("WH-012", "a url with a username and password answers 400 invalid_config", map[string]any{"url": "https://user:secret@example.com/hooks", "events": ev}, "url")
		for _, addr := range []string{"10.0.0.1", "192.168.1.1", "169.254.169.254"} {
			refusal("WH-013", "a url naming the private or local address "+addr+" answers 400 invalid_config", map[string]any{"url": "https://" + addr + "/hooks", "events": ev}, "url")
		}
		refusal("WH-014", "a url whose hostname does not resolve answers 400 invalid_config", map[string]any{"url": "https://mediaspec-conformance-" + randomHex(12) + ".invalid/hooks", "events": ev}, "url")
		refusal("WH-015", "a register body without events answers 400 invalid_config", map[string]any{"url": good}, "events")
		refusal("WH-015", "an empty events list answers 400 invalid_config", map[string]any{"url": good, "events": []string{}}, "events")
		refusal("WH-016", "an unknown event name answers 400 invalid_config", map[string]any{"url": good, "events": []string{"generation.started"}}, "events")
		refusal("WH-017", "webhook.test is not subscribable: 400 invalid_config", map[string]any{"url": good, "events": []string{"webhook.test"}}, "events")
		refusal("WH-017", "webhook.test is not subscribable beside a subscribable event: 400 invalid_config", map[string]any{"url": good, "events": []string{"credits.low", "webhook.test"}}, "events")

		f.Rule(rules("WH-018", "ERR-024")...).It("description is optional and at most 200 characters", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			_, u := s.Hooks().NewURL()
			s.FreshClient().Post(ctx, "/webhooks", map[string]any{"url": u, "events": ev, "description": strings.Repeat("d", 201)}, framework.Invalid()).
				ExpectError(http.StatusBadRequest, "invalid_config")
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

		f.Rule("WH-025").It("the app's webhook actions have no API route", func(ctx context.Context, s *framework.Spec) {
			id := "wh_" + randomHex(32)
			c := s.Client()
			for _, op := range []string{"test", "rotate", "enable", "disable"} {
				r := c.Post(ctx, "/webhooks/"+id+"/"+op, nil, framework.Invalid())
				Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), "POST /webhooks/{id}/"+op+r.Describe())
			}
			r := c.Get(ctx, "/webhooks/"+id+"/deliveries", framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), r.Describe())
		})
	})

}
