package proxy

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Sides of an exchange a finding blames (package judge).
const (
	SideServer   = judge.SideServer
	SideClient   = judge.SideClient
	SideSender   = judge.SideSender
	SideReceiver = judge.SideReceiver
)

// ServiceSides are the sides of the service (its API answers and its webhook deliveries);
// ClientSides those of its client (its API calls and its webhook receiver).
var (
	ServiceSides = []string{SideServer, SideSender}
	ClientSides  = []string{SideClient, SideReceiver}
)

// Bounds of the findings store.
const (
	// MaxFindings is how many distinct findings are kept; later distinct ones are counted per rule.
	MaxFindings = 1024
	// MaxExchangeRefs is how many exchange numbers a finding keeps (the first ones).
	MaxExchangeRefs = 4
)

// Finding is one rule broken on observed traffic, with its repeats counted: the one finding type of
// the module's judges (judge.Finding), the shape of a finding of `mediaspec mock --audit` plus the
// side that broke the rule, whether it only departs from the reference's own choices (Advisory:
// never a failure), and the numbers of the exchanges that showed it (see GET /_proxy/v1/exchanges).
// Its KeyID is "key_" and 12 hex characters of the key's SHA-256 (never the key).
type Finding = judge.Finding

// RuleCount is the number of findings (repeats included) of one rule on one side.
type RuleCount struct {
	RuleID   string `json:"rule_id"`  // the rule's id
	Level    string `json:"level"`    // MUST, SHOULD or MAY
	Side     string `json:"side"`     // SideServer or SideClient
	Advisory bool   `json:"advisory"` // the findings only depart from the reference's own choices
	Count    int    `json:"count"`    // findings, repeats included
}

// Report is what the store holds: the kept findings (oldest first), the totals per rule (which
// also count findings past MaxFindings) and how many distinct findings were not kept.
type Report struct {
	Findings  []Finding   `json:"findings"`  // kept findings, oldest first
	Totals    []RuleCount `json:"totals"`    // per rule and side, dropped findings included
	Dropped   int         `json:"dropped"`   // distinct findings not kept (past MaxFindings)
	Exchanges int64       `json:"exchanges"` // exchanges forwarded
	// Unjudged counts the exchanges forwarded but not judged because the judging queue was full
	// (the forwarding never waits for the judge): their rules were not checked.
	Unjudged int64 `json:"unjudged"`
}

// findingKey groups repeats: the same rule broken by the same side and key on the same route.
type findingKey struct {
	rule, side, key, route string
	advisory               bool
}

type totalKey struct {
	rule, side string
	advisory   bool
}

// store keeps findings, bounded. It is safe for concurrent use.
type store struct {
	rules *spec.Catalogue
	onNew func(Finding) // called without the lock for each new distinct finding

	mu       sync.Mutex // guards everything below
	findings map[findingKey]*Finding
	order    []findingKey
	totals   map[totalKey]int
	dropped  int
}

func newStore(rules *spec.Catalogue, onNew func(Finding)) *store {
	s := &store{rules: rules, onNew: onNew}
	s.clear()
	return s
}

func (s *store) clear() {
	s.findings = map[findingKey]*Finding{}
	s.order = nil
	s.totals = map[totalKey]int{}
	s.dropped = 0
}

// level is the rule's level in the catalogue ("MUST" for a rule it lacks, which a test forbids).
func (s *store) level(rule string) string {
	if r, ok := s.rules.Get(rule); ok {
		return r.Level
	}
	return "MUST"
}

// add records one finding of rule, or a repeat of one. route groups repeats (a method and a path
// template); request is the exchange's request line.
func (s *store) add(f Finding, route string, exchange int64) {
	if f.Level == "" {
		f.Level = s.level(f.RuleID)
	}
	// A rule whose reading is the reference's own choice (the text is silent or says "not shown")
	// never fails anyone: its findings are advisories.
	if r, ok := s.rules.Get(f.RuleID); ok && r.Basis == spec.BasisReference {
		f.Advisory = true
	}
	// Keys never leave the process, not even when a body quoted in a finding carries one.
	f.Request, f.Advice = redact(f.Request), redact(f.Advice)
	k := findingKey{f.RuleID, f.Side, f.KeyID, route, f.Advisory}
	s.mu.Lock()
	s.totals[totalKey{f.RuleID, f.Side, f.Advisory}]++
	if old, ok := s.findings[k]; ok {
		old.Count++
		old.LastSeen = f.LastSeen
		if len(old.Exchanges) < MaxExchangeRefs && exchange > 0 {
			old.Exchanges = append(old.Exchanges, exchange)
		}
		s.mu.Unlock()
		return
	}
	if len(s.order) >= MaxFindings {
		s.dropped++
		s.mu.Unlock()
		return
	}
	f.Count = 1
	if f.FirstSeen.IsZero() {
		f.FirstSeen = f.LastSeen
	}
	if exchange > 0 {
		f.Exchanges = []int64{exchange}
	}
	nf := f
	s.findings[k] = &nf
	s.order = append(s.order, k)
	s.mu.Unlock()
	if s.onNew != nil {
		s.onNew(f)
	}
}

// keyText is an API key (or its start) anywhere in a text.
var keyText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`sk_live_[A-Za-z0-9_-]*`) })

// redact replaces every API key in s.
func redact(s string) string {
	if !strings.Contains(s, "sk_live_") {
		return s
	}
	return keyText().ReplaceAllString(s, "sk_live_[REDACTED]")
}

func (s *store) report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Findings: make([]Finding, 0, len(s.order)), Dropped: s.dropped, Totals: []RuleCount{}}
	for _, k := range s.order {
		f := *s.findings[k]
		f.Exchanges = append([]int64(nil), f.Exchanges...)
		r.Findings = append(r.Findings, f)
	}
	for k, n := range s.totals {
		r.Totals = append(r.Totals, RuleCount{RuleID: k.rule, Level: s.level(k.rule), Side: k.side, Advisory: k.advisory, Count: n})
	}
	sort.Slice(r.Totals, func(i, j int) bool {
		a, b := r.Totals[i], r.Totals[j]
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Side != b.Side {
			return a.Side < b.Side
		}
		return !a.Advisory && b.Advisory
	})
	return r
}

// worst reports whether a non-advisory finding of a MUST rule (must) or of a MUST or SHOULD rule
// (should) was recorded on one of sides (all sides when none is given), counting findings past
// MaxFindings too.
func (s *store) worst(sides ...string) (must, should bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.totals {
		if n == 0 || k.advisory || (len(sides) > 0 && !slices.Contains(sides, k.side)) {
			continue
		}
		switch s.level(k.rule) {
		case "MUST":
			must, should = true, true
		case "SHOULD":
			should = true
		}
	}
	return must, should
}
