package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/report"
)

// TestMain lets the test binary be a process of check --procs: the parent starts its own binary.
func TestMain(m *testing.M) {
	if conformance.IsChild(os.Getenv) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err := Run(ctx, []string{"check"}, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			os.Exit(exitCode(err))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// procsHelperEnv holds the check arguments (separated by newlines) a helper process runs: Ginkgo
// keeps one spec tree per process, so each split run here is a process of its own.
const procsHelperEnv = "MEDIASPEC_PROCS_HELPER"

func TestCheckProcsHelper(t *testing.T) {
	raw, ok := os.LookupEnv(procsHelperEnv)
	if !ok {
		t.Skip("a helper of TestCheckProcs")
	}
	out, errOut, err := run(t, strings.Split(raw, "\n")...)
	code := 0
	if err != nil {
		code = exitCode(err)
	}
	fmt.Printf("%s\nSTDERR:\n%s\nERROR: %v\nEXIT=%d\n", out, errOut, err, code)
}

// checkInHelper runs mediaspec check with args in a helper process and returns its console and
// exit status.
func checkInHelper(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return inHelper(t, append([]string{"check"}, args...)...)
}

// inHelper runs mediaspec with args (a command and its arguments) in a helper process and returns
// its output (stdout, then "STDERR:" and stderr) and exit status: a command that builds the spec
// tree needs a process of its own.
func inHelper(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckProcsHelper$")
	cmd.Env = append(os.Environ(), procsHelperEnv+"="+strings.Join(args, "\n"))
	b, _ := cmd.CombinedOutput()
	out := string(b)
	m := regexp.MustCompile(`EXIT=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the helper said no exit status:\n%s", out)
	}
	code := 0
	fmt.Sscan(m[1], &code)
	return out, code
}

// A run split over 2 processes, keys only with a key set each, ends like a single run: one
// console, one report with each spec once. With the control API of a target given by --base-url a
// split run is refused: the processes would share the target's clock and catalogue. The embedded
// mock is split: each process checks an embedded mock of its own.
func TestCheckProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	reportPath := filepath.Join(t.TempDir(), "r.json")
	filter := "HEALTH-001 || VER-001 || CAP-002 || CAP-004 || CAP-011 || CAP-012 || EST-001"
	ctl := serveMock(t, mock.Config{Seed: 3, Logger: slog.New(slog.DiscardHandler)})
	if _, code := checkInHelper(t, "--procs", "2", "--base-url", ctl.BaseURL, "--control-url", ctl.ControlURL,
		"--control-token", ctl.ControlToken, "--label-filter", filter); code != 2 {
		t.Errorf("--procs 2 with a target's control API: exit %d, want 2", code)
	}
	embedded := filepath.Join(t.TempDir(), "embedded.json")
	out, code := checkInHelper(t, "--procs", "2", "--strict", "--label-filter", filter+" || RATE-016", "--json-report", embedded)
	if code != 0 || !strings.Contains(out, "mode: embedded mocks (one per process), control API, manual clock, 2 processes") {
		t.Errorf("--procs 2 on the embedded mock: exit %d\n%s", code, out)
	}
	checkSplitReport(t, embedded, "embedded mocks (one per process)", 7)
	info := serveMock(t, mock.Config{Seed: 3, NoControl: true, KeySets: 2, Logger: slog.New(slog.DiscardHandler)})
	out, code = checkInHelper(t, "--procs", "2", "--base-url", info.BaseURL, "--key", info.GenerateKey, "--read-key", info.ReadKey,
		"--other-key", info.OtherKey, "--key-set", info.KeySets[1].String(), "--budget", "500", "--label-filter", filter, "--json-report", reportPath,
		"--reference") // the target is our mock: its paths for what the text leaves unnamed (probes, description)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !regexp.MustCompile(`(?m)^mediaspec check: mode: out of process, keys \+ profile, 2 processes; .*\d+ specs in \d+ areas selected: they can judge at most \d+ of \d+ text rules$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^[1-9]\d* passed, 0 failed, \d+ skipped \([1-9]\d* not selected\)$`).MatchString(out) {
		t.Errorf("console:\n%s", out)
	}
	checkSplitReport(t, reportPath, "2 processes", 6)
}

// checkSplitReport checks the JSON report of a split run: its mode says mode, it succeeded, and
// each spec is in it once, at least least of them selected and every selected one passed.
func checkSplitReport(t *testing.T, reportPath, mode string, least int) {
	t.Helper()
	var res report.Results
	data, err := os.ReadFile(reportPath)
	if err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Run.Mode, mode) || !res.Succeeded {
		t.Errorf("run %+v succeeded %v", res.Run, res.Succeeded)
	}
	seen := map[string]bool{}
	selected := 0
	for _, s := range res.Specs {
		if seen[s.Text] {
			t.Errorf("%q is reported twice", s.Text)
		}
		seen[s.Text] = true
		if s.State != report.NotSelected {
			selected++
			if s.State != report.Passed {
				t.Errorf("%q: %s %s", s.Text, s.State, s.Reason)
			}
		}
	}
	if selected < least || res.SpecCounts.Passed != selected {
		t.Errorf("%d selected, counts %+v", selected, res.SpecCounts)
	}
}

// Keys only, a process needs a key set of its own: too few is a setup error before anything runs,
// and a key set the target refuses stops every process before any spec, naming the set.
func TestCheckProcsKeySets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	info := serveMock(t, mock.Config{Seed: 3, NoControl: true, KeySets: 2, Logger: slog.New(slog.DiscardHandler)})
	base := []string{"--base-url", info.BaseURL, "--key", info.GenerateKey, "--read-key", info.ReadKey, "--other-key", info.OtherKey, "--label-filter", "HEALTH-001 || VER-001"}

	_, _, err := run(t, append([]string{"check", "--procs", "3", "--key-set", info.KeySets[1].String()}, base...)...)
	if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "--procs 3 needs 3 key sets") {
		t.Errorf("3 processes, 2 key sets: %v (exit %d)", err, exitCode(err))
	}
	_, _, err = run(t, append([]string{"check", "--procs", "2", "--key-set", info.KeySets[0].String()}, base...)...)
	if exitCode(err) != 2 {
		t.Errorf("one key set given twice counts once: %v (exit %d)", err, exitCode(err))
	}
	for _, flag := range [][]string{{"--receiver-listen", "127.0.0.1:18650"}, {"--receiver-url", "https://hooks.example.test"}} {
		_, _, err = run(t, append(append([]string{"check", "--procs", "2", "--key-set", info.KeySets[1].String()}, flag...), base...)...)
		if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), flag[0]) {
			t.Errorf("%s with --procs: %v (exit %d)", flag[0], err, exitCode(err))
		}
	}

	wrong := "sk_live_" + strings.Repeat("Z", 40) + "," + info.KeySets[1].ReadKey + "," + info.KeySets[1].OtherKey
	out, code := checkInHelper(t, append([]string{"--procs", "2", "--key-set", wrong}, base...)...)
	if code != 2 || !strings.Contains(out, "process 2 of 2 (key set 2)") || strings.Contains(out, "running ") {
		t.Errorf("a refused key set: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "ZZZZZZZZ") {
		t.Error("the refused key is shown")
	}
}
