package report

import (
	"fmt"
	"strings"

	"github.com/mediaspec/mediaspec/spec/judge"
)

// Finding is a rule broken by observed traffic rather than by a spec that ran: what `mediaspec
// proxy` raises on the exchanges it forwards, and what the mock's client audit raises; the one type
// of package judge. Findings go through the suite's writers as Results (FindingResults).
type Finding = judge.Finding

// advisoryNote starts the note of an advisory finding shown as a passed spec.
const advisoryNote = "advisory (differs from the reference's own choices, never a failure): "

// FindingResults shows findings as the suite's Results, for its writers: each finding a spec of
// its rule's area named "RULE-ID [side] request", failed on its rule with its Advice as the reason
// (an advisory passes, with the Advice as its note) and its key, count, times and exchanges as the
// transcript; every rule of rules gets its verdict (not covered when no
// finding names it). Succeeded is the caller's to set: what fails a run of findings (MUST only, or
// SHOULD too) is its policy.
func FindingResults(suite string, run RunInfo, rules []Rule, findings []Finding) Results {
	res := Results{Suite: suite, Run: run}
	for _, f := range findings {
		where := f.Request
		if f.Side != "" {
			where = "[" + f.Side + "] " + where
		}
		key := f.KeyID
		if key == "" {
			key = "-"
		}
		detail := fmt.Sprintf("key %s, %d time(s) from %s to %s, exchanges %v", key, f.Count,
			f.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), f.LastSeen.UTC().Format("2006-01-02T15:04:05Z"), f.Exchanges)
		s := SpecResult{
			Text: f.RuleID + " " + where, Leaf: where, Area: strings.ToLower(ruleArea(f.RuleID)), Rules: []string{f.RuleID},
			State: Failed, Reason: f.Advice, FailedRules: []string{f.RuleID}, Transcript: detail,
		}
		if f.Advisory {
			s.State, s.Reason, s.FailedRules = Passed, advisoryNote+f.Advice, nil
		}
		res.Specs = append(res.Specs, s)
	}
	res.Rules = Verdicts(rules, res.Specs)
	res.Tally()
	return res
}

// ruleArea is the area prefix of a rule id (AUTH for AUTH-001, GEN-SUBMIT for GEN-SUBMIT-007).
func ruleArea(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return id
	}
	return id[:i]
}
