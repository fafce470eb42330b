package workflows

import (
	"slices"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
)

// liveLocked returns the run id while it belongs to reset generation gen.
func (e *Engine) liveLocked(id string, gen int64) *run {
	if gen != e.resetGen {
		return nil
	}
	return e.runs[id]
}

// start is the end of the queued delay: the first steps are dispatched.
func (e *Engine) start(id string, gen int64) {
	e.mu.Lock()
	r := e.liveLocked(id, gen)
	if r != nil {
		r.timer = nil
	}
	e.mu.Unlock()
	if r != nil {
		e.advance(id, gen)
	}
}

// dispatch is one node to submit, prepared under the lock.
type dispatch struct {
	index  int
	params jobs.SubmitParams
}

// advance moves the run forward until nothing changes: pending nodes become
// skipped or ready, ready nodes are dispatched, and a run whose nodes are
// all finished is finished. Called with no lock held.
func (e *Engine) advance(id string, gen int64) {
	for {
		e.mu.Lock()
		r := e.liveLocked(id, gen)
		if r == nil || r.status.Finished() {
			e.mu.Unlock()
			return
		}
		e.settleGraphLocked(r)
		var todo []dispatch
		if !r.canceled && r.timer == nil {
			for i, n := range r.nodes {
				if n.status != NodeReady {
					continue
				}
				cfg, body, err := r.def.tpl.ResolveNode(n.def.ID, r.inputs, r.results)
				if err != nil {
					e.failNodeLocked(n, CodeInvalidInput, "The step could not be built from its inputs: "+err.Error())
					continue
				}
				p := jobs.SubmitParams{
					WorkspaceID: r.workspaceID, Plan: r.plan, Source: "workflow", Purpose: n.purpose, WorkflowRunID: r.id,
					SpendKeyID: r.keyID, SpendKeyBudget: r.keyBudget, CapabilityID: n.def.CapabilityID, Config: cfg,
					TestInput: r.testInput,
				}
				p.ActorID, _ = body["actor_id"].(string)
				p.ActorImageAssetID, _ = body["actor_image_asset_id"].(string)
				p.VoiceID, _ = body["voice_id"].(string)
				p.ApprovedVoiceGenerationID, _ = body["approved_voice_generation_id"].(string)
				n.status = NodeDispatching
				todo = append(todo, dispatch{index: i, params: p})
			}
			if len(todo) > 0 && r.status == StatusQueued {
				now := e.d.Clock.Now()
				r.status, r.startedAt = StatusRunning, &now
			}
		}
		var evs []event
		if len(todo) == 0 {
			if r.allFinished() {
				evs = e.finishLocked(r)
			}
			e.mu.Unlock()
			e.emit(evs)
			return
		}
		e.mu.Unlock()
		for _, t := range todo {
			e.submit(id, gen, t)
		}
	}
}

// settleGraphLocked skips pending nodes whose inputs broke and readies
// those whose inputs all completed; a canceled run cancels the rest.
func (e *Engine) settleGraphLocked(r *run) {
	byID := map[string]*node{}
	for _, n := range r.nodes {
		byID[n.def.ID] = n
	}
	for _, n := range r.nodes {
		if r.canceled && (n.status == NodePending || n.status == NodeReady) {
			n.status = NodeCanceled
			n.err = &NodeError{Code: CodeCanceled, Message: "The run was canceled before this step started."}
			continue
		}
		if n.status != NodePending {
			continue
		}
		ready := true
		for _, dep := range n.def.DependsOn {
			switch byID[dep].status {
			case NodeCompleted:
			case NodeFailed, NodeSkipped, NodeCanceled:
				n.status = NodeSkipped
				ready = false
			default:
				ready = false
			}
			if n.status == NodeSkipped {
				break
			}
		}
		if ready {
			n.status = NodeReady
		}
	}
}

func (r *run) allFinished() bool {
	for _, n := range r.nodes {
		if !n.status.finished() {
			return false
		}
	}
	return true
}

func (e *Engine) failNodeLocked(n *node, code, msg string) {
	zero := int64(0)
	n.status, n.err, n.credits = NodeFailed, &NodeError{Code: code, Message: msg}, &zero
}

// submitErrorCode maps a submit refusal of a step to a node error code.
func submitErrorCode(err error) string {
	switch apierr.CodeOf(err) {
	case apierr.CodeInsufficientCredits, apierr.CodeSpendLimitExceeded:
		return CodeInsufficientCredits
	case apierr.CodeModerationBlocked:
		return CodeModeration
	case apierr.CodeInvalidConfig, apierr.CodeNotFound, apierr.CodeInputNotReady, apierr.CodeCapabilityUnavailable,
		apierr.CodeRequiredPlan, apierr.CodeNotPriced:
		return CodeInvalidInput
	case apierr.CodeProviderUnavailable, apierr.CodeModerationUnavailable, apierr.CodePricingUnavailable, apierr.CodeEstimateChanged:
		return CodeProviderError
	}
	return CodeUnknown
}

// generationErrorCode maps a failed generation's error code to a node
// error code.
func generationErrorCode(e *jobs.GenError) string {
	if e == nil {
		return CodeUnknown
	}
	switch e.Code {
	case CodeProviderError, CodeModeration, CodeTimeout, CodeCanceled, CodeUnknown, CodeInsufficientCredits, CodeInvalidInput:
		return e.Code
	}
	return CodeUnknown
}

// submit submits one dispatched node (no lock held) and records the answer.
func (e *Engine) submit(id string, gen int64, t dispatch) {
	a, err := e.d.Jobs.Submit(t.params)
	e.mu.Lock()
	r := e.liveLocked(id, gen)
	if r == nil {
		e.mu.Unlock()
		if err == nil {
			for _, g := range a.GenerationIDs {
				_, _, _ = e.d.Jobs.Cancel(g)
			}
		}
		return
	}
	n := r.nodes[t.index]
	if err != nil {
		msg := "The step was refused: " + err.Error()
		if ae, ok := err.(*apierr.Error); ok {
			msg = "The step was refused (" + string(ae.Code) + "): " + ae.Message
		}
		e.failNodeLocked(n, submitErrorCode(err), msg)
		e.mu.Unlock()
		return
	}
	n.status = NodeRunning
	n.genIDs = slices.Clone(a.GenerationIDs)
	for _, g := range n.genIDs {
		e.byGen[g] = genRef{runID: id, node: t.index}
	}
	canceled := r.canceled
	wsID := r.workspaceID
	e.mu.Unlock()
	if canceled {
		for _, g := range a.GenerationIDs {
			_, _, _ = e.d.Jobs.Cancel(g)
		}
	}
	// A generation that settled before it was recorded (a scaled clock may
	// fire its timers at once) is applied now; applying is idempotent.
	for _, g := range a.GenerationIDs {
		if v, ok := e.d.Jobs.Get(wsID, g); ok && !v.Status.Running() {
			e.onSettle(wsID, g)
		}
	}
}

// onSettle is the jobs settle hook: a step's generation finished.
func (e *Engine) onSettle(workspaceID, generationID string) {
	v, ok := e.d.Jobs.Get(workspaceID, generationID)
	if !ok || v.WorkflowRunID == "" {
		return
	}
	e.mu.Lock()
	ref, ok := e.byGen[generationID]
	gen := e.resetGen
	if !ok {
		e.mu.Unlock()
		return
	}
	r := e.runs[ref.runID]
	n := r.nodes[ref.node]
	if n.status != NodeRunning || n.settled[generationID] {
		e.mu.Unlock()
		return
	}
	n.settled[generationID] = true
	if len(n.settled) < len(n.genIDs) {
		e.mu.Unlock()
		return
	}
	// Every generation of the node settled: read them all.
	var charged int64
	var failed *jobs.GenError
	res := fixtures.NodeResult{GenerationID: n.genIDs[0]}
	ids := slices.Clone(n.genIDs)
	e.mu.Unlock()
	for _, g := range ids {
		gv, ok := e.d.Jobs.Get(workspaceID, g)
		if !ok {
			continue
		}
		if gv.CreditsCharged != nil {
			charged += *gv.CreditsCharged
		}
		if gv.Status == jobs.StatusFailed {
			if failed == nil {
				failed = gv.Error
				if failed == nil {
					failed = &jobs.GenError{Code: CodeUnknown, Message: "The step failed."}
				}
			}
			continue
		}
		res.OutputAssetIDs = append(res.OutputAssetIDs, gv.OutputAssetIDs()...)
		if gv.OutputText != nil {
			res.OutputText = *gv.OutputText
		}
	}
	e.mu.Lock()
	if e.resetGen != gen || n.status != NodeRunning {
		e.mu.Unlock()
		return
	}
	n.credits = &charged
	if failed != nil {
		n.status, n.err = NodeFailed, &NodeError{Code: generationErrorCode(failed), Message: failed.Message}
	} else {
		n.status = NodeCompleted
		r.results[n.def.ID] = res
	}
	e.mu.Unlock()
	e.advance(ref.runID, gen)
}

// finishLocked decides the final status, settles the run's credits and
// returns its event.
func (e *Engine) finishLocked(r *run) []event {
	completed := 0
	for _, n := range r.nodes {
		if n.status == NodeCompleted {
			completed++
		}
	}
	switch {
	case completed == len(r.nodes):
		r.status = StatusCompleted
	case completed > 0:
		r.status = StatusPartial
	case r.canceled:
		r.status = StatusCanceled
	default:
		r.status = StatusFailed
	}
	var charged int64
	for _, n := range r.nodes {
		if n.credits != nil {
			charged += *n.credits
		}
	}
	now := e.d.Clock.Now()
	r.charged, r.finishedAt = &charged, &now
	e.sweep.Ended(r.id, now)
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	typ := EventRunCompleted
	if r.status == StatusFailed || r.status == StatusCanceled {
		typ = EventRunFailed
	}
	return []event{{workspaceID: r.workspaceID, eventType: typ, data: r.eventData()}}
}

// Cancel cancels run id (any workspace): nodes not started become canceled,
// running steps' generations are canceled (they read failed, code
// canceled), and the run ends canceled when no step had completed, else
// partial. A finished run is left as is (changed false). Unknown ids answer
// 404 not_found.
func (e *Engine) Cancel(id string) (Status, bool, error) { return e.cancelIn(id, -1) }

// cancelIn is Cancel of run id made in reset generation gen (-1: any): a timer set before a reset
// cancels nothing after it, checked under the lock that Cancel takes anyway, so a reset cannot
// come between the check and the cancel (the run's id may be reused since).
func (e *Engine) cancelIn(id string, want int64) (Status, bool, error) {
	e.mu.Lock()
	r, ok := e.runs[id]
	gen := e.resetGen
	if want >= 0 && want != gen {
		e.mu.Unlock()
		return "", false, nil
	}
	if !ok {
		e.mu.Unlock()
		return "", false, apierr.NotFound("No workflow run " + id + ".")
	}
	if r.status.Finished() || r.canceled {
		st := r.status
		e.mu.Unlock()
		return st, false, nil
	}
	r.canceled = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	var running []string
	for _, n := range r.nodes {
		if n.status == NodeRunning {
			for _, g := range n.genIDs {
				if !n.settled[g] {
					running = append(running, g)
				}
			}
		}
	}
	e.mu.Unlock()
	for _, g := range running {
		if _, _, err := e.d.Jobs.Cancel(g); err != nil {
			e.d.Logger.Error("workflows: cancel step", "run", id, "generation", g, "err", err)
		}
	}
	e.advance(id, gen)
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.liveLocked(id, gen); r != nil {
		return r.status, true, nil
	}
	return StatusCanceled, true, nil
}
