package framework

import (
	"bytes"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"

	"github.com/mediaspec/mediaspec/spec"
)

const testCatalogue = `version: 1
areas: {AUTH: Authentication, HEALTH: Health}
needs: {control: c, receiver: r, second-workspace: s, read-key: k, spends: p, slow: w, uploads: u}
rules:
  - {id: AUTH-001, level: MUST, section: Authentication, statement: a key is required}
  - {id: AUTH-002, level: MUST, section: Authentication, statement: revoked keys answer 401, needs: [control]}
  - {id: AUTH-003, level: MUST, section: Authentication, statement: keys are secret, unobservable: the service's storage is not visible}
  - {id: HEALTH-001, level: MUST, section: Health, statement: live probe}
  - {id: HEALTH-002, level: MUST, section: Health, statement: ready probe}
`

func testFramework(t *testing.T) *Framework {
	t.Helper()
	cat, err := spec.ParseRules([]byte(testCatalogue))
	if err != nil {
		t.Fatal(err)
	}
	return &Framework{catalogue: cat, redactor: &Redactor{}, transcript: &Transcript{}}
}

func TestRedactor(t *testing.T) {
	r := &Redactor{}
	r.Add("ctl-token-123", "", "weird-key-shape")
	tests := []struct{ name, in, want string }{
		{"api key in body", `{"key":"sk_live_abcDEF0123456789abcdef0123456789abcd"}`, `{"key":"sk_live_[REDACTED]"}`},
		{"api key in url", "/x?key=sk_live_Zz9", "/x?key=sk_live_[REDACTED]"},
		{"webhook secret", `"secret":"whsec_dGVzdA+/=="`, `"secret":"whsec_[REDACTED]"`},
		{"registered literal", "Bearer ctl-token-123", "Bearer [REDACTED]"},
		{"other registered literal", "weird-key-shape!", "[REDACTED]!"},
		{"nothing secret", `{"ok":true}`, `{"ok":true}`},
		{"bare prefix is not a key", "sk_live_", "sk_live_"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactorHeader(t *testing.T) {
	r := &Redactor{}
	r.Add("tok")
	h := http.Header{}
	h.Set("Authorization", "Bearer anything")
	h.Set("x-api-key", "sk_live_abc")
	h.Set("X-Trace", "tok and sk_live_q1")
	h.Set("Content-Type", "application/json")
	got := r.Header(h)
	want := map[string]string{
		"Authorization": Redacted,
		"X-Api-Key":     Redacted,
		"X-Trace":       "[REDACTED] and sk_live_[REDACTED]",
		"Content-Type":  "application/json",
	}
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, got.Get(k), v)
		}
	}
	if h.Get("Authorization") != "Bearer anything" {
		t.Error("Header modified its input")
	}
}

func TestExchangeIsRedacted(t *testing.T) {
	r := &Redactor{}
	r.Add("ctl")
	h := http.Header{"Authorization": {"Bearer sk_live_secretsecret"}}
	ex := newExchange(r, "POST", "http://h/api/v1/x?k=sk_live_q", h, []byte(`{"k":"sk_live_zzz","t":"ctl"}`), 201,
		http.Header{"Content-Type": {"application/json"}}, []byte(`{"secret":"whsec_abc="}`))
	s := ex.String()
	for _, leak := range []string{"secretsecret", "sk_live_q", "sk_live_zzz", "whsec_abc", `"ctl"`} {
		if strings.Contains(s, leak) {
			t.Errorf("transcript leaks %q:\n%s", leak, s)
		}
	}
	if !strings.Contains(s, "< 201 Created") || !strings.Contains(s, "> POST http://h/api/v1/x") {
		t.Errorf("transcript lacks the request or status line:\n%s", s)
	}
}

func TestTranscriptClipsLongBodies(t *testing.T) {
	ex := newExchange(&Redactor{}, "GET", "http://h/", nil, nil, 200, nil, bytes.Repeat([]byte("a"), maxBodyInTranscript+10))
	if !strings.HasSuffix(ex.ResponseBody, "(10 more bytes)") {
		t.Errorf("long body not clipped: ...%q", ex.ResponseBody[len(ex.ResponseBody)-30:])
	}
}

func TestUnmet(t *testing.T) {
	all := Capabilities{Control: true, Receiver: true, SecondWorkspace: true, ReadKey: true, Budget: 10, Slow: true, Uploads: true}
	tests := []struct {
		name   string
		caps   Capabilities
		needs  []Need
		prefix string // "" means met
		about  string
	}{
		{"no needs", Capabilities{}, nil, "", ""},
		{"everything offered", all, AllNeeds, "", ""},
		{"control missing", Capabilities{}, []Need{Control}, "unsupported:", "--control-url"},
		{"read key missing", Capabilities{Control: true}, []Need{Control, ReadKey}, "unsupported:", "read-only key"},
		{"second workspace missing", Capabilities{}, []Need{SecondWorkspace}, "unsupported:", "second workspace"},
		{"receiver missing", Capabilities{}, []Need{Receiver}, "unsupported:", "receiver"},
		{"zero budget", Capabilities{}, []Need{Spends}, "disabled:", "budget"},
		{"slow off", Capabilities{}, []Need{Slow}, "disabled:", "--slow"},
		{"unknown need", all, []Need{"teleport"}, "unsupported:", "teleport"},
		{"role undeclared", Capabilities{Roles: map[Need]bool{ExpiredKey: true}}, []Need{ExpiredKey, RevokedKey}, "unsupported:", "revoked_key in the profile (--revoked-key)"},
		{"role declared", Capabilities{Roles: map[Need]bool{BudgetKey: true}}, []Need{BudgetKey}, "", ""},
		{"real time off", Capabilities{}, []Need{RealTime}, "disabled:", "--real-time"},
		{"real time on", Capabilities{RealTime: true}, []Need{RealTime}, "", ""},
		{"long off with real time", Capabilities{RealTime: true}, []Need{RealTime, Long}, "disabled:", "--real-time --long"},
		{"long on", Capabilities{RealTime: true, Long: true}, []Need{RealTime, Long}, "", ""},
		{"long by the control clock", Capabilities{Control: true}, []Need{RealTime, Long}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.caps.Unmet(tc.needs)
			if tc.prefix == "" {
				if got != "" {
					t.Fatalf("Unmet = %q, want met", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.prefix) || !strings.Contains(got, tc.about) {
				t.Fatalf("Unmet = %q, want prefix %q mentioning %q", got, tc.prefix, tc.about)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		takes  []int
		okUpTo int // takes[:okUpTo] succeed, the next fails
		spent  int
	}{
		{"zero budget refuses any spend", 0, []int{1}, 0, 0},
		{"zero-credit take fits a zero budget", 0, []int{0}, 1, 0},
		{"exact fit", 10, []int{4, 6}, 2, 10},
		{"one over", 10, []int{4, 7}, 1, 4},
		{"refusal reserves nothing", 10, []int{11, 10}, 0, 0},
		{"negative refused", 10, []int{-1}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(tc.limit)
			for i, n := range tc.takes {
				err := b.Take(n)
				if i < tc.okUpTo && err != nil {
					t.Fatalf("take %d (%d): %v", i, n, err)
				}
				if i == tc.okUpTo {
					if err == nil {
						t.Fatalf("take %d (%d) succeeded, want refusal", i, n)
					}
					break
				}
			}
			if b.Spent() != tc.spent {
				t.Errorf("spent %d, want %d", b.Spent(), tc.spent)
			}
		})
	}
	b := NewBudget(5)
	_ = b.Take(5)
	b.Give(3)
	if err := b.Take(3); err != nil {
		t.Errorf("after Give(3) a take of 3 fails: %v", err)
	}
}

func TestRuleChecksIDsAtConstruction(t *testing.T) {
	f := testFramework(t)
	tests := []struct {
		name  string
		ids   []string
		panic string // "" means no panic
	}{
		{"known ids", []string{"AUTH-001", "HEALTH-002"}, ""},
		{"typo", []string{"AUTH-001", "AUTH-01"}, `rule "AUTH-01" is not in spec/rules.yaml`},
		{"unknown area", []string{"NOPE-001"}, `rule "NOPE-001" is not in spec/rules.yaml`},
		{"unobservable rule", []string{"AUTH-003"}, "AUTH-003 is marked unobservable"},
		{"no ids", nil, "at least one rule id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg, _ = r.(string)
						if msg == "" {
							msg = "non-string panic"
						}
					}
				}()
				f.Rule(tc.ids...)
				return ""
			}()
			if tc.panic == "" && got != "" {
				t.Fatalf("Rule panicked: %s", got)
			}
			if tc.panic != "" && !strings.Contains(got, tc.panic) {
				t.Fatalf("Rule panic = %q, want it to contain %q", got, tc.panic)
			}
		})
	}
}

func TestDeclLabelsCarryRuleNeeds(t *testing.T) {
	f := testFramework(t)
	d := f.Rule("AUTH-002", "AUTH-001").Needs(ReadKey, Control)
	got := strings.Join(d.Labels(), ",")
	if want := "AUTH-002,AUTH-001,control,read-key"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Needs accepted an unknown need")
		}
	}()
	f.Rule("AUTH-001").Needs("teleport")
}

func itReport(text string, state types.SpecState, msg string, labels ...string) types.SpecReport {
	return types.SpecReport{
		LeafNodeType:   types.NodeTypeIt,
		LeafNodeText:   text,
		LeafNodeLabels: labels,
		State:          state,
		Failure:        types.Failure{Message: msg},
	}
}

func TestVerdicts(t *testing.T) {
	f := testFramework(t)
	tests := []struct {
		name    string
		reports []types.SpecReport
		want    map[string]string // rule -> verdict
		reason  map[string]string // rule -> substring of the reason
	}{
		{
			name: "failed beats passed and skipped",
			reports: []types.SpecReport{
				itReport("a", types.SpecStatePassed, "", "AUTH-001"),
				itReport("b", types.SpecStateFailed, "want 401", "AUTH-001", "control"),
				itReport("c", types.SpecStateSkipped, "unsupported: x", "AUTH-001"),
			},
			want:   map[string]string{"AUTH-001": report.Failed, "AUTH-002": report.NotCovered, "AUTH-003": report.Unobservable, "HEALTH-001": report.NotCovered},
			reason: map[string]string{"AUTH-001": "want 401", "AUTH-003": "storage is not visible"},
		},
		{
			name: "one pass among skips is partly judged, never passed",
			reports: []types.SpecReport{
				itReport("a", types.SpecStateSkipped, "unsupported: no control", "HEALTH-001"),
				itReport("b", types.SpecStatePassed, "", "HEALTH-001"),
			},
			want:   map[string]string{"HEALTH-001": report.PartlyJudged},
			reason: map[string]string{"HEALTH-001": "partly judged (1 of 2 specs)"},
		},
		{
			name: "all skipped is skipped with the reasons; filtered-out specs say so",
			reports: []types.SpecReport{
				itReport("a", types.SpecStateSkipped, "unsupported: needs the control API", "AUTH-002"),
				itReport("b", types.SpecStateSkipped, "", "HEALTH-002"),
			},
			want:   map[string]string{"AUTH-002": report.Skipped, "HEALTH-002": report.NotSelected},
			reason: map[string]string{"AUTH-002": "needs the control API", "HEALTH-002": report.NotSelectedReason},
		},
		{
			name:    "panicked and timed out count as failed",
			reports: []types.SpecReport{itReport("a", types.SpecStatePanicked, "boom", "HEALTH-001"), itReport("b", types.SpecStateTimedout, "slow", "HEALTH-002")},
			want:    map[string]string{"HEALTH-001": report.Failed, "HEALTH-002": report.Failed},
		},
		{
			name: "specs left unrun by a failed setup say so, not that the filter excluded them",
			reports: []types.SpecReport{
				{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no control"}},
				itReport("a", types.SpecStateSkipped, "", "HEALTH-001"),
			},
			want:   map[string]string{"HEALTH-001": report.Skipped},
			reason: map[string]string{"HEALTH-001": "suite setup (BeforeSuite) failed"},
		},
		{
			name:    "unobservable stays unobservable even if a label names it",
			reports: []types.SpecReport{itReport("a", types.SpecStatePassed, "", "AUTH-003")},
			want:    map[string]string{"AUTH-003": report.Unobservable},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := BuildResults(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: tc.reports})
			got := map[string]report.RuleVerdict{}
			for _, v := range res.Rules {
				got[v.Rule.ID] = v
			}
			if len(res.Rules) != len(f.catalogue.Rules) {
				t.Errorf("%d verdicts for %d rules: every rule must have one", len(res.Rules), len(f.catalogue.Rules))
			}
			for id, want := range tc.want {
				if got[id].Verdict != want {
					t.Errorf("%s: verdict %q, want %q", id, got[id].Verdict, want)
				}
			}
			for id, sub := range tc.reason {
				if !strings.Contains(got[id].Reason, sub) {
					t.Errorf("%s: reason %q lacks %q", id, got[id].Reason, sub)
				}
			}
		})
	}
}

func TestResultsLinesAndErr(t *testing.T) {
	f := testFramework(t)
	tests := []struct {
		name     string
		reports  []types.SpecReport
		specLine string
		ruleLine string
		err      string
	}{
		{"passing run", []types.SpecReport{itReport("a", types.SpecStatePassed, "", "HEALTH-001"), itReport("b", types.SpecStateSkipped, "x", "AUTH-002")},
			"1 passed, 0 failed, 1 skipped", "rules: 1 passed, 0 partly judged, 0 failed, 1 skipped, 2 not covered, 1 unobservable", ""},
		{"a failure fails the run", []types.SpecReport{itReport("a", types.SpecStateFailed, "no", "HEALTH-001")},
			"0 passed, 1 failed, 0 skipped", "rules: 0 passed, 0 partly judged, 1 failed, 0 skipped, 3 not covered, 1 unobservable", "1 specs failed"},
		{"nothing executed fails the run", []types.SpecReport{itReport("a", types.SpecStateSkipped, "x", "HEALTH-001")},
			"0 passed, 0 failed, 1 skipped", "rules: 0 passed, 0 partly judged, 0 failed, 1 skipped, 3 not covered, 1 unobservable", "no spec executed"},
		{"suite node failure fails the run", []types.SpecReport{
			{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "setup"}},
			itReport("a", types.SpecStatePassed, "", "HEALTH-001")},
			"1 passed, 0 failed, 0 skipped", "rules: 1 passed, 0 partly judged, 0 failed, 0 skipped, 3 not covered, 1 unobservable", "BeforeSuite failed: setup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := BuildResults(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: tc.reports})
			if res.SpecLine() != tc.specLine {
				t.Errorf("spec line %q, want %q", res.SpecLine(), tc.specLine)
			}
			if res.RuleLine() != tc.ruleLine {
				t.Errorf("rule line %q, want %q", res.RuleLine(), tc.ruleLine)
			}
			err := res.Err()
			if tc.err == "" && err != nil {
				t.Errorf("Err = %v, want nil", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Err = %v, want it to mention %q", err, tc.err)
			}
		})
	}
}

func TestReportsListEveryRuleAndRedactedTranscript(t *testing.T) {
	f := testFramework(t)
	rep := itReport("b", types.SpecStateFailed, "want 401", "AUTH-001")
	rep.ReportEntries = types.ReportEntries{{Name: TranscriptEntry, Value: types.WrapEntryValue("> GET /x\n> Authorization: [REDACTED]\n< 200 OK\n")}}
	res := BuildResults(f.catalogue, types.Report{SuiteDescription: "s", SpecReports: []types.SpecReport{rep}})
	var html bytes.Buffer
	if err := res.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.catalogue.Rules {
		if !strings.Contains(html.String(), `id="`+r.ID+`"`) {
			t.Errorf("HTML report lacks rule %s", r.ID)
		}
	}
	if !strings.Contains(html.String(), "Authorization: [REDACTED]") {
		t.Error("HTML report lacks the failed spec's transcript")
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"verdict": "failed"`) || !strings.Contains(js.String(), `"verdict": "unobservable"`) {
		t.Errorf("JSON report lacks verdicts:\n%s", js.String())
	}
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("base_url: http://file:1\nkey: filekey\nbudget: 5\nlabel_filter: fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MEDIASPEC_KEY": "envkey", "MEDIASPEC_BUDGET": "7", "MEDIASPEC_TIME_SCALE": "60"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fl := RegisterFlags(fs)
	if err := fs.Parse([]string{"--config", file, "--budget", "9", "--randomize"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(fl, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "http://file:1" || cfg.Key != "envkey" || cfg.Budget != 9 || cfg.LabelFilter != "fromfile" ||
		cfg.TimeScale != 60 || !cfg.Randomize {
		t.Errorf("precedence wrong: %+v", cfg)
	}
	root, _ := cfg.APIRoot()
	if root.String() != "http://file:1/api/v1" {
		t.Errorf("API root %s, want /api/v1 appended", root)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("base_url: http://h\nkey: k\nbogus: 1\n"), 0o600)
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no base url", map[string]string{"MEDIASPEC_KEY": "k"}, "no base URL"},
		{"no key and no control", map[string]string{"MEDIASPEC_BASE_URL": "http://h"}, "no API key"},
		{"control without token", map[string]string{"MEDIASPEC_BASE_URL": "http://h", "MEDIASPEC_CONTROL_URL": "http://h"}, "control token"},
		{"bad number", map[string]string{"MEDIASPEC_BASE_URL": "http://h", "MEDIASPEC_KEY": "k", "MEDIASPEC_BUDGET": "lots"}, "not an integer"},
		{"not http", map[string]string{"MEDIASPEC_BASE_URL": "ftp://h", "MEDIASPEC_KEY": "k"}, "not an http(s) URL"},
		{"unknown yaml key", map[string]string{"MEDIASPEC_CONFIG": bad}, "bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(nil, func(k string) string { return tc.env[k] })
			if err == nil {
				err = cfg.Validate() // what New does first
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sk_live") {
				t.Error("error leaks a key")
			}
		})
	}
}

func TestRedactReport(t *testing.T) {
	r := &Redactor{}
	r.Add("ctl_secret")
	rep := types.Report{
		SpecialSuiteFailureReasons: []string{"token ctl_secret"},
		SpecReports: []types.SpecReport{{
			Failure:                    types.Failure{Message: "Expected sk_live_abcdef to equal x", ForwardedPanic: "ctl_secret"},
			AdditionalFailures:         []types.AdditionalFailure{{Failure: types.Failure{Message: "whsec_Zm9v"}}},
			CapturedGinkgoWriterOutput: "sk_live_q",
			ReportEntries:              types.ReportEntries{{Name: "x", Value: types.WrapEntryValue("sk_live_zz")}},
		}},
	}
	got := r.Report(rep)
	var b strings.Builder
	if err := report.WriteJSON(&b, report.Results{SuiteFailures: got.SpecialSuiteFailureReasons}); err != nil {
		t.Fatal(err)
	}
	sr := got.SpecReports[0]
	all := b.String() + sr.Failure.Message + sr.Failure.ForwardedPanic + sr.AdditionalFailures[0].Failure.Message +
		sr.CapturedGinkgoWriterOutput + sr.ReportEntries[0].StringRepresentation()
	for _, leak := range []string{"ctl_secret", "sk_live_abcdef", "whsec_Zm9v", "sk_live_q", "sk_live_zz"} {
		if strings.Contains(all, leak) {
			t.Errorf("redacted report still holds %q", leak)
		}
	}
	if rep.SpecReports[0].Failure.Message != "Expected sk_live_abcdef to equal x" {
		t.Error("Report modified its input")
	}
	var w strings.Builder
	_, _ = r.Writer(&w).Write([]byte("key sk_live_abc and ctl_secret\n"))
	if w.String() != "key sk_live_[REDACTED] and [REDACTED]\n" {
		t.Errorf("Writer wrote %q", w.String())
	}
}

// Ginkgo gives the BeforeAll's Skip reason to the first spec of an Ordered container only, and
// "Spec skipped because Skip() was called in BeforeAll" to the rest (the shape below is what
// Ginkgo v2 reports); every spec of the container must carry the BeforeAll's own reason, in every
// report (they all read SpecResult.Reason). A spec skipped for its own reason keeps it.
func TestBeforeAllSkipReasonReachesEverySpec(t *testing.T) {
	f := testFramework(t)
	outer := types.CodeLocation{FileName: "conformance/specs/talking.go", LineNumber: 10}
	ordered := types.CodeLocation{FileName: "conformance/specs/talking.go", LineNumber: 70}
	other := types.CodeLocation{FileName: "conformance/specs/talking.go", LineNumber: 200}
	inContainer := func(text string, f types.Failure, containers ...types.CodeLocation) types.SpecReport {
		r := itReport(text, types.SpecStateSkipped, "", "HEALTH-001")
		r.Failure = f
		r.ContainerHierarchyLocations = containers
		return r
	}
	generic := types.Failure{Message: ginkgoBeforeAllSkip, FailureNodeContext: types.FailureNodeIsLeafNode, FailureNodeType: types.NodeTypeIt}
	reports := []types.SpecReport{
		// Ginkgo may list them in any order: a later spec before the one carrying the reason.
		inContainer("b", generic, outer, ordered),
		inContainer("a", types.Failure{Message: "unsupported: no script key", FailureNodeContext: types.FailureNodeInContainer,
			FailureNodeType: types.NodeTypeBeforeAll, FailureNodeContainerIndex: 1}, outer, ordered),
		inContainer("c", generic, outer, ordered),
		inContainer("d", types.Failure{Message: "unsupported: own reason", FailureNodeType: types.NodeTypeIt}, outer),
		// A container whose BeforeAll's reason is not in the report keeps Ginkgo's message.
		inContainer("e", generic, other),
	}
	res := BuildResults(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: reports})
	want := map[string]string{"a": "unsupported: no script key", "b": "unsupported: no script key", "c": "unsupported: no script key",
		"d": "unsupported: own reason", "e": ginkgoBeforeAllSkip}
	for _, s := range res.Specs {
		if s.Reason != want[s.Leaf] {
			t.Errorf("spec %s: reason %q, want %q", s.Leaf, s.Reason, want[s.Leaf])
		}
	}
	if len(res.Specs) != len(want) {
		t.Errorf("%d specs, want %d", len(res.Specs), len(want))
	}
}

// A filtered run stopped by its timeout counts only what it selected: the specs the filter left
// out are not selected, the selected ones it did not reach are interrupted (not run), and nothing
// is skipped (issue 39: it reported "0 passed, 0 failed, 369 skipped").
func TestStoppedFilteredRunCountsItsSelection(t *testing.T) {
	f := testFramework(t)
	match, err := types.ParseLabelFilter("HEALTH-001 || AUTH-001")
	if err != nil {
		t.Fatal(err)
	}
	reports := []types.SpecReport{
		itReport("a", types.SpecStatePassed, "", "HEALTH-001"),
		itReport("b", types.SpecStateSkipped, "", "AUTH-001"),
		itReport("c", types.SpecStateSkipped, "", "AUTH-002"),
		itReport("d", types.SpecStateSkipped, "", "HEALTH-002"),
	}
	res := BuildResultsOf(f.catalogue, types.Report{SpecReports: reports, SpecialSuiteFailureReasons: []string{"Suite Timeout Elapsed"}},
		Selection{Match: match})
	if c := res.SpecCounts; c.Passed != 1 || c.Interrupted != 1 || c.NotSelected != 2 || c.Skipped != 0 {
		t.Errorf("counts %+v, want 1 passed, 1 interrupted, 2 not selected, 0 skipped", c)
	}
	if line := res.SpecLine(); line != "1 passed, 0 failed, 0 skipped, 1 interrupted (not run) (2 not selected)" {
		t.Errorf("spec line %q", line)
	}
	shard := BuildResultsOf(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: reports[:1]},
		Selection{Match: match, InShare: func(string) bool { return false }, ShareReason: report.OtherShardReason("2/2")})
	if s := shard.Specs[0]; s.State != report.NotSelected || !strings.Contains(s.Reason, "another shard") {
		t.Errorf("a spec of another shard: %s %q", s.State, s.Reason)
	}
}
