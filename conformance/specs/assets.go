package specs

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// assetRowKeys are the fields every asset row carries.
var assetRowKeys = []string{"asset_id", "kind", "source", "file_name", "content_type", "size_bytes", "width", "height",
	"duration_ms", "scan_status", "usable", "generation_id", "created_at"}

// findRow returns the row of id in rows, or nil.
func findRow(rows []map[string]any, id string) map[string]any {
	for _, r := range rows {
		if r["asset_id"] == id {
			return r
		}
	}
	return nil
}

func assetSpecs(f *framework.Framework) {
	Describe("assets", func() {
		f.Rule("ASSET-001", "ASSET-002", "ASSET-005").It("finalized uploads are listed newest first with every row field and no link; a reservation is not", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 20)
			first, r := uploadFixture(ctx, s, c, "audio.wav")
			r.ExpectOK(http.StatusOK)
			if s.HasControl() {
				s.Advance(ctx, 1) // distinct created_at
			}
			second, r := uploadFixture(ctx, s, c, "image.png")
			r.ExpectOK(http.StatusOK)
			reserved := reserve(ctx, c, "pending.png", "image/png", 10).String("asset_id")

			p := getPage(ctx, c, "/assets", "assets", framework.Query("limit", "50"))
			got := ids(p.rows, "asset_id")
			Expect(got).NotTo(ContainElement(reserved), "a reserved, not finalized upload is not listed"+p.r.Describe())
			Expect(got).To(ContainElements(first, second), p.r.Describe())
			iFirst, iSecond := -1, -1
			for i, id := range got {
				switch id {
				case first:
					iFirst = i
				case second:
					iSecond = i
				}
			}
			Expect(iSecond).To(BeNumerically("<", iFirst), "newest first"+p.r.Describe())
			for _, row := range p.rows {
				for _, k := range assetRowKeys {
					Expect(row).To(HaveKey(k), "an asset row carries "+k+p.r.Describe())
				}
				Expect(row).NotTo(HaveKey("url"), "list rows carry no link"+p.r.Describe())
			}
			wav, _ := fixtures.Get("audio.wav")
			row := findRow(p.rows, first)
			Expect(row["source"]).To(Equal("upload"), p.r.Describe())
			Expect(row["kind"]).To(Equal("audio"), p.r.Describe())
			Expect(row["file_name"]).To(Equal("audio.wav"), p.r.Describe())
			Expect(row["content_type"]).To(Equal("audio/wav"), p.r.Describe())
			n, _ := framework.AsInt(row["size_bytes"])
			Expect(n).To(Equal(int64(wav.SizeBytes)), p.r.Describe())
			Expect(row["scan_status"]).To(Equal("clean"), p.r.Describe())
			Expect(row["usable"]).To(Equal(true), p.r.Describe())
			Expect(row["generation_id"]).To(BeNil(), "an upload has no generation"+p.r.Describe())
			expectDuration(p.r, row["duration_ms"], wav)
			img := findRow(p.rows, second)
			w, _ := framework.AsInt(img["width"])
			h, _ := framework.AsInt(img["height"])
			Expect([]int64{w, h}).To(Equal([]int64{64, 48}), p.r.Describe())
		})

		f.Rule(rules("ASSET-003", "ERR-020")...).It("kind and source filter the list; an invalid value answers 400 naming it", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			id, r := uploadFixture(ctx, s, c, "video.webm")
			r.ExpectOK(http.StatusOK)
			Expect(ids(getPage(ctx, c, "/assets", "assets", framework.Query("kind", "video"), framework.Query("limit", "50")).rows, "asset_id")).To(ContainElement(id))
			Expect(ids(getPage(ctx, c, "/assets", "assets", framework.Query("source", "upload"), framework.Query("limit", "50")).rows, "asset_id")).To(ContainElement(id))
			for _, q := range [][2]string{{"kind", "audio"}, {"kind", "image"}, {"source", "output"}} {
				p := getPage(ctx, c, "/assets", "assets", framework.Query(q[0], q[1]), framework.Query("limit", "50"))
				Expect(ids(p.rows, "asset_id")).NotTo(ContainElement(id), p.r.Describe())
				for _, row := range p.rows {
					Expect(row[q[0]]).To(Equal(q[1]), "the filter "+q[0]+"="+q[1]+" holds"+p.r.Describe())
				}
			}
			for _, q := range [][2]string{{"kind", "pdf"}, {"source", "library"}} {
				r := c.Get(ctx, "/assets", framework.Query(q[0], q[1])).ExpectError(http.StatusBadRequest, "invalid_config")
				Expect(r.String("error.field")).To(Equal(q[0]), r.Describe())
			}
		})

		f.Rule("ASSET-004").Needs(framework.Control, framework.Uploads).It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			c := uploadKey(ctx, s, 200)
			for i := 0; i < 51; i++ {
				_, r := uploadFixture(ctx, s, c, "image.gif")
				r.ExpectOK(http.StatusOK)
			}
			Expect(getPage(ctx, c, "/assets", "assets").rows).To(HaveLen(25))
			Expect(getPage(ctx, c, "/assets", "assets", framework.Query("limit", "500")).rows).To(HaveLen(50))
			rows, _ := walk(ctx, c, "/assets", "assets", 20, 10)
			Expect(rows).To(HaveLen(51), "paging with next_cursor visits every asset once")
		})

		f.Rule("ASSET-007").It("only this workspace's assets are listed", func(ctx context.Context, s *framework.Spec) {
			id, r := uploadFixture(ctx, s, s.Client(), "image.jpg")
			r.ExpectOK(http.StatusOK)
			rows, _ := walk(ctx, s.OtherClient(), "/assets", "assets", 50, 100)
			Expect(ids(rows, "asset_id")).NotTo(ContainElement(id))
		})

		f.Rule("ASSET-008", "ASSET-009", "ASSET-011", "LINK-001").Needs(framework.ReadKey).It("an asset read gives the row and a fresh 600 s link; the download gives a 600 s link to the bytes", func(ctx context.Context, s *framework.Spec) {
			id, r := uploadFixture(ctx, s, s.Client(), "audio.ogg")
			r.ExpectOK(http.StatusOK)
			rc := s.ReadClient()
			a := rc.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
			asset := objectAt(a, "asset")
			for _, k := range append(assetRowKeys, "url", "url_expires_at") {
				Expect(asset).To(HaveKey(k), a.Describe())
			}
			Expect(a.String("asset.asset_id")).To(Equal(id), a.Describe())
			Expect(a.String("asset.url")).NotTo(BeEmpty(), a.Describe())
			Expect(a.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), a.Describe())
			exp, err := time.Parse(time.RFC3339, a.String("asset.url_expires_at"))
			Expect(err).NotTo(HaveOccurred(), a.Describe())
			Expect(exp.IsZero()).To(BeFalse())

			d := rc.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK)
			Expect(d.String("asset_id")).To(Equal(id), d.Describe())
			Expect(d.Int("expires_in_seconds")).To(Equal(int64(600)), d.Describe())
			Expect(d.String("file_name")).To(Equal("audio.ogg"), d.Describe())
			_, err = time.Parse(time.RFC3339, d.String("expires_at"))
			Expect(err).NotTo(HaveOccurred(), d.Describe())
			_, want := fixtures.Get("audio.ogg")
			file := s.FetchLink(ctx, d.String("url"))
			Expect(file.Status).To(Equal(http.StatusOK), file.Describe())
			Expect(file.Body).To(Equal(want), "the link serves the uploaded bytes")
			rc.Get(ctx, "/assets").ExpectOK(http.StatusOK)
		})

		f.Rule(rules("ASSET-010", "ERR-029")...).It("an unknown asset id answers 404 on the read and the download", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, id := range []string{"ast_" + randomHex(32), "gen_" + randomHex(32)} {
				c.Get(ctx, "/assets/"+id).ExpectError(http.StatusNotFound, "not_found")
				c.Get(ctx, "/assets/"+id+"/download").ExpectError(http.StatusNotFound, "not_found")
			}
		})
	})
}
