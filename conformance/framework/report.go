package framework

import (
	"encoding/json"
	"html/template"
	"io"
	"strings"
)

// WriteJSON writes the results as indented JSON: suite outcome, every spec, every rule verdict.
func WriteJSON(w io.Writer, r Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"verdictClass": func(v string) string { return strings.ReplaceAll(v, " ", "-") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Suite}}: conformance report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
pre{white-space:pre-wrap;font-size:.85em;background:#f6f6f6;padding:.5em;max-height:40em;overflow:auto}
.passed{background:#dfd}.failed{background:#fdd}.skipped{background:#ffd}
.not-covered{background:#eee}.unobservable{background:#def}
</style></head><body>
<h1>{{.Suite}}</h1>
<p>{{if .Succeeded}}The run succeeded.{{else}}<strong>The run failed.</strong>{{end}}</p>
{{range .SuiteFailures}}<p class="failed">{{.}}</p>{{end}}
<p>Rules: {{.RuleCounts.Passed}} passed, {{.RuleCounts.Failed}} failed, {{.RuleCounts.Skipped}} skipped,
{{.RuleCounts.NotCovered}} not covered, {{.RuleCounts.Unobservable}} unobservable.
Specs: {{.SpecCounts.Passed}} passed, {{.SpecCounts.Failed}} failed, {{.SpecCounts.Skipped}} skipped.</p>
<h2>Rules</h2>
<table><thead><tr><th>Rule</th><th>Level</th><th>Section</th><th>Statement</th><th>Verdict</th><th>Detail</th></tr></thead><tbody>
{{range .Rules}}<tr id="{{.Rule.ID}}">
<td>{{.Rule.ID}}</td><td>{{.Rule.Level}}</td><td>{{.Rule.Section}}</td>
<td>{{.Rule.Statement}}{{if .Rule.Interpretation}}<br><em>Interpretation: {{.Rule.Interpretation}}</em>{{end}}</td>
<td class="{{verdictClass .Verdict}}">{{.Verdict}}</td>
<td>{{if .Reason}}<pre>{{.Reason}}</pre>{{end}}
{{if .Transcript}}<details><summary>transcript</summary><pre>{{.Transcript}}</pre></details>{{end}}
{{if .Specs}}<details><summary>{{len .Specs}} spec(s)</summary><ul>{{range .Specs}}<li>{{.}}</li>{{end}}</ul></details>{{end}}</td>
</tr>
{{end}}</tbody></table>
<h2>Specs</h2>
<table><thead><tr><th>Spec</th><th>Labels</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>
{{range .Specs}}<tr><td>{{.Text}}</td><td>{{range .Labels}}{{.}} {{end}}</td><td class="{{verdictClass .State}}">{{.State}}</td>
<td>{{if .Reason}}<pre>{{.Reason}}</pre>{{end}}{{if .Transcript}}<details><summary>transcript</summary><pre>{{.Transcript}}</pre></details>{{end}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))

// WriteHTML writes the HTML report: every rule of the catalogue with its verdict and detail, then
// every spec.
func WriteHTML(w io.Writer, r Results) error {
	return htmlReport.Execute(w, r)
}
