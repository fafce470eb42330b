package specs

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// File links and the media behind them.

// anyLink reports whether some output of the generation at path has a url.
func anyLink(r *framework.Response, path string) bool {
	GinkgoHelper()
	for _, o := range r.Array(path + ".outputs") {
		if m, ok := o.(map[string]any); ok && m["url"] != nil {
			return true
		}
	}
	return false
}

// checkExpiry checks output_urls_expire_in_seconds: 600 when some output of the generation at path
// has a link, absent otherwise.
func checkExpiry(r *framework.Response, path string) {
	GinkgoHelper()
	v, present := r.Lookup("output_urls_expire_in_seconds")
	if anyLink(r, path) {
		Expect(present).To(BeTrue(), "output_urls_expire_in_seconds is present when an output has a link"+r.Describe())
		n, _ := framework.AsInt(v)
		Expect(n).To(Equal(int64(600)), "output links last 600 seconds"+r.Describe())
	} else {
		Expect(present).To(BeFalse(), "output_urls_expire_in_seconds is absent when no output has a link"+r.Describe())
	}
}

// outputLinks returns the output urls of the generation at path.
func outputLinks(r *framework.Response, path string) []string {
	GinkgoHelper()
	var out []string
	for i := range r.Array(path + ".outputs") {
		out = append(out, r.String(fmt.Sprintf("%s.outputs.%d.url", path, i)))
	}
	return out
}

// hostOf is the host the exchange of r was made to.
func hostOf(r *framework.Response) string {
	u, err := url.Parse(r.Exchange.URL)
	if err != nil {
		return ""
	}
	return u.Host
}

// completedImage submits and finishes one take of an image model and returns its read.
func completedImage(ctx context.Context, s *framework.Spec, sp spender) *framework.Response {
	GinkgoHelper()
	d := catalogue.ImageModel(ctx, sp.c)
	j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
	s.Finish(ctx, sp.c, j.id)
	r := readGen(ctx, sp.c, j.id)
	checkCompleted(r, "generation")
	return r
}

// tamper alters the signature of an opaque link: the last character of its longest query value
// (or, without a query, of its path).
func tamper(link string) string {
	GinkgoHelper()
	u, err := url.Parse(link)
	Expect(err).NotTo(HaveOccurred())
	flip := func(s string) string {
		if s == "" {
			return "x"
		}
		last := s[len(s)-1]
		repl := byte('A')
		if last == 'A' {
			repl = 'B'
		}
		return s[:len(s)-1] + string(repl)
	}
	q := u.Query()
	longest := ""
	for k, v := range q {
		if len(v) > 0 && len(v[0]) > len(q.Get(longest)) {
			longest = k
		}
	}
	if longest == "" {
		u.Path = flip(u.Path)
	} else {
		q.Set(longest, flip(q.Get(longest)))
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// withQuery appends name=value to a link.
func withQuery(link, name, value string) string {
	sep := "?"
	if strings.Contains(link, "?") {
		sep = "&"
	}
	return link + sep + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}

// maxDecodedPixels is the most pixels a PNG the suite decodes may claim: the text's ceiling for an
// uploaded image (Limits: at most 40000000 pixels in total); a generated file over it is refused
// before it is decoded.
const maxDecodedPixels = 40_000_000

// expectPNG checks a fetched file is a PNG of the given size (0: any).
func expectPNG(s *framework.Spec, r *framework.Response, width, height int64) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), "the file link answers 200"+r.Describe())
	expectMediaType(s, r, "image/")
	// The header first: a small file may claim a huge canvas, and decoding it would take memory
	// in proportion to what it claims, not to what was read.
	cfg, err := png.DecodeConfig(bytes.NewReader(r.Body))
	Expect(err).NotTo(HaveOccurred(), "the image output decodes as PNG")
	Expect(int64(cfg.Width)*int64(cfg.Height)).To(BeNumerically("<=", maxDecodedPixels),
		fmt.Sprintf("the PNG claims %dx%d pixels, over the %d the suite decodes", cfg.Width, cfg.Height, maxDecodedPixels))
	img, err := png.Decode(bytes.NewReader(r.Body))
	Expect(err).NotTo(HaveOccurred(), "the image output decodes as PNG")
	if width > 0 {
		Expect(int64(img.Bounds().Dx())).To(Equal(width), "the PNG is as wide as the output says")
		Expect(int64(img.Bounds().Dy())).To(Equal(height), "the PNG is as high as the output says")
	}
}

// expectWAV checks a fetched file is a WAV file.
func expectWAV(s *framework.Spec, r *framework.Response) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), r.Describe())
	expectMediaType(s, r, "audio/")
	Expect(len(r.Body)).To(BeNumerically(">", 44), "a WAV file is longer than its header")
	Expect(string(r.Body[0:4])).To(Equal("RIFF"), "a WAV file starts with RIFF")
	Expect(string(r.Body[8:12])).To(Equal("WAVE"), "a WAV file is a RIFF WAVE")
}

// expectMP4 checks a fetched file is an MP4 file.
func expectMP4(s *framework.Spec, r *framework.Response) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), r.Describe())
	expectMediaType(s, r, "video/")
	Expect(len(r.Body)).To(BeNumerically(">", 12))
	Expect(string(r.Body[4:8])).To(Equal("ftyp"), "an MP4 file starts with an ftyp box")
}

// expectMediaType checks a file link answers the output's media type (prefix image/, video/ or
// audio/): the reference's (LINK-007, a SHOULD the text does not state), held with --strict.
func expectMediaType(s *framework.Spec, r *framework.Response, prefix string) {
	GinkgoHelper()
	s.ReferenceOnly("LINK-007", "a file link answers the output's media type", func() {
		Expect(r.Header.Get("Content-Type")).To(HavePrefix(prefix), "the output's link answers a "+strings.TrimSuffix(prefix, "/")+" type"+r.Describe())
	})
}
