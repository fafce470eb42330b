package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The start-up benchmarks time the built binary as a user runs it, whole process, from outside
// (make bench; -benchtime 20x for steadier medians). Each reports the median of its b.N starts in
// milliseconds; a hello-world Go binary takes about 1 ms for the same start and exit on the same
// machine, which is the floor.

// benchBinary builds the mediaspec binary once per benchmark, outside the timed part.
func benchBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "mediaspec")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func reportMedian(b *testing.B, ds []time.Duration, unit string) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), unit)
}

// BenchmarkStartToLive: from starting `mediaspec mock --addr 127.0.0.1:0` to the first 200 of GET
// /api/v1/health/live. The mock prints its address (--json) once it listens, and the probe is sent
// then, so nothing polls.
func BenchmarkStartToLive(b *testing.B) {
	bin := benchBinary(b)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var ds []time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "mock", "--addr", "127.0.0.1:0", "--quiet", "--json")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var info struct {
			BaseURL string `json:"base_url"`
		}
		if err := json.NewDecoder(out).Decode(&info); err != nil {
			b.Fatalf("the mock's start line: %v", err)
		}
		res, err := client.Get(info.BaseURL + "/health/live")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("health/live answered %d", res.StatusCode)
		}
		ds = append(ds, time.Since(start))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	reportMedian(b, ds, "live-ms")
}

// BenchmarkVersion: `mediaspec --version` from start to exit, which is mostly package init
// (GODEBUG=inittrace=1 shows it; TestInitBudget holds its allocations).
func BenchmarkVersion(b *testing.B) {
	bin := benchBinary(b)
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("mediaspec --version: %v\n%s", err, out)
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, ds, "version-ms")
}
