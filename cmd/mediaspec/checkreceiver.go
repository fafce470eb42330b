package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mediaspec/mediaspec/internal/receivercheck"
	"github.com/mediaspec/mediaspec/report"
)

// runCheckReceiver sends a client's webhook receiver signed deliveries, valid and not, and judges
// the receiver rules from the statuses it answers. Exit 0 all pass, 1 a rule failed, 2 setup.
func runCheckReceiver(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check-receiver", "--url URL --secret whsec_... [flags]", stderr)
	var cfg receivercheck.Config
	fs.StringVar(&cfg.URL, "url", "", "the receiver's webhook endpoint, an http(s) URL (required) [$MEDIASPEC_CHECK_RECEIVER_URL]")
	fs.Func("secret", "the endpoint's signing secret whsec_... (required) [$MEDIASPEC_CHECK_RECEIVER_SECRET]", func(v string) error {
		cfg.Secret = v
		return nil
	})
	fs.DurationVar(&cfg.Timeout, "timeout", receivercheck.DefaultTimeout, "longest wait for one answer; the service gives up after 10s [$MEDIASPEC_CHECK_RECEIVER_TIMEOUT]")
	fs.DurationVar(&cfg.Tolerance, "tolerance", receivercheck.DefaultTolerance, "the timestamp tolerance the receiver applies; the deliveries probe either side of it [$MEDIASPEC_CHECK_RECEIVER_TOLERANCE]")
	verbose := fs.Bool("v", false, "print a line per delivery [$MEDIASPEC_CHECK_RECEIVER_V]")
	jsonReport := fs.String("json-report", "", "write the JSON report (a verdict per rule, every delivery) to this path [$MEDIASPEC_CHECK_RECEIVER_JSON_REPORT]")
	junitReport := fs.String("junit-report", "", "write the JUnit report (a case per rule, class mediaspec.receiver) to this path [$MEDIASPEC_CHECK_RECEIVER_JUNIT_REPORT]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := applyEnv(fs, "MEDIASPEC_CHECK_RECEIVER_"); err != nil {
		return err
	}
	if cfg.URL == "" || cfg.Secret == "" {
		return usageError{msg: "check-receiver: --url and --secret are required (run 'mediaspec check-receiver -h')"}
	}
	if cfg.Timeout <= 0 || cfg.Tolerance <= 0 {
		return usageError{msg: "check-receiver: --timeout and --tolerance must be above 0"}
	}
	// A report that cannot be written is a setup error, found before any delivery is sent.
	for _, path := range []string{*jsonReport, *junitReport} {
		if path == "" {
			continue
		}
		if err := report.WriteFile(path, func(io.Writer) error { return nil }); err != nil {
			return exitError{code: 2, err: fmt.Errorf("check-receiver: the report %s cannot be written: %w", path, err)}
		}
	}
	// The first line is written once the receiver answered: a setup error is all a failed start prints.
	stdout = &firstLine{w: stdout, line: fmt.Sprintf("checking the webhook receiver at %s\n", cfg.URL)}
	res, err := receivercheck.Run(ctx, cfg)
	if errors.Is(err, receivercheck.ErrSetup) {
		return exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	if *verbose {
		for _, c := range res.Cases {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			got := fmt.Sprint(c.Status)
			if c.Status == 0 {
				got = "no answer"
			}
			fmt.Fprintf(stdout, "  %s %-8s %-40s %s\n", mark, c.Rule, c.Name, got)
		}
	}
	for _, v := range res.Verdicts {
		fmt.Fprintf(stdout, "%-4s %-8s %s\n", v.State, v.Rule, v.Reason)
	}
	if *jsonReport != "" {
		if err := report.WriteFile(*jsonReport, func(w io.Writer) error { return receivercheck.WriteJSON(w, cfg.URL, res) }); err != nil {
			return err
		}
	}
	if *junitReport != "" {
		if err := report.WriteFile(*junitReport, func(w io.Writer) error { return receivercheck.WriteJUnit(w, res) }); err != nil {
			return err
		}
	}
	p, f, s := res.Counts()
	cp, cf := res.CaseCounts()
	fmt.Fprintf(stdout, "rules: %d passed, %d failed, %d skipped\n", p, f, s)
	fmt.Fprintf(stdout, "%d passed, %d failed\n", cp, cf)
	if res.Failed() {
		return exitError{code: 1, err: fmt.Errorf("check-receiver: %d rules failed", f)}
	}
	return nil
}
