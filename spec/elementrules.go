package spec

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/spec/judge"
)

// headerRules names, per operation, the rule that states a header of its success answer: a
// success answer whose header breaks the description is charged to that rule, not to the
// operation's answer rule (AnswerRule), so the rule that states the header is the one that fails.
var headerRules = map[string]map[string]string{
	"POST /generations": {
		"Location":      "SUBMIT-001", // POST /generations > Location (the generation's path)
		"Cache-Control": "SUBMIT-002", // POST /generations > Cache-Control: no-store
	},
}

// patternProblem is the problem the description check reports for a string breaking a pattern.
// It compiles at first use: compiled in a package variable it took the package's init past its
// allocation budget (cmd/mediaspec TestInitBudget), paid by every command.
var patternProblem = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`doesn't match (?:the regular expression )?"?(\^[^"\s]+\$)"?`)
})

// ElementRule is the rule that states the element of op's success answer that broke the
// description (a FieldError's path and problem): the rule of the header ("header NAME"), or the
// Id prefixes rule of an id pattern the field breaks; "" when the element has no rule of its own
// (the operation's answer rule owns it).
func ElementRule(op string, fe FieldError) string {
	if name, ok := strings.CutPrefix(fe.Path, "header "); ok {
		for h, id := range headerRules[op] {
			if strings.EqualFold(h, name) {
				return id
			}
		}
		return ""
	}
	if m := patternProblem().FindStringSubmatch(fe.Problem); m != nil {
		rule, _ := judge.PatternRule(m[1])
		return rule
	}
	return ""
}

// ElementRuleIDs are the rule ids ElementRule can answer, sorted, each once.
func ElementRuleIDs() []string {
	seen := map[string]bool{}
	for _, hs := range headerRules {
		for _, id := range hs {
			seen[id] = true
		}
	}
	for _, k := range judge.IDKinds() {
		if k.Rule != "" {
			seen[k.Rule] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
