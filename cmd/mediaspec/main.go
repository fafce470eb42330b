// Command mediaspec is the contract kit for the media generation API: it prints the contract
// (spec, rules), runs the stateful mock (mock), checks an implementation against the rules (check),
// receives signed webhooks (receive), judges live traffic between a client and a server (proxy)
// and prints its version (version). Subcommands appear here
// only once they work.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// exitCode is 2 for a usage error or a setup error (anything with ExitCode() 2), else 1.
func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if err.Error() != "" { // a usage error without a message, or a quiet exit, was said already
			fmt.Fprintln(os.Stderr, "mediaspec:", err)
		}
		os.Exit(exitCode(err))
	}
}
