// Command mediaspec is the contract kit for the media generation API. Its commands:
//
//   - check: check a server (by default the embedded mock) against every rule of the contract
//   - check-receiver: send a webhook receiver signed deliveries, valid and not, and judge it
//   - diff: compare two versions of the contract (REST descriptions or capability catalogues) by
//     the interface's versioning rules
//   - merge-reports: merge the JSON reports of a check split with --shard into one set of reports
//   - mock: run the stateful mock of the whole service
//   - proxy: forward a client's traffic to a server unchanged and judge both sides live
//   - receive: receive signed webhooks, verify and dedupe them, print one line per delivery
//   - rules: list the rule catalogue
//   - spec: print the embedded REST description (or the test-control API's)
//   - version: print the version of mediaspec and of the contract
//
// main is a thin call into Run; README.md and docs/ describe each command.
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
