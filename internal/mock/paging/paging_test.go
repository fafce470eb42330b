package paging

import (
	"testing"
	"time"
)

func TestRoundTripAndUnreadable(t *testing.T) {
	for _, id := range []string{"gen_0123456789abcdef0123456789abcdef", "wfr_x", ""} {
		if got := Decode(Encode(id)); got != id {
			t.Errorf("Decode(Encode(%q)) = %q", id, got)
		}
	}
	if c := Encode("gen_1"); c == "gen_1" {
		t.Error("the cursor is not opaque")
	}
	for _, bad := range []string{"!!!", "bm90IGpzb24", Encode("x") + "%"} {
		if got := Decode(bad); got != "" {
			t.Errorf("Decode(%q) = %q, want \"\" (restart)", bad, got)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 123, time.FixedZone("", 3600))
	k, ok := DecodeKey(EncodeKey(Key{ID: "gen_1", At: at, Seq: 7}))
	if !ok || k.ID != "gen_1" || !k.At.Equal(at) || k.Seq != 7 {
		t.Errorf("DecodeKey(EncodeKey) = %+v, %v", k, ok)
	}
	if got := Decode(EncodeKey(Key{ID: "gen_1", At: at})); got != "gen_1" {
		t.Errorf("Decode of a keyed cursor = %q, want its id", got)
	}
	for _, c := range []string{Encode("gen_1"), "!!!", ""} {
		if _, ok := DecodeKey(c); ok {
			t.Errorf("DecodeKey(%q) read a key from a cursor without one", c)
		}
	}
}
