package admission

import (
	"errors"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/catalog/catalogtest"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
)

func newDeps(t testing.TB) (Deps, *faults.Store) {
	t.Helper()
	st := faults.New(clock.NewManual(time.Unix(0, 0)), ids.New(1), faults.PricingUnavailable)
	return Deps{Catalog: catalogtest.New(t), Faults: st}, st
}

var pro = catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA, Plan: fixtures.PlanPro}

func TestUploadPricedEstimates(t *testing.T) {
	c, _ := newDeps(t)
	for _, tc := range []struct {
		name          string
		req           catalog.Request
		credits, hold int64
		lines         int
		ceiling       bool
		seconds       float64
	}{
		// ceil(7.2) = 8 s x 0.5 = 4; hold ceil(4.4) = 5; seconds is the upload's length.
		{"trim 7.2 s", catalog.Request{CapabilityID: "trim_video", Config: map[string]any{"source_video": []any{catalogtest.Video72}, "end_seconds": 5.0}}, 4, 5, 1, false, 7.2},
		// 3 s x 0.5 = 1.5 -> 2.
		{"trim 3 s", catalog.Request{CapabilityID: "trim_video", Config: map[string]any{"source_video": []any{catalogtest.Video3}, "end_seconds": 2.0}}, 2, 3, 1, false, 3},
		// Two languages: two jobs, each ceil(10.5) = 11 s x 6 = 66; hold 2 x ceil(72.6) = 146.
		{"translate fan-out", catalog.Request{CapabilityID: "translate_video", Config: map[string]any{"source_video": []any{catalogtest.Video105}, "languages": []any{"es", "de"}}}, 132, 146, 2, false, 10.5},
		// 1 credit/s x 8 s = 8 (min 2).
		{"auto_caption", catalog.Request{CapabilityID: "auto_caption", Config: map[string]any{"source_video": []any{catalogtest.Video72}}}, 8, 9, 1, false, 7.2},
		// voice_audio makes actor_ultra exact: 42 s x 10 = 420.
		{"actor_ultra voice_audio", catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"voice_audio": []any{catalogtest.Audio42}}}, 420, 462, 1, false, 42},
		// An approved tts of 3.7 s fixes the length: ceil(3.7) = 4 s x 10 = 40, exact.
		{"actor_ultra approved voice", catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": catalogtest.Script}, ApprovedVoiceGenerationID: catalogtest.TTSGen, VoiceID: catalogtest.TTSVoice}, 40, 44, 1, false, 3.7},
		// Without it: ceil(55/15) = 4 s, a ceiling.
		{"actor_ultra script", catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": catalogtest.Script}}, 40, 44, 1, true, 4},
		// Upscale with a real image: 3 per image.
		{"upscale", catalog.Request{CapabilityID: "upscale", Config: map[string]any{"source_image": []any{catalogtest.Image1}}}, 3, 4, 1, false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := c.Estimate(pro, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if e.Credits != tc.credits || e.MaxCreditsNeeded != tc.hold || len(e.Breakdown) != tc.lines || e.IsCeiling != tc.ceiling {
				t.Fatalf("%+v", e)
			}
			if tc.seconds < 0 != (e.Seconds == nil) || e.Seconds != nil && *e.Seconds != tc.seconds {
				t.Fatalf("seconds %v, want %v", e.Seconds, tc.seconds)
			}
		})
	}
	e, _ := c.Estimate(pro, catalog.Request{CapabilityID: "translate_video", Config: map[string]any{"source_video": []any{catalogtest.Video105}, "languages": []any{"es", "de"}}})
	if e.Breakdown[0].Label != "Translated video seconds (es)" || e.Breakdown[1].FanOut != "de" {
		t.Fatalf("fan-out lines %+v", e.Breakdown)
	}
}

func codeOf(t *testing.T, err error) *apierr.Error {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *apierr.Error", err)
	}
	return e
}

func TestResourceRefusals(t *testing.T) {
	c, _ := newDeps(t)
	other := catalog.Viewer{WorkspaceID: catalogtest.WorkspaceB, Plan: fixtures.PlanPro}
	for _, tc := range []struct {
		name  string
		v     catalog.Viewer
		req   catalog.Request
		code  apierr.Code
		field string
		ids   []string
	}{
		{"another workspace's upload", other, catalog.Request{CapabilityID: "trim_video", Config: map[string]any{"source_video": []any{catalogtest.Video72}, "end_seconds": 5.0}}, apierr.CodeNotFound, "", []string{catalogtest.Video72}},
		{"not finalized", pro, catalog.Request{CapabilityID: "trim_video", Config: map[string]any{"source_video": []any{catalogtest.Pending}, "end_seconds": 5.0}}, apierr.CodeInputNotReady, "", []string{catalogtest.Pending}},
		{"image where a video is priced", pro, catalog.Request{CapabilityID: "trim_video", Config: map[string]any{"source_video": []any{catalogtest.Image1}, "end_seconds": 5.0}}, apierr.CodeInvalidConfig, "config.source_video", nil},
		{"unknown face upload", pro, catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": "hi"}, ActorImageAssetID: "ast_11111111111111111111111111111111"}, apierr.CodeNotFound, "", []string{"ast_11111111111111111111111111111111"}},
		{"approved voice not completed", pro, catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": catalogtest.Script}, ApprovedVoiceGenerationID: catalogtest.TTSOther}, apierr.CodeInvalidConfig, "approved_voice_generation_id", nil},
		{"approved voice other script", pro, catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": "Something else."}, ApprovedVoiceGenerationID: catalogtest.TTSGen}, apierr.CodeInvalidConfig, "approved_voice_generation_id", nil},
		{"approved voice other voice", pro, catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": catalogtest.Script}, ApprovedVoiceGenerationID: catalogtest.TTSGen, VoiceID: "voc_a05411457fa1f036dba4c02156876677"}, apierr.CodeInvalidConfig, "approved_voice_generation_id", nil},
		{"approved voice of another workspace", other, catalog.Request{CapabilityID: "actor_ultra", Config: map[string]any{"script": catalogtest.Script}, ApprovedVoiceGenerationID: catalogtest.TTSGen}, apierr.CodeNotFound, "", nil},
		{"cloned voice of another workspace", other, catalog.Request{CapabilityID: "tts", Config: map[string]any{"script": "hi"}, VoiceID: "voc_3f55ceacad2658b678dd6ef99c531b0e"}, apierr.CodeNotFound, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Estimate(tc.v, tc.req)
			e := codeOf(t, err)
			if e.Code != tc.code || e.Field != tc.field || len(e.AssetIDs) != len(tc.ids) || len(tc.ids) > 0 && e.AssetIDs[0] != tc.ids[0] {
				t.Fatalf("got %s field %q ids %v", e.Code, e.Field, e.AssetIDs)
			}
		})
	}
	// The default workspace's own cloned voice is accepted.
	if _, err := c.Estimate(pro, catalog.Request{CapabilityID: "tts", Config: map[string]any{"script": "hi"}, VoiceID: "voc_3f55ceacad2658b678dd6ef99c531b0e"}); err != nil {
		t.Fatal(err)
	}
}

// A pricing fault scoped to one workspace fails that workspace's next estimate only; another
// workspace's estimates keep being priced and do not use it up.
func TestPricingFaultIsScopedToItsWorkspace(t *testing.T) {
	c, st := newDeps(t)
	if _, err := st.Add(faults.Spec{Kind: faults.PricingUnavailable, WorkspaceID: catalogtest.WorkspaceA}); err != nil {
		t.Fatal(err)
	}
	req := catalog.Request{CapabilityID: "tts", Config: map[string]any{"script": catalogtest.Script}}
	if _, err := c.Estimate(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceB, Plan: fixtures.PlanPro}, req); err != nil {
		t.Fatalf("workspace B took A's fault: %v", err)
	}
	_, err := c.Estimate(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA, Plan: fixtures.PlanPro}, req)
	if apierr.CodeOf(err) != apierr.CodePricingUnavailable {
		t.Fatalf("workspace A: %v, want pricing_unavailable", err)
	}
	if _, err := c.Estimate(catalog.Viewer{WorkspaceID: catalogtest.WorkspaceA, Plan: fixtures.PlanPro}, req); err != nil {
		t.Fatalf("the fault was not used up: %v", err)
	}
}
