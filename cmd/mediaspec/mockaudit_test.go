package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
)

// mockWithAudit runs `mediaspec mock` with args until stop is called, and returns what the mock
// printed at start, its stderr (complete once the returned channel yields) and its result.
func mockWithAudit(t *testing.T, args ...string) (mock.StartInfo, func() (string, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	stderr := &lockedBuilder{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, append([]string{"mock", "--addr", "127.0.0.1:0", "--json", "--quiet"}, args...), pw, stderr)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var info mock.StartInfo
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("start line %q: %v", line, err)
	}
	return info, func() (string, error) {
		cancel()
		err := <-done
		return stderr.String(), err
	}
}

// lockedBuilder is a strings.Builder the server's goroutines may write to at once.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func estimateTwice(t *testing.T, info mock.StartInfo, body string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	for range 2 {
		req, _ := http.NewRequest("POST", info.BaseURL+"/estimates", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+info.GenerateKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// --audit prints a summary line per rule at shutdown; --audit-fail exits 1 when a MUST finding was
// recorded and 0 when none was.
func TestMockCommandAudit(t *testing.T) {
	const bad = `{"capability_id":"tts","config":{"script":"hi","colour":"red"}}`
	info, stop := mockWithAudit(t, "--audit")
	estimateTwice(t, info, bad)
	stderr, err := stop()
	if err != nil || !strings.Contains(stderr, "audit: CLIENT-001 MUST 1 finding(s)") {
		t.Errorf("--audit: %v\n%s", err, stderr)
	}

	info, stop = mockWithAudit(t, "--audit-fail")
	estimateTwice(t, info, bad)
	stderr, err = stop()
	if err == nil || exitCode(err) != 1 || !strings.Contains(stderr, "CLIENT-001") {
		t.Errorf("--audit-fail with a MUST finding: %v\n%s", err, stderr)
	}

	info, stop = mockWithAudit(t, "--audit-fail")
	estimateTwice(t, info, `{"capability_id":"tts","config":{"script":"hi"}}`)
	stderr, err = stop()
	if err != nil || !strings.Contains(stderr, "audit: no findings") {
		t.Errorf("--audit-fail with a correct client: %v\n%s", err, stderr)
	}

	_, stop = mockWithAudit(t)
	if stderr, err = stop(); err != nil || strings.Contains(stderr, "audit:") {
		t.Errorf("without --audit: %v\n%s", err, stderr)
	}
}
