package report_test

import (
	"fmt"

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
