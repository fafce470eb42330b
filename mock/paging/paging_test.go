package paging

import "testing"

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
