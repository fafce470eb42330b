package judge

import (
	"encoding/json"
	"testing"
)

// A body is judged as JSON only when it is one JSON value: the proxy and the audit agree on that.
func TestDecodeJSON(t *testing.T) {
	for _, c := range []struct {
		body string
		json bool
	}{
		{`{"ok":true}`, true}, {` [1] `, true}, {"", false}, {"  \n", false},
		{`{"ok":true}{"ok":false}`, false}, {`{"ok":true} x`, false}, {`{"ok":`, false}, {`<html>`, false},
	} {
		if got := DecodeJSON([]byte(c.body)); (got != nil) != c.json {
			t.Errorf("%q: decoded %v, want JSON %v", c.body, got, c.json)
		}
	}
	big := DecodeJSON([]byte(`{"n":12345678901234567890}`)).(map[string]any)
	if n, ok := big["n"].(json.Number); !ok || n.String() != "12345678901234567890" {
		t.Errorf("a big number is %v, want it exact", n)
	}
}
