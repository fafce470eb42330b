package conformance

import (
	"context"
	"testing"
	"time"
)

// TestRealTimeWall: the first line of a --real-time run announces the wall time of what the
// selected specs declare they wait out of the target's clock (framework.Decl.WaitsOut: a webhook
// retry's five and a half minutes, a link's 600 s; a bucket's minute when they say nothing),
// shared out over the processes and at the target's time scale, never less than the longest wait.
func TestRealTimeWall(t *testing.T) {
	waits := []time.Duration{330 * time.Second, 600 * time.Second, 70 * time.Second, 70 * time.Second}
	for _, c := range []struct {
		procs int
		scale float64
		want  time.Duration
	}{
		{1, 1, 1070 * time.Second}, // one process: the sum
		{2, 1, 600 * time.Second},  // the longest wait, not the 535 s share
		{4, 0, 600 * time.Second},  // scale unset reads as real time
		{1, 10, 107 * time.Second}, // a target clock at x10: a tenth
		{0, 1, 1070 * time.Second}, // procs unset: one
		{4, 100, 6 * time.Second},  // the longest wait at x100
	} {
		if got := realTimeWall(waits, c.procs, c.scale); got != c.want {
			t.Errorf("%d processes at x%g: about %s, want %s", c.procs, c.scale, got, c.want)
		}
	}
	if got := realTimeWall(nil, 8, 1); got != 0 {
		t.Errorf("no waits: %s, want 0", got)
	}
}

// TestSuiteTimeout: a run with no --timeout and no deadline (0 means no limit) gets a suite timeout
// far above its real-time waits, not Ginkgo's default hour, which cut a --long run on a real clock;
// --timeout and a context's deadline still bound it.
func TestSuiteTimeout(t *testing.T) {
	long := realTimeWall([]time.Duration{330 * time.Second, 600 * time.Second}, 1, 1) * 20 // hours of waits
	if got := suiteTimeout(context.Background(), 0, long, time.Hour); got < noLimit || got < 2*long {
		t.Errorf("no limit, %s of waits: timeout %s, want at least %s and far above the waits", long, got, noLimit)
	}
	if got := suiteTimeout(context.Background(), 0, 0, time.Hour); got != noLimit {
		t.Errorf("no limit, no waits: timeout %s, want %s", got, noLimit)
	}
	if got := suiteTimeout(context.Background(), 5*time.Minute, long, time.Hour); got != 5*time.Minute {
		t.Errorf("--timeout 5m: timeout %s, want 5m", got)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	if got := suiteTimeout(ctx, 0, long, 42*time.Minute); got != 42*time.Minute {
		t.Errorf("a context's deadline: timeout %s, want what Configure set from it (42m)", got)
	}
}
