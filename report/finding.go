package report

import (
	"strings"
)

// Finding is a rule broken by observed traffic rather than by a spec that ran: what `mediaspec
// proxy` raises on the exchanges it forwards, and what the mock's client audit raises. Findings go
// through the suite's writers as Results (FindingResults).
type Finding struct {
	Rule  string `json:"rule_id"` // the id of the broken rule (spec/rules.yaml)
	Level string `json:"level"`   // of the rule: MUST, SHOULD or MAY
	// Advisory marks a difference from the reference's own choices: reported, never a failure.
	Advisory bool `json:"advisory,omitempty"`
	// Where is what showed it, in one line: the request line, and the side ("[server] GET /x").
	Where string `json:"where"`
	// Why is one sentence: what was seen and what the rule wants.
	Why string `json:"why"`
	// Exchanges are the exchanges that showed it, as the finder names them (ids, request lines).
	Exchanges []string `json:"exchanges,omitempty"`
	// Detail is the evidence at length (counts, times, the exchanges), for the reports' body.
	Detail string `json:"detail,omitempty"`
}

// advisoryNote starts the note of an advisory finding shown as a passed spec.
const advisoryNote = "advisory (differs from the reference's own choices, never a failure): "

// FindingResults shows findings as the suite's Results, for its writers: each finding a spec of
// its rule's area named "RULE-ID where", failed on its rule with Why as the reason (an advisory
// passes, with Why as its note); every rule of rules gets its verdict (not covered when no
// finding names it). Succeeded is the caller's to set: what fails a run of findings (MUST only, or
// SHOULD too) is its policy.
func FindingResults(suite string, run RunInfo, rules []Rule, findings []Finding) Results {
	res := Results{Suite: suite, Run: run}
	for _, f := range findings {
		s := SpecResult{
			Text: f.Rule + " " + f.Where, Leaf: f.Where, Area: strings.ToLower(ruleArea(f.Rule)), Rules: []string{f.Rule},
			State: Failed, Reason: f.Why, FailedRules: []string{f.Rule}, Transcript: f.Detail,
		}
		if f.Advisory {
			s.State, s.Reason, s.FailedRules = Passed, advisoryNote+f.Why, nil
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
