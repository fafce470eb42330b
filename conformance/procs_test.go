package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// specReport is an It of a dry run: in file area.go, selected unless skipped.
func specReport(area, text string, labels []string, ordered string, skipped bool) types.SpecReport {
	r := types.SpecReport{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: text, ContainerHierarchyTexts: []string{area},
		LeafNodeLocation: types.CodeLocation{FileName: "/m/conformance/specs/" + area + ".go", LineNumber: len(text)},
		LeafNodeLabels:   labels, State: types.SpecStatePassed,
	}
	if ordered != "" {
		r.IsInOrderedContainer = true
		r.ContainerHierarchyTexts = append(r.ContainerHierarchyTexts, ordered)
		r.ContainerHierarchyLocations = []types.CodeLocation{{FileName: area + ".go", LineNumber: 1}, {FileName: area + ".go", LineNumber: len(ordered)}}
	}
	if skipped {
		r.State = types.SpecStateSkipped
	}
	return r
}

// checkShares fails unless every selected spec of preview is in exactly one share, the specs of
// one Ordered container share a share, and no share is empty.
func checkShares(t *testing.T, preview types.Report, shares [][]string) {
	t.Helper()
	in := map[string]int{}
	for i, share := range shares {
		if len(share) == 0 {
			t.Errorf("share %d is empty", i)
		}
		for _, text := range share {
			if j, dup := in[text]; dup {
				t.Errorf("%q is in shares %d and %d", text, j, i)
			}
			in[text] = i
		}
	}
	ordered := map[string]int{}
	for _, r := range preview.SpecReports {
		i, ok := in[r.FullText()]
		if !selectedIn(r) {
			if ok {
				t.Errorf("%q is not selected but in share %d", r.FullText(), i)
			}
			continue
		}
		if !ok {
			t.Errorf("%q is in no share", r.FullText())
			continue
		}
		if r.IsInOrderedContainer {
			key := fmt.Sprint(r.ContainerHierarchyLocations)
			if j, seen := ordered[key]; seen && j != i {
				t.Errorf("the Ordered container of %q is split over shares %d and %d", r.FullText(), j, i)
			}
			ordered[key] = i
		}
	}
}

func TestPlanShards(t *testing.T) {
	var preview types.Report
	weights := map[string]float64{}
	for i := range 40 {
		area := []string{"auth", "uploads", "webhooks"}[i%3]
		ordered := ""
		if i%10 < 3 {
			ordered = "flow"
		}
		r := specReport(area, fmt.Sprintf("spec %d", i), nil, ordered, i%7 == 6)
		preview.SpecReports = append(preview.SpecReports, r)
		weights[r.FullText()] = float64(i % 5)
	}
	// Two specs with one text (Ginkgo's focus cannot tell them apart) go together.
	preview.SpecReports = append(preview.SpecReports, specReport("auth", "spec 0", nil, "", false))
	for _, n := range []int{1, 2, 3, 6, 100} {
		shares := planShards(preview, n, newWeights(weights))
		if len(shares) > n {
			t.Errorf("%d shares for %d processes", len(shares), n)
		}
		checkShares(t, preview, shares)
	}
	// Weights balance: 4 heavy specs over 4 processes, one each.
	var heavy types.Report
	w := map[string]float64{}
	for i := range 8 {
		r := specReport("submit", fmt.Sprintf("h%d", i), nil, "", false)
		heavy.SpecReports = append(heavy.SpecReports, r)
		w[r.FullText()] = 1
		if i < 4 {
			w[r.FullText()] = 100
		}
	}
	for _, share := range planShards(heavy, 4, newWeights(w)) {
		n := 0
		for _, text := range share {
			if w[text] == 100 {
				n++
			}
		}
		if n != 1 || len(share) != 2 {
			t.Errorf("unbalanced share %v", share)
		}
	}
}

func TestMergeShards(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	preview := types.Report{SpecReports: []types.SpecReport{
		specReport("auth", "a", []string{"AUTH-001"}, "", false),
		specReport("auth", "b", []string{"AUTH-001", "AUTH-002"}, "", false),
		specReport("auth", "c", []string{"AUTH-002"}, "", false),
		specReport("auth", "d", []string{"AUTH-003"}, "", true), // not selected
	}}
	shares := [][]string{{"auth a", "auth c"}, {"auth b"}}
	result := func(text, state string, rules ...string) report.SpecResult {
		return report.SpecResult{Text: text, Area: "auth", Rules: rules, Labels: rules, State: state}
	}
	notSel := func(text string, rules ...string) report.SpecResult {
		r := result(text, report.Skipped, rules...)
		r.Reason = report.NotSelected
		return r
	}
	p0 := &report.Results{Specs: []report.SpecResult{
		result("auth a", report.Passed, "AUTH-001"), notSel("auth b", "AUTH-001", "AUTH-002"),
		result("auth c", report.Passed, "AUTH-002"), notSel("auth d", "AUTH-003")}}
	failedB := result("auth b", report.Failed, "AUTH-001", "AUTH-002")
	failedB.FailedRules, failedB.Reason = []string{"AUTH-002"}, "wrong status"
	p1 := &report.Results{Specs: []report.SpecResult{
		notSel("auth a", "AUTH-001"), failedB, notSel("auth c", "AUTH-002"), notSel("auth d", "AUTH-003")}}

	res := mergeShards(cat, preview, shares, []*report.Results{p0, p1}, nil)
	var states []string
	for _, s := range res.Specs {
		states = append(states, s.Text+"="+s.State)
	}
	if strings.Join(states, " ") != "auth a=passed auth b=failed auth c=passed auth d=skipped" {
		t.Errorf("merged specs: %v", states)
	}
	if res.SpecCounts != (report.Counts{Passed: 2, Failed: 1, NotSelected: 1}) || res.Succeeded {
		t.Errorf("counts %+v, succeeded %v", res.SpecCounts, res.Succeeded)
	}
	verdict := map[string]string{}
	for _, v := range res.Rules {
		verdict[v.Rule.ID] = v.Verdict
	}
	// AUTH-001 passed in one process and was not charged in the other; AUTH-002 failed in one.
	if verdict["AUTH-001"] != report.Passed || verdict["AUTH-002"] != report.Failed || verdict["AUTH-003"] != report.Skipped {
		t.Errorf("verdicts: AUTH-001 %s, AUTH-002 %s, AUTH-003 %s", verdict["AUTH-001"], verdict["AUTH-002"], verdict["AUTH-003"])
	}
	if len(res.Rules) != len(cat.Rules) {
		t.Errorf("%d verdicts for %d rules", len(res.Rules), len(cat.Rules))
	}
	c := res.RuleCounts
	if c.Passed+c.Failed+c.Blocked+c.Skipped+c.NotCovered+c.Unobservable != len(cat.Rules) {
		t.Errorf("rule counts %+v", c)
	}

	// A process that wrote no report: its specs are not run, and the run fails.
	res = mergeShards(cat, preview, shares, []*report.Results{p0, nil}, []string{"process 2 of 2 wrote no report"})
	if res.Specs[1].State != report.Skipped || !strings.Contains(res.Specs[1].Reason, "process 2 of 2") || res.Succeeded ||
		!slices.Contains(res.SuiteFailures, "process 2 of 2 wrote no report") || res.Err() == nil {
		t.Errorf("missing report: %+v", res)
	}
}

// shardHelperEnv makes the test binary plan the real spec tree's shares and dry-run one of them:
// Ginkgo builds one spec tree per process.
const shardHelperEnv = "MEDIASPEC_SHARD_HELPER"

// TestShardsOfTheSpecTree: every spec of the suite is in exactly one share for any number of
// processes, and a process restricted to its share runs exactly that share.
func TestShardsOfTheSpecTree(t *testing.T) {
	if os.Getenv(shardHelperEnv) != "" {
		shardHelper(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShardsOfTheSpecTree$", "-test.v")
	cmd.Env = append(os.Environ(), shardHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SHARE-OK") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}

func shardHelper(t *testing.T) {
	ctx := context.Background()
	s, err := NewSuite(ctx, Config{BaseURL: "http://127.0.0.1:1/api/v1", Key: "sk_live_x", Budget: 1, Slow: true, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.selected < 100 {
		t.Fatalf("only %d specs selected", s.selected)
	}
	w := loadWeights()
	var shares [][]string
	for n := 1; n <= 8; n++ {
		shares = planShards(s.preview, n, w)
		checkShares(t, s.preview, shares)
	}
	// Dry-run the last share of 8: exactly its specs run.
	share := shares[len(shares)-1]
	s.restrict(share)
	if s.selected != len(share) {
		t.Errorf("restricted to %d specs, %d selected", len(share), s.selected)
	}
	sc, rc := ginkgo.GinkgoConfiguration()
	sc, rc = s.Configure(ctx, sc, rc)
	sc.DryRun = true
	ran := map[string]int{}
	ginkgo.ReportAfterEach(func(r types.SpecReport) {
		if r.LeafNodeType == types.NodeTypeIt && r.State == types.SpecStatePassed {
			ran[r.FullText()]++
		}
	})
	s.RunSpecs(t, sc, rc)
	for _, text := range share {
		if ran[text] == 0 {
			t.Errorf("%q of the share did not run", text)
		}
		delete(ran, text)
	}
	for text := range ran {
		t.Errorf("%q ran outside the share", text)
	}
	if !t.Failed() {
		fmt.Println("SHARE-OK")
	}
}

// TestWriteWeights writes weights.json from the JSON report MEDIASPEC_WEIGHTS_FROM names (make
// weights); without it, it checks that the committed table parses.
func TestWriteWeights(t *testing.T) {
	from := os.Getenv("MEDIASPEC_WEIGHTS_FROM")
	if from == "" {
		var tbl weightTable
		if err := json.Unmarshal(weightsJSON, &tbl); err != nil {
			t.Fatalf("weights.json: %v", err)
		}
		return
	}
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var res report.Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	out, err := WeightsFromResults(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("weights.json", out, 0o644); err != nil {
		t.Fatal(err)
	}
}
