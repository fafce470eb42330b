package framework

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// answerRules names, per operation of the REST description, the rule that owns the shape of its
// success answer (the rule of spec/rules.yaml that states what that answer carries). A success
// answer that breaks the description, or an answer with a status the operation never documents,
// is charged to it, not to the rules of whichever spec made the call: a spec that only needed the
// call (to find a capability, to make an upload) is then blocked by that rule, not failed on its own.
var answerRules = map[string]string{
	"GET /capabilities":                      "CAP-001",
	"GET /capabilities/{id}":                 "CAP-019",
	"POST /estimates":                        "EST-001",
	"POST /generations":                      "SUBMIT-003",
	"GET /generations":                       "GEN-037",
	"GET /generations/{id}":                  "GEN-001",
	"GET /generations/{id}/wait":             "GEN-028",
	"GET /batches/{id}":                      "BATCH-001",
	"GET /presets":                           "PRESET-001",
	"GET /presets/{id}/templates":            "PRESET-013",
	"GET /actors":                            "ACTOR-001",
	"GET /voices":                            "VOICE-001",
	"POST /uploads":                          "UPLOAD-002",
	"POST /uploads/{assetId}/finalize":       "UPLOAD-022",
	"POST /uploads/from-url":                 "FROMURL-001",
	"GET /webhooks":                          "WH-020",
	"POST /webhooks":                         "WH-001",
	"DELETE /webhooks/{id}":                  "WH-021",
	"GET /assets":                            "ASSET-001",
	"GET /assets/{id}":                       "ASSET-008",
	"GET /assets/{id}/download":              "ASSET-009",
	"GET /credits/balance":                   "LEDGER-018",
	"GET /workflows/templates":               "WF-001",
	"POST /workflows/{id}/invoke":            "WF-005",
	"POST /workflows/templates/{key}/invoke": "WF-005",
	"GET /workflow-runs":                     "WF-029",
	"GET /workflow-runs/{id}":                "WF-011",
	"GET /health/live":                       "HEALTH-001",
	"GET /health/ready":                      "HEALTH-002",
	"GET /openapi.json":                      "VER-001",
}

// failureRules owns a documented failure answer that breaks the description: the error envelope
// (CORE-003: a failure answer is {"error": {...}}), except where an operation's failure answer is
// not the envelope.
var failureRules = map[string]string{
	"GET /health/ready 503": "HEALTH-003",
}

// envelopeRule owns the shape of every other documented failure answer.
const envelopeRule = "CORE-003"

// envelopeFieldRules own the envelope's fields: a failure answer that breaks the description on
// one of them only is charged to its rule, not to the envelope's as a whole.
var envelopeFieldRules = map[string]string{
	"$.error.ok":              "ERR-001",
	"$.error.code":            "ERR-002",
	"$.error.message":         "ERR-003",
	"$.error.retryable":       "ERR-005",
	"$.error.credits_charged": "ERR-007",
}

// descriptionError is an exchange that broke the REST description, with the rules that own what
// broke (none when the request broke it, or the call matched no operation: the spec's own step
// keeps the failure).
type descriptionError struct {
	msg   string
	rules []string
}

func (e *descriptionError) Error() string { return e.msg }

// answerOwners are the rules that own what broke in the answer of method on urlPath with status,
// given the JSON paths of the fields that broke it ("" for the answer as a whole): the operation's
// success-shape rule for a success answer or a status the operation does not document; for a
// documented failure status, the envelope field's rule where one field broke, else the envelope's
// (CORE-003); nil when no operation matches.
func (f *Framework) answerOwners(method, urlPath string, status int, fields []string) []string {
	if f.validator == nil {
		return nil
	}
	route, _, ok := f.validator.FindRoute(method, urlPath)
	if !ok {
		return nil
	}
	op := strings.ToUpper(method) + " " + route.Path
	documented := route.Operation != nil && route.Operation.Responses != nil &&
		route.Operation.Responses.Value(strconv.Itoa(status)) != nil
	if status < 400 || !documented {
		if id, ok := answerRules[op]; ok {
			return []string{id}
		}
		return nil
	}
	if id, ok := failureRules[op+" "+strconv.Itoa(status)]; ok {
		return []string{id}
	}
	var out []string
	for _, path := range fields {
		id, ok := envelopeFieldRules[path]
		if !ok {
			id = envelopeRule
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		out = []string{envelopeRule}
	}
	sort.Strings(out)
	return out
}

// failCall fails the running spec with err, a call's error. When the answer broke the REST
// description, the failure is charged to the rule that owns the answer's shape (Spec.Step), so
// a spec that needed the call for its setup is reported as blocked by that rule.
func (f *Framework) failCall(err error) {
	GinkgoHelper()
	var de *descriptionError
	if errors.As(err, &de) && len(de.rules) > 0 {
		f.swapStep(de.rules)
	}
	Fail(err.Error())
}
