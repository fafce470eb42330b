package workflows

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// MaxNodes is the most steps a saved workflow may have.
const MaxNodes = 10

var slugRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// TemplateNodeDoc is one step of a template (openapi WorkflowTemplateNode).
type TemplateNodeDoc struct {
	NodeID       string   `json:"node_id"`
	Label        string   `json:"label"`
	CapabilityID string   `json:"capability_id"`
	DependsOn    []string `json:"depends_on"`
}

// TemplateDoc is a template of GET /workflows/templates (openapi
// WorkflowTemplate).
type TemplateDoc struct {
	TemplateKey   string            `json:"template_key"`
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Nodes         []TemplateNodeDoc `json:"nodes"`
	InputsSchema  map[string]any    `json:"inputs_schema"`
	ExampleInputs map[string]any    `json:"example_inputs"`
}

func nodeDocs(tpl *fixtures.WorkflowTemplate) []TemplateNodeDoc {
	out := make([]TemplateNodeDoc, 0, len(tpl.Nodes))
	for _, n := range tpl.Nodes {
		deps := n.DependsOn
		if deps == nil {
			deps = []string{}
		}
		out = append(out, TemplateNodeDoc{NodeID: n.ID, Label: n.Label, CapabilityID: n.CapabilityID, DependsOn: slices.Clone(deps)})
	}
	return out
}

// Templates returns every workflow template of the fixtures, in file order.
func (e *Engine) Templates() []TemplateDoc {
	fx := e.d.Catalog.Fixtures()
	out := make([]TemplateDoc, 0, len(fx.WorkflowTemplates))
	for _, t := range fx.WorkflowTemplates {
		ex := t.ExampleInputs
		if ex == nil {
			ex = map[string]any{}
		}
		out = append(out, TemplateDoc{
			TemplateKey: t.Key, Name: t.Name, Description: t.Description, Nodes: nodeDocs(t),
			InputsSchema: t.InputsSchema, ExampleInputs: ex,
		})
	}
	return out
}

// templateDef returns the definition of template key.
func (e *Engine) templateDef(key string) (*definition, bool) {
	fx := e.d.Catalog.Fixtures()
	t, ok := fx.WorkflowTemplate(key)
	if !ok {
		return nil, false
	}
	return &definition{tpl: t, templateKey: key, name: t.Name, validate: func(in map[string]any) error {
		return inputsError(fx.ValidateInputs(key, in))
	}}, true
}

// inputsError turns a fixtures validation failure into invalid_config.
func inputsError(err error) error {
	if err == nil {
		return nil
	}
	var ce *fixtures.ConfigError
	if errors.As(err, &ce) {
		return apierr.InvalidConfig(ce.Field, ce.Message)
	}
	return apierr.Internal(err, "The service could not check the inputs.")
}

// SaveParams describes a workflow to save: either TemplateKey (a copy of a
// template) or Nodes with InputsSchema (a node list in the fixtures'
// binding format, see fixtures/README.md "Workflow bindings").
type SaveParams struct {
	Name          string
	Description   string
	TemplateKey   string
	Nodes         []fixtures.WorkflowNode
	InputsSchema  map[string]any
	ExampleInputs map[string]any
}

// Saved is a saved workflow as the control API answers it.
type Saved struct {
	WorkflowID  string            `json:"workflow_id"`
	WorkspaceID string            `json:"workspace_id"`
	Name        string            `json:"name"`
	TemplateKey *string           `json:"template_key"`
	Nodes       []TemplateNodeDoc `json:"nodes"`
	CreatedAt   string            `json:"created_at"`
}

func savedDoc(d *definition) Saved {
	s := Saved{WorkflowID: d.workflowID, WorkspaceID: d.workspaceID, Name: d.name, Nodes: nodeDocs(d.tpl), CreatedAt: clock.Format(d.createdAt)}
	if d.templateKey != "" {
		k := d.templateKey
		s.TemplateKey = &k
	}
	return s
}

// Save stores a workflow of workspaceID and returns it with its new wf_ id.
// Refusals are 400 invalid_config naming the field (name, template_key,
// nodes[i].capability_id, inputs_schema, ...) or 404 not_found for an
// unknown template key.
func (e *Engine) Save(workspaceID string, p SaveParams) (Saved, error) {
	if len(p.Name) > 200 {
		return Saved{}, apierr.InvalidConfig("name", "name must be at most 200 characters.")
	}
	var d *definition
	switch {
	case p.TemplateKey != "" && (p.Nodes != nil || p.InputsSchema != nil):
		return Saved{}, apierr.InvalidConfigFields([]string{"template_key", "nodes"}, "Send template_key or nodes with inputs_schema, not both.")
	case p.TemplateKey != "":
		t, ok := e.templateDef(p.TemplateKey)
		if !ok {
			return Saved{}, apierr.NotFound("No workflow template " + p.TemplateKey + ".")
		}
		d = t
	default:
		var err error
		if d, err = e.customDef(p); err != nil {
			return Saved{}, err
		}
	}
	d.workspaceID = workspaceID
	if p.Name != "" {
		d.name = p.Name
	}
	if d.name == "" {
		d.name = "Saved workflow"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	d.workflowID = e.d.IDs.ID("wf_")
	d.createdAt = e.d.Clock.Now()
	e.saved[d.workflowID] = d
	return savedDoc(d), nil
}

// savedDef returns the saved workflow id of workspaceID.
func (e *Engine) savedDef(workspaceID, id string) (*definition, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.saved[id]
	if !ok || d.workspaceID != workspaceID {
		return nil, false
	}
	return d, true
}

// customDef checks a node list and compiles its inputs schema.
func (e *Engine) customDef(p SaveParams) (*definition, error) {
	if len(p.Nodes) == 0 {
		return nil, apierr.InvalidConfig("nodes", "Send template_key, or nodes (1 to 10 steps) with inputs_schema.")
	}
	if len(p.Nodes) > MaxNodes {
		return nil, apierr.InvalidConfig("nodes", fmt.Sprintf("A workflow has at most %d nodes.", MaxNodes))
	}
	if p.InputsSchema == nil {
		return nil, apierr.InvalidConfig("inputs_schema", "inputs_schema is required with nodes: a JSON Schema object with additionalProperties false.")
	}
	if p.InputsSchema["type"] != "object" || p.InputsSchema["additionalProperties"] != false {
		return nil, apierr.InvalidConfig("inputs_schema", "inputs_schema must have type object and additionalProperties false.")
	}
	sch, err := fixtures.CompileSchema(p.InputsSchema)
	if err != nil {
		return nil, apierr.InvalidConfig("inputs_schema", "inputs_schema does not compile: "+err.Error())
	}
	validate := func(in map[string]any) error { return schemaError("inputs", sch, in) }
	ex := p.ExampleInputs
	if ex != nil {
		if err := validate(ex); err != nil {
			return nil, apierr.InvalidConfig("example_inputs", "example_inputs do not validate: "+err.Error())
		}
	} else {
		ex = map[string]any{}
	}
	props, _ := p.InputsSchema["properties"].(map[string]any)
	tpl := &fixtures.WorkflowTemplate{Name: p.Name, Description: p.Description, InputsSchema: p.InputsSchema, ExampleInputs: ex}
	done := map[string]bool{}
	for i, n := range p.Nodes {
		at := fmt.Sprintf("nodes[%d]", i)
		if !slugRe().MatchString(n.ID) || done[n.ID] {
			return nil, apierr.InvalidConfig(at+".node_id", "node_id must be a lowercase slug, unique in the workflow.")
		}
		cp, err := e.d.Catalog.Runnable(n.CapabilityID)
		if err != nil {
			return nil, apierr.InvalidConfig(at+".capability_id", "capability "+n.CapabilityID+" cannot be run: "+err.Error())
		}
		if n.DependsOn == nil {
			n.DependsOn = []string{}
		}
		for _, dep := range n.DependsOn {
			if !done[dep] {
				return nil, apierr.InvalidConfig(at+".depends_on", "depends_on "+dep+" is not an earlier node.")
			}
		}
		schemaProps, _ := cp.ConfigSchema["properties"].(map[string]any)
		for key, b := range n.Config {
			if _, ok := schemaProps[key]; !ok {
				return nil, apierr.InvalidConfig(at+".config."+key, key+" is not a config field of "+cp.ID+".")
			}
			if err := checkBinding(b, props); err != nil {
				return nil, apierr.InvalidConfig(at+".config."+key, err.Error())
			}
		}
		for key, b := range n.Body {
			if !slices.Contains(fixtures.BodyFields, key) {
				return nil, apierr.InvalidConfig(at+".body."+key, "body takes only "+strings.Join(fixtures.BodyFields, ", ")+".")
			}
			if err := checkBinding(b, props); err != nil {
				return nil, apierr.InvalidConfig(at+".body."+key, err.Error())
			}
		}
		if n.Label == "" {
			n.Label = n.ID
		}
		tpl.Nodes = append(tpl.Nodes, n)
		// Resolving with results for the dependencies only catches a binding
		// that reads a node outside depends_on, or an unreadable from.
		res := map[string]fixtures.NodeResult{}
		for _, dep := range n.DependsOn {
			res[dep] = fixtures.NodeResult{GenerationID: standInGen(0), OutputAssetIDs: []string{standInAsset(0, 0)}}
		}
		if _, _, err := tpl.ResolveNode(n.ID, ex, res); err != nil {
			return nil, apierr.InvalidConfig(at, err.Error())
		}
		done[n.ID] = true
	}
	return &definition{tpl: tpl, name: p.Name, validate: validate}, nil
}

func checkBinding(b fixtures.Binding, props map[string]any) error {
	if (b.From == "") == (b.Value == nil) {
		return errors.New("a binding needs exactly one of from and value")
	}
	if name, ok := strings.CutPrefix(b.From, "inputs."); ok {
		if _, ok := props[name]; !ok {
			return fmt.Errorf("from %s reads an input inputs_schema does not declare", b.From)
		}
	}
	return nil
}

// schemaError validates doc against sch and answers invalid_config naming the first failing field
// below prefix, exactly as config validation does (fixtures.ValidateDocument).
func schemaError(prefix string, sch *jsonschema.Schema, doc map[string]any) error {
	err := fixtures.ValidateDocument(sch, prefix, doc)
	if err == nil {
		return nil
	}
	var ce *fixtures.ConfigError
	if errors.As(err, &ce) {
		return apierr.InvalidConfig(ce.Field, ce.Message)
	}
	return apierr.InvalidConfig(prefix, prefix+": "+err.Error())
}
