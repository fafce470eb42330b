package wrongservers

import (
	"encoding/json"
	"net/http"
)

// Wrong servers that break a value the text fixes for a kind of record in a state, on the caller's
// own objects or on the service's (issue 37 item 1): the specs read such fields on every route
// that shows the record (conformance/internal/specs/helpers_fixed.go).

// actorFlag sets is_platform to to on every GET /actors row whose is_platform is from.
func actorFlag(from, to bool) Wrap {
	return docs(actorList, success, func(_ *http.Request, _ *answer, d map[string]any) {
		for _, row := range rows(d, "actors") {
			if v, ok := row["is_platform"].(bool); ok && v == from {
				row["is_platform"] = to
			}
		}
	})
}

var fixedServers = []Server{
	{
		Name: "actors-own-is-platform", Rules: []string{"ACTOR-011"},
		Mistake: "the workspace's own actors are listed with is_platform true (the flag means \"listed on the platform\", not \"the service's cast\")",
		API:     actorFlag(false, true),
	},
	{
		Name: "actors-cast-not-platform", Rules: []string{"ACTOR-011"},
		Mistake: "cast actors are listed with is_platform false (the flag is read from a column that is unset for the seeded cast)",
		API:     actorFlag(true, false),
	},
	{
		Name: "submit-batch-charged-zero", Rules: []string{"SUBMIT-006"},
		Mistake: "a fanned-out submit answers credits_charged 0 (the sum of its siblings' charges so far) instead of null",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil && d["batch_group_id"] != nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "submit-talking-settlement-pending", Rules: []string{"SUBMIT-006"},
		Mistake: "a talking-actor submit (which waits on its approved tts) answers settlement pending instead of open",
		API: docs(submitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil && d["capability_id"] == "actor_ultra" {
				c["settlement"] = "pending"
			}
		}),
	},
	{
		Name: "evt-sibling-before-capture", Rules: []string{"EVT-001"},
		Mistake: "a batch sibling's generation.completed is sent when its render ends, before its charge is captured: credits terminal false, settlement open, credits_charged null",
		Hooks: payload(func(v, data map[string]any) {
			if v["type"] != "generation.completed" || data == nil || data["batch_group_id"] == nil {
				return
			}
			if c := obj(data, "credits"); c != nil {
				c["terminal"], c["settlement"], c["credits_charged"] = false, "open", nil
			}
		}),
	},
	{
		Name: "gen-wait-link-lifetime-3600", Rules: []string{"GEN-035", "LINK-001"},
		Mistake: "the wait answer states the signer's default link lifetime, output_urls_expire_in_seconds 3600, where the read states 600",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, ok := d["output_urls_expire_in_seconds"]; ok {
				d["output_urls_expire_in_seconds"] = json.Number("3600")
			}
		}),
	},
	{
		Name: "gen-wait-running-charged-zero", Rules: []string{"GEN-015"},
		Mistake: "the wait answer of a running job says credits_charged 0 (the wait builds credits from the ledger's captured sum) where the read says null",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(generation(d), "credits"); c != nil && d["still_running"] == true && c["credits_charged"] == nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "gen-wait-running-completed-at", Rules: []string{"GEN-022"},
		Mistake: "the wait answer of a running job carries completed_at, stamped with the moment the wait answered",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil && d["still_running"] == true && g["completed_at"] == nil {
				g["completed_at"] = g["created_at"]
			}
		}),
	},
	{
		Name: "gen-wait-completed-error-object", Rules: []string{"GEN-010"},
		Mistake: "the wait answer of a completed job carries error {code: null, message: \"\"} (the wait's own envelope) where the read says null",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil && g["status"] == "completed" && g["error"] == nil {
				g["error"] = map[string]any{"code": nil, "message": ""}
			}
		}),
	},
	{
		Name: "gen-wait-failed-error-null", Rules: []string{"GEN-010"},
		Mistake: "the wait answer of a failed job carries error null: the wait serializes the record before its error is attached",
		API: docs(waitRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := generation(d); g != nil && g["status"] == "failed" {
				g["error"] = nil
			}
		}),
	},
	{
		Name: "batch-link-lifetime-3600", Rules: []string{"BATCH-012", "LINK-001"},
		Mistake: "the batch answer states the signer's default link lifetime, output_urls_expire_in_seconds 3600, where a generation read states 600",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, ok := d["output_urls_expire_in_seconds"]; ok {
				d["output_urls_expire_in_seconds"] = json.Number("3600")
			}
		}),
	},
	{
		Name: "evt-step-before-capture", Rules: []string{"EVT-001"},
		Mistake: "a workflow step's generation.completed is sent when the step's render ends, before its charge is captured: credits terminal false, settlement open, credits_charged null",
		Hooks: payload(func(v, data map[string]any) {
			if v["type"] != "generation.completed" || data == nil || data["workflow_run_id"] == nil {
				return
			}
			if c := obj(data, "credits"); c != nil {
				c["terminal"], c["settlement"], c["credits_charged"] = false, "open", nil
			}
		}),
	},
	{
		Name: "evt-settled-siblings-open", Rules: []string{"EVT-028"},
		Mistake: "batch.settled lists each sibling as snapshotted before its charge was captured: credits terminal false, settlement open, credits_charged null",
		Hooks: payload(func(v, data map[string]any) {
			if v["type"] != "batch.settled" {
				return
			}
			for _, g := range rows(data, "generations") {
				if c := obj(g, "credits"); c != nil {
					c["terminal"], c["settlement"], c["credits_charged"] = false, "open", nil
				}
			}
		}),
	},
	{
		Name: "evt-settled-wallet-in-credits", Rules: []string{"EVT-023"},
		Mistake: "batch.settled credits carry wallet_balance (the batch read's credits object with the wallet added)",
		Hooks: payload(func(v, data map[string]any) {
			if c := obj(data, "credits"); c != nil && v["type"] == "batch.settled" {
				c["wallet_balance"] = json.Number("1000")
			}
		}),
	},
	{
		Name: "gen-sibling-failed-error-null", Rules: []string{"GEN-010", "BATCH-013", "BATCH-004"},
		Mistake: "a failed batch sibling's read carries error null: the error is kept on the batch's first generation only",
		API: docs(route(http.MethodGet, "/generations/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := obj(d, "generation"); g != nil && g["status"] == "failed" && g["batch_group_id"] != nil {
				g["error"] = nil
			}
		}),
	},
	{
		Name: "wh-list-fresh-endpoint-failing", Rules: []string{"WH-005"},
		Mistake: "GET /webhooks derives an endpoint's status from its last successful delivery, so an endpoint that has had none yet is listed failing (the registration answer says active)",
		API: docs(route(http.MethodGet, "/webhooks"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, row := range rows(d, "webhooks") {
				if n, _ := intOf(row["consecutive_failures"]); n == 0 && row["status"] == "active" {
					row["status"] = "failing"
				}
			}
		}),
	},
}
