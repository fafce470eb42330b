package wrongservers

import (
	"net/http"
	"slices"
)

var (
	registerRoute = route(http.MethodPost, "/webhooks")
	webhookList   = route(http.MethodGet, "/webhooks")
	deleteRoute   = route(http.MethodDelete, "/webhooks/[^/]+")
)

// subscribable are the event names an endpoint may subscribe to (Event types: every event but
// webhook.test).
var subscribable = []string{"generation.completed", "generation.failed", "batch.settled", "workflow_run.completed", "workflow_run.failed", "credits.low"}

var webhookServers = []Server{
	deleteLastTry,
	{
		Name: "wh-secret-listed", Rules: []string{"WH-003"},
		Mistake: "GET /webhooks rows carry the signing secret",
		API: func(env *Env, next http.Handler) http.Handler {
			return pageOf(webhookList, "webhooks", func(_ *http.Request, _ map[string]any, list []any) []any {
				for _, v := range list {
					if row, ok := v.(map[string]any); ok {
						if s, ok := env.secretOf(stringOf(row["url"])); ok {
							row["secret"] = s
						}
					}
				}
				return list
			})(env, next)
		},
	},
	{
		Name: "wh-list-oldest-first", Rules: []string{"WH-020"},
		Mistake: "GET /webhooks lists oldest first",
		API:     reversed(webhookList, "webhooks"),
	},
	{
		Name: "wh-delete-204", Rules: []string{"WH-021"},
		Mistake: "DELETE /webhooks/{id} answers 204 with no body",
		API: answers(deleteRoute, func(_ *Env, _ *http.Request, a *answer) {
			if a.status == http.StatusOK {
				a.status, a.body = http.StatusNoContent, nil
				a.header.Del("Content-Type")
			}
		}),
	},
	{
		Name: "wh-delete-twice-200", Rules: []string{"WH-023"},
		Mistake: "deleting an already deleted endpoint answers 200 (delete is idempotent)",
		API: func(env *Env, next http.Handler) http.Handler {
			return errorsWith(deleteRoute, "not_found", func(r *http.Request, a *answer, _ map[string]any) {
				id := r.URL.Path[len(apiPrefix+"/webhooks/"):]
				if env.deleted(id) {
					a.status = http.StatusOK
					a.setDoc(map[string]any{"ok": true, "webhook_id": id, "deleted": true})
				}
			})(env, answers(deleteRoute, func(env *Env, r *http.Request, a *answer) {
				if a.status == http.StatusOK {
					env.markDeleted(r.URL.Path[len(apiPrefix+"/webhooks/"):])
				}
			})(env, next))
		},
	},
	{
		Name: "wh-status-healthy", Rules: []string{"WH-005", "DLV-021"},
		Mistake: "status is computed from the last attempt and reads active while deliveries are exhausted",
		API: pageOf(webhookList, "webhooks", func(_ *http.Request, _ map[string]any, list []any) []any {
			for _, v := range list {
				if row, ok := v.(map[string]any); ok && row["status"] == "failing" {
					row["status"] = "active"
				}
			}
			return list
		}),
	},
	{
		Name: "wh-events-sorted", Rules: []string{"WH-007"},
		Mistake: "events are echoed sorted and deduplicated, not as registered",
		API: docs(registerRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if w := obj(d, "webhook"); w != nil {
				if ev, ok := w["events"].([]any); ok && len(ev) > 1 {
					slices.Reverse(ev)
				}
			}
		}),
	},
	{
		Name: "wh-location-header", Rules: []string{"WH-001"},
		Mistake: "registering answers with a Location header",
		API:     setHeader(registerRoute, http.StatusCreated, "Location", apiPrefix+"/webhooks/wh_00000000000000000000000000000000"),
	},
	{
		Name: "wh-url-as-sent", Rules: []string{"WH-006"},
		Mistake: "url is stored and echoed exactly as sent, host case kept",
		API: exchanges(registerRoute, func(_ *Env, req map[string]any, a *answer) {
			d, ok := a.doc()
			sent, _ := req["url"].(string)
			if wh := obj(d, "webhook"); ok && a.status == http.StatusCreated && wh != nil && sent != "" {
				wh["url"] = sent + "/"
				a.setDoc(d)
			}
		}),
	},
	{
		Name: "wh-description-truncated", Rules: []string{"WH-018"},
		Mistake: "a description over 200 characters is cut to 200 and accepted",
		API: rewriteBody(registerRoute, func(d map[string]any) bool {
			if s, ok := d["description"].(string); ok && len(s) > 200 {
				d["description"] = s[:200]
				return true
			}
			return false
		}),
	},
	{
		// Found from outside: the suite sent unknown names only alone.
		Name: "wh-unknown-event-dropped", Rules: []string{"WH-016"},
		Mistake: "an unknown event name beside a known one is dropped and the rest registered (alone it is still refused)",
		API: rewriteBody(registerRoute, func(d map[string]any) bool {
			ev, ok := d["events"].([]any)
			if !ok {
				return false
			}
			var known []any
			for _, e := range ev {
				if name, _ := e.(string); slices.Contains(subscribable, name) || name == "webhook.test" {
					known = append(known, e)
				}
			}
			if len(known) == 0 || len(known) == len(ev) {
				return false
			}
			d["events"] = known
			return true
		}),
	},
	{
		Name: "wh-empty-events-all", Rules: []string{"WH-015"},
		Mistake: "an empty events list subscribes to every event",
		API: rewriteBody(registerRoute, func(d map[string]any) bool {
			if ev, ok := d["events"].([]any); ok && len(ev) == 0 {
				all := make([]any, len(subscribable))
				for i, name := range subscribable {
					all[i] = name
				}
				d["events"] = all
				return true
			}
			return false
		}),
	},
	{
		Name: "wh-list-url-as-sent", Rules: []string{"WH-006"},
		Mistake: "the register answer shows the normalized url, but GET /webhooks shows the url as it was sent",
		API: func(env *Env, next http.Handler) http.Handler {
			var sent memo[any] // webhook id -> url as sent
			remember := exchanges(registerRoute, func(_ *Env, req map[string]any, a *answer) {
				if d, ok := a.doc(); ok && a.status == http.StatusCreated && req != nil {
					if id, ok := obj(d, "webhook")["webhook_id"].(string); ok {
						sent.put(id, req["url"])
					}
				}
			})(env, next)
			return pageOf(webhookList, "webhooks", func(_ *http.Request, _ map[string]any, list []any) []any {
				for _, v := range list {
					if row, ok := v.(map[string]any); ok {
						if id, ok := row["webhook_id"].(string); ok {
							if u, ok := sent.get(id); ok && u != nil {
								row["url"] = u
							}
						}
					}
				}
				return list
			})(env, remember)
		},
	},
}
