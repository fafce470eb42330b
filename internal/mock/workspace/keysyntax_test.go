package workspace

import (
	"strings"
	"testing"
)

// TestWellFormedKeyIsKeyPattern: the hand-written check Authenticate runs accepts exactly what
// KeyPattern (the documented key syntax) accepts.
func TestWellFormedKeyIsKeyPattern(t *testing.T) {
	body := strings.Repeat("aZ09", 16) // 64 characters
	cases := []string{
		"", "sk_live_", KeyPrefix + body[:31], KeyPrefix + body[:32], KeyPrefix + body[:48], KeyPrefix + body,
		KeyPrefix + body + "a", "sk_test_" + body[:40], "SK_LIVE_" + body[:40], " " + KeyPrefix + body[:40],
		KeyPrefix + body[:40] + "\n", KeyPrefix + body[:39] + "-", KeyPrefix + body[:39] + "é", KeyPrefix + body[:39] + "_",
		KeyPrefix + body[:20] + " " + body[:19], "xsk_live_" + body[:40], KeyPrefix + KeyPrefix + body[:32],
	}
	for c := byte(0); c < 128; c++ {
		cases = append(cases, KeyPrefix+body[:39]+string(rune(c)))
	}
	for _, s := range cases {
		if got, want := wellFormedKey(s), KeyPattern().MatchString(s); got != want {
			t.Errorf("wellFormedKey(%q) = %v, KeyPattern says %v", s, got, want)
		}
	}
}

func FuzzWellFormedKey(f *testing.F) {
	f.Add("sk_live_" + strings.Repeat("a", 40))
	f.Add("sk_live_")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := wellFormedKey(s), KeyPattern().MatchString(s); got != want {
			t.Errorf("wellFormedKey(%q) = %v, KeyPattern says %v", s, got, want)
		}
	})
}
