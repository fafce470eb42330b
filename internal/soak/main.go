// Command soak runs the built mock binary on 127.0.0.1 under a bounded mix of hostile traffic and
// fails when the mock misbehaves under it (issue 24). In order:
//
//  1. a bad-input corpus over every operation (each valid JSON body cut at every offset, wrong
//     types, deep nesting, bodies over the limit, bad media types, junk ids and query values, and
//     raw requests net/http cannot parse), sent while slow clients trickle header bytes and idle
//     keep-alive clients hold more connections than --max-conns allows;
//  2. a ledger storm: workers estimating and submitting in several workspaces while faults are
//     queued through the control API, then every generation settled;
//  3. the pending-upload limit filled with abandoned 100 MB uploads, and one finalized.
//
// It asserts: every request is answered within -answer-within (no hang), every refusal is the
// error envelope, no answer is a 5xx except the documented codes of the faults the storm queued,
// each workspace's ledger is exact (balance = start - the sum of credits_charged, nothing held),
// and the mock's peak resident set stays under the ceiling docs/mock-limits.md documents. Every
// loop is bounded in count and time; all traffic goes to 127.0.0.1. make soak runs it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type config struct {
	bin          string
	storm        time.Duration
	answerWithin time.Duration
	uploadLimit  int64
	baseCeiling  int64
	total        time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.bin, "bin", "bin/mediaspec", "the mediaspec binary to soak")
	fs.DurationVar(&c.storm, "storm", 30*time.Second, "how long the ledger storm runs")
	fs.DurationVar(&c.answerWithin, "answer-within", 2*time.Second, "the longest any request may wait for its answer")
	fs.Int64Var(&c.uploadLimit, "upload-bytes-limit", 256<<20, "the mock's --upload-bytes-limit")
	fs.Int64Var(&c.baseCeiling, "base-ceiling", 128<<20, "the documented working set: the resident ceiling is this plus the upload limit")
	fs.DurationVar(&c.total, "timeout", 3*time.Minute, "the whole run's bound")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.total)
	defer cancel()
	m, err := startMock(ctx, c)
	if err != nil {
		return err
	}
	defer m.stop()
	s := &soak{c: c, m: m, out: out, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	start := time.Now()
	if err := s.setup(ctx); err != nil {
		return err
	}
	// Slow and idle clients hold connections through the corpus and the storm.
	stop := make(chan struct{})
	var bg sync.WaitGroup
	s.slowAndIdleClients(ctx, stop, &bg)
	s.phase(ctx, "bad input (slow and idle clients)", s.badInput)
	s.phase(ctx, "ledger storm with faults (same)", s.ledgerStorm)
	close(stop)
	bg.Wait()
	s.phase(ctx, "pending-upload limit filled", s.fillUploads)
	hwm, rss := m.memory()
	ceiling := c.baseCeiling + c.uploadLimit
	fmt.Fprintf(out, "soak: %d requests in %s; slowest answer %s; %d 5xx (all documented fault codes); peak RSS %d MiB, now %d MiB (ceiling %d MiB = %d MiB + the %d MiB upload limit)\n",
		s.requests.Load(), time.Since(start).Round(time.Second), time.Duration(s.slowest.Load()).Round(time.Millisecond), s.fiveXX.Load(),
		hwm>>20, rss>>20, ceiling>>20, c.baseCeiling>>20, c.uploadLimit>>20)
	if hwm > ceiling {
		s.fail("peak resident set %d MiB is over the ceiling %d MiB", hwm>>20, ceiling>>20)
	}
	if m.exited() {
		s.fail("the mock exited during the soak")
	}
	if len(s.failures) > 0 {
		for _, f := range s.failures[:min(len(s.failures), 40)] {
			fmt.Fprintln(out, "FAIL:", f)
		}
		return fmt.Errorf("%d failures", len(s.failures))
	}
	fmt.Fprintln(out, "soak: ok")
	return nil
}

// mockProc is the mock binary serving on 127.0.0.1.
type mockProc struct {
	cmd  *exec.Cmd
	info struct {
		BaseURL      string `json:"base_url"`
		GenerateKey  string `json:"generate_key"`
		ReadKey      string `json:"read_key"`
		ControlURL   string `json:"control_url"`
		ControlToken string `json:"control_token"`
		Workspace    string `json:"default_workspace_id"`
	}
	done chan struct{}
	addr string
}

func startMock(ctx context.Context, c config) (*mockProc, error) {
	cmd := exec.CommandContext(ctx, c.bin, "mock", "--addr", "127.0.0.1:0", "--json", "--quiet", "--seed", "24",
		"--time-scale", "50", "--upload-bytes-limit", strconv.FormatInt(c.uploadLimit, 10), "--max-conns", "48",
		"--read-header-timeout", "2s", "--read-timeout", "10s", "--write-timeout", "20s", "--idle-timeout", "30s")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	m := &mockProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(m.done) }()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		m.stop()
		return nil, fmt.Errorf("mock start: %w", err)
	}
	if err := json.Unmarshal(line, &m.info); err != nil {
		m.stop()
		return nil, fmt.Errorf("mock start info %q: %w", line, err)
	}
	u, err := url.Parse(m.info.BaseURL)
	if err != nil || !strings.HasPrefix(u.Host, "127.0.0.1:") {
		m.stop()
		return nil, fmt.Errorf("mock base url %q is not on 127.0.0.1", m.info.BaseURL)
	}
	m.addr = u.Host
	return m, nil
}

func (m *mockProc) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *mockProc) stop() {
	if m.cmd.Process != nil && !m.exited() {
		_ = m.cmd.Process.Signal(os.Interrupt)
		select {
		case <-m.done:
		case <-time.After(40 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
}

// memory is the mock's peak and current resident set (VmHWM, VmRSS), in bytes.
func (m *mockProc) memory() (hwm, rss int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmHWM:" || f[0] == "VmRSS:") {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			if f[0] == "VmHWM:" {
				hwm = n << 10
			} else {
				rss = n << 10
			}
		}
	}
	return hwm, rss
}

type soak struct {
	c      config
	m      *mockProc
	out    io.Writer
	client *http.Client
	key    string // a generate key with large buckets in the default workspace

	requests atomic.Int64
	slowest  atomic.Int64
	fiveXX   atomic.Int64

	mu       sync.Mutex // guards failures
	failures []string
}

func (s *soak) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, fmt.Sprintf(format, args...))
}

func (s *soak) phase(ctx context.Context, name string, f func(context.Context)) {
	if ctx.Err() != nil {
		s.fail("%s: not run, the soak's time ran out", name)
		return
	}
	start := time.Now()
	n := s.requests.Load()
	f(ctx)
	hwm, _ := s.m.memory()
	fmt.Fprintf(s.out, "soak: %-40s %6d requests in %5.1fs, peak RSS %d MiB\n", name, s.requests.Load()-n, time.Since(start).Seconds(), hwm>>20)
}

// answer is one exchange's outcome.
type answer struct {
	status int
	body   map[string]any
	raw    []byte
	header http.Header
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// faultCodes are the 5xx codes the storm's faults may cause; no other 5xx is documented.
var faultCodes = map[string]int{"internal_error": 500, "provider_unavailable": 502, "pricing_unavailable": 503, "moderation_unavailable": 503}

// refusalStatuses are the statuses of the error table.
var refusalStatuses = map[int]bool{400: true, 401: true, 402: true, 403: true, 404: true, 409: true, 410: true, 422: true, 429: true}

// do sends one request and checks the answer: within answerWithin (longer only when slowOK), a
// refusal in the envelope with a table status, a 5xx only when faults5xx and then a fault code.
func (s *soak) do(ctx context.Context, what, method, path string, body io.Reader, faults5xx bool, headers ...string) answer {
	u := s.m.info.BaseURL + path
	if strings.HasPrefix(path, "/_control/") || strings.HasPrefix(path, "http") {
		u = strings.TrimSuffix(s.m.info.BaseURL, "/api/v1") + path
		if strings.HasPrefix(path, "http") {
			u = path
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		s.fail("%s: %v", what, err)
		return answer{}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// The mock closes the longest-idle keep-alive connection when --max-conns is full (the idle
	// clients above fill it), and a client can pick that connection for its next request in the
	// same instant: the request is never read, and net/http retries it only when it is marked
	// replayable. An empty X-Idempotency-Key marks it so without sending the header. A request the
	// mock did read is answered before any close, so it is never sent twice (the ledgers would say).
	req.Header["X-Idempotency-Key"] = nil
	start := time.Now()
	res, err := s.client.Do(req)
	s.requests.Add(1)
	if err != nil {
		if ctx.Err() == nil {
			s.fail("%s: %s %s: no answer: %v", what, method, path, err)
		}
		return answer{}
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	for {
		old := s.slowest.Load()
		if int64(took) <= old || s.slowest.CompareAndSwap(old, int64(took)) {
			break
		}
	}
	a := answer{status: res.StatusCode, raw: raw, header: res.Header}
	if took > s.c.answerWithin && !strings.Contains(path, "/wait") && method != http.MethodPut {
		s.fail("%s: %s %s answered after %s", what, method, path, took)
	}
	if err != nil {
		s.fail("%s: %s %s: body cut: %v", what, method, path, err)
		return a
	}
	if res.StatusCode >= 300 {
		if res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &a.body) != nil || a.code() == "" {
			s.fail("%s: %s %s: %d %s %.200q is not the error envelope", what, method, path, res.StatusCode, res.Header.Get("Content-Type"), raw)
			return a
		}
		switch {
		case res.StatusCode >= 500:
			s.fiveXX.Add(1)
			if st, ok := faultCodes[a.code()]; !faults5xx || !ok || st != res.StatusCode {
				s.fail("%s: %s %s: %d %s is a 5xx no queued fault explains: %.300s", what, method, path, res.StatusCode, a.code(), raw)
			}
		case !refusalStatuses[res.StatusCode]:
			s.fail("%s: %s %s: status %d is not in the error table: %.300s", what, method, path, res.StatusCode, raw)
		}
		return a
	}
	if len(raw) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &a.body)
	}
	return a
}

func (s *soak) control(ctx context.Context, method, path, body string, want int) map[string]any {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	a := s.do(ctx, "control", method, "/_control/v1"+path, rd, false, "Authorization", "Bearer "+s.m.info.ControlToken, "Content-Type", "application/json")
	if a.status != want {
		s.fail("control %s %s: %d %.300s, want %d", method, path, a.status, a.raw, want)
	}
	return a.body
}

// bigBuckets lifts every bucket of a soak key, so the corpus reaches the decoders.
const bigBuckets = `{"agent_read":100000,"agent_estimate":100000,"agent_submit":100000,"webhook_manage":100000,"uploads":100000,"reservations":100000}`

func (s *soak) newKey(ctx context.Context, ws string) string {
	b := s.control(ctx, "POST", "/workspaces/"+ws+"/keys", `{"scopes":["read","generate"],"buckets":`+bigBuckets+`}`, 201)
	k, _ := b["key"].(string)
	if k == "" {
		s.fail("no key made for %s", ws)
	}
	return k
}

func (s *soak) setup(ctx context.Context) error {
	s.key = s.newKey(ctx, s.m.info.Workspace)
	if len(s.failures) > 0 {
		return errors.New(strings.Join(s.failures, "; "))
	}
	return nil
}

// validBodies are a valid body of each JSON operation; the corpus cuts each at every offset.
func validBodies(templateKey string) map[string]string {
	return map[string]string{
		"POST /estimates":        `{"capability_id":"tts","config":{"script":"Hello there, a soak test."}}`,
		"POST /generations":      `{"capability_id":"tts","config":{"script":"Hello there, a soak test."},"max_credits":2}`,
		"POST /uploads":          `{"filename":"cat.png","content_type":"image/png","size_bytes":67,"checksum_sha256":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}`,
		"POST /uploads/from-url": `{"url":"https://192.0.2.1/a.png","filename":"a.png","content_type":"image/png"}`,
		"POST /webhooks":         `{"url":"https://192.0.2.10/hook","events":["generation.completed","batch.settled"],"description":"d"}`,
		"POST /workflows/templates/" + templateKey + "/invoke": `{"inputs":{"images":["ast_0123456789abcdef0123456789abcdef"]},"max_credits":30}`,
	}
}

// reads are the keyed reads and the body-less writes, with junk ids and query values.
var reads = []string{
	"GET /capabilities?limit=abc&cursor=%25zz", "GET /capabilities?limit=-1", "GET /capabilities/%00x", "GET /capabilities/" + strings.Repeat("a", 3000),
	"GET /generations?status=bogus", "GET /generations?updated_since=2026-01-01T00:00:00", "GET /generations?cursor=eyJ", "GET /generations?limit=1e9",
	"GET /generations/gen_zz", "GET /generations/gen_00000000000000000000000000000000/wait", "GET /batches/bg_x", "GET /presets?limit=0",
	"GET /presets/nope/templates", "GET /actors?cursor=!!", "GET /voices?language=%FF", "GET /assets/ast_x", "GET /assets/ast_x/download",
	"GET /assets?kind=bogus", "GET /credits/balance", "GET /webhooks", "DELETE /webhooks/wh_x", "POST /uploads/ast_x/finalize",
	"GET /workflows/templates", "GET /workflows/wf_x", "GET /workflow-runs/wfr_x", "POST /workflows/wf_x/invoke", "GET /openapi.json",
	"GET /health/live", "GET /health/ready", "GET /nowhere", "PATCH /generations", "GET /generations/../credits/balance",
}

func (s *soak) badInput(ctx context.Context) {
	auth := []string{"Authorization", "Bearer " + s.key, "Content-Type", "application/json"}
	tpl := s.do(ctx, "templates", "GET", "/workflows/templates", nil, false, auth...)
	key := "ugc_ad"
	if ts, _ := tpl.body["templates"].([]any); len(ts) > 0 {
		if t, _ := ts[0].(map[string]any); t != nil {
			if k, _ := t["template_key"].(string); k != "" {
				key = k
			} else if k, _ := t["key"].(string); k != "" {
				key = k
			}
		}
	}
	type job struct{ method, path, body, ct string }
	var jobs []job
	for op, body := range validBodies(key) {
		method, path, _ := strings.Cut(op, " ")
		for n := range len(body) {
			jobs = append(jobs, job{method, path, body[:n], "application/json"})
		}
		jobs = append(jobs,
			job{method, path, strings.Replace(body, `"`, `'`, -1), "application/json"},
			job{method, path, strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "application/json"},
			job{method, path, `{"a":"` + strings.Repeat("x", 2<<20) + `"}`, "application/json"},
			job{method, path, "{\"filename\":\"\xff\xfe\"}", "application/json"},
			job{method, path, `{"capability_id":1,"config":[],"max_credits":"2","url":{},"events":"x","filename":null,"size_bytes":1.5}`, "application/json"},
			job{method, path, body[:len(body)-1] + `,"capability_id":"x"}`, "application/json"},
			job{method, path, body, "text/plain"},
			job{method, path, body, "application/json; charset=latin1"},
			job{method, path, body, ""},
		)
	}
	for _, r := range reads {
		method, path, _ := strings.Cut(r, " ")
		jobs = append(jobs, job{method, path, "", ""})
	}
	work := make(chan job)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				h := []string{"Authorization", "Bearer " + s.key}
				if j.ct != "" {
					h = append(h, "Content-Type", j.ct)
				}
				var body io.Reader
				if j.body != "" || j.method == http.MethodPost {
					body = strings.NewReader(j.body)
				}
				s.do(ctx, "corpus", j.method, j.path, body, false, h...)
			}
		}()
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	s.rawCorpus(ctx)
}

// rawCorpus sends requests net/http cannot parse, over raw connections.
func (s *soak) rawCorpus(ctx context.Context) {
	paths := []string{"/api/v1/estimates", "/api/v1/generations", "/api/v1/credits/balance", "/_control/v1/state", "/files/x", "/upload-slots/x"}
	for _, p := range paths {
		for _, req := range []string{
			"GET " + p + " HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n",
			"GET " + p + "/%zz HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET " + p + " HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
			"POST " + p + " HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
			"POST " + p + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
			"POST " + p + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
			"GET " + p + " HTTP/1.1\r\n\r\n",
			"GET " + p + " HTTP/9.9\r\nHost: x\r\n\r\n",
			"GET " + p + "/../x HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET " + p + " HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\n",
			"BREW " + p + " HTTP/1.1\r\nHost: x\r\n\r\n",
		} {
			if ctx.Err() != nil {
				return
			}
			s.raw(req)
		}
	}
}

func (s *soak) raw(req string) {
	s.requests.Add(1)
	what := fmt.Sprintf("raw %.60q", req)
	c, err := net.DialTimeout("tcp", s.m.addr, 5*time.Second)
	if err != nil {
		s.fail("%s: %v", what, err)
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.c.answerWithin))
	if _, err := io.WriteString(c, req); err != nil {
		s.fail("%s: %v", what, err)
		return
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		s.fail("%s: no answer within %s: %v", what, s.c.answerWithin, err)
		return
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var env map[string]any
	if res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &env) != nil || env["error"] == nil {
		s.fail("%s: %d %s %.200q is not the error envelope", what, res.StatusCode, res.Header.Get("Content-Type"), raw)
		return
	}
	if !refusalStatuses[res.StatusCode] {
		s.fail("%s: status %d is not in the error table", what, res.StatusCode)
	}
}

// slowAndIdleClients holds idle keep-alive connections (more than --max-conns allows with the
// corpus's own) and trickles header bytes on others, until stop.
func (s *soak) slowAndIdleClients(ctx context.Context, stop chan struct{}, wg *sync.WaitGroup) {
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", s.m.addr, 5*time.Second)
			if err != nil {
				return
			}
			defer func() { c.Close() }()
			if i%4 == 0 { // slow: a header byte every 100 ms, cut by --read-header-timeout, again
				req := "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("s", 200) + "\r\n\r\n"
				for j := 0; j < 2000; j++ {
					select {
					case <-stop:
						return
					case <-ctx.Done():
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := c.Write([]byte{req[j%len(req)]}); err != nil {
						c.Close()
						if c, err = net.DialTimeout("tcp", s.m.addr, 5*time.Second); err != nil {
							return
						}
					}
				}
				return
			}
			// idle: one request, then hold the connection open without another.
			if _, err := io.WriteString(c, "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			select {
			case <-stop:
			case <-ctx.Done():
			}
		}()
	}
}

// ledgerStorm spends in four workspaces while faults are queued, settles everything, and checks
// each ledger.
func (s *soak) ledgerStorm(ctx context.Context) {
	const start = 50000
	type wsKeys struct {
		id   string
		keys []string
	}
	var wss []wsKeys
	for i := range 4 {
		b := s.control(ctx, "POST", "/workspaces", fmt.Sprintf(`{"name":"storm %d","balance":%d,"limits":{"per_generation_credits":100000,"daily_credits":10000000}}`, i, start), 201)
		id, _ := b["workspace_id"].(string)
		if id == "" {
			return
		}
		w := wsKeys{id: id}
		for range 3 {
			w.keys = append(w.keys, s.newKey(ctx, id))
		}
		wss = append(wss, w)
	}
	sctx, cancel := context.WithTimeout(ctx, s.c.storm)
	defer cancel()
	var wg sync.WaitGroup
	var submitted, accepted atomic.Int64
	for wi, w := range wss {
		for ki, k := range w.keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(wi), uint64(ki)))
				auth := []string{"Authorization", "Bearer " + k, "Content-Type", "application/json"}
				for i := 0; i < 100000 && sctx.Err() == nil; i++ {
					script := fmt.Sprintf("Storm %d %d %s", wi, i, strings.Repeat("word ", rng.IntN(400)))
					est := s.do(sctx, "estimate", "POST", "/estimates", strings.NewReader(`{"capability_id":"tts","config":{"script":"`+script+`"}}`), true, auth...)
					need, _ := est.body["max_credits_needed"].(float64)
					if est.status != 200 || need <= 0 {
						continue
					}
					maxc := int64(need)
					if rng.IntN(5) == 0 {
						maxc-- // refused: max_credits_exceeded
					}
					submitted.Add(1)
					sub := s.do(sctx, "submit", "POST", "/generations", strings.NewReader(fmt.Sprintf(`{"capability_id":"tts","config":{"script":"%s"},"max_credits":%d}`, script, maxc)), true, auth...)
					if sub.status == 201 || sub.status == 202 || sub.status == 200 {
						accepted.Add(1)
						if id, _ := sub.body["generation_id"].(string); id != "" && rng.IntN(3) == 0 {
							s.do(sctx, "wait", "GET", "/generations/"+id+"/wait", nil, true, auth...)
						}
					}
				}
			}()
		}
	}
	kinds := []string{"render_fail", "provider_unavailable", "pricing_unavailable", "internal_error", "estimate_changed", "moderation_unavailable", "slow_render"}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(24, 24))
		for i := 0; i < 10000 && sctx.Err() == nil; i++ {
			w := wss[rng.IntN(len(wss))]
			kind := kinds[rng.IntN(len(kinds))]
			body := fmt.Sprintf(`{"kind":%q,"workspace_id":%q,"count":3}`, kind, w.id)
			if kind == "slow_render" {
				body = fmt.Sprintf(`{"kind":%q,"workspace_id":%q,"count":3,"seconds":120}`, kind, w.id)
			}
			s.control(ctx, "POST", "/faults", body, 201)
			select {
			case <-sctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
	s.control(ctx, "DELETE", "/faults", "", 200)
	fmt.Fprintf(s.out, "soak: storm: %d submits, %d accepted, in %d workspaces\n", submitted.Load(), accepted.Load(), len(wss))
	// Settle: every generation ends on the service clock (x50), within a bounded wait.
	for _, w := range wss {
		auth := []string{"Authorization", "Bearer " + w.keys[0]}
		deadline := time.Now().Add(60 * time.Second)
		for {
			charged, running, n := s.generations(ctx, auth)
			bal := s.do(ctx, "balance", "GET", "/credits/balance", nil, false, auth...)
			held, _ := bal.body["held_credits"].(float64)
			balance, _ := bal.body["balance_credits"].(float64)
			if running == 0 && held == 0 {
				if int64(balance) != start-charged {
					s.fail("ledger of %s: balance %v, but start %d - charged %d = %d over %d generations", w.id, balance, start, charged, start-charged, n)
				}
				fmt.Fprintf(s.out, "soak: ledger %s exact: %d generations, %d charged, balance %d\n", w.id, n, charged, int64(balance))
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				s.fail("ledger of %s: %d generations still running, %v held after 60 s", w.id, running, held)
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

// generations sums credits_charged over every generation of the key's workspace.
func (s *soak) generations(ctx context.Context, auth []string) (charged int64, running, n int) {
	cursor := ""
	for page := 0; page < 10000; page++ {
		p := "/generations?limit=50"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		a := s.do(ctx, "list", "GET", p, nil, false, auth...)
		rows, _ := a.body["generations"].([]any)
		for _, r := range rows {
			row, _ := r.(map[string]any)
			n++
			if c, ok := row["credits_charged"].(float64); ok {
				charged += int64(c)
			}
			switch row["status"] {
			case "completed", "failed", "canceled":
			default:
				running++
			}
		}
		next, _ := a.body["next_cursor"].(string)
		if next == "" || a.status != 200 {
			return
		}
		cursor = next
	}
	return
}

// zeros is an endless reader of zero bytes (an upload body that is never in the soak's memory).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// fillUploads reserves 100 MB videos until the pending-upload limit refuses one, PUTs each and
// abandons them, then finalizes one (refused: zeros are not a video).
func (s *soak) fillUploads(ctx context.Context) {
	const size = 104857600
	auth := []string{"Authorization", "Bearer " + s.key, "Content-Type", "application/json"}
	var links []string
	var ids []string
	for i := 0; i < 64; i++ {
		a := s.do(ctx, "reserve", "POST", "/uploads", strings.NewReader(fmt.Sprintf(`{"filename":"big%d.mp4","content_type":"video/mp4","size_bytes":%d}`, i, size)), false, auth...)
		if a.status == 429 && a.code() == "quota_exceeded" {
			break
		}
		if a.status != 201 {
			s.fail("reserve %d: %d %.200s", i, a.status, a.raw)
			return
		}
		l, _ := a.body["upload_url"].(string)
		id, _ := a.body["asset_id"].(string)
		links, ids = append(links, l), append(ids, id)
	}
	if want := s.c.uploadLimit / size; int64(len(links)) != want {
		s.fail("the pending-upload limit of %d bytes admitted %d reservations of %d bytes, want %d", s.c.uploadLimit, len(links), size, want)
	}
	var wg sync.WaitGroup
	for _, l := range links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := s.do(ctx, "put", "PUT", l, io.LimitReader(zeros{}, size), false, "Content-Type", "video/mp4")
			if a.status != 200 {
				s.fail("PUT %d bytes: %d %.200s", size, a.status, a.raw)
			}
		}()
	}
	wg.Wait()
	if len(ids) > 0 {
		a := s.do(ctx, "finalize", "POST", "/uploads/"+ids[0]+"/finalize", nil, false, auth...)
		if a.status != 400 {
			s.fail("finalize of zeros declared video/mp4: %d %.200s, want 400 invalid_config", a.status, a.raw)
		}
	}
}
