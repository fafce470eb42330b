package framework

import (
	"errors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/spec"
)

// answerFieldRules own fields of one operation's success answer whose rule is not the answer's
// own (keyed by operation, then the field's JSON path): a break there is charged to that rule.
var answerFieldRules = sync.OnceValue(func() map[string]map[string]string {
	return map[string]map[string]string{
		// GEN-034: waited_seconds and age_seconds are non-negative integers.
		"GET /generations/{id}/wait": {"$.waited_seconds": "GEN-034", "$.age_seconds": "GEN-034"},
		// ACTOR-005: tags is an array of snake_case strings, never null.
		"GET /actors": {"$.actors[*].tags": "ACTOR-005"},
		// ID-008: webhook_id values match ^wh_[0-9a-f]{32}$; WH-004: the rest of a webhook's fields
		// (webhook_id, url, events, status, consecutive_failures, description, created_at, updated_at),
		// on every answer that shows one.
		"POST /webhooks":    {"$.webhook.webhook_id": "ID-008", "$.webhook": "WH-004"},
		"GET /webhooks":     {"$.webhooks[*]": "WH-004"},
		"GET /voices":       {"$.voices[*].tags": "VOICE-004"},
		"GET /batches/{id}": {"$.generations[*].generation_id": "BATCH-011", "$.generations[*].batch_index": "BATCH-011", "$.generations[*].status": "BATCH-011"},
	}
})

// arrayIndex is an array index of a JSON path.
var arrayIndex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[[0-9]+\]`) })

// answerFieldRule is the rule of answerFieldRules for the field at path of op's answer, or under
// it (array indexes read as [*]; a missing property reads as its own path), the longest path that
// matches; "" when none.
func answerFieldRule(op, path, problem string) string {
	path = arrayIndex().ReplaceAllString(path, "[*]")
	if m := missingProperty().FindStringSubmatch(problem); m != nil && !strings.HasSuffix(path, "."+m[1]) {
		path += "." + m[1]
	}
	best, id := "", ""
	for p, r := range answerFieldRules()[op] {
		if (path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[")) && len(p) > len(best) {
			best, id = p, r
		}
	}
	return id
}

// missingProperty matches the problem of an answer that lacks a required property.
var missingProperty = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^property "([^"]+)" is missing`) })

// failureRules owns a documented failure answer that breaks the description: the error envelope
// (CORE-003: a failure answer is {"error": {...}}), except where an operation's failure answer is
// not the envelope.
var failureRules = map[string]string{
	"GET /health/ready 503": "HEALTH-003",
}

// envelopeRule owns the shape of every other documented failure answer.
const envelopeRule = "CORE-003"

// envelopeFieldRules own the envelope's fields (a JSON path and what is under it): a failure
// answer that breaks the description on such a field is charged to its rule, not to the envelope's
// as a whole.
var envelopeFieldRules = map[string]string{
	"$.error.ok":                      "ERR-001",
	"$.error.code":                    "ERR-002",
	"$.error.message":                 "ERR-003",
	"$.error.retryable":               "ERR-005",
	"$.error.credits_charged":         "ERR-007",
	"$.error.retry_after_seconds":     "ERR-008",
	"$.error.limit":                   "ERR-011",
	"$.error.limit.required_credits":  "ERR-012",
	"$.error.limit.limit_credits":     "ERR-014",
	"$.error.limit.remaining_credits": "ERR-014",
	"$.error.in_flight":               "ERR-015",
	"$.error.capability_status":       "ERR-016",
	"$.error.required_plan":           "ERR-017",
	"$.error.shortfall":               "ERR-018",
	"$.error.blocked_reason":          "ERR-019",
	"$.error.field":                   "ERR-020",
	"$.error.fields":                  "ERR-020",
}

// envelopeFieldRule is the rule of the envelope field at path or under it (the longest path of
// envelopeFieldRules that path is or starts), else the envelope's.
func envelopeFieldRule(path string) string {
	best, id := "", envelopeRule
	for p, r := range envelopeFieldRules {
		if (path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[")) && len(p) > len(best) {
			best, id = p, r
		}
	}
	return id
}

// crossRule is the rule that owns a field of any answer, whatever the operation, for what broke
// it: a credit amount that is not a whole number (CORE-005), a timestamp without a zone or not a
// date-time (CORE-017), a success answer without ok: true (CORE-002); "" when the break belongs to the operation's answer.
func crossRule(path, problem string, status int) string {
	leaf := path[strings.LastIndexAny(path, ".]")+1:]
	switch {
	case status < 400 && (path == "$" && problem == `property "ok" is missing` || path == "$.ok"):
		// A success answer's ok: true is every success answer's (CORE-002), whichever operation
		// left it out or sent it otherwise.
		return "CORE-002"
	case strings.Contains(problem, "must be an integer") &&
		(strings.Contains(leaf, "credits") || leaf == "wallet_balance" || leaf == "shortfall"):
		return "CORE-005"
	case strings.Contains(problem, `match the format "date-time"`):
		return "CORE-017"
	}
	return ""
}

// descriptionError is an exchange that broke the REST description, with the rules that own what
// broke (none when the request broke it, or the call matched no operation: the spec's own step
// keeps the failure).
type descriptionError struct {
	msg   string
	rules []string
	// answer: the rules are the operation's answer rule (not the error envelope's, which every
	// refusal shares).
	answer bool
}

func (e *descriptionError) Error() string { return e.msg }

// answerOwners are the rules that own what broke in the answer of method on urlPath with status,
// given the fields that broke it (an empty path for the answer as a whole): for a success answer or
// a status the operation does not document, the rule a field shares with every answer (crossRule)
// or else the operation's answer rule (answer true); for
// a documented failure status, the rule of each envelope field that broke, else the envelope's
// (CORE-003); nil when no operation matches.
func (f *Framework) answerOwners(method, urlPath string, status int, fields []spec.FieldError) (rules []string, answer bool) {
	if f.validator == nil {
		return nil, false
	}
	route, _, ok := f.validator.FindRoute(method, urlPath)
	if !ok {
		return nil, false
	}
	op := strings.ToUpper(method) + " " + route.Path
	documented := route.Operation != nil && route.Operation.Responses != nil &&
		route.Operation.Responses.Value(strconv.Itoa(status)) != nil
	if status < 400 || !documented {
		// A field any answer shares the rule of (a credit amount, a timestamp) is charged to that
		// rule; anything else to the operation's answer rule.
		for _, fe := range fields {
			id := crossRule(fe.Path, fe.Problem, status)
			if id == "" && status < 400 {
				id = answerFieldRule(op, fe.Path, fe.Problem)
			}
			if id == "" && status < 400 {
				// A header or an id pattern whose own rule states it (SUBMIT-002's Cache-Control,
				// ID-003's ^bg_ pattern) fails that rule, not the answer's as a whole.
				id = spec.ElementRule(op, fe)
			}
			if id == "" {
				id, _ = spec.AnswerRule(op)
				answer = true
			}
			if id != "" && !slices.Contains(rules, id) {
				rules = append(rules, id)
			}
		}
		if len(fields) == 0 {
			if id, ok := spec.AnswerRule(op); ok {
				rules, answer = []string{id}, true
			}
		}
		sort.Strings(rules)
		return rules, answer && len(rules) > 0
	}
	// A documented failure answer: its envelope.
	if id, ok := failureRules[op+" "+strconv.Itoa(status)]; ok {
		return []string{id}, true
	}
	var out []string
	for _, fe := range fields {
		if id := envelopeFieldRule(fe.Path); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		out = []string{envelopeRule}
	}
	sort.Strings(out)
	return out, false
}

// failCall fails the running spec with err, a call's error. When the answer broke the REST
// description, the failure is charged (Spec.Step) to the rules that own what broke: an envelope
// field's rule, or the operation's answer rule. A spec that does not carry them needed the call for
// its setup and is reported as blocked by them. A spec that carries the operation's answer rule
// made the call as its subject: the failure is charged to that rule and to the spec's step (all
// its rules when it named none), as any failure of its own.
func (f *Framework) failCall(err error) {
	GinkgoHelper()
	var de *descriptionError
	if errors.As(err, &de) && len(de.rules) > 0 {
		charge := de.rules
		if own := f.specRules(); de.answer && slices.ContainsFunc(de.rules, func(id string) bool { return slices.Contains(own, id) }) {
			step := f.currentStep()
			if len(step) == 0 {
				step = own
			}
			charge = append(append([]string(nil), de.rules...), step...)
		}
		f.swapStep(charge)
	}
	Fail(err.Error())
}

// specRules are the rule ids among the running spec's labels.
func (f *Framework) specRules() []string {
	if f == nil || f.catalogue == nil {
		return nil
	}
	var out []string
	for _, l := range CurrentSpecReport().Labels() {
		if _, ok := f.catalogue.Get(l); ok {
			out = append(out, l)
		}
	}
	return out
}

// currentStep is the running spec's current step (nil when it named none).
func (f *Framework) currentStep() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.step...)
}
