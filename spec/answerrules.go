package spec

import "sort"

// answerRules names, per operation of the REST description, the rule that owns the shape of its
// success answer (the rule of spec/rules.yaml that states what that answer carries). A success
// answer that breaks the description, or an answer with a status the operation never documents,
// is charged to it: by the conformance suite (a spec that only needed the call is then blocked by
// that rule, not failed on its own) and by the proxy (its finding names that rule).
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

// AnswerRule is the rule that owns the shape of the success answer of op ("GET /actors", a method
// and a path template of the REST description), and whether there is one.
func AnswerRule(op string) (string, bool) {
	id, ok := answerRules[op]
	return id, ok
}

// AnswerRuleOperations are the operations AnswerRule knows, sorted.
func AnswerRuleOperations() []string {
	ops := make([]string, 0, len(answerRules))
	for op := range answerRules {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}
