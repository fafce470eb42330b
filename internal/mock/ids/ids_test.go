package ids

import (
	"regexp"
	"testing"
)

func TestDeterministicAndWellFormed(t *testing.T) {
	a, b := New(42), New(42)
	hexID := regexp.MustCompile(`^gen_[0-9a-f]{32}$`)
	b62 := regexp.MustCompile(`^[A-Za-z0-9]{40}$`)
	for range 100 {
		x, y := a.ID("gen_"), b.ID("gen_")
		if x != y {
			t.Fatalf("same seed, different ids: %s %s", x, y)
		}
		if !hexID.MatchString(x) {
			t.Fatalf("malformed id %q", x)
		}
		k1, k2 := a.Base62(40), b.Base62(40)
		if k1 != k2 || !b62.MatchString(k1) {
			t.Fatalf("base62: %q %q", k1, k2)
		}
	}
	if New(1).ID("x_") == New(2).ID("x_") {
		t.Fatal("different seeds gave the same id")
	}
}

func TestReseedRepeats(t *testing.T) {
	s := New(7)
	first := s.ID("ws_")
	s.ID("ws_")
	s.Reseed(7)
	if again := s.ID("ws_"); again != first {
		t.Fatalf("after reseed %s, want %s", again, first)
	}
	if s.Seed() != 7 {
		t.Fatalf("seed = %d", s.Seed())
	}
}
