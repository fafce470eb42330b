package specs

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// uploadNameSpecs registers the specs of what an upload's filename does not do (issue 37 item 3):
// POST /uploads says filename is "used for the stored object name only", and the finalize answer's
// kind is "measured from the bytes, not the declaration". A name whose extension says another kind
// changes neither the reservation's kind (from content_type), the measured kind, the asset's kind
// nor the type the stored file is served as.
func uploadNameSpecs(f *framework.Framework) {
	Describe("uploads: the filename names the stored object only", func() {
		f.Rule("UPLOAD-047", "UPLOAD-028").Needs(framework.Uploads).It("a filename whose extension says another kind changes neither the kind nor the stored type", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 8)
			png, pngData := fixtures.Get("image.png")
			wav, wavData := fixtures.Get("audio.wav")
			for _, u := range []struct {
				file       fixtures.File
				data       []byte
				name, kind string // the misleading name and the kind its extension says
			}{
				{png, pngData, "clip.mp4", "video"},
				{wav, wavData, "photo.png", "image"},
			} {
				what := u.file.ContentType + " bytes named " + u.name
				s.Step("UPLOAD-047")
				r := uploads.Reserve(ctx, c, u.name, u.file.ContentType, len(u.data))
				Expect(r.String("kind")).To(Equal(u.file.Kind), what+": the reservation's kind comes from content_type, not the filename"+r.Describe())
				id := r.String("asset_id")
				put := uploads.Put(ctx, s, r.String("upload_url"), u.data, u.file.ContentType)
				Expect(put.Status).To(BeNumerically("<", 300), "a PUT keeping every rule of the reservation is accepted"+put.Describe())
				fin := uploads.Finalize(ctx, c, id).ExpectOK(http.StatusOK)
				s.Step("UPLOAD-047", "UPLOAD-028")
				Expect(fin.String("kind")).To(Equal(u.file.Kind), what+": the finalize answer's kind is measured from the bytes"+fin.Describe())
				Expect(fin.Bool("usable")).To(BeTrue(), what+": a clean file is usable whatever its name"+fin.Describe())
				s.Step("UPLOAD-047")
				a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
				Expect(recordView(a, "asset_id", "the asset read").String("kind")).To(Equal(u.file.Kind), what+": the asset's kind"+a.Describe())
				d := c.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK)
				file := s.FetchLink(ctx, linkIn(d, "the download answer"))
				Expect(file.Status).To(Equal(http.StatusOK), file.Describe())
				Expect(file.Body).To(Equal(u.data), what+": the link serves the uploaded bytes")
				// The served type is not shown; it is never the one the name's extension says.
				served := strings.ToLower(file.Header.Get("Content-Type"))
				Expect(served).NotTo(HavePrefix(u.kind+"/"), what+": the stored file is served as "+served+", the type of its name, not of its bytes"+file.Describe())
			}
		})
	})
}
