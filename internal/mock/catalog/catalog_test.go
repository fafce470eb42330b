package catalog_test

import (
	"errors"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/catalog/catalogtest"
)

var pro = catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA, Plan: fixtures.PlanPro}

// TestPriceVariants covers the submit side: variants replace config.count.
func TestPriceVariants(t *testing.T) {
	c := catalogtest.New(t)
	cp, _ := c.Fixtures().Capability("image_fast")
	q, err := catalog.Price(cp, map[string]any{"prompt": "x", "count": 1.0}, 3, catalog.Resources{})
	if err != nil || q.Credits != 6 || q.MaxCreditsNeeded != 9 || q.Takes != 3 || len(q.Generations) != 1 {
		t.Fatalf("%+v %v", q, err)
	}
	cp, _ = c.Fixtures().Capability("video_fast")
	q, err = catalog.Price(cp, map[string]any{"prompt": "x"}, 2, catalog.Resources{})
	if err != nil || q.Credits != 40 || q.MaxCreditsNeeded != 44 || q.Takes != 2 || len(q.Generations) != 2 || q.Generations[1].Take != 2 {
		t.Fatalf("%+v %v", q, err)
	}
}

func TestPad(t *testing.T) {
	for p, want := range map[int64]int64{0: 0, 1: 2, 2: 3, 10: 11, 20: 22, 100: 110, 101: 112, 720: 792} {
		if got := catalog.Pad(p); got != want {
			t.Errorf("Pad(%d) = %d, want %d", p, got, want)
		}
	}
}

func TestAssetIDs(t *testing.T) {
	got := catalog.AssetIDs(map[string]any{
		"start_frame": []any{map[string]any{"assetId": catalogtest.Image1, "alias": "image1"}},
		"source":      []any{catalogtest.Video72, "not-an-id", catalogtest.Video72},
		"languages":   []any{"es"},
		"prompt":      "mentions " + catalogtest.Video3 + " in text",
	})
	if len(got) != 2 || got[0] != catalogtest.Video72 || got[1] != catalogtest.Image1 {
		t.Fatalf("%v", got)
	}
}

func TestListCapabilitiesDirect(t *testing.T) {
	c := catalogtest.New(t)
	rows, next := c.ListCapabilities(pro, 0, "")
	if len(rows) != catalog.DefaultLimit || next != rows[len(rows)-1].CapabilityID {
		t.Fatalf("%d rows, next %q", len(rows), next)
	}
	rows, next = c.ListCapabilities(pro, 1000, "")
	if len(rows) != 28 || next != "" {
		t.Fatalf("%d rows, next %q", len(rows), next)
	}
}

// A copy listed in one workspace is coming soon there on estimate and submit too (RunnableFor),
// as its detail says: before, the estimate answered capability_status unknown for it.
func TestRunnableForCopyIsComingSoon(t *testing.T) {
	c := catalogtest.New(t)
	if _, err := c.CopyCapability(catalogtest.WorkspaceA, "preset_ugc_screenshot", "preset_copy_abc"); err != nil {
		t.Fatal(err)
	}
	_, err := c.RunnableFor(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA}, "preset_copy_abc")
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != "capability_unavailable" || e.CapabilityStatus != "coming_soon" {
		t.Fatalf("the copy in its workspace: %#v, want capability_unavailable coming_soon", err)
	}
	_, err = c.RunnableFor(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceB}, "preset_copy_abc")
	if !errors.As(err, &e) || e.CapabilityStatus != "unknown" {
		t.Fatalf("the copy in another workspace: %#v, want capability_unavailable unknown", err)
	}
	if _, err := c.RunnableFor(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA}, "preset_ugc_screenshot"); err != nil {
		t.Fatalf("the source stays runnable: %v", err)
	}
}
