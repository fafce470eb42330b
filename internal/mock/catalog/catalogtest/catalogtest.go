// Package catalogtest is the catalogue the tests of the mock's pricing and admission read: the
// embedded fixtures with a few uploads and tts generations of one workspace behind fake lookups,
// written once so the tests of package catalog and of package admission price the same requests.
package catalogtest

import (
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
)

// The two workspaces: WorkspaceA is the catalogue's default workspace and owns every upload and
// generation below; WorkspaceB owns none.
const (
	WorkspaceA = "ws_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	WorkspaceB = "ws_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// The uploads New knows (named by kind and length), the tts generations (one completed, one not)
// and the script both spoke.
const (
	Video72  = "ast_00000000000000000000000000000072" // video, 7.2 s
	Video3   = "ast_00000000000000000000000000000003" // video, 3 s
	Video105 = "ast_00000000000000000000000000000105" // video, 10.5 s
	Audio42  = "ast_00000000000000000000000000000042" // audio, 42 s
	Pending  = "ast_000000000000000000000000000000ff" // video, not finalized
	Image1   = "ast_000000000000000000000000000000aa" // image
	TTSGen   = "gen_00000000000000000000000000000001" // completed: Script in TTSVoice, 3.7 s
	TTSOther = "gen_00000000000000000000000000000002" // not completed
	TTSVoice = "voc_fcb3ab75d7ceea14172932b892b4496a"
	Script   = "Meet the bottle that keeps coffee hot for twelve hours."
)

// assets finds the uploads by id, for WorkspaceA only.
type assets map[string]catalog.Upload

func (f assets) LookupUpload(ws, id string) (catalog.Upload, bool) {
	u, ok := f[id]
	return u, ok && ws == WorkspaceA
}

// generations finds the tts generations by id, for WorkspaceA only.
type generations map[string]catalog.VoiceGeneration

func (f generations) LookupVoiceGeneration(ws, id string) (catalog.VoiceGeneration, bool) {
	g, ok := f[id]
	return g, ok && ws == WorkspaceA
}

func ms(n int64) *int64 { return &n }

// New is the catalogue of the embedded fixtures with WorkspaceA as its default workspace and the
// uploads and generations above. It fails tb when the fixtures do not load.
func New(tb testing.TB) *catalog.Catalog {
	tb.Helper()
	fx, err := fixtures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	return catalog.New(catalog.Deps{
		Fixtures:           fx,
		DefaultWorkspaceID: func() string { return WorkspaceA },
		Assets: assets{
			Video72:  {AssetID: Video72, Kind: "video", Ready: true, DurationMS: ms(7200)},
			Video3:   {AssetID: Video3, Kind: "video", Ready: true, DurationMS: ms(3000)},
			Video105: {AssetID: Video105, Kind: "video", Ready: true, DurationMS: ms(10500)},
			Audio42:  {AssetID: Audio42, Kind: "audio", Ready: true, DurationMS: ms(42000)},
			Pending:  {AssetID: Pending, Kind: "video", Ready: false},
			Image1:   {AssetID: Image1, Kind: "image", Ready: true},
		},
		VoiceGenerations: generations{
			TTSGen:   {GenerationID: TTSGen, CapabilityID: "tts", Completed: true, Script: Script, VoiceID: TTSVoice, DurationMS: 3700},
			TTSOther: {GenerationID: TTSOther, CapabilityID: "tts", Completed: false, Script: Script},
		},
	})
}
