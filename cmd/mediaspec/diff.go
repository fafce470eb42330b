package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mediaspec/mediaspec/spec/diff"
)

// errBreaking is the outcome of a diff that found a change the versioning rules refuse: exit 1.
var errBreaking = errors.New("the change is breaking (see the findings above)")

// exitError carries the exit status a command wants for an error other than a usage mistake.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }

// runDiff compares two contract versions by the interface's versioning rules: two REST
// descriptions (files, or URLs of a deployed server's /api/v1/openapi.json), or with
// --capabilities two capability catalogues (files, or two servers' API roots). Exit 0 compatible,
// 1 breaking, 2 could not compare.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", "[--capabilities] [--format text|json|markdown] [--key KEY] [--verbose] OLD NEW", stderr)
	caps := fs.Bool("capabilities", false, "compare capability catalogues (files, or servers' API roots ending in /api/v1) instead of REST descriptions [$MEDIASPEC_DIFF_CAPABILITIES]")
	format := fs.String("format", "text", "output format: "+strings.Join(diff.Formats, ", ")+" [$MEDIASPEC_DIFF_FORMAT]")
	key := fs.String("key", "", "API key sent to servers (Authorization: Bearer) [$MEDIASPEC_KEY]")
	oldKey := fs.String("old-key", "", "API key for the OLD server only (default --key) [$MEDIASPEC_DIFF_OLD_KEY]")
	newKey := fs.String("new-key", "", "API key for the NEW server only (default --key) [$MEDIASPEC_DIFF_NEW_KEY]")
	verbose := fs.Bool("verbose", false, "list compatible changes too (json always lists them) [$MEDIASPEC_DIFF_VERBOSE]")
	// Flags may come before, between or after OLD and NEW.
	flags, sides := splitSides(fs, args)
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if err := applyEnvNames(fs, map[string]string{
		"key": "MEDIASPEC_KEY", "capabilities": "MEDIASPEC_DIFF_CAPABILITIES", "format": "MEDIASPEC_DIFF_FORMAT",
		"old-key": "MEDIASPEC_DIFF_OLD_KEY", "new-key": "MEDIASPEC_DIFF_NEW_KEY", "verbose": "MEDIASPEC_DIFF_VERBOSE",
	}); err != nil {
		return err
	}
	if len(sides) != 2 {
		fs.Usage()
		return usageError{msg: fmt.Sprintf("diff takes OLD and NEW, got %d argument(s)", len(sides))}
	}
	if !slices.Contains(diff.Formats, *format) {
		return usageError{msg: fmt.Sprintf("--format %q: want one of %s", *format, strings.Join(diff.Formats, ", "))}
	}
	oldF, newF := diff.Fetcher{Key: *key}, diff.Fetcher{Key: *key}
	if *oldKey != "" {
		oldF.Key = *oldKey
	}
	if *newKey != "" {
		newF.Key = *newKey
	}
	report, err := compareSides(ctx, *caps, oldF, newF, sides[0], sides[1])
	if err != nil {
		if diff.IsCompareError(err) {
			return exitError{code: 2, err: err}
		}
		return err
	}
	if err := report.Write(stdout, *format, *verbose); err != nil {
		return err
	}
	if report.Breaking {
		return errBreaking
	}
	return nil
}

// splitSides separates the flags (with their values) from the positional arguments, so that flags
// may follow them.
func splitSides(fs *flag.FlagSet, args []string) (flags, sides []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(sides, args[i+1:]...)
		case a == "-" || !strings.HasPrefix(a, "-"):
			sides = append(sides, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return flags, sides
}

func compareSides(ctx context.Context, caps bool, oldF, newF diff.Fetcher, oldSrc, newSrc string) (*diff.Report, error) {
	if caps {
		oldCat, err := oldF.Catalogue(ctx, oldSrc)
		if err != nil {
			return nil, err
		}
		newCat, err := newF.Catalogue(ctx, newSrc)
		if err != nil {
			return nil, err
		}
		return diff.Capabilities(oldCat, newCat)
	}
	oldData, err := oldF.Read(ctx, oldSrc)
	if err != nil {
		return nil, err
	}
	newData, err := newF.Read(ctx, newSrc)
	if err != nil {
		return nil, err
	}
	return diff.OpenAPI(ctx, oldSrc, oldData, newSrc, newData)
}
