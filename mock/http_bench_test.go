package mock

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
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
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Skip("wrk is not installed (apt-get install -y wrk): make bench-http drives its load from wrk in a process of its own")
	}
	loadStart := loadAvg()
	dir := b.TempDir()
	mockBin, bareBin := goBuild(b, dir, "../cmd/mediaspec"), goBuild(b, dir, "./testdata/barehttp")
	mock, key, genID, body := startMockBinary(b, dir, mockBin)
	bare := startBare(b, dir, bareBin, key, body, "/api/v1/generations/"+genID)
	sides := []*httpSide{mock, bare}
	prism := startPrism(b, dir, key)
	if prism != nil {
		sides = append(sides, prism)
	}
	script := filepath.Join(dir, "done.lua")
	if err := os.WriteFile(script, []byte(wrkDone), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, s := range sides {
		s.check(b, runWrk(b, script, key, s.url, httpWarm))
	}
	round := 0
	for b.Loop() {
		for i := range sides {
			s := sides[(round+i)%len(sides)]
			cpu0 := processCPUOf(s.pid)
			r := runWrk(b, script, key, s.url, httpRound)
			cpu := processCPUOf(s.pid) - cpu0
			s.check(b, r)
			s.add(r, cpu)
			b.Logf("round %d %-5s %9.0f answers/s  p50 %6.2f ms  p99 %6.2f ms  %5.1f µs CPU/answer", round+1, s.name,
				float64(r.answers)/r.busy.Seconds(), ms(pct(r.lat, 50)), ms(pct(r.lat, 99)), usPer(cpu, r.answers))
		}
		round++
	}
	loadEnd := loadAvg()
	b.Logf("load average (1, 5, 15 min) at start %s, at end %s", loadStart, loadEnd)
	b.ReportMetric(mock.rate(), "mock-req/s")
	b.ReportMetric(bare.rate(), "bare-req/s")
	b.ReportMetric(mock.rate()/bare.rate(), "ratio")
	b.ReportMetric(ms(mock.pct(50)), "mock-p50-ms")
	b.ReportMetric(ms(bare.pct(50)), "bare-p50-ms")
	b.ReportMetric(ms(mock.pct(99)), "mock-p99-ms")
	b.ReportMetric(ms(bare.pct(99)), "bare-p99-ms")
	b.ReportMetric(float64(mock.pct(99))/float64(bare.pct(99)), "p99-ratio")
	b.ReportMetric(usPer(mock.cpu, mock.answers), "mock-cpu-us/req")
	b.ReportMetric(usPer(bare.cpu, bare.answers), "bare-cpu-us/req")
	b.ReportMetric(float64(len(body)), "body-bytes")
	if prism != nil {
		b.ReportMetric(prism.rate(), "prism-req/s")
		b.ReportMetric(mock.rate()/prism.rate(), "mock/prism")
		b.ReportMetric(ms(prism.pct(50)), "prism-p50-ms")
		b.ReportMetric(ms(prism.pct(99)), "prism-p99-ms")
		b.ReportMetric(usPer(prism.cpu, prism.answers), "prism-cpu-us/req")
	}
	if l, ok := load1(loadStart); ok {
		b.ReportMetric(l, "load1-start")
	}
	if l, ok := load1(loadEnd); ok {
		b.ReportMetric(l, "load1-end")
	}
}

// wrkDone is the wrk script of every run: at its end it prints the run's totals and its latency
// quantiles, at every 0.1 % up to the 99th and every 0.01 % above (the step, then the latency in
// µs), which the benchmark pools over the rounds. (wrk's Lua API reads its histogram only through
// percentile(p) or the i-th distinct value, each a scan from the smallest; a dump of every value
// took seconds per run at loaded-machine tails, the grid a few milliseconds.)
const wrkDone = `function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("mediaspec-total %d %d %d %d %d %d %d %d\n", summary.requests,
    summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, 990 do
    io.write(string.format("mediaspec-quantile 0.1 %d\n", latency:percentile(i / 10)))
  end
  for i = 1, 100 do
    io.write(string.format("mediaspec-quantile 0.01 %d\n", latency:percentile(99 + i / 100)))
  end
end
`

// wrkRun is what one wrk run measured.
type wrkRun struct {
	answers, bytes int64
	busy           time.Duration
	errs           [5]int64 // connect, read, write, status 400 or above, timeout
	lat            []quantile
}

// runWrk runs wrk against url with the bearer key for d and reads what the script printed.
func runWrk(b *testing.B, script, key, url string, d time.Duration) wrkRun {
	b.Helper()
	cmd := exec.Command("wrk", "-t", strconv.Itoa(httpThreads), "-c", strconv.Itoa(httpConns), "-d", d.String(),
		"--timeout", "10s", "-s", script, "-H", "Authorization: Bearer "+key, url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("wrk %s: %v\n%s%s", url, err, out, stderr.Bytes())
	}
	var r wrkRun
	total := false
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		n := make([]int64, len(f)-1)
		for i := range n {
			n[i], _ = strconv.ParseInt(f[i+1], 10, 64)
		}
		switch {
		case f[0] == "mediaspec-total" && len(n) == 8:
			r.answers, r.busy, r.bytes = n[0], time.Duration(n[1])*time.Microsecond, n[2]
			copy(r.errs[:], n[3:])
			total = true
		case f[0] == "mediaspec-quantile" && len(f) == 3:
			step, _ := strconv.ParseFloat(f[1], 64)
			r.lat = append(r.lat, quantile{time.Duration(n[1]) * time.Microsecond, step / 100})
		}
	}
	if !total || r.busy <= 0 || len(r.lat) == 0 {
		b.Fatalf("wrk %s printed no totals or no latencies:\n%s", url, out)
	}
	for i := range r.lat {
		r.lat[i].answers *= float64(r.answers)
	}
	return r
}

// httpSide is one server of the side-by-side run and what wrk measured of it over the rounds.
type httpSide struct {
	name    string
	url     string
	pid     int   // the server's process, for its CPU time
	size    int64 // bytes of its 200 answer, status line and headers included
	answers int64
	busy    time.Duration
	cpu     time.Duration
	lat     []quantile // every round's
}

// check fails b unless every answer of r was a 200 (see BenchmarkHTTPGetGeneration).
func (s *httpSide) check(b *testing.B, r wrkRun) {
	b.Helper()
	if e := r.errs; e != [5]int64{} {
		b.Fatalf("%s: of %d answers, wrk counted %d of status 400 or above, %d connect, %d read and %d write errors and %d timeouts; every answer must be a 200",
			s.name, r.answers, e[3], e[0], e[1], e[2], e[4])
	}
	if r.answers == 0 || r.bytes < r.answers*s.size {
		b.Fatalf("%s: %d bytes read for %d answers, short of whole %d-byte 200 answers; every answer must be a 200", s.name, r.bytes, r.answers, s.size)
	}
}

func (s *httpSide) add(r wrkRun, cpu time.Duration) {
	s.answers += r.answers
	s.busy += r.busy
	s.cpu += cpu
	s.lat = append(s.lat, r.lat...)
}

func (s *httpSide) rate() float64 { return float64(s.answers) / s.busy.Seconds() }

func (s *httpSide) pct(p float64) time.Duration { return pct(s.lat, p) }

// quantile is one point of a run's latency distribution: a latency and the answers it stands for
// (the run's answers times the step of the quantile grid).
type quantile struct {
	lat     time.Duration
	answers float64
}

// pct is the p-th percentile (p in 0..100) of the answers qs stand for together.
func pct(qs []quantile, p float64) time.Duration {
	qs = slices.SortedFunc(slices.Values(qs), func(a, b quantile) int { return cmp.Compare(a.lat, b.lat) })
	var total, seen float64
	for _, q := range qs {
		total += q.answers
	}
	for _, q := range qs {
		if seen += q.answers; seen >= p/100*total*(1-1e-9) {
			return q.lat
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// usPer is cpu per answer in microseconds (0 when either is unknown).
func usPer(cpu time.Duration, answers int64) float64 {
	if answers == 0 {
		return 0
	}
	return float64(cpu) / float64(time.Microsecond) / float64(answers)
}

// goBuild builds the command in pkg (a directory relative to this package) into dir.
func goBuild(b *testing.B, dir, pkg string) string {
	b.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// startMockBinary starts `mediaspec mock` as a user does (only --addr and --json added, to take a
// free port and read its start line), its request log going to a file, and sets up a completed
// generation and a read key whose agent_read bucket never runs out. It returns the mock's side,
// the key, the generation's id and the body of its answer. The mock is killed at the end of b.
func startMockBinary(b *testing.B, dir, bin string) (side *httpSide, key, genID string, body []byte) {
	b.Helper()
	logFile, err := os.Create(filepath.Join(dir, "mock-stderr.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "mock", "--addr", "127.0.0.1:0", "--json")
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	var info StartInfo
	if err := json.NewDecoder(out).Decode(&info); err != nil {
		b.Fatalf("the mock's start line: %v", err)
	}
	var sub struct {
		GenerationID string `json:"generation_id"`
	}
	post(b, info.BaseURL+"/generations", info.GenerateKey,
		`{"capability_id":"tts","max_credits":1000,"config":{"script":"Hot coffee for twelve hours."}}`, &sub)
	post(b, info.ControlURL+"/clock/advance", info.ControlToken, `{"seconds":3600}`, nil)
	var k struct {
		Key string `json:"key"`
	}
	post(b, info.ControlURL+"/workspaces/"+info.DefaultWorkspaceID+"/keys", info.ControlToken,
		`{"scopes":["read"],"buckets":{"agent_read":1000000000}}`, &k)
	side = &httpSide{name: "mock", url: info.BaseURL + "/generations/" + sub.GenerationID, pid: cmd.Process.Pid}
	side.size, body = probe(b, side.url, k.Key)
	if !bytes.Contains(body, []byte(`"status":"completed"`)) {
		b.Fatalf("the generation is not completed an hour on: %s", body)
	}
	return side, k.Key, sub.GenerationID, body
}

// post sends body to url with the bearer token (and an Idempotency-Key, which generations need)
// and decodes the answer into v unless v is nil; anything but a 2xx fails b.
func post(b *testing.B, url, token, body string, v any) {
	b.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "bench-http-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		b.Fatalf("POST %s answered %d: %s", url, res.StatusCode, got)
	}
	if v != nil {
		if err := json.Unmarshal(got, v); err != nil {
			b.Fatalf("POST %s: %v: %s", url, err, got)
		}
	}
}

// probe sends GET url with the bearer key over a connection of its own, as wrk sends it, and
// returns the answer's whole size on the wire (status line, headers, body) and its body; anything
// but a 200 fails b.
func probe(b *testing.B, url, key string) (size int64, body []byte) {
	b.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", u.RequestURI(), u.Host, key); err != nil {
		b.Fatal(err)
	}
	cr := &countingReader{r: conn}
	res, err := http.ReadResponse(bufio.NewReader(cr), nil)
	if err != nil {
		b.Fatal(err)
	}
	body, err = io.ReadAll(res.Body)
	if err != nil {
		b.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s answered %d: %s", url, res.StatusCode, body)
	}
	return cr.n, body
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// startBare starts testdata/barehttp serving body for key and returns its side at path; it is
// killed at the end of b.
func startBare(b *testing.B, dir, bin, key string, body []byte, path string) *httpSide {
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
	side := &httpSide{name: "bare", url: strings.TrimSpace(base) + path, pid: cmd.Process.Pid}
	var got []byte
	side.size, got = probe(b, side.url, key)
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
func startPrism(b *testing.B, dir, key string) *httpSide {
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
	side := &httpSide{name: "prism", url: "http://127.0.0.1:" + port + "/generations/gen_0", pid: cmd.Process.Pid}
	side.size, _ = probe(b, side.url, key)
	return side
}

// processCPUOf is the CPU time (user and system) process pid has used, from /proc/PID/stat (0
// where there is no /proc).
func processCPUOf(pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// After the command name in parentheses: field 3 (state) onwards; utime and stime are fields
	// 14 and 15, in clock ticks of 1/100 s (USER_HZ).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes ("" where there is no /proc).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func load1(avg string) (float64, bool) {
	f := strings.Fields(avg)
	if len(f) == 0 {
		return 0, false
	}
	l, err := strconv.ParseFloat(f[0], 64)
	return l, err == nil
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
