package catalog

import (
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/fixtures"
	media "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// PreviewPath is where the mock serves template previews, on its own
// origin and outside the API root: PreviewPath + "<preset>/<file>".
const PreviewPath = "/previews/"

// fixturesPreviewBase is the prefix of every preview_url in the fixtures
// (fixtures/catalog/templates.yaml, on the reserved .invalid TLD).
const fixturesPreviewBase = "https://cdn.mediaspec.invalid/previews/"

// previewURL is the template's preview_url as served: on the mock's own
// origin when Deps.PreviewBase is set (a permanent, unsigned, public link:
// the same on every read), else the fixtures' link.
func (c *Catalog) previewURL(t *fixtures.Template) string {
	rest, ok := strings.CutPrefix(t.PreviewURL, fixturesPreviewBase)
	if !ok || c.d.PreviewBase == nil {
		return t.PreviewURL
	}
	return strings.TrimRight(c.d.PreviewBase(), "/") + PreviewPath + rest
}

// PreviewHandler serves GET and HEAD PreviewPath + "<preset>/<file>" for
// every template of the fixtures (live or withdrawn) with no key: a sample
// file of the template's preview_kind (an MP4 for video; a JPEG or PNG,
// by the link's extension, for image), cacheable for a year. Anything else
// is 404. The table of previews is built at the first request: the fixtures it reads are loaded
// then, not when the mock starts.
func (c *Catalog) PreviewHandler() http.Handler {
	previews := sync.OnceValue(func() map[string]*fixtures.Template {
		byPath := map[string]*fixtures.Template{}
		for _, cp := range c.Fixtures().Presets() {
			for _, t := range c.Fixtures().TemplatesOf(cp.ID) {
				if rest, ok := strings.CutPrefix(t.PreviewURL, fixturesPreviewBase); ok {
					byPath[rest] = t
				}
			}
		}
		return byPath
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, PreviewPath)
		t := previews()[rest]
		if t == nil && ok {
			t = c.addedTemplateAt(rest)
		}
		if !ok || t == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			wire.Write(w, r, apierr.NotFound("No template preview answers "+r.Method+" "+r.URL.Path+"."))
			return
		}
		sample := "image.png"
		switch {
		case t.PreviewKind == "video":
			sample = "video.mp4"
		case strings.EqualFold(path.Ext(rest), ".jpg"), strings.EqualFold(path.Ext(rest), ".jpeg"):
			sample = "image.jpg"
		}
		f, b := media.Get(sample)
		w.Header().Set("Content-Type", f.ContentType)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	})
}
