package report_test

import (
	"fmt"
	"os"

	"github.com/mediaspec/mediaspec/report"
)

// Every rule gets one verdict over the specs that carry its id: a rule one spec failed fails, a
// rule no spec checked is not covered.
func ExampleVerdicts() {
	rules := []report.Rule{{ID: "EST-001", Level: "MUST"}, {ID: "EST-002", Level: "MUST"}, {ID: "EST-003", Level: "MUST"}}
	specs := []report.SpecResult{
		{Text: "an estimate answers 200", Rules: []string{"EST-001", "EST-002"}, State: report.Passed},
		{Text: "max_credits_needed pads every take", Rules: []string{"EST-002"}, State: report.Failed, Reason: "want 11, got 10"},
	}
	for _, v := range report.Verdicts(rules, specs) {
		fmt.Println(v.Rule.ID, v.Verdict)
	}
	_, counts := report.Count(specs, report.Verdicts(rules, specs))
	fmt.Println(counts.Passed, counts.Failed, counts.NotCovered)
	// Output:
	// EST-001 passed
	// EST-002 failed
	// EST-003 not_covered
	// 1 1 1
}

// A JUnit document is written as CI tools read it: one <testsuite> per area, a case per spec, a
// failed case with its message and the whole story as body, a skipped case with why.
func ExampleWriteJUnit() {
	doc := report.JUnit{Tests: 2, Failures: 1, Skipped: 1, Suites: []report.Suite{{
		Name: "mediaspec.auth", Tests: 2, Failures: 1, Skipped: 1,
		Cases: []report.Case{
			{Name: "a revoked key answers 401", Classname: "mediaspec.auth",
				Failure: &report.Failure{Message: "want 401, got 200", Type: "failed", Body: "GET /credits/balance answered 200"}},
			{Name: "a read key cannot submit", Classname: "mediaspec.auth",
				Skipped: &report.Skip{Message: "unsupported: no read-only key (--read-key)"}},
		},
	}}}
	if err := report.WriteJUnit(os.Stdout, doc); err != nil {
		panic(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites tests="2" failures="1" skipped="1">
	//   <testsuite name="mediaspec.auth" tests="2" failures="1" skipped="1">
	//     <testcase name="a revoked key answers 401" classname="mediaspec.auth">
	//       <failure message="want 401, got 200" type="failed">GET /credits/balance answered 200</failure>
	//     </testcase>
	//     <testcase name="a read key cannot submit" classname="mediaspec.auth">
	//       <skipped message="unsupported: no read-only key (--read-key)"></skipped>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}

// Coverage counts the text rules a run judged: a rule is judged when every spec that checks it
// ran to a verdict, partly judged when some did, and the rest are counted by what they lacked.
func ExampleCoverageOf() {
	rules := []report.Rule{{ID: "AUTH-001", Level: "MUST"}, {ID: "AUTH-002", Level: "MUST"}, {ID: "AUTH-003", Level: "MUST"}}
	specs := []report.SpecResult{
		{Text: "no key answers 401", Rules: []string{"AUTH-001", "AUTH-002"}, State: report.Passed},
		{Text: "a read key cannot submit", Rules: []string{"AUTH-002", "AUTH-003"}, State: report.Skipped,
			Labels: []string{"read-key"}, Reason: "unsupported: no read-only key"},
	}
	c := report.CoverageOf(report.Verdicts(rules, specs))
	fmt.Printf("judged %d, partly %d, not %d of %d; by need %v\n", c.Judged, c.PartlyJudged, c.NotJudged, c.Total, c.ByNeed)
	// Output: judged 1, partly 1, not 1 of 3; by need map[read_key:2]
}
