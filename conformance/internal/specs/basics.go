package specs

import (
	"encoding/json"

	"context"
	"net/http"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// basicsSpecs registers the specs of the health probes, the live description, CORS, the base path and the formats every answer shares.
func basicsSpecs(f *framework.Framework) {
	healthSpecs(f)
	readinessSpecs(f)
	descriptionSpecs(f)
	corsSpecs(f)
	basePathSpecs(f)
	answerFormatSpecs(f)
}

// interfacePaths are the REST paths the interface spec names (endpoint table and the paths named
// without a shape), below /api/v1. The probes' paths are not given.
var interfacePaths = []string{
	"/capabilities", "/capabilities/{id}", "/estimates", "/generations", "/generations/{id}",
	"/generations/{id}/wait", "/batches/{id}", "/presets", "/presets/{id}/templates", "/actors",
	"/voices", "/uploads", "/uploads/{assetId}/finalize", "/uploads/from-url", "/webhooks",
	"/webhooks/{id}", "/assets", "/assets/{id}", "/assets/{id}/download", "/credits/balance",
	"/workflows/templates", "/workflows/{id}/invoke", "/workflows/templates/{key}/invoke",
	"/workflow-runs", "/workflow-runs/{id}",
}

// templateShape is path with every template parameter's name left out ({assetId} and {id} alike).
func templateShape(path string) string {
	return regexp.MustCompile(`\{[^}/]*\}`).ReplaceAllString(path, "{}")
}

// The text says of the probes only that they need no key ("Health probe paths and answers: not
// shown"): the specs find them where the target names them (--live-path, --ready-path) and judge
// the status alone, a live and ready service's probes answering 2XX and a service that is not
// ready failing its readiness probe.

// healthSpecs registers the specs of the health probes.
func healthSpecs(f *framework.Framework) {
	Describe("basics: health probes", func() {
		f.Rule("HEALTH-001", "AUTH-009").It("the liveness probe answers 2XX without a key", func(ctx context.Context, s *framework.Spec) {
			expect2XX(s.Anonymous().Get(ctx, s.LivePath()), "the liveness probe of a live service")
		})

		f.Rule("HEALTH-002", "AUTH-009").It("the readiness probe answers 2XX without a key, not the error envelope", func(ctx context.Context, s *framework.Spec) {
			r := expect2XX(s.Anonymous().Get(ctx, s.ReadyPath()), "the readiness probe of a ready service")
			// A probe's answer is not shown: judged by its status, and, when it is a JSON object,
			// it is not the error envelope (plain text, or any other body, passes).
			if doc, err := decodeJSONObject(r.Body); err == nil {
				Expect(doc).NotTo(HaveKey("error"), "a probe's success is not the error envelope"+r.Describe())
			}
		})

		f.Rule("HEALTH-004").StrictOnly("HEALTH-004", "what a probe does with a key it does not need").It("the probes ignore any key sent, even a bogus one", func(ctx context.Context, s *framework.Spec) {
			bogus := s.WithKey(unknownKey())
			expect2XX(bogus.Get(ctx, s.LivePath()), "the liveness probe with an unknown key")
			expect2XX(bogus.Get(ctx, s.ReadyPath()), "the readiness probe with an unknown key")
			expect2XX(s.Anonymous().Get(ctx, s.LivePath(), framework.Header("Authorization", "Basic dXNlcjpwYXNz")), "the liveness probe with a Basic header")
		})
	})

}

// expect2XX fails the spec unless r's status is 2XX.
func expect2XX(r *framework.Response, what string) *framework.Response {
	GinkgoHelper()
	Expect(r.Status).To(And(BeNumerically(">=", 200), BeNumerically("<", 300)), what+" answers 2XX"+r.Describe())
	return r
}

// readinessSpecs registers the specs of the readiness probe of a service that is not ready.
func readinessSpecs(f *framework.Framework) {
	Describe("basics: readiness of a service that is not ready", func() {
		f.Rule("HEALTH-003").StrictOnly("HEALTH-003", "what a readiness probe answers when the service is not ready (\"Health probe paths and answers: not shown\")").It("a service that is not ready fails its readiness probe, and passes it again once ready", func(ctx context.Context, s *framework.Spec) {
			ready := s.ReadyPath()
			s.QueueFault(ctx, "not_ready", "", 1, "")
			r := s.Anonymous().Get(ctx, ready)
			Expect(r.Status).To(BeNumerically(">=", 500), "a service that is not ready fails its readiness probe (5XX)"+r.Describe())
			s.ClearFaults(ctx)
			expect2XX(s.Anonymous().Get(ctx, ready), "the readiness probe once ready again")
		})
	})

}

// descriptionSpecs registers the specs of the live REST description, at the path the target
// names (the text gives none).
func descriptionSpecs(f *framework.Framework) {
	Describe("basics: live REST description", func() {
		f.Rule("VER-001", "VER-003").It("the live REST description is JSON with info.version 1.2.0, its servers under /api/v1", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, s.DescriptionPath()).ExpectStatus(http.StatusOK)
			s.Step("VER-001")
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), r.Describe())
			Expect(r.String("info.version")).To(Equal("1.2.0"), r.Describe())
			s.Step("VER-003")
			// The REST path carries the major version: a description that lists servers lists them
			// under /api/v1. Which OpenAPI version the document is written in, the text leaves open.
			if servers, ok := r.Lookup("servers"); ok {
				list, _ := servers.([]any)
				Expect(list).NotTo(BeEmpty(), r.Describe())
				url := answer.String(r, answer.AsObject(r, list[0], "servers[0]"), "url", "servers[0]")
				Expect(strings.TrimRight(url, "/")).To(HaveSuffix("/api/v1"), r.Describe())
			}
		})

		f.Rule("VER-004").It("the live description defines every REST path of the interface, GET /generations included", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, s.DescriptionPath()).ExpectStatus(http.StatusOK)
			paths := answer.ObjectAt(r, "paths")
			// A path template's parameter names are the description's own (the text writes
			// /uploads/{assetId}/finalize, /workflows/templates/{key}/invoke): paths are compared
			// with every {name} alike, as OpenAPI matches them.
			described := map[string]bool{}
			for p := range paths {
				described[templateShape(p)] = true
			}
			for _, p := range interfacePaths {
				Expect(described).To(HaveKey(templateShape(p)), "the live description lacks "+p)
			}
			// The reference names them as the text writes them (VER-004), held with --strict.
			s.ReferenceOnly("VER-004", "the live description names the path parameters as the text does", func() {
				for _, p := range interfacePaths {
					Expect(paths).To(HaveKey(p), "the live description names "+p)
				}
			})
			gen := answer.AsObject(r, paths["/generations"], "paths./generations")
			Expect(gen).To(HaveKey("get"), "the live description lacks GET /generations")
		})

		f.Rule("VER-002", "AUTH-001").It("the live description needs a key and accepts a read-only key", func(ctx context.Context, s *framework.Spec) {
			path := s.DescriptionPath()
			s.Step("VER-002", "AUTH-001")
			s.Anonymous().Get(ctx, path).ExpectError(http.StatusUnauthorized, "not_authorized")
			s.Step("VER-002")
			r := s.ReadClient().Get(ctx, path).ExpectStatus(http.StatusOK)
			Expect(r.String("info.version")).To(Equal("1.2.0"), r.Describe())
		})
	})

}

// corsSpecs registers the specs of CORS.
func corsSpecs(f *framework.Framework) {
	Describe("basics: CORS", func() {
		f.Rule("CORE-004").It("sends no CORS headers, on answers to a cross-origin request and on an OPTIONS preflight", func(ctx context.Context, s *framework.Spec) {
			origin := framework.Header("Origin", "https://attacker.example")
			answer.NoCORS(s.Client().Get(ctx, "/capabilities", origin).ExpectOK(http.StatusOK))
			answer.NoCORS(s.Client().Get(ctx, "/credits/balance", origin).ExpectOK(http.StatusOK))
			answer.NoCORS(s.Anonymous().Get(ctx, "/credits/balance", origin).ExpectError(http.StatusUnauthorized, "not_authorized"))
			for _, path := range []string{"/capabilities", "/generations", "/estimates"} {
				r := s.Anonymous().Do(ctx, http.MethodOptions, path, origin,
					framework.Header("Access-Control-Request-Method", "POST"),
					framework.Header("Access-Control-Request-Headers", "authorization, content-type"),
					framework.Unjudged())
				answer.NoCORS(r)
			}
		})
	})

}

// basePathSpecs registers the specs of the /api/v1 base path.
func basePathSpecs(f *framework.Framework) {
	Describe("basics: base path", func() {
		f.Rule("CORE-001").It("the REST paths are served under /api/v1 and the same paths without the prefix are not API routes", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			root := s.APIRoot()
			Expect(root.Path).To(HaveSuffix("/api/v1"), "the versioned API root ends in /api/v1")
			bare := *root
			bare.Path = strings.TrimSuffix(root.Path, "/api/v1")
			auth := framework.Header("Authorization", "Bearer "+c.Key())
			for _, p := range []string{"/capabilities", "/credits/balance", "/presets", "/generations"} {
				c.Get(ctx, p).ExpectStatus(http.StatusOK)
			}
			// That the paths without the prefix are no API routes is the reference's choice: the text
			// puts the interface under the root, and says nothing of what else the origin serves.
			if !s.Strict() {
				return
			}
			for _, p := range []string{"/capabilities", "/credits/balance", "/presets", "/generations"} {
				u := bare
				u.Path = bare.Path + p
				r := s.Link(ctx, http.MethodGet, u.String(), auth)
				Expect(r.Status).To(Equal(http.StatusNotFound), p+" without /api/v1 is not an API route"+r.Describe())
				Expect(string(r.Body)).NotTo(ContainSubstring(`"ok":true`), r.Describe())
			}
			u := bare
			u.Path = bare.Path + "/estimates"
			r := s.Link(ctx, http.MethodPost, u.String(), auth, framework.JSONBody(map[string]any{"capability_id": "tts", "config": catalogue.TTSConfig(ctx, c)}))
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), "POST /estimates without /api/v1 is not an API route"+r.Describe())
		})
	})

}

// answerFormatSpecs registers the specs of the timestamp and id formats of every answer.
func answerFormatSpecs(f *framework.Framework) {
	Describe("basics: timestamp and id formats", func() {
		f.Rule("CORE-017").Needs(framework.Uploads).It("every timestamp in an answer is an RFC 3339 date-time with a zone", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			seen := 0
			res := uploads.Reserve(ctx, c, "pending.png", "image/png", 100)
			seen += answer.CheckStamps(res, res.Doc(), "reserve")
			id, fin := uploads.Fixture(ctx, s, c, "audio.wav")
			fin.ExpectOK(http.StatusOK)
			for _, r := range []*framework.Response{
				c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK),
				c.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK),
				c.Get(ctx, "/assets").ExpectOK(http.StatusOK),
				s.Client().Get(ctx, "/generations").ExpectOK(http.StatusOK),
				s.Client().Get(ctx, "/webhooks").ExpectOK(http.StatusOK),
				s.Client().Get(ctx, "/workflow-runs").ExpectOK(http.StatusOK),
			} {
				seen += answer.CheckStamps(r, r.Doc(), "answer")
			}
			// A generation read carries its own timestamps: read one, made here when none is listed.
			genID := ""
			if gens := paging.Get(ctx, s.Client(), "/generations", paging.Open); len(gens.Rows) > 0 {
				genID = gens.Rows[0]["generation_id"].(string)
			} else {
				genID = submit(ctx, s, s.Client(), "tts", catalogue.TTSConfig(ctx, s.Client()), nil).id
			}
			g := s.Client().Get(ctx, "/generations/"+genID).ExpectOK(http.StatusOK)
			Expect(answer.CheckStamps(g, g.Doc(), "generation read")).To(BeNumerically(">", 0), "a generation read carries timestamps"+g.Describe())
			// Which of these answers carry timestamps is the reference's layout (the asset, upload and
			// list records are not shown), so only our own mock is held to carrying them.
			if s.Strict() {
				Expect(seen).To(BeNumerically(">=", 4), "the answers carried timestamps to check")
			}
		})

		f.Rule("ID-001").It("every prefixed id in answers is its prefix and 32 lowercase hex", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			main := s.Client()
			seen := 0
			res := uploads.Reserve(ctx, c, "pending.png", "image/png", 100)
			seen += answer.CheckIDs(res, res.Doc(), "reserve")
			for _, r := range []*framework.Response{
				main.Get(ctx, "/actors", framework.Query("limit", "48")).ExpectOK(http.StatusOK),
				main.Get(ctx, "/voices", framework.Query("limit", "50")).ExpectOK(http.StatusOK),
				main.Get(ctx, "/presets", framework.Query("limit", "50")).ExpectOK(http.StatusOK),
				main.Get(ctx, "/generations", framework.Query("limit", "50")).ExpectOK(http.StatusOK),
				main.Get(ctx, "/assets", framework.Query("limit", "50")).ExpectOK(http.StatusOK),
				main.Get(ctx, "/webhooks").ExpectOK(http.StatusOK),
				main.Get(ctx, "/workflow-runs").ExpectOK(http.StatusOK),
			} {
				seen += answer.CheckIDs(r, r.Doc(), "answer")
			}
			if gens := paging.Get(ctx, main, "/generations", paging.Open); len(gens.Rows) > 0 {
				g := main.Get(ctx, "/generations/"+gens.Rows[0]["generation_id"].(string)).ExpectOK(http.StatusOK)
				seen += answer.CheckIDs(g, g.Doc(), "generation read")
			}
			Expect(seen).To(BeNumerically(">=", 3), "the answers carried ids to check")
		})
	})

}

// decodeJSONObject decodes body as a JSON object; an error when it is not one.
func decodeJSONObject(body []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(body, &m)
	return m, err
}
