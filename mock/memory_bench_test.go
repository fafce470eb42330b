package mock

import (
	"bufio"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// residentGenerations submits n finished generations (a mix of image, audio and text outputs) to
// a fresh server and returns the heap growth they cost once they are all completed and garbage
// was collected.
func residentGenerations(tb testing.TB, n int) (bytesPerGen float64, total uint64) {
	tb.Helper()
	return steadyLoad(tb, n, 0, time.Duration(n/500)*time.Hour, mixes)
}

// mixes are the submits of residentGenerations: an image, an audio and a video output.
var mixes = []jobs.SubmitParams{
	{CapabilityID: "image_fast", Config: map[string]any{"prompt": "a red mug on a desk"}},
	{CapabilityID: "tts", Config: map[string]any{"script": "Hot coffee for twelve hours."}},
	{CapabilityID: "video_fast", Config: map[string]any{"prompt": "a dog"}},
}

// cheapMixes skip the image and the video, whose renders dominate the time of a long load.
var cheapMixes = []jobs.SubmitParams{
	{CapabilityID: "tts", Config: map[string]any{"script": "Hot coffee for twelve hours."}},
	{CapabilityID: "ad_script_writer", Config: map[string]any{"prompt": "A short ad for a mug."}},
}

// steadyLoad submits n generations spread evenly over span of service time (500 at a time) to a
// fresh server with retention retain, and returns the heap growth once they all finished and
// garbage was collected (per generation submitted, and in all).
func steadyLoad(tb testing.TB, n int, retain, span time.Duration, mixes []jobs.SubmitParams) (bytesPerGen float64, total uint64) {
	tb.Helper()
	clk := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	s, err := New(Config{Seed: 1, Clock: clk, Logger: slog.New(slog.DiscardHandler), Balance: 1 << 50, NoControl: true, Retain: retain})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	ws := s.DefaultWorkspaceID()
	step := span / time.Duration(max(n/500, 1))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		p := mixes[i%len(mixes)]
		p.WorkspaceID, p.Plan = ws, fixtures.PlanPro
		if _, err := s.svc.Jobs.Submit(p); err != nil {
			tb.Fatalf("submit %d (%s): %v", i, p.CapabilityID, err)
		}
		if i%500 == 499 {
			clk.Advance(step) // finish what is running
		}
	}
	clk.Advance(time.Hour)
	runtime.GC()
	runtime.ReadMemStats(&after)
	total = after.HeapAlloc - before.HeapAlloc
	if v, ok := tb.(*testing.B); ok {
		v.ReportMetric(float64(after.Sys)/(1<<20), "sys-MiB")
		// Sys keeps the peak the renders' garbage reached; what the process holds once that
		// garbage is handed back to the system is its resident set.
		debug.FreeOSMemory()
		if rss, ok := residentSet(); ok {
			v.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		}
	}
	return float64(total) / float64(n), total
}

// BenchmarkResidentGeneration reports the heap a finished generation keeps (bytes/gen), with its
// outputs, asset records and links' metadata.
func BenchmarkResidentGeneration(b *testing.B) {
	n := max(b.N, 1000)
	per, total := residentGenerations(b, n)
	b.ReportMetric(per, "bytes/gen")
	b.ReportMetric(float64(total)/(1<<20), "MiB")
}

// Under a steady load spread over ten retentions, what stays resident is about one retention's
// worth of generations: the heap with --retain is a fraction of the heap without it.
// RETAIN_N=50000 runs it with the 50,000 generations (minutes).
func TestRetainKeepsHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("submits 2,000 generations twice")
	}
	n := 2000
	if v := os.Getenv("RETAIN_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	span := 10 * MinRetain
	_, kept := steadyLoad(t, n, 0, span, cheapMixes)
	_, retained := steadyLoad(t, n, MinRetain, span, cheapMixes)
	t.Logf("heap after %d generations over %s: %d KiB kept until reset, %d KiB with retain %s (%.2f)",
		n, span, kept>>10, retained>>10, MinRetain, float64(retained)/float64(kept))
	if retained*3 > kept {
		t.Fatalf("with retain the heap is %d KiB, more than a third of %d KiB without it", retained>>10, kept>>10)
	}
}

// BenchmarkSteadyLoadRetained reports the heap after 50,000 generations spread over ten
// retentions, with and without --retain.
func BenchmarkSteadyLoadRetained(b *testing.B) {
	for _, retain := range []time.Duration{0, MinRetain} {
		b.Run("retain="+retain.String(), func(b *testing.B) {
			for range b.N {
				_, total := steadyLoad(b, 50000, retain, 10*MinRetain, mixes)
				b.ReportMetric(float64(total)/(1<<20), "MiB")
			}
		})
	}
}

// residentSet reads the process's resident set size (VmRSS) from /proc; ok is false where there is
// no /proc (the metric is then left out).
func residentSet() (bytes uint64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "VmRSS:"); found {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
