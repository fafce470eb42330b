package uploads

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// LinkKey is the body field of POST /uploads/from-url that carries the link to import (shape
// from_url.link: "POST /uploads/from-url body and answer: not shown").
func LinkKey(c *framework.Client) string {
	GinkgoHelper()
	return c.Shape("from_url.link")
}

// FileServer serves the fixture media files for from-url and returns its base URL:
//
//	/f/{name}       the file with its manifest content type; ?type=X serves it as X
//	/r/{n}/{name}   n redirects, then /f/{name}
//	/big            an image/png one byte over the image ceiling, streamed without a length
func FileServer(s *framework.Spec) string {
	GinkgoHelper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /f/{name}", func(w http.ResponseWriter, r *http.Request) {
		f, b, err := fixtures.Lookup(r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := f.ContentType
		if t := r.URL.Query().Get("type"); t != "" {
			ct = t
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /r/{n}/{name}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.PathValue("n"), &n)
		next := "/f/" + r.PathValue("name")
		if n > 1 {
			next = fmt.Sprintf("/r/%d/%s", n-1, r.PathValue("name"))
		}
		http.Redirect(w, r, next, http.StatusFound)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		_, png := fixtures.Get("image.png")
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
		chunk := make([]byte, 1<<20)
		for left := 20971521 - len(png); left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	})
	return s.ServeFiles(mux)
}

// ReachableFileServer starts the fixture file server and imports image.png from it once; it skips
// the spec when the target refuses the link (as a real service must refuse a loopback one: the
// run's files_url names an address it can fetch from) and returns the base URL and the import
// answer.
func ReachableFileServer(ctx context.Context, s *framework.Spec, c *framework.Client) (string, *framework.Response) {
	GinkgoHelper()
	base := FileServer(s)
	r := c.Post(ctx, "/uploads/from-url", map[string]any{LinkKey(c): base + "/f/image.png"})
	if r.Status == http.StatusBadRequest {
		if s.FilesPublic() {
			framework.SkipFor(framework.LacksState("the target refuses a link to an accepted image on the file server at files_url " +
				base + r.Describe()))
		}
		// The loopback file server is what a real service must refuse: the profile's files_url
		// and files_listen name an address it can fetch from.
		framework.SkipFor(framework.NotDeclared("the target refuses links to the suite's loopback file server (correct for a real " +
			"service: declare files_url and files_listen, an address it fetches the suite's files from; the mock admits loopback " +
			"with --allow-loopback-fetch)"))
	}
	return base, r
}
