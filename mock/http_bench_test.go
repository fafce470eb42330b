package mock

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/httpbench"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// The side-by-side run's load: what the owners measured with, and long enough rounds for
// steady rates on a shared machine.
const (
	httpConns   = 64
	httpThreads = 2
	httpRound   = 5 * time.Second // each side's load in one round
	httpWarm    = 2 * time.Second // each side's load before the rounds, not counted
)

// BenchmarkHTTPGetGeneration measures GET /api/v1/generations/{id} as a user sees it (make
// bench-http): the load comes from wrk, a C program in a process of its own (64 connections, 2
// threads), and each server runs in its own process, built from this tree at run time:
//
//   - mock: `mediaspec mock` with its default options, so each request is logged, to its stderr,
//     which is a file (a real write, as to a terminal or a redirect). It holds one completed
//     generation and a read key whose agent_read bucket never runs out, set up through its API
//     and control API as a user would.
//   - bare: testdata/barehttp, a plain net/http server that checks the bearer key and answers the
//     very bytes of the mock's answer with the same Content-Type and Cache-Control, so mock/bare
//     is the cost of the mock's own work.
//   - Prism mocking the same document, when $PRISM names its executable (never needed in CI).
//
// Every side is warmed for 2 s first. Each b.N is one round: every side in turn for 5 s, the
// order rotating by one each round (mock, bare; bare, mock; ... with Prism: mock, bare, Prism;
// bare, Prism, mock; ...), so a change of the machine's load hits every side alike; make
// bench-http runs 3 rounds (HTTP_ROUNDS=N for more). Rates are answers over seconds of load,
// summed over the rounds. Latencies are pooled: a wrk Lua done() prints each run's latency
// quantiles (every 0.1 %, every 0.01 % above the 99th), each standing for its share of the run's
// answers, and the p50 and p99 are those of every round's answers together (within one grid step
// of any run). Reported: each side's rate, p50 and p99, the mock/bare rate and p99 ratios,
// mock/Prism, each server's CPU time per answer (from /proc/PID/stat; it moves much less with the
// machine's load than the rates do) and the 1-minute load average at the start (before the
// builds) and the end; each round's figures are logged.
//
// Every answer must be a 200: the benchmark fails when wrk counts an answer of status 400 or above
// (a 429 of a spent bucket, say), a socket error or a timeout, or when the bytes read fall short
// of whole 200 answers (answers × the side's 200 with its status line and headers). Without wrk it
// skips, naming the package to install.
func BenchmarkHTTPGetGeneration(b *testing.B) {
	httpbench.NeedWrk(b, "make bench-http")
	loadStart := httpbench.LoadAvg()
	dir := b.TempDir()
	mockBin, bareBin := httpbench.GoBuild(b, dir, "../cmd/mediaspec"), httpbench.GoBuild(b, dir, "./testdata/barehttp")
	mock, key, genID, body := httpbench.HotGeneration(b, dir, mockBin)
	bare := startBare(b, dir, bareBin, key, body, "/api/v1/generations/"+genID)
	sides := []*httpbench.Side{mock, bare}
	prism := startPrism(b, dir, key)
	if prism != nil {
		sides = append(sides, prism)
	}
	load := httpbench.Load{Conns: httpConns, Threads: httpThreads, Script: httpbench.WriteScript(b, dir)}
	for _, s := range sides {
		s.Check(b, httpbench.Wrk(b, load, key, s.URL, httpWarm))
	}
	round := 0
	for b.Loop() {
		httpbench.Round(b, load, key, sides, round, httpRound)
		round++
	}
	ms := httpbench.MS
	b.ReportMetric(mock.Rate(), "mock-req/s")
	b.ReportMetric(bare.Rate(), "bare-req/s")
	b.ReportMetric(mock.Rate()/bare.Rate(), "ratio")
	b.ReportMetric(ms(mock.Pct(50)), "mock-p50-ms")
	b.ReportMetric(ms(bare.Pct(50)), "bare-p50-ms")
	b.ReportMetric(ms(mock.Pct(99)), "mock-p99-ms")
	b.ReportMetric(ms(bare.Pct(99)), "bare-p99-ms")
	b.ReportMetric(float64(mock.Pct(99))/float64(bare.Pct(99)), "p99-ratio")
	b.ReportMetric(httpbench.USPer(mock.CPU, mock.Answers), "mock-cpu-us/req")
	b.ReportMetric(httpbench.USPer(bare.CPU, bare.Answers), "bare-cpu-us/req")
	b.ReportMetric(float64(len(body)), "body-bytes")
	if prism != nil {
		b.ReportMetric(prism.Rate(), "prism-req/s")
		b.ReportMetric(mock.Rate()/prism.Rate(), "mock/prism")
		b.ReportMetric(ms(prism.Pct(50)), "prism-p50-ms")
		b.ReportMetric(ms(prism.Pct(99)), "prism-p99-ms")
		b.ReportMetric(httpbench.USPer(prism.CPU, prism.Answers), "prism-cpu-us/req")
	}
	httpbench.ReportLoad(b, loadStart, httpbench.LoadAvg())
}

// startBare starts testdata/barehttp serving body for key and returns its side at path; it is
// killed at the end of b.
func startBare(b *testing.B, dir, bin, key string, body []byte, path string) *httpbench.Side {
	b.Helper()
	bodyFile := filepath.Join(dir, "answer.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "-key", key, "-body", bodyFile)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the bare server's start line: %v", err)
	}
	side := &httpbench.Side{Name: "bare", URL: strings.TrimSpace(base) + path, PID: cmd.Process.Pid}
	var got []byte
	side.Size, got = httpbench.Probe(b, side.URL, key)
	if !bytes.Equal(got, body) {
		b.Fatalf("the bare server answered other bytes than the mock:\n%s\n%s", got, body)
	}
	return side
}

// startPrism starts Prism mocking the REST description on a free loopback port when $PRISM names
// its executable (e.g. node_modules/.bin/prism of an npm install of @stoplight/prism-cli outside
// the repository), and returns its side: GET /generations/{id} on it; nil without $PRISM. Prism
// runs as a user starts it (default options, its log written to a file) and is killed at the end
// of b.
func startPrism(b *testing.B, dir, key string) *httpbench.Side {
	b.Helper()
	bin := os.Getenv("PRISM")
	if bin == "" {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close()
	logFile, err := os.Create(filepath.Join(dir, "prism.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "mock", "-h", "127.0.0.1", "-p", port, filepath.Join("..", "spec", "openapi.yaml"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("PRISM=%s: %v", bin, err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	// Prism prints "Prism is listening on http://..." once it serves; every line of its log goes to
	// the file (a pipe nobody reads would stall it).
	listening := make(chan struct{})
	go func() {
		said := false
		for sc := bufio.NewScanner(out); sc.Scan(); {
			_, _ = logFile.Write(append(sc.Bytes(), '\n'))
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
	// Prism serves the document's paths at its root (it does not apply the servers' /api/v1), and
	// answers the document's example whatever the id.
	side := &httpbench.Side{Name: "prism", URL: "http://127.0.0.1:" + port + "/generations/gen_0", PID: cmd.Process.Pid}
	side.Size, _ = httpbench.Probe(b, side.URL, key)
	return side
}

// hotGeneration starts a mock (closed at the end of tb) holding one completed generation and a
// read key whose agent_read bucket never runs out, for the benchmarks of GET /generations/{id}.
// With logged, it logs each request as `mediaspec mock` does by default: a text line each, by the
// command's handler (NewTextLogHandler, not slog's general text handler), through a reqlog.Writer,
// to a file (a real write, as to a terminal or a redirected stderr).
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
		cfg.Logger, cfg.LogRequests = slog.New(NewTextLogHandler(w, nil)), true
	}
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	ws, _ := s.svc.Registry.Get(s.DefaultWorkspaceID())
	_, key, err = s.svc.Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead}, Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 1 << 30},
	})
	if err != nil {
		tb.Fatal(err)
	}
	sub, err := s.svc.Jobs.Submit(jobs.SubmitParams{WorkspaceID: ws.ID(), Plan: fixtures.PlanPro, CapabilityID: "tts",
		Config: map[string]any{"script": "Hot coffee for twelve hours."}})
	if err != nil {
		tb.Fatal(err)
	}
	clk.Advance(time.Hour)
	return s, key, sub.GenerationID
}
