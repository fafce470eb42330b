package api

import (
	"context"
	"net/http"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// registerTimeout bounds a registration's hostname lookup.
const registerTimeout = 10 * time.Second

// RegisterWebhooks registers GET /webhooks (read, agent_read), POST /webhooks and
// DELETE /webhooks/{id} (generate, webhook_manage) over s.
func (rt *Router) RegisterWebhooks(s *webhook.Service) {
	h := webhookHandlers{s: s, faults: rt.deps.Faults, clock: rt.deps.Clock}
	if h.faults != nil {
		h.faults.Enable(faults.WebhookTest)
	}
	rt.Handle("GET /webhooks", workspace.ScopeRead, ratelimit.AgentRead, h.list)
	rt.Handle("POST /webhooks", workspace.ScopeGenerate, ratelimit.WebhookManage, h.create)
	rt.Handle("DELETE /webhooks/{id}", workspace.ScopeGenerate, ratelimit.WebhookManage, h.delete)
}

type webhookHandlers struct {
	s      *webhook.Service
	faults *faults.Store // the test inputs of registrations (webhook_test); may be nil
	clock  clock.Clock
}

// WebhookJSON is the endpoint object of the webhook answers (never the secret).
type WebhookJSON struct {
	WebhookID           string   `json:"webhook_id"`
	URL                 string   `json:"url"`
	Events              []string `json:"events"`
	Status              string   `json:"status"`
	ConsecutiveFailures int      `json:"consecutive_failures"`
	Description         *string  `json:"description"`
	CreatedAt           string   `json:"created_at"`
	UpdatedAt           string   `json:"updated_at"`
}

// EndpointJSON renders an endpoint.
func EndpointJSON(e webhook.Endpoint) WebhookJSON {
	return WebhookJSON{
		WebhookID: e.ID, URL: e.URL, Events: e.Events, Status: string(e.Status),
		ConsecutiveFailures: e.ConsecutiveFailures, Description: e.Description,
		CreatedAt: clock.Format(e.CreatedAt), UpdatedAt: clock.Format(e.UpdatedAt),
	}
}

// list serves GET /api/v1/webhooks: {ok, webhooks[]}, newest first, at most 10, no secret.
func (h webhookHandlers) list(w http.ResponseWriter, r *http.Request) error {
	eps := h.s.List(Caller(r.Context()).Workspace.ID())
	out := make([]WebhookJSON, len(eps))
	for i, e := range eps {
		out[i] = EndpointJSON(e)
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "webhooks": out})
}

// create serves POST /api/v1/webhooks: strict body {url, events, description?}; 201 {ok, webhook,
// secret} with no Location. Refusals: 400 invalid_config (see webhook.Service.Create).
func (h webhookHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		URL         *string   `json:"url"`
		Events      *[]string `json:"events"`
		Description *string   `json:"description"`
	}
	if err := wire.DecodeStrict(r, &b, 0); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), registerTimeout)
	defer cancel()
	ep, secret, err := h.s.Create(ctx, Caller(r.Context()).Workspace.ID(), webhook.CreateParams{URL: b.URL, Events: b.Events, Description: b.Description})
	if err != nil {
		return err
	}
	h.sendTestInput(Caller(r.Context()), ep.ID)
	return wire.WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "webhook": EndpointJSON(ep), "secret": secret})
}

// sendTestInput honours a webhook_test test input of a registration (spec/testmode.yaml): as the
// app's Send test button does, one webhook.test delivery goes to endpoint id, the test input's
// seconds after the registration, with its message (else the default text).
func (h webhookHandlers) sendTestInput(c *CallerInfo, id string) {
	if h.faults == nil || c.TestInput == "" {
		return
	}
	f, ok := h.faults.TakeIn(faults.WebhookTest, c.TestInput, c.Workspace.ID(), "")
	if !ok {
		return
	}
	msg := f.Message
	if msg == "" {
		msg = webhook.TestMessage
	}
	h.clock.AfterFunc(f.Duration(), func() { _, _ = h.s.SendTestMessage(id, msg) })
}

// delete serves DELETE /api/v1/webhooks/{id}: 200 {ok, webhook_id, deleted: true}; pending
// deliveries are removed. Another workspace's, an unknown and an already deleted id: 404 not_found.
func (h webhookHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := h.s.Delete(Caller(r.Context()).Workspace.ID(), id); err != nil {
		return err
	}
	return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "webhook_id": id, "deleted": true})
}
