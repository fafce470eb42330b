package receivercheck

import (
	"io"

	"github.com/mediaspec/mediaspec/report"
)

// The reports a CI job keeps: JSON (every verdict and delivery) and JUnit (one case per rule, in
// one class, mediaspec.receiver, as check writes one class per area).

// jsonReport is the JSON report's shape.
type jsonReport struct {
	URL      string        `json:"url"`
	Verdicts []jsonVerdict `json:"verdicts"`
	Cases    []jsonCase    `json:"deliveries"`
}

type jsonVerdict struct {
	Rule   string `json:"rule_id"`
	State  string `json:"verdict"`
	Reason string `json:"reason"`
}

type jsonCase struct {
	Rule      string `json:"rule_id"`
	Name      string `json:"name"`
	WantOK    bool   `json:"want_2xx"`
	Status    int    `json:"status"`
	ElapsedMS int64  `json:"elapsed_ms"`
	Error     string `json:"error,omitempty"`
	OK        bool   `json:"ok"`
}

// WriteJSON writes res as JSON: the receiver's URL, a verdict per rule and every delivery sent.
func WriteJSON(w io.Writer, url string, res Result) error {
	rep := jsonReport{URL: url, Verdicts: []jsonVerdict{}, Cases: []jsonCase{}}
	for _, v := range res.Verdicts {
		rep.Verdicts = append(rep.Verdicts, jsonVerdict(v))
	}
	for _, c := range res.Cases {
		rep.Cases = append(rep.Cases, jsonCase{Rule: c.Rule, Name: c.Name, WantOK: c.Accept, Status: c.Status,
			ElapsedMS: c.Elapsed.Milliseconds(), Error: c.Err, OK: c.OK})
	}
	return report.WriteJSON(w, rep)
}

// junitClass is the one class of the receiver's cases.
const junitClass = "mediaspec.receiver"

// WriteJUnit writes res as JUnit XML: one test case per rule, named "RULE: what a pass means" (at
// most 120 characters), failed or skipped with the verdict's reason, and the rule's deliveries
// with their statuses as its output.
func WriteJUnit(w io.Writer, res Result) error {
	p, f, s := res.Counts()
	suite := report.Suite{Name: junitClass, Tests: p + f + s, Failures: f, Skipped: s}
	for _, v := range res.Verdicts {
		name := v.Rule
		for _, r := range rules {
			if r.id == v.Rule {
				name += ": " + r.pass
			}
		}
		c := report.Case{Classname: junitClass, Name: report.Clip(name, report.MaxNameLen), ClassnameFirst: true}
		switch v.State {
		case Fail:
			c.Failure = &report.Failure{Message: v.Reason}
		case Pass:
		default:
			c.Skipped = &report.Skip{Message: v.Reason}
		}
		for _, d := range res.Cases {
			if d.Rule == v.Rule {
				c.Out += d.describe() + "\n"
			}
		}
		suite.Cases = append(suite.Cases, c)
	}
	return report.WriteJUnit(w, report.JUnit{Tests: suite.Tests, Failures: f, Skipped: s, Suites: []report.Suite{suite}})
}
