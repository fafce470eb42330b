package receivercheck

import (
	"encoding/json"
	"encoding/xml"
	"io"
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
	Out     string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

// junitClass is the one class of the receiver's cases.
const junitClass = "mediaspec.receiver"

// WriteJUnit writes res as JUnit XML: one test case per rule, named "RULE: what a pass means" (at
// most 120 characters), failed or skipped with the verdict's reason, and the rule's deliveries
// with their statuses as its output.
func WriteJUnit(w io.Writer, res Result) error {
	p, f, s := res.Counts()
	suite := junitSuite{Name: junitClass, Tests: p + f + s, Failures: f, Skipped: s}
	for _, v := range res.Verdicts {
		name := v.Rule
		for _, r := range rules {
			if r.id == v.Rule {
				name += ": " + r.pass
			}
		}
		if r := []rune(name); len(r) > 120 {
			name = string(r[:119]) + "…"
		}
		c := junitCase{Class: junitClass, Name: name}
		switch v.State {
		case Fail:
			c.Failure = &junitMessage{Message: v.Reason}
		case Pass:
		default:
			c.Skipped = &junitMessage{Message: v.Reason}
		}
		for _, d := range res.Cases {
			if d.Rule == v.Rule {
				c.Out += d.describe() + "\n"
			}
		}
		suite.Cases = append(suite.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Tests: suite.Tests, Failures: f, Skipped: s, Suites: []junitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
