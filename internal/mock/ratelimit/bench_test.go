package ratelimit

import (
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
)

// BenchmarkAllowBusyKey: a key with a limit of 100,000 calls a minute, called every millisecond,
// so its window holds 60,000 calls and one leaves at each call.
func BenchmarkAllowBusyKey(b *testing.B) {
	c := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	l := New(c, nil)
	over := map[Bucket]int{AgentRead: 100_000}
	for range 60_000 {
		l.AllowKey("key_busy", over, AgentRead)
		c.Advance(time.Millisecond)
	}
	b.ResetTimer()
	for range b.N {
		if ok, _ := l.AllowKey("key_busy", over, AgentRead); !ok {
			b.Fatal("refused")
		}
		c.Advance(time.Millisecond)
	}
}
