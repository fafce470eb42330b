package mock

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/mock/jobs"
)

// residentGenerations submits n finished generations (a mix of image, audio and text outputs) to
// a fresh server and returns the heap growth they cost once they are all completed and garbage
// was collected.
func residentGenerations(tb testing.TB, n int) (bytesPerGen float64, total uint64) {
	tb.Helper()
	clk := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	s, err := New(Config{Seed: 1, Clock: clk, Logger: slog.New(slog.DiscardHandler), Balance: 1 << 50, NoControl: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	ws := s.DefaultWorkspaceID()
	mixes := []jobs.SubmitParams{
		{CapabilityID: "image_fast", Config: map[string]any{"prompt": "a red mug on a desk"}},
		{CapabilityID: "tts", Config: map[string]any{"script": "Hot coffee for twelve hours."}},
		{CapabilityID: "video_fast", Config: map[string]any{"prompt": "a dog"}},
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		p := mixes[i%len(mixes)]
		p.WorkspaceID, p.Plan = ws, fixtures.PlanPro
		if _, err := s.Jobs.Submit(p); err != nil {
			tb.Fatalf("submit %d (%s): %v", i, p.CapabilityID, err)
		}
		if i%500 == 499 {
			clk.Advance(time.Hour) // finish what is running
		}
	}
	clk.Advance(time.Hour)
	runtime.GC()
	runtime.ReadMemStats(&after)
	total = after.HeapAlloc - before.HeapAlloc
	if v, ok := tb.(*testing.B); ok {
		v.ReportMetric(float64(after.Sys)/(1<<20), "sys-MiB")
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
