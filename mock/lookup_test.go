package mock

import (
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
)

type noUploads struct{}

func (noUploads) LookupUpload(string, string) (catalog.Upload, bool) { return catalog.Upload{}, false }

func TestAssetLookupFindsOutputs(t *testing.T) {
	reg := assets.NewRegistry()
	ms := int64(4200)
	reg.Put(assets.Asset{ID: "ast_out", WorkspaceID: "ws_1", Kind: "video", Source: assets.SourceOutput, Usable: true, DurationMS: &ms})
	reg.Put(assets.Asset{ID: "ast_up", WorkspaceID: "ws_1", Kind: "image", Source: assets.SourceUpload, Usable: true})
	l := assetLookup{Uploads: noUploads{}, Assets: reg}
	u, ok := l.LookupUpload("ws_1", "ast_out")
	if !ok || !u.Ready || u.Flagged || u.Kind != "video" || u.DurationMS == nil || *u.DurationMS != ms {
		t.Fatalf("%+v %v", u, ok)
	}
	if _, ok := l.LookupUpload("ws_2", "ast_out"); ok {
		t.Fatal("another workspace's output found")
	}
	if _, ok := l.LookupUpload("ws_1", "ast_up"); ok {
		t.Fatal("an upload the uploads service does not know was found among outputs")
	}
}
