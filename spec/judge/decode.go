package judge

import (
	"bytes"
	"encoding/json"
)

// DecodeJSON parses a body that is one JSON value, numbers kept exact (json.Number); nil when it
// is empty, not JSON, or has anything but white space after its first value. The proxy and the
// client audit decode with it, so both judge a body alike.
func DecodeJSON(b []byte) any {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil
	}
	return v
}
