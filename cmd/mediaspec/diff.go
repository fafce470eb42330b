package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mediaspec/mediaspec/conformance"
	"io"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

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
	exceptions := fs.String("exceptions", "", "YAML file of recorded exceptions (rule, change, path, reason): a failing finding it names passes as a note with its reason; an exception no finding matches fails [$MEDIASPEC_DIFF_EXCEPTIONS]")
	maxBody := conformance.ByteSize(diff.DefaultMaxBody)
	fs.Var(&maxBody, "max-answer-bytes", "largest answer body read from a server (a description or catalogue page), a `size` such as 64MiB; a larger one stops the comparison, naming it [$MEDIASPEC_DIFF_MAX_ANSWER_BYTES]")
	// Flags may come before, between or after OLD and NEW.
	flags, sides := splitSides(fs, args)
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if err := applyEnvNames(fs, map[string]string{
		"key": "MEDIASPEC_KEY", "capabilities": "MEDIASPEC_DIFF_CAPABILITIES", "format": "MEDIASPEC_DIFF_FORMAT",
		"old-key": "MEDIASPEC_DIFF_OLD_KEY", "new-key": "MEDIASPEC_DIFF_NEW_KEY", "verbose": "MEDIASPEC_DIFF_VERBOSE",
		"exceptions": "MEDIASPEC_DIFF_EXCEPTIONS", "max-answer-bytes": "MEDIASPEC_DIFF_MAX_ANSWER_BYTES",
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
	if maxBody <= 0 {
		return usageError{msg: "--max-answer-bytes must be above 0"}
	}
	oldF, newF := diff.Fetcher{Key: *key, MaxBody: int64(maxBody)}, diff.Fetcher{Key: *key, MaxBody: int64(maxBody)}
	if *oldKey != "" {
		oldF.Key = *oldKey
	}
	if *newKey != "" {
		newF.Key = *newKey
	}
	var excepted []exception
	if *exceptions != "" {
		var err error
		if excepted, err = readExceptions(*exceptions); err != nil {
			return exitError{code: 2, err: err}
		}
	}
	report, err := compareSides(ctx, *caps, oldF, newF, sides[0], sides[1])
	if err != nil {
		if diff.IsCompareError(err) {
			return exitError{code: 2, err: err}
		}
		return err
	}
	unused := applyExceptions(report, excepted)
	if err := report.Write(stdout, *format, *verbose); err != nil {
		return err
	}
	if len(unused) > 0 {
		return exitError{code: 1, err: fmt.Errorf("%s: %s matches no finding: remove it (a recorded exception stays only while its change is unreleased)", *exceptions, strings.Join(unused, "; "))}
	}
	if report.Breaking {
		return errBreaking
	}
	return nil
}

// exception is one entry of a diff --exceptions file: a change the project releases although the
// versioning rules refuse it (or without the bump they ask for), and why.
type exception struct {
	Rule   string `yaml:"rule"`
	Change string `yaml:"change"`
	Path   string `yaml:"path"`
	Reason string `yaml:"reason"`
}

func (e exception) String() string {
	return fmt.Sprintf("exception %s %s %s", e.Rule, e.Change, e.Path)
}

// exceptionKeys are the keys of an exceptions file's entry, in the order docs/diff.md lists them.
var exceptionKeys = []string{"rule", "change", "path", "reason"}

// readExceptions reads an exceptions file: {exceptions: [{rule, change, path, reason}]}, each with
// a rule, a change and a reason (path is optional: without it the exception covers the change
// wherever it is). A problem names the file and line and what is wrong in the file's own words
// (an unknown key and the keys an entry may have, a missing field, a value that is not text).
func readExceptions(path string) ([]exception, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--exceptions: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("--exceptions %s: not YAML: %v", path, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, nil // an empty file records nothing
	}
	at := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("--exceptions %s:%d: %s", path, n.Line, fmt.Sprintf(format, args...))
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, at(doc, "want a mapping with the one key exceptions (a list of entries)")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value != "exceptions" {
			return nil, at(k, "unknown key %q: the file has the one key exceptions", k.Value)
		}
		list = v
	}
	if list == nil || (list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, at(list, "exceptions: want a list of entries (each with %s)", strings.Join(exceptionKeys, ", "))
	}
	var out []exception
	for i, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			return nil, at(item, "entry %d: want a mapping with %s", i+1, strings.Join(exceptionKeys, ", "))
		}
		var e exception
		fields := map[string]*string{"rule": &e.Rule, "change": &e.Change, "path": &e.Path, "reason": &e.Reason}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			dst, ok := fields[k.Value]
			if !ok {
				return nil, at(k, "entry %d: unknown key %q (an entry has %s)", i+1, k.Value, strings.Join(exceptionKeys, ", "))
			}
			if v.Kind != yaml.ScalarNode {
				return nil, at(v, "entry %d: %s: want text", i+1, k.Value)
			}
			*dst = v.Value
		}
		for _, need := range []struct{ key, v string }{{"rule", e.Rule}, {"change", e.Change}, {"reason", e.Reason}} {
			if strings.TrimSpace(need.v) == "" {
				return nil, at(item, "entry %d needs %s (an entry has rule, change and reason; path is optional)", i+1, need.key)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// applyExceptions turns each failing finding an exception names into a note carrying the reason,
// sets the report's verdict again, and returns the exceptions that matched nothing.
func applyExceptions(r *diff.Report, list []exception) (unused []string) {
	used := make([]bool, len(list))
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Verdict.Fails() {
			continue
		}
		for j, e := range list {
			if e.Rule == f.Rule && e.Change == f.Change && (e.Path == "" || e.Path == f.Path) {
				used[j] = true
				f.Verdict = diff.Note
				f.Message += " (recorded exception: " + strings.TrimSpace(e.Reason) + ")"
				break
			}
		}
	}
	r.Breaking = false
	for _, f := range r.Findings {
		r.Breaking = r.Breaking || f.Verdict.Fails()
	}
	for j, e := range list {
		if !used[j] {
			unused = append(unused, e.String())
		}
	}
	return unused
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
