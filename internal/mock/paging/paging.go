// Package paging makes the opaque cursors of the mock's keyset-paged lists (generations, workflow
// runs): a cursor names the last row of the previous page, encoded so clients treat it as opaque.
// A keyed cursor also carries that row's sort key (a time and a sequence number), so that a list
// whose rows move while a client walks it (GET /generations?updated_since orders by updated_at)
// goes on from where the row was, not from where it moved to.
package paging

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

type cursor struct {
	After string     `json:"after"`
	At    *time.Time `json:"at,omitempty"`
	Seq   int64      `json:"seq,omitempty"`
}

// Key is the sort key of the row a cursor continues after: its id, the time the list orders by
// and a sequence number that breaks ties.
type Key struct {
	ID  string
	At  time.Time
	Seq int64
}

// Encode returns the cursor that continues after the row with id.
func Encode(id string) string {
	return encode(cursor{After: id})
}

// EncodeKey returns the cursor that continues after the row with key k.
func EncodeKey(k Key) string {
	at := k.At.UTC()
	return encode(cursor{After: k.ID, At: &at, Seq: k.Seq})
}

func encode(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the row id a cursor continues after, or "" for a cursor it cannot read (which
// lists answer by restarting from the first page).
func Decode(s string) string {
	c, ok := decode(s)
	if !ok {
		return ""
	}
	return c.After
}

// DecodeKey returns the sort key a keyed cursor continues after; ok is false for a cursor it
// cannot read or one without a key (made by Encode).
func DecodeKey(s string) (k Key, ok bool) {
	c, read := decode(s)
	if !read || c.At == nil || c.After == "" {
		return Key{}, false
	}
	return Key{ID: c.After, At: *c.At, Seq: c.Seq}, true
}

func decode(s string) (cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false
	}
	var c cursor
	if json.Unmarshal(b, &c) != nil {
		return cursor{}, false
	}
	return c, true
}
