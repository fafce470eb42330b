package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
)

// version, when set at build time with -ldflags "-X main.version=...", overrides every other
// source (the Makefile stamps the release there, and the image's build argument with it).
var version = ""

// release is this source tree's release of mediaspec, bumped with each release (and the tag
// vX.Y.Z cut from it). It is the version of any build of the tree, tagged or not: a submission
// or a copy may carry no tags.
const release = "v0.1.0"

// releaseVersion matches a release's module version, without a pre-release or build suffix (so
// not a pseudo-version such as v0.0.0-20261127000000-abcdef123456, nor v0.1.0+dirty).
var releaseVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`) })

// Version is the version of this binary: the -ldflags value, else the module version go install
// recorded for a release (v0.1.0 under go install …@v0.1.0), else the release of the source tree.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && releaseVersion().MatchString(bi.Main.Version) {
		return bi.Main.Version
	}
	return release
}

// buildRevision is the VCS commit the binary was built from (12 hex digits, with ", modified" for
// a build with uncommitted changes), or "" when the build recorded none (go install of a module).
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev[:min(12, len(rev))] + modified
}

// usageError is a mistake in the command line; the process exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// setupError is a command that cannot start for a reason outside its command line: a port in use,
// no Docker engine, a file that does not load. Its message is one line; the process exits 2.
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

// ExitCode is the process's exit status.
func (e setupError) ExitCode() int { return 2 }

// asSetup marks err, returned before the command's work began, as a setup error (exit 2); nil and
// errors that already exit 2 pass through unchanged.
func asSetup(err error) error {
	if err == nil || exitCode(err) == 2 {
		return err
	}
	return setupError{err: err}
}

// helpRequest is -h or --help on a command: Run prints the command's usage to stdout and succeeds.
type helpRequest struct{ fs *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"diff":    {"compare two contract versions by the versioning rules (exit 0 compatible, 1 breaking, 2 could not compare)", runDiff},
		"check":   {"check a server (or, with no --base-url, the embedded mock) against every rule", runCheck},
		"mock":    {"start the stateful mock of the whole service (prints a key, a balance and the control token)", runMock},
		"spec":    {"print the embedded REST description (or the control API with --control)", runSpec},
		"rules":   {"list the rule catalogue, filtered by area, level, need or text", runRules},
		"proxy":   {"forward a client's traffic to a server unchanged and judge both sides against the contract, live", runProxy},
		"receive": {"receive signed webhooks: verify, dedupe, print one line per delivery, optionally forward", runReceive},
		"version": {"print the version of mediaspec and of the contract", runVersion},

		"merge-reports":  {"join the JSON reports of a run's shards (check --shard K/N) into one verdict per rule and one set of reports", runMergeReports},
		"check-receiver": {"send a webhook receiver signed deliveries, valid and not, and judge the receiver rules", runCheckReceiver},
	}
}

// Run executes one mediaspec command line (without the program name). It writes the command's
// output to stdout and diagnostics to stderr, and returns a usageError for a bad command line.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		printUsage(stderr, cmds)
		return usageError{msg: ""}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(stdout, cmds)
		return nil
	case "-v", "-version", "--version":
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	c, ok := cmds[args[0]]
	if !ok {
		return usageError{msg: fmt.Sprintf("unknown command %q (run 'mediaspec --help' for the list)", args[0])}
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	var help helpRequest
	if errors.As(err, &help) {
		help.fs.SetOutput(stdout)
		help.fs.Usage()
		return nil
	}
	return err
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
		fmt.Fprintf(w, "  %-14s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mediaspec <command> -h' for the flags of a command; 'mediaspec --version' for the version.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 the command ran and found a failure, 2 a usage or setup error.")
}

// newFlagSet makes a flag set that reports errors instead of exiting. Parse prints nothing:
// parseFlags turns a bad flag into one usage error, and -h into a helpRequest whose usage Run
// prints to stdout. Each flag's help names its environment variable as [$NAME] where it has one.
func newFlagSet(name, usage string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mediaspec "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mediaspec %s %s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors. It refuses stray arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return helpRequest{fs: fs}
		}
		return usageError{msg: fmt.Sprintf("%s: %v (run '%s -h' for its flags)", strings.TrimPrefix(fs.Name(), "mediaspec "), err, fs.Name())}
	}
	if fs.NArg() > 0 {
		return usageError{msg: fmt.Sprintf("unexpected argument %q", strings.Join(fs.Args(), " "))}
	}
	return nil
}

// applyEnvNames sets each named flag that was not given on the command line from its environment
// variable (names maps flag to variable), when that is set.
func applyEnvNames(fs *flag.FlagSet, names map[string]string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	flagNames := make([]string, 0, len(names))
	for n := range names {
		flagNames = append(flagNames, n)
	}
	sort.Strings(flagNames)
	for _, flagName := range flagNames {
		envName := names[flagName]
		v, ok := os.LookupEnv(envName)
		if given[flagName] || !ok {
			continue
		}
		if err := fs.Set(flagName, v); err != nil {
			return usageError{msg: fmt.Sprintf("$%s: %v", envName, err)}
		}
	}
	return nil
}
