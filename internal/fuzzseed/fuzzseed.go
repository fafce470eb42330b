// Package fuzzseed keeps the committed seed corpora of the fuzz targets that read request bytes,
// for their tests only. For each valid input it holds one seed per cut of that input at every
// offset (testdata/fuzz/<Target>/prefix-<name>-<offset>), so that plain `go test`, which runs
// every committed seed, proves that a decoder stops on input cut anywhere: a JSON walker that did
// not stop at the end of a body cut inside an array spun a core for the life of the process
// (issue 24). Within bounds each call of a target, so a decoder that does not return fails the
// seed that found it instead of hanging the run.
//
// The corpora are written by `go test -run TestSeedCorpora ./PKG -update-seeds` and checked
// by the same test without the flag: a valid input changed in code and not rewritten fails.
package fuzzseed

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update-seeds", false, "rewrite the prefix seeds of the fuzz corpora under testdata/fuzz")

// Bound is how long one call of a decoder may take in a fuzz target before Within fails it. A
// decoder of a body of a few hundred bytes returns in microseconds; the bound only has to be
// finite and loose enough for a loaded CI machine under -race.
const Bound = 3 * time.Second

// Within runs f and fails t when f has not returned after Bound. A call that never returns is
// left running (Go cannot stop a goroutine) and would starve every later seed of the run, so the
// failure panics: the run stops at once, naming the seed (in a -fuzz run the input is written to
// testdata as a crasher).
func Within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Errorf("%s did not return within %s: it does not stop on this input", what, Bound)
		panic(fmt.Sprintf("fuzzseed: %s did not return within %s (%s)", what, Bound, t.Name()))
	}
}

// Prefixes checks (with -update-seeds: writes) the seeds of target for the valid input named
// name: one file per offset n in 0..len(valid)-1 holding args(valid[:n]), the arguments of the
// fuzz function (each a string or a []byte). Stale prefix seeds of name are refused (removed
// under -update-seeds).
func Prefixes(t *testing.T, target, name string, valid []byte, args func(cut []byte) []any) {
	t.Helper()
	if strings.ContainsAny(name, "-/\\ ") || name == "" {
		t.Fatalf("seed name %q: use letters and digits", name)
	}
	dir := filepath.Join("testdata", "fuzz", target)
	prefix := "prefix-" + name + "-"
	want := map[string]string{}
	for n := range len(valid) {
		file, err := encode(args(valid[:n]))
		if err != nil {
			t.Fatalf("%s %s: %v", target, name, err)
		}
		want[fmt.Sprintf("%s%04d", prefix, n)] = file
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			have[e.Name()] = true
		}
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range have {
			if _, ok := want[f]; !ok {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for f, body := range want {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for f, body := range want {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || string(got) != body {
			t.Fatalf("%s: seed %s is missing or stale (%v); run go test -run TestSeedCorpora -update-seeds", target, f, err)
		}
	}
	for f := range have {
		if _, ok := want[f]; !ok {
			t.Fatalf("%s: seed %s is stale; run go test -run TestSeedCorpora -update-seeds", target, f)
		}
	}
}

// encode writes a corpus file the way go test's fuzzing engine reads it (version line, then one
// Go literal per argument).
func encode(args []any) (string, error) {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b.WriteString("string(" + strconv.Quote(v) + ")\n")
		case []byte:
			b.WriteString("[]byte(" + strconv.Quote(string(v)) + ")\n")
		default:
			return "", fmt.Errorf("argument of type %T: want string or []byte", a)
		}
	}
	return b.String(), nil
}
