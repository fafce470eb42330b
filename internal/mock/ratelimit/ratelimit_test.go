package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestDefaults(t *testing.T) {
	want := map[Bucket]int{"agent_read": 120, "agent_estimate": 60, "agent_submit": 20,
		"webhook_manage": 20, "uploads": 30, "reservations": 30}
	got := DefaultLimits()
	if len(got) != len(want) || len(Buckets()) != len(want) {
		t.Fatalf("defaults %v", got)
	}
	for b, n := range want {
		if got[b] != n || !b.Valid() {
			t.Errorf("%s = %d, want %d", b, got[b], n)
		}
	}
	if Bucket("nope").Valid() {
		t.Fatal("unknown bucket valid")
	}
}

func TestSlidingWindow(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, nil)
	// 20 submits spread over 19 seconds.
	for i := range 20 {
		if ok, _ := l.Allow("k", AgentSubmit); !ok {
			t.Fatalf("call %d refused", i)
		}
		if i < 19 {
			c.Advance(time.Second)
		}
	}
	ok, wait := l.Allow("k", AgentSubmit)
	if ok {
		t.Fatal("21st call allowed")
	}
	// Oldest call at t0 leaves at t0+60s; now is t0+19s.
	if wait != 41*time.Second || RetryAfterSeconds(wait) != 41 {
		t.Fatalf("wait %v", wait)
	}
	// Another key and another bucket are independent.
	if ok, _ := l.Allow("other", AgentSubmit); !ok {
		t.Fatal("other key refused")
	}
	if ok, _ := l.Allow("k", AgentRead); !ok {
		t.Fatal("other bucket refused")
	}
	c.Advance(40 * time.Second) // t0+59s: oldest still inside
	if ok, _ := l.Allow("k", AgentSubmit); ok {
		t.Fatal("allowed before the oldest call left")
	}
	c.Advance(time.Second) // t0+60s: oldest leaves (window is (now-60s, now])
	if ok, _ := l.Allow("k", AgentSubmit); !ok {
		t.Fatal("refused after the oldest call left")
	}
	if ok, _ := l.Allow("k", AgentSubmit); ok {
		t.Fatal("second call fitted into one freed slot")
	}
}

func TestRefusedCallsAreNotRecorded(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, map[Bucket]int{AgentSubmit: 1})
	l.Allow("k", AgentSubmit)
	for range 10 {
		c.Advance(time.Second)
		l.Allow("k", AgentSubmit)
	}
	c.Advance(50 * time.Second) // t0+60: the only recorded call leaves
	if ok, _ := l.Allow("k", AgentSubmit); !ok {
		t.Fatal("refused calls were counted")
	}
}

func TestOverrides(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, nil)
	l.SetOverride("k", AgentRead, 2)
	if n, _ := l.Limit("k", AgentRead); n != 2 {
		t.Fatalf("limit %d", n)
	}
	l.Allow("k", AgentRead)
	l.Allow("k", AgentRead)
	if ok, _ := l.Allow("k", AgentRead); ok {
		t.Fatal("override not applied")
	}
	l.SetOverride("z", AgentRead, 0)
	ok, wait := l.Allow("z", AgentRead)
	if ok || wait != Window {
		t.Fatalf("zero limit: ok=%v wait=%v", ok, wait)
	}
	l.SetOverride("k", AgentRead, -1)
	if n, _ := l.Limit("k", AgentRead); n != 120 {
		t.Fatalf("override not removed: %d", n)
	}
	if ok, _ := l.Allow("k", AgentRead); !ok {
		t.Fatal("refused after override removed")
	}
	l.Reset()
	if ok, _ := l.Allow("z", AgentRead); !ok {
		t.Fatal("Reset kept overrides")
	}
}

func TestAllowKeyOverridesWin(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, map[Bucket]int{AgentRead: 100})
	l.SetOverride("k", AgentRead, 50)
	own := map[Bucket]int{AgentRead: 1, WebhookManage: 1} // WebhookManage unlimited in l
	if ok, _ := l.AllowKey("k", own, AgentRead, WebhookManage); !ok {
		t.Fatal("first call refused")
	}
	if ok, _ := l.AllowKey("k", own, WebhookManage); ok {
		t.Fatal("override for a bucket the limiter does not limit was ignored")
	}
	if ok, _ := l.AllowKey("k", own, AgentRead); ok {
		t.Fatal("key override did not win over the limiter's")
	}
}

func TestAllowAllIsAtomic(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, map[Bucket]int{Uploads: 3, Reservations: 1})
	if ok, _ := l.AllowAll("k", Uploads, Reservations); !ok {
		t.Fatal("first reservation refused")
	}
	c.Advance(10 * time.Second)
	ok, wait := l.AllowAll("k", Uploads, Reservations)
	if ok || wait != 50*time.Second {
		t.Fatalf("second reservation: ok=%v wait=%v", ok, wait)
	}
	// The refused reservation did not use an uploads slot: two finalizes fit.
	for i := range 2 {
		if ok, _ := l.Allow("k", Uploads); !ok {
			t.Fatalf("finalize %d refused", i)
		}
	}
	if ok, _ := l.Allow("k", Uploads); ok {
		t.Fatal("uploads over its limit")
	}
	// Unlimited bucket (absent from limits) never refuses.
	for range 100 {
		if ok, _ := l.Allow("k", AgentRead); !ok {
			t.Fatal("unlimited bucket refused")
		}
	}
}

func TestPruneBoundsMemory(t *testing.T) {
	c := clock.NewManual(t0)
	l := New(c, nil)
	for i := range 5000 {
		l.Allow(fmt.Sprintf("k%d", i), AgentRead)
	}
	c.Advance(2 * Window)
	for range pruneEvery {
		l.Allow("fresh", AgentRead)
	}
	if n := l.Windows(); n > 2 {
		t.Fatalf("%d windows kept after every call left", n)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1,
		1500 * time.Millisecond: 2, 41 * time.Second: 41} {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("%v -> %d, want %d", d, got, want)
		}
	}
}

func BenchmarkAllow(b *testing.B) {
	c := clock.NewManual(t0)
	l := New(c, map[Bucket]int{AgentRead: 1 << 30})
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%d", i)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		l.Allow(keys[i%len(keys)], AgentRead)
	}
}
