package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/hostile"
)

// hostileLimit bounds what one hostile answer sends in a test: far over every cap, so a tool that
// reads without one grows past heapCeiling and fails, yet never without end.
const hostileLimit = 256 << 20

// heapCeiling is the most the heap may grow while a tool meets a hostile peer in a test (the
// documented ceiling for the whole process is 300 MB resident; the tests measure the heap, which
// moves with what the tool reads, without the runtime's and the race detector's own overhead).
const heapCeiling = 160 << 20

// hostileHelperEnv holds the check arguments (separated by newlines) TestHostileHelper runs: Ginkgo
// keeps one spec tree per process, so each run against a hostile target is a process of its own.
const hostileHelperEnv = "MEDIASPEC_HOSTILE_HELPER"

// TestHostileHelper runs mediaspec check in a helper process of TestCheckAgainstHostileTargets and
// prints its console, its exit status and how much its heap grew.
func TestHostileHelper(t *testing.T) {
	raw, ok := os.LookupEnv(hostileHelperEnv)
	if !ok {
		t.Skip("a helper of TestCheckAgainstHostileTargets")
	}
	stop := hostile.HeapGrowth()
	out, errOut, err := run(t, strings.Split(raw, "\n")...)
	grew := stop()
	fmt.Printf("%s\nSTDERR:\n%s\nERROR: %v\nEXIT=%d\nHEAP=%d\n", out, errOut, err, exitCode(err), grew)
}

// mediaspec check against a target that misbehaves in each hostile way (issue 39): the run ends
// within its timeouts, its heap stays bounded, and the failed spec says in one line what was too
// large or wrong, and where. The target answers the preflight's probes and misbehaves on the calls
// of the selected spec; each run is a helper process (its peak resident size is logged).
func TestCheckAgainstHostileTargets(t *testing.T) {
	for _, kind := range hostile.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := hostile.Start(kind, hostile.Options{Limit: hostileLimit, Spare: []string{"/api/v1/capabilities", "/api/v1/credits/balance"}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			args := []string{"check", "--base-url", srv.URL + "/api/v1", "--key", "sk_test_hostile", "--label-filter", "ACTOR-001",
				"--request-timeout", "3s", "--timeout", "2m"}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileHelper$")
			cmd.Env = append(os.Environ(), hostileHelperEnv+"="+strings.Join(args, "\n"))
			start := time.Now()
			b, _ := cmd.CombinedOutput()
			took, out := time.Since(start), string(b)
			var code int
			var grew uint64
			if m := regexp.MustCompile(`EXIT=(\d+)\nHEAP=(\d+)`).FindStringSubmatch(out); m == nil {
				t.Fatalf("the helper said no exit status (after %s):\n%s", took, out)
			} else {
				code, _ = strconv.Atoi(m[1])
				heap, _ := strconv.ParseUint(m[2], 10, 64)
				grew = heap
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				t.Logf("%s: exit %d after %s, heap grew %d MiB, peak resident %d MiB", kind, code, took.Round(time.Millisecond), grew>>20, ru.Maxrss>>10)
			}
			if code != 1 {
				t.Errorf("check exited %d against a %s target, want 1 (a failed spec):\n%s", code, kind, out)
			}
			if grew > heapCeiling {
				t.Errorf("the heap grew by %d MiB against a %s target, want under %d MiB", grew>>20, kind, heapCeiling>>20)
			}
			call := "GET " + srv.URL + "/api/v1/actors?limit=48"
			want := map[hostile.Kind]string{
				hostile.Endless:      "the answer body to " + call + " is over 4MiB, the cap the suite reads (--max-json-bytes raises it)",
				hostile.Bomb:         "the answer body to " + call + " is over 4MiB, the cap the suite reads (--max-json-bytes raises it)",
				hostile.Slow:         "the answer body of " + call + " was not complete within 3s (the per-request timeout, --request-timeout)",
				hostile.Headers:      "the header block of the answer to " + call + " is over 64KiB, the cap the suite reads",
				hostile.Chunked:      "the answer body of " + call + " could not be read: invalid byte in chunk length",
				hostile.ShortLength:  "the answer body of " + call + " ended after 10 of the 1000 bytes its Content-Length announced",
				hostile.HugeLength:   "the answer body to " + call + " is 10000000000 bytes (its Content-Length), over 32MiB, the cap the suite reads (--max-answer-bytes raises it)",
				hostile.RedirectLoop: "< 302 Found",
				hostile.RedirectAway: "< 302 Found",
				hostile.Amplify:      "the answer body to " + call + " holds over 209715 JSON values (objects, arrays, members, items), the most the suite decodes within 4MiB (--max-json-bytes raises both",
			}[kind]
			if !strings.Contains(out, "\n1) "+want+"\n") && !strings.Contains(out, want) {
				t.Errorf("the output does not say %q:\n%s", want, out)
			}
		})
	}
}

// mediaspec receive against senders that misbehave in each hostile way a request can (issue 39):
// every delivery is refused or cut off within the read timeout, the printed line says why, and the
// heap stays bounded while 64 MiB bodies (or gzip bodies expanding to that) arrive.
func TestReceiveAgainstHostileSenders(t *testing.T) {
	defer func(d time.Duration) { receiveReadTimeout = d }(receiveReadTimeout)
	receiveReadTimeout = 3 * time.Second
	first, lines, stop := startReceive(t, "--secret", receiveSecret)
	defer stop()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(first)
	if url == "" {
		t.Fatalf("start line %q", first)
	}
	printed := make(chan string, 16)
	go func() {
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				close(printed)
				return
			}
			printed <- line
		}
	}()
	grew := hostile.HeapGrowth()
	for _, tc := range []struct {
		kind hostile.Kind
		line string // what the printed line says; "" when net/http refuses before the receiver reads
	}{
		{hostile.Endless, "bad_body  (body over 1048576 bytes)"},
		// 64 KB on the wire: read as it came (a receiver never decompresses a delivery), and
		// refused for its missing signature.
		{hostile.Bomb, "missing_headers"},
		{hostile.HugeLength, "bad_body  (body over 1048576 bytes)"},
		{hostile.Slow, "bad_body  (reading the body: "},
		{hostile.Chunked, "bad_body  (reading the body: invalid byte in chunk length"},
		{hostile.ShortLength, "bad_body  (reading the body: "},
		{hostile.Headers, ""},
	} {
		start := time.Now()
		status, err := hostile.Send(tc.kind, url+"hooks", hostile.Options{Limit: 64 << 20, Drip: 50 * time.Millisecond}, 20*time.Second)
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("%s: the delivery took %s", tc.kind, took)
		}
		if tc.line == "" {
			if status != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("%s: answered %d (%v), want 431", tc.kind, status, err)
			}
			continue
		}
		if err == nil && status != http.StatusBadRequest {
			t.Errorf("%s: answered %d, want 400", tc.kind, status)
		}
		select {
		case line := <-printed:
			if !strings.Contains(line, tc.line) || strings.Count(line, "\n") != 1 {
				t.Errorf("%s: printed %q, want one line with %q", tc.kind, line, tc.line)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: no line printed", tc.kind)
		}
	}
	if g := grew(); g > 48<<20 {
		t.Errorf("receive's heap grew by %d MiB, want under 48 MiB", g>>20)
	}
}

// mediaspec check-receiver against a receiver that misbehaves in each hostile way an answer can
// (issue 39): the run ends within its per-delivery timeouts, fails, says why for the first
// delivery in one line, and its heap stays bounded.
func TestCheckReceiverAgainstHostileReceivers(t *testing.T) {
	for _, kind := range hostile.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := hostile.Start(kind, hostile.Options{Limit: 64 << 20, Drip: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			grew := hostile.HeapGrowth()
			start := time.Now()
			out, errOut, err := run(t, "check-receiver", "--url", srv.URL+"/hooks", "--secret", receiveSecret, "--timeout", "1s")
			took := time.Since(start)
			if g := grew(); g > 48<<20 {
				t.Errorf("the heap grew by %d MiB, want under 48 MiB", g>>20)
			}
			if err == nil {
				t.Fatalf("check-receiver passed a %s receiver:\n%s", kind, out)
			}
			want := map[hostile.Kind]string{hostile.Headers: "no answer: the header block of the receiver's answer is over 64 KiB, the cap check-receiver reads",
				hostile.RedirectLoop: "answered 302 in", hostile.RedirectAway: "answered 302 in"}[kind]
			if want == "" {
				// The status decides: the rest of an endless, drip-fed or broken answer is not read.
				want = "signed with another secret: answered 200 in"
			}
			if !strings.Contains(out, want) || took > 60*time.Second {
				t.Errorf("after %s the output does not say %q:\n%s%s", took, want, out, errOut)
			}
		})
	}
}

// mediaspec diff fetching a description from a server that misbehaves in each hostile way (issue
// 39): the comparison stops within the fetch's 30-second timeout, exit 2 ("could not compare"),
// with a one-line reason naming the call, and the heap stays bounded.
func TestDiffAgainstHostileServers(t *testing.T) {
	for _, kind := range hostile.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := hostile.Start(kind, hostile.Options{Limit: 256 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			grew := hostile.HeapGrowth()
			start := time.Now()
			_, _, err = run(t, "diff", srv.URL+"/api/v1/openapi.json", "../../spec/openapi.yaml")
			took := time.Since(start)
			if g := grew(); g > heapCeiling {
				t.Errorf("the heap grew by %d MiB, want under %d MiB", g>>20, heapCeiling>>20)
			}
			call := "GET " + srv.URL + "/api/v1/openapi.json"
			want := map[hostile.Kind]string{
				hostile.Endless:      "the answer body of " + call + " is over 32 MiB, the cap diff reads (--max-answer-bytes raises it)",
				hostile.Bomb:         "the answer body of " + call + " is over 32 MiB",
				hostile.Slow:         "Client.Timeout",
				hostile.Headers:      "the header block of the answer to " + call + " is over 64 KiB, the cap diff reads",
				hostile.Chunked:      "invalid byte in chunk length",
				hostile.ShortLength:  "unexpected EOF",
				hostile.HugeLength:   "the answer body of " + call + " is over 32 MiB",
				hostile.RedirectLoop: call + " answered 302",
				hostile.RedirectAway: call + " answered 302",
				hostile.Amplify:      "the answer body of " + call + " holds over 524288 JSON values, the most diff decodes within 32 MiB",
			}[kind]
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") || took > 60*time.Second {
				t.Errorf("after %s: %v (exit %d), want exit 2 and one line saying %q", took, err, exitCode(err), want)
			}
		})
	}
}
