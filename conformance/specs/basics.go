package specs

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

func health(f *framework.Framework) {
	Describe("health probes", func() {
		f.Rule("HEALTH-001", "AUTH-009").It("GET /health/live answers 200 {ok: true, status: live} without a key", func(ctx context.Context, s *framework.Spec) {
			r := s.Anonymous().Get(ctx, "/health/live").ExpectOK(http.StatusOK)
			Expect(r.Field("status")).To(Equal("live"), r.Describe())
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), r.Describe())
		})

		f.Rule("HEALTH-002", "AUTH-009").It("GET /health/ready answers 200 {ok: true, status: ready, checks} without a key", func(ctx context.Context, s *framework.Spec) {
			r := s.Anonymous().Get(ctx, "/health/ready").ExpectOK(http.StatusOK)
			Expect(r.Field("status")).To(Equal("ready"), r.Describe())
			checks := objectAt(r, "checks")
			for name, v := range checks {
				Expect(v).To(oneOf("ok", "failing"), "check "+name+r.Describe())
				Expect(v).To(Equal("ok"), "a ready service has no failing check; "+name+" is failing"+r.Describe())
			}
			_, isErr := r.Lookup("error")
			Expect(isErr).To(BeFalse(), "a probe answer is not the error envelope"+r.Describe())
		})

		f.Rule("HEALTH-004").It("the probes ignore any key sent, even a bogus one", func(ctx context.Context, s *framework.Spec) {
			bogus := s.WithKey(unknownKey())
			Expect(bogus.Get(ctx, "/health/live").ExpectOK(http.StatusOK).Field("status")).To(Equal("live"))
			Expect(bogus.Get(ctx, "/health/ready").ExpectOK(http.StatusOK).Field("status")).To(Equal("ready"))
			basic := s.Anonymous()
			r := basic.Get(ctx, "/health/live", framework.Header("Authorization", "Basic dXNlcjpwYXNz"))
			r.ExpectOK(http.StatusOK)
		})
	})
}

// interfacePaths are the REST paths the interface spec names (endpoint table, the paths named
// without a shape, and the two probes), below /api/v1.
var interfacePaths = []string{
	"/capabilities", "/capabilities/{id}", "/estimates", "/generations", "/generations/{id}",
	"/generations/{id}/wait", "/batches/{id}", "/presets", "/presets/{id}/templates", "/actors",
	"/voices", "/uploads", "/uploads/{assetId}/finalize", "/uploads/from-url", "/webhooks",
	"/webhooks/{id}", "/assets", "/assets/{id}", "/assets/{id}/download", "/credits/balance",
	"/workflows/templates", "/workflows/{id}/invoke", "/workflows/templates/{key}/invoke",
	"/workflow-runs", "/workflow-runs/{id}", "/health/live", "/health/ready",
}

func description(f *framework.Framework) {
	Describe("live REST description", func() {
		f.Rule("VER-001", "VER-003").It("GET /openapi.json answers the OpenAPI 3.0.3 document, info.version 1.2.0, servers under /api/v1", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, "/openapi.json").ExpectStatus(http.StatusOK)
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), r.Describe())
			Expect(r.String("openapi")).To(Equal("3.0.3"), r.Describe())
			Expect(r.String("info.version")).To(Equal("1.2.0"), r.Describe())
			servers := r.Array("servers")
			Expect(servers).NotTo(BeEmpty(), r.Describe())
			url := stringField(r, asObject(r, servers[0], "servers[0]"), "url", "servers[0]")
			Expect(strings.TrimRight(url, "/")).To(HaveSuffix("/api/v1"), r.Describe())
		})

		f.Rule("VER-004").It("the live description defines every REST path of the interface, GET /generations included", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, "/openapi.json").ExpectStatus(http.StatusOK)
			paths := objectAt(r, "paths")
			for _, p := range interfacePaths {
				Expect(paths).To(HaveKey(p), "the live description lacks "+p)
			}
			gen := asObject(r, paths["/generations"], "paths./generations")
			Expect(gen).To(HaveKey("get"), "the live description lacks GET /generations")
		})

		f.Rule("VER-002", "AUTH-001").It("GET /openapi.json needs a key and accepts a read-only key", func(ctx context.Context, s *framework.Spec) {
			s.Anonymous().Get(ctx, "/openapi.json").ExpectError(http.StatusUnauthorized, "not_authorized")
			r := s.ReadClient().Get(ctx, "/openapi.json").ExpectStatus(http.StatusOK)
			Expect(r.String("info.version")).To(Equal("1.2.0"), r.Describe())
		})
	})
}

func cors(f *framework.Framework) {
	Describe("CORS", func() {
		f.Rule("CORE-004").It("sends no CORS headers, on answers to a cross-origin request and on an OPTIONS preflight", func(ctx context.Context, s *framework.Spec) {
			origin := framework.Header("Origin", "https://attacker.example")
			noCORS(s.Anonymous().Get(ctx, "/health/live", origin).ExpectOK(http.StatusOK))
			noCORS(s.Client().Get(ctx, "/credits/balance", origin).ExpectOK(http.StatusOK))
			noCORS(s.Anonymous().Get(ctx, "/credits/balance", origin).ExpectError(http.StatusUnauthorized, "not_authorized"))
			for _, path := range []string{"/capabilities", "/generations", "/estimates"} {
				r := s.Anonymous().Do(ctx, http.MethodOptions, path, origin,
					framework.Header("Access-Control-Request-Method", "POST"),
					framework.Header("Access-Control-Request-Headers", "authorization, content-type"),
					framework.Invalid())
				noCORS(r)
			}
		})
	})
}
