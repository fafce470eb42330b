package specs

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// authSpecs registers the specs of authentication, keys, scopes and workspace isolation.
func authSpecs(f *framework.Framework) {
	authenticationSpecs(f)
	workspaceCheckSpecs(f)
	keySpecs(f)
	keyCheckOrderSpecs(f)
	scopeSpecs(f)
	isolationSpecs(f)
	operationMatrixSpecs(f)
}

// authenticationSpecs registers the specs of the two authentication schemes and refused keys.
func authenticationSpecs(f *framework.Framework) {
	Describe("auth: keys, schemes and workspace checks", func() {
		f.Rule(rules("AUTH-001", "ERR-021")...).It("a call without a key answers 401 not_authorized", func(ctx context.Context, s *framework.Spec) {
			s.Anonymous().Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			s.Anonymous().Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}).
				ExpectError(http.StatusUnauthorized, "not_authorized")
		})

		f.Rule(rules("AUTH-002", "ERR-021")...).It("a key not of the sk_live_ form answers 401 not_authorized, by either scheme", func(ctx context.Context, s *framework.Spec) {
			for _, bad := range []string{"not-a-key", "sk_test_" + framework.RandomHex(40), "sk_live_", "sk_live_" + "!!!!" + framework.RandomHex(36)} {
				c := s.WithKey(bad)
				c.Get(ctx, "/credits/balance", framework.Invalid()).ExpectError(http.StatusUnauthorized, "not_authorized")
				for _, sc := range s.KeySchemes()[1:] {
					c.WithScheme(sc).Get(ctx, "/credits/balance", framework.Invalid()).ExpectError(http.StatusUnauthorized, "not_authorized")
				}
			}
		})

		f.Rule(rules("AUTH-003", "ERR-021")...).It("a well-formed unknown sk_live_ key answers 401 not_authorized", func(ctx context.Context, s *framework.Spec) {
			c := s.WithKey(unknownKey())
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			for _, sc := range s.KeySchemes()[1:] {
				c.WithScheme(sc).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			}
		})

		f.Rule(rules("AUTH-008")...).It("an Authorization header with another scheme (Basic, or the key without Bearer) answers 401", func(ctx context.Context, s *framework.Spec) {
			key := s.Client().Key()
			a := s.Anonymous()
			a.Get(ctx, "/credits/balance", framework.Header("Authorization", "Basic dXNlcjpwYXNz"), framework.Invalid()).
				ExpectError(http.StatusUnauthorized, "not_authorized")
			a.Get(ctx, "/credits/balance", framework.Header("Authorization", "Token "+key), framework.Invalid()).
				ExpectError(http.StatusUnauthorized, "not_authorized")
			a.Get(ctx, "/credits/balance", framework.Header("Authorization", key), framework.Invalid()).
				ExpectError(http.StatusUnauthorized, "not_authorized")
		})

		f.Rule("AUTH-006", "AUTH-007", "AUTH-011").It("accepts the key as a bearer token and in the target's key header alike, and never echoes it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			s.Step("AUTH-006")
			bearer := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			// The workspace's endpoint list changes only when a spec registers one: both schemes
			// reach the same workspace when they list the same endpoints.
			bearerHooks := c.Get(ctx, "/webhooks").ExpectOK(http.StatusOK)
			answers := []*framework.Response{bearer, bearerHooks}
			s.Step("AUTH-007")
			if len(s.KeySchemes()) > 1 {
				hc := c.WithScheme(framework.APIKeyHdr)
				answers = append(answers, hc.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK))
				header := hc.Get(ctx, "/webhooks").ExpectOK(http.StatusOK)
				Expect(header.Doc()).To(Equal(bearerHooks.Doc()), "both schemes reach the same workspace"+header.Describe())
				answers = append(answers, header)
			}
			s.Step("AUTH-011")
			if s.HasDescription() {
				answers = append(answers, c.Get(ctx, s.DescriptionPath()).ExpectStatus(http.StatusOK))
			}
			for _, r := range answers {
				answer.NoKeyIn(r, c.Key())
			}
			if len(s.KeySchemes()) == 1 {
				framework.SkipFor(framework.NotDeclared(framework.NoKeyHeader))
			}
		})

		f.Rule(rules("AUTH-004", "ERR-021")...).It("a revoked key answers 401 not_authorized", func(ctx context.Context, s *framework.Spec) {
			c := revokedKey(ctx, s, nil)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			for _, sc := range s.KeySchemes()[1:] {
				c.WithScheme(sc).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			}
		})

	})
}

// workspaceCheckSpecs registers the specs of the checks after the key's: its workspace, plan and
// request allowance (the container of authenticationSpecs continued under its text, so the specs
// keep their full names).
func workspaceCheckSpecs(f *framework.Framework) {
	Describe("auth: keys, schemes and workspace checks", func() {
		f.Rule(rules("AUTH-021", "ERR-034")...).It("a key whose workspace was deleted answers 410 workspace_unavailable", func(ctx context.Context, s *framework.Spec) {
			// Without control, the profile's key of a workspace its operator deleted.
			var c *framework.Client
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
				c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
				ws.Delete(ctx)
			} else {
				c = s.RoleKey(framework.DeletedWorkspaceKey)
			}
			// Unjudged: the refusal's status is this spec's subject (AUTH-021, ERR-034); judged, a status
			// the operation never documents would be charged to its answer rule and only block the spec.
			c.Get(ctx, "/credits/balance", framework.Unjudged()).ExpectError(http.StatusGone, "workspace_unavailable")
			c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}, framework.Unjudged()).
				ExpectError(http.StatusGone, "workspace_unavailable")
		})

		f.Rule(rules("AUTH-024")...).StrictOnly("AUTH-024", "the order of the key and workspace checks").It("a revoked key of a deleted workspace answers 401, not 410", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, k := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			Expect(s.Control().RevokeKey(ctx, k.ID)).To(Succeed())
			ws.Delete(ctx)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
		})

		f.Rule(rules("AUTH-022", "ERR-023", "ERR-017")...).It("a free-plan workspace's key answers 403 required_plan naming pro", func(ctx context.Context, s *framework.Spec) {
			// Without control, the profile's key of a workspace whose plan lacks the agent API.
			var c *framework.Client
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: "free"})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
			} else {
				c = s.RoleKey(framework.NoAgentAPIKey)
			}
			answers := []*framework.Response{
				c.Get(ctx, "/credits/balance"),
				c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}),
			}
			if s.HasDescription() {
				answers = append(answers, c.Get(ctx, s.DescriptionPath()))
			}
			for _, r := range answers {
				s.Step("AUTH-022", "ERR-023")
				r.ExpectError(http.StatusForbidden, "required_plan")
				s.Step("AUTH-022", "ERR-017")
				expectRequiredPlan(s, r)
			}
		})

		f.Rule(rules("AUTH-025")...).StrictOnly("AUTH-025", "the order of the workspace and plan checks").It("a deleted free-plan workspace answers 410, the workspace check before the plan", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: "free"})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			ws.Delete(ctx)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusGone, "workspace_unavailable")
		})

		f.Rule(rules("AUTH-023", "ERR-037")...).It("a key that used its request allowance answers 429 quota_exceeded, not retryable", func(ctx context.Context, s *framework.Spec) {
			// Without control, the profile's key whose allowance its operator used up: the
			// allowance being served before it is used is judged only with control.
			var c *framework.Client
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, RequestAllowance: ptr(3)})
				for i := 0; i < 3; i++ {
					c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
				}
			} else {
				c = s.RoleKey(framework.AllowanceUsedKey)
			}
			r := c.Get(ctx, "/credits/balance").ExpectError(http.StatusTooManyRequests, "quota_exceeded")
			Expect(r.Bool("error.retryable")).To(BeFalse())
			c.Get(ctx, "/capabilities").ExpectError(http.StatusTooManyRequests, "quota_exceeded")
		})

		f.Rule(rules("AUTH-027")...).StrictOnly("AUTH-027", "the order of the request allowance and rate-limit checks").It("the request allowance is checked before the bucket: both spent answers quota_exceeded", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, RequestAllowance: ptr(2), Buckets: map[string]int{"agent_read": 2}})
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusTooManyRequests, "quota_exceeded")
		})

		f.Rule(rules("ERR-029", "AUTH-001")...).It("an id that names nothing answers 404 not_found, after the key check", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, path := range []string{"/generations/gen_" + framework.RandomHex(32), "/batches/bg_" + framework.RandomHex(32), "/assets/ast_" + framework.RandomHex(32), "/workflow-runs/wfr_" + framework.RandomHex(32)} {
				// The route is a keyed operation, not a catch-all: without a key it answers 401.
				s.Step("AUTH-001")
				s.Anonymous().Get(ctx, path).ExpectError(http.StatusUnauthorized, "not_authorized")
				s.Step("ERR-029")
				r := c.Get(ctx, path).ExpectError(http.StatusNotFound, "not_found")
				answer.NoKeyIn(r, c.Key())
			}
		})
	})

}

// keySpecs registers the specs of key expiry and key form.
func keySpecs(f *framework.Framework) {
	Describe("auth: key expiry and key form", func() {
		f.Rule(rules("AUTH-005", "ERR-021")...).It("an expired key answers 401 not_authorized", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's expired key; with control the spec also sees a key stop working.
				c := s.RoleKey(framework.ExpiredKey)
				c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
				for _, sc := range s.KeySchemes()[1:] {
					c.WithScheme(sc).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
				}
				c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}).
					ExpectError(http.StatusUnauthorized, "not_authorized")
				return
			}
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			now := s.ClockNow(ctx)
			past := now.Add(-time.Minute)
			old, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, ExpiresAt: &past})
			old.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			soon := now.Add(2 * time.Minute)
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}, ExpiresAt: &soon})
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.Advance(ctx, 121)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			for _, sc := range s.KeySchemes()[1:] {
				c.WithScheme(sc).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			}
			c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}).
				ExpectError(http.StatusUnauthorized, "not_authorized")
		})

		f.Rule("AUTH-010").It("keys issued for the service are live keys: sk_live_ and letters and digits, and they work", func(ctx context.Context, s *framework.Spec) {
			live := regexp.MustCompile(`^sk_live_[A-Za-z0-9]{32,64}$`)
			if !s.HasControl() {
				// The keys the service issued for this run: the main key, and the read-only key and
				// the second workspace's key where the run has them.
				clients := map[string]*framework.Client{"the main key": s.Client()}
				if caps := f.Capabilities(); caps.ReadKey {
					clients["the read-only key"] = s.ReadClient()
				}
				if caps := f.Capabilities(); caps.SecondWorkspace {
					clients["the second workspace's key"] = s.OtherClient()
				}
				for name, c := range clients {
					// Booleans only: a failure message must not print the key.
					Expect(live.MatchString(c.Key())).To(BeTrue(), name+" is sk_live_ and 32 to 64 letters and digits")
					c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
				}
				return
			}
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			for _, scopes := range [][]string{{"read", "generate"}, {"read"}, {"generate"}} {
				c, k := ws.NewKey(ctx, framework.KeyOptions{Scopes: scopes})
				// Booleans only: a failure message must not print the key.
				Expect(strings.HasPrefix(k.Key, "sk_live_")).To(BeTrue(), "a key made for "+strings.Join(scopes, "+")+" starts with sk_live_")
				Expect(live.MatchString(k.Key)).To(BeTrue(), "a key is sk_live_ and 32 to 64 letters and digits")
				c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			}
		})

		f.Rule(rules("AUTH-026", "ERR-023", "ERR-037")...).StrictOnly("AUTH-026", "the order of the plan and request allowance checks").It("the plan check comes before the request allowance: a free-plan key with its allowance used answers 403 required_plan", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: "free"})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}, RequestAllowance: ptr(0)})
			for i := 0; i < 3; i++ {
				r := c.Get(ctx, "/credits/balance").ExpectError(http.StatusForbidden, "required_plan")
				Expect(r.String("error.required_plan")).To(Equal("pro"), r.Describe())
			}
			c.Post(ctx, "/estimates", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client())}).
				ExpectError(http.StatusForbidden, "required_plan")
			// The allowance really is used: once the plan allows the API, the key is over it.
			Expect(s.Control().PatchWorkspace(ctx, ws.ID, map[string]any{"plan": "pro"})).To(Succeed())
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusTooManyRequests, "quota_exceeded")
		})
	})

}

// keyCheckOrderSpecs registers the specs of the key checks that come before the workspace check.
func keyCheckOrderSpecs(f *framework.Framework) {
	Describe("auth: key checks before the workspace check", func() {
		f.Rule(rules("AUTH-024", "AUTH-005", "ERR-021")...).StrictOnly("AUTH-024", "the order of the key and workspace checks").It("an expired key of a deleted workspace answers 401, not 410", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			soon := s.ClockNow(ctx).Add(time.Minute)
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, ExpiresAt: &soon})
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.Advance(ctx, 61)
			ws.Delete(ctx)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			for _, sc := range s.KeySchemes()[1:] {
				c.WithScheme(sc).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			}
		})
	})

}

// scopeSpecs registers the specs of key scopes.
func scopeSpecs(f *framework.Framework) {
	Describe("auth: scopes", func() {
		f.Rule(rules("AUTH-016", "AUTH-017", "AUTH-018", "AUTH-020", "ERR-022")...).It("generate routes refuse a read-only key with 403 insufficient_scope", func(ctx context.Context, s *framework.Spec) {
			c := s.ReadClient()
			calls := []struct {
				path string
				body map[string]any
			}{
				{"/generations", map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, s.Client()), "max_credits": 10}},
				{"/uploads", uploads.Reservation()},
				{"/uploads/ast_" + framework.RandomHex(32) + "/finalize", nil},
				{"/uploads/from-url", fromURLStandIn(c)},
				{"/webhooks", map[string]any{"url": "https://example.com/hook", "events": []string{"generation.completed"}}},
				{"/workflows/wf_" + framework.RandomHex(32) + "/invoke", invokeStandIn(c, 10)},
				{"/workflows/templates/conformance_template/invoke", invokeStandIn(c, 10)},
			}
			for _, call := range calls {
				switch {
				case call.path == "/generations":
					s.Step("AUTH-016", "ERR-022")
				case strings.HasPrefix(call.path, "/uploads"):
					s.Step("AUTH-017", "ERR-022")
				case strings.HasPrefix(call.path, "/webhooks"):
					s.Step("AUTH-018", "ERR-022")
				default:
					s.Step("AUTH-020", "ERR-022")
				}
				c.Post(ctx, call.path, call.body).ExpectError(http.StatusForbidden, "insufficient_scope")
			}
			s.Step("AUTH-018", "ERR-022")
			c.Delete(ctx, "/webhooks/wh_"+framework.RandomHex(32)).ExpectError(http.StatusForbidden, "insufficient_scope")
		})

		f.Rule(rules("AUTH-029")...).StrictOnly("AUTH-029", "the order of the scope and body checks off the submit").It("the scope check comes before the body check: a read-only key with a bad body gets 403", func(ctx context.Context, s *framework.Spec) {
			c := s.ReadClient()
			c.Post(ctx, "/uploads", map[string]any{"bogus": true}, framework.Invalid()).ExpectError(http.StatusForbidden, "insufficient_scope")
			c.Do(ctx, http.MethodPost, "/webhooks", framework.RawBody([]byte(`{"url":`), "application/json"), framework.Invalid()).
				ExpectError(http.StatusForbidden, "insufficient_scope")
		})

		f.Rule("AUTH-013", "AUTH-019", "LEDGER-023").It("read endpoints accept a read-only key", func(ctx context.Context, s *framework.Spec) {
			c := s.ReadClient()
			s.Step("LEDGER-023", "AUTH-013")
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.Step("AUTH-019", "AUTH-013")
			c.Get(ctx, "/webhooks").ExpectOK(http.StatusOK)
			s.Step("AUTH-013")
			c.Get(ctx, "/capabilities").ExpectOK(http.StatusOK)
			c.Get(ctx, "/generations").ExpectOK(http.StatusOK)
			c.Get(ctx, "/actors").ExpectOK(http.StatusOK)
			c.Get(ctx, "/voices").ExpectOK(http.StatusOK)
			c.Get(ctx, "/presets").ExpectOK(http.StatusOK)
			c.Get(ctx, "/assets").ExpectOK(http.StatusOK)
			c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
			c.Get(ctx, "/workflow-runs").ExpectOK(http.StatusOK)
		})

		f.Rule("AUTH-014").It("read endpoints accept a key holding only the generate scope", func(ctx context.Context, s *framework.Spec) {
			// Without control, the profile's key holding only generate.
			var c *framework.Client
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"generate"}})
			} else {
				c = s.RoleKey(framework.GenerateOnlyKey)
			}
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			c.Get(ctx, "/capabilities").ExpectOK(http.StatusOK)
		})
	})

}

// isolationSpecs registers the specs of workspace isolation.
func isolationSpecs(f *framework.Framework) {
	Describe("auth: workspace isolation", func() {
		f.Rule(rules("AUTH-030", "ID-016", "ERR-029")...).It("another workspace's upload id answers 404 not_found, never 403", func(ctx context.Context, s *framework.Spec) {
			mine := s.Client()
			res := mine.Post(ctx, "/uploads", uploads.Reservation()).ExpectOK(http.StatusCreated)
			id := res.String("asset_id")
			Expect(id).To(MatchRegexp(assetIDPattern), res.Describe())
			other := s.OtherClient()
			other.Post(ctx, "/uploads/"+id+"/finalize", nil).ExpectError(http.StatusNotFound, "not_found")
			other.Get(ctx, "/assets/"+id).ExpectError(http.StatusNotFound, "not_found")
			// The owner is not told not_found: the bytes never arrived and the link is live.
			own := mine.Post(ctx, "/uploads/"+id+"/finalize", nil)
			Expect(own.Status).NotTo(Equal(http.StatusNotFound), "the owner's own reservation must not read as missing"+own.Describe())
		})
	})

}

// operationMatrixSpecs registers the specs that run every operation of the REST description (read
// at run time, with its x-scope) with each kind of key: none, malformed, unknown, revoked, expired,
// read-only and generate-only. Path parameters hold the caller's own ids and POSTs an accepted
// body, so an operation that forgot a check answers 200 or 201 rather than a 404 or 400 that
// passes for a refusal.
func operationMatrixSpecs(f *framework.Framework) {
	Describe("auth: every operation of the REST description, by its x-scope", func() {
		f.Rule(rules("AUTH-001", "AUTH-002", "AUTH-003", "AUTH-009", "AUTH-011", "ERR-021")...).Needs(framework.Spends).It("every keyed operation refuses a missing, malformed or unknown key with 401 not_authorized, the probes need none, and no answer carries the key", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			o := makeOwnResources(ctx, s, sp.c, spenderWorkspace(sp))
			keyed, public := keyedOperations(s)
			// Each operation gets one malformed and one unknown key; the kinds of malformed key and
			// the two schemes take turns over the operations.
			malformed := []func() string{
				func() string { return "sk_test_" + framework.RandomHex(40) },
				func() string { return "sk_live_!!!!" + framework.RandomHex(36) },
				func() string { return "key-" + framework.RandomHex(32) },
			}
			schemes := s.KeySchemes()
			for i, op := range keyed {
				By(op.String())
				s.Step("AUTH-001", "ERR-021")
				o.call(ctx, s.Anonymous(), op).ExpectError(http.StatusUnauthorized, "not_authorized")
				s.Step("AUTH-002", "ERR-021")
				bad := malformed[i%len(malformed)]()
				r := o.call(ctx, s.WithKey(bad).WithScheme(schemes[i%len(schemes)]), op, framework.Invalid()).ExpectError(http.StatusUnauthorized, "not_authorized")
				s.Step("AUTH-011")
				keyNotIn(r, bad)
				s.Step("AUTH-003", "ERR-021")
				unknown := unknownKey()
				r = o.call(ctx, s.WithKey(unknown).WithScheme(schemes[(i+1)%len(schemes)]), op).ExpectError(http.StatusUnauthorized, "not_authorized")
				s.Step("AUTH-011")
				keyNotIn(r, unknown)
			}
			// The probes' paths are the target's to name (Config.LivePath, ReadyPath); their answers are
			// not shown, so a probe is judged only on needing no key.
			s.Step("AUTH-009")
			for _, op := range public {
				Expect(op.Method).To(Equal(http.MethodGet), op.String())
				for _, c := range []*framework.Client{s.Anonymous(), s.WithKey(unknownKey())} {
					r := o.call(ctx, c, op)
					Expect(r.Status).To(And(BeNumerically(">=", 200), BeNumerically("<", 300)), op.String()+" needs no key: a live service's probe answers 2XX without one, or with an unknown one"+r.Describe())
				}
			}
			if o.link != "" {
				s.Step("LINK-005")
				r := s.FetchLink(ctx, o.link)
				Expect(r.Status).To(Equal(http.StatusOK), "a file link is signed: it answers without a key"+r.Describe())
			}
		})

		f.Rule(rules("AUTH-004", "AUTH-005", "AUTH-011", "ERR-021")...).Needs(framework.Spends, framework.RevokedKey, framework.ExpiredKey).It("every keyed operation refuses a revoked or an expired key with 401 not_authorized", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			o := makeOwnResources(ctx, s, sp.c, spenderWorkspace(sp))
			revoked := revokedKey(ctx, s, &sp)
			expired := expiredKey(ctx, s, &sp)
			keyed, _ := keyedOperations(s)
			for _, op := range keyed {
				By(op.String())
				s.Step("AUTH-004", "ERR-021")
				r := o.call(ctx, revoked, op).ExpectError(http.StatusUnauthorized, "not_authorized")
				for _, sc := range s.KeySchemes()[1:] {
					h := o.call(ctx, revoked.WithScheme(sc), op).ExpectError(http.StatusUnauthorized, "not_authorized")
					keyNotIn(h, revoked.Key())
				}
				s.Step("AUTH-011")
				keyNotIn(r, revoked.Key())
				s.Step("AUTH-005", "ERR-021")
				r = o.call(ctx, expired, op).ExpectError(http.StatusUnauthorized, "not_authorized")
				s.Step("AUTH-011")
				keyNotIn(r, expired.Key())
			}
		})

		f.Rule(rules("AUTH-014", "AUTH-011")...).Needs(framework.Spends).It("every read operation serves a key holding only generate", func(ctx context.Context, s *framework.Spec) {
			var o ownResources
			var gen *framework.Client
			if s.HasControl() {
				sp := newSpender(ctx, s)
				o = makeOwnResources(ctx, s, sp.c, spenderWorkspace(sp))
				gen, _ = sp.newKey(ctx, framework.KeyOptions{Scopes: []string{"generate"}})
			} else {
				// The profile's key holding only generate makes the resources of its own workspace
				// itself (the reads among them are its reads too), then reads each.
				gen = s.RoleKey(framework.GenerateOnlyKey)
				o = makeOwnResources(ctx, s, gen, "")
			}
			keyed, _ := keyedOperations(s)
			for _, op := range keyed {
				if op.Scope != "read" {
					continue
				}
				By(op.String())
				s.Step("AUTH-014")
				r := o.call(ctx, gen, op)
				expectServed(r, o, op)
				s.Step("AUTH-011")
				keyNotIn(r, gen.Key())
			}
		})

		f.Rule(rules("AUTH-013", "AUTH-015", "AUTH-016", "AUTH-017", "AUTH-018", "AUTH-019", "AUTH-020", "LEDGER-023", "VER-002", "AUTH-011", "ERR-022")...).Needs(framework.Spends, framework.ReadKey).It("a read-only key is served by every read operation and refused 403 insufficient_scope by every generate operation, which then changes nothing", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			o := makeOwnResources(ctx, s, sp.c, spenderWorkspace(sp))
			read := s.ReadClient()
			if sp.ws != nil {
				read, _ = sp.newKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			}
			keyed, _ := keyedOperations(s)
			for _, op := range keyed {
				By(op.String())
				s.Step(scopeRule(op)...)
				r := o.call(ctx, read, op)
				switch op.Scope {
				case "read":
					expectServed(r, o, op)
				default:
					r.ExpectError(http.StatusForbidden, "insufficient_scope")
				}
				s.Step("AUTH-011")
				keyNotIn(r, read.Key())
			}
			if o.hookID != "" {
				s.Step("AUTH-018")
				Expect(hookRow(ctx, sp.c, o.hookID)).NotTo(BeNil(), "a DELETE refused for its scope leaves the endpoint registered")
			}
		})
	})

}

// expectRequiredPlan checks a plan refusal names the plan in error.required_plan (Errors: on plan
// refusals); that the agent API needs the plan called pro is the reference's choice (AUTH-022).
func expectRequiredPlan(s *framework.Spec, r *framework.Response) {
	GinkgoHelper()
	plan := r.String("error.required_plan")
	Expect(plan).NotTo(BeEmpty(), "a plan refusal names the plan"+r.Describe())
	s.ReferenceOnly("AUTH-022", "the agent API needs the plan pro", func() {
		Expect(plan).To(Equal("pro"), r.Describe())
	})
}

// spenderWorkspace is the spender's workspace id, "" without control.
func spenderWorkspace(sp spender) string {
	if sp.ws == nil {
		return ""
	}
	return sp.ws.ID
}

// expectServed checks a read operation served the key: 200 on the caller's own resource, or 404
// not_found where the matrix could only give a stand-in id (the key and scope were accepted).
func expectServed(r *framework.Response, o ownResources, op framework.Operation) {
	GinkgoHelper()
	if _, real := o.path(op); !real {
		r.ExpectError(http.StatusNotFound, "not_found")
		return
	}
	Expect(r.Status).To(Equal(http.StatusOK), op.String()+" serves the key its x-scope "+op.Scope+" admits, on the caller's own resource"+r.Describe())
}

// scopeRule is the rule a read-only key's call to op checks.
func scopeRule(op framework.Operation) []string {
	switch {
	case op.Scope == "read" && op.String() == "POST /estimates":
		return []string{"AUTH-015"}
	case op.Scope == "read" && op.String() == "GET /webhooks":
		return []string{"AUTH-019", "AUTH-013"}
	case op.Scope == "read" && op.String() == "GET /credits/balance":
		return []string{"LEDGER-023", "AUTH-013"}
	case op.Scope == "read" && op.Method+" "+op.DocPath == "GET /openapi.json":
		return []string{"VER-002", "AUTH-013"}
	case op.Scope == "read":
		return []string{"AUTH-013"}
	case op.Path == "/generations":
		return []string{"AUTH-016", "ERR-022"}
	case strings.HasPrefix(op.Path, "/uploads"):
		return []string{"AUTH-017", "ERR-022"}
	case strings.HasPrefix(op.Path, "/webhooks"):
		return []string{"AUTH-018", "ERR-022"}
	case strings.HasPrefix(op.Path, "/workflows"):
		return []string{"AUTH-020", "ERR-022"}
	}
	return []string{"ERR-022"}
}

// revokedKey returns a revoked read+generate key: with control, one made in the spender's
// workspace (the spec's own without a spender) that works first, so the refusals that follow are
// the revocation's; without, the profile's revoked key.
func revokedKey(ctx context.Context, s *framework.Spec, sp *spender) *framework.Client {
	GinkgoHelper()
	if !s.HasControl() {
		return s.RoleKey(framework.RevokedKey)
	}
	var c *framework.Client
	var k framework.Key
	if sp != nil && sp.ws != nil {
		c, k = sp.newKey(ctx, framework.KeyOptions{})
	} else {
		c, k = s.NewWorkspace(ctx, framework.WorkspaceOptions{}).NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
	}
	c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	Expect(s.Control().RevokeKey(ctx, k.ID)).To(Succeed())
	return c
}

// expiredKey returns an expired read+generate key: with control, one of the spender's workspace
// that works first and expires as the spec moves the service clock a minute on; without, the
// profile's expired key.
func expiredKey(ctx context.Context, s *framework.Spec, sp *spender) *framework.Client {
	GinkgoHelper()
	if !s.HasControl() {
		return s.RoleKey(framework.ExpiredKey)
	}
	soon := s.ClockNow(ctx).Add(time.Minute)
	c, _ := sp.newKey(ctx, framework.KeyOptions{ExpiresAt: &soon})
	c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	s.Advance(ctx, 61)
	return c
}
