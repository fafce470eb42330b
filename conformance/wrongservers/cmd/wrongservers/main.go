// Command wrongservers runs the conformance suite against wrong servers (the mock with one
// behaviour changed) and prints the kill rate; with --legal, against the legal variants (the mock's
// answers rewritten into other forms the text allows), each of which must pass. See package
// wrongservers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"

	"github.com/mediaspec/mediaspec/conformance/wrongservers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	run := wrongservers.Run
	if slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == "--legal" || a == "-legal" || a == "--legal=true" }) {
		run = wrongservers.RunLegal
	}
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "wrongservers:", err)
		os.Exit(1)
	}
}
