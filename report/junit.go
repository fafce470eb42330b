package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"
)

// MaxNameLen is the longest JUnit test case name a report writes (Clip cuts it).
const MaxNameLen = 120

// JUnit is a JUnit XML document: <testsuites>. Name and Time are check's (a named, timed run);
// nil leaves the attribute out, as check-receiver's report does.
type JUnit struct {
	XMLName  xml.Name `xml:"testsuites"`          // always testsuites
	Name     *string  `xml:"name,attr,omitempty"` // the run's name; nil leaves it out
	Tests    int      `xml:"tests,attr"`          // all cases
	Failures int      `xml:"failures,attr"`       // failed cases
	Skipped  int      `xml:"skipped,attr"`        // skipped cases
	Time     *float64 `xml:"time,attr,omitempty"` // seconds
	Suites   []Suite  `xml:"testsuite"`           // one per area for check
}

// Suite is one <testsuite>.
type Suite struct {
	Name      string   `xml:"name,attr"`                // check: mediaspec.<area>
	Tests     int      `xml:"tests,attr"`               // its cases
	Failures  int      `xml:"failures,attr"`            // its failed cases
	Skipped   int      `xml:"skipped,attr"`             // its skipped cases
	Time      *float64 `xml:"time,attr,omitempty"`      // seconds
	Timestamp string   `xml:"timestamp,attr,omitempty"` // RFC 3339, when the suite began
	// Properties and Out carry what is no test case (the advisories' suite).
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Case      `xml:"testcase"`             // one per spec
	Out        string      `xml:"system-out,omitempty"` // what the suite printed outside its cases
}

// Properties is a suite's <properties>.
type Properties struct {
	List []Property `xml:"property"` // in the order written
}

// Property is one <property> of a suite.
type Property struct {
	Name  string `xml:"name,attr"`  // what the value is
	Value string `xml:"value,attr"` // the value as text
}

// Case is one <testcase>: passed unless Failure or Skipped is set.
type Case struct {
	Name      string   `xml:"name,attr"`                // the case's (check: the spec's) text
	Classname string   `xml:"classname,attr,omitempty"` // its suite's name, as CI tools group cases
	File      string   `xml:"file,attr,omitempty"`      // the case's source file, relative to the module root
	Time      *float64 `xml:"time,attr,omitempty"`      // seconds
	Failure   *Failure `xml:"failure,omitempty"`        // set when the case failed
	Skipped   *Skip    `xml:"skipped,omitempty"`        // set when the case was skipped
	Out       string   `xml:"system-out,omitempty"`     // what the case printed
	// ClassnameFirst writes classname before name, as check-receiver's report always has, so
	// the documents CI jobs keep stay byte for byte the same.
	ClassnameFirst bool `xml:"-"`
}

// Failure is a failed case: its message (one sentence), its type, and the whole story as body.
type Failure struct {
	Message string `xml:"message,attr"`        // one sentence
	Type    string `xml:"type,attr,omitempty"` // check: failed, blocked or interrupted
	Body    string `xml:",chardata"`           // the whole story (check: the reason and the transcript)
}

// Skip is a skipped case and why.
type Skip struct {
	Message string `xml:"message,attr"` // why it was skipped
}

// MarshalXML writes the case with its attributes in the order ClassnameFirst says.
func (c Case) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	type plain Case // without this method
	p := plain(c)
	if c.ClassnameFirst {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "classname"}, Value: c.Classname})
		p.Classname = ""
	}
	return e.EncodeElement(p, start)
}

// Seconds is d in seconds, for a Time attribute.
func Seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// WriteJUnit writes doc as an indented JUnit XML document: the XML header, the document, a
// final newline.
func WriteJUnit(w io.Writer, doc JUnit) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJSON writes v as JSON indented by two spaces, with a final newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteFile creates path and lets write fill it; a failed write names the path. Every report of
// the project's commands is written through it.
func WriteFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		_ = fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

// Clip cuts s to at most n runes, marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
