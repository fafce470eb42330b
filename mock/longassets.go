package mock

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
)

// LongListAssets is how many uploaded images the long-lists workspace (RoleKeys.LongLists) holds
// from the start: more than the asset list's 50 a page, so a keys-plus-profile run judges its
// page sizes (ASSET-004) with the long-lists key, as an operator who uploaded that many would.
const LongListAssets = 51

// longListGIF is a 1x1 GIF, the bytes of each long-list asset.
var longListGIF = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff" +
	"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// bootLongListAssets puts LongListAssets finished image uploads in ws. Their ids come from a hash
// of their number, not from the seeded id source, so the ids of everything else the start state
// makes stay those of a start state without them.
func (s *Server) bootLongListAssets(ws string) {
	now := s.svc.Clock.Now()
	one := 1
	for i := range LongListAssets {
		sum := sha256.Sum256(fmt.Appendf(nil, "mediaspec long-list asset %d", i))
		id := "ast_" + hex.EncodeToString(sum[:16])
		name := fmt.Sprintf("long-list-%02d.gif", i+1)
		s.svc.Blob.Put(blob.Object{AssetID: id, WorkspaceID: ws, ContentType: "image/gif", FileName: name,
			Bytes: longListGIF, Size: int64(len(longListGIF)), StoredAt: now})
		s.svc.Assets.Put(assets.Asset{ID: id, WorkspaceID: ws, Kind: "image", Source: assets.SourceUpload, FileName: name,
			ContentType: "image/gif", SizeBytes: int64(len(longListGIF)), Width: &one, Height: &one, ScanStatus: uploads.ScanClean,
			Usable: true, Listed: true, CreatedAt: now})
	}
}
