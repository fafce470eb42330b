package specs

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/spec"

	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// uploadSpecs registers the specs of uploads and uploads from a URL.
func uploadSpecs(f *framework.Framework) {
	uploadFlowSpecs(f)
	freeUploadSpecs(f)
	fromURLSpecs(f)
}

// uploadFlowSpecs registers the specs of uploads: reserve, put, finalize.
func uploadFlowSpecs(f *framework.Framework) {
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

		f.Rule("UPLOAD-017", "UPLOAD-021", "UPLOAD-022", "UPLOAD-023", "UPLOAD-025", "UPLOAD-026", "UPLOAD-027", "UPLOAD-028", "UPLOAD-029",
			"UPLOAD-030", "UPLOAD-031", "UPLOAD-032", "UPLOAD-033", "UPLOAD-034", "ERR-024").
			It("finalize answers each sample file's outcome; a repeat answers the same; a refused file is gone", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 100)
				for _, fx := range fixtures.Files() {
					if fx.SizeBytes == 0 || fx.Reason == "not_accepted" || fx.Outcome == fixtures.OutcomeFlagged {
						continue // from-url cases, and the flagged files of the next spec
					}
					if !s.HasControl() {
						// A file's three upload calls on one key, the files over both keys in turn:
						// the 30-a-minute bucket of one key would hold all of them for two minutes.
						c = uploads.Client(ctx, s, 0)
					}
					id, r := uploads.Fixture(ctx, s, c, fx.Name)
					uploads.ExpectFinalizeOutcome(s, r, fx, id)
					again := uploads.Finalize(ctx, c, id)
					if fx.Outcome == fixtures.OutcomeRefused {
						s.Step("UPLOAD-034")
						again.ExpectError(http.StatusNotFound, "not_found")
						continue
					}
					s.Step("UPLOAD-027")
					again.ExpectOK(http.StatusOK)
					for _, k := range []string{"scan_status", "usable", "kind", "duration_ms"} {
						Expect(fmt.Sprint(again.Field(k))).To(Equal(fmt.Sprint(r.Field(k))), "a repeat finalize answers the same "+k+again.Describe())
					}
				}
			})

		f.Rule("UPLOAD-028", "UPLOAD-030").It("a WebM declared as the other kind's WebM is refused, or answers the kind measured from its bytes", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 4)
			// Both WebM kinds share one file signature, so the text ("the real file signature must
			// match the declared kind") leaves a WebM of the other kind open: refused, or accepted. If
			// accepted, kind is "measured from the bytes, not the declaration".
			for _, tc := range []struct{ file, declared string }{{"video.webm", "audio/webm"}, {"audio.webm", "video/webm"}} {
				fx, data := fixtures.Get(tc.file)
				id, r := uploads.Bytes(ctx, s, c, fx.Name, tc.declared, data)
				if r.Status != http.StatusOK {
					s.Step("UPLOAD-030", "ERR-024")
					r.ExpectError(http.StatusBadRequest, "invalid_config")
					continue
				}
				s.Step("UPLOAD-028")
				Expect(r.String("asset_id")).To(Equal(id), r.Describe())
				Expect(r.String("kind")).To(Equal(fx.Kind), tc.file+" declared "+tc.declared+" is accepted: its kind is measured from the bytes ("+fx.Kind+"), not copied from the declaration"+r.Describe())
			}
		})

		f.Rule("UPLOAD-024", "UPLOAD-025", "UPLOAD-027", "UPLOAD-017", "UPLOAD-022", "UPLOAD-026", "UPLOAD-028", "UPLOAD-029").It(
			"a file the content check refuses answers 200 flagged, not usable, and stays so", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 20)
				// What the content check flags is the service's own: the suite forces the verdict on
				// a sample image's finalize (the scan_flag outcome: a test input or control's fault).
				for _, name := range []string{"image.png", "image.jpg"} {
					fx, data := fixtures.Get(name)
					id := uploads.ReservePut(ctx, s, c, fx.Name, fx.ContentType, data)
					fin := uploads.Finalize(ctx, s.Force(ctx, c, framework.Outcome{Kind: "scan_flag"}), id)
					fx.Outcome = fixtures.OutcomeFlagged
					uploads.ExpectFinalizeOutcome(s, fin, fx, id)
					s.Step("UPLOAD-027")
					again := uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
					Expect(again.String("scan_status")).To(Equal("flagged"),
						"a flagged file stays flagged: a later finalize answers the stored verdict"+again.Describe())
					Expect(again.Bool("usable")).To(BeFalse(), again.Describe())
					// The asset record of the file says the same: flagged, never usable.
					s.Step("UPLOAD-024", "UPLOAD-025")
					a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
					assetSays(a, "scan_status", "flagged", "the asset of a flagged upload reads flagged")
					assetSays(a, "usable", false, "the asset of a flagged upload is not usable")
				}
			})

		f.Rule("UPLOAD-021", "UPLOAD-023", "UPLOAD-028", "UPLOAD-029").Needs(framework.Uploads).It("a video carrying the scanner marker (what flags an image) is clean and usable: only images are content-checked", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 20)
			for _, name := range []string{"video.mp4", "video.mov"} {
				fx, data := fixtures.Get(name)
				id, fin := uploads.Bytes(ctx, s, c, "marked-"+fx.Name, fx.ContentType, uploads.WithMarkerBox(data))
				s.Step("UPLOAD-021", "UPLOAD-023")
				fin.ExpectOK(http.StatusOK)
				Expect(fin.String("scan_status")).To(Equal("clean"), "a video is never content-checked: the marker that flags an image leaves it clean"+fin.Describe())
				Expect(fin.Bool("usable")).To(BeTrue(), fin.Describe())
				a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
				assetSays(a, "scan_status", "clean", "the asset of a clean upload reads clean")
				assetSays(a, "usable", true, "the asset of a clean upload is usable")
				s.Step("UPLOAD-028", "UPLOAD-029")
				Expect(fin.String("kind")).To(Equal("video"), fin.Describe())
				uploads.ExpectDuration(fin, fin.Field("duration_ms"), fx)
			}
		})

		f.Rule(rules("UPLOAD-015", "UPLOAD-017", "UPLOAD-018", "UPLOAD-029")...).Needs(framework.Uploads).It(
			"an audio file of exactly the 26214400-byte ceiling is stored and finalized clean; one byte more is refused at reserve naming size_bytes, and at finalize when PUT", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 10)
				const ceiling = 26214400
				s.Step("UPLOAD-015", "UPLOAD-017")
				id, fin := uploads.Bytes(ctx, s, c, "long.wav", "audio/wav", uploads.WAVSized(ceiling))
				fin.ExpectOK(http.StatusOK)
				Expect(fin.String("scan_status")).To(Equal("clean"), fin.Describe())
				Expect(fin.Bool("usable")).To(BeTrue(), fin.Describe())
				Expect(fin.String("kind")).To(Equal("audio"), fin.Describe())
				s.Step("UPLOAD-029")
				Expect(fin.Int("duration_ms")).To(BeNumerically("~", (ceiling-44)/8, 50), "the service measures the long recording's length"+fin.Describe())
				s.Step("UPLOAD-015")
				c.Post(ctx, "/uploads", map[string]any{"filename": "long.wav", "content_type": "audio/wav", "size_bytes": ceiling + 1}, framework.Invalid()).
					ExpectError(http.StatusBadRequest, "invalid_config")
				s.Step("UPLOAD-018")
				r := uploads.Reserve(ctx, c, "long.wav", "audio/wav", ceiling)
				uploads.Put(ctx, s, r.String("upload_url"), uploads.WAVSized(ceiling+1), "audio/wav")
				uploads.Finalize(ctx, c, r.String("asset_id")).ExpectError(http.StatusBadRequest, "invalid_config")
				s.Step("UPLOAD-017")
				c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
			})

		f.Rule(rules("UPLOAD-018", "UPLOAD-016", "UPLOAD-034")...).It("a PUT of the wrong length or type, or bytes not matching checksum_sha256, fail at finalize with 400", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 40)
			_, png := fixtures.Get("image.png")
			brokenAs := func(what, declared string, size int, data []byte, ct string, extra ...any) {
				GinkgoHelper()
				By("a PUT broken by its " + what)
				s.Step()
				r := uploads.Reserve(ctx, c, "a", declared, size, extra...)
				uploads.Put(ctx, s, r.String("upload_url"), data, ct)
				fin := uploads.Finalize(ctx, c, r.String("asset_id"))
				if len(extra) > 0 {
					s.Step("UPLOAD-016")
				} else {
					s.Step("UPLOAD-018")
				}
				Expect(fin.Status).To(Equal(http.StatusBadRequest), "finalize after a PUT broken by its "+what+" answers 400"+fin.Describe())
				fin.ExpectError(http.StatusBadRequest, "invalid_config")
				s.Step("UPLOAD-034")
				uploads.Finalize(ctx, c, r.String("asset_id")).ExpectError(http.StatusNotFound, "not_found")
			}
			broken := func(what string, data []byte, ct string, extra ...any) {
				GinkgoHelper()
				brokenAs(what, "image/png", len(png), data, ct, extra...)
			}
			broken("short length", png[:len(png)-1], "image/png")
			broken("long length", append(append([]byte(nil), png...), 0), "image/png")
			broken("content type", png, "image/jpeg")
			// Audio contents are never read, so only the length rule can refuse these.
			_, wav := fixtures.Get("audio.wav")
			brokenAs("short length (audio)", "audio/wav", len(wav), wav[:len(wav)-1], "audio/wav")
			brokenAs("long length (audio)", "audio/wav", len(wav), append(append([]byte(nil), wav...), 0), "audio/wav")
			if s.Strict() {
				// What a checksum that does not match does is not shown: the reference fails the
				// finalize (UPLOAD-016), judged with --strict only.
				other := sha256.Sum256([]byte("other bytes"))
				broken("checksum", png, "image/png", "checksum_sha256", base64.StdEncoding.EncodeToString(other[:]))
			}
			s.Step("UPLOAD-016")
			right := sha256.Sum256(png)
			r := uploads.Reserve(ctx, c, "a.png", "image/png", len(png), "checksum_sha256", base64.StdEncoding.EncodeToString(right[:]))
			uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
			uploads.Finalize(ctx, c, r.String("asset_id")).ExpectOK(http.StatusOK)
		})

		f.Rule("UPLOAD-019").It("upload_url is single use: a second PUT does not replace the first file", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			_, png := fixtures.Get("image.png")
			_, flagged := fixtures.Get("flagged.png")
			r := uploads.Reserve(ctx, c, "a.png", "image/png", len(png))
			uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
			uploads.Put(ctx, s, r.String("upload_url"), flagged[:len(png)], "image/png")
			fin := uploads.Finalize(ctx, c, r.String("asset_id"))
			if fin.Status == http.StatusBadRequest {
				// "A broken rule fails at finalize, not at the PUT": the second PUT broke "once".
				fin.ExpectError(http.StatusBadRequest, "invalid_config")
				return
			}
			fin.ExpectOK(http.StatusOK)
			Expect(fin.String("scan_status")).To(Equal("clean"), "finalize reports the first file"+fin.Describe())
		})

		f.Rule(rules("UPLOAD-035", "ERR-030")...).It("finalize before the bytes arrived answers 409 input_not_ready while the link lives", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			s.Step("UPLOAD-035", "ERR-030")
			_, wav := fixtures.Get("audio.wav")
			r := uploads.Reserve(ctx, c, "a.wav", "audio/wav", len(wav))
			uploads.Finalize(ctx, c, r.String("asset_id")).ExpectError(http.StatusConflict, "input_not_ready")
			uploads.Put(ctx, s, r.String("upload_url"), wav, "audio/wav")
			uploads.Finalize(ctx, c, r.String("asset_id")).ExpectOK(http.StatusOK)
		})

		// Without control the link's 300 s pass on the target's own clock (--real-time).
		f.Rule(rules("UPLOAD-036")...).Needs(framework.Slow, framework.RealTime).WaitsOut(contract.PutLifetime+5*time.Second).It(
			"finalize after the link expired without the bytes answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 10)
				r := uploads.Reserve(ctx, c, "a.png", "image/png", 217)
				s.WaitOut(ctx, contract.PutLifetime+5*time.Second)
				uploads.Finalize(ctx, c, r.String("asset_id")).ExpectError(http.StatusBadRequest, "invalid_config")
			})

		// Without control the 300 s pass on the target's own clock (--real-time): the waits are lower
		// bounds, and the PUT within the link's life has its margin (10 s, or 2 s of wall time).
		f.Rule(rules("UPLOAD-020")...).Needs(framework.Slow, framework.RealTime).WaitsOut(contract.PutLifetime+time.Second).It(
			"a PUT after the 300 seconds does not store the file: finalize answers 400", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 10)
				_, png := fixtures.Get("image.png")
				r := uploads.Reserve(ctx, c, "a.png", "image/png", len(png))
				inTime := uploads.Reserve(ctx, c, "b.png", "image/png", len(png))
				// Within the 300 s the link still stores the file: the PUT comes with 10 s of the
				// target's clock to spare, or 2 s of wall time on a fast clock.
				margin := min(max(10*time.Second, time.Duration(2*s.TimeScale()*float64(time.Second))), contract.PutLifetime)
				s.WaitOut(ctx, contract.PutLifetime-margin)
				uploads.Put(ctx, s, inTime.String("upload_url"), png, "image/png")
				fin := uploads.Finalize(ctx, c, inTime.String("asset_id"))
				Expect(fin.Status).To(Equal(http.StatusOK),
					fmt.Sprintf("a PUT %s after the reservation is within the link's 300 s", contract.PutLifetime-margin)+fin.Describe())
				s.WaitOut(ctx, margin+time.Second)
				uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
				uploads.Finalize(ctx, c, r.String("asset_id")).ExpectError(http.StatusBadRequest, "invalid_config")
			})

		f.Rule(rules("UPLOAD-038", "ERR-040")...).Needs(framework.TestInputs).It("a finalize whose inspection failed answers 502 provider_unavailable and changes nothing", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			s.Step("UPLOAD-038", "ERR-040")
			_, png := fixtures.Get("image.jpg")
			r := uploads.Reserve(ctx, c, "a.jpg", "image/jpeg", len(png))
			uploads.Put(ctx, s, r.String("upload_url"), png, "image/jpeg")
			uploads.Finalize(ctx, s.Force(ctx, c, framework.Outcome{Kind: "provider_unavailable"}), r.String("asset_id")).ExpectError(http.StatusBadGateway, "provider_unavailable")
			uploads.Finalize(ctx, c, r.String("asset_id")).ExpectOK(http.StatusOK)
		})

		f.Rule(rules("UPLOAD-037", "ERR-036")...).Needs(framework.TestInputs, framework.Uploads, framework.RealTime).WaitsOut(60*time.Second).It("a finalize while another finalize holds the file answers 429 rate_limited at once; the holder answers the verdict when the scan ends", func(ctx context.Context, s *framework.Spec) {
			c, id, first, held := uploads.SlowFinalizes(ctx, s, 60)
			s.Step("UPLOAD-037", "ERR-036")
			Expect(first.Status).To(Equal(http.StatusTooManyRequests), "of two finalize calls made at once while the scan runs, the one that does not hold the file answers 429 at once"+first.Describe())
			first.ExpectError(http.StatusTooManyRequests, "rate_limited")
			Expect(first.Bool("error.retryable")).To(BeTrue(), first.Describe())
			// The scan (60 s) ends inside the two-minute hold: the holder answers its verdict.
			s.WaitOut(ctx, 60*time.Second)
			s.Step("UPLOAD-037", "UPLOAD-023")
			fin := uploads.HeldAnswer(held, "the 60 s scan ended").ExpectOK(http.StatusOK)
			Expect(fin.String("asset_id")).To(Equal(id), fin.Describe())
			Expect(fin.String("scan_status")).To(Equal("clean"), "a scan that ends inside the hold answers its verdict"+fin.Describe())
			Expect(fin.Bool("usable")).To(BeTrue(), fin.Describe())
			s.Step("UPLOAD-037")
			again := uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
			Expect(again.String("scan_status")).To(Equal("clean"), "the hold ended with the call: a later finalize answers the stored verdict"+again.Describe())
		})

		f.Rule(rules("UPLOAD-048", "UPLOAD-049", "UPLOAD-037", "ERR-030")...).Needs(framework.TestInputs, framework.Uploads, framework.RealTime).WaitsOut(uploads.LongScan+20*time.Second).It(
			"a scan outlasting the two-minute hold answers pending, not usable: finalize answers pending again, the asset reads pending, a submit naming it answers 409; then the verdict", func(ctx context.Context, s *framework.Spec) {
				scan := uploads.LongScan
				if s.HasControl() {
					scan = time.Hour // control's clock moves at once: the scan outlasts everything the spec does
				}
				c, id, first, held := uploads.SlowFinalizes(ctx, s, int(scan.Seconds()))
				capID, cfg, need := referenceModel(ctx, c)
				s.Step("UPLOAD-037")
				first.ExpectError(http.StatusTooManyRequests, "rate_limited")
				s.WaitOut(ctx, uploads.FinalizeHold)
				s.Step("UPLOAD-048")
				p := uploads.HeldAnswer(held, "the two-minute hold ended")
				// "pending is not reachable today": a target need not answer pending even for a scan
				// control slowed past the hold; only one that does is held to what pending means.
				if st, _ := p.Lookup("scan_status"); p.Status != http.StatusOK || st != "pending" {
					s.Lacks("the target does not answer pending for a scan outlasting the finalize hold (the text: pending is not reachable today)")
				}
				p.ExpectOK(http.StatusOK)
				Expect(p.String("asset_id")).To(Equal(id), p.Describe())
				Expect(p.String("scan_status")).To(Equal("pending"), "a scan still running after the hold answers pending"+p.Describe())
				Expect(p.Bool("usable")).To(BeFalse(), "pending is not usable"+p.Describe())
				Expect(p.String("next_action")).NotTo(BeEmpty(), p.Describe())
				again := uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
				Expect(again.String("scan_status")).To(Equal("pending"), "finalize while the scan runs answers pending again"+again.Describe())
				Expect(again.Bool("usable")).To(BeFalse(), again.Describe())

				s.Step("UPLOAD-049")
				// The asset record beyond asset_id and kind is not shown (Other records): what the read
				// and the row say of the scan is the reference's layout, judged with --strict.
				a := recordView(c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK), "asset_id", "the asset read")
				row := findAsset(paging.Get(ctx, c, "/assets", paging.Open, framework.Query("limit", "50")).Rows, id)
				Expect(row).NotTo(BeNil(), "a finalized upload whose scan runs is listed")
				s.ReferenceOnly("UPLOAD-049", "the asset read and row show the scan pending and not usable", func() {
					Expect(a.String("scan_status")).To(Equal("pending"), "the asset of an upload whose scan runs reads pending"+a.Describe())
					Expect(a.Bool("usable")).To(BeFalse(), a.Describe())
					Expect(row["scan_status"]).To(Equal("pending"), "its row reads pending")
					Expect(row["usable"]).To(Equal(false), "its row is not usable")
				})
				s.Step("UPLOAD-049", "ERR-030")
				r := refuse(ctx, c, submitBody(capID, naming(cfg, id), need*2, nil), http.StatusConflict, "input_not_ready")
				refusal.ExpectAssetIDsIfNamed(r, id)

				// A second before the scan ends it is still pending (on a clock that stands still
				// between steps); at its end, the verdict.
				s.Step("UPLOAD-048")
				rest := (scan - uploads.FinalizeHold).Seconds()
				if s.ManualClock() {
					s.Advance(ctx, rest-1)
					Expect(uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK).String("scan_status")).To(Equal("pending"), "the scan lasts its "+scan.String())
					s.Advance(ctx, 1)
				} else {
					s.WaitOut(ctx, scan-uploads.FinalizeHold+20*time.Second) // 20 s of slack for the calls between
				}
				done := uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
				Expect(done.String("scan_status")).To(Equal("clean"), "once the scan ends finalize answers its verdict"+done.Describe())
				Expect(done.Bool("usable")).To(BeTrue(), done.Describe())
				s.Step("UPLOAD-049")
				a = recordView(c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK), "asset_id", "the asset read")
				s.ReferenceOnly("UPLOAD-049", "the asset read shows the scan's verdict", func() {
					Expect(a.String("scan_status")).To(Equal("clean"), a.Describe())
					Expect(a.Bool("usable")).To(BeTrue(), a.Describe())
				})
			})

		f.Rule(rules("UPLOAD-039", "ERR-029")...).Needs(framework.Uploads).It("finalize of an unknown ast_ id, or of a real upload's id with another prefix or in upper case, answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			s.Step("UPLOAD-039", "ERR-029")
			for _, id := range []string{"ast_" + framework.RandomHex(32), "gen_" + framework.RandomHex(32), "upload"} {
				uploads.Finalize(ctx, c, id).ExpectError(http.StatusNotFound, "not_found")
			}
			// The caller's own upload, its bytes in place: only the id as given may find it.
			_, png := fixtures.Get("image.png")
			r := uploads.Reserve(ctx, c, "a.png", "image/png", len(png))
			id := r.String("asset_id")
			uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
			hex := strings.TrimPrefix(id, "ast_")
			for _, wrong := range []string{"gen_" + hex, "ast_" + strings.ToUpper(hex), "AST_" + hex, hex} {
				uploads.Finalize(ctx, c, wrong).ExpectError(http.StatusNotFound, "not_found")
			}
			uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
		})

		f.Rule(rules("UPLOAD-040", "ASSET-010", "ERR-029")...).It("another workspace's upload answers 404 not_found on finalize and on the asset reads", func(ctx context.Context, s *framework.Spec) {
			id, r := uploads.Fixture(ctx, s, s.Client(), "image.gif")
			r.ExpectOK(http.StatusOK)
			other := s.OtherClient()
			s.Step("UPLOAD-040", "ERR-029")
			uploads.Finalize(ctx, other, id).ExpectError(http.StatusNotFound, "not_found")
			s.Step("ASSET-010", "ERR-029")
			other.Get(ctx, "/assets/"+id).ExpectError(http.StatusNotFound, "not_found")
			other.Get(ctx, "/assets/"+id+"/download").ExpectError(http.StatusNotFound, "not_found")
			s.Step()
			reserved := uploads.Reserve(ctx, s.Client(), "a.png", "image/png", 10).String("asset_id")
			s.Step("UPLOAD-040", "ERR-029")
			uploads.Finalize(ctx, other, reserved).ExpectError(http.StatusNotFound, "not_found")
			// The owner still finds both: the refusals were the other workspace's, not missing files.
			uploads.Finalize(ctx, s.Client(), id).ExpectOK(http.StatusOK)
			uploads.Finalize(ctx, s.Client(), reserved).ExpectError(http.StatusConflict, "input_not_ready")
		})

		f.Rule("UPLOAD-044").Needs(framework.Uploads).It("there is no upload list and no upload delete: a DELETE of the caller's own finalized or reserved upload answers 404 or 405 and removes nothing", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			done, fin := uploads.Fixture(ctx, s, c, "image.png")
			fin.ExpectOK(http.StatusOK)
			reserved := uploads.Reserve(ctx, c, "a.png", "image/png", 217).String("asset_id")
			r := c.Get(ctx, "/uploads", framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), "GET /uploads is no route"+r.Describe())
			// Real ids of the caller's own uploads: a route that exists would find them.
			for _, id := range []string{done, reserved} {
				r = c.Delete(ctx, "/uploads/"+id, framework.Invalid())
				Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), "DELETE /uploads/{id} of the caller's own upload is no route"+r.Describe())
			}
			again := uploads.Finalize(ctx, c, done).ExpectOK(http.StatusOK)
			Expect(again.String("scan_status")).To(Equal("clean"), "the finalized upload is still there after the DELETE"+again.Describe())
			c.Get(ctx, "/assets/"+done).ExpectOK(http.StatusOK)
			// A deleted reservation would answer 404; one still there, its bytes not sent, 409.
			uploads.Finalize(ctx, c, reserved).ExpectError(http.StatusConflict, "input_not_ready")
		})

		// Without control the 50 are the run's own workspace's, once the reservations earlier specs
		// abandoned there stopped counting (15 minutes of the target's clock), reserved over two
		// minutes of the reservation brake, and the spec finishes them all at its end.
		f.Rule(rules("UPLOAD-045", "FROMURL-013", "ERR-037")...).Needs(framework.Slow, framework.RealTime).WaitsOut(contract.PendingWindow+3*time.Minute).It(
			"the 51st pending upload of a workspace answers 429 quota_exceeded; a finalized one frees a place", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 200)
				if !s.HasControl() {
					s.WaitOut(ctx, contract.PendingWindow+time.Second)
				}
				_, png := fixtures.Get("image.png")
				var last *framework.Response
				var pending []*framework.Response
				DeferCleanup(func(ctx SpecContext) { finishPending(ctx, s, c, pending) })
				for i := 0; i < 50; i++ {
					last = uploads.Reserve(ctx, c, "a.png", "image/png", len(png))
					pending = append(pending, last)
				}
				s.Step("UPLOAD-045", "ERR-037")
				c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": len(png)}).
					ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				if s.Strict() { // whether an import counts as a pending upload is the reference's (FROMURL-013)
					s.Step("FROMURL-013", "ERR-037")
					c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): "https://example.com/image.png"}).
						ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				}
				s.Step("UPLOAD-045")
				uploads.Put(ctx, s, last.String("upload_url"), png, "image/png")
				uploads.Finalize(ctx, c, last.String("asset_id")).ExpectOK(http.StatusOK)
				pending = append(pending[:49], uploads.Reserve(ctx, c, "a.png", "image/png", len(png)))
			})

		// Without control the two keys are the run's main key, once 15 minutes of the target's clock
		// have emptied its buckets and let the reservations earlier specs abandoned stop counting,
		// and the profile's sibling key (neither waits out a refusal); the spec finishes the 50
		// pending uploads of the run's workspace at its end.
		f.Rule(rules("UPLOAD-045", "RATE-008", "RATE-011", "ERR-037")...).Needs(framework.Slow, framework.RealTime, framework.Uploads, framework.SiblingKey).WaitsOut(contract.PendingWindow+time.Minute).It(
			"the upload bucket is per key and the pending cap per workspace: a second key reserves while the first is braked, until the workspace holds 50", func(ctx context.Context, s *framework.Spec) {
				a, b := pendingKeys(ctx, s)
				_, png := fixtures.Get("image.png")
				body := map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": len(png)}
				var pending []*framework.Response
				if !s.HasControl() {
					DeferCleanup(func(ctx SpecContext) { finishPending(ctx, s, s.Client(), pending) })
				}
				buckets.InWindow(ctx, s, func() {
					for i := 0; i < 30; i++ {
						pending = append(pending, uploads.Reserve(ctx, a, "a.png", "image/png", len(png)))
					}
					s.Step("RATE-008")
					buckets.ExpectRefusal(a.Post(ctx, "/uploads", body))
					// The other key of the workspace has its own bucket...
					s.Step("RATE-011")
					for i := 0; i < 20; i++ {
						r := b.Post(ctx, "/uploads", body)
						Expect(r.Status).To(Equal(http.StatusCreated), fmt.Sprintf("reservation %d of the second key while the first key's bucket is full", i+1)+r.Describe())
						pending = append(pending, r)
					}
					// ...but the 50 pending uploads are the workspace's, whichever key made them.
					s.Step("UPLOAD-045", "ERR-037")
					b.Post(ctx, "/uploads", body).ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				})
			})

		// Without control the 15 minutes pass on the target's own clock (--real-time), in the run's own
		// workspace once the reservations earlier specs abandoned there stopped counting; the 50 are
		// reserved over the reservation brake's minute, so the still-counting check is 14 minutes
		// after the first and the freed one 15 minutes after the last (target time: wall time times
		// the time scale).
		f.Rule(rules("UPLOAD-046")...).Needs(framework.Slow, framework.RealTime).WaitsOut(2*contract.PendingWindow+2*time.Minute).It(
			"an abandoned reservation stops counting toward the cap after 15 minutes", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 200)
				if !s.HasControl() {
					s.WaitOut(ctx, contract.PendingWindow+time.Second)
				}
				targetSince := func(t time.Time) time.Duration { return time.Duration(float64(time.Since(t)) * s.TimeScale()) }
				first := time.Now()
				for i := 0; i < contract.PendingUploads; i++ {
					uploads.Reserve(ctx, c, "a.png", "image/png", 10)
				}
				last := time.Now()
				c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10}).
					ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				// 14 minutes on, the abandoned reservations still count.
				if d := contract.PendingWindow - time.Minute - targetSince(first); d > 0 {
					s.WaitOut(ctx, d)
				}
				r := c.Post(ctx, "/uploads", map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10})
				Expect(r.Status).To(Equal(http.StatusTooManyRequests), "reservations 14 minutes old still count toward the cap"+r.Describe())
				r.ExpectError(http.StatusTooManyRequests, "quota_exceeded")
				s.WaitOut(ctx, max(contract.PendingWindow+time.Second-targetSince(last), time.Second))
				uploads.Reserve(ctx, c, "a.png", "image/png", 10)
			})

		f.Rule(rules("RATE-009", "RATE-013")...).Needs(framework.RealTime).It("from-url counts against the 30 upload calls a minute", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("RATE-009", "the bucket of POST /uploads/from-url (\"see below\")")
			c := bucketKey(ctx, s, "read", "generate")
			buckets.InWindow(ctx, s, func() {
				s.Step("RATE-009")
				for i := 0; i < 30; i++ {
					r := c.Post(ctx, "/uploads/from-url", map[string]any{uploads.LinkKey(c): "ftp://example.com/a.png"})
					Expect(r.Status).To(Equal(http.StatusBadRequest), fmt.Sprintf("call %d inside the bucket", i+1)+r.Describe())
				}
				s.Step("RATE-009", "RATE-013")
				buckets.ExpectRefusal(buckets.Upload.Do(ctx, c))
				// A finalize counts in the upload calls only (not in the reservation brake): the
				// imports filled that bucket, not the brake.
				buckets.ExpectRefusal(uploads.Finalize(ctx, c, "ast_"+framework.RandomHex(32)))
			})
		})

		f.Rule(rules("RATE-010", "RATE-013")...).ControlBecause("telling the reservation brake from the upload-calls bucket needs a key whose upload calls allow more than 30 a minute, a limit only the app sets: at the text's values both are 30, and the 31st reservation fills both").It("reservations are braked at 30 a minute even when the upload-calls bucket has room", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}, Buckets: map[string]int{"uploads": 100}})
			buckets.InWindow(ctx, s, func() {
				s.Step("RATE-010")
				id := uploads.PutForFinalize(ctx, s, c)
				buckets.Fill(ctx, c, buckets.Upload, 29)
				s.Step("RATE-010", "RATE-013")
				buckets.ExpectRefusal(buckets.Upload.Do(ctx, c))
				// The caller's own upload finalizes: the brake is on reservations only.
				s.Step("RATE-010")
				fin := uploads.Finalize(ctx, c, id)
				Expect(fin.Status).To(Equal(http.StatusOK), "a finalize passes while reservations are braked"+fin.Describe())
			})
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

// pendingKeys are two read+generate keys of one workspace with empty buckets and no pending
// upload, which answer a bucket refusal as it came: with control new keys of a workspace of the
// spec's own; without, the run's main key once 15 minutes of the target's clock have passed (the
// abandoned reservations stop counting) and the profile's sibling key (the spec needs RealTime and
// SiblingKey).
func pendingKeys(ctx context.Context, s *framework.Spec) (a, b *framework.Client) {
	GinkgoHelper()
	if s.HasControl() {
		ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
		a, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
		b, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
		return a, b
	}
	a = s.BucketClient(ctx, contract.PendingWindow)
	return a, s.WithKey(s.RoleKey(framework.SiblingKey).Key())
}

// finishPending PUTs the sample PNG to each reservation (made with its size) and finalizes it, so
// a spec that filled a workspace the run keeps (no control: its own) with pending uploads leaves
// none behind; c, a shared client of that workspace, waits out the upload-calls bucket. With
// control it does nothing: the spec's workspace goes with it.
func finishPending(ctx context.Context, s *framework.Spec, c *framework.Client, reserved []*framework.Response) {
	GinkgoHelper()
	if s.HasControl() {
		return
	}
	_, png := fixtures.Get("image.png")
	for _, r := range reserved {
		uploads.Put(ctx, s, r.String("upload_url"), png, "image/png")
		uploads.Finalize(ctx, c, r.String("asset_id")).ExpectOK(http.StatusOK)
	}
}
