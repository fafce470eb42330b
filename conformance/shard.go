package conformance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/report"
)

// weightsJSON is how long each spec took in a keys-only run against the mock binary at real time
// (seconds by full text; make weights writes it from a JSON report), for planShards to balance
// the processes of a split run. A spec it does not list weighs its area's mean, or defaultWeight.
//
//go:embed weights.json
var weightsJSON []byte

// ownWeightsJSON is how long each spec took against the embedded mock in one process (seconds by
// full text, to the millisecond; make weights-embedded writes it): a run whose processes start a
// target each (the embedded check) has no bucket waits, and its few heavy specs (the real-time
// quiet windows, the media a mock decodes) are what the split must spread.
//
//go:embed weights-embedded.json
var ownWeightsJSON []byte

// minWeight is the least a spec weighs: a spec that skips at once still costs a little.
const minWeight = 0.1

// defaultWeight is the weight of a spec of an area the table does not know, in seconds.
const defaultWeight = 1.0

// weights are the seconds of the specs the table knows, and the mean per area.
type weights struct {
	spec map[string]float64
	area map[string]float64
	// realTime says the run waits out the target's clock (--real-time without control): only then
	// does a spec that needs real-time weigh its wait; otherwise it skips at once.
	realTime bool
	// least is the least a spec weighs: minWeight, or ownMinWeight against an own target.
	least float64
	// caps, when set, are the run's: a spec that declares a need they lack skips at once, so it
	// weighs the least whatever the table says (the table's run may have offered the need).
	caps *framework.Capabilities
	// spreadUploads says the specs of a process share its keys (no control): the upload calls of
	// one spec empty the key's upload bucket (30 a minute) for the next, so planShards spreads
	// the specs that upload over the processes instead of letting the weights pack them together,
	// and each area's specs over shares of about equal weight (spreadSlack).
	spreadUploads bool
}

// withCaps is w for a run of cfg whose processes get key sets like ks (nil: the configured keys).
func (w weights) withCaps(cfg Config, ks *framework.KeySet) weights {
	caps := configCaps(cfg, ks)
	w.caps = &caps
	return w
}

// configCaps is what a run of cfg whose processes get key sets like ks (nil: the configured keys,
// a keys file counting as giving each process a read key and a second workspace's) will offer its
// specs, as far as the configuration says before any process sets up (a receiver is taken to be
// reachable, as a run that asks for one is).
func configCaps(cfg Config, ks *framework.KeySet) framework.Capabilities {
	ctl := cfg.ControlURL != ""
	readKey, otherKey := cfg.ReadKey != "" || cfg.KeysFile != "", cfg.OtherKey != "" || cfg.KeysFile != ""
	if ks != nil {
		readKey, otherKey = ks.ReadKey != "", ks.OtherKey != ""
	}
	return framework.Capabilities{
		Control:         ctl,
		TestInputs:      cfg.Offers(framework.FeatureTestInputs),
		SecondWorkspace: ctl || otherKey,
		ReadKey:         ctl || readKey,
		Budget:          cfg.Budget,
		Slow:            cfg.Slow,
		RealTime:        cfg.RealTime,
		Long:            cfg.RealTime && cfg.Long,
		Uploads:         true,
		Receiver:        true,
		Roles:           cfg.Roles(),
	}
}

// needsOf are the needs among a spec's labels.
func needsOf(labels []string) []framework.Need {
	var out []framework.Need
	for _, l := range labels {
		if slices.Contains(framework.AllNeeds, framework.Need(l)) {
			out = append(out, framework.Need(l))
		}
	}
	return out
}

// keysOnlyNeeds are the needs a keys-only run with a whole key set offers (make weights' run):
// a spec skipped there while declaring only these skipped on what its body found, and weighs what
// that cost; one declaring another need skipped for that need, which a later run may offer.
var keysOnlyNeeds = []framework.Need{framework.Spends, framework.Uploads, framework.SecondWorkspace, framework.ReadKey, framework.Receiver}

// weightsFor is the embedded table for a run of cfg.
func weightsFor(cfg Config) weights {
	w := loadWeights()
	w.realTime = cfg.RealTime && cfg.ControlURL == ""
	w.spreadUploads = cfg.ControlURL == ""
	return w
}

// ownTargetWeights is the table of a run whose processes start a target each (the embedded mock,
// with control: every spec runs, the real-time ones on its manual clock).
func ownTargetWeights() weights {
	w := newWeights(ownTable().Specs)
	w.realTime, w.least = true, ownMinWeight
	return w
}

// ownMinWeight is the least a spec weighs against an own target, where most take milliseconds.
const ownMinWeight = 0.002

// weightTable is the file's shape.
type weightTable struct {
	Note  string             `json:"note"`
	Specs map[string]float64 `json:"specs"`
}

// loadWeights is the embedded table's weights.
func loadWeights() weights {
	return newWeights(keysOnlyTable().Specs)
}

// keysOnlyTable and ownTable are the embedded tables, parsed once. They are the module's own files:
// one that does not parse is a bug (TestEmbeddedWeightTables fails on it), not a run's condition.
var (
	keysOnlyTable = sync.OnceValue(func() weightTable { return mustTable("weights.json", weightsJSON) })
	ownTable      = sync.OnceValue(func() weightTable { return mustTable("weights-embedded.json", ownWeightsJSON) })
)

// mustTable parses an embedded weight table, panicking when it does not parse.
func mustTable(name string, b []byte) weightTable {
	var t weightTable
	if err := json.Unmarshal(b, &t); err != nil {
		panic(fmt.Sprintf("conformance: the embedded %s does not parse: %v", name, err))
	}
	return t
}

// withWeights is w with the table specs instead of the embedded one (tests).
func (w weights) withWeights(specs map[string]float64) weights {
	w.spec, w.area = specs, map[string]float64{}
	return w
}

// newWeights indexes seconds by full text (the text starts with the area's container text, but
// the area is taken from the spec's file when planning, so the mean per area is by that).
func newWeights(specs map[string]float64) weights {
	return weights{spec: specs, area: map[string]float64{}, least: minWeight}
}

func (w weights) of(r types.SpecReport) float64 {
	if w.skips(r) {
		return w.least
	}
	if s, ok := w.spec[r.FullText()]; ok {
		return s
	}
	if s, ok := w.area[framework.AreaOf(r.LeafNodeLocation.FileName)]; ok {
		return s
	}
	return defaultWeight
}

// skips reports whether the spec skips at once in this run: it waits out real time in a run that
// does not, or declares a need the run lacks.
func (w weights) skips(r types.SpecReport) bool {
	if !w.realTime && slices.Contains(r.Labels(), string(framework.RealTime)) {
		return true
	}
	return w.caps != nil && w.caps.Unmet(needsOf(r.Labels())) != ""
}

// uploads reports whether the spec uploads in this run (spreadUploads): it declares the need and
// does not skip at once.
func (w weights) uploads(r types.SpecReport) bool {
	return w.spreadUploads && slices.Contains(r.Labels(), string(framework.Uploads)) && !w.skips(r)
}

// WeightsFromResults is the weight table of runs' results: each spec that ran (passed, failed or
// blocked) with its seconds, and each that skipped on what its body found (it declares no need
// but keysOnlyNeeds) with what it cost before it skipped, the mean over the runs where it counts,
// rounded to a tenth. A spec skipped for a need it declares is left out: a run offering the need
// weighs it by its area's mean, one lacking it at the least (weights.caps). Several runs make a
// steadier table: a spec's bucket waits depend on the specs its process ran before it.
func WeightsFromResults(runs ...report.Results) ([]byte, error) {
	t := weightTable{
		Note: "seconds each spec took in a keys-only run of the mock binary at real time, the mean of " + fmt.Sprint(len(runs)) +
			" runs over 8 processes (its bucket waits move with the specs beside it); mediaspec check --procs balances its " +
			"processes by them (make weights REPORT='a.json b.json ...' writes this file)",
		Specs: map[string]float64{},
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, res := range runs {
		seen := map[string]bool{}
		for _, s := range res.Specs {
			if s.State == report.Passed || s.Stopped() || (s.State == report.Skipped && !declaresOther(s.Labels)) {
				sum[s.Text] += s.Duration.Seconds()
				if !seen[s.Text] {
					seen[s.Text] = true
					n[s.Text]++
				}
			}
		}
	}
	for text, v := range sum {
		t.Specs[text] = math.Round(v/float64(n[text])*10) / 10
	}
	out, err := json.MarshalIndent(t, "", "  ")
	return append(out, '\n'), err
}

// declaresOther reports whether labels name a need beyond keysOnlyNeeds.
func declaresOther(labels []string) bool {
	for _, n := range needsOf(labels) {
		if !slices.Contains(keysOnlyNeeds, n) {
			return true
		}
	}
	return false
}

// OwnWeightsFromResults is the weight table of an embedded run's results (weights-embedded.json):
// every spec with its seconds to the millisecond, since most take a few; one that skipped, or
// that the run left to --strict, with the little it cost (a spec the table does not list would
// weigh its area's mean); the mean over the runs given.
func OwnWeightsFromResults(runs ...report.Results) ([]byte, error) {
	t := weightTable{
		Note: "seconds each spec took against the embedded mock in one process (mediaspec check --procs 1); " +
			"the embedded check balances its processes by them (make weights-embedded writes this file)",
		Specs: map[string]float64{},
	}
	for _, res := range runs {
		for _, s := range res.Specs {
			t.Specs[s.Text] += float64(s.Duration.Milliseconds())
		}
	}
	for text, ms := range t.Specs {
		t.Specs[text] = math.Round(ms/float64(len(runs))) / 1000
	}
	out, err := json.MarshalIndent(t, "", "  ")
	return append(out, '\n'), err
}

// planShards splits the specs a dry run selects into at most n shares of about equal weight, each
// share the full texts of its specs; every selected spec is in exactly one share. Specs that must
// run in one process stay together: those of one Ordered container (they share its BeforeAll), and
// specs with one full text (Ginkgo's focus cannot tell them apart). The heaviest group goes first
// to the lightest share, so the run takes about as long as its heaviest share; in a run whose
// processes share their keys, a group that uploads goes to the lightest of the shares with the
// fewest such groups, and a group to the share within spreadSlack of the lightest with the fewest
// of its area's (weights.spreadUploads).
func planShards(preview types.Report, n int, w weights) [][]string {
	if len(w.area) == 0 && len(w.spec) > 0 {
		sum, cnt := map[string]float64{}, map[string]int{}
		for _, r := range preview.SpecReports {
			if s, ok := w.spec[r.FullText()]; ok && r.LeafNodeType == types.NodeTypeIt {
				a := framework.AreaOf(r.LeafNodeLocation.FileName)
				sum[a] += s
				cnt[a]++
			}
		}
		w.area = map[string]float64{}
		for a := range sum {
			w.area[a] = sum[a] / float64(cnt[a])
		}
	}
	type group struct {
		texts   []string
		weight  float64
		first   int
		uploads bool
		area    string
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, r := range preview.SpecReports {
		if !selectedIn(r) {
			continue
		}
		text := r.FullText()
		keys := []string{"text " + text}
		if r.IsInOrderedContainer {
			var locs []string
			for _, cl := range r.ContainerHierarchyLocations {
				locs = append(locs, fmt.Sprintf("%s:%d", cl.FileName, cl.LineNumber))
			}
			keys = append(keys, "ordered "+strings.Join(locs, " "))
		}
		var g *group
		for _, k := range keys {
			if byKey[k] != nil {
				g = byKey[k]
				break
			}
		}
		if g == nil {
			g = &group{first: i, area: framework.AreaOf(r.LeafNodeLocation.FileName)}
			groups = append(groups, g)
		}
		for _, k := range keys {
			byKey[k] = g
		}
		if !slices.Contains(g.texts, text) {
			g.texts = append(g.texts, text)
		}
		g.weight += max(w.of(r), w.least)
		g.uploads = g.uploads || w.uploads(r)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].weight != groups[j].weight {
			return groups[i].weight > groups[j].weight
		}
		return groups[i].first < groups[j].first
	})
	n = max(min(n, len(groups)), 1)
	shares := make([][]string, n)
	load := make([]float64, n)
	ups := make([]int, n)
	areas := make([]map[string]int, n)
	for i := range areas {
		areas[i] = map[string]int{}
	}
	for _, g := range groups {
		k := 0
		for i := range load {
			if g.uploads && ups[i] != ups[k] {
				if ups[i] < ups[k] {
					k = i
				}
				continue
			}
			if load[i] < load[k] || (load[i] == load[k] && len(shares[i]) < len(shares[k])) {
				k = i
			}
		}
		if w.spreadUploads {
			// Among the shares about as light as k, the one with the fewest specs of the group's
			// area: an area's specs call the same endpoints, so its refusal specs on one key
			// empty one bucket (20 submits a minute) for each other.
			lightest := k
			for i := range load {
				if (!g.uploads || ups[i] == ups[lightest]) && load[i] <= load[lightest]+spreadSlack && areas[i][g.area] < areas[k][g.area] {
					k = i
				}
			}
		}
		shares[k] = append(shares[k], g.texts...)
		load[k] += g.weight
		if g.uploads {
			ups[k]++
		}
		areas[k][g.area]++
	}
	return shares
}

// spreadSlack is how much heavier, in seconds, a share may be than the lightest to take a spec of
// an area it has fewer of (weights.spreadUploads): less than the window a bucket refusal waits.
const spreadSlack = 10
