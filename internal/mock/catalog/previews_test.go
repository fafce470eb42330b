package catalog

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
)

func TestPreviewURLs(t *testing.T) {
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	v := Viewer{WorkspaceID: "ws_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Plan: fixtures.PlanBusiness}
	plain := New(Deps{Fixtures: fx})
	served := New(Deps{Fixtures: fx, PreviewBase: func() string { return "http://mock.test/" }})
	a, err := plain.PresetTemplates(v, "preset_studio_pro")
	if err != nil {
		t.Fatal(err)
	}
	b, err := served.PresetTemplates(v, "preset_studio_pro")
	if err != nil {
		t.Fatal(err)
	}
	h := served.PreviewHandler()
	for i, tp := range b.Templates {
		if !strings.HasPrefix(a.Templates[i].PreviewURL, fixturesPreviewBase) {
			t.Fatalf("without PreviewBase: %s", a.Templates[i].PreviewURL)
		}
		rest, ok := strings.CutPrefix(tp.PreviewURL, "http://mock.test"+PreviewPath)
		if !ok || rest != strings.TrimPrefix(a.Templates[i].PreviewURL, fixturesPreviewBase) {
			t.Fatalf("with PreviewBase: %s", tp.PreviewURL)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, PreviewPath+rest, nil))
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "video/mp4" || rec.Body.Len() == 0 {
			t.Fatalf("GET %s: %d %q", rest, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, PreviewPath + "preset_studio_pro/studio-white.mp4"},
		{http.MethodGet, PreviewPath + "preset_studio_pro/missing.mp4"},
		{http.MethodGet, "/elsewhere"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"code":"not_found"`) {
			t.Fatalf("%s %s: %d %s, want the 404 not_found envelope", c.method, c.path, rec.Code, rec.Body.String())
		}
	}
}
