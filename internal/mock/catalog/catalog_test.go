package catalog

import (
	"errors"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

const (
	wsA = "ws_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	wsB = "ws_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

type fakeAssets map[string]Upload // by asset id; all owned by wsA

func (f fakeAssets) LookupUpload(ws, id string) (Upload, bool) {
	u, ok := f[id]
	return u, ok && ws == wsA
}

type fakeGens map[string]VoiceGeneration

func (f fakeGens) LookupVoiceGeneration(ws, id string) (VoiceGeneration, bool) {
	g, ok := f[id]
	return g, ok && ws == wsA
}

func ms(n int64) *int64 { return &n }

const (
	video72  = "ast_00000000000000000000000000000072"
	video3   = "ast_00000000000000000000000000000003"
	video105 = "ast_00000000000000000000000000000105"
	audio42  = "ast_00000000000000000000000000000042"
	pending  = "ast_000000000000000000000000000000ff"
	image1   = "ast_000000000000000000000000000000aa"
	ttsGen   = "gen_00000000000000000000000000000001"
	ttsOther = "gen_00000000000000000000000000000002"
	script   = "Meet the bottle that keeps coffee hot for twelve hours."
)

func newCatalog(t testing.TB) *Catalog {
	t.Helper()
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := New(Deps{
		Fixtures:           fx,
		DefaultWorkspaceID: func() string { return wsA },
		Assets: fakeAssets{
			video72:  {AssetID: video72, Kind: "video", Ready: true, DurationMS: ms(7200)},
			video3:   {AssetID: video3, Kind: "video", Ready: true, DurationMS: ms(3000)},
			video105: {AssetID: video105, Kind: "video", Ready: true, DurationMS: ms(10500)},
			audio42:  {AssetID: audio42, Kind: "audio", Ready: true, DurationMS: ms(42000)},
			pending:  {AssetID: pending, Kind: "video", Ready: false},
			image1:   {AssetID: image1, Kind: "image", Ready: true},
		},
		VoiceGenerations: fakeGens{
			ttsGen:   {GenerationID: ttsGen, CapabilityID: "tts", Completed: true, Script: script, VoiceID: "voc_fcb3ab75d7ceea14172932b892b4496a", DurationMS: 3700},
			ttsOther: {GenerationID: ttsOther, CapabilityID: "tts", Completed: false, Script: script},
		},
	})
	return c
}

var pro = Viewer{WorkspaceID: wsA, Plan: fixtures.PlanPro}

// TestPriceVariants covers the submit side: variants replace config.count.
func TestPriceVariants(t *testing.T) {
	c := newCatalog(t)
	cp, _ := c.Fixtures().Capability("image_fast")
	q, err := Price(cp, map[string]any{"prompt": "x", "count": 1.0}, 3, Resources{})
	if err != nil || q.Credits != 6 || q.MaxCreditsNeeded != 9 || q.Takes != 3 || len(q.Generations) != 1 {
		t.Fatalf("%+v %v", q, err)
	}
	cp, _ = c.Fixtures().Capability("video_fast")
	q, err = Price(cp, map[string]any{"prompt": "x"}, 2, Resources{})
	if err != nil || q.Credits != 40 || q.MaxCreditsNeeded != 44 || q.Takes != 2 || len(q.Generations) != 2 || q.Generations[1].Take != 2 {
		t.Fatalf("%+v %v", q, err)
	}
}

func TestPad(t *testing.T) {
	for p, want := range map[int64]int64{0: 0, 1: 2, 2: 3, 10: 11, 20: 22, 100: 110, 101: 112, 720: 792} {
		if got := Pad(p); got != want {
			t.Errorf("Pad(%d) = %d, want %d", p, got, want)
		}
	}
}

func TestAssetIDs(t *testing.T) {
	got := AssetIDs(map[string]any{
		"start_frame": []any{map[string]any{"assetId": image1, "alias": "image1"}},
		"source":      []any{video72, "not-an-id", video72},
		"languages":   []any{"es"},
		"prompt":      "mentions " + video3 + " in text",
	})
	if len(got) != 2 || got[0] != video72 || got[1] != image1 {
		t.Fatalf("%v", got)
	}
}

func TestListCapabilitiesDirect(t *testing.T) {
	c := newCatalog(t)
	rows, next := c.ListCapabilities(pro, 0, "")
	if len(rows) != DefaultLimit || next != rows[len(rows)-1].CapabilityID {
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
	c := newCatalog(t)
	if _, err := c.CopyCapability(wsA, "preset_ugc_screenshot", "preset_copy_abc"); err != nil {
		t.Fatal(err)
	}
	_, err := c.RunnableFor(Viewer{WorkspaceID: wsA}, "preset_copy_abc")
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != "capability_unavailable" || e.CapabilityStatus != "coming_soon" {
		t.Fatalf("the copy in its workspace: %#v, want capability_unavailable coming_soon", err)
	}
	_, err = c.RunnableFor(Viewer{WorkspaceID: wsB}, "preset_copy_abc")
	if !errors.As(err, &e) || e.CapabilityStatus != "unknown" {
		t.Fatalf("the copy in another workspace: %#v, want capability_unavailable unknown", err)
	}
	if _, err := c.RunnableFor(Viewer{WorkspaceID: wsA}, "preset_ugc_screenshot"); err != nil {
		t.Fatalf("the source stays runnable: %v", err)
	}
}
