package conformance_test

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/mediaspec/mediaspec/conformance"
)

// Running the suite from Go against a server: the flags and environment the check command reads
// make the configuration, and Run reports the verdicts. (Not run here: it needs a server.)
func ExampleRun() {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	flags := conformance.RegisterFlags(fs)
	if err := fs.Parse([]string{"--base-url", "http://127.0.0.1:8080/api/v1", "--key", os.Getenv("MEDIASPEC_KEY")}); err != nil {
		panic(err)
	}
	cfg, err := conformance.Load(flags, os.Getenv)
	if err != nil {
		panic(err)
	}
	sum, err := conformance.Run(context.Background(), cfg, os.Stdout, os.Stderr)
	fmt.Println(sum.Specs.Failed, err)
}
