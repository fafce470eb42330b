// Package paging makes the opaque cursors of the mock's keyset-paged lists (generations, workflow
// runs): a cursor names the last row of the previous page, encoded so clients treat it as opaque.
package paging

import (
	"encoding/base64"
	"encoding/json"
)

type cursor struct {
	After string `json:"after"`
}

// Encode returns the cursor that continues after the row with id.
func Encode(id string) string {
	b, _ := json.Marshal(cursor{After: id})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the row id a cursor continues after, or "" for a cursor it cannot read (which
// lists answer by restarting from the first page).
func Decode(s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	var c cursor
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	return c.After
}
