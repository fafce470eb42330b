package framework

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/report"
	"github.com/onsi/ginkgo/v2/types"
)

func TestJUnitHasOneClassPerAreaAndShortNames(t *testing.T) {
	f := testFramework(t)
	long := strings.Repeat("a very long spec text ", 20)
	a := itReport(long, types.SpecStateFailed, "want 401\n> GET /x\n< 200 OK", "AUTH-001")
	a.LeafNodeLocation = types.CodeLocation{FileName: "/build/machine/src/conformance/specs/auth.go", LineNumber: 12}
	b := itReport("live", types.SpecStatePassed, "", "HEALTH-001")
	b.LeafNodeLocation = types.CodeLocation{FileName: "/build/machine/src/conformance/specs/basics.go", LineNumber: 7}
	c := itReport("not selected", types.SpecStateSkipped, "", "HEALTH-002")
	res := BuildResults(f.catalogue, types.Report{SuiteDescription: "s", SpecReports: []types.SpecReport{a, b, c}})
	var out bytes.Buffer
	if err := res.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	var doc report.JUnit
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out.String())
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "mediaspec.auth" || doc.Suites[1].Name != "mediaspec.basics" {
		t.Fatalf("suites %+v, want mediaspec.auth and mediaspec.basics (the unselected spec left out)", doc.Suites)
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("case %q has classname %q in suite %q", c.Name, c.Classname, s.Name)
			}
			if len([]rune(c.Name)) > report.MaxNameLen {
				t.Errorf("case name has %d characters: %q", len([]rune(c.Name)), c.Name)
			}
		}
	}
	if got := doc.Suites[0].Cases[0]; !strings.HasPrefix(got.Name, "AUTH-001: a very long") || got.Failure == nil || got.Failure.Message != "want 401" {
		t.Errorf("failed case %+v", got)
	}
	if strings.Contains(out.String(), "/build/machine") || strings.Contains(out.String(), "<system-err>") {
		t.Errorf("absolute path or node noise in the JUnit report:\n%s", out.String())
	}
	if res.Specs[0].Location != "conformance/specs/auth.go:12" {
		t.Errorf("location %q, want the spec's own file relative to the module", res.Specs[0].Location)
	}
}

// Verdicts come from the step that failed: a spec that charged its failure to one rule fails that
// rule only; its other rules stay undecided by it.
func TestVerdictsFromTheFailedStep(t *testing.T) {
	f := testFramework(t)
	a := itReport("row fields", types.SpecStateFailed, "a row lacks batch_group_id", "AUTH-001", "HEALTH-001")
	a.ReportEntries = types.ReportEntries{{Name: FailedRulesEntry, Value: types.WrapEntryValue("HEALTH-001")}}
	res := BuildResults(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: []types.SpecReport{a}})
	got := map[string]string{}
	for _, v := range res.Rules {
		got[v.Rule.ID] = v.Verdict
	}
	if got["HEALTH-001"] != report.Failed || got["AUTH-001"] != report.Blocked {
		t.Errorf("verdicts %v: want HEALTH-001 failed and AUTH-001 left undecided (blocked)", got)
	}
	if res.Specs[0].State != report.Failed {
		t.Error("the spec itself still failed")
	}
}

// A skip carries its typed reason to the reports: the one SkipFor recorded, or, for a reason given
// only as text (Ginkgo's own, an untyped Skip), the one its words give; the text is unchanged.
func TestSkipReasonsAreTyped(t *testing.T) {
	f := testFramework(t)
	typed := Unsupported(Control, "needs the control API: no --control-url given")
	b, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	a := itReport("typed", types.SpecStateSkipped, typed.Text, "AUTH-001")
	a.ReportEntries = types.ReportEntries{{Name: SkipEntry, Value: types.WrapEntryValue(string(b))}}
	u := itReport("untyped", types.SpecStateSkipped, "disabled: slow spec; pass --slow to run it", "HEALTH-001")
	res := BuildResults(f.catalogue, types.Report{SuiteSucceeded: true, SpecReports: []types.SpecReport{a, u}})
	got := res.Specs[0]
	if got.Skip == nil || *got.Skip != typed || got.Reason != typed.Text {
		t.Errorf("typed skip %+v (reason %q), want %+v", got.Skip, got.Reason, typed)
	}
	if k := TierOf([]Need{Control, ReadKey}); k != TierControl || report.NeedOf(got) != report.NeedControl {
		t.Errorf("tier %s, need %s", k, report.NeedOf(got))
	}
	if s := res.Specs[1].Skip; s == nil || s.Kind != report.SkipDisabled || s.Need != report.NeedSlow || s.Tier != "" {
		t.Errorf("untyped skip typed as %+v, want disabled, slow, no tier", s)
	}
}
