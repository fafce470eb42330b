package specs

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Small value helpers shared by every area's specs (the field readers are package answer's).

// findRow returns the row of id in rows, or nil.
func findRow(rows []map[string]any, id string) map[string]any {
	for _, r := range rows {
		if r["asset_id"] == id {
			return r
		}
	}
	return nil
}

// clone deep-copies a JSON object.
func clone(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
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
