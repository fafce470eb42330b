package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError is a mistake in the command line; the process exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"check":   {"check a server (or, with no --base-url, the embedded mock) against every rule", runCheck},
		"mock":    {"start the stateful mock of the whole service (prints a key, a balance and the control token)", runMock},
		"spec":    {"print the embedded REST description (or the control API with --control)", runSpec},
		"rules":   {"list the rule catalogue, filtered by area, level, need or text", runRules},
		"receive": {"receive signed webhooks: verify, dedupe, print one line per delivery, optionally forward", runReceive},
		"version": {"print the version of mediaspec and of the contract", runVersion},
	}
}

// Run executes one mediaspec command line (without the program name). It writes the command's
// output to stdout and diagnostics to stderr, and returns a usageError for a bad command line.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout, cmds)
		if len(args) == 0 {
			return usageError{msg: ""}
		}
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		printUsage(stderr, cmds)
		return usageError{msg: fmt.Sprintf("unknown command %q", args[0])}
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func printUsage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: mediaspec <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mediaspec <command> -h' for the flags of a command.")
}

// newFlagSet makes a flag set that reports errors instead of exiting and prints its usage to stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mediaspec "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mediaspec %s %s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors. It refuses stray arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return usageError{msg: ""}
		}
		return usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{msg: fmt.Sprintf("unexpected argument %q", strings.Join(fs.Args(), " "))}
	}
	return nil
}
