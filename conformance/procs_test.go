package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
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
		r.ContainerHierarchyLocations = []types.CodeLocation{
			{FileName: area + ".go", LineNumber: 1}, {FileName: area + ".go", LineNumber: len(ordered)}}
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
		r := result(text, report.NotSelected, rules...)
		r.Reason = report.NotSelectedReason
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
	if strings.Join(states, " ") != "auth a=passed auth b=failed auth c=passed auth d=not_selected" {
		t.Errorf("merged specs: %v", states)
	}
	if res.SpecCounts != (report.Counts{Passed: 2, Failed: 1, NotSelected: 1}) || res.Succeeded {
		t.Errorf("counts %+v, succeeded %v", res.SpecCounts, res.Succeeded)
	}
	verdict := map[string]string{}
	for _, v := range res.Rules {
		verdict[v.Rule.ID] = v.Verdict
	}
	// AUTH-001 passed in one process and was left undecided by a failure on another rule in the
	// other (partly judged); AUTH-002 failed in one; AUTH-003 was not selected.
	if verdict["AUTH-001"] != report.PartlyJudged || verdict["AUTH-002"] != report.Failed || verdict["AUTH-003"] != report.NotSelected {
		t.Errorf("verdicts: AUTH-001 %s, AUTH-002 %s, AUTH-003 %s", verdict["AUTH-001"], verdict["AUTH-002"], verdict["AUTH-003"])
	}
	if len(res.Rules) != len(cat.Rules) {
		t.Errorf("%d verdicts for %d rules", len(res.Rules), len(cat.Rules))
	}
	c := res.RuleCounts
	if c.Passed+c.PartlyJudged+c.Failed+c.Blocked+c.Skipped+c.Interrupted+c.NotSelected+c.StrictOnly+c.NotCovered+
		c.Unobservable != len(cat.Rules) {
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
// weights), and weights-embedded.json from the one MEDIASPEC_OWN_WEIGHTS_FROM names (make
// weights-embedded); without them, it checks that the committed tables parse.
func TestWriteWeights(t *testing.T) {
	for _, tc := range []struct {
		env, file string
		table     []byte
		write     func(...report.Results) ([]byte, error)
	}{
		{"MEDIASPEC_WEIGHTS_FROM", "weights.json", weightsJSON, WeightsFromResults},
		{"MEDIASPEC_OWN_WEIGHTS_FROM", "weights-embedded.json", ownWeightsJSON, OwnWeightsFromResults},
	} {
		from := os.Getenv(tc.env)
		if from == "" {
			var tbl weightTable
			if err := json.Unmarshal(tc.table, &tbl); err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			continue
		}
		var runs []report.Results
		for _, f := range strings.Fields(from) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var res report.Results
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, res)
		}
		out, err := tc.write(runs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tc.file, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A split run starts a receiver per process: one fixed address or public URL cannot serve them.
func TestCheckSplitReceiver(t *testing.T) {
	for _, c := range []struct {
		listen, url string
		ok          bool
	}{
		{"", "", true},
		{"off", "", true},
		{"127.0.0.1:0", "", true},
		{"127.0.0.1:8080", "", false},
		{"", "https://hooks.example", false},
	} {
		err := checkSplitReceiver(Config{Procs: 2, ReceiverListen: c.listen, ReceiverPublicURL: c.url})
		var setup *framework.SetupError
		if (err == nil) != c.ok || err != nil && !errors.As(err, &setup) {
			t.Errorf("listen %q, url %q: %v, want ok %v (or a setup error)", c.listen, c.url, err, c.ok)
		}
	}
}

// A process runs alone, with its key set (or the suite's own keys), and writes only its JSON
// report, where the parent reads it.
func TestChildConfig(t *testing.T) {
	cfg := Config{Procs: 3, KeySetList: framework.KeySetList{{Key: "k2"}}, KeysFile: "keys.txt", Key: "k1",
		JUnitReport: "j.xml", HTMLReport: "r.html", JSONReport: "r.json", LabelFilter: "AUTH-001"}
	c := childConfig(cfg, 1, &framework.KeySet{Key: "k2", ReadKey: "r2", OtherKey: "o2"}, "/tmp/run")
	if c.Procs != 1 || c.KeySetList != nil || c.KeysFile != "" || c.JUnitReport != "" || c.HTMLReport != "" ||
		c.JSONReport != filepath.Join("/tmp/run", "process-2.json") || c.Key != "k2" || c.ReadKey != "r2" || c.OtherKey != "o2" ||
		c.LabelFilter != "AUTH-001" {
		t.Errorf("process 2's config: %+v", c)
	}
	if c := childConfig(cfg, 0, nil, "d"); c.Key != "k1" || c.JSONReport != filepath.Join("d", "process-1.json") {
		t.Errorf("without a key set: %+v", c)
	}
	if cfg.Procs != 3 || len(cfg.KeySetList) != 1 || cfg.JSONReport != "r.json" {
		t.Errorf("the run's config changed: %+v", cfg)
	}
	// The saved workflows are one per key set, in order: each process is given its own set's.
	cfg.SavedWorkflowIDs = framework.IDList{"wf_1", "wf_2"}
	for i, want := range [][]string{{"wf_1"}, {"wf_2"}, nil} {
		c := childConfig(cfg, i, &framework.KeySet{Key: fmt.Sprint("k", i+1)}, "d")
		if !slices.Equal(c.SavedWorkflowIDs, want) {
			t.Errorf("process %d's saved workflows %v, want %v", i+1, c.SavedWorkflowIDs, want)
		}
	}
}

// The error of a run stopped before it started names the process and its key set, never a key,
// and is a setup error when the process said its setup was wrong (exit status 2).
func TestStartError(t *testing.T) {
	r := newProcRun(&framework.Redactor{}, []*framework.KeySet{nil, {Key: "key-of-set-2"}}, io.Discard)
	r.procs = make([]*proc, 2)
	err := r.startError(1, &procMsg{Msg: "conformance: the key key-of-set-2 was refused (401)", Code: 2})
	var setup *framework.SetupError
	if !errors.As(err, &setup) || err.Error() != "process 2 of 2 (key set 2): the key [REDACTED] was refused (401)" {
		t.Errorf("a setup failure: %T %v", err, err)
	}
	err = r.startError(0, &procMsg{Msg: "it ended before it was ready (exit status 1)", Code: 1})
	if errors.As(err, &setup) || err.Error() != "conformance: process 1 of 2: it ended before it was ready (exit status 1)" {
		t.Errorf("a process that ended: %T %v", err, err)
	}
	err = r.startError(-1, &procMsg{Msg: "stopped before any spec ran", Code: 1})
	if err.Error() != "conformance: stopped before any spec ran" {
		t.Errorf("stopped: %v", err)
	}
}

// nopCloser is a process's stdin in a test: what the parent told it.
type nopCloser struct{ bytes.Buffer }

func (*nopCloser) Close() error { return nil }

// told are the messages the parent wrote to a process's stdin.
func told(t *testing.T, p *proc) []parentMsg {
	t.Helper()
	var ms []parentMsg
	sc := bufio.NewScanner(bytes.NewReader(p.in.(*nopCloser).Bytes()))
	for sc.Scan() {
		var m parentMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// The parent answers budget requests from the run's one budget, and with --fail-fast a failure in
// one process stops every process.
func TestHandleEvents(t *testing.T) {
	newRun := func() *procRun {
		r := newProcRun(&framework.Redactor{}, []*framework.KeySet{nil, nil}, io.Discard)
		r.procs = []*proc{{in: &nopCloser{}}, {in: &nopCloser{}}}
		return r
	}
	con := newConsole(io.Discard, false, map[string]int{"auth": 2})
	r, budget := newRun(), framework.NewBudget(10)
	for _, m := range []procMsg{{Ev: "take", ID: 1, N: 6}, {Ev: "take", ID: 2, N: 6}, {Ev: "give", N: 6}, {Ev: "take", ID: 3, N: 6}} {
		r.handle(procEvent{n: 1, msg: &m}, con, budget, false)
	}
	got := told(t, r.procs[1])
	if len(got) != 3 || got[0] != (parentMsg{ID: 1}) || got[1].ID != 2 || !strings.Contains(got[1].Err, "budget") ||
		got[2] != (parentMsg{ID: 3}) {
		t.Errorf("budget answers: %+v", got)
	}
	if len(told(t, r.procs[0])) != 0 {
		t.Error("process 1 was answered another's request")
	}

	failed := specEvent{Area: "auth", Text: "auth a", State: "FAIL"}
	for _, failFast := range []bool{false, true} {
		r := newRun()
		r.handle(procEvent{n: 0, msg: &procMsg{Ev: "will", Spec: &failed}}, con, budget, failFast)
		r.handle(procEvent{n: 0, msg: &procMsg{Ev: "did", Spec: &failed}}, con, budget, failFast)
		for i, p := range r.procs {
			if stopped := slices.Contains(told(t, p), parentMsg{Stop: true}); stopped != failFast {
				t.Errorf("fail-fast %v: process %d stopped %v", failFast, i+1, stopped)
			}
		}
	}
}

// Processes start with their setup on stdin; the parent reads their events, sends a line that is
// no event to stderr with keys redacted, and a process that fails its preflight stops them all with
// its error. The processes here are cat: each echoes what the parent writes, so the test writes
// their events on their stdin.
func TestProcessesStartAndStop(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat on PATH")
	}
	// A file, as os.Stderr is: the processes write it themselves, and the parent from a goroutine each.
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	r := newProcRun(&framework.Redactor{}, []*framework.KeySet{nil, {Key: "key-of-set-2"}}, stderr)
	if err := r.spawn(exec.Command(cat), "p1.json", []byte(`{"ev":"ready"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.spawn(exec.Command(cat), "p2.json", []byte("not an event: key-of-set-2")); err != nil {
		t.Fatal(err)
	}
	r.procs[1].tell(parentMsg{}) // an echoed parent message is an event of no kind: ignored
	if _, err := io.WriteString(r.procs[1].in, `{"ev":"fail","msg":"conformance: the key was refused (401)","code":2}`+"\n"); err != nil {
		t.Fatal(err)
	}
	err = r.awaitReady(context.Background())
	var setup *framework.SetupError
	if !errors.As(err, &setup) || err.Error() != "process 2 of 2 (key set 2): the key was refused (401)" {
		t.Errorf("awaitReady: %T %v", err, err)
	}
	if r.ended != 2 || r.procs[0].err != nil || r.procs[1].err != nil {
		t.Errorf("after the failure: %d of 2 ended (%v, %v)", r.ended, r.procs[0].err, r.procs[1].err)
	}
	if got, err := os.ReadFile(stderr.Name()); err != nil || string(got) != "process 2: not an event: [REDACTED]\n" {
		t.Errorf("stderr: %q %v", got, err)
	}
}

// The parent reads each process's report; one that wrote none (or a broken one) is a note.
func TestCollectReports(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r := newProcRun(&framework.Redactor{}, nil, io.Discard)
	r.procs = []*proc{
		{report: write("p1.json", `{"report_version":2,"suite":"s","specs":[{"text":"auth a","state":"passed"}]}`)},
		{report: filepath.Join(dir, "missing.json"), err: errors.New("exit status 2")},
		{report: write("p3.json", `{"specs":`)},
	}
	parts, notes := r.collect()
	if len(parts) != 3 || parts[0] == nil || len(parts[0].Specs) != 1 || parts[1] != nil || parts[2] != nil {
		t.Errorf("parts: %+v", parts)
	}
	if len(notes) != 2 || notes[0] != "process 2 of 3 wrote no report (it ended: exit status 2)" ||
		notes[1] != "process 3 of 3 wrote no report (it ended: <nil>)" {
		t.Errorf("notes: %q", notes)
	}
}

// Why processes were cancelled and what failed in their suites is said once, in their order.
func TestMergedRunFailures(t *testing.T) {
	part := func(cancelled string, failures ...string) *report.Results {
		r := &report.Results{SuiteFailures: failures}
		r.Run.Cancelled = cancelled
		return r
	}
	parts := []*report.Results{part("interrupted (Ctrl-C)", "a"), nil, part("", "b", "a"), part("interrupted (Ctrl-C)"),
		part("timed out", "b")}
	if got := cancelledOf(parts); got != "interrupted (Ctrl-C); timed out" {
		t.Errorf("cancelled: %q", got)
	}
	if got := suiteFailuresOf(parts); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("suite failures: %q", got)
	}
	if cancelledOf([]*report.Results{nil, part("")}) != "" || suiteFailuresOf(nil) != nil {
		t.Error("a run nothing cancelled or failed")
	}
}

// A spec that waits out real time weighs its wait only in a --real-time run without control;
// otherwise it skips at once and weighs the least (the bucket specs' minute unbalanced the shares
// of a run that skips them).
func TestRealTimeWeighsOnlyWhenItWaits(t *testing.T) {
	r := types.SpecReport{LeafNodeText: "waits", LeafNodeLabels: []string{"RATE-001", string(framework.RealTime)}}
	w := newWeights(map[string]float64{r.FullText(): 61})
	if got := w.of(r); got != minWeight {
		t.Errorf("without --real-time it weighs %v, want %v", got, minWeight)
	}
	w = weightsFor(Config{RealTime: true})
	w.spec = map[string]float64{r.FullText(): 61}
	if got := w.of(r); got != 61 {
		t.Errorf("with --real-time it weighs %v, want 61", got)
	}
	if w = weightsFor(Config{RealTime: true, ControlURL: "http://127.0.0.1:1/_control/v1"}); w.realTime {
		t.Error("with control the clock is advanced: no real-time weight")
	}
}

// The embedded check's table keeps milliseconds and every spec, a skipped one with what it cost,
// and weighs the real-time specs by it (they run on the embedded mock's manual clock).
func TestOwnWeights(t *testing.T) {
	out, err := OwnWeightsFromResults(report.Results{Specs: []report.SpecResult{
		{Text: "a", State: report.Passed, Duration: 1234567890},
		{Text: "b", State: report.Skipped, Duration: 3000000},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var tbl weightTable
	if err := json.Unmarshal(out, &tbl); err != nil {
		t.Fatal(err)
	}
	if tbl.Specs["a"] != 1.234 || tbl.Specs["b"] != 0.003 {
		t.Errorf("own weights %v, want a 1.234 and b 0.003", tbl.Specs)
	}
	w := ownTargetWeights()
	if !w.realTime || w.least != ownMinWeight || len(w.spec) == 0 {
		t.Errorf("the embedded table: realTime %v, least %v, %d specs", w.realTime, w.least, len(w.spec))
	}
}

// A spec declaring a need the run lacks skips at once, so it weighs the least whatever the table
// says; the table keeps a spec that skipped on what its body found, and leaves out one that
// skipped for a need it declares.
func TestWeightsOfUnmetNeeds(t *testing.T) {
	ctl := specReport("auth", "needs control", []string{"AUTH-001", string(framework.Control)}, "", false)
	plain := specReport("auth", "plain", []string{"AUTH-002", string(framework.Spends)}, "", false)
	w := newWeights(map[string]float64{ctl.FullText(): 30, plain.FullText(): 30})
	keys := w.withCaps(Config{Key: "k", Budget: 10}, nil)
	if got := keys.of(ctl); got != minWeight {
		t.Errorf("a control spec without control weighs %v, want %v", got, minWeight)
	}
	if got := keys.of(plain); got != 30 {
		t.Errorf("a spec whose needs are met weighs %v, want 30", got)
	}
	if got := w.withCaps(Config{ControlURL: "http://127.0.0.1:1", Budget: 10}, nil).of(ctl); got != 30 {
		t.Errorf("a control spec with control weighs %v, want 30", got)
	}
	out, err := WeightsFromResults(report.Results{Specs: []report.SpecResult{
		{Text: "dynamic", State: report.Skipped, Labels: []string{"AUTH-003", "spends"}, Duration: 60e9},
		{Text: "static", State: report.Skipped, Labels: []string{"AUTH-004", "control"}, Duration: 1e6},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var tbl weightTable
	if err := json.Unmarshal(out, &tbl); err != nil {
		t.Fatal(err)
	}
	if _, has := tbl.Specs["static"]; has || tbl.Specs["dynamic"] != 60 {
		t.Errorf("table %v: want dynamic 60 and no static", tbl.Specs)
	}
}

// In a run whose processes share their keys, the specs that upload are spread over the
// processes (the upload bucket of a key is 30 calls a minute), whatever their weights say; the
// other specs still balance the weights, and with control nothing is spread.
func TestSpreadUploads(t *testing.T) {
	var preview types.Report
	w := map[string]float64{}
	up := map[string]bool{}
	for i := range 8 {
		r := specReport("uploads", fmt.Sprintf("u%d", i), []string{string(framework.Uploads)}, "", false)
		preview.SpecReports = append(preview.SpecReports, r)
		w[r.FullText()], up[r.FullText()] = 0, true
	}
	w[preview.SpecReports[0].FullText()] = 60 // the one that empties its key's bucket
	for i := range 8 {
		r := specReport("workflows", fmt.Sprintf("w%d", i), nil, "", false)
		preview.SpecReports = append(preview.SpecReports, r)
		w[r.FullText()] = 30
	}
	count := func(cfg Config) []int {
		var n []int
		for _, share := range planShards(preview, 4, weightsFor(cfg).withWeights(w)) {
			k := 0
			for _, text := range share {
				if up[text] {
					k++
				}
			}
			n = append(n, k)
		}
		return n
	}
	if got := count(Config{}); !slices.Equal(got, []int{2, 2, 2, 2}) {
		t.Errorf("keys only: uploading specs per share %v, want 2 each", got)
	}
	if got := count(Config{ControlURL: "http://127.0.0.1:1/_control/v1"}); slices.Equal(got, []int{2, 2, 2, 2}) {
		t.Errorf("with control: uploading specs per share %v, want them packed by weight", got)
	}
}

// In a run whose processes share their keys, an area's light specs (its refusals, one bucket's
// calls) are spread over shares of about equal weight instead of filling the lightest one.
func TestSpreadAreas(t *testing.T) {
	var preview types.Report
	w := map[string]float64{}
	for i := range 4 {
		r := specReport("workflows", fmt.Sprintf("w%d", i), nil, "", false)
		preview.SpecReports = append(preview.SpecReports, r)
		w[r.FullText()] = []float64{30, 30, 30, 22}[i]
	}
	for i := range 8 {
		r := specReport("submit", fmt.Sprintf("refuses %d", i), nil, "", false)
		preview.SpecReports = append(preview.SpecReports, r)
		w[r.FullText()] = 1
	}
	// By weight alone the 22 s share takes all eight (30 s); spread, each share takes two.
	for _, share := range planShards(preview, 4, weightsFor(Config{}).withWeights(w)) {
		if len(share) != 3 {
			t.Errorf("share %v: want one heavy spec and two refusal specs", share)
		}
	}
	control := weightsFor(Config{ControlURL: "http://127.0.0.1:1/_control/v1"}).withWeights(w)
	if shares := planShards(preview, 4, control); len(shares[3]) != 9 {
		t.Errorf("with control the lightest share takes the light specs by weight: %v", shares)
	}
}

// The embedded weight tables parse, and list specs: a broken one would panic the run that reads it.
func TestEmbeddedWeightTables(t *testing.T) {
	for name, b := range map[string][]byte{"weights.json": weightsJSON, "weights-embedded.json": ownWeightsJSON} {
		var tbl weightTable
		if err := json.Unmarshal(b, &tbl); err != nil || len(tbl.Specs) == 0 {
			t.Errorf("%s: %v, %d specs", name, err, len(tbl.Specs))
		}
	}
	if keysOnlyTable().Specs == nil || ownTable().Specs == nil {
		t.Error("an embedded table parsed to nothing")
	}
}
