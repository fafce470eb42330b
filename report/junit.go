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
	XMLName  xml.Name `xml:"testsuites"`
	Name     *string  `xml:"name,attr,omitempty"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     *float64 `xml:"time,attr,omitempty"` // seconds
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>.
type Suite struct {
	Name      string   `xml:"name,attr"`
	Tests     int      `xml:"tests,attr"`
	Failures  int      `xml:"failures,attr"`
	Skipped   int      `xml:"skipped,attr"`
	Time      *float64 `xml:"time,attr,omitempty"` // seconds
	Timestamp string   `xml:"timestamp,attr,omitempty"`
	// Properties and Out carry what is no test case (the advisories' suite).
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Case      `xml:"testcase"`
	Out        string      `xml:"system-out,omitempty"`
}

// Properties is a suite's <properties>.
type Properties struct {
	List []Property `xml:"property"`
}

// Property is one <property> of a suite.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one <testcase>: passed unless Failure or Skipped is set.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr,omitempty"`
	File      string   `xml:"file,attr,omitempty"`
	Time      *float64 `xml:"time,attr,omitempty"` // seconds
	Failure   *Failure `xml:"failure,omitempty"`
	Skipped   *Skip    `xml:"skipped,omitempty"`
	Out       string   `xml:"system-out,omitempty"`
	// ClassnameFirst writes classname before name, as check-receiver's report always has, so
	// the documents CI jobs keep stay byte for byte the same.
	ClassnameFirst bool `xml:"-"`
}

// Failure is a failed case: its message (one sentence), its type, and the whole story as body.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// Skip is a skipped case and why.
type Skip struct {
	Message string `xml:"message,attr"`
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
