// Package audit watches what a client does to a service and reports where it breaks a client duty
// of the interface (`mediaspec mock --audit`, and `mediaspec proxy` on the traffic it forwards): a refused request sent again unchanged, a call before
// its Retry-After, a read loop instead of the wait call, an id passed back altered, a max_credits
// that ignores the estimate, and the other kinds in Detectors. Each finding names a rule of
// spec/rules.yaml (the rules whose `audit` field says what is watched), the key id (never the key),
// the request line, the service-clock time and one sentence of advice; repeats are counted.
//
// The auditor keeps bounded memory whatever runs through it, so a mock may run for days: a window
// of the last WindowSize calls per key, at most MaxKeys keys and MaxScopes workspaces (the least
// recently active are forgotten), bounded id, cursor and link sets, and at most MaxFindings
// distinct findings (later distinct ones are counted per rule, not kept).
//
// An Auditor is safe for concurrent use. It judges the exchanges handed to Observe: the mock's
// middleware hands it every call it serves, `mediaspec proxy` every exchange it forwards.
package audit

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Bounds of the auditor's memory.
const (
	// WindowSize is how many recent calls are kept per key.
	WindowSize = 64
	// MaxKeys is how many keys have a window; the least recently active is forgotten first.
	MaxKeys = 1024
	// MaxScopes is how many workspaces have id, cursor and estimate sets.
	MaxScopes = 256
	// MaxIDs is how many handed-out ids are remembered per workspace.
	MaxIDs = 4096
	// MaxCursors is how many handed-out cursors are remembered per workspace.
	MaxCursors = 256
	// MaxEstimates is how many recent estimates are remembered per key.
	MaxEstimates = 32
	// MaxLinks is how many handed-out file links are remembered (for their owner key).
	MaxLinks = 4096
	// MaxFindings is how many distinct findings are kept.
	MaxFindings = 512
)

// Finding is one audited breach of a client duty, with its repeats counted (the same rule, key and
// request line seen again raise Count and LastSeen): a judge.Finding of the client side, with no
// exchange numbers.
type Finding = judge.Finding

// RuleCount is the number of findings (repeats included) of one rule.
type RuleCount struct {
	RuleID string `json:"rule_id"` // the rule's id
	Level  string `json:"level"`   // MUST, SHOULD or MAY
	Count  int    `json:"count"`   // findings, repeats included
}

// Report is what the auditor holds: the kept findings (oldest first), the per-rule totals (which
// also count findings beyond MaxFindings) and how many distinct findings were not kept.
type Report struct {
	Findings []Finding   // kept findings, oldest first
	Totals   []RuleCount // per rule, dropped findings included
	Dropped  int         // distinct findings not kept (past MaxFindings)
}

// Config configures an Auditor.
type Config struct {
	// Clock is the service clock findings are stamped with (required).
	Clock clock.Clock
	// OnFinding, when set, is called with each finding as recorded (a new one with Count 1, a
	// repeat with its raised Count), with the auditor's lock held: it must return quickly and must
	// not call the Auditor. `mediaspec proxy` uses it to report a finding as it happens.
	OnFinding func(Finding)
}

// Auditor records findings from the exchanges it observes.
type Auditor struct {
	cfg Config

	mu       sync.Mutex // guards everything below
	keys     map[string]*keyState
	scopes   map[string]*scopeState
	links    *boundedMap[string] // file link path -> key id it was handed to
	findings map[findingKey]*Finding
	order    []findingKey // insertion order of findings
	totals   map[string]int
	dropped  int
	tick     uint64 // activity counter for least-recently-active eviction
}

type findingKey struct{ rule, key, request string }

// New returns an auditor with no findings.
func New(cfg Config) *Auditor {
	if cfg.Clock == nil {
		panic("audit: Config.Clock is required")
	}
	a := &Auditor{cfg: cfg}
	a.resetLocked(true)
	return a
}

func (a *Auditor) resetLocked(findings bool) {
	a.keys = map[string]*keyState{}
	a.scopes = map[string]*scopeState{}
	a.links = newBoundedMap[string](MaxLinks)
	if findings {
		a.findings = map[findingKey]*Finding{}
		a.order = nil
		a.totals = map[string]int{}
		a.dropped = 0
	}
}

// Forget drops what the auditor remembers of recent calls (windows, handed-out ids, cursors,
// estimates, links) and keeps the findings. The mock calls it on reset: the start state's key ids
// come back identical, and a call before a reset is no precedent for one after it.
func (a *Auditor) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resetLocked(false)
}

// ForgetCalls drops the windows of recent calls of every key (ids, cursors, estimates and links
// are kept): what was refused before a state change made outside the API is no precedent.
func (a *Auditor) ForgetCalls() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.keys {
		k.window = nil
	}
}

// Clear drops the findings and what the auditor remembers of recent calls.
func (a *Auditor) Clear() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resetLocked(true)
}

// Report returns a copy of the findings and totals.
func (a *Auditor) Report() Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := Report{Findings: make([]Finding, 0, len(a.order)), Dropped: a.dropped}
	for _, k := range a.order {
		r.Findings = append(r.Findings, *a.findings[k])
	}
	for id, n := range a.totals {
		r.Totals = append(r.Totals, RuleCount{RuleID: id, Level: levelOf(id), Count: n})
	}
	sort.Slice(r.Totals, func(i, j int) bool { return r.Totals[i].RuleID < r.Totals[j].RuleID })
	return r
}

// HasMust reports whether any finding of a MUST rule was recorded.
func (a *Auditor) HasMust() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, n := range a.totals {
		if n > 0 && levelOf(id) == "MUST" {
			return true
		}
	}
	return false
}

// WriteSummary writes one line per rule with findings ("audit: ERR-006 MUST 3 findings: ..."), or
// one line saying there were none.
func (a *Auditor) WriteSummary(w io.Writer) error {
	r := a.Report()
	if len(r.Totals) == 0 {
		_, err := fmt.Fprintln(w, "audit: no findings: the client kept every duty the mock audits")
		return err
	}
	for _, t := range r.Totals {
		if _, err := fmt.Fprintf(w, "audit: %s %s %d finding(s): %s\n", t.RuleID, t.Level, t.Count, detectorByRule(t.RuleID).summary); err != nil {
			return err
		}
	}
	if r.Dropped > 0 {
		if _, err := fmt.Fprintf(w, "audit: %d distinct findings beyond the first %d were counted, not kept\n", r.Dropped, MaxFindings); err != nil {
			return err
		}
	}
	return nil
}

// record adds one finding (or a repeat of one). Called with a.mu held.
func (a *Auditor) record(rule, keyID, request, advice string, at time.Time) {
	d := detectorByRule(rule)
	if d.rule == "" {
		panic("audit: finding of a rule with no detector: " + rule)
	}
	a.totals[rule]++
	k := findingKey{rule, keyID, request}
	if f, ok := a.findings[k]; ok {
		f.Count++
		f.LastSeen = at
		f.Advice = advice
		a.notify(*f)
		return
	}
	nf := Finding{RuleID: rule, Level: d.level, Side: judge.SideClient, KeyID: keyID, Request: request, Advice: advice,
		FirstSeen: at, LastSeen: at, Count: 1}
	defer a.notify(nf)
	if len(a.order) >= MaxFindings {
		a.dropped++
		return
	}
	a.findings[k] = &nf
	a.order = append(a.order, k)
}

// notify hands a recorded finding to Config.OnFinding. Called with a.mu held.
func (a *Auditor) notify(f Finding) {
	if a.cfg.OnFinding != nil {
		a.cfg.OnFinding(f)
	}
}

// key returns the window of keyID, creating it (and forgetting the least recently active key
// beyond MaxKeys). Called with a.mu held.
func (a *Auditor) key(keyID string) *keyState {
	a.tick++
	if k, ok := a.keys[keyID]; ok {
		k.used = a.tick
		return k
	}
	if len(a.keys) >= MaxKeys {
		evictOldest(a.keys, func(k *keyState) uint64 { return k.used })
	}
	k := &keyState{used: a.tick, genReads: newBoundedMap[[]time.Time](64), runReads: newBoundedMap[time.Time](64),
		estimateChanged: map[string]bool{}, submits: newBoundedMap[*submitted](32)}
	a.keys[keyID] = k
	return k
}

// scope returns the id and cursor sets of a workspace. Called with a.mu held.
func (a *Auditor) scope(workspaceID string) *scopeState {
	if s, ok := a.scopes[workspaceID]; ok {
		s.used = a.tick
		return s
	}
	if len(a.scopes) >= MaxScopes {
		evictOldest(a.scopes, func(s *scopeState) uint64 { return s.used })
	}
	s := &scopeState{used: a.tick, ids: newBoundedMap[idSeen](MaxIDs), hexes: newBoundedMap[string](MaxIDs), cursors: newBoundedMap[bool](MaxCursors)}
	a.scopes[workspaceID] = s
	return s
}

// evictOldest forgets the least recently used eighth of m (at least one entry), so that eviction
// costs little per insert.
func evictOldest[V any](m map[string]V, used func(V) uint64) {
	type entry struct {
		id   string
		used uint64
	}
	all := make([]entry, 0, len(m))
	for id, v := range m {
		all = append(all, entry{id, used(v)})
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.used, b.used) })
	for _, e := range all[:max(1, len(all)/8)] {
		delete(m, e.id)
	}
}

// boundedMap is a map that forgets its oldest inserted key beyond its capacity.
type boundedMap[V any] struct {
	cap   int
	m     map[string]V
	order []string // insertion order; may hold keys already deleted
}

func newBoundedMap[V any](capacity int) *boundedMap[V] {
	return &boundedMap[V]{cap: capacity, m: map[string]V{}}
}

func (b *boundedMap[V]) get(k string) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap[V]) put(k string, v V) {
	if _, ok := b.m[k]; !ok {
		b.order = append(b.order, k)
	}
	b.m[k] = v
	for len(b.m) > b.cap && len(b.order) > 0 {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
	if len(b.order) > 2*b.cap { // compact keys deleted elsewhere
		b.order = slices.DeleteFunc(b.order, func(k string) bool { _, ok := b.m[k]; return !ok })
	}
}

func (b *boundedMap[V]) del(k string) { delete(b.m, k) }
