package specs

import (
	"context"
	"github.com/mediaspec/mediaspec/internal/contract"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// assetSpecs registers the specs of assets and file links.
func assetSpecs(f *framework.Framework) {
	assetListSpecs(f)
	assetReadSpecs(f)
	outputAssetSpecs(f)
	fileLinkSpecs(f)
}

// assetListSpecs registers the specs of the asset list, read and download.
func assetListSpecs(f *framework.Framework) {
	Describe("assets: list, read and download", func() {
		f.Rule("ASSET-001", "ASSET-002", "ASSET-005").It("finalized uploads are listed newest first with every row field and no link; a reservation is not", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 20)
			first, r := uploads.Fixture(ctx, s, c, "audio.wav")
			r.ExpectOK(http.StatusOK)
			if s.HasControl() {
				s.Advance(ctx, 1) // distinct created_at
			}
			second, r := uploads.Fixture(ctx, s, c, "image.png")
			r.ExpectOK(http.StatusOK)
			reserved := uploads.Reserve(ctx, c, "pending.png", "image/png", 10).String("asset_id")

			s.Step("ASSET-001")
			p := paging.Get(ctx, c, "/assets", paging.Open, framework.Query("limit", "50"))
			got := paging.IDs(p.Rows, "asset_id")
			// The asset list is not shown beyond its rows' ids and kinds: what it holds besides the
			// finalized uploads (ASSET-005), its order (ASSET-001) and its rows' fields (ASSET-002) are
			// the reference's, held with --strict; its rows carry no link (What the service does 8).
			s.Step("ASSET-005")
			s.ReferenceOnly("ASSET-005", "a reserved upload is not listed among assets", func() {
				Expect(got).NotTo(ContainElement(reserved), "a reserved, not finalized upload is not listed"+p.R.Describe())
			})
			s.Step("ASSET-001")
			Expect(got).To(ContainElements(first, second), p.R.Describe())
			s.ReferenceOnly("ASSET-001", "the asset list is newest first", func() {
				Expect(slices.Index(got, second)).To(BeNumerically("<", slices.Index(got, first)), "newest first"+p.R.Describe())
			})
			for _, row := range p.Rows {
				answer.NoLinks(row, "an asset row (list rows carry no file link)")
			}
			s.Step("ASSET-002")
			s.ReferenceOnly("ASSET-002", "an asset row's fields", func() {
				for _, row := range p.Rows {
					for _, k := range assetRowKeys {
						Expect(row).To(HaveKey(k), "an asset row carries "+k+p.R.Describe())
					}
				}
				wav, _ := fixtures.Get("audio.wav")
				row := findAsset(p.Rows, first)
				Expect(row["source"]).To(Equal("upload"), p.R.Describe())
				Expect(row["kind"]).To(Equal("audio"), p.R.Describe())
				Expect(row["file_name"]).To(Equal("audio.wav"), p.R.Describe())
				Expect(row["content_type"]).To(Equal("audio/wav"), p.R.Describe())
				n, _ := framework.AsInt(row["size_bytes"])
				Expect(n).To(Equal(int64(wav.SizeBytes)), p.R.Describe())
				Expect(row["scan_status"]).To(Equal("clean"), p.R.Describe())
				Expect(row["usable"]).To(Equal(true), p.R.Describe())
				Expect(row["generation_id"]).To(BeNil(), "an upload has no generation"+p.R.Describe())
				uploads.ExpectDuration(p.R, row["duration_ms"], wav)
				img := findAsset(p.Rows, second)
				w, _ := framework.AsInt(img["width"])
				h, _ := framework.AsInt(img["height"])
				Expect([]int64{w, h}).To(Equal([]int64{64, 48}), p.R.Describe())
			})
		})

		f.Rule(rules("ASSET-003", "ERR-020")...).It("kind and source filter the list; an invalid value answers 400 naming it", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("ASSET-003", "the asset list's query (GET /assets request shape: not shown)")
			c := uploads.Client(ctx, s, 10)
			id, r := uploads.Fixture(ctx, s, c, "video.webm")
			r.ExpectOK(http.StatusOK)
			s.Step("ASSET-003")
			Expect(paging.IDs(paging.Get(ctx, c, "/assets", paging.Open, framework.Query("kind", "video"), framework.Query("limit", "50")).Rows, "asset_id")).To(ContainElement(id))
			Expect(paging.IDs(paging.Get(ctx, c, "/assets", paging.Open, framework.Query("source", "upload"), framework.Query("limit", "50")).Rows, "asset_id")).To(ContainElement(id))
			for _, q := range [][2]string{{"kind", "audio"}, {"kind", "image"}, {"source", "output"}} {
				p := paging.Get(ctx, c, "/assets", paging.Open, framework.Query(q[0], q[1]), framework.Query("limit", "50"))
				Expect(paging.IDs(p.Rows, "asset_id")).NotTo(ContainElement(id), p.R.Describe())
				for _, row := range p.Rows {
					Expect(row[q[0]]).To(Equal(q[1]), "the filter "+q[0]+"="+q[1]+" holds"+p.R.Describe())
				}
			}
			s.Step("ASSET-003", "ERR-020")
			for _, q := range [][2]string{{"kind", "pdf"}, {"source", "library"}} {
				r := c.Get(ctx, "/assets", framework.Query(q[0], q[1]), framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
				refusal.ExpectField(r, q[0])
			}
		})

		// Without the control API the list is the profile's long-lists workspace's, whose uploads
		// the operator made (long_lists_key).
		f.Rule("ASSET-004").Needs(framework.LongListsKey, framework.Uploads).It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("ASSET-004", "the asset list's page size (the text's sizes name voices, capabilities, presets and generations)")
			if !s.HasControl() {
				c := s.RoleKey(framework.LongListsKey)
				rows, _ := paging.Walk(ctx, c, "/assets", paging.Open, 20, 100)
				ids := paging.IDs(rows, "asset_id")
				longListHolds(s, len(ids), "assets", shortProfileList)
				Expect(len(paging.Get(ctx, c, "/assets", paging.Open).Rows)).To(BeNumerically("<=", 25))
				Expect(len(paging.Get(ctx, c, "/assets", paging.Open, framework.Query("limit", "500")).Rows)).To(BeNumerically("<=", 50))
				seen := map[string]bool{}
				for _, id := range ids {
					Expect(seen[id]).To(BeFalse(), "paging with next_cursor visits every asset once: "+id+" came twice")
					seen[id] = true
				}
				return
			}
			c := uploads.Key(ctx, s, 200)
			for i := 0; i < 51; i++ {
				_, r := uploads.Fixture(ctx, s, c, "image.gif")
				r.ExpectOK(http.StatusOK)
			}
			// A page can be shorter than limit (What the service does 8): the most a page holds.
			Expect(len(paging.Get(ctx, c, "/assets", paging.Open).Rows)).To(BeNumerically("<=", 25))
			Expect(len(paging.Get(ctx, c, "/assets", paging.Open, framework.Query("limit", "500")).Rows)).To(BeNumerically("<=", 50))
			rows, _ := paging.Walk(ctx, c, "/assets", paging.Open, 20, 10)
			Expect(rows).To(HaveLen(51), "paging with next_cursor visits every asset once")
		})

		f.Rule("ASSET-007").It("only this workspace's assets are listed", func(ctx context.Context, s *framework.Spec) {
			id, r := uploads.Fixture(ctx, s, s.Client(), "image.jpg")
			r.ExpectOK(http.StatusOK)
			rows, _ := paging.Walk(ctx, s.OtherClient(), "/assets", paging.Open, 50, 100)
			Expect(paging.IDs(rows, "asset_id")).NotTo(ContainElement(id))
		})

	})
}

// assetReadSpecs registers the specs of the asset read and download (the container of
// assetListSpecs continued under its text, so the specs keep their full names).
func assetReadSpecs(f *framework.Framework) {
	Describe("assets: list, read and download", func() {
		f.Rule("ASSET-008", "ASSET-009", "ASSET-011", "LINK-001").Needs(framework.ReadKey).It("an asset read gives the row and a fresh 600 s link; the download gives a 600 s link to the bytes", func(ctx context.Context, s *framework.Spec) {
			id, r := uploads.Fixture(ctx, s, s.Client(), "audio.ogg")
			r.ExpectOK(http.StatusOK)
			rc := s.ReadClient()
			s.Step("ASSET-011")
			a := rc.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
			// "Asset record beyond asset_id, kind and the output link fields: not shown": the rest
			// of the read (ASSET-008) and of the download (ASSET-009) is the reference's.
			s.Step("ASSET-008")
			s.ReferenceOnly("ASSET-008", "the asset read's layout", func() {
				asset := answer.ObjectAt(a, "asset")
				for _, k := range append(assetRowKeys, "url", "url_expires_at") {
					Expect(asset).To(HaveKey(k), a.Describe())
				}
				exp, err := answer.ParseStamp(a.String("asset.url_expires_at"))
				Expect(err).NotTo(HaveOccurred(), a.Describe())
				Expect(exp.IsZero()).To(BeFalse())
			})
			// The record is the object carrying asset_id, wherever the answer lays it out; it
			// carries the asset's kind and a link (the output link fields).
			av := recordView(a, "asset_id", "the asset read")
			Expect(av.String("asset_id")).To(Equal(id), a.Describe())
			Expect(av.String("kind")).To(Equal("audio"), "the asset's kind"+a.Describe())
			linkIn(a, "the asset read")
			s.Step("ASSET-008", "LINK-001")
			s.ReferenceOnly("ASSET-008", "the asset read states its link's lifetime in output_urls_expire_in_seconds", func() {
				Expect(a.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), a.Describe())
			})

			s.Step("ASSET-011")
			d := rc.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK)
			s.Step("ASSET-009")
			s.ReferenceOnly("ASSET-009", "the download answer's layout", func() {
				Expect(d.String("asset_id")).To(Equal(id), d.Describe())
				Expect(d.Int("expires_in_seconds")).To(Equal(int64(600)), d.Describe())
				Expect(d.String("file_name")).To(Equal("audio.ogg"), d.Describe())
				_, err := answer.ParseStamp(d.String("expires_at"))
				Expect(err).NotTo(HaveOccurred(), d.Describe())
			})
			_, want := fixtures.Get("audio.ogg")
			file := s.FetchLink(ctx, linkIn(d, "the download answer"))
			Expect(file.Status).To(Equal(http.StatusOK), file.Describe())
			Expect(file.Body).To(Equal(want), "the link serves the uploaded bytes")
			s.Step("ASSET-011")
			rc.Get(ctx, "/assets").ExpectOK(http.StatusOK)
		})

		// The 600 s pass on control's clock, or in real time with --real-time (WaitOut).
		f.Rule("ASSET-008", "ASSET-009").Needs(framework.RealTime, framework.Slow, framework.Uploads).WaitsOut(contract.OutputLinkLifetime).It(
			"an asset read's and a download's links last the 600 s they state: they serve the file 590 s later and not after 600", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 10)
				id, r := uploads.Fixture(ctx, s, c, "image.png")
				r.ExpectOK(http.StatusOK)
				_, want := fixtures.Get("image.png")
				// The target's time of the reads, to place the stated ends: control's clock; without
				// it the ends are not placed (the fetches below judge the lifetime).
				var now time.Time
				if s.HasControl() {
					now = s.ClockNow(ctx)
				}
				a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
				dl := c.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK)
				links := map[string]string{"read link": linkIn(a, "the asset read"), "download url": linkIn(dl, "the download answer")}
				s.Step("ASSET-008", "ASSET-009")
				s.ReferenceOnly("ASSET-008", "the asset read and the download state their link's end", func() {
					for what, at := range map[string]*framework.Response{"asset.url_expires_at": a, "expires_at": dl} {
						exp, err := answer.ParseStamp(at.String(what))
						Expect(err).NotTo(HaveOccurred(), at.Describe())
						if !now.IsZero() {
							Expect(exp.Sub(now)).To(BeNumerically("~", contract.OutputLinkLifetime, 2*time.Second), what+" is 600 s after the read"+at.Describe())
						}
					}
				})
				s.WaitOut(ctx, contract.OutputLinkLifetime-10*time.Second)
				for what, link := range links {
					stepLink(s, what)
					got := s.FetchLink(ctx, link)
					Expect(got.Status).To(Equal(http.StatusOK), "the "+what+" 590 s after the read"+got.Describe())
					Expect(got.Body).To(Equal(want), "the "+what+" serves the uploaded bytes")
				}
				s.WaitOut(ctx, 11*time.Second)
				for what, link := range links {
					stepLink(s, what)
					if links["read link"] == links["download url"] {
						s.Step("ASSET-008", "ASSET-009") // one link given by both: its lifetime is both answers'
					}
					got := s.FetchLink(ctx, link)
					Expect(got.Status).To(BeNumerically(">=", 400), "the "+what+" more than 600 s after the read is refused"+got.Describe())
				}
			})

		f.Rule(rules("ASSET-010", "ERR-029", "UPLOAD-034")...).Needs(framework.Uploads).It("an unknown asset id, a real one under another prefix or case, and a refused upload's id answer 404 on the read and the download", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			gone := func(id string) {
				GinkgoHelper()
				c.Get(ctx, "/assets/"+id).ExpectError(http.StatusNotFound, "not_found")
				c.Get(ctx, "/assets/"+id+"/download").ExpectError(http.StatusNotFound, "not_found")
			}
			s.Step("ASSET-010", "ERR-029")
			gone("ast_" + framework.RandomHex(32))
			// The hex of the caller's own asset under another prefix or in upper case finds nothing.
			id, fin := uploads.Fixture(ctx, s, c, "image.png")
			fin.ExpectOK(http.StatusOK)
			hex := strings.TrimPrefix(id, "ast_")
			for _, wrong := range []string{"gen_" + hex, "ast_" + strings.ToUpper(hex), hex} {
				gone(wrong)
			}
			c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
			// A file refused at finalize is deleted: its asset is gone too.
			s.Step("UPLOAD-034")
			refused, r := uploads.Fixture(ctx, s, c, "png-named.jpg")
			r.ExpectError(http.StatusBadRequest, "invalid_config")
			gone(refused)
		})

	})

}

// stepLink charges what follows to the rule of the asset link named what: the read's (ASSET-008)
// or the download's (ASSET-009).
func stepLink(s *framework.Spec, what string) {
	if what == "download url" {
		s.Step("ASSET-009")
		return
	}
	s.Step("ASSET-008")
}

// outputAssetSpecs registers the specs of assets made by generations.
func outputAssetSpecs(f *framework.Framework) {
	Describe("assets: outputs of generations", func() {
		f.Rule("ASSET-006").It("an output asset has source output, scan_status null and generation_id naming its generation", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("ASSET-006", "the asset record beyond asset_id, kind and the link")
			sp := newSpender(ctx, s)
			g := completedImage(ctx, s, sp)
			genID := g.String("generation.generation_id")
			if v, has := g.Lookup("generation.outputs.0.asset_id"); !has || v == nil {
				framework.SkipFor(framework.LacksState("the generation's outputs carry no asset_id (the outputs table does not list it)"))
			}
			id := g.String("generation.outputs.0.asset_id")
			a := sp.c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
			Expect(a.String("asset.source")).To(Equal("output"), a.Describe())
			Expect(a.Field("asset.scan_status")).To(BeNil(), "an output has no scan: scan_status null"+a.Describe())
			Expect(a.String("asset.generation_id")).To(Equal(genID), a.Describe())
			rows, _ := paging.Walk(ctx, sp.c, "/assets?source=output", paging.Open, 50, 20)
			row := findAsset(rows, id)
			Expect(row).NotTo(BeNil(), "the output is listed with source=output")
			Expect(row["source"]).To(Equal("output"))
			Expect(row).To(HaveKeyWithValue("scan_status", BeNil()))
			Expect(row["generation_id"]).To(Equal(genID))
			for _, row := range rows {
				answer.NoLinks(row, "an output asset row (list rows carry no file link)")
			}
		})
	})

}

// fileLinkSpecs registers the specs of signed file links.
func fileLinkSpecs(f *framework.Framework) {
	Describe("links: signed file links", func() {
		f.Rule("LINK-002", "LINK-005", "LINK-006", "LINK-007", "LINK-001").Needs(framework.Spends).It("an output link answers its bytes without a key, refuses an altered signature and saves with download=1", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			r := completedImage(ctx, s, sp)
			link := r.String("generation.outputs.0.url")
			apiPrefix := s.APIPath("/")
			s.Step("LINK-005")
			s.ReferenceOnly("LINK-005", "file links are served outside the API root", func() {
				if u, err := url.Parse(link); err == nil {
					Expect(strings.HasPrefix(u.Path, apiPrefix)).To(BeFalse(), "file links are served outside the API root"+r.Describe())
				}
			})
			s.Step("LINK-002", "LINK-007")
			plain := s.FetchLink(ctx, link)
			expectPNG(s, plain, 0, 0)
			s.Step("LINK-006")
			s.ReferenceOnly("LINK-006", "without download=1 a link does not force a save", func() {
				Expect(plain.Header.Get("Content-Disposition")).NotTo(HavePrefix("attachment"), "without download=1 the file is not forced to save"+plain.Describe())
			})
			s.Step("LINK-005")
			bad := s.FetchLink(ctx, tamper(link))
			s.ReferenceOnly("LINK-005", "a link with its signature altered is refused", func() {
				Expect(bad.Status).To(BeNumerically(">=", 400), "a link with its signature altered is refused"+bad.Describe())
			})
			s.Step("LINK-006")
			save := s.FetchLink(ctx, withQuery(link, "download", "1"))
			Expect(save.Status).To(Equal(http.StatusOK), save.Describe())
			Expect(save.Header.Get("Content-Disposition")).To(HavePrefix("attachment"), "download=1 answers Content-Disposition: attachment"+save.Describe())
			Expect(save.Body).To(Equal(plain.Body), "download=1 serves the same bytes")
		})

		// The link windows pass on control's clock, or in real time with --real-time (WaitOut).
		f.Rule("LINK-004", "LINK-003", "LINK-001").Needs(framework.Spends, framework.RealTime, framework.Slow).WaitsOut(3*contract.OutputLinkLifetime/2).It("each read gives a fresh link whose 600 s start at that read; an older link expires", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			r := completedImage(ctx, s, sp)
			id := r.String("generation.generation_id")
			first := r.String("generation.outputs.0.url")
			s.WaitOut(ctx, 300*time.Second)
			second := readGen(ctx, sp.c, id)
			s.Step("LINK-001")
			Expect(second.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), second.Describe())
			s.Step("LINK-004")
			fresh := second.String("generation.outputs.0.url")
			Expect(fresh).NotTo(Equal(first), "a later read gives a fresh link"+second.Describe())
			s.WaitOut(ctx, 301*time.Second)
			s.Step("LINK-003")
			old := s.FetchLink(ctx, first)
			Expect(old.Status).To(BeNumerically(">=", 400), "a link more than 600 s old is refused"+old.Describe())
			s.Step("LINK-004")
			expectPNG(s, s.FetchLink(ctx, fresh), 0, 0)
			s.WaitOut(ctx, 300*time.Second)
			s.Step("LINK-004", "LINK-003")
			gone := s.FetchLink(ctx, fresh)
			Expect(gone.Status).To(BeNumerically(">=", 400), "the fresh link too lasts about 600 s"+gone.Describe())
		})
	})

}
