package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// RegisterWorkflows registers the workflow routes over the engine:
// GET /workflows/templates, GET /workflow-runs and GET /workflow-runs/{id}
// (read, agent_read); POST /workflows/{id}/invoke and
// POST /workflows/templates/{key}/invoke (generate, agent_submit).
func (rt *Router) RegisterWorkflows(e *workflows.Engine) {
	h := workflowHandlers{e: e}
	rt.Handle("GET /workflows/templates", workspace.ScopeRead, ratelimit.AgentRead, h.templates)
	rt.Handle("POST /workflows/templates/{key}/invoke", workspace.ScopeGenerate, ratelimit.AgentSubmit, h.invokeTemplate)
	rt.Handle("POST /workflows/{id}/invoke", workspace.ScopeGenerate, ratelimit.AgentSubmit, h.invokeSaved)
	rt.Handle("GET /workflow-runs", workspace.ScopeRead, ratelimit.AgentRead, h.list)
	rt.Handle("GET /workflow-runs/{id}", workspace.ScopeRead, ratelimit.AgentRead, h.get)
}

type workflowHandlers struct {
	e *workflows.Engine
}

// templates serves GET /api/v1/workflows/templates.
func (h workflowHandlers) templates(w http.ResponseWriter, _ *http.Request) error {
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK        bool                    `json:"ok"`
		Templates []workflows.TemplateDoc `json:"templates"`
	}{true, h.e.Templates()})
}

var invokeKeys = []string{"inputs", "max_credits"}

// DecodeInvoke reads an invoke body: strict keys {inputs, max_credits}
// (an unknown key answers invalid_config naming it, in body order), inputs
// an object and max_credits a whole number above zero, both required.
func DecodeInvoke(r *http.Request) (inputs map[string]any, maxCredits int64, err error) {
	data, err := wire.ReadBody(r, 0)
	if err != nil {
		return nil, 0, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, 0, apierr.InvalidConfig("", "The request body is empty; send {\"inputs\": {...}, \"max_credits\": n}.")
	}
	keys, m, err := topLevel(data)
	if err != nil {
		return nil, 0, err
	}
	for _, k := range keys {
		if !slices.Contains(invokeKeys, k) {
			return nil, 0, apierr.InvalidConfig(k, fmt.Sprintf("Unknown key %q in the request body; an invoke takes only inputs and max_credits.", k))
		}
	}
	raw, ok := m["inputs"]
	if !ok {
		return nil, 0, apierr.InvalidConfig("inputs", "inputs is required: an object checked against the workflow's inputs_schema.")
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &inputs) != nil {
		return nil, 0, apierr.InvalidConfig("inputs", "inputs must be an object.")
	}
	raw, ok = m["max_credits"]
	if !ok {
		return nil, 0, apierr.InvalidConfig("max_credits", "max_credits is required: the sum over the steps of ceil(price x 1.1).")
	}
	n, ok := wholeNumber(raw)
	if !ok || n < 1 {
		return nil, 0, apierr.InvalidConfig("max_credits", "max_credits must be a whole number above zero.")
	}
	return inputs, n, nil
}

func (h workflowHandlers) invoke(w http.ResponseWriter, r *http.Request, p workflows.InvokeParams) error {
	inputs, maxCredits, err := DecodeInvoke(r)
	if err != nil {
		return err
	}
	c := Caller(r.Context())
	p.WorkspaceID = c.Workspace.ID()
	p.KeyID = c.Key.KeyID
	p.KeyBudget = c.Key.BudgetCredits
	p.Plan = fixtures.Plan(c.Plan)
	p.Inputs = inputs
	p.MaxCredits = maxCredits
	p.TestInput = c.TestInput
	a, err := h.e.Invoke(p)
	if err != nil {
		return err
	}
	w.Header().Set("Location", BasePath+"/workflow-runs/"+a.WorkflowRunID)
	return wire.WriteJSON(w, http.StatusCreated, a)
}

// invokeTemplate serves POST /api/v1/workflows/templates/{key}/invoke.
func (h workflowHandlers) invokeTemplate(w http.ResponseWriter, r *http.Request) error {
	return h.invoke(w, r, workflows.InvokeParams{TemplateKey: r.PathValue("key")})
}

// invokeSaved serves POST /api/v1/workflows/{id}/invoke.
func (h workflowHandlers) invokeSaved(w http.ResponseWriter, r *http.Request) error {
	return h.invoke(w, r, workflows.InvokeParams{WorkflowID: r.PathValue("id")})
}

// get serves GET /api/v1/workflow-runs/{id}.
func (h workflowHandlers) get(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	d, ok := h.e.Get(Caller(r.Context()).Workspace.ID(), id)
	if !ok {
		return workflows.NotFound(id)
	}
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool             `json:"ok"`
		Run        workflows.RunDoc `json:"run"`
		NextAction string           `json:"next_action"`
	}{true, d, d.NextAction()})
}

// list serves GET /api/v1/workflow-runs.
func (h workflowHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	statuses := make([]string, len(workflows.Statuses))
	for i, s := range workflows.Statuses {
		statuses[i] = string(s)
	}
	st, _, err := wire.QueryEnum(q, "status", statuses...)
	if err != nil {
		return err
	}
	f := workflows.Filter{Status: workflows.Status(st)}
	f.WorkflowID, _ = wire.QueryString(q, "workflow_id")
	cur, _ := wire.QueryString(q, "cursor")
	rows, next := h.e.List(Caller(r.Context()).Workspace.ID(), f, cur, wire.QueryLimit(q, "limit", catalog.DefaultLimit, catalog.MaxLimit))
	return wire.WriteJSON(w, http.StatusOK, struct {
		OK         bool                   `json:"ok"`
		Runs       []workflows.SummaryDoc `json:"runs"`
		NextCursor *string                `json:"next_cursor"`
	}{true, rows, nullable(next)})
}
