package wrongservers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// movedToLegal names entries written as wrong servers that break only a choice the reference made
// where the interface text is silent or says "not shown" (rules.yaml basis reference: judged
// strict-only, or the reference's part of a rule judged text-part). The text, the only judge, does
// not refuse them: a run that is not strict passes them, so they are run as legal variants (All
// leaves them out; LegalVariants appends them), each with the text that allows it. Issue #22.
var movedToLegal = map[string]string{
	"asset-download-hour":                    "Gaps in the endpoint shapes: GET /assets/{id}/download answer shape: not shown (the link itself still lasts 600 s)",
	"asset-output-scan-clean":                "Other records: asset record beyond asset_id, kind and the output link fields: not shown",
	"assets-bad-filter-ignored":              "Gaps in the endpoint shapes: GET /assets request and answer shapes: not shown",
	"asset-read-no-link-lifetime":            "Limits: the 600 s output link lifetime is stated on generation and batch reads; the asset read's answer shape is not shown (issue 35)",
	"check-max-credits-before-capability":    "Errors: the check order puts max_credits before capability availability; whether a capability without a price is compared with max_credits is not said (CHECK-021, issue 35)",
	"auth-revoked-key-deleted-workspace-410": "Authentication 4 lists the failures, not the order of the key and workspace checks",
	"core-error-envelope-extra":              "Versioning 4: a new response field ships without warning and clients ignore unknown fields, so a key beside error is legal (CORE-003, issue 35)",
	"core-unversioned-paths":                 "the interface is served under its root ending in /api/v1; what else the origin serves is not said",
	"est-pad-on-total":                       "Estimate answer: max_credits_needed is \"price plus hold pad on every take\"; where the rounding up happens is not said (rounding place left open)",
	"fromurl-any-scheme-fetched":             "POST /uploads/from-url: request and answer shapes: not shown (a direct public link; no refusal of other schemes is given)",
	"fromurl-location-header":                "POST /uploads/from-url: request and answer shapes: not shown",
	"health-checks-sent-key":                 "Authentication 1: the probes need no key; what a probe does with one sent is not said",
	"ledger-balance-sum-off":                 "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
	"ledger-daily-remaining-negative":        "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
	"ledger-key-remaining-ignores-spend":     "Gaps in the endpoint shapes: GET /credits/balance answer shape: not shown",
	"link-octet-stream":                      "a file link's media type is not given (LINK-007 is the reference's SHOULD)",
	"rate-retry-after-full-window":           "Limits: per-minute buckets whose wait is known; the window's kind (sliding or fixed) is not given, and a wait of the whole minute is never too short",
	"submit-identical-in-flight":             "POST /generations rule 2: a second submit while one runs gets 409 submission_in_flight; the replay field says an already running job may be returned instead (SUBMIT-022, issue 35)",
	"var-batch-index-from-one":               "Generation: batch_index is the sibling's position; from which number positions count is not given",
	"wf-invoke-charged-zero":                 "Gaps in the endpoint shapes: workflow invoke answer shape: not shown",
	"wf-node-credits-zero-early":             "Gaps in the endpoint shapes: workflow run answer shape: not shown",
	"wf-runs-list-with-nodes":                "Gaps in the endpoint shapes: workflow runs list answer shape: not shown",
	"wf-runs-rows-with-nodes":                "Gaps in the endpoint shapes: workflow runs list answer shape: not shown",
	"wf-started-at-on-create":                "Gaps in the endpoint shapes: workflow run answer shape: not shown",
	"wf-template-schema-loose":               "Gaps in the endpoint shapes: workflow templates answer shape: not shown",
}

// movedVariants are the moved entries as legal variants, in name order: checked on the specs of
// their rules' areas (a rule judged strict-only alone has no spec that runs without --strict),
// kept out of the combination (several rewrite the same answers).
func movedVariants() ([]Variant, error) {
	var out []Variant
	found := map[string]bool{}
	for _, s := range defined() {
		allows, moved := movedToLegal[s.Name]
		if !moved {
			continue
		}
		found[s.Name] = true
		out = append(out, Variant{
			Name: s.Name, Change: s.Mistake + " (moved from the wrong servers: the text allows it)", Allows: allows,
			API: s.API, Hooks: s.Hooks, Args: s.checkArgs, Filter: areasOf(s.Rules), Apart: true,
		})
	}
	var missing []string
	for name := range movedToLegal {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("moved to the legal variants but defined nowhere: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// areasOf is the label filter of every spec of the rules' areas (/^(ASSET|LINK)-/).
func areasOf(rules []string) string {
	var areas []string
	for _, id := range rules {
		area := id[:strings.LastIndexByte(id, '-')]
		if !slices.Contains(areas, area) {
			areas = append(areas, area)
		}
	}
	return "/^(" + strings.Join(areas, "|") + ")-/"
}
