package specs

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// completedImage submits and finishes one take of an image model and returns its read.
func completedImage(ctx context.Context, s *framework.Spec, sp spender) *framework.Response {
	GinkgoHelper()
	d := imageModel(ctx, sp.c)
	j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
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

func linkSpecs(f *framework.Framework) {
	Describe("file links", func() {
		f.Rule("LINK-002", "LINK-005", "LINK-006", "LINK-007", "LINK-001").Needs(framework.Spends).It("an output link answers its bytes without a key, refuses an altered signature and saves with download=1", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			r := completedImage(ctx, s, sp)
			link := r.String("generation.outputs.0.url")
			apiPrefix := s.APIPath("/")
			if u, err := url.Parse(link); err == nil {
				Expect(strings.HasPrefix(u.Path, apiPrefix)).To(BeFalse(), "file links are served outside the API root"+r.Describe())
			}
			plain := s.FetchLink(ctx, link)
			expectPNG(plain, 0, 0)
			Expect(plain.Header.Get("Content-Disposition")).NotTo(HavePrefix("attachment"), "without download=1 the file is not forced to save"+plain.Describe())
			bad := s.FetchLink(ctx, tamper(link))
			Expect(bad.Status).To(BeNumerically(">=", 400), "a link with its signature altered is refused"+bad.Describe())
			save := s.FetchLink(ctx, withQuery(link, "download", "1"))
			Expect(save.Status).To(Equal(http.StatusOK), save.Describe())
			Expect(save.Header.Get("Content-Disposition")).To(HavePrefix("attachment"), "download=1 answers Content-Disposition: attachment"+save.Describe())
			Expect(save.Body).To(Equal(plain.Body), "download=1 serves the same bytes")
		})

		f.Rule("LINK-004", "LINK-003", "LINK-001").Needs(framework.Spends, framework.Control, framework.Slow).It("each read gives a fresh link whose 600 s start at that read; an older link expires", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			r := completedImage(ctx, s, sp)
			id := r.String("generation.generation_id")
			first := r.String("generation.outputs.0.url")
			s.Advance(ctx, 300)
			second := readGen(ctx, sp.c, id)
			Expect(second.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), second.Describe())
			fresh := second.String("generation.outputs.0.url")
			Expect(fresh).NotTo(Equal(first), "a later read gives a fresh link"+second.Describe())
			s.Advance(ctx, 301)
			old := s.FetchLink(ctx, first)
			Expect(old.Status).To(BeNumerically(">=", 400), "a link more than 600 s old is refused"+old.Describe())
			expectPNG(s.FetchLink(ctx, fresh), 0, 0)
			s.Advance(ctx, 300)
			gone := s.FetchLink(ctx, fresh)
			Expect(gone.Status).To(BeNumerically(">=", 400), "the fresh link too lasts about 600 s"+gone.Describe())
		})
	})
}
