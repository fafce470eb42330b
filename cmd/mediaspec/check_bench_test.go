package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
)

// The check benchmarks time `mediaspec check` as a user runs it, whole process, in the three target
// modes CI runs (make bench; each iteration is a whole run, so go test's default -benchtime runs
// each once). Each run must end with 0 failed specs: a faster check that judged differently is no
// faster check. Each reports:
//
//   - wall-s: the run from start to exit; cpu-s: CPU time of the check (user + system, its
//     processes included; for the embedded check the mock in it too); mock-cpu-s: the mock
//     binary's own, where it runs apart;
//   - calls: the HTTP calls the mock answered (its request log), and floor-s, what those calls
//     cost at the least: each at the round trip of a bare read of the same mock (GET health/live,
//     the median of 200), plus the time the mock spent answering them (its request log's
//     durations: handling, and the blocking the text asks of a wait on the service clock), split
//     over the run's processes, plus the waits the text forces in real time (forced-s: the 10 s
//     attempt timeout of DLV-010 on a running clock); in a keys-only run, whose per-key buckets
//     refill on real minutes, the floor is at least its longest spec (forced-s), which one process
//     runs whatever the split; x-floor is wall-s over floor-s.
//
// The embedded check's mock is in its own process, so its calls are counted by a second run, not
// timed, of the same suite against the mock binary on a manual clock (mode a out of process).

// BenchmarkCheckEmbedded: `mediaspec check` with no target, the README's first command: the
// embedded mock on a manual clock, with the control API, split over embeddedProcs processes (an
// embedded mock each).
func BenchmarkCheckEmbedded(b *testing.B) {
	bin := benchBinary(b)
	for b.Loop() {
		dir := b.TempDir()
		r := timeCheck(b, bin, dir, "check", "--json-report", filepath.Join(dir, "check.json"))
		b.ReportMetric(r.wall.Seconds(), "wall-s")
		b.ReportMetric(r.cpu.Seconds(), "cpu-s")
		// The calls, counted on the mock binary with the embedded check's settings.
		m := startBenchMock(b, bin, dir, "--clock", "manual")
		mockArgs := append(controlArgs(m), "--budget", "5000", "--slow", "--retired-capability-id", "actor_classic", "--reference", "--strict")
		timeCheck(b, bin, dir, append([]string{"check"}, mockArgs...)...)
		calls := m.stop(b)
		reportFloor(b, r, calls, embeddedProcs, 0)
	}
}

// BenchmarkCheckEmbeddedSplit: the README's first command as it is (split over embeddedProcs
// processes, an embedded mock each) beside the same check in one process (--procs 1), in
// alternating order from round to round, so a change of the machine's load hits both alike. Reported per side: wall-s and cpu-s
// (one-, split-), and split/one, the split run's wall time over the single one's.
func BenchmarkCheckEmbeddedSplit(b *testing.B) {
	bin := benchBinary(b)
	var one, split checkTimes
	round := 0
	for b.Loop() {
		dir := b.TempDir()
		sides := []func(){
			func() { one = addTimes(one, timeCheck(b, bin, dir, "check", "--procs", "1")) },
			func() { split = addTimes(split, timeCheck(b, bin, dir, "check")) },
		}
		if round%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			side()
		}
		round++
	}
	n := float64(max(round, 1))
	b.ReportMetric(one.wall.Seconds()/n, "one-wall-s")
	b.ReportMetric(split.wall.Seconds()/n, "split-wall-s")
	b.ReportMetric(one.cpu.Seconds()/n, "one-cpu-s")
	b.ReportMetric(split.cpu.Seconds()/n, "split-cpu-s")
	b.ReportMetric(split.wall.Seconds()/one.wall.Seconds(), "split/one")
}

func addTimes(a, b checkTimes) checkTimes {
	return checkTimes{wall: a.wall + b.wall, cpu: a.cpu + b.cpu}
}

// BenchmarkCheckControl100: the mock binary on a running clock at x100 and check with its control
// API (.ci/check-modes mode b).
func BenchmarkCheckControl100(b *testing.B) {
	bin := benchBinary(b)
	for b.Loop() {
		dir := b.TempDir()
		m := startBenchMock(b, bin, dir, "--seed", "3", "--time-scale", "100")
		args := append([]string{"check"}, controlArgs(m)...)
		args = append(args, "--time-scale", "100", "--budget", "5000", "--slow", "--retired-capability-id", "actor_classic",
			"--reference", "--strict", "--json-report", filepath.Join(dir, "check.json"))
		r := timeCheck(b, bin, dir, args...)
		calls := m.stop(b)
		b.ReportMetric(r.wall.Seconds(), "wall-s")
		b.ReportMetric(r.cpu.Seconds(), "cpu-s")
		b.ReportMetric(calls.cpu.Seconds(), "mock-cpu-s")
		reportFloor(b, r, calls, 1, 10*time.Second)
	}
}

// BenchmarkCheckKeysOnly8: the mock binary without its control API on a real clock, and check over
// 8 processes, each with a key set of its own (.ci/check-modes mode c).
func BenchmarkCheckKeysOnly8(b *testing.B) {
	const procs = 8
	bin := benchBinary(b)
	for b.Loop() {
		dir := b.TempDir()
		m := startBenchMock(b, bin, dir, "--seed", "3", "--no-control", "--key-sets", fmt.Sprint(procs))
		var lines []string
		for _, ks := range m.info.KeySets {
			lines = append(lines, ks.GenerateKey+","+ks.ReadKey+","+ks.OtherKey)
		}
		keys := filepath.Join(dir, "keys.txt")
		if err := os.WriteFile(keys, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		report := filepath.Join(dir, "check.json")
		r := timeCheck(b, bin, dir, "check", "--base-url", m.info.BaseURL, "--keys-file", keys, "--procs", fmt.Sprint(procs),
			"--budget", "500", "--retired-capability-id", "actor_classic", "--reference", "--strict", "--json-report", report)
		calls := m.stop(b)
		b.ReportMetric(r.wall.Seconds(), "wall-s")
		b.ReportMetric(r.cpu.Seconds(), "cpu-s")
		b.ReportMetric(calls.cpu.Seconds(), "mock-cpu-s")
		reportFloor(b, r, calls, procs, longestSpec(b, report))
	}
}

// checkTimes is one run of the check.
type checkTimes struct{ wall, cpu time.Duration }

// timeCheck runs the binary with args in dir and fails the benchmark unless it exits 0 with 0
// failed specs.
func timeCheck(b *testing.B, bin, dir string, args ...string) checkTimes {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil || !strings.Contains(string(out), " 0 failed") {
		b.Fatalf("mediaspec %s: %v\n%s", args[0], err, tail(string(out), 40))
	}
	return checkTimes{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// benchMock is the mock binary running apart, its request log in a file.
type benchMock struct {
	cmd  *exec.Cmd
	info mock.StartInfo
	log  string
	rtt  time.Duration // the median round trip of GET health/live
}

// mockCalls is what the mock's request log and process say of a run.
type mockCalls struct {
	n    int           // requests answered
	busy time.Duration // the sum of their durations
	cpu  time.Duration // the mock process's CPU time
	rtt  time.Duration // the median round trip of a bare read
}

// startBenchMock starts `mediaspec mock` on 127.0.0.1:0 with loopback webhooks and fetches, each
// request logged (no --quiet), and measures the round trip of a bare read before the run.
func startBenchMock(b *testing.B, bin, dir string, args ...string) *benchMock {
	b.Helper()
	log := filepath.Join(dir, "mock.log")
	lf, err := os.Create(log)
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close()
	cmd := exec.Command(bin, append([]string{"mock", "--addr", "127.0.0.1:0", "--json", "--allow-loopback-webhooks", "--allow-loopback-fetch"}, args...)...)
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	m := &benchMock{cmd: cmd, log: log}
	b.Cleanup(func() {
		if m.cmd.ProcessState == nil {
			_ = m.cmd.Process.Kill()
			_ = m.cmd.Wait()
		}
	})
	if err := json.NewDecoder(out).Decode(&m.info); err != nil {
		b.Fatalf("the mock's start line: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	client := &http.Client{Timeout: 10 * time.Second}
	var ds []time.Duration
	for range 200 {
		start := time.Now()
		res, err := client.Get(m.info.BaseURL + "/health/live")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		ds = append(ds, time.Since(start))
	}
	client.CloseIdleConnections()
	slices.Sort(ds)
	m.rtt = ds[len(ds)/2]
	return m
}

// controlArgs are check's target flags for a mock with its control API.
func controlArgs(m *benchMock) []string {
	return []string{"--base-url", m.info.BaseURL, "--control-url", m.info.ControlURL, "--control-token", m.info.ControlToken}
}

// stop ends the mock and reads its request log: the calls of the run, without the round-trip
// probes of startBenchMock.
func (m *benchMock) stop(b *testing.B) mockCalls {
	b.Helper()
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	_ = m.cmd.Wait()
	f, err := os.Open(m.log)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var c mockCalls
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "msg=request ") {
			continue
		}
		c.n++
		if _, d, ok := strings.Cut(line, " duration="); ok {
			d, _, _ = strings.Cut(d, " ")
			if v, err := time.ParseDuration(d); err == nil {
				c.busy += v
			}
		}
	}
	c.n -= 200 // the probes
	c.cpu = m.cmd.ProcessState.UserTime() + m.cmd.ProcessState.SystemTime()
	c.rtt = m.rtt
	return c
}

// reportFloor reports the calls, the floor and how far the run is from it (see the top of the file).
func reportFloor(b *testing.B, r checkTimes, c mockCalls, procs int, forced time.Duration) {
	b.ReportMetric(float64(c.n), "calls")
	floor := (time.Duration(c.n)*c.rtt + c.busy) / time.Duration(procs)
	if procs > 1 {
		// The longest spec runs in one process whatever the split, and its waits are among the
		// mock's durations already: the floor is the larger of the two.
		floor = max(floor, forced)
	} else {
		floor += forced
	}
	b.ReportMetric(forced.Seconds(), "forced-s")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(r.wall.Seconds()/floor.Seconds(), "x-floor")
}

// longestSpec is the longest spec of a run's JSON report.
func longestSpec(b *testing.B, path string) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var rep struct {
		Specs []struct {
			Duration int64 `json:"duration_ns"`
		} `json:"specs"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		b.Fatal(err)
	}
	var most int64
	for _, s := range rep.Specs {
		most = max(most, s.Duration)
	}
	return time.Duration(most)
}
