package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec"
)

// The mock command starts on a free loopback port, prints what a client needs, answers with the
// printed key, and stops cleanly when its context ends.
func TestMockCommandServesWithThePrintedKey(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startMockCommand(ctx, t, "--json", "--seed", "7", "--balance", "1234")
	var info struct {
		BaseURL      string `json:"base_url"`
		GenerateKey  string `json:"generate_key"`
		ReadKey      string `json:"read_key"`
		ControlURL   string `json:"control_url"`
		ControlToken string `json:"control_token"`
		Balance      int64  `json:"balance"`
		Seed         uint64 `json:"seed,string"`
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("start line is not JSON: %q", line)
	}
	if !strings.Contains(line, `"seed":"7"`) {
		t.Errorf("the seed is not a JSON string (a seed above 2^53 would not survive a number): %s", line)
	}
	if !strings.HasPrefix(info.BaseURL, "http://127.0.0.1:") || !strings.HasSuffix(info.BaseURL, "/api/v1") {
		t.Errorf("base url %q", info.BaseURL)
	}
	if !strings.HasPrefix(info.GenerateKey, "sk_live_") || !strings.HasPrefix(info.ReadKey, "sk_live_") || info.ControlToken == "" {
		t.Errorf("keys or token missing: %+v", info)
	}
	if info.Balance != 1234 || info.Seed != 7 {
		t.Errorf("balance %d seed %d, want 1234 and 7", info.Balance, info.Seed)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", info.BaseURL+"/credits/balance", nil)
	req.Header.Set("Authorization", "Bearer "+info.GenerateKey)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var bal struct {
		Available int64 `json:"available_credits"`
	}
	_ = json.NewDecoder(res.Body).Decode(&bal)
	res.Body.Close()
	if res.StatusCode != 200 || bal.Available != 1234 {
		t.Errorf("balance read: %d, available %d", res.StatusCode, bal.Available)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mock did not stop cleanly: %v", err)
	}
}

func TestMockCommandRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"mock", "--time-scale", "0"}, {"mock", "--log-format", "xml"}, {"mock", "--seed", "x"},
		{"mock", "--clock", "fast"}, {"mock", "--clock", "manual", "--no-control"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	t.Setenv("MEDIASPEC_MOCK_BALANCE", "lots")
	if _, _, err := run(t, "mock", "--addr", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "MEDIASPEC_MOCK_BALANCE") {
		t.Errorf("a bad environment value was not named: %v", err)
	}
}

// With --clock manual the service clock reports time_scale 0 and moves exactly by what the control
// API advances it.
func TestMockCommandManualClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startMockCommand(ctx, t, "--json", "--clock", "manual", "--control-token", "ctl_t")
	var info struct {
		ControlURL string `json:"control_url"`
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("start line is not JSON: %q", line)
	}
	type clockDoc struct {
		Now       time.Time `json:"now"`
		TimeScale float64   `json:"time_scale"`
	}
	call := func(method, path, body string) clockDoc {
		t.Helper()
		req, _ := http.NewRequest(method, info.ControlURL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer ctl_t")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var d clockDoc
		if err := json.NewDecoder(res.Body).Decode(&d); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, err)
		}
		return d
	}
	before := call("GET", "/clock", "")
	if before.TimeScale != 0 {
		t.Errorf("time_scale %v, want 0 for a manual clock", before.TimeScale)
	}
	call("POST", "/clock/advance", `{"seconds": 90}`)
	after := call("GET", "/clock", "")
	if got := after.Now.Sub(before.Now); got != 90*time.Second {
		t.Errorf("the clock moved %v after an advance of 90 s, want exactly 90 s", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mock did not stop cleanly: %v", err)
	}
}

// startMockCommand runs `mediaspec mock --addr 127.0.0.1:0 args...` until ctx ends and returns its
// first line of output and the channel its result arrives on.
func startMockCommand(ctx context.Context, t *testing.T, args ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return line, done
}

// --spec and --catalog serve copies kept on disk; a path that does not load refuses to start.
func TestMockCommandLoadsSpecAndCatalogFromDisk(t *testing.T) {
	dir := t.TempDir()
	doc := bytes.Replace(spec.OpenAPIYAML(), []byte("title: "), []byte("title: On disk "), 1)
	specFile := filepath.Join(dir, "openapi.yaml")
	if err := os.WriteFile(specFile, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	catDir := filepath.Join(dir, "catalog")
	if err := os.CopyFS(catDir, fixtures.CatalogFS()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startMockCommand(ctx, t, "--json", "--spec", specFile, "--catalog", catDir)
	var info struct {
		BaseURL string `json:"base_url"`
		ReadKey string `json:"read_key"`
	}
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("start line is not JSON: %q", line)
	}
	req, _ := http.NewRequest("GET", info.BaseURL+"/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+info.ReadKey)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var served struct {
		Info struct {
			Title string `json:"title"`
		} `json:"info"`
	}
	_ = json.NewDecoder(res.Body).Decode(&served)
	res.Body.Close()
	if !strings.HasPrefix(served.Info.Title, "On disk ") {
		t.Errorf("served title %q, want the copy on disk", served.Info.Title)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mock did not stop cleanly: %v", err)
	}
	for _, args := range [][]string{{"--spec", filepath.Join(dir, "missing.yaml")}, {"--catalog", filepath.Join(dir, "missing")}} {
		err := Run(context.Background(), append([]string{"mock", "--addr", "127.0.0.1:0"}, args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// --retain below the shortest retention the interface allows is a usage error (exit 2) naming the
// flag and the minimum; the environment variable is read the same way.
func TestMockCommandRetainMinimum(t *testing.T) {
	for _, v := range []string{"1h", "-1s", mock.MinRetain.Truncate(time.Minute).String()} {
		_, _, err := run(t, "mock", "--addr", "127.0.0.1:0", "--retain", v)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--retain") || !strings.Contains(err.Error(), mock.MinRetain.String()) {
			t.Errorf("--retain %s: %v (exit %d), want exit 2 naming --retain and %s", v, err, exitCode(err), mock.MinRetain)
		}
	}
	t.Setenv("MEDIASPEC_MOCK_RETAIN", "10m")
	if _, _, err := run(t, "mock", "--addr", "127.0.0.1:0"); err == nil || exitCode(err) != 2 {
		t.Errorf("MEDIASPEC_MOCK_RETAIN=10m: %v, want exit 2", err)
	}
}
