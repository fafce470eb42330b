package specs

import (
	"net/url"
	"slices"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// Small value helpers shared by every area's specs (the field readers are package answer's).

// findAsset returns the row of asset id in rows, or nil: found as paging.IDs finds an asset id (the
// row's asset_id, else the one ast_ id it carries).
func findAsset(rows []map[string]any, id string) map[string]any {
	if i := slices.Index(paging.IDs(rows, "asset_id"), id); i >= 0 {
		return rows[i]
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// urlQuery escapes a query value for a path string.
func urlQuery(s string) string { return url.QueryEscape(s) }

// wfInt reads a whole number, null (or anything else) as 0.
func wfInt(v any) int64 {
	n, _ := framework.AsInt(v)
	return n
}
