package control

import (
	"net/http"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
)

// bindingBody is a node binding as the control API takes it (fixtures
// README "Workflow bindings").
type bindingBody struct {
	From  string `json:"from"`
	Value any    `json:"value"`
	Alias string `json:"alias"`
	Role  string `json:"role"`
}

type nodeBody struct {
	NodeID       string                 `json:"node_id"`
	Label        string                 `json:"label"`
	CapabilityID string                 `json:"capability_id"`
	DependsOn    []string               `json:"depends_on"`
	Config       map[string]bindingBody `json:"config"`
	Body         map[string]bindingBody `json:"body"`
}

type saveBody struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	TemplateKey   string         `json:"template_key"`
	Nodes         []nodeBody     `json:"nodes"`
	InputsSchema  map[string]any `json:"inputs_schema"`
	ExampleInputs map[string]any `json:"example_inputs"`
}

func bindings(in map[string]bindingBody) map[string]fixtures.Binding {
	if in == nil {
		return nil
	}
	out := make(map[string]fixtures.Binding, len(in))
	for k, b := range in {
		out[k] = fixtures.Binding{From: b.From, Value: b.Value, Alias: b.Alias, Role: b.Role}
	}
	return out
}

// RegisterWorkflows adds the workflow operations over the engine:
// POST /workspaces/{id}/workflows (save a workflow from a template key or a
// node list) and POST /workflow-runs/{id}/cancel.
func (h *Handler) RegisterWorkflows(e *workflows.Engine) {
	h.Handle("POST /workspaces/{id}/workflows", func(w http.ResponseWriter, r *http.Request) error {
		ws, err := h.workspace(r)
		if err != nil {
			return err
		}
		var b saveBody
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		p := workflows.SaveParams{
			Name: b.Name, Description: b.Description, TemplateKey: b.TemplateKey,
			InputsSchema: b.InputsSchema, ExampleInputs: b.ExampleInputs,
		}
		if b.TemplateKey == "" && b.Nodes == nil {
			return apierr.InvalidConfigFields([]string{"template_key", "nodes"}, "Send template_key (copy a template) or nodes with inputs_schema.")
		}
		for _, n := range b.Nodes {
			p.Nodes = append(p.Nodes, fixtures.WorkflowNode{
				ID: n.NodeID, Label: n.Label, CapabilityID: n.CapabilityID, DependsOn: n.DependsOn,
				Config: bindings(n.Config), Body: bindings(n.Body),
			})
		}
		if b.Nodes != nil && p.Nodes == nil {
			p.Nodes = []fixtures.WorkflowNode{}
		}
		saved, err := e.Save(ws.ID(), p)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusCreated, struct {
			OK bool `json:"ok"`
			workflows.Saved
		}{true, saved})
	})
	h.Handle("POST /workflow-runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		st, changed, err := e.Cancel(id)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "workflow_run_id": id, "status": st, "changed": changed})
	})
}
