package specs

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// uploadPutSpecs registers the specs of the PUT and its link: a wrong length, type or checksum, a
// second PUT, a finalize before the bytes, and the link's 300 s life.
func uploadPutSpecs(f *framework.Framework) {
	Describe("uploads: reserve, put and finalize", func() {
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
	})
}
