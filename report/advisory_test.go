package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMergeAdvisoriesCountsEachDifferenceOnce(t *testing.T) {
	a := Advisory{Operation: "GET /capabilities", Status: 200, Path: "$.capabilities[0].description",
		Reference: `property "description" is missing`, Count: 1, Specs: []string{"s1"}}
	b := a
	b.Specs, b.Count = []string{"s2"}, 2
	c := Advisory{Operation: "GET /capabilities", Status: 200, Path: "$.capabilities[0].max_variants",
		Reference: `property "max_variants" is missing`, Count: 1}
	got := MergeAdvisories([]Advisory{c, a}, []Advisory{b})
	if len(got) != 2 || got[0].Path != a.Path || got[0].Count != 3 || strings.Join(got[0].Specs, ",") != "s1,s2" || got[1].Count != 1 {
		t.Errorf("merged = %+v", got)
	}
}

// An advisory is never a failure in any report: the JUnit document counts no failure for it and
// lists it in a suite of its own; the JSON and HTML reports list it.
func TestAdvisoriesInReports(t *testing.T) {
	res := Results{Suite: "s", Succeeded: true,
		Specs: []SpecResult{{Text: "a spec", Area: "catalogue", Rules: []string{"CAT-001"}, State: Passed}},
		Advisories: []Advisory{{Operation: "GET /capabilities/{id}", Status: 200, Path: "$.description",
			Reference: `property "description" is missing`, Count: 4, Specs: []string{"a spec"}}}}
	var junit bytes.Buffer
	if err := res.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	x := junit.String()
	for _, want := range []string{
		`failures="0"`,
		`<testsuite name="mediaspec.advisories" tests="0" failures="0"`,
		`<property name="advisory.1" value="GET /capabilities/{id} -&gt; 200 $.description: property &#34;description&#34; is missing`,
		"<system-out>",
	} {
		if !strings.Contains(x, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, x)
		}
	}
	if strings.Contains(x, "<failure") {
		t.Errorf("JUnit has a failure for an advisory:\n%s", x)
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Advisories) != 1 || back.Advisories[0].Count != 4 {
		t.Errorf("JSON advisories = %+v (%v)", back.Advisories, err)
	}
	var html bytes.Buffer
	if err := res.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "Advisories (1)") || !strings.Contains(html.String(), "$.description") {
		t.Errorf("HTML report lacks the advisories section")
	}
}
