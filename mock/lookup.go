package mock

import (
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
)

// assetLookup is the catalogue's catalog.AssetLookup, composed here in the wiring: an id is looked
// up among uploads first (Uploads), then among the workspace's generated outputs (Assets, source
// output), which are always ready and never flagged. A submit may name any asset of the
// workspace this way, and a later workflow step an earlier step's output (e.g. auto_caption's
// source_video is the actor video).
type assetLookup struct {
	Uploads catalog.AssetLookup
	Assets  *assets.Registry
}

// LookupUpload implements catalog.AssetLookup.
func (l assetLookup) LookupUpload(workspaceID, assetID string) (catalog.Upload, bool) {
	if l.Uploads != nil {
		if u, ok := l.Uploads.LookupUpload(workspaceID, assetID); ok {
			return u, true
		}
	}
	if l.Assets == nil {
		return catalog.Upload{}, false
	}
	a, ok := l.Assets.Get(workspaceID, assetID)
	if !ok || a.Source != assets.SourceOutput {
		return catalog.Upload{}, false
	}
	u := catalog.Upload{AssetID: a.ID, Kind: a.Kind, Ready: a.Usable}
	if a.DurationMS != nil {
		d := *a.DurationMS
		u.DurationMS = &d
	}
	return u, true
}

var _ catalog.AssetLookup = assetLookup{}
