package main

import (
	"fmt"
	"io"

	"github.com/mediaspec/mediaspec/proxy"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// writeProxyReports writes the proxy's reports with the suite's writers: the JSON report is the
// findings with the run header; the JUnit and HTML reports show each finding as a spec of its
// rule's area (failed, or passed with the advisory as its note), and the HTML report lists every
// rule of the catalogue with its verdict (not covered when no traffic showed it broken).
func writeProxyReports(jsonPath, junitPath, htmlPath string, rules *spec.Catalogue, run proxyRun, rep proxy.Report, failed bool) error {
	if jsonPath != "" {
		doc := struct {
			Run proxyRun `json:"run"`
			proxy.Report
			Succeeded bool `json:"succeeded"`
		}{run, rep, !failed}
		if err := report.WriteFile(jsonPath, func(w io.Writer) error { return report.WriteJSON(w, doc) }); err != nil {
			return err
		}
	}
	if junitPath == "" && htmlPath == "" {
		return nil
	}
	res := proxyResults(rules, run, rep, failed)
	if junitPath != "" {
		if err := report.WriteFile(junitPath, func(w io.Writer) error { return res.WriteJUnit(w) }); err != nil {
			return err
		}
	}
	if htmlPath != "" {
		if err := report.WriteFile(htmlPath, func(w io.Writer) error { return res.WriteHTML(w) }); err != nil {
			return err
		}
	}
	return nil
}

// proxyResults turns the findings into the suite's Results (report.FindingResults): a spec per
// finding.
func proxyResults(rules *spec.Catalogue, run proxyRun, rep proxy.Report, failed bool) report.Results {
	catalogue := make([]report.Rule, len(rules.Rules))
	for i, r := range rules.Rules {
		catalogue[i] = report.Rule(r)
	}
	res := report.FindingResults("mediaspec proxy", report.RunInfo{Target: run.Upstream, Version: run.Version, Contract: run.Contract,
		Started: run.Started, Duration: run.Duration, Mode: modeLine(run)}, catalogue, rep.Findings)
	if len(rep.Findings) == 0 {
		// A clean run is one case that says what was judged, never a JUnit file of no tests.
		s := report.SpecResult{Area: "proxy", State: report.Passed,
			Leaf: fmt.Sprintf("%d exchanges forwarded and judged against every rule of the traffic: no rule broken", rep.Exchanges-rep.Unjudged)}
		if rep.Unjudged > 0 {
			s.Leaf += fmt.Sprintf(" (%d more forwarded but not judged: the judging queue was full)", rep.Unjudged)
		}
		if rep.Exchanges == 0 {
			s.State, s.Leaf, s.Reason = report.Skipped, "no exchange was forwarded: nothing was judged", "the proxy forwarded no traffic"
		}
		s.Text = s.Leaf
		res.Specs = append(res.Specs, s)
		res.Tally()
	}
	res.Succeeded = !failed
	return res
}
