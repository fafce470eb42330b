package paging

import (
	"testing"
	"unicode/utf8"
)

// FuzzDecode: any cursor a client sends decodes to an id or "" without panicking, and every
// cursor the service makes decodes back to its id.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{Encode("gen_0123456789abcdef0123456789abcdef"), "", "!!", "e30", "eyJhZnRlciI6MX0", "%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Decode(s)
		if utf8.ValidString(s) {
			if got := Decode(Encode(s)); got != s {
				t.Fatalf("Encode/Decode(%q) = %q", s, got)
			}
		}
	})
}
