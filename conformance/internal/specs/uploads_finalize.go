package specs

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// uploadFinalizeSpecs registers the specs of finalize's outcomes: each sample file's, the content check's refusals,
// the scanner marker and the audio ceiling.
func uploadFinalizeSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
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

		f.Rule("UPLOAD-024", "UPLOAD-025", "UPLOAD-027", "UPLOAD-017", "UPLOAD-022", "UPLOAD-026", "UPLOAD-028", "UPLOAD-029").Needs(framework.Profile).It(
			"a file the content check refuses answers 200 flagged, not usable, and stays so", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 20)
				// What the content check flags is the service's own: the image the profile declares
				// it flags (flagged_upload), else the suite forces the verdict on a sample image's
				// finalize (the scan_flag outcome: a test input or control's fault).
				for _, sample := range flaggedSamples(s) {
					id, fin, fx := flaggedUpload(ctx, s, c, sample)
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
	})
}

// uploadInspectionSpecs registers the specs of a finalize whose inspection fails, is held by another, or
// takes long.
func uploadInspectionSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
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
	})
}

// uploadOwnershipSpecs registers the specs of finalizing what is not the caller's upload: an unknown id, another
// workspace's upload, and the upload list and delete that do not exist.
func uploadOwnershipSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
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
	})
}
