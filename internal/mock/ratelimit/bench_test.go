package ratelimit

import (
	"testing"
	"time"
	"unsafe"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// BenchmarkAllowBusyKey: a key with a limit of 100,000 calls a minute, called every millisecond,
// so its window holds 60,000 calls and one leaves at each call.
func BenchmarkAllowBusyKey(b *testing.B) {
	benchBusyKey(b, 100_000, time.Millisecond, 60_000)
}

// BenchmarkAllowLoadTest: a key a load test uses, with a limit it never reaches, called every
// 14 µs (70,000 calls a second, what wrk makes of the mock), so its window holds 4.2 million
// calls; reports the bytes the window holds.
func BenchmarkAllowLoadTest(b *testing.B) {
	benchBusyKey(b, 1_000_000_000, 14*time.Microsecond, 4_300_000)
}

// benchBusyKey times AllowKey for a key with limit, called every step after warm calls filled
// its window, and reports the bytes the window holds.
func benchBusyKey(b *testing.B, limit int, step time.Duration, warm int) {
	c := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	l := New(c, nil)
	over := map[Bucket]int{AgentRead: limit}
	for range warm {
		l.AllowKey("key_busy", over, AgentRead)
		c.Advance(step)
	}
	b.ResetTimer()
	for range b.N {
		if ok, _ := l.AllowKey("key_busy", over, AgentRead); !ok {
			b.Fatal("refused")
		}
		c.Advance(step)
	}
	b.StopTimer()
	b.ReportMetric(float64(windowBytes(l)), "window-bytes")
}

// windowBytes is what the limiter's windows hold in their arrays.
func windowBytes(l *Limiter) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.windows {
		n += cap(w.runs) * int(unsafe.Sizeof(run{}))
	}
	return n
}
