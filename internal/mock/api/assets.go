package api

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"net/http"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// AssetLinkLifetime is how long a file link handed out by the asset reads lasts.
const AssetLinkLifetime = contract.OutputLinkLifetime

// RegisterAssets registers the asset reads (scope read, bucket agent_read): GET /assets,
// GET /assets/{id} and GET /assets/{id}/download. Records come from reg, bytes and links from
// files.
func (rt *Router) RegisterAssets(reg *assets.Registry, files *blob.Store) {
	h := assetHandlers{reg: reg, files: files}
	rt.Handle("GET /assets", workspace.ScopeRead, ratelimit.AgentRead, h.list)
	rt.Handle("GET /assets/{id}", workspace.ScopeRead, ratelimit.AgentRead, h.get)
	rt.Handle("GET /assets/{id}/download", workspace.ScopeRead, ratelimit.AgentRead, h.download)
}

type assetHandlers struct {
	reg   *assets.Registry
	files *blob.Store
}

// AssetRow is an asset as GET /assets lists it (openapi AssetRow): no link.
type AssetRow struct {
	AssetID      string  `json:"asset_id"`
	Kind         string  `json:"kind"`
	Source       string  `json:"source"`
	FileName     *string `json:"file_name"`
	ContentType  *string `json:"content_type"`
	SizeBytes    *int64  `json:"size_bytes"`
	Width        *int    `json:"width"`
	Height       *int    `json:"height"`
	DurationMS   *int64  `json:"duration_ms"`
	ScanStatus   *string `json:"scan_status"`
	Usable       bool    `json:"usable"`
	GenerationID *string `json:"generation_id"`
	CreatedAt    string  `json:"created_at"`
}

// RowOf renders a record as its list row. An empty string field renders null; size_bytes is null
// only for a record that has no bytes recorded (an output without a stored file).
func RowOf(a assets.Asset) AssetRow {
	r := AssetRow{
		AssetID: a.ID, Kind: a.Kind, Source: string(a.Source), FileName: nullable(a.FileName),
		ContentType: nullable(a.ContentType), Width: a.Width, Height: a.Height, DurationMS: a.DurationMS,
		ScanStatus: nullable(a.ScanStatus), Usable: a.Usable, GenerationID: nullable(a.GenerationID),
		CreatedAt: clock.Format(a.CreatedAt),
	}
	if a.SizeBytes > 0 || a.Source == assets.SourceUpload {
		n := a.SizeBytes
		r.SizeBytes = &n
	}
	return r
}

// list serves GET /api/v1/assets?kind&source&limit&cursor: the caller's listed assets, newest
// first; blank filters count as omitted, another value is 400 invalid_config naming it.
func (h assetHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	kind, _, err := wire.QueryEnum(q, "kind", "image", "video", "audio", "text")
	if err != nil {
		return err
	}
	source, _, err := wire.QueryEnum(q, "source", string(assets.SourceUpload), string(assets.SourceOutput))
	if err != nil {
		return err
	}
	cursor, _ := wire.QueryString(q, "cursor")
	limit := wire.QueryLimit(q, "limit", catalog.DefaultLimit, catalog.MaxLimit)
	page, next := h.reg.List(Caller(r.Context()).Workspace.ID(), assets.Filter{Kind: kind, Source: assets.Source(source)}, cursor, limit)
	rows := make([]AssetRow, len(page))
	for i, a := range page {
		rows[i] = RowOf(a)
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool       `json:"ok"`
		Assets     []AssetRow `json:"assets"`
		NextCursor *string    `json:"next_cursor"`
	}{true, rows, nullable(next)})
}

// lookup returns the caller's listed asset id: 404 not_found for an unknown id, another
// workspace's, or an upload that is only reserved.
func (h assetHandlers) lookup(r *http.Request) (assets.Asset, error) {
	id := r.PathValue("id")
	a, ok := h.reg.Get(Caller(r.Context()).Workspace.ID(), id)
	if !ok || !a.Listed {
		return assets.Asset{}, apierr.NotFound("No asset " + id + " in this workspace; list them with GET /assets.")
	}
	return a, nil
}

// link signs a fresh link to a's file, or reports false when the file cannot be served (not
// usable, or its bytes are gone).
func (h assetHandlers) link(a assets.Asset) (url string, expires time.Time, fileName string, ok bool) {
	if !a.Usable {
		return "", time.Time{}, "", false
	}
	obj, ok := h.files.Get(a.ID)
	if !ok {
		return "", time.Time{}, "", false
	}
	fileName = a.FileName
	if fileName == "" {
		fileName = obj.FileName
	}
	if fileName == "" {
		fileName = a.ID
	}
	url, expires = h.files.DownloadURL(a.ID, fileName, AssetLinkLifetime)
	return url, expires, fileName, true
}

// get serves GET /api/v1/assets/{id}: the row plus a fresh 600 s link (null when the file cannot
// be served) and output_urls_expire_in_seconds when there is a link.
func (h assetHandlers) get(w http.ResponseWriter, r *http.Request) error {
	a, err := h.lookup(r)
	if err != nil {
		return err
	}
	type detail struct {
		AssetRow
		URL          *string `json:"url"`
		URLExpiresAt *string `json:"url_expires_at"`
	}
	out := struct {
		OK      bool   `json:"ok"`
		Asset   detail `json:"asset"`
		Expires *int   `json:"output_urls_expire_in_seconds,omitempty"`
	}{OK: true, Asset: detail{AssetRow: RowOf(a)}}
	if link, exp, _, ok := h.link(a); ok {
		at := clock.Format(exp)
		secs := int(AssetLinkLifetime / time.Second)
		out.Asset.URL, out.Asset.URLExpiresAt, out.Expires = &link, &at, &secs
	}
	return wire.WriteJSON(w, http.StatusOK, out)
}

// download serves GET /api/v1/assets/{id}/download: a fresh 600 s link. An upload still pending
// its scan is 409 input_not_ready; a flagged (or otherwise unusable) file is 422
// moderation_blocked naming it; a file whose bytes are gone is 404 not_found.
func (h assetHandlers) download(w http.ResponseWriter, r *http.Request) error {
	a, err := h.lookup(r)
	if err != nil {
		return err
	}
	switch {
	case a.ScanStatus == "pending":
		return apierr.InputNotReady([]string{a.ID}, "Asset "+a.ID+" has not finished its scan; finalize it and try again.")
	case !a.Usable:
		return apierr.ModerationBlocked([]string{a.ID}, "Asset "+a.ID+" was refused by the content check and is never served; upload another file.")
	}
	link, exp, name, ok := h.link(a)
	if !ok {
		return apierr.NotFound("The file of asset " + a.ID + " is gone.")
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK               bool   `json:"ok"`
		AssetID          string `json:"asset_id"`
		URL              string `json:"url"`
		FileName         string `json:"file_name"`
		ExpiresAt        string `json:"expires_at"`
		ExpiresInSeconds int    `json:"expires_in_seconds"`
	}{true, a.ID, link, name, clock.Format(exp), int(AssetLinkLifetime / time.Second)})
}
