package wrongservers

import (
	"encoding/json"
	"net/http"
)

// workflowServers are mistakes in workflows and their runs.
var workflowServers = []Server{
	{
		Name: "wf-invoke-no-location", Rules: []string{"WF-004", "ID-007"},
		Mistake: "a template invoke answers without a Location header",
		API:     setHeader(route(http.MethodPost, "/workflows/.+/invoke"), 0, "Location", ""),
	},
	{
		Name: "wf-invoke-charged-zero", Rules: []string{"WF-005"},
		Legal:   "Gaps in the endpoint shapes: workflow invoke answer shape: not shown",
		Mistake: "the invoke answer says credits_charged 0 instead of null",
		API: docs(route(http.MethodPost, "/workflows/.+/invoke"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			if c := obj(d, "credits"); c != nil {
				c["credits_charged"] = json.Number("0")
			}
		}),
	},
	{
		Name: "wf-template-schema-loose", Rules: []string{"WF-002"},
		Legal:   "Gaps in the endpoint shapes: workflow templates answer shape: not shown",
		Mistake: "workflow template inputs_schema is served without additionalProperties: false",
		API: pageOf(route(http.MethodGet, "/workflows/templates"), "templates", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if t, ok := v.(map[string]any); ok {
					if s := obj(t, "inputs_schema"); s != nil {
						delete(s, "additionalProperties")
					}
				}
			}
			return list
		}),
	},
	{
		Name: "wf-run-still-running-finished", Rules: []string{"WF-013"},
		Mistake: "still_running stays true on a partial run",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if r := obj(d, "run"); r != nil && r["status"] == "partial" {
				r["still_running"] = true
			}
		}),
	},
	{
		Name: "wf-node-credits-zero-early", Rules: []string{"WF-024"},
		Legal:   "Gaps in the endpoint shapes: workflow run answer shape: not shown",
		Mistake: "a node's credits read 0 before it settles",
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			for _, n := range rows(obj(d, "run"), "nodes") {
				if n["credits"] == nil {
					n["credits"] = json.Number("0")
				}
			}
		}),
	},
	{
		Name: "wf-runs-list-with-nodes", Rules: []string{"WF-029"},
		Legal:   "Gaps in the endpoint shapes: workflow runs list answer shape: not shown",
		Mistake: "GET /workflow-runs rows carry their nodes",
		API: pageOf(route(http.MethodGet, "/workflow-runs"), "runs", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok {
					row["nodes"] = []any{}
				}
			}
			return list
		}),
	},
	runEventBeforeCommit(),
}

// runEventBeforeCommit is a server that sends a run's event before it commits the run's end: for
// the first reads after the event went out, the run still reads running.
func runEventBeforeCommit() Server {
	var pending memo[int] // workflow_run_id -> reads still to answer as running
	return Server{
		Name: "wf-run-event-before-commit", Rules: []string{"EVT-004"},
		Mistake: "workflow_run.completed is sent before the run's end is committed: a read right after the event still shows the run running",
		Hooks: func(_ *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if v, ok := decodeObject(requestBody(r)); ok {
					if t, _ := v["type"].(string); t == "workflow_run.completed" || t == "workflow_run.failed" {
						if id, ok := obj(v, "data")["workflow_run_id"].(string); ok {
							pending.put(id, 2)
						}
					}
				}
				next.ServeHTTP(w, r)
			})
		},
		API: docs(runRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			run := obj(d, "run")
			id, _ := run["workflow_run_id"].(string)
			if n, ok := pending.get(id); ok && n > 0 {
				pending.put(id, n-1)
				run["status"], run["still_running"], run["finished_at"] = "running", true, nil
				if c := obj(run, "credits"); c != nil {
					c["terminal"], c["credits_charged"], c["settlement"] = false, nil, "open"
				}
			}
		}),
	}
}
