package mock

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/mock/jobs"
	"github.com/mediaspec/mediaspec/mock/ratelimit"
	"github.com/mediaspec/mediaspec/mock/workspace"
)

// discardWriter is a reusable http.ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkServeGetGeneration measures the mock's own work for GET /api/v1/generations/{id} (key
// check, bucket, read, links, encoding) without the network: what the side-by-side run
// (BenchmarkHTTPGetGeneration) adds over a bare handler. Run with -cpuprofile/-memprofile.
func BenchmarkServeGetGeneration(b *testing.B) {
	clk := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	s, err := New(Config{Seed: 1, Clock: clk, Logger: slog.New(slog.DiscardHandler), NoControl: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws, _ := s.Registry.Get(s.DefaultWorkspaceID())
	_, key, err := s.Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead}, Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 1 << 30},
	})
	if err != nil {
		b.Fatal(err)
	}
	sub, err := s.Jobs.Submit(jobs.SubmitParams{WorkspaceID: ws.ID(), Plan: fixtures.PlanPro, CapabilityID: "tts",
		Config: map[string]any{"script": "Hot coffee for twelve hours."}})
	if err != nil {
		b.Fatal(err)
	}
	clk.Advance(time.Hour)
	s.SetPublicURL("http://127.0.0.1:1")
	req := httptest.NewRequest("GET", "/api/v1/generations/"+sub.GenerationID, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.ReportAllocs()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			s.ServeHTTP(w, req)
		}
	})
	// CPU time, unlike ns/op, barely moves when other processes share the machine.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
