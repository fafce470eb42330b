package wrongservers

import (
	"net/http"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/internal/contract"
)

var (
	genReads = func(r *http.Request) bool { return generationGet(r) || waitRoute(r) }
	runReads = route(http.MethodGet, "/workflow-runs/[^/]+")
)

// eachGeneration applies edit to the generation of read and wait answers and to list rows.
func eachGeneration(edit func(g map[string]any)) Wrap {
	return docs(func(r *http.Request) bool { return genReads(r) || listGens(r) }, success, func(_ *http.Request, _ *answer, d map[string]any) {
		if g := obj(d, "generation"); g != nil {
			edit(g)
		}
		for _, row := range rows(d, "generations") {
			edit(row)
		}
	})
}

// readServers get the reads of generations, batches, runs and links wrong.
var readServers = []Server{
	{
		Name: "gen-wait-done-at-post-processing", Rules: []string{"GEN-005"},
		Mistake: "the wait reports still_running false once the render is done, while the output is still being copied (post_processing)",
		API: guard(waitRoute, func(_ *Env, next http.Handler, r *http.Request) *answer {
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, apiPrefix+"/generations/"), "/wait")
			a, d := callAs(next, r, http.MethodGet, apiPrefix+"/generations/"+id, presented(r), nil)
			if a.status != http.StatusOK || obj(d, "generation")["status"] != "post_processing" {
				return nil
			}
			// The output exists, so the job counts as done: answered at once.
			d["still_running"] = false
			d["waited_seconds"], d["age_seconds"], d["retry_after_seconds"] = 0, 0, 0
			d["next_action"] = "Download the outputs."
			a.setDoc(d)
			return a
		}),
	},
	{
		Name: "gen-wait-unknown-blocks", Rules: []string{"GEN-036"},
		Mistake: "the wait polls for the id until its time is up and only then answers 404 for an unknown id",
		API: answers(waitRoute, func(_ *Env, r *http.Request, a *answer) {
			if a.status != http.StatusNotFound {
				return
			}
			select {
			case <-time.After(contract.WaitBudget):
			case <-r.Context().Done():
			}
		}),
	},
	{
		Name: "gen-failed-no-completed-at", Rules: []string{"GEN-022"},
		Mistake: "completed_at is stamped only when a job completes, so a failed job keeps completed_at null",
		API: eachGeneration(func(g map[string]any) {
			if g["status"] == "failed" {
				g["completed_at"] = nil
			}
		}),
	},
	{
		Name: "gen-outputs-expected-counted", Rules: []string{"GEN-013"},
		Mistake: "outputs_expected on the read is computed as the number of outputs so far",
		API: docs(genReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if g := obj(d, "generation"); g != nil {
				g["outputs_expected"] = len(asSlice(g["outputs"]))
			}
		}),
	},
	{
		Name: "gen-source-rest", Rules: []string{"GEN-042"},
		Mistake: "a REST submit is recorded with source \"rest\" (the transport's name) instead of \"api\"",
		API: eachGeneration(func(g map[string]any) {
			if g["source"] == "api" {
				g["source"] = "rest"
			}
		}),
	},
	{
		Name: "batch-partial-as-completed", Rules: []string{"BATCH-005"},
		Mistake: "a batch where some siblings completed reads completed, even when others failed",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["status"] == "partial" {
				d["status"] = "completed"
			}
		}),
	},
	{
		Name: "batch-partial-charges-holds", Rules: []string{"BATCH-013"},
		Mistake: "the batch's credits_charged sums the siblings' holds, so a failed sibling's hold is counted as charged",
		API: docs(batchRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			c := obj(d, "credits")
			if (d["status"] == "partial" || d["status"] == "failed") && c != nil && c["credits_charged"] != nil {
				c["credits_charged"] = c["credits_held"]
			}
		}),
	},
	{
		Name: "batch-unknown-empty", Rules: []string{"BATCH-014", "BATCH-015"},
		Mistake: "a bg_ id with no siblings (unknown, or not this workspace's) answers an empty batch instead of 404",
		API: answers(batchRoute, func(_ *Env, r *http.Request, a *answer) {
			if a.status != http.StatusNotFound {
				return
			}
			id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			a.status = http.StatusOK
			a.setDoc(map[string]any{"ok": true, "batch_group_id": id, "status": "completed", "variants": 0, "variants_finished": 0,
				"outputs_delivered": 0, "credits": map[string]any{"credits_held": 0, "credits_charged": 0, "settlement": "captured", "terminal": true},
				"charge_summary": "Nothing was charged.", "generations": []any{}, "next_action": "Nothing to wait for."})
		}),
	},
	{
		Name: "var-batch-index-from-one", Rules: []string{"VAR-010"},
		Legal:   "Generation: batch_index is the sibling's position; from which number positions count is not given",
		Mistake: "batch_index counts siblings from 1",
		API: docs(func(r *http.Request) bool { return genReads(r) || listGens(r) || batchRoute(r) }, success, func(_ *http.Request, _ *answer, d map[string]any) {
			bump := func(g map[string]any) {
				if n, ok := intOf(g["batch_index"]); ok {
					g["batch_index"] = n + 1
				}
			}
			if g := obj(d, "generation"); g != nil {
				bump(g)
			}
			for _, g := range rows(d, "generations") {
				bump(g)
			}
		}),
	},
	{
		Name: "link-kept-from-first-read", Rules: []string{"LINK-004"},
		Mistake: "the output link is made once and cached on the generation: later reads return the first read's link",
		API: func(env *Env, next http.Handler) http.Handler {
			var first memo[[]any]
			return docs(genReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
				g := obj(d, "generation")
				id, _ := g["generation_id"].(string)
				outs := asSlice(g["outputs"])
				if id == "" || len(outs) == 0 {
					return
				}
				if o, _ := outs[0].(map[string]any); o == nil || o["url"] == nil {
					return
				}
				if old, ok := first.get(id); ok && len(old) == len(outs) {
					g["outputs"] = old
					return
				}
				first.put(id, outs)
			})(env, next)
		},
	},
	{
		Name: "wf-partial-still-running", Rules: []string{"WF-013"},
		Mistake: "still_running is true for a partial run (it is read as \"not all steps done\")",
		API: docs(runReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if run := obj(d, "run"); run != nil && run["status"] == "partial" {
				run["still_running"] = true
			}
		}),
	},
	{
		Name: "wf-canceled-as-failed", Rules: []string{"WF-021"},
		Mistake: "a run canceled before any step completed reads failed; canceled is kept for nodes only",
		API: docs(runReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if run := obj(d, "run"); run != nil && run["status"] == "canceled" {
				run["status"] = "failed"
			}
		}),
	},
	{
		Name: "wf-started-at-on-create", Rules: []string{"WF-025"},
		Legal:   "Gaps in the endpoint shapes: workflow run answer shape: not shown",
		Mistake: "started_at is set when the run is created, so a queued run already has one",
		API: docs(runReads, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if run := obj(d, "run"); run != nil && run["started_at"] == nil {
				run["started_at"] = run["created_at"]
			}
		}),
	},
	{
		Name: "id-path-lowercased", Rules: []string{"ID-014"},
		Mistake: "ids in paths are normalized (lowercased and trimmed) before the lookup",
		API: requests(func(r *http.Request) bool { return genReads(r) || batchRoute(r) || runReads(r) }, func(_ *Env, r *http.Request) {
			r.URL.Path = strings.ToLower(strings.TrimSpace(r.URL.Path))
			r.URL.RawPath = ""
		}),
	},
	{
		Name: "core-next-action-empty-when-done", Rules: []string{"CORE-010"},
		Mistake: "next_action is an empty string once there is nothing left to do",
		API: docs(func(r *http.Request) bool { return waitRoute(r) || runReads(r) || batchRoute(r) }, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["still_running"] == false || d["status"] == "completed" || obj(d, "run")["still_running"] == false {
				d["next_action"] = ""
			}
		}),
	},
	{
		Name: "asset-output-scan-clean", Rules: []string{"ASSET-006"},
		Legal:   "Other records: asset record beyond asset_id, kind and the output link fields: not shown",
		Mistake: "output assets report scan_status clean, as if they had been scanned like uploads",
		API: docs(route(http.MethodGet, "/assets(/[^/]+)?"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			all := rows(d, "assets")
			if a := obj(d, "asset"); a != nil {
				all = append(all, a)
			}
			for _, a := range all {
				if a["source"] == "output" {
					a["scan_status"] = "clean"
				}
			}
		}),
	},
}
