package workflows

import (
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"slices"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/paging"
)

// NodeDoc is one step of a run read (openapi WorkflowRunNode).
type NodeDoc struct {
	NodeID        string     `json:"node_id"`
	Label         string     `json:"label"`
	CapabilityID  string     `json:"capability_id"`
	Status        NodeStatus `json:"status"`
	DependsOn     []string   `json:"depends_on"`
	Credits       *int64     `json:"credits"`
	GenerationIDs []string   `json:"generation_ids"`
	Error         *NodeError `json:"error"`
}

// SummaryDoc is a run without its nodes (openapi WorkflowRunSummary).
type SummaryDoc struct {
	WorkflowRunID string  `json:"workflow_run_id"`
	WorkflowID    *string `json:"workflow_id"`
	TemplateKey   *string `json:"template_key"`
	Status        Status  `json:"status"`
	StillRunning  bool    `json:"still_running"`
	Credits       Credits `json:"credits"`
	CreatedAt     string  `json:"created_at"`
	StartedAt     *string `json:"started_at"`
	FinishedAt    *string `json:"finished_at"`
	Summary       string  `json:"summary"`
}

// RunDoc is a run with its nodes (openapi WorkflowRun).
type RunDoc struct {
	SummaryDoc
	Nodes []NodeDoc `json:"nodes"`
}

// RunEventNode is one step in a run event (openapi RunEventNode).
type RunEventNode struct {
	NodeID        string     `json:"node_id"`
	Label         string     `json:"label"`
	Status        NodeStatus `json:"status"`
	Credits       *int64     `json:"credits"`
	GenerationIDs []string   `json:"generation_ids"`
	Error         *NodeError `json:"error"`
}

// RunEventData is the data of workflow_run.completed and workflow_run.failed
// (openapi RunEventData): no link, with the disclosure sentence.
type RunEventData struct {
	WorkflowRunID string         `json:"workflow_run_id"`
	WorkflowID    *string        `json:"workflow_id"`
	TemplateKey   *string        `json:"template_key"`
	Status        Status         `json:"status"`
	Credits       Credits        `json:"credits"`
	Nodes         []RunEventNode `json:"nodes"`
	StartedAt     *string        `json:"started_at"`
	FinishedAt    string         `json:"finished_at"`
	Disclosure    string         `json:"disclosure"`
}

func (r *run) templateKey() *string {
	if r.def.workflowID != "" {
		return nil
	}
	return strPtr(r.def.templateKey)
}

func (r *run) credits() Credits {
	c := Credits{CreditsEstimated: r.estimated, Settlement: "open"}
	if r.status.Finished() && r.charged != nil {
		v := *r.charged
		c.CreditsCharged, c.Settlement, c.Terminal = &v, "captured", true
	}
	return c
}

func (r *run) summaryText() string {
	done := 0
	for _, n := range r.nodes {
		if n.status == NodeCompleted {
			done++
		}
	}
	switch r.status {
	case StatusQueued:
		return fmt.Sprintf("Run of %d steps is queued; nothing has started.", len(r.nodes))
	case StatusRunning:
		return fmt.Sprintf("Run is working: %d of %d steps completed.", done, len(r.nodes))
	case StatusCompleted:
		return fmt.Sprintf("Every one of the %d steps completed; charged %d credits.", len(r.nodes), *r.charged)
	case StatusPartial:
		return fmt.Sprintf("%d of %d steps completed and the rest did not; charged %d credits for the finished steps only.", done, len(r.nodes), *r.charged)
	case StatusCanceled:
		return "The run was canceled before any step completed; nothing was charged."
	}
	return "No step completed; nothing was charged."
}

func (r *run) summaryDoc() SummaryDoc {
	return SummaryDoc{
		WorkflowRunID: r.id, WorkflowID: strPtr(r.def.workflowID), TemplateKey: r.templateKey(), Status: r.status,
		StillRunning: !r.status.Finished(), Credits: r.credits(), CreatedAt: clock.Format(r.createdAt),
		StartedAt: clock.FormatPtr(r.startedAt), FinishedAt: clock.FormatPtr(r.finishedAt), Summary: r.summaryText(),
	}
}

func (n *node) errCopy() *NodeError {
	if n.err == nil {
		return nil
	}
	e := *n.err
	return &e
}

func (n *node) creditsCopy() *int64 {
	if n.credits == nil {
		return nil
	}
	v := *n.credits
	return &v
}

func (r *run) doc() RunDoc {
	d := RunDoc{SummaryDoc: r.summaryDoc(), Nodes: make([]NodeDoc, 0, len(r.nodes))}
	for _, n := range r.nodes {
		deps := n.def.DependsOn
		if deps == nil {
			deps = []string{}
		}
		d.Nodes = append(d.Nodes, NodeDoc{
			NodeID: n.def.ID, Label: n.def.Label, CapabilityID: n.def.CapabilityID, Status: n.status,
			DependsOn: slices.Clone(deps), Credits: n.creditsCopy(), GenerationIDs: slices.Clone(n.genIDs), Error: n.errCopy(),
		})
	}
	return d
}

func (r *run) eventData() RunEventData {
	d := RunEventData{
		WorkflowRunID: r.id, WorkflowID: strPtr(r.def.workflowID), TemplateKey: r.templateKey(), Status: r.status,
		Credits: r.credits(), StartedAt: clock.FormatPtr(r.startedAt), Disclosure: Disclosure,
		Nodes: make([]RunEventNode, 0, len(r.nodes)),
	}
	if r.finishedAt != nil {
		d.FinishedAt = clock.Format(*r.finishedAt)
	}
	for _, n := range r.nodes {
		d.Nodes = append(d.Nodes, RunEventNode{
			NodeID: n.def.ID, Label: n.def.Label, Status: n.status, Credits: n.creditsCopy(),
			GenerationIDs: slices.Clone(n.genIDs), Error: n.errCopy(),
		})
	}
	return d
}

// NextAction is the advice of a run read.
func (d RunDoc) NextAction() string {
	switch d.Status {
	case StatusQueued, StatusRunning:
		return "Read this run again in about 30 seconds (there is no wait endpoint), or wait for a workflow_run.* webhook."
	case StatusCompleted, StatusPartial:
		return "Read the generations in nodes[].generation_ids for the files; keep their asset ids."
	}
	return "Nothing was delivered and nothing was charged; read nodes[].error, fix the inputs if needed and invoke again."
}

// Get returns run id of workspaceID; another workspace's run is absent.
func (e *Engine) Get(workspaceID, id string) (RunDoc, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[id]
	if !ok || r.workspaceID != workspaceID {
		return RunDoc{}, false
	}
	return r.doc(), true
}

// Filter selects runs of GET /workflow-runs; zero fields match everything.
type Filter struct {
	Status     Status
	WorkflowID string
}

// List answers one page of GET /workflow-runs for workspaceID, newest first
// (by creation; ties: later invokes first). cur is the previous page's
// next cursor; an unreadable one, or one naming no run of the current
// selection, restarts from the first page. next is "" on the last page.
func (e *Engine) List(workspaceID string, f Filter, cur string, limit int) (rows []SummaryDoc, next string) {
	e.mu.Lock()
	var sel []*run
	for i := len(e.order) - 1; i >= 0; i-- {
		r := e.order[i]
		if r.forgotten || r.workspaceID != workspaceID || (f.Status != "" && r.status != f.Status) ||
			(f.WorkflowID != "" && r.def.workflowID != f.WorkflowID) {
			continue
		}
		sel = append(sel, r)
	}
	slices.SortStableFunc(sel, func(a, b *run) int {
		if c := b.createdAt.Compare(a.createdAt); c != 0 {
			return c
		}
		return int(b.seq - a.seq)
	})
	docs := make([]SummaryDoc, len(sel))
	for i, r := range sel {
		docs[i] = r.summaryDoc()
	}
	e.mu.Unlock()
	start := 0
	if id := paging.Decode(cur); id != "" {
		for i, d := range docs {
			if d.WorkflowRunID == id {
				start = i + 1
				break
			}
		}
	}
	if limit <= 0 {
		limit = contract.PageSizeDefault
	}
	end := min(start+limit, len(docs))
	rows = append([]SummaryDoc{}, docs[start:end]...)
	if end < len(docs) && len(rows) > 0 {
		next = paging.Encode(rows[len(rows)-1].WorkflowRunID)
	}
	return rows, next
}

// NotFound is the refusal for a run that is unknown or another workspace's.
func NotFound(id string) error {
	return apierr.NotFound("No workflow run " + id + " in this workspace.")
}
