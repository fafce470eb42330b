package mock

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// loadSide is one side of the side-by-side run: its URL, its own keep-alive client (so its
// connections stay open and warm across slices) and the answers it got.
type loadSide struct {
	url    string
	client *http.Client
	tr     *http.Transport
	lat    []time.Duration // every answer's latency, over every slice
	busy   time.Duration   // total time under load
}

func newLoadSide(url string, conns int) *loadSide {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	return &loadSide{url: url, tr: tr, client: &http.Client{Transport: tr}}
}

// run drives GET url with a bearer key from conns keep-alive connections for d. With keep false
// it only warms (opens the connections, fills caches) and records nothing.
func (ls *loadSide) run(tb testing.TB, key string, conns int, d time.Duration, keep bool) {
	tb.Helper()
	var mu sync.Mutex
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 1024)
			req, _ := http.NewRequest("GET", ls.url, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			for time.Now().Before(deadline) {
				t := time.Now()
				res, err := ls.client.Do(req)
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
			if keep {
				mu.Lock()
				ls.lat = append(ls.lat, mine...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if keep {
		ls.busy += time.Since(start)
	}
}

// rate is answers per second under load; pct the p-th percentile latency (p in 0..100).
func (ls *loadSide) rate() float64 { return float64(len(ls.lat)) / ls.busy.Seconds() }

func (ls *loadSide) pct(p int) time.Duration {
	if len(ls.lat) == 0 {
		return 0
	}
	slices.Sort(ls.lat)
	return ls.lat[min(len(ls.lat)*p/100, len(ls.lat)-1)]
}

// hotGeneration starts a mock (closed at the end of tb) holding one completed generation and a
// read key whose agent_read bucket never runs out, for the benchmarks of GET /generations/{id}.
// With logged, it logs each request as `mediaspec mock` does by default: a text line each, through
// a reqlog.Writer, to a file (a real write, as to a terminal or a redirected stderr).
func hotGeneration(tb testing.TB, logged bool) (s *Server, key, generationID string) {
	tb.Helper()
	clk := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	cfg := Config{Seed: 1, Clock: clk, Logger: slog.New(slog.DiscardHandler), NoControl: true}
	if logged {
		f, err := os.Create(filepath.Join(tb.TempDir(), "requests.log"))
		if err != nil {
			tb.Fatal(err)
		}
		w := reqlog.NewWriter(f)
		tb.Cleanup(func() { _ = w.Close(); _ = f.Close() })
		cfg.Logger, cfg.LogRequests = slog.New(slog.NewTextHandler(w, nil)), true
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	ws, _ := s.Registry.Get(s.DefaultWorkspaceID())
	_, key, err = s.Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead}, Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 1 << 30},
	})
	if err != nil {
		tb.Fatal(err)
	}
	sub, err := s.Jobs.Submit(jobs.SubmitParams{WorkspaceID: ws.ID(), Plan: fixtures.PlanPro, CapabilityID: "tts",
		Config: map[string]any{"script": "Hot coffee for twelve hours."}})
	if err != nil {
		tb.Fatal(err)
	}
	clk.Advance(time.Hour)
	return s, key, sub.GenerationID
}

// startPrism starts Prism mocking the REST description on a free loopback port when $PRISM names
// its executable (e.g. node_modules/.bin/prism of an npm install of @stoplight/prism-cli outside
// the repository), and returns the URL of GET /generations/{id} on it; "" without $PRISM. Prism
// runs as a user starts it (default options, its log discarded) and is killed at the end of b.
func startPrism(b *testing.B, genID string) string {
	bin := os.Getenv("PRISM")
	if bin == "" {
		return ""
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	cmd := exec.Command(bin, "mock", "-h", "127.0.0.1", "-p", port, filepath.Join("..", "spec", "openapi.yaml"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("PRISM=%s: %v", bin, err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Prism prints "Prism is listening on http://..." once it serves; its log is read to the end
	// and dropped (a pipe nobody reads would stall it).
	listening := make(chan struct{})
	go func() {
		said := false
		for sc := bufio.NewScanner(out); sc.Scan(); {
			if !said && strings.Contains(sc.Text(), "Prism is listening on") {
				close(listening)
				said = true
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(time.Minute):
		b.Fatal("Prism did not say it was listening within a minute")
	}
	// Prism serves the document's paths at its root (it does not apply the servers' /api/v1).
	url := "http://127.0.0.1:" + port + "/generations/" + genID
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer x")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Fatalf("Prism answered GET /generations/{id} with %d", res.StatusCode)
	}
	return url
}

// BenchmarkHTTPGetGeneration serves GET /api/v1/generations/{id} from the mock and the same bytes
// from a bare net/http handler with a bearer check, side by side over loopback at 64
// connections, and reports both rates, their ratio, both p50 and p99 latencies and the p99
// ratio. Each b.N is 3 seconds of load on each side (make bench-http). With $PRISM (the path of
// Prism's executable; never needed in CI) Prism mocking the same document is a third side, and the
// mock/Prism rate ratio is reported too.
//
// To be fair on a shared machine, every side has its own warmed keep-alive client with the same
// connection count, and each b.N runs in short slices whose order rotates (mock, bare; bare,
// mock; ... with Prism: mock, bare, Prism; bare, Prism, mock; ...), so a change of machine load
// hits every side alike; rates and percentiles pool every slice.
func BenchmarkHTTPGetGeneration(b *testing.B) {
	s, key, genID := hotGeneration(b, true) // as `mediaspec mock` serves by default: each request logged
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	path := "/api/v1/generations/" + genID
	mockURL := "http://" + ln.Addr().String() + path
	// The bare handler serves the very bytes and headers the mock answers.
	req, _ := http.NewRequest("GET", mockURL, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("mock answered %d: %s", res.StatusCode, body)
	}
	bareLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bareSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	})}
	go func() { _ = bareSrv.Serve(bareLn) }()
	defer func() { _ = bareSrv.Shutdown(context.Background()) }()

	const conns, round, pairs = 64, 3 * time.Second, 6
	mock, bare := newLoadSide(mockURL, conns), newLoadSide("http://"+bareLn.Addr().String()+path, conns)
	sides := []*loadSide{mock, bare}
	var prism *loadSide
	if u := startPrism(b, genID); u != "" {
		prism = newLoadSide(u, conns)
		sides = append(sides, prism)
	}
	for _, side := range sides {
		defer side.tr.CloseIdleConnections()
		side.run(b, key, conns, 300*time.Millisecond, false)
	}
	b.ResetTimer()
	slice, k := round/pairs, 0
	for range b.N {
		for range pairs {
			for i := range sides {
				sides[(k+i)%len(sides)].run(b, key, conns, slice, true)
			}
			k++
		}
	}
	b.StopTimer()
	b.ReportMetric(mock.rate(), "mock-req/s")
	b.ReportMetric(bare.rate(), "bare-req/s")
	b.ReportMetric(mock.rate()/bare.rate(), "ratio")
	b.ReportMetric(float64(mock.pct(50))/float64(time.Millisecond), "mock-p50-ms")
	b.ReportMetric(float64(bare.pct(50))/float64(time.Millisecond), "bare-p50-ms")
	b.ReportMetric(float64(mock.pct(99))/float64(time.Millisecond), "mock-p99-ms")
	b.ReportMetric(float64(bare.pct(99))/float64(time.Millisecond), "bare-p99-ms")
	b.ReportMetric(float64(mock.pct(99))/float64(bare.pct(99)), "p99-ratio")
	b.ReportMetric(float64(len(body)), "body-bytes")
	if prism != nil {
		b.ReportMetric(prism.rate(), "prism-req/s")
		b.ReportMetric(mock.rate()/prism.rate(), "mock/prism")
		b.ReportMetric(float64(prism.pct(50))/float64(time.Millisecond), "prism-p50-ms")
		b.ReportMetric(float64(prism.pct(99))/float64(time.Millisecond), "prism-p99-ms")
	}
}
