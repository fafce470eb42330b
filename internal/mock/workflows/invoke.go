package workflows

import (
	"fmt"
	"math"
	"strings"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/admission"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
)

// InvokeParams is one invoke whose body passed its shape check.
type InvokeParams struct {
	WorkspaceID string
	// KeyID and KeyBudget are the invoking key: spend limits are checked
	// on the sum and every step's hold counts against them.
	KeyID     string
	KeyBudget *int64
	Plan      fixtures.Plan
	// Exactly one of WorkflowID (wf_) and TemplateKey names the workflow.
	WorkflowID  string
	TemplateKey string
	Inputs      map[string]any
	MaxCredits  int64
	// TestInput is the invoke's test input (spec/testmode.yaml): every step of the run is
	// submitted with it (jobs.SubmitParams.TestInput). "" for none.
	TestInput string
}

// Credits is the credits object of a run (openapi RunCredits).
type Credits struct {
	CreditsEstimated int64  `json:"credits_estimated"`
	CreditsCharged   *int64 `json:"credits_charged"`
	Settlement       string `json:"settlement"`
	Terminal         bool   `json:"terminal"`
}

// InvokeAnswer is the invoke answer (openapi WorkflowInvokeResponse).
type InvokeAnswer struct {
	OK            bool    `json:"ok"`
	WorkflowRunID string  `json:"workflow_run_id"`
	WorkflowID    *string `json:"workflow_id"`
	TemplateKey   *string `json:"template_key"`
	Status        Status  `json:"status"`
	Credits       Credits `json:"credits"`
	NextAction    string  `json:"next_action"`
	Summary       string  `json:"summary"`
}

// standInGen and standInAsset are ids that stand for outputs not made yet;
// they are only priced, never stored.
func standInGen(node int) string { return fmt.Sprintf("gen_%032x", node+1) }

func standInAsset(node, i int) string { return fmt.Sprintf("ast_%028x%04x", node+1, i) }

// inputField names the run input a node field is bound to ("inputs.x"),
// else "inputs".
func inputField(n *fixtures.WorkflowNode, key string) string {
	b, ok := n.Config[key]
	if !ok {
		b, ok = n.Body[key]
	}
	if name, cut := strings.CutPrefix(b.From, "inputs."); ok && cut {
		return "inputs." + name
	}
	return "inputs"
}

// quote resolves and prices every node of d with inputs (see the package comment's pricing rule)
// and runs, through package admission, the checks of each step that need no credits: capability,
// config built from the inputs, resources the inputs name, talking-actor voice length, not
// priced. It returns the node quotes in node order; the first step's plan or content refusal
// comes back separately (later), answered after the credit checks (admission.Invoke).
func (e *Engine) quote(d *definition, v catalog.Viewer, inputs map[string]any) (quotes []admission.StepQuote, later error, err error) {
	cat := e.d.Catalog
	standIn := map[string]fixtures.NodeResult{}
	uploads := map[string]catalog.Upload{}
	durMS := map[string]int64{} // node id -> estimated output length
	for i := range d.tpl.Nodes {
		n := &d.tpl.Nodes[i]
		cp, err := cat.Runnable(n.CapabilityID)
		if err != nil {
			return nil, nil, err
		}
		cfg, body, err := d.tpl.ResolveNode(n.ID, inputs, standIn)
		if err != nil {
			return nil, nil, apierr.Internal(err, "The workflow could not be built from its inputs.")
		}
		req := catalog.Request{CapabilityID: cp.ID, Config: cfg}
		req.ActorID, _ = body["actor_id"].(string)
		req.ActorImageAssetID, _ = body["actor_image_asset_id"].(string)
		req.VoiceID, _ = body["voice_id"].(string)
		req.ApprovedVoiceGenerationID, _ = body["approved_voice_generation_id"].(string)
		if err := admission.StepConfig(cat, cp, req, n.ID, func(key string) string { return inputField(n, key) }); err != nil {
			return nil, nil, err
		}
		// The resources the inputs name themselves (not earlier outputs).
		own := req
		own.Config = map[string]any{}
		for k, val := range cfg {
			if b := n.Config[k]; !strings.HasPrefix(b.From, "nodes.") {
				own.Config[k] = val
			}
		}
		if b := n.Body["approved_voice_generation_id"]; strings.HasPrefix(b.From, "nodes.") {
			own.ApprovedVoiceGenerationID = ""
		}
		if b := n.Body["actor_image_asset_id"]; strings.HasPrefix(b.From, "nodes.") {
			own.ActorImageAssetID = ""
		}
		res, rerr := cat.CheckResources(v, own)
		if rerr != nil {
			return nil, nil, rerr
		}
		for id, u := range uploads {
			res.Uploads[id] = u
		}
		if b := n.Body["approved_voice_generation_id"]; strings.HasPrefix(b.From, "nodes.") {
			src := strings.Split(b.From, ".")[1]
			res.ApprovedTT = &catalog.VoiceGeneration{
				GenerationID: req.ApprovedVoiceGenerationID, CapabilityID: "tts", Completed: true,
				Script: stringAt(cfg, "script"), VoiceID: req.VoiceID, DurationMS: durMS[src],
			}
		}
		if err := admission.StepVoiceLength(cp, n.ID, inputField(n, "script"), res.ApprovedTT); err != nil {
			return nil, nil, err
		}
		if err := admission.NotPriced(cp); err != nil {
			return nil, nil, err
		}
		q, err := catalog.Price(cp, cfg, 0, res)
		if err != nil {
			return nil, nil, err
		}
		quotes = append(quotes, admission.StepQuote{NodeID: n.ID, Credits: q.Credits, Hold: q.MaxCreditsNeeded})
		if later == nil {
			if later = catalog.PlanAllows(cp, v); later == nil {
				later = admission.Moderated(cp, cfg, func(f string) string { return inputField(n, f) + " (step " + n.ID + ")" })
			}
		}
		// Stand-in results for later nodes: as many outputs as the step
		// makes, each as long as its estimated output.
		outs := catalog.Outputs(cp, q.Takes)
		var ms int64
		if q.Seconds != nil {
			ms = int64(math.Round(*q.Seconds * 1000))
		}
		durMS[n.ID] = ms
		r := fixtures.NodeResult{GenerationID: standInGen(i), OutputText: "stand-in"}
		for k := range outs {
			id := standInAsset(i, k)
			r.OutputAssetIDs = append(r.OutputAssetIDs, id)
			u := catalog.Upload{AssetID: id, Kind: string(cp.OutputKind), Ready: true}
			if ms > 0 {
				m := ms
				u.DurationMS = &m
			}
			uploads[id] = u
		}
		standIn[n.ID] = r
	}
	return quotes, later, nil
}

func stringAt(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Invoke starts a run after the invoke checks (package admission's invoke order). Unknown
// (or another workspace's) wf_ ids and unknown template keys answer 404
// not_found.
func (e *Engine) Invoke(p InvokeParams) (InvokeAnswer, error) {
	var d *definition
	var ok bool
	if p.TemplateKey != "" {
		if d, ok = e.templateDef(p.TemplateKey); !ok {
			return InvokeAnswer{}, apierr.NotFound("No workflow template " + p.TemplateKey + "; read GET /workflows/templates.")
		}
	} else if d, ok = e.savedDef(p.WorkspaceID, p.WorkflowID); !ok {
		return InvokeAnswer{}, apierr.NotFound("No workflow " + p.WorkflowID + " in this workspace.")
	}
	ws, ok := e.d.Registry.Get(p.WorkspaceID)
	if !ok {
		return InvokeAnswer{}, apierr.NotFound("No workspace " + p.WorkspaceID + ".")
	}
	if p.Inputs == nil {
		p.Inputs = map[string]any{}
	}
	v := catalog.Viewer{WorkspaceID: p.WorkspaceID, Plan: p.Plan}
	c := &admission.Invocation{
		MaxCredits: p.MaxCredits, Spender: ledger.Spender{KeyID: p.KeyID, KeyBudget: p.KeyBudget}, Workspace: ws,
		Inputs:  func() error { return d.validate(p.Inputs) },
		Resolve: func() ([]admission.StepQuote, error, error) { return e.quote(d, v, p.Inputs) },
	}
	if err := admission.Invoke(c); err != nil {
		return InvokeAnswer{}, err
	}
	estimated := c.Estimated
	now := e.d.Clock.Now()
	r := &run{
		workspaceID: p.WorkspaceID, def: d, inputs: p.Inputs, keyID: p.KeyID, keyBudget: p.KeyBudget, plan: p.Plan, testInput: p.TestInput,
		status: StatusQueued, results: map[string]fixtures.NodeResult{}, estimated: estimated, createdAt: now,
	}
	dependents := map[string]bool{}
	for _, n := range d.tpl.Nodes {
		for _, dep := range n.DependsOn {
			dependents[dep] = true
		}
	}
	for i := range d.tpl.Nodes {
		n := &d.tpl.Nodes[i]
		purpose := "intermediate"
		if !dependents[n.ID] {
			purpose = "deliverable"
		}
		r.nodes = append(r.nodes, &node{def: n, purpose: purpose, status: NodePending, genIDs: []string{}, settled: map[string]bool{}})
	}
	e.mu.Lock()
	e.settleGraphLocked(r) // nodes with no inputs read ready
	r.id = e.d.IDs.ID("wfr_")
	e.seq++
	r.seq = e.seq
	e.runs[r.id] = r
	e.order = append(e.order, r)
	gen, id := e.resetGen, r.id
	r.timer = e.d.Clock.AfterFunc(StartDelay, func() { e.start(id, gen) })
	if e.d.Faults != nil {
		if f, ok := e.d.Faults.TakeIn(faults.Cancel, p.TestInput, p.WorkspaceID, ""); ok {
			// The app cancels the run after the test input's seconds (spec/testmode.yaml).
			e.d.Clock.AfterFunc(f.Duration(), func() { _, _, _ = e.cancelIn(id, gen) })
		}
	}
	a := InvokeAnswer{
		OK: true, WorkflowRunID: r.id, WorkflowID: strPtr(d.workflowID), TemplateKey: strPtr(p.TemplateKey),
		Status: StatusQueued, Credits: Credits{CreditsEstimated: estimated, Settlement: "open"},
		NextAction: "Read GET /workflow-runs/" + r.id + " about every 30 seconds until still_running is false, or subscribe to workflow_run.* webhooks.",
		Summary:    fmt.Sprintf("Accepted a run of %d steps estimated at %d credits; each step holds its own credits when it starts.", len(r.nodes), estimated),
	}
	e.mu.Unlock()
	return a, nil
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
