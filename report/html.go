package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// RunInfo is the header of every report: what was checked, with what, when, and how.
type RunInfo struct {
	Target   string        `json:"target"`                 // the base URL checked (keys redacted), or the upstream a proxy forwarded to
	Version  string        `json:"mediaspec_version"`      // the mediaspec release that ran the check
	Contract string        `json:"contract_version"`       // info.version of the REST description the run judged against
	Started  time.Time     `json:"started"`                // when the run began
	Duration time.Duration `json:"duration_ns"`            // how long it ran
	Filter   string        `json:"label_filter,omitempty"` // the Ginkgo label filter that selected the specs; empty for all
	Mode     string        `json:"mode"`                   // how the target was reached: embedded, or out of process and what it offers
	// Profile is the tiers the run offers, joined by "+" (ProfileName): "keys", "keys+profile",
	// "keys+profile+control".
	Profile   string `json:"profile,omitempty"`
	Cancelled string `json:"cancelled,omitempty"` // why the run stopped early, if it did
	// Shard is the share of the specs this run ran, K/N (mediaspec check --shard); empty for a
	// whole run, or one merged from its shards.
	Shard string `json:"shard,omitempty"`
	// Budget is the credits the run could spend; CreditsSpent what it spent (reserved and not
	// given back).
	Budget       int `json:"budget"`
	CreditsSpent int `json:"credits_spent"` // credits the run spent
	// Strict: the run held the target to the reference's own choices (check --strict).
	Strict bool `json:"strict,omitempty"`
}

// WriteJSON writes the results as indented JSON: run header, suite outcome, every spec, every rule
// verdict.
func (r Results) WriteJSON(w io.Writer) error {
	r.ReportVersion = ReportVersion
	return WriteJSON(w, r)
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

// AreaSummary is one area's tallies in the HTML report.
type AreaSummary struct {
	Area                                          string // the interface area (a spec file's name up to an underscore)
	Passed, Failed, Blocked, Skipped, Interrupted int    // selected specs by state
	FailedRules                                   int    // rules failed by the area's specs
}

// Areas tallies the selected specs per area, areas with failures first, then by name.
func (r Results) Areas() []AreaSummary {
	by := map[string]*AreaSummary{}
	rulesFailed := map[string]map[string]bool{}
	for _, s := range r.Specs {
		if !s.Counted() {
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
		case Failed, Blocked:
			if s.State == Failed {
				a.Failed++
			} else {
				a.Blocked++
			}
			for _, id := range s.Blamed() {
				rulesFailed[s.Area][id] = true
			}
		case Interrupted:
			a.Interrupted++
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
		if fi, fj := out[i].Failed+out[i].Blocked > 0, out[j].Failed+out[j].Blocked > 0; fi != fj {
			return fi
		}
		return out[i].Area < out[j].Area
	})
	return out
}

// verdictRank orders the rule table: failures first.
var verdictRank = map[string]int{Failed: 0, Blocked: 1, Skipped: 2, Interrupted: 3, PartlyJudged: 4, Passed: 5, NotCovered: 6,
	NotSelected: 7, StrictOnly: 8, Unobservable: 9}

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

// htmlReport is parsed on the first HTML report, not in every command's start-up.
var htmlReport = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"verdictClass": func(v string) string { return strings.ReplaceAll(v, " ", "_") },
		"words":        func(v string) string { return strings.ReplaceAll(v, "_", " ") },
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
.not_covered,.not_selected,.strict_only{background:#eee}.partly_judged,.interrupted{background:#ffd}.unobservable{background:#def}
.blocked{background:#fec}
.sentence{font-weight:600}
.small{font-size:.85em;color:#555}
</style></head><body>
<h1>{{.Suite}}: {{if .Succeeded}}passed{{else}}failed{{end}}</h1>
<p class="sentence">{{.Headline}}</p>
<table class="header">
<tr><th>Target</th><td>{{.Run.Target}}</td></tr>
<tr><th>Mode</th><td>{{.Run.Mode}}{{if .Run.Profile}}; profile {{.Run.Profile}}{{end}}</td></tr>
<tr><th>mediaspec</th><td>{{.Run.Version}} (contract {{.Run.Contract}})</td></tr>
<tr><th>Started</th><td>{{when .Run.Started}}</td></tr>
<tr><th>Duration</th><td>{{dur .Run.Duration}}</td></tr>
<tr><th>Label filter</th><td>{{if .Run.Filter}}<code>{{.Run.Filter}}</code>{{else}}(none: every spec){{end}}</td></tr>
{{if .Run.Cancelled}}<tr><th>Stopped early</th><td class="failed">{{.Run.Cancelled}}</td></tr>{{end}}
<tr><th>Specs</th><td>{{.SpecLine}}</td></tr>
<tr><th>Rules</th><td>{{.RuleLine}}</td></tr>
<tr><th>Coverage</th><td>{{.CoverageLine}}</td></tr>
<tr><th>Credits spent</th><td>{{.Run.CreditsSpent}}{{if .Run.Budget}} of a budget of {{.Run.Budget}}{{end}}</td></tr>
</table>
{{with .NotJudged}}<h2>Not judged, by the lowest tier that would judge it</h2>
<table><thead><tr><th style="width:22em">Need</th><th style="width:5em">Rules</th><th>Ids</th></tr></thead><tbody>
{{range .}}<tr><td>{{.Title}}</td><td>{{len .Rules}}</td><td class="small">{{range .Rules}}{{.}} {{end}}</td></tr>
{{end}}</tbody></table>{{end}}
{{range .SuiteFailures}}<pre class="failed">{{.}}</pre>{{end}}
<h2>Areas</h2>
<table><thead><tr><th>Area</th><th>Passed</th><th>Failed</th><th>Blocked</th><th>Skipped</th><th>Interrupted (not run)</th>
<th>Rules failed</th></tr></thead><tbody>
{{range .AreaRows}}<tr><td>{{.Area}}</td><td>{{.Passed}}</td><td{{if .Failed}} class="failed"{{end}}>{{.Failed}}</td>
<td{{if .Blocked}} class="blocked"{{end}}>{{.Blocked}}</td><td>{{.Skipped}}</td><td>{{.Interrupted}}</td><td>{{.FailedRules}}</td></tr>
{{end}}</tbody></table>
{{if .Causes}}<h2>Root causes ({{len .Causes}})</h2>
<p class="small">Each cause is a rule broken on a call: the specs that check the rule failed; the specs that only needed the call
are blocked by it, their own rules left undecided.</p>
<table><thead><tr><th style="width:14em">Rules</th><th>Cause</th><th style="width:9em">Specs</th>
<th style="width:16em">Where</th></tr></thead><tbody>
{{range .Causes}}<tr><td>{{range .Rules}}<a href="#{{.}}">{{.}}</a> {{end}}</td>
<td>{{with .CallList}}<code>{{.}}</code>: {{end}}{{.Sentence}}<details><summary>the specs</summary><ul>
{{- range .Specs}}<li><a href="#{{anchor $.Anchors .Text}}">{{.Text}}</a>{{if eq .State "blocked"}} (blocked){{end}}</li>
{{- end}}</ul></details></td>
<td class="failed">{{.Tally}}</td><td>{{.Location}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Advisories}}<h2>Advisories ({{len .Advisories}}): differences from the reference's own choices, never failures</h2>
<table><thead><tr><th>Call</th><th style="width:6em">Status</th><th>Field</th><th>The reference document says</th>
<th style="width:5em">Seen</th><th>Specs</th></tr></thead><tbody>
{{range .Advisories}}<tr><td>{{.Operation}}</td><td>{{if .Status}}{{.Status}}{{end}}</td><td><code>{{.Path}}</code></td>
<td>{{.Reference}}</td><td>{{.Count}}</td><td class="small">{{range .Specs}}{{.}}<br>{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Failed}}<h2>Failed and blocked specs ({{len .Failed}})</h2>
{{range .Failed}}<div id="{{.Anchor}}" class="spec">
<h3 class="{{verdictClass .State}}">{{.Text}}</h3>
<p class="small">{{.Area}} ·
{{.Location}}{{if .FailureLocation}} ·
failed at {{.FailureLocation}}{{end}} ·
{{if eq .State "blocked"}}blocked by{{else}}rules{{end}} {{range .Blamed}}<a href="#{{.}}">{{.}}</a> {{end}}</p>
<p class="sentence">{{.Sentence}}</p>
<pre>{{.Reason}}</pre>
{{if .Transcript}}<details><summary>every call of the spec</summary><pre>{{.Transcript}}</pre></details>{{end}}
</div>
{{end}}{{end}}
<h2>Rules (failures first)</h2>
<table><thead><tr><th style="width:7em">Rule</th><th style="width:5em">Level</th><th style="width:9em">Section</th><th>Statement</th>
<th style="width:7em">Verdict</th><th>Detail</th></tr></thead><tbody>
{{range .Rules}}<tr id="{{.Rule.ID}}">
<td>{{.Rule.ID}}</td><td>{{.Rule.Level}}</td><td>{{.Rule.Section}}</td>
<td>{{.Rule.Statement}}{{if .Rule.Interpretation}}<br><em>Interpretation: {{.Rule.Interpretation}}</em>{{end}}</td>
<td class="{{verdictClass .Verdict}}">{{words .Verdict}}
{{- if eq .Verdict "partly_judged"}} ({{.SpecsRun}} of {{len .Specs}} specs){{end}}</td>
<td>{{if .Reason}}<pre>{{.Reason}}</pre>{{end}}
{{if .Specs}}<details><summary>{{len .Specs}} spec(s)</summary><ul>
{{- range .Specs}}<li>{{with anchor $.Anchors .}}<a href="#{{.}}">{{end}}{{.}}
{{- if anchor $.Anchors .}}</a>{{end}}</li>{{end}}</ul></details>{{end}}</td>
</tr>
{{end}}</tbody></table>
<h2>Other specs</h2>
<table><thead><tr><th>Spec</th><th style="width:8em">Area</th><th style="width:7em">Outcome</th><th>Detail</th></tr></thead><tbody>
{{range .Others}}<tr><td>{{.Text}}<br><span class="small">{{.Location}} · {{range .Rules}}{{.}} {{end}}</span></td><td>{{.Area}}</td>
<td class="{{verdictClass .State}}">{{words .State}}</td>
<td>{{.Reason}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))
})

// WriteHTML writes the HTML report: a header (target, versions, start, duration, filter, mode), a
// summary per area, the failed specs (each with its transcript, once), every rule with failures
// first, then the other specs.
func (r Results) WriteHTML(w io.Writer) error {
	d := htmlData{Results: r, AreaRows: r.Areas(), Causes: r.Causes(), Anchors: map[string]string{}}
	share := maxTranscriptInHTML
	if n := r.SpecCounts.Failed + r.SpecCounts.Blocked; n > 0 {
		share = max(minTranscriptInHTML, min(maxTranscriptInHTML, transcriptBudgetHTML/n))
	}
	for i, s := range r.Specs {
		h := htmlSpec{SpecResult: s, Anchor: fmt.Sprintf("spec-%d", i+1)}
		if s.Stopped() {
			h.Sentence = causeSentence(s)
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
	return htmlReport().Execute(w, d)
}

// JUnitName is a spec's JUnit test case name: "RULE-ID: text" (several ids joined by commas; the
// text is the spec's own, without its containers'), at most MaxNameLen characters. A name that
// must be cut ends in " #" and the tag of the spec's full text (Tag), so two cut names never
// collide.
func JUnitName(s SpecResult) string {
	name := junitBase(s)
	if utf8.RuneCountInString(name) <= MaxNameLen {
		return name
	}
	return tagged(name, s.Text)
}

func junitBase(s SpecResult) string {
	text := s.Leaf
	if text == "" {
		text = s.Text
	}
	if len(s.Rules) == 0 {
		return text
	}
	return strings.Join(s.Rules, ", ") + ": " + text
}

// tagged is name cut to leave room for " #" and the tag of text, then that tag.
func tagged(name, text string) string {
	tag := " #" + Tag(text)
	return Clip(name, MaxNameLen-utf8.RuneCountInString(tag)) + tag
}

// Tag is a short stable tag of a spec's full text: eight hex digits of its SHA-256.
func Tag(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:4])
}

// junitNames gives each spec of a class a name no other spec of the class has, stable from run to
// run: JUnitName, with the tag of the full text where two specs would share a name (the same own
// text under different containers), and where even the full texts are the same, the spec's place
// among them (" (2)").
func junitNames(specs []SpecResult) []string {
	names := make([]string, len(specs))
	count := map[string]int{}
	for i, s := range specs {
		names[i] = JUnitName(s)
		count[names[i]]++
	}
	seen := map[string]int{}
	for i, s := range specs {
		if count[names[i]] > 1 {
			names[i] = tagged(junitBase(s), s.Text)
		}
		seen[names[i]]++
		if n := seen[names[i]]; n > 1 {
			suffix := fmt.Sprintf(" (%d)", n)
			names[i] = Clip(names[i], MaxNameLen-len(suffix)) + suffix
		}
	}
	return names
}

// WriteJUnit writes a JUnit XML report with one test suite per area, classname mediaspec.<area>,
// case names "RULE-ID: text" (unique within a class, JUnitName), the spec's file relative to the
// module root, and for a failure its sentence as the message and its reason and transcript as the
// body. A blocked spec is a failure of type "blocked" whose message names the rules it was blocked
// by. Interrupted specs (a stopped run) are no cases: a case of the suite mediaspec.run fails,
// saying how many did not run. Specs the run did not select, and strict-only
// specs of a run that is not strict, are not listed (they are outside the counts, as in the
// console). Every suite carries the run's coverage, mode, target and credits as properties.
func (r Results) WriteJUnit(w io.Writer) error {
	by := map[string]*Suite{}
	members := map[string][]SpecResult{}
	var order []string
	doc := JUnit{Name: &r.Suite, Time: Seconds(r.Run.Duration)}
	for _, s := range r.Specs {
		if !s.Counted() || s.State == Interrupted {
			continue
		}
		name := "mediaspec." + strings.ReplaceAll(s.Area, " ", "_")
		if by[name] == nil {
			ts := &Suite{Name: name, Time: new(float64), Properties: r.junitProperties()}
			if !r.Run.Started.IsZero() {
				ts.Timestamp = r.Run.Started.UTC().Format(time.RFC3339)
			}
			by[name] = ts
			order = append(order, name)
		}
		members[name] = append(members[name], s)
	}
	sort.Strings(order)
	for _, name := range order {
		ts := by[name]
		for i, caseName := range junitNames(members[name]) {
			s := members[name][i]
			c := Case{Name: caseName, Classname: name, File: strings.Split(s.Location, ":")[0], Time: Seconds(s.Duration)}
			switch s.State {
			case Failed, Blocked:
				body := s.Reason
				if s.Transcript != "" {
					body += "\n\n" + clipMiddle(s.Transcript, maxTranscriptInHTML)
				}
				c.Failure = &Failure{Message: causeSentence(s), Type: "failed", Body: body}
				if s.State == Blocked {
					c.Failure.Type = "blocked"
					c.Failure.Message = "blocked by " + strings.Join(s.BlockedBy, ", ") + ": " + c.Failure.Message
				}
				ts.Failures++
			case Skipped:
				c.Skipped = &Skip{Message: s.Reason}
				ts.Skipped++
			}
			ts.Tests++
			*ts.Time += s.Duration.Seconds()
			ts.Cases = append(ts.Cases, c)
		}
		doc.Tests += ts.Tests
		doc.Failures += ts.Failures
		doc.Skipped += ts.Skipped
		doc.Suites = append(doc.Suites, *ts)
	}
	if r.SpecCounts.Interrupted > 0 || r.Run.Cancelled != "" {
		// The specs a stopped run did not finish are no test cases (neither passed nor skipped):
		// one failed case says the run was stopped and how many did not run.
		why := r.Run.Cancelled
		if why == "" {
			why = "the run was stopped"
		}
		msg := fmt.Sprintf("interrupted: %s; %d selected specs did not run to their end", why, r.SpecCounts.Interrupted)
		ts := Suite{Name: "mediaspec.run", Tests: 1, Failures: 1, Properties: r.junitProperties(),
			Cases: []Case{{Name: "the run ran to its end", Classname: "mediaspec.run",
				Failure: &Failure{Message: msg, Type: "interrupted", Body: msg}}}}
		doc.Tests++
		doc.Failures++
		doc.Suites = append(doc.Suites, ts)
	}
	if len(r.Advisories) > 0 {
		doc.Suites = append(doc.Suites, advisorySuite(r.Advisories))
	}
	return WriteJUnit(w, doc)
}

// junitProperties are the run's headline as JUnit properties: coverage, mode, target, credits,
// and the rule tally.
func (r Results) junitProperties() *Properties {
	c := r.Coverage
	list := []Property{
		{Name: "mediaspec.headline", Value: r.Headline()},
		{Name: "mediaspec.coverage", Value: r.CoverageLine()},
		{Name: "mediaspec.coverage.judged", Value: fmt.Sprint(c.Judged)},
		{Name: "mediaspec.coverage.partly_judged", Value: fmt.Sprint(c.PartlyJudged)},
		{Name: "mediaspec.coverage.not_judged", Value: fmt.Sprint(c.NotJudged)},
		{Name: "mediaspec.coverage.total", Value: fmt.Sprint(c.Total)},
	}
	for _, n := range NeedOrder {
		if c.ByNeed[n] > 0 {
			list = append(list, Property{Name: "mediaspec.coverage.by_need." + n, Value: fmt.Sprint(c.ByNeed[n])})
		}
	}
	if r.Run.Profile != "" {
		list = append(list, Property{Name: "mediaspec.profile", Value: r.Run.Profile})
	}
	for _, t := range Tiers {
		if c.ByTier[t] > 0 {
			list = append(list, Property{Name: "mediaspec.coverage.by_tier." + string(t), Value: fmt.Sprint(c.ByTier[t])})
		}
	}
	list = append(list,
		Property{Name: "mediaspec.mode", Value: r.Run.Mode},
		Property{Name: "mediaspec.target", Value: r.Run.Target},
		Property{Name: "mediaspec.credits_spent", Value: fmt.Sprint(r.Run.CreditsSpent)},
		Property{Name: "mediaspec.rules", Value: r.RuleLine()},
		Property{Name: "mediaspec.specs", Value: r.SpecLine()},
	)
	return &Properties{List: list}
}
