package main

import (
	"strings"
	"testing"
)

// TestPage reads go test -bench output as it prints it (a package header, custom units, a
// repeated sub-benchmark, a skip with its reason, a failure) and writes every figure into the
// page without naming any benchmark in the generator.
func TestPage(t *testing.T) {
	const out = "goos: linux\ngoarch: amd64\npkg: example.com/m/p\ncpu: Some CPU\n" +
		"BenchmarkBare-2   \t    2000\t     50000 ns/op\t        27.00 median-µs\n" +
		"BenchmarkThrough-2\t    2000\t     90000 ns/op\t        97.00 median-µs\t 3 unjudged\n" +
		"BenchmarkServe/quiet-2 100 10 ns/op 5 B/op 1 allocs/op\n" +
		"BenchmarkServe/quiet-2 100 30 ns/op 5 B/op 1 allocs/op\n" +
		"BenchmarkServe/quiet-2 100 12 ns/op 5 B/op 1 allocs/op\n" +
		"BenchmarkWide-2 1 9 ns/op 1 a 2 b 3 c 4 d 5 e 6 f 7 g 8 h\n" +
		"--- SKIP: BenchmarkHTTPThing\n    x_test.go:33: wrk is not installed (apt-get install -y wrk)\n" +
		"--- FAIL: BenchmarkBroken\n    x_test.go:40: boom\n" +
		"FAIL\texample.com/m/p\t1.0s\n"
	page := render(parse(out))
	for _, want := range []string{
		"## example.com/m/p",
		"| benchmark | runs | ns/op | B/op | allocs/op | median-µs | unjudged |",
		"| BenchmarkBare | 1 | 50000 | | | 27.00 | |",
		"| BenchmarkThrough | 1 | 90000 | | | 97.00 | 3 |",
		"| BenchmarkServe/quiet | 3 | 12 | 5 | 1 | | |", // the median of three runs
		"BenchmarkWide, runs: 1\n\n| figure | value |",
		"| h | 8 |",
		"- `BenchmarkHTTPThing` (example.com/m/p): wrk is not installed (apt-get install -y wrk)",
		"**Failed:** `BenchmarkBroken` (example.com/m/p); package example.com/m/p",
		"(Some CPU)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}
