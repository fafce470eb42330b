// Package httpbench is the side-by-side HTTP load harness of the module's wrk benchmarks (make
// bench, make bench-http): the load comes from wrk, a C program in a process of its own, against
// servers each in a process of its own, and every side's figures are pooled over alternating
// rounds, so a change of the machine's load hits every side alike.
package httpbench

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
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
)

// NeedWrk skips b unless wrk is installed, naming the package to install.
func NeedWrk(b *testing.B, target string) {
	b.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Skipf("wrk is not installed (apt-get install -y wrk): %s drives its load from wrk in a process of its own", target)
	}
}

// doneScript is the wrk script of every run: at its end it prints the run's totals and its latency
// quantiles, at every 0.1 % up to the 99th and every 0.01 % above (the step, then the latency in
// µs), which the benchmarks pool over the rounds. (wrk's Lua API reads its histogram only through
// percentile(p) or the i-th distinct value, each a scan from the smallest; a dump of every value
// took seconds per run at loaded-machine tails, the grid a few milliseconds.)
const doneScript = `function done(summary, latency, requests)
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

// Load is how wrk loads a side.
type Load struct {
	Conns, Threads int
	Script         string // the done() script, from WriteScript
}

// WriteScript writes the wrk script into dir and returns its path.
func WriteScript(b *testing.B, dir string) string {
	b.Helper()
	script := filepath.Join(dir, "done.lua")
	if err := os.WriteFile(script, []byte(doneScript), 0o600); err != nil {
		b.Fatal(err)
	}
	return script
}

// Run is what one wrk run measured.
type Run struct {
	Answers, Bytes int64
	Busy           time.Duration
	Errs           [5]int64 // connect, read, write, status 400 or above, timeout
	Lat            []Quantile
}

// Wrk runs wrk against url with the bearer key for d and reads what the script printed.
func Wrk(b *testing.B, l Load, key, url string, d time.Duration) Run {
	b.Helper()
	cmd := exec.Command("wrk", "-t", strconv.Itoa(l.Threads), "-c", strconv.Itoa(l.Conns), "-d", d.String(),
		"--timeout", "10s", "-s", l.Script, "-H", "Authorization: Bearer "+key, url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("wrk %s: %v\n%s%s", url, err, out, stderr.Bytes())
	}
	var r Run
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
			r.Answers, r.Busy, r.Bytes = n[0], time.Duration(n[1])*time.Microsecond, n[2]
			copy(r.Errs[:], n[3:])
			total = true
		case f[0] == "mediaspec-quantile" && len(f) == 3:
			step, _ := strconv.ParseFloat(f[1], 64)
			r.Lat = append(r.Lat, Quantile{time.Duration(n[1]) * time.Microsecond, step / 100})
		}
	}
	if !total || r.Busy <= 0 || len(r.Lat) == 0 {
		b.Fatalf("wrk %s printed no totals or no latencies:\n%s", url, out)
	}
	for i := range r.Lat {
		r.Lat[i].Answers *= float64(r.Answers)
	}
	return r
}

// Side is one server of a side-by-side run and what wrk measured of it over the rounds.
type Side struct {
	Name    string
	URL     string
	PID     int   // the server's process, for its CPU time (0: not counted)
	Size    int64 // bytes of its 200 answer, status line and headers included
	Answers int64
	Busy    time.Duration
	CPU     time.Duration
	Lat     []Quantile // every round's
}

// Check fails b unless every answer of r was a 200 of the side's size.
func (s *Side) Check(b *testing.B, r Run) {
	b.Helper()
	if e := r.Errs; e != [5]int64{} {
		b.Fatalf("%s: of %d answers, wrk counted %d of status 400 or above, %d connect, %d read and %d write errors and %d timeouts; every answer must be a 200",
			s.Name, r.Answers, e[3], e[0], e[1], e[2], e[4])
	}
	if r.Answers == 0 || r.Bytes < r.Answers*s.Size {
		b.Fatalf("%s: %d bytes read for %d answers, short of whole %d-byte 200 answers; every answer must be a 200", s.Name, r.Bytes, r.Answers, s.Size)
	}
}

// Add pools r (and the server's CPU time over it) into the side.
func (s *Side) Add(r Run, cpu time.Duration) {
	s.Answers += r.Answers
	s.Busy += r.Busy
	s.CPU += cpu
	s.Lat = append(s.Lat, r.Lat...)
}

// Rate is the side's answers per second of load over every round.
func (s *Side) Rate() float64 { return float64(s.Answers) / s.Busy.Seconds() }

// Pct is the p-th percentile of every round's answers together.
func (s *Side) Pct(p float64) time.Duration { return Pct(s.Lat, p) }

// Round runs wrk against each side in turn for d, the order rotating by one each round (round
// counts from 0), checks every answer and pools the figures; each run is logged.
func Round(b *testing.B, l Load, key string, sides []*Side, round int, d time.Duration) {
	b.Helper()
	for i := range sides {
		s := sides[(round+i)%len(sides)]
		cpu0 := ProcessCPU(s.PID)
		r := Wrk(b, l, key, s.URL, d)
		cpu := ProcessCPU(s.PID) - cpu0
		s.Check(b, r)
		s.Add(r, cpu)
		b.Logf("round %d %-5s %9.0f answers/s  p50 %6.2f ms  p99 %6.2f ms  %5.1f µs CPU/answer", round+1, s.Name,
			float64(r.Answers)/r.Busy.Seconds(), MS(Pct(r.Lat, 50)), MS(Pct(r.Lat, 99)), USPer(cpu, r.Answers))
	}
}

// Quantile is one point of a run's latency distribution: a latency and the answers it stands for
// (the run's answers times the step of the quantile grid).
type Quantile struct {
	Lat     time.Duration
	Answers float64
}

// Pct is the p-th percentile (p in 0..100) of the answers qs stand for together.
func Pct(qs []Quantile, p float64) time.Duration {
	qs = slices.SortedFunc(slices.Values(qs), func(a, b Quantile) int { return cmp.Compare(a.Lat, b.Lat) })
	var total, seen float64
	for _, q := range qs {
		total += q.Answers
	}
	for _, q := range qs {
		if seen += q.Answers; seen >= p/100*total*(1-1e-9) {
			return q.Lat
		}
	}
	return 0
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// USPer is cpu per answer in microseconds (0 when either is unknown).
func USPer(cpu time.Duration, answers int64) float64 {
	if answers == 0 {
		return 0
	}
	return float64(cpu) / float64(time.Microsecond) / float64(answers)
}

// GoBuild builds the command in pkg (a directory relative to the calling test's package) into dir.
func GoBuild(b *testing.B, dir, pkg string) string {
	b.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Start starts cmd with its stderr going to the file dir/name.log, decodes the JSON start line it
// prints on stdout into info, and kills it at the end of b.
func Start(b *testing.B, cmd *exec.Cmd, dir, name string, info any) {
	b.Helper()
	logFile, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logFile.Close() })
	if err := json.NewDecoder(out).Decode(info); err != nil {
		b.Fatalf("%s's start line: %v", name, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
}

// MockInfo is what the benchmarks read of `mediaspec mock --json`'s start line.
type MockInfo struct {
	BaseURL            string `json:"base_url"`
	GenerateKey        string `json:"generate_key"`
	ControlURL         string `json:"control_url"`
	ControlToken       string `json:"control_token"`
	DefaultWorkspaceID string `json:"default_workspace_id"`
}

// HotGeneration starts `mediaspec mock` (bin) as a user does (only --addr and --json added, to take
// a free port and read its start line), its request log going to a file, and sets up a completed
// generation and a read key whose agent_read bucket never runs out. It returns the mock's side (GET
// of that generation), the key, the generation's id and the body of its answer. The mock is killed
// at the end of b.
func HotGeneration(b *testing.B, dir, bin string) (side *Side, key, genID string, body []byte) {
	b.Helper()
	cmd := exec.Command(bin, "mock", "--addr", "127.0.0.1:0", "--json")
	var info MockInfo
	Start(b, cmd, dir, "mock", &info)
	var sub struct {
		GenerationID string `json:"generation_id"`
	}
	Post(b, info.BaseURL+"/generations", info.GenerateKey,
		`{"capability_id":"tts","max_credits":1000,"config":{"script":"Hot coffee for twelve hours."}}`, &sub)
	Post(b, info.ControlURL+"/clock/advance", info.ControlToken, `{"seconds":3600}`, nil)
	var k struct {
		Key string `json:"key"`
	}
	Post(b, info.ControlURL+"/workspaces/"+info.DefaultWorkspaceID+"/keys", info.ControlToken,
		`{"scopes":["read"],"buckets":{"agent_read":1000000000}}`, &k)
	side = &Side{Name: "mock", URL: info.BaseURL + "/generations/" + sub.GenerationID, PID: cmd.Process.Pid}
	side.Size, body = Probe(b, side.URL, k.Key)
	if !bytes.Contains(body, []byte(`"status":"completed"`)) {
		b.Fatalf("the generation is not completed an hour on: %s", body)
	}
	return side, k.Key, sub.GenerationID, body
}

// Post sends body to url with the bearer token (and an Idempotency-Key, which generations need)
// and decodes the answer into v unless v is nil; anything but a 2xx fails b.
func Post(b *testing.B, url, token, body string, v any) {
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

// Get sends GET url with the bearer token and decodes the answer into v; anything but a 200 fails
// b.
func Get(b *testing.B, url, token string, v any) {
	b.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s answered %d: %s", url, res.StatusCode, got)
	}
	if err := json.Unmarshal(got, v); err != nil {
		b.Fatalf("GET %s: %v: %s", url, err, got)
	}
}

// Probe sends GET url with the bearer key over a connection of its own, as wrk sends it, and
// returns the answer's whole size on the wire (status line, headers, body) and its body; anything
// but a 200 fails b.
func Probe(b *testing.B, url, key string) (size int64, body []byte) {
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

// ProcessCPU is the CPU time (user and system) process pid has used, from /proc/PID/stat (0 where
// there is no /proc, or for pid 0).
func ProcessCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
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

// LoadAvg is the machine's load average over 1, 5 and 15 minutes ("" where there is no /proc).
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// Load1 is the 1-minute figure of a LoadAvg.
func Load1(avg string) (float64, bool) {
	f := strings.Fields(avg)
	if len(f) == 0 {
		return 0, false
	}
	l, err := strconv.ParseFloat(f[0], 64)
	return l, err == nil
}

// ReportLoad reports the 1-minute load average at the start and the end of the run (load1-start,
// load1-end) and logs all three figures.
func ReportLoad(b *testing.B, start, end string) {
	b.Logf("load average (1, 5, 15 min) at start %s, at end %s", start, end)
	if l, ok := Load1(start); ok {
		b.ReportMetric(l, "load1-start")
	}
	if l, ok := Load1(end); ok {
		b.ReportMetric(l, "load1-end")
	}
}
