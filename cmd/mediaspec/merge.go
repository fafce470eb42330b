package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mediaspec/mediaspec/report"
)

// runMergeReports joins the JSON reports of the shards of one run (check --shard K/N, one per
// machine) into one run: every spec from the shard that ran it, every rule's verdict computed again
// over them all, written as the JUnit, JSON and HTML reports check writes. It prints the rule and
// spec tallies and exits as check would have over the whole run: 0 passed, 1 failed, 2 when the
// reports cannot be merged (a shard missing or given twice, shards of different runs). With
// --passes the reports are passes over one target's specs instead (report.MergePasses): CI runs
// the specs that wait out hours of the target's clock in one long pass, with --long, against a
// mock whose clock runs faster, and merges it with mode p's and mode t's first pass into the
// figure each floor checks.
func runMergeReports(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge-reports", "[--passes] [--junit-report FILE] [--json-report FILE] [--html-report FILE] SHARD.json...", stderr)
	junit := fs.String("junit-report", "", "write the merged JUnit report to this path")
	jsonOut := fs.String("json-report", "", "write the merged JSON report to this path")
	html := fs.String("html-report", "", "write the merged HTML rule report to this path")
	passes := fs.Bool("passes", false, "the reports are passes over one target's specs, not shards (e.g. a second pass with check --real-time --long against a faster clock): each spec counts from the pass that ran it")
	var floor minJudged
	fs.Var(&floor, "min-judged", "fail (exit 1) when the merged run judged fewer of the text rules than this, e.g. 85%")
	// Flags may come before, between or after the reports' paths.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return parseFlags(fs, args) // the same usage error (or help) parseFlags gives
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) == 0 {
		return usageError{msg: "merge-reports: name the JSON reports of the shards (check --shard K/N --json-report FILE), e.g. mediaspec merge-reports shard-1.json shard-2.json --html-report report.html"}
	}
	parts := make([]report.Results, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			parts[i], err = report.ReadResults(data)
		}
		if err != nil {
			return setupError{fmt.Errorf("merge-reports: %s: %w", f, err)}
		}
	}
	merge, what := report.MergeShards, "shards"
	if *passes {
		merge, what = report.MergePasses, "passes"
	}
	res, err := merge(parts)
	if err != nil {
		return setupError{fmt.Errorf("merge-reports: %w", err)}
	}
	var errs []error
	for _, w := range []struct {
		path  string
		write func(io.Writer) error
	}{{*junit, res.WriteJUnit}, {*jsonOut, res.WriteJSON}, {*html, res.WriteHTML}} {
		if w.path != "" {
			errs = append(errs, report.WriteFile(w.path, w.write))
		}
	}
	if n := len(res.Advisories); n > 0 {
		fmt.Fprintf(stdout, "advisories: %d differences from the reference's own choices (never failures)\n", n)
	}
	fmt.Fprintf(stdout, "merged %d %s of %s\n", len(parts), what, res.Run.Target)
	fmt.Fprintln(stdout, res.RuleLine())
	fmt.Fprintln(stdout, res.SpecLine())
	fmt.Fprintln(stdout, res.Headline())
	if err := res.Err(); err != nil {
		return err
	}
	if c := res.Coverage; floor.set && c.Percent() < floor.percent {
		return fmt.Errorf("judged %d of %d text rules (%.1f%%), below --min-judged %s", c.Judged, c.Total, c.Percent(), floor.String())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("merge-reports: %w", err)
	}
	return nil
}
