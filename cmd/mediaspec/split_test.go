package main

import (
	"flag"
	"runtime"
	"testing"

	"github.com/mediaspec/mediaspec/conformance"
)

// The embedded check splits over processes only when nothing in its configuration asks otherwise
// or stands in the way: --procs given, a label filter, a shard, or a receiver or file server
// address that names one listener (a split run refuses those, and the user never asked to split).
func TestSplitByDefault(t *testing.T) {
	t.Setenv("MEDIASPEC_PROCS", "")
	can := runtime.GOMAXPROCS(0) >= embeddedProcs
	for _, c := range []struct {
		name  string
		edit  func(*conformance.Config)
		procs bool // --procs given on the command line
		want  bool
	}{
		{"whole suite", func(*conformance.Config) {}, false, can},
		{"--procs given", func(*conformance.Config) {}, true, false},
		{"--procs in the file", func(c *conformance.Config) { c.Procs = 3 }, false, false},
		{"a label filter", func(c *conformance.Config) { c.LabelFilter = "HEALTH-001" }, false, false},
		{"a shard", func(c *conformance.Config) { c.Shard = "1/2" }, false, false},
		{"a fixed receiver address", func(c *conformance.Config) { c.ReceiverListen = "127.0.0.1:18555" }, false, false},
		{"a free receiver port", func(c *conformance.Config) { c.ReceiverListen = "127.0.0.1:0" }, false, can},
		{"a receiver URL", func(c *conformance.Config) { c.ReceiverPublicURL = "https://hooks.example/r" }, false, false},
		{"a fixed file server address", func(c *conformance.Config) { c.FilesListen = "127.0.0.1:18556" }, false, false},
	} {
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		n := fs.Int("procs", 1, "")
		if c.procs {
			if err := fs.Parse([]string{"--procs", "1"}); err != nil {
				t.Fatal(err)
			}
		}
		cfg := conformance.Config{Procs: *n, TimeScale: 1}
		c.edit(&cfg)
		if got := splitByDefault(fs, cfg); got != c.want {
			t.Errorf("%s: splits %v, want %v", c.name, got, c.want)
		}
	}
}
