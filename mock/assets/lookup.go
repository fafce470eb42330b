package assets

import "github.com/mediaspec/mediaspec/mock/catalog"

// Lookup is the catalogue's catalog.AssetLookup: an id is looked up among
// uploads first (Uploads), then among the workspace's generated outputs
// (Assets, source output), which are always ready and never flagged. A
// submit may name any asset of the workspace this way, and a later workflow
// step an earlier step's output (e.g. auto_caption's source_video is the
// actor video).
type Lookup struct {
	Uploads catalog.AssetLookup
	Assets  *Registry
}

// LookupUpload implements catalog.AssetLookup.
func (l Lookup) LookupUpload(workspaceID, assetID string) (catalog.Upload, bool) {
	if l.Uploads != nil {
		if u, ok := l.Uploads.LookupUpload(workspaceID, assetID); ok {
			return u, true
		}
	}
	if l.Assets == nil {
		return catalog.Upload{}, false
	}
	a, ok := l.Assets.Get(workspaceID, assetID)
	if !ok || a.Source != SourceOutput {
		return catalog.Upload{}, false
	}
	u := catalog.Upload{AssetID: a.ID, Kind: a.Kind, Ready: a.Usable}
	if a.DurationMS != nil {
		d := *a.DurationMS
		u.DurationMS = &d
	}
	return u, true
}

var _ catalog.AssetLookup = Lookup{}
