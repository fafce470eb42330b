package specs

import (
	"github.com/mediaspec/mediaspec/internal/contract"

	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// uploadSpecs registers the specs of uploads and uploads from a URL. The flow's specs, reserve,
// put and finalize, are in several functions and files (uploads_*.go) under one container text,
// the prefix of their spec names, which the reports and the weights files key on.
func uploadSpecs(f *framework.Framework) {
	uploadReserveSpecs(f)
	uploadFinalizeSpecs(f)
	uploadPutSpecs(f)
	uploadInspectionSpecs(f)
	uploadOwnershipSpecs(f)
	uploadPendingSpecs(f)
	freeUploadSpecs(f)
	fromURLSpecs(f)
	fromURLRefusalSpecs(f)
}

// uploadReserveSpecs registers the specs of the reservation: its answer and its strict body.
func uploadReserveSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
		f.Rule("UPLOAD-001", "UPLOAD-002", "UPLOAD-003", "UPLOAD-004", "UPLOAD-005", "UPLOAD-006", "UPLOAD-009", "UPLOAD-010").
			It("every accepted type is reserved with 201, no Location, its kind, its ceiling and a 300 s link", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 40)
				// accepts is the rule a refusal of the type breaks, echoes the one of its echo.
				check := func(sent, echo, kind string, max int64, accepts, echoes string) {
					s.Step(accepts)
					r := uploads.Reserve(ctx, c, "file", sent, 1234)
					// Measured from the answer, not from before the call: on a shared key the
					// call may have waited out a bucket refusal first.
					answered := time.Now()
					s.Step("UPLOAD-001")
					Expect(r.Header.Get("Location")).To(BeEmpty(), "a reservation has no Location header"+r.Describe())
					s.Step("UPLOAD-002")
					Expect(r.String("asset_id")).To(MatchRegexp(assetIDPattern), r.Describe())
					Expect(r.String("upload_url")).To(HavePrefix("http"), r.Describe())
					Expect(r.Int("upload_expires_in_seconds")).To(Equal(int64(300)), r.Describe())
					Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
					s.Step("UPLOAD-003")
					Expect(r.String("kind")).To(Equal(kind), r.Describe())
					s.Step(echoes)
					Expect(r.String("content_type")).To(Equal(echo), r.Describe())
					s.Step("UPLOAD-004")
					Expect(r.Int("size_bytes")).To(Equal(int64(1234)), r.Describe())
					Expect(r.Int("max_bytes_for_kind")).To(Equal(max), r.Describe())
					s.Step("UPLOAD-005")
					Expect(r.Bool("content_checked")).To(Equal(kind == "image"), "content_checked is true for images only"+r.Describe())
					s.Step("UPLOAD-002", "UPLOAD-006")
					exp, err := answer.ParseStamp(r.String("upload_expires_at"))
					Expect(err).NotTo(HaveOccurred(), r.Describe())
					if !s.HasControl() && s.TimeScale() == 1 {
						s.Step("UPLOAD-006")
						Expect(exp.Sub(answered)).To(BeNumerically("~", contract.PutLifetime, 30*time.Second), r.Describe())
					}
				}
				var now time.Time
				if s.HasControl() {
					s.Step("UPLOAD-006")
					// The service clock is the target's: compare with its own reading.
					r, err := s.Control().Call(ctx, http.MethodGet, "/clock", nil)
					Expect(err).NotTo(HaveOccurred())
					now, err = answer.ParseStamp(r.String("now"))
					Expect(err).NotTo(HaveOccurred(), r.Describe())
					r2 := uploads.Reserve(ctx, c, "file", "image/png", 10)
					exp, _ := answer.ParseStamp(r2.String("upload_expires_at"))
					Expect(exp.Sub(now)).To(BeNumerically("~", contract.PutLifetime, 2*time.Second), "upload_expires_at is 300 s after the reservation"+r2.Describe())
				}
				for _, a := range acceptedTypes {
					check(a.ct, a.ct, a.kind, a.max, "UPLOAD-009", "UPLOAD-004")
				}
				check("IMAGE/PNG; charset=binary", "image/png", "image", 20971520, "UPLOAD-010", "UPLOAD-010")
				check("Audio/Ogg", "audio/ogg", "audio", 26214400, "UPLOAD-010", "UPLOAD-010")
			})

		f.Rule(rules("UPLOAD-007", "UPLOAD-008", "UPLOAD-011", "UPLOAD-012", "UPLOAD-013", "UPLOAD-014", "UPLOAD-015", "UPLOAD-016")...).
			It("the reserve body is strict and bounded: refusals answer 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 40)
				refuse := func(body map[string]any, field string) *framework.Response {
					GinkgoHelper()
					r := c.Post(ctx, "/uploads", body, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
					return r
				}
				b := func(kv ...any) map[string]any {
					m := map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10}
					for i := 0; i+1 < len(kv); i += 2 {
						m[kv[i].(string)] = kv[i+1]
					}
					return m
				}
				s.Step("UPLOAD-007")
				refuse(b("bogus", 1), "bogus")
				s.Step("UPLOAD-008")
				refuse(b("filename", ""), "filename")
				refuse(b("filename", strings.Repeat("a", 256)), "filename")
				uploads.Reserve(ctx, c, strings.Repeat("a", 255), "image/png", 10)
				// The bound counts characters, not bytes: 255 of them that take two bytes each are
				// still 255 characters (one UTF-16 unit each too, so every reading agrees).
				uploads.Reserve(ctx, c, strings.Repeat("é", 251)+".png", "image/png", 10)
				s.Step("UPLOAD-011")
				for _, ct := range []string{"application/pdf", "text/html", "image/tiff", "video/x-matroska"} {
					r := refuse(b("content_type", ct), "content_type")
					want := make([]string, 0, len(acceptedTypes))
					for _, a := range acceptedTypes {
						want = append(want, a.ct)
						Expect(r.String("error.message")).To(ContainSubstring(a.ct), "the message lists the accepted types"+r.Describe())
					}
					// The text has the message list them; a list field beside it, when sent, agrees
					// (the reference's own, judged with --strict).
					s.ReferenceOnly("UPLOAD-011", "the refusal lists the accepted types in error.accepted_content_types", func() {
						Expect(answer.Strings(r, answer.ObjectAt(r, "error"), "accepted_content_types", "error")).To(ConsistOf(want), r.Describe())
					})
				}
				s.Step("UPLOAD-012")
				refuse(b("size_bytes", 0), "size_bytes")
				refuse(b("size_bytes", -5), "size_bytes")
				for _, lim := range []struct {
					ct   string
					max  int
					rule string
				}{{"image/png", 20971520, "UPLOAD-013"}, {"video/mp4", 104857600, "UPLOAD-014"}, {"audio/wav", 26214400, "UPLOAD-015"}} {
					s.Step(lim.rule)
					uploads.Reserve(ctx, c, "a", lim.ct, lim.max)
					refuse(b("content_type", lim.ct, "size_bytes", lim.max+1), "size_bytes")
				}
				s.Step("UPLOAD-016")
				sum := sha256.Sum256([]byte("x"))
				uploads.Reserve(ctx, c, "a.png", "image/png", 10, "checksum_sha256", base64.StdEncoding.EncodeToString(sum[:]))
				refuse(b("checksum_sha256", "not base64!"), "checksum_sha256")
				refuse(b("checksum_sha256", base64.StdEncoding.EncodeToString(sum[:16])), "checksum_sha256")
			})
	})
}

// freeUploadSpecs registers the specs of uploads costing no credits.
func freeUploadSpecs(f *framework.Framework) {
	Describe("uploads: free of credits", func() {
		f.Rule("CORE-007").It("reserving, finalizing and importing from a URL leave the balance unchanged", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			avail, held := balanceOf(ctx, c)
			_, fin := uploads.Fixture(ctx, s, c, "image.png")
			fin.ExpectOK(http.StatusOK)
			uploads.Reserve(ctx, c, "pending.wav", "audio/wav", 2048)
			base := uploads.FileServer(s)
			imp := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): base + "/f/image.gif"})
			if imp.Status == http.StatusBadRequest {
				AddReportEntry("from-url", "the target refuses the suite's loopback file server; the import was not priced")
			} else {
				imp.ExpectSuccess() // the import's status is not shown (POST /uploads/from-url)
			}
			a2, h2 := balanceOf(ctx, c)
			Expect(a2).To(Equal(avail), "upload calls cost no credits: available_credits unchanged")
			Expect(h2).To(Equal(held), "upload calls hold nothing")
		})
	})

}
