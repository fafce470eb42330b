package report

import (
	"fmt"
	"html/template"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"
)

// RunInfo is the header of every report: what was checked, with what, when, and how.
type RunInfo struct {
	Target    string        `json:"target"`
	Version   string        `json:"mediaspec_version"`
	Contract  string        `json:"contract_version"`
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration_ns"`
	Filter    string        `json:"label_filter,omitempty"`
	Mode      string        `json:"mode"`
	Cancelled string        `json:"cancelled,omitempty"` // why the run stopped early, if it did
}

// WriteJSON writes the results as indented JSON: run header, suite outcome, every spec, every rule
// verdict.
func (r Results) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// Sentence is the first statement of a failure message in words: the text before the first
// transcript line ("> ..." or "< ...") or schema dump, on one line, at most 300 characters.
func Sentence(msg string) string {
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "> ") || strings.HasPrefix(t, "< ") || t == ">" || t == "<" || strings.HasPrefix(t, "--- call ") ||
			t == "Schema:" || t == "Value:" {
			break
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	return Clip(strings.Join(parts, " "), 300)
}

// maxTranscriptInHTML bounds one spec's transcript in the HTML report: the head and the tail are
// kept (the JSON report has it whole). transcriptBudgetHTML bounds them all together, so a run
// with many failures stays a page a browser opens (under 2 MB); each then gets an equal share, at
// least minTranscriptInHTML.
const (
	maxTranscriptInHTML  = 24 << 10
	transcriptBudgetHTML = 640 << 10
	minTranscriptInHTML  = 2 << 10
)

func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := strings.ToValidUTF8(s[:n/3], ""), strings.ToValidUTF8(s[len(s)-2*n/3:], "")
	return head + fmt.Sprintf("\n... (%d bytes cut here; the JSON report has the whole transcript) ...\n", len(s)-len(head)-len(tail)) + tail
}

// Cause is one root cause of failures: the specs that failed at the same assertion with the same
// message once ids and numbers are masked.
type Cause struct {
	Sentence string
	Location string // where the assertion is
	Rules    []string
	Specs    []SpecResult
}

// volatile masks ids, hex and numbers so one cause over many rows groups as one.
var volatile = regexp.MustCompile(`[a-z]+_[0-9A-Za-z]{8,}|\b[0-9a-f]{16,}\b|\d+(\.\d+)?`)

// calls are the requests a message names; one broken answer shape over many routes is one cause.
var calls = regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) /\S*`)

// causeKey groups failures: a broken description by what broke (wherever the call was made), any
// other failure by its assertion's place and message, ids and numbers masked.
func causeKey(s SpecResult) string {
	sentence := volatile.ReplaceAllString(Sentence(s.Reason), "#")
	if strings.Contains(sentence, "broke the REST description") {
		return calls.ReplaceAllString(sentence, "CALL")
	}
	return s.FailureLocation + " " + sentence
}

// Causes groups the failed specs by cause, the cause that broke most specs first.
func (r Results) Causes() []Cause {
	var out []*Cause
	by := map[string]*Cause{}
	rules := map[*Cause]map[string]bool{}
	for _, s := range r.Specs {
		if s.State != Failed {
			continue
		}
		key := causeKey(s)
		c := by[key]
		if c == nil {
			c = &Cause{Sentence: Sentence(s.Reason), Location: s.FailureLocation}
			by[key] = c
			rules[c] = map[string]bool{}
			out = append(out, c)
		}
		c.Specs = append(c.Specs, s)
		for _, id := range s.Blamed() {
			if !rules[c][id] {
				rules[c][id] = true
				c.Rules = append(c.Rules, id)
			}
		}
	}
	res := make([]Cause, 0, len(out))
	for _, c := range out {
		sort.Strings(c.Rules)
		res = append(res, *c)
	}
	sort.SliceStable(res, func(i, j int) bool { return len(res[i].Specs) > len(res[j].Specs) })
	return res
}

// AreaSummary is one area's tallies in the HTML report.
type AreaSummary struct {
	Area                    string
	Passed, Failed, Skipped int
	FailedRules             int
}

// Areas tallies the selected specs per area, areas with failures first, then by name.
func (r Results) Areas() []AreaSummary {
	by := map[string]*AreaSummary{}
	rulesFailed := map[string]map[string]bool{}
	for _, s := range r.Specs {
		if s.Reason == NotSelected {
			continue
		}
		a := by[s.Area]
		if a == nil {
			a = &AreaSummary{Area: s.Area}
			by[s.Area] = a
			rulesFailed[s.Area] = map[string]bool{}
		}
		switch s.State {
		case Passed:
			a.Passed++
		case Failed:
			a.Failed++
			for _, id := range s.Blamed() {
				rulesFailed[s.Area][id] = true
			}
		default:
			a.Skipped++
		}
	}
	out := make([]AreaSummary, 0, len(by))
	for name, a := range by {
		a.FailedRules = len(rulesFailed[name])
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Failed > 0) != (out[j].Failed > 0) {
			return out[i].Failed > 0
		}
		return out[i].Area < out[j].Area
	})
	return out
}

// verdictRank orders the rule table: failures first.
var verdictRank = map[string]int{Failed: 0, Skipped: 1, Passed: 2, NotCovered: 3, Unobservable: 4}

type htmlSpec struct {
	SpecResult
	Anchor     string
	Sentence   string
	Transcript string
}

type htmlData struct {
	Results
	Failed   []htmlSpec
	Others   []htmlSpec
	Rules    []RuleVerdict
	AreaRows []AreaSummary
	Causes   []Cause
	Anchors  map[string]string // spec text -> anchor
}

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"verdictClass": func(v string) string { return strings.ReplaceAll(v, " ", "-") },
	"anchor":       func(anchors map[string]string, text string) string { return anchors[text] },
	"dur":          func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"when":         func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Suite}}: conformance report</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:100em;color:#222}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em;background:#f6f6f6;padding:.5em;margin:.3em 0;max-height:30em;overflow:auto}
.header th{width:12em;background:#f3f3f3}
.passed{background:#dfd}.failed{background:#fdd}.skipped{background:#ffd}
.not-covered{background:#eee}.unobservable{background:#def}
.sentence{font-weight:600}
.small{font-size:.85em;color:#555}
</style></head><body>
<h1>{{.Suite}}: {{if .Succeeded}}passed{{else}}failed{{end}}</h1>
<table class="header">
<tr><th>Target</th><td>{{.Run.Target}}</td></tr>
<tr><th>Mode</th><td>{{.Run.Mode}}</td></tr>
<tr><th>mediaspec</th><td>{{.Run.Version}} (contract {{.Run.Contract}})</td></tr>
<tr><th>Started</th><td>{{when .Run.Started}}</td></tr>
<tr><th>Duration</th><td>{{dur .Run.Duration}}</td></tr>
<tr><th>Label filter</th><td>{{if .Run.Filter}}<code>{{.Run.Filter}}</code>{{else}}(none: every spec){{end}}</td></tr>
{{if .Run.Cancelled}}<tr><th>Stopped early</th><td class="failed">{{.Run.Cancelled}}</td></tr>{{end}}
<tr><th>Specs</th><td>{{.SpecCounts.Passed}} passed, {{.SpecCounts.Failed}} failed, {{.SpecCounts.Skipped}} skipped</td></tr>
<tr><th>Rules</th><td>{{.RuleCounts.Passed}} passed, {{.RuleCounts.Failed}} failed, {{.RuleCounts.Skipped}} skipped, {{.RuleCounts.NotCovered}} not covered, {{.RuleCounts.Unobservable}} unobservable</td></tr>
</table>
{{range .SuiteFailures}}<pre class="failed">{{.}}</pre>{{end}}
<h2>Areas</h2>
<table><thead><tr><th>Area</th><th>Passed</th><th>Failed</th><th>Skipped</th><th>Rules failed</th></tr></thead><tbody>
{{range .AreaRows}}<tr><td>{{.Area}}</td><td>{{.Passed}}</td><td{{if .Failed}} class="failed"{{end}}>{{.Failed}}</td><td>{{.Skipped}}</td><td>{{.FailedRules}}</td></tr>
{{end}}</tbody></table>
{{if .Causes}}<h2>Failures by cause ({{len .Causes}})</h2>
<table><thead><tr><th>Cause</th><th style="width:6em">Specs</th><th style="width:14em">Rules</th><th style="width:16em">Where</th></tr></thead><tbody>
{{range .Causes}}<tr><td>{{.Sentence}}<details><summary>the specs</summary><ul>{{range .Specs}}<li><a href="#{{anchor $.Anchors .Text}}">{{.Text}}</a></li>{{end}}</ul></details></td>
<td class="failed">{{len .Specs}}</td><td>{{range .Rules}}<a href="#{{.}}">{{.}}</a> {{end}}</td><td>{{.Location}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Advisories}}<h2>Advisories ({{len .Advisories}}): differences from the reference's own choices, never failures</h2>
<table><thead><tr><th>Call</th><th style="width:6em">Status</th><th>Field</th><th>The reference document says</th><th style="width:5em">Seen</th><th>Specs</th></tr></thead><tbody>
{{range .Advisories}}<tr><td>{{.Operation}}</td><td>{{if .Status}}{{.Status}}{{end}}</td><td><code>{{.Path}}</code></td><td>{{.Reference}}</td><td>{{.Count}}</td><td class="small">{{range .Specs}}{{.}}<br>{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Failed}}<h2>Failed specs ({{len .Failed}})</h2>
{{range .Failed}}<div id="{{.Anchor}}" class="spec">
<h3 class="failed">{{.Text}}</h3>
<p class="small">{{.Area}} · {{.Location}}{{if .FailureLocation}} · failed at {{.FailureLocation}}{{end}} · rules {{range .Blamed}}<a href="#{{.}}">{{.}}</a> {{end}}</p>
<p class="sentence">{{.Sentence}}</p>
<pre>{{.Reason}}</pre>
{{if .Transcript}}<details><summary>every call of the spec</summary><pre>{{.Transcript}}</pre></details>{{end}}
</div>
{{end}}{{end}}
<h2>Rules (failures first)</h2>
<table><thead><tr><th style="width:7em">Rule</th><th style="width:5em">Level</th><th style="width:9em">Section</th><th>Statement</th><th style="width:7em">Verdict</th><th>Detail</th></tr></thead><tbody>
{{range .Rules}}<tr id="{{.Rule.ID}}">
<td>{{.Rule.ID}}</td><td>{{.Rule.Level}}</td><td>{{.Rule.Section}}</td>
<td>{{.Rule.Statement}}{{if .Rule.Interpretation}}<br><em>Interpretation: {{.Rule.Interpretation}}</em>{{end}}</td>
<td class="{{verdictClass .Verdict}}">{{.Verdict}}</td>
<td>{{if .Reason}}<pre>{{.Reason}}</pre>{{end}}
{{if .Specs}}<details><summary>{{len .Specs}} spec(s)</summary><ul>{{range .Specs}}<li>{{with anchor $.Anchors .}}<a href="#{{.}}">{{end}}{{.}}{{if anchor $.Anchors .}}</a>{{end}}</li>{{end}}</ul></details>{{end}}</td>
</tr>
{{end}}</tbody></table>
<h2>Other specs</h2>
<table><thead><tr><th>Spec</th><th style="width:8em">Area</th><th style="width:7em">Outcome</th><th>Detail</th></tr></thead><tbody>
{{range .Others}}<tr><td>{{.Text}}<br><span class="small">{{.Location}} · {{range .Rules}}{{.}} {{end}}</span></td><td>{{.Area}}</td><td class="{{verdictClass .State}}">{{.State}}</td>
<td>{{.Reason}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))

// WriteHTML writes the HTML report: a header (target, versions, start, duration, filter, mode), a
// summary per area, the failed specs (each with its transcript, once), every rule with failures
// first, then the other specs.
func (r Results) WriteHTML(w io.Writer) error {
	d := htmlData{Results: r, AreaRows: r.Areas(), Causes: r.Causes(), Anchors: map[string]string{}}
	share := maxTranscriptInHTML
	if r.SpecCounts.Failed > 0 {
		share = max(minTranscriptInHTML, min(maxTranscriptInHTML, transcriptBudgetHTML/r.SpecCounts.Failed))
	}
	for i, s := range r.Specs {
		h := htmlSpec{SpecResult: s, Anchor: fmt.Sprintf("spec-%d", i+1)}
		if s.State == Failed {
			h.Sentence = Sentence(s.Reason)
			h.Transcript = clipMiddle(s.Transcript, share)
			h.Reason = clipMiddle(s.Reason, share/2)
			d.Failed = append(d.Failed, h)
			d.Anchors[s.Text] = h.Anchor
			continue
		}
		h.Reason = Clip(s.Reason, 500)
		d.Others = append(d.Others, h)
	}
	d.Rules = append([]RuleVerdict(nil), r.Rules...)
	sort.SliceStable(d.Rules, func(i, j int) bool { return verdictRank[d.Rules[i].Verdict] < verdictRank[d.Rules[j].Verdict] })
	return htmlReport.Execute(w, d)
}

// JUnitName is a spec's JUnit test case name: "RULE-ID: text" (several ids joined by commas), at
// most 120 characters.
func JUnitName(s SpecResult) string {
	text := s.Leaf
	if text == "" {
		text = s.Text
	}
	return Clip(strings.Join(s.Rules, ", ")+": "+text, MaxNameLen)
}

// WriteJUnit writes a JUnit XML report with one test suite per area, classname mediaspec.<area>,
// case names "RULE-ID: text", the spec's file relative to the module root, and for a failure its
// sentence as the message and its reason and transcript as the body. Specs the label filter left
// out are not listed.
func (r Results) WriteJUnit(w io.Writer) error {
	by := map[string]*Suite{}
	var order []string
	doc := JUnit{Name: &r.Suite, Time: Seconds(r.Run.Duration)}
	for _, s := range r.Specs {
		if s.Reason == NotSelected {
			continue
		}
		name := "mediaspec." + strings.ReplaceAll(s.Area, " ", "_")
		ts := by[name]
		if ts == nil {
			ts = &Suite{Name: name, Time: new(float64)}
			if !r.Run.Started.IsZero() {
				ts.Timestamp = r.Run.Started.UTC().Format(time.RFC3339)
			}
			by[name] = ts
			order = append(order, name)
		}
		c := Case{Name: JUnitName(s), Classname: name, File: strings.Split(s.Location, ":")[0], Time: Seconds(s.Duration)}
		switch s.State {
		case Failed:
			body := s.Reason
			if s.Transcript != "" {
				body += "\n\n" + clipMiddle(s.Transcript, maxTranscriptInHTML)
			}
			c.Failure = &Failure{Message: Sentence(s.Reason), Type: "failed", Body: body}
			ts.Failures++
		case Skipped:
			c.Skipped = &Skip{Message: s.Reason}
			ts.Skipped++
		}
		ts.Tests++
		*ts.Time += s.Duration.Seconds()
		ts.Cases = append(ts.Cases, c)
	}
	sort.Strings(order)
	for _, name := range order {
		ts := by[name]
		doc.Tests += ts.Tests
		doc.Failures += ts.Failures
		doc.Skipped += ts.Skipped
		doc.Suites = append(doc.Suites, *ts)
	}
	if len(r.Advisories) > 0 {
		doc.Suites = append(doc.Suites, advisorySuite(r.Advisories))
	}
	return WriteJUnit(w, doc)
}
