// Command wrongservers runs the conformance suite against wrong servers (the mock with one
// behaviour changed) and prints the kill rate; see package wrongservers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/mediaspec/mediaspec/conformance/wrongservers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := wrongservers.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "wrongservers:", err)
		os.Exit(1)
	}
}
