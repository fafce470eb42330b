// Command benchtable is how `make bench` writes docs/bench.md: it runs the benchmark commands it is
// given (each a `go test -bench` run, its output passed through to stdout as it comes), reads
// their standard output lines, and writes one markdown table per package of every benchmark that
// ran, with every figure it reported: ns/op, B/op, allocs/op and each custom unit of
// b.ReportMetric, as go test printed them. Nothing names a benchmark here: a benchmark added
// anywhere in the module shows up in the next make bench. Benchmarks that skipped are listed with
// their reason, and a benchmark or package that failed fails the command (the page is still
// written, naming the failure).
//
//	go run ./internal/benchtable -o docs/bench.md -cmd 'go test -run ^$ -bench . -benchmem ./...'
//	go test -run '^$' -bench . ./proxy/ | go run ./internal/benchtable -o -   # from stdin, to stdout
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxColumns is how many figures a benchmark may report and still share its package's table;
// one that reports more gets a table of its own, a figure per row.
const maxColumns = 8

type cmds []string

func (c *cmds) String() string     { return strings.Join(*c, "; ") }
func (c *cmds) Set(s string) error { *c = append(*c, s); return nil }

func main() {
	out := flag.String("o", "docs/bench.md", "the page to write (- for stdout)")
	var run cmds
	flag.Var(&run, "cmd", "a benchmark command (split at spaces, no shell), run in order; repeatable; none: read stdin")
	flag.Parse()
	started := time.Now().UTC()
	loadStart := loadAvg()
	var text bytes.Buffer
	var failed []string
	if len(run) == 0 {
		if _, err := io.Copy(io.MultiWriter(&text, os.Stderr), os.Stdin); err != nil {
			fatal(err)
		}
	}
	for _, c := range run {
		args := strings.Fields(c)
		if len(args) == 0 {
			continue
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout = io.MultiWriter(&text, os.Stdout)
		cmd.Stderr = io.MultiWriter(&text, os.Stderr)
		if err := cmd.Run(); err != nil {
			failed = append(failed, fmt.Sprintf("`%s`: %v", c, err))
		}
	}
	res := parse(text.String())
	res.failed = append(res.failed, failed...)
	res.commands = run
	res.started, res.loadStart, res.loadEnd = started, loadStart, loadAvg()
	page := render(res)
	if *out == "-" {
		_, _ = os.Stdout.WriteString(page)
	} else if err := os.WriteFile(*out, []byte(page), 0o644); err != nil {
		fatal(err)
	}
	if len(res.failed) > 0 {
		fatal(errors.New("failed: " + strings.Join(res.failed, "; ")))
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchtable:", err)
	os.Exit(1)
}

// figure is one value a benchmark reported, as go test printed it.
type figure struct {
	unit, text string
	value      float64
}

// bench is one benchmark (a sub-benchmark is one of its own) and every run of it.
type bench struct {
	name, pkg string
	runs      [][]figure
}

// results is what a run printed.
type results struct {
	cpu, goos, goarch string
	pkgs              []string            // in the order they printed
	benches           map[string][]*bench // per package, in the order they printed
	skipped           []string            // "name (package): reason"
	failed            []string
	commands          []string
	started           time.Time
	loadStart         string
	loadEnd           string
}

// parse reads go test -bench output: the goos/goarch/pkg/cpu header of each package, a line per
// benchmark run ("BenchmarkX-N  iterations  value unit  value unit ..."), "--- SKIP:" and "---
// FAIL:" blocks, and a package's "FAIL" line.
func parse(text string) *results {
	r := &results{benches: map[string][]*bench{}}
	pkg := ""
	var skipping string // the benchmark whose SKIP block is being read
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trim := strings.TrimSpace(line)
		if skipping != "" && strings.HasPrefix(line, "    ") && trim != "" {
			// "file_test.go:12: reason" lines under a SKIP: the reason is what follows the location.
			reason := trim
			if i := strings.Index(trim, ": "); i >= 0 && strings.Contains(trim[:i], ".go:") {
				reason = trim[i+2:]
			}
			r.skipped = append(r.skipped, fmt.Sprintf("`%s` (%s): %s", skipping, pkg, reason))
			skipping = ""
			continue
		}
		skipping = ""
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "cpu: "):
			r.cpu = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
		case strings.HasPrefix(line, "goos: "):
			r.goos = strings.TrimPrefix(line, "goos: ")
		case strings.HasPrefix(line, "goarch: "):
			r.goarch = strings.TrimPrefix(line, "goarch: ")
		case strings.HasPrefix(trim, "--- SKIP: Benchmark"):
			skipping = strings.Fields(trim)[2]
		case strings.HasPrefix(trim, "--- FAIL: Benchmark"):
			r.failed = append(r.failed, fmt.Sprintf("`%s` (%s)", strings.Fields(trim)[2], pkg))
		case strings.HasPrefix(line, "FAIL\t"):
			r.failed = append(r.failed, "package "+strings.Fields(line)[1])
		case strings.HasPrefix(line, "Benchmark"):
			name, figs, ok := benchLine(line)
			if !ok {
				continue
			}
			if !slices.Contains(r.pkgs, pkg) {
				r.pkgs = append(r.pkgs, pkg)
			}
			i := slices.IndexFunc(r.benches[pkg], func(b *bench) bool { return b.name == name })
			if i < 0 {
				r.benches[pkg] = append(r.benches[pkg], &bench{name: name, pkg: pkg})
				i = len(r.benches[pkg]) - 1
			}
			r.benches[pkg][i].runs = append(r.benches[pkg][i].runs, figs)
		}
	}
	return r
}

// benchLine reads "BenchmarkX/sub-8   1000   123 ns/op   4.5 custom-unit ...".
func benchLine(line string) (name string, figs []figure, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return "", nil, false
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return "", nil, false
	}
	name = f[0]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", nil, false
		}
		figs = append(figs, figure{unit: f[i+1], text: f[i], value: v})
	}
	return name, figs, true
}

// figures is the benchmark's figures: with one run as printed; with several, each unit's median.
func (b *bench) figures() []figure {
	if len(b.runs) == 1 {
		return b.runs[0]
	}
	var units []string
	for _, run := range b.runs {
		for _, f := range run {
			if !slices.Contains(units, f.unit) {
				units = append(units, f.unit)
			}
		}
	}
	out := make([]figure, 0, len(units))
	for _, u := range units {
		var vals []figure
		for _, run := range b.runs {
			for _, f := range run {
				if f.unit == u {
					vals = append(vals, f)
				}
			}
		}
		slices.SortFunc(vals, func(a, b figure) int {
			switch {
			case a.value < b.value:
				return -1
			case a.value > b.value:
				return 1
			}
			return 0
		})
		out = append(out, vals[len(vals)/2])
	}
	return out
}

// standard units come first, in this order; custom units follow as first reported.
var standard = []string{"ns/op", "B/op", "allocs/op", "MB/s"}

func unitOrder(units []string) []string {
	var out []string
	for _, u := range standard {
		if slices.Contains(units, u) {
			out = append(out, u)
		}
	}
	for _, u := range units {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

func render(r *results) string {
	var w strings.Builder
	w.WriteString("# Benchmarks\n\n")
	w.WriteString("Written by `make bench` (`internal/benchtable`) from the output of one run of the module's benchmarks; ")
	w.WriteString("do not edit it by hand: run `make bench` again. Each figure is what its benchmark reported ")
	w.WriteString("(`b.ReportMetric` units beside ns/op, B/op and allocs/op), each side of a comparison measured in the ")
	w.WriteString("same run, and where a benchmark runs several sides (`direct-`/`proxy-`, `mock-`/`bare-`) in ")
	w.WriteString("alternating rounds. Absolute figures move with the machine's load; the ratios much less. ")
	w.WriteString("What each benchmark measures is in its doc comment; [development.md](development.md) says where the time goes.\n\n")
	fmt.Fprintf(&w, "- run: %s, %s/%s, %d CPUs", r.started.Format("2006-01-02 15:04 UTC"), r.goos, r.goarch, runtime.NumCPU())
	if r.cpu != "" {
		fmt.Fprintf(&w, " (%s)", r.cpu)
	}
	w.WriteString("\n")
	if r.loadStart != "" {
		fmt.Fprintf(&w, "- load average (1, 5, 15 min): %s at the start, %s at the end\n", r.loadStart, r.loadEnd)
	}
	for _, c := range r.commands {
		fmt.Fprintf(&w, "- `%s`\n", c)
	}
	if len(r.failed) > 0 {
		w.WriteString("\n**Failed:** " + strings.Join(r.failed, "; ") + "\n")
	}
	for _, pkg := range r.pkgs {
		fmt.Fprintf(&w, "\n## %s\n", pkg)
		var narrow, wide []*bench
		for _, b := range r.benches[pkg] {
			if len(b.figures()) > maxColumns {
				wide = append(wide, b)
			} else {
				narrow = append(narrow, b)
			}
		}
		if len(narrow) > 0 {
			var units []string
			for _, b := range narrow {
				for _, f := range b.figures() {
					if !slices.Contains(units, f.unit) {
						units = append(units, f.unit)
					}
				}
			}
			units = unitOrder(units)
			w.WriteString("\n| benchmark | runs | " + strings.Join(units, " | ") + " |\n")
			w.WriteString("|---|---:|" + strings.Repeat("---:|", len(units)) + "\n")
			for _, b := range narrow {
				figs := b.figures()
				fmt.Fprintf(&w, "| %s | %d |", b.name, len(b.runs))
				for _, u := range units {
					i := slices.IndexFunc(figs, func(f figure) bool { return f.unit == u })
					if i < 0 {
						w.WriteString(" |")
						continue
					}
					w.WriteString(" " + figs[i].text + " |")
				}
				w.WriteString("\n")
			}
		}
		for _, b := range wide {
			fmt.Fprintf(&w, "\n%s, runs: %d\n\n| figure | value |\n|---|---:|\n", b.name, len(b.runs))
			figs := b.figures()
			var units []string
			for _, f := range figs {
				units = append(units, f.unit)
			}
			for _, u := range unitOrder(units) {
				i := slices.IndexFunc(figs, func(f figure) bool { return f.unit == u })
				fmt.Fprintf(&w, "| %s | %s |\n", u, figs[i].text)
			}
		}
	}
	if len(r.skipped) > 0 {
		w.WriteString("\n## Skipped\n\n")
		for _, s := range r.skipped {
			w.WriteString("- " + s + "\n")
		}
	}
	return w.String()
}

// loadAvg is the machine's load average over 1, 5 and 15 minutes ("" where there is no /proc).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], ", ")
}
