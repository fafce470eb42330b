package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The init budget: what the built binary allocates in package initialisation, before main runs,
// which every command pays (mediaspec --version as much as mediaspec check). It is counted in
// allocations, which are the same on every run of one binary, not in time, which is not: a regexp
// compiled, a template parsed, a schema compiled or a catalogue read in a package variable shows
// up here. Work a command may not need belongs behind a sync.OnceValue where it is used.
const (
	// initAllocsTotal bounds the whole binary: ~29,520 at the time of writing, of which 21,300 are
	// github.com/santhosh-tekuri/jsonschema/v6 compiling the meta-schemas of five drafts in its
	// init (v6.0.3, its newest release). It cannot be deferred from outside, and it is linked in
	// by kin-openapi's openapi3 as well as by fixtures, so no change of ours removes it. Most of the
	// rest is other dependencies (Ginkgo and Gomega, dockertest, oasdiff, kin-openapi, yaml).
	initAllocsTotal = 30500
	// initAllocsPackage bounds each package of this module: none computes anything in its init
	// (the most, conformance/internal/framework, allocates 34 times for its literal tables). A regexp
	// costs ~100 allocations, so one compiled in a package variable fails this.
	initAllocsPackage = 50
)

// initLine is one line of GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, B bytes, N allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func TestInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the init budget builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "mediaspec")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mediaspec --version: %v\n%s", err, stderr.String())
	}
	total, seen := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		seen++
		pkg := m[1]
		allocs, _ := strconv.Atoi(m[3])
		total += allocs
		if !strings.HasPrefix(pkg, "github.com/mediaspec/mediaspec") {
			continue
		}
		if allocs > initAllocsPackage {
			t.Errorf("package %s allocates %d times in its init (budget %d): make what it builds lazy (sync.OnceValue at the use)", pkg, allocs, initAllocsPackage)
		}
	}
	if seen < 50 {
		t.Fatalf("only %d inittrace lines on stderr: is GODEBUG=inittrace=1 honoured?\n%s", seen, stderr.String())
	}
	if total > initAllocsTotal {
		t.Errorf("the binary allocates %d times in package init before main (budget %d): a dependency or package variable does work every command pays; find it with GODEBUG=inittrace=1 bin/mediaspec --version", total, initAllocsTotal)
	}
	t.Logf("%d packages initialised, %d allocations", seen, total)
}
