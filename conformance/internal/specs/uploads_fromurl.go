package specs

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/spec"
)

// fromURLSpecs registers the specs of uploads from a URL.
func fromURLSpecs(f *framework.Framework) {
	Describe("uploads: from a URL", func() {
		f.Rule("FROMURL-001", "FROMURL-011", "ASSET-002", "ASSET-001").It("imports every accepted sample file with 201 and the measured fields, named from the URL; the asset rows carry no link, the source link included", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 60)
			base, _ := uploads.ReachableFileServer(ctx, s, c)
			for _, fx := range fixtures.Files() {
				if fx.Outcome == fixtures.OutcomeRefused {
					continue
				}
				link := base + "/f/" + fx.Name
				s.Step("FROMURL-001")
				r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): link}).ExpectOK(http.StatusCreated)
				// The answer's layout is not shown (POST /uploads/from-url): the reference's fields,
				// judged with --strict; any server answers the imported file's asset id.
				id := importedID(r)
				s.ReferenceOnly("FROMURL-001", "the import answer's fields", func() {
					Expect(r.Header.Get("Location")).To(BeEmpty(), r.Describe())
					Expect(r.String("asset_id")).To(MatchRegexp(assetIDPattern), r.Describe())
					Expect(r.String("source_url")).To(Equal(link), r.Describe())
					Expect(r.String("kind")).To(Equal(fx.Kind), r.Describe())
					Expect(r.String("content_type")).To(Equal(fx.ContentType), r.Describe())
					Expect(r.Int("size_bytes")).To(Equal(int64(fx.SizeBytes)), r.Describe())
					Expect(r.String("scan_status")).To(Equal(fx.Outcome), r.Describe())
					Expect(r.Bool("usable")).To(Equal(fx.Outcome == fixtures.OutcomeClean), r.Describe())
					Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
					uploads.ExpectDuration(r, r.Field("duration_ms"), fx)
				})
				a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
				s.Step("FROMURL-011")
				s.ReferenceOnly("FROMURL-011", "the asset record's file_name and source", func() {
					Expect(a.String("asset.file_name")).To(Equal(fx.Name), "file_name defaults to the last segment of the URL path"+a.Describe())
					Expect(a.String("asset.source")).To(Equal("upload"), a.Describe())
				})
			}
			s.Step("FROMURL-011")
			named := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): base + "/r/2/image.webp", "filename": "hero.webp"}).ExpectOK(http.StatusCreated)
			namedID := importedID(named)
			a := c.Get(ctx, "/assets/"+namedID).ExpectOK(http.StatusOK)
			s.ReferenceOnly("FROMURL-011", "the asset record's file_name", func() {
				Expect(a.String("asset.file_name")).To(Equal("hero.webp"), a.Describe())
			})
			s.Step("ASSET-001")
			rows, _ := paging.Walk(ctx, c, "/assets", paging.Open, 50, 10)
			Expect(paging.IDs(rows, "asset_id")).To(ContainElement(namedID), "an imported file is listed")
			for _, row := range rows {
				answer.NoLinks(row, "an asset row of an imported file (list rows carry no link, not even the source link)")
			}
		})

		f.Rule(rules("FROMURL-007", "FROMURL-008", "FROMURL-009", "FROMURL-012")...).It("refuses a web page, a type not accepted, an over-ceiling file, a signature mismatch, pixel bounds and a wrong content_type", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 60)
			base, _ := uploads.ReachableFileServer(ctx, s, c)
			refused := func(body map[string]any, field string) {
				GinkgoHelper()
				c.Post(ctx, "/uploads/from-url", body).ExpectError(http.StatusBadRequest, "invalid_config")
			}
			for _, fx := range fixtures.Files() {
				if fx.Outcome == fixtures.OutcomeRefused {
					if fx.Reason == "not_accepted" {
						s.Step("FROMURL-007")
					} else if s.Strict() { // the finalize checks on an imported file are the reference's
						s.Step("FROMURL-009")
					} else {
						continue
					}
					refused(map[string]any{uploads.LinkKey(c): base + "/f/" + fx.Name}, "url")
				}
			}
			// Each refused link is the importable image.png link changed in one way.
			s.Step("FROMURL-007")
			// PNG bytes served as application/pdf are still a media file of an accepted type: the
			// text refuses a web page and a file of a type not accepted, and says nothing of the
			// served type of a media file's bytes, so refusing it is the reference's choice.
			pdf := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): base + "/f/image.png?type=application/pdf"})
			s.ReferenceOnly("FROMURL-007", "PNG bytes served as application/pdf are refused with 400 invalid_config", func() {
				pdf.ExpectError(http.StatusBadRequest, "invalid_config")
			})
			// A link answering text/html is a web page, refused even when its bytes look like media.
			refused(map[string]any{uploads.LinkKey(c): base + "/f/image.png?type=text/html"}, "url")
			refused(map[string]any{uploads.LinkKey(c): base + "/f/image.png?type=" + url.QueryEscape("text/html; charset=utf-8")}, "url")
			s.Step("FROMURL-008")
			refused(map[string]any{uploads.LinkKey(c): base + "/big"}, "url")
			if s.Strict() { // content_type in the import's body is the reference's (FROMURL-012)
				s.Step("FROMURL-012")
				refused(map[string]any{uploads.LinkKey(c): base + "/f/image.png", "content_type": "image/jpeg"}, "content_type")
				c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): base + "/f/image.png", "content_type": "IMAGE/PNG"}).ExpectOK(http.StatusCreated)
			}
		})

		f.Rule(rules("FROMURL-010")...).It("a fetch that fails is refused in the error envelope, imports nothing and charges nothing", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			uploads.ReachableFileServer(ctx, s, c)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			closed := "http://" + ln.Addr().String() + "/image.png"
			Expect(ln.Close()).To(Succeed())
			// The code of a failed fetch is not given (the import's answers are not shown): any code
			// of the error table, with its status; 502 provider_unavailable is the reference's.
			r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): closed})
			Expect(r.Status).To(BeNumerically(">=", 400), "a fetch that fails imports nothing"+r.Describe())
			code := r.String("error.code")
			row, known := spec.LookupErrorCode(code)
			Expect(known).To(BeTrue(), "the refusal's code is one of the error table"+r.Describe())
			r.ExpectError(row.Status, code)
			s.ReferenceOnly("FROMURL-010", "a failed fetch answers 502 provider_unavailable", func() {
				Expect(code).To(Equal("provider_unavailable"), r.Describe())
			})
		})

	})

}

// fromURLRefusalSpecs registers the specs of the from-URL body and the links it refuses.
func fromURLRefusalSpecs(f *framework.Framework) {
	Describe("uploads: from a URL", func() {
		f.Rule(rules("FROMURL-002", "FROMURL-003", "FROMURL-004", "FROMURL-005", "FROMURL-006")...).
			It("the body is strict and the link must be public http(s) without userinfo: each refusal changes one thing of a link the target admits", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 60)
				// The refusal's code and status are the step's rule (from-url's shapes are the
				// reference's: FROMURL-*); the text does not say the refusal names the field.
				step := func(id string) { s.Step(id) }
				refused := func(body map[string]any, field string) {
					GinkgoHelper()
					c.Post(ctx, "/uploads/from-url", body, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
				}
				// Every refused link is a link the target imports, changed in exactly one way, so
				// the change is the only cause the refusal can have (the suite's file server when
				// the target fetches from loopback; otherwise a public-looking link).
				good := uploads.FileServer(s) + "/f/image.png"
				probe := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): good})
				admitted := probe.Status >= 200 && probe.Status < 300
				if !admitted {
					good = "https://example.com/image.png"
					AddReportEntry("from-url", "the target refuses the suite's loopback file server: the refusals were built from "+good+", which may also fail for its host")
				}
				base, err := url.Parse(good)
				Expect(err).NotTo(HaveOccurred())
				changed := func(change func(u *url.URL)) string {
					u := *base
					change(&u)
					return u.String()
				}
				step("FROMURL-002")
				refused(map[string]any{"url": good, "bogus": true}, "bogus")
				// A link to a private or local address is no "direct public link": it is not
				// imported, an error in the envelope. The text gives no code for it (invalid_config's
				// causes do not list it): 400 invalid_config is the reference's (an advisory unless
				// --strict).
				step("FROMURL-006")
				private := []string{"http://10.0.0.1/a.png", "http://169.254.169.254/latest/meta-data", "http://192.168.0.10/a.png", "http://[fd00::1]/a.png"}
				// Loopback too, unless the target was told to admit it for local testing.
				if admitted {
					AddReportEntry("loopback", "the target admits loopback links (a test setting); 127.0.0.1 and [::1] were not checked")
				} else {
					private = append(private, "http://127.0.0.1/a.png", "http://[::1]/a.png")
				}
				for _, u := range private {
					r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): u}, framework.Invalid())
					Expect(r.Status).To(BeNumerically(">=", 400), "a link to a private or local address is not imported"+r.Describe())
					code, _ := r.Field("error.code").(string)
					framework.CheckErrorEnvelope(r, code)
					s.ReferenceOnly("FROMURL-006", "a private or local link is refused with 400 invalid_config", func() {
						r.ExpectError(http.StatusBadRequest, "invalid_config")
					})
				}
				// The link's bounds, its schemes beyond a public link and its userinfo are the
				// reference's (the request is not shown): FROMURL-003 to 005 are judged with --strict.
				if !s.Strict() {
					return
				}
				step("FROMURL-003")
				refused(map[string]any{"filename": "a.png"}, "url")
				refused(map[string]any{"url": ""}, "url")
				refused(map[string]any{"url": good + "?" + strings.Repeat("q", 2048-len(good))}, "url")
				if admitted {
					// 2048 characters are within the bound: the file server ignores the query.
					long := good + "?" + strings.Repeat("q", 2047-len(good))
					r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): long})
					Expect(r.Status).To(Equal(http.StatusCreated), "a link of exactly 2048 characters is imported"+r.Describe())
				}
				step("FROMURL-004")
				for _, scheme := range []string{"ftp", "file", "gopher"} {
					refused(map[string]any{"url": changed(func(u *url.URL) { u.Scheme = scheme })}, "url")
				}
				refused(map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}, "url")
				step("FROMURL-005")
				refused(map[string]any{"url": changed(func(u *url.URL) { u.User = url.UserPassword("user", "secret") })}, "url")
				refused(map[string]any{"url": changed(func(u *url.URL) { u.User = url.User("user") })}, "url")
			})
	})
}
