package mock

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/mock/jobs"
	"github.com/mediaspec/mediaspec/mock/ratelimit"
	"github.com/mediaspec/mediaspec/mock/workspace"
)

// load drives GET url with a bearer key from conns keep-alive connections for d and returns the
// answers per second and the 99th percentile latency.
func load(tb testing.TB, url, key string, conns int, d time.Duration) (rps float64, p99 time.Duration) {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			for time.Now().Before(deadline) {
				t := time.Now()
				res, err := client.Do(req)
				if err != nil {
					tb.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					tb.Errorf("status %d", res.StatusCode)
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return float64(len(lat)) / d.Seconds(), lat[len(lat)*99/100]
}

// BenchmarkHTTPGetGeneration serves GET /api/v1/generations/{id} from the mock and the same bytes
// from a bare net/http handler with a bearer check, side by side over loopback at 64
// connections, and reports both rates, their ratio and both p99 latencies. Each b.N is one
// 3-second round of each (make bench-http).
func BenchmarkHTTPGetGeneration(b *testing.B) {
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
	serve := func(h http.Handler) (string, func()) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		return "http://" + ln.Addr().String(), func() { _ = srv.Shutdown(context.Background()) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	mockURL := "http://" + ln.Addr().String() + "/api/v1/generations/" + sub.GenerationID
	// The bare handler serves the very bytes the mock answers.
	res, err := http.DefaultClient.Do(func() *http.Request {
		r, _ := http.NewRequest("GET", mockURL, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		return r
	}())
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	bare, stop := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	}))
	defer stop()
	const conns, round = 64, 3 * time.Second
	var mockRPS, bareRPS float64
	var mockP99, bareP99 time.Duration
	b.ResetTimer()
	for range b.N {
		m, mp := load(b, mockURL, key, conns, round)
		r, rp := load(b, bare+"/api/v1/generations/"+sub.GenerationID, key, conns, round)
		mockRPS, bareRPS, mockP99, bareP99 = mockRPS+m, bareRPS+r, max(mockP99, mp), max(bareP99, rp)
	}
	b.ReportMetric(mockRPS/float64(b.N), "mock-req/s")
	b.ReportMetric(bareRPS/float64(b.N), "bare-req/s")
	b.ReportMetric(mockRPS/bareRPS, "ratio")
	b.ReportMetric(float64(mockP99)/float64(time.Millisecond), "mock-p99-ms")
	b.ReportMetric(float64(bareP99)/float64(time.Millisecond), "bare-p99-ms")
	b.ReportMetric(float64(len(body)), "body-bytes")
}
