package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReadResults reads a JSON report that check (or merge-reports) wrote. It refuses, saying so, a
// report of another shape: one written by an older mediaspec (no report_version: version 1, with
// CamelCase spec_counts) or a newer one.
func ReadResults(data []byte) (Results, error) {
	var head struct {
		Version *int `json:"report_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Results{}, fmt.Errorf("not a JSON report: %w", err)
	}
	switch {
	case head.Version == nil:
		return Results{}, fmt.Errorf("a report of an older mediaspec (no report_version: version 1, with CamelCase spec_counts "+
			"and skipped for not selected): run the check again with this mediaspec, which writes report_version %d", ReportVersion)
	case *head.Version != ReportVersion:
		return Results{}, fmt.Errorf("report_version %d: this mediaspec reads report_version %d; use the mediaspec that wrote it",
			*head.Version, ReportVersion)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return Results{}, fmt.Errorf("not a JSON report of version %d: %w", ReportVersion, err)
	}
	return r, nil
}

// ParseShard reads a shard as "K/N": the K-th of N parts of a run split across machines
// (mediaspec check --shard), 1 <= K <= N <= max.
func ParseShard(s string, max int) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, errK := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if !ok || errK != nil || errN != nil || n < 1 || n > max || k < 1 || k > n {
		return 0, 0, fmt.Errorf("shard %q: want K/N with 1 <= K <= N <= %d, e.g. 2/4", s, max)
	}
	return k, n, nil
}

// MergeShards makes one run's results of the JSON reports of its shards (mediaspec check --shard
// K/N, each run with the same program and label filter): every spec from the shard that ran it
// (a shard reports the specs of the others as not selected), then every rule's verdict, the counts
// and the outcome computed again over them all, as if one process had run the whole selection.
// Suite failures and cancellations of every shard are kept; advisories are merged.
//
// It refuses, naming what is wrong, reports that are not the N shards of one run: a report without
// a shard, shards of different splits, a shard missing or given twice, reports of different
// contracts, programs or label filters, or that list different specs.
func MergeShards(parts []Results) (Results, error) {
	if len(parts) == 0 {
		return Results{}, fmt.Errorf("no shard reports to merge")
	}
	first := parts[0]
	n := 0
	have := map[int]int{} // shard K -> index in parts
	for i, p := range parts {
		if p.Run.Shard == "" {
			return Results{}, fmt.Errorf("report %d is not a shard's (its run has no shard: was it run with check --shard K/N?)", i+1)
		}
		k, pn, err := ParseShard(p.Run.Shard, 1<<20)
		if err != nil {
			return Results{}, fmt.Errorf("report %d: %w", i+1, err)
		}
		if n == 0 {
			n = pn
		}
		if pn != n {
			return Results{}, fmt.Errorf("report %d is shard %s, report 1 is of a split into %d: merge the shards of one split", i+1, p.Run.Shard, n)
		}
		if j, dup := have[k]; dup {
			return Results{}, fmt.Errorf("reports %d and %d are both shard %d/%d", j+1, i+1, k, n)
		}
		have[k] = i
		if err := sameProgram(first, p, i, true, "the shards of one run share the program and the label filter"); err != nil {
			return Results{}, err
		}
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := have[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, n))
		}
	}
	if len(missing) > 0 {
		return Results{}, fmt.Errorf("shard %s missing: merge all %d shards of the run", strings.Join(missing, ", "), n)
	}

	specs, err := pickSpecs(parts, "shards", "the shards were split differently (same program, same filter, same N?)",
		func(_, r SpecResult) (take, ran bool) { return r.State != NotSelected, r.State != NotSelected })
	if err != nil {
		return Results{}, err
	}
	for i, p := range parts {
		if err := sameSpecCount(first, p, i, "shards"); err != nil {
			return Results{}, err
		}
	}
	res := Results{Suite: first.Suite, Specs: specs}
	res = joinRuns(res, parts, fmt.Sprintf(", %d shards", n))
	res.Run.Shard = ""
	return res, nil
}

// joinRuns completes res, whose Specs are the merged specs of parts: the suite failures of every
// part, the merged advisories, every rule's verdict, the counts, the coverage and the outcome
// computed again, and the run of the first part spanning them all (budgets and credits added up,
// targets, modes and cancellations joined; mode gets suffix).
func joinRuns(res Results, parts []Results, suffix string) Results {
	first := parts[0]
	for _, p := range parts {
		for _, f := range p.SuiteFailures {
			if !slices.Contains(res.SuiteFailures, f) {
				res.SuiteFailures = append(res.SuiteFailures, f)
			}
		}
		res.Advisories = MergeAdvisories(res.Advisories, p.Advisories)
	}
	rules := make([]Rule, len(first.Rules))
	for i, v := range first.Rules {
		rules[i] = v.Rule
	}
	res.Rules = Verdicts(rules, res.Specs)
	res.Tally()
	res.Succeeded = len(res.SuiteFailures) == 0 && res.SpecCounts.Failed+res.SpecCounts.Blocked == 0 && res.SpecCounts.Passed > 0

	res.Run = first.Run
	res.Run.Budget, res.Run.CreditsSpent = 0, 0
	var end time.Time
	var targets, modes, cancelled []string
	for _, p := range parts {
		if p.Run.Started.Before(res.Run.Started) {
			res.Run.Started = p.Run.Started
		}
		res.Run.Budget += p.Run.Budget
		res.Run.CreditsSpent += p.Run.CreditsSpent
		if e := p.Run.Started.Add(p.Run.Duration); e.After(end) {
			end = e
		}
		for _, l := range []struct {
			list *[]string
			v    string
		}{{&targets, p.Run.Target}, {&modes, p.Run.Mode}, {&cancelled, p.Run.Cancelled}} {
			if l.v != "" && !slices.Contains(*l.list, l.v) {
				*l.list = append(*l.list, l.v)
			}
		}
	}
	res.Run.Duration = end.Sub(res.Run.Started)
	res.Run.Target = strings.Join(targets, ", ")
	res.Run.Mode = strings.Join(modes, "; ") + suffix
	res.Run.Cancelled = strings.Join(cancelled, "; ")
	return res
}

// MergePasses makes one run's results of the JSON reports of passes over one target's specs (each
// run by the same program, with its own label filter or settings: e.g. a second pass with
// check --real-time --long against a copy of the target whose clock runs faster, for the specs
// that wait out hours of it): every spec from the pass that ran it (passed, failed, blocked or
// interrupted), else the first pass's skip with its reason, else not selected; then every rule's
// verdict, the counts, the coverage and the outcome computed again over them all, so a rule is
// judged when each of its specs ran in some pass. Suite failures of every pass are kept;
// advisories are merged.
//
// It refuses reports of different contracts or programs, reports that list different specs, and a
// spec that ran in two passes (which verdict would count?).
func MergePasses(parts []Results) (Results, error) {
	if len(parts) == 0 {
		return Results{}, fmt.Errorf("no reports to merge")
	}
	first := parts[0]
	for i, p := range parts {
		if err := sameProgram(first, p, i, false, "the passes of one run share the program"); err != nil {
			return Results{}, err
		}
		if err := sameSpecCount(first, p, i, "passes"); err != nil {
			return Results{}, err
		}
	}
	ran := func(state string) bool {
		return state == Passed || state == Failed || state == Blocked || state == Interrupted
	}
	// A pass's skip stands in for a spec no pass ran, the first pass's first: once the pick is no
	// longer not selected, only a run replaces it.
	specs, err := pickSpecs(parts, "passes", "select each spec in one pass only (--label-filter)",
		func(pick, r SpecResult) (take, runs bool) {
			return ran(r.State) || pick.State == NotSelected && r.State != NotSelected, ran(r.State)
		})
	if err != nil {
		return Results{}, err
	}
	res := Results{Suite: first.Suite, Specs: specs}
	return joinRuns(res, parts, fmt.Sprintf(", %d passes", len(parts))), nil
}

// sameProgram refuses report i+1 when its suite, contract or mediaspec version (and its label
// filter, with filter) is not report 1's; why ends the message, saying what the parts share.
func sameProgram(first, p Results, i int, filter bool, why string) error {
	checks := []struct{ what, a, b string }{
		{"suite", first.Suite, p.Suite},
		{"contract version", first.Run.Contract, p.Run.Contract},
		{"mediaspec version", first.Run.Version, p.Run.Version},
	}
	if filter {
		checks = append(checks, struct{ what, a, b string }{"label filter", first.Run.Filter, p.Run.Filter})
	}
	for _, d := range checks {
		if d.a != d.b {
			return fmt.Errorf("report %d has %s %q and report 1 %q: %s", i+1, d.what, d.b, d.a, why)
		}
	}
	return nil
}

// sameSpecCount refuses report i+1 when it lists another number of specs than report 1; kind
// names the parts ("shards", "passes").
func sameSpecCount(first, p Results, i int, kind string) error {
	if len(p.Specs) != len(first.Specs) {
		return fmt.Errorf("report %d lists %d specs and report 1 %d: the %s were run by different programs",
			i+1, len(p.Specs), len(first.Specs), kind)
	}
	return nil
}

// pickSpecs merges the parts' results spec by spec, in report 1's order (a text naming several
// specs matched by its occurrence): each part's result of a spec is offered in turn to choose,
// with the pick so far (report 1's result at first), which says whether it becomes the pick and
// whether the spec ran in that part. A spec some part does not list, or one that ran in more than
// one part, is refused; kind names the parts ("shards", "passes") and twice says what to do about
// a spec that ran twice.
func pickSpecs(parts []Results, kind, twice string, choose func(pick, r SpecResult) (take, ran bool)) ([]SpecResult, error) {
	by := partsByText(parts)
	var out []SpecResult
	seen := map[string]int{}
	for _, s := range parts[0].Specs {
		m := seen[s.Text]
		seen[s.Text]++
		pick, runs := s, 0
		for i := range parts {
			list := by[i][s.Text]
			if m >= len(list) {
				return nil, fmt.Errorf("report %d does not list the spec %q that report 1 lists: the %s were run by different programs",
					i+1, s.Text, kind)
			}
			take, ran := choose(pick, list[m])
			if take {
				pick = list[m]
			}
			if ran {
				runs++
			}
		}
		if runs > 1 {
			return nil, fmt.Errorf("the spec %q ran in %d %s: %s", s.Text, runs, kind, twice)
		}
		out = append(out, pick)
	}
	return out, nil
}

// partsByText indexes each report's specs by text: by[i][text] are report i's results of the specs
// with that text, in its order (a text can name several specs).
func partsByText(parts []Results) []map[string][]SpecResult {
	by := make([]map[string][]SpecResult, len(parts))
	for i, p := range parts {
		by[i] = map[string][]SpecResult{}
		for _, s := range p.Specs {
			by[i][s.Text] = append(by[i][s.Text], s)
		}
	}
	return by
}
