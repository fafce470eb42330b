package jobs

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/render"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// planFor works out what one generation renders (fixtures README "Output").
func (s *Store) planFor(workspaceID string, cp *fixtures.Capability, config map[string]any, res catalog.Resources, takes int) plan {
	pl := plan{kind: string(cp.OutputKind), format: cp.Output.Format, outputs: catalog.Outputs(cp, takes)}
	uploadIDs := func(f string) []string {
		var out []string
		arr, _ := config[f].([]any)
		for _, e := range arr {
			switch x := e.(type) {
			case string:
				out = append(out, x)
			case map[string]any:
				if id, ok := x["assetId"].(string); ok {
					out = append(out, id)
				}
			}
		}
		return out
	}
	uploadSize := func(f string) (int, int, bool) {
		for _, id := range uploadIDs(f) {
			if a, ok := s.d.Assets.Get(workspaceID, id); ok && a.Width != nil && a.Height != nil {
				return *a.Width, *a.Height, true
			}
		}
		return 0, 0, false
	}
	uploadMS := func(f string) int64 {
		var ms int64
		for _, id := range uploadIDs(f) {
			if u, ok := res.Uploads[id]; ok && u.DurationMS != nil {
				ms += *u.DurationMS
			} else if a, ok := s.d.Assets.Get(workspaceID, id); ok && a.DurationMS != nil {
				ms += *a.DurationMS
			}
		}
		return ms
	}
	num := func(f string) float64 {
		v, _ := catalog.Field(cp, config, f)
		n, _ := catalog.Number(v)
		return n
	}
	pl.width, pl.height = cp.Output.Width, cp.Output.Height
	if d, err := fixtures.ParseDimensionsSource(cp.Output.DimensionsFrom); err == nil {
		switch d.Kind {
		case fixtures.DimensionsNone:
			pl.width, pl.height = 0, 0
		case fixtures.DimensionsAspectRatio:
			v, _ := catalog.Field(cp, config, d.Fields[0])
			if k, ok := v.(string); ok {
				if sz, ok := cp.Output.Sizes[k]; ok {
					pl.width, pl.height = sz.Width, sz.Height
				}
			}
		case fixtures.DimensionsUpload:
			if w, h, ok := uploadSize(d.Fields[0]); ok {
				pl.width, pl.height = w, h
			}
		case fixtures.DimensionsUploadScaled:
			f := num(d.Fields[1])
			if f <= 0 {
				f = 1
			}
			if w, h, ok := uploadSize(d.Fields[0]); ok {
				pl.width, pl.height = w, h
			}
			pl.width, pl.height = int(math.Round(float64(pl.width)*f)), int(math.Round(float64(pl.height)*f))
		case fixtures.DimensionsFields:
			if w, h := num(d.Fields[0]), num(d.Fields[1]); w > 0 && h > 0 {
				pl.width, pl.height = int(w), int(h)
			}
		}
	}
	if cp.OutputKind == fixtures.OutputVideo || cp.OutputKind == fixtures.OutputAudio {
		secs, _ := catalog.OutputSeconds(cp, config, catalog.Lengths{UploadMS: uploadMS, Approved: res.ApprovedTT})
		pl.durationMS = int64(math.Round(secs * 1000))
		if pl.durationMS <= 0 {
			pl.durationMS = 1000
		}
	}
	var parts []string
	for _, f := range cp.ModeratedFields {
		if v := stringAt(config, f); v != "" {
			parts = append(parts, v)
		}
	}
	pl.text = strings.Join(parts, "\n")
	if pl.text == "" {
		pl.text = cp.Name
	}
	if n := num("ideas"); n > 0 {
		pl.listItems = int(n)
	}
	return pl
}

// acceptLocked holds credits and creates the generations of a submit that
// passed every check (admission.Deps.Submit); pl is what each renders. Called with the
// workspace lock and s.mu held, the same hold as the checks, so the holds
// the spend-caps step allowed are taken without asking again.
func (s *Store) acceptLocked(sub *submission, pl plan, w *ledger.Wallet) (SubmitAnswer, error) {
	p, cp, q, canon := sub.p, sub.cp, sub.a.A.Quote, sub.canon
	voice := sub.a.Voice
	if cp.ID == "tts" {
		voice = p.VoiceID
		if voice == "" {
			voice = stringAt(p.Config, "voiceId")
		}
	}
	sp := p.spender()
	holds := make([]ledger.HoldID, 0, len(q.Generations))
	for _, l := range q.Generations {
		var id ledger.HoldID
		var err error
		if l.Hold > 0 {
			id, err = w.Take(l.Hold, sp)
		}
		if err != nil {
			for _, h := range holds {
				_ = w.Release(h)
			}
			return SubmitAnswer{}, err
		}
		holds = append(holds, id)
	}
	now := s.d.Clock.Now()
	bg := ""
	if len(q.Generations) > 1 {
		bg = s.d.IDs.ID("bg_")
	}
	genIDs := make([]string, len(q.Generations))
	for i, l := range q.Generations {
		renderSeconds := cp.RenderSeconds
		if f, ok := s.d.Faults.TakeIn(faults.SlowRender, p.TestInput, p.WorkspaceID, cp.ID); ok {
			renderSeconds += f.Seconds
		}
		var overrun int64
		if _, ok := s.d.Faults.TakeIn(faults.RenderOverrun, p.TestInput, p.WorkspaceID, cp.ID); ok {
			overrun = l.Hold // the render costs its estimate plus the whole hold again
		}
		g := &generation{
			id: s.d.IDs.ID("gen_"), workspaceID: p.WorkspaceID, keyID: p.KeyID, cp: cp,
			source: p.Source, purpose: p.Purpose, workflowRunID: p.WorkflowRunID, fanOutLabel: l.FanOut,
			batchGroupID: bg, batchIndex: i, canonical: canon, config: p.Config,
			script: stringAt(p.Config, "script"), voiceID: voice, plan: pl,
			testInput: p.TestInput,
			status:    StatusQueued, estimated: l.Credits, overrun: overrun, holdAmount: l.Hold, hold: holds[i], settlement: "open",
			createdAt: now, updatedAt: now, finishAt: now.Add(dur(renderSeconds)), renderSeconds: renderSeconds, done: make(chan struct{}),
		}
		s.seq++
		g.seq = s.seq
		s.touchLocked(g, now)
		s.gens[g.id] = g
		s.order = append(s.order, g)
		genIDs[i] = g.id
		s.scheduleLocked(g)
		if f, ok := s.d.Faults.TakeIn(faults.Cancel, p.TestInput, p.WorkspaceID, cp.ID); ok {
			id, gen := g.id, s.resetGen // the app cancels it after the test input's seconds
			g.timers = append(g.timers, s.d.Clock.AfterFunc(f.Duration(), func() {
				s.fail(id, gen, canceledError, false)
			}))
		}
	}
	if bg != "" {
		s.batches[bg] = &batch{id: bg, workspaceID: p.WorkspaceID, genIDs: genIDs}
	}
	if p.KeyID != "" {
		s.slots[p.KeyID] = &slot{genIDs: genIDs, canonical: canon, acceptedAt: now}
	}
	a := s.submitAnswerLocked(genIDs, false)
	bal := w.Available()
	a.Credits.WalletBalance = &bal
	return a, nil
}

// submitAnswerLocked builds the submit answer of the generations ids (the
// first is the one to wait on). Called with s.mu held; the caller fills
// Credits.WalletBalance.
func (s *Store) submitAnswerLocked(ids []string, replay bool) SubmitAnswer {
	first := s.gens[ids[0]]
	cp := first.cp
	var held int64
	for _, id := range ids {
		held += s.gens[id].holdAmount
	}
	a := SubmitAnswer{
		OK: true, GenerationID: first.id, GenerationIDs: append([]string(nil), ids...), Replay: replay,
		Credits:      Credits{CreditsHeld: held, Settlement: "open"},
		CapabilityID: cp.ID, CapabilityName: cp.Name, OutputKind: string(cp.OutputKind),
		OutputsExpected: expected(first),
	}
	if first.runID != "" {
		r := first.runID
		a.RunID = &r
	}
	if len(ids) > 1 {
		a.BatchGroupID = first.batchGroupID
	}
	a.ChargeSummary = fmt.Sprintf("%d credits are held; the final charge is settled when the job ends and is never more than the hold.", held)
	if len(ids) > 1 {
		a.NextAction = fmt.Sprintf("Call GET /generations/%s/wait until still_running is false, then read GET /batches/%s for all %d generations.", first.id, first.batchGroupID, len(ids))
		a.Summary = fmt.Sprintf("Accepted %d %s generations in batch %s.", len(ids), cp.ID, first.batchGroupID)
	} else {
		a.NextAction = fmt.Sprintf("Call GET /generations/%s/wait until still_running is false.", first.id)
		a.Summary = fmt.Sprintf("Accepted one %s job.", cp.ID)
	}
	if replay {
		a.Summary = "This identical request is already running; its job was returned and nothing new was held."
		a.ChargeSummary = fmt.Sprintf("%d credits are held for the running job; nothing new was held.", held)
	}
	return a
}

// expected is outputs_expected of a generation (a text result counts as one).
func expected(g *generation) int {
	if g.plan.outputs == 0 {
		return 1
	}
	return g.plan.outputs
}

// scheduleLocked arms the timers of a queued generation.
func (s *Store) scheduleLocked(g *generation) {
	r := g.renderSeconds
	gen := s.resetGen
	id := g.id
	g.timers = []clock.Timer{
		s.d.Clock.AfterFunc(dur(r*queuedShare), func() { s.startRendering(id, gen) }),
		s.d.Clock.AfterFunc(dur(r*(queuedShare+renderingShare)), func() { s.step(id, gen, StatusRendering, StatusPostProcessing) }),
		s.d.Clock.AfterFunc(dur(r), func() { s.complete(id, gen) }),
	}
}

func (s *Store) stopTimersLocked(g *generation) {
	for _, t := range g.timers {
		t.Stop()
	}
	g.timers = nil
}

// live returns the generation when it is still part of this reset
// generation. Called with s.mu held.
func (s *Store) liveLocked(id string, gen int64) *generation {
	if gen != s.resetGen {
		return nil
	}
	return s.gens[id]
}

// step moves a generation from one running status to the next.
func (s *Store) step(id string, gen int64, from, to Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.liveLocked(id, gen)
	if g == nil || g.status != from {
		return
	}
	g.status = to
	s.touchLocked(g, s.d.Clock.Now())
}

// startRendering moves queued → rendering, or fails the job when the
// capability always fails or a render_fail fault is queued for it.
func (s *Store) startRendering(id string, gen int64) {
	s.mu.Lock()
	g := s.liveLocked(id, gen)
	if g == nil || g.status != StatusQueued {
		s.mu.Unlock()
		return
	}
	cpID := g.cp.ID
	wsID := g.workspaceID
	testInput := g.testInput
	rf := g.cp.RenderFailure
	g.status = StatusRendering
	g.runID = s.d.IDs.ID("run_")
	s.touchLocked(g, s.d.Clock.Now())
	s.mu.Unlock()
	var fail *GenError
	recoverAfter := time.Duration(-1)
	if rf != nil {
		fail = &GenError{Code: rf.Code, Message: rf.Message}
	} else if f, ok := s.d.Faults.TakeIn(faults.RenderFail, testInput, wsID, cpID); ok {
		fail = &GenError{Code: f.Code, Message: "The render failed (" + f.Code + "); nothing was charged."}
	} else if f, ok := s.d.Faults.TakeIn(faults.Recover, testInput, wsID, cpID); ok {
		// A write-off the operator recovers after the test input's seconds (spec/testmode.yaml).
		fail = &GenError{Code: ErrorCodeProviderError, Message: "The render failed (provider_error); nothing was charged."}
		recoverAfter = f.Duration()
	}
	if fail != nil {
		s.fail(id, gen, *fail, true)
	}
	if recoverAfter >= 0 {
		// Only once the job reads failed: Recover leaves any other status as it is, and a timer
		// (even of 0 s) fires on a goroutine of its own.
		s.d.Clock.AfterFunc(recoverAfter, func() { s.recoverGen(id, gen) })
	}
}

// relock takes the workspace lock of wsID, then s.mu, and finds generation id of reset generation
// gen again: work done without the locks (a render) is applied only while still(g) holds. It
// returns the generation and its workspace with both locks held; or nil with no lock held, found
// false when the workspace is gone, true when the generation is gone or changed meanwhile.
func (s *Store) relock(wsID, id string, gen int64, still func(*generation) bool) (*generation, *workspace.Workspace, bool) {
	ws, ok := s.d.Registry.Get(wsID)
	if !ok {
		return nil, nil, false
	}
	ws.Lock()
	s.mu.Lock()
	g := s.liveLocked(id, gen)
	if g == nil || !still(g) {
		s.mu.Unlock()
		ws.Unlock()
		return nil, nil, true
	}
	return g, ws, true
}

// fail moves a running generation to failed and releases its hold.
// counts says whether the failure counts towards request blocking. It
// reports whether the generation changed.
func (s *Store) fail(id string, gen int64, e GenError, counts bool) bool {
	s.mu.Lock()
	g := s.liveLocked(id, gen)
	if g == nil || !g.status.Running() {
		s.mu.Unlock()
		return false
	}
	wsID := g.workspaceID
	s.mu.Unlock()
	g, ws, _ := s.relock(wsID, id, gen, func(g *generation) bool { return g.status.Running() })
	if g == nil {
		return false
	}
	w := ws.Wallet()
	if g.holdAmount > 0 {
		if err := w.Release(g.hold); err != nil {
			s.d.Logger.Error("jobs: release", "generation", g.id, "err", err)
		}
	}
	now := s.d.Clock.Now()
	zero := int64(0)
	left := w.Available()
	g.status, g.err, g.charged, g.terminal, g.creditsLeft = StatusFailed, &e, &zero, true, &left
	g.completedAt = &now
	s.touchLocked(g, now)
	s.stopTimersLocked(g)
	s.finishLocked(g)
	s.sweep.Ended(g.id, now)
	if counts {
		s.recordOutcomeLocked(g, true)
	}
	notes := s.settledNotesLocked(g, EventGenerationFailed)
	s.mu.Unlock()
	ws.Unlock()
	s.emit(notes)
	return true
}

func (s *Store) finishLocked(g *generation) {
	if !g.closed {
		g.closed = true
		close(g.done)
	}
}

// settledNotesLocked returns the generation event and, when g was the last
// sibling of its batch to finish, batch.settled (once).
func (s *Store) settledNotesLocked(g *generation, event string) []note {
	notes := []note{{workspaceID: g.workspaceID, eventType: event, data: GenerationEventData(s.viewLocked(g)), settledID: g.id}}
	if b, ok := s.batches[g.batchGroupID]; ok && !b.settled {
		for _, id := range b.genIDs {
			if s.gens[id].status.Running() {
				return notes
			}
		}
		b.settled = true
		notes = append(notes, note{workspaceID: g.workspaceID, eventType: EventBatchSettled, data: BatchEventData(s.batchViewLocked(b))})
	}
	return notes
}

// rendered is the made output of one generation, before it is recorded.
type rendered struct {
	outputs []Output
	text    *string
	result  []byte
}

// renderAll renders and stores every output of g's plan (no lock held).
func (s *Store) renderAll(id, workspaceID, capID string, pl plan) (rendered, error) {
	seed := s.renderSeed(id)
	var out rendered
	if pl.kind == render.KindText {
		o, err := render.Render(render.Request{Seed: seed, Kind: render.KindText, Text: pl.text, JSON: pl.format == "json", CapabilityID: capID, Count: pl.listItems})
		if err != nil {
			return out, err
		}
		t := o.Text
		out.text = &t
		if len(o.Result) > 0 {
			out.result = o.Result
		}
		return out, nil
	}
	for i := range pl.outputs {
		req := render.Request{
			Seed: seed, Kind: pl.kind, Width: pl.width, Height: pl.height, DurationMS: pl.durationMS,
			Text: pl.text, Index: i, CapabilityID: capID,
		}
		o, err := render.Render(req)
		if err != nil {
			return out, err
		}
		assetID := s.d.IDs.ID("ast_")
		now := s.d.Clock.Now()
		// Only the request is kept: a download renders the same bytes again (render is
		// deterministic), so a resident output costs its metadata, not its file.
		s.d.Blob.Put(blob.Object{AssetID: assetID, WorkspaceID: workspaceID, ContentType: o.ContentType, FileName: o.FileName,
			Size: int64(len(o.Bytes)), Render: func() ([]byte, error) { r, err := render.Render(req); return r.Bytes, err }, StoredAt: now})
		a := assets.Asset{
			ID: assetID, WorkspaceID: workspaceID, Kind: pl.kind, Source: assets.SourceOutput, FileName: o.FileName,
			ContentType: o.ContentType, SizeBytes: int64(len(o.Bytes)), Usable: true, GenerationID: id, Listed: true, CreatedAt: now,
		}
		out1 := Output{Index: i, Kind: pl.kind, AssetID: assetID, FileName: o.FileName, ContentType: o.ContentType}
		if pl.kind == render.KindImage || pl.kind == render.KindVideo {
			w, h := o.Width, o.Height
			a.Width, a.Height, out1.Width, out1.Height = &w, &h, &w, &h
		}
		if pl.kind == render.KindAudio || pl.kind == render.KindVideo {
			d := o.DurationMS
			a.DurationMS, out1.DurationMS = &d, &d
		}
		s.d.Assets.Put(a)
		out.outputs = append(out.outputs, out1)
	}
	return out, nil
}

func (s *Store) discard(workspaceID string, r rendered) {
	for _, o := range r.outputs {
		s.d.Blob.Delete(o.AssetID)
		s.d.Assets.Delete(workspaceID, o.AssetID)
	}
}

// complete renders the outputs of a post-processed generation, captures its
// price and marks it completed.
func (s *Store) complete(id string, gen int64) {
	s.mu.Lock()
	g := s.liveLocked(id, gen)
	if g == nil || !g.status.Running() {
		s.mu.Unlock()
		return
	}
	wsID, capID, pl := g.workspaceID, g.cp.ID, g.plan
	s.mu.Unlock()
	r, err := s.renderAll(id, wsID, capID, pl)
	if err != nil {
		s.d.Logger.Error("jobs: render", "generation", id, "err", err)
		s.fail(id, gen, GenError{Code: ErrorCodeProviderError, Message: "The render failed; nothing was charged."}, true)
		return
	}
	g, ws, found := s.relock(wsID, id, gen, func(g *generation) bool { return g.status.Running() })
	if g == nil {
		if found {
			s.discard(wsID, r)
		}
		return
	}
	w := ws.Wallet()
	// The real cost is settled at the end and is never more than the hold (interface text, Flow):
	// a render that cost more (render_overrun) is charged the hold, and nothing more leaves.
	charge := min(g.estimated+g.overrun, g.holdAmount)
	if g.holdAmount > 0 {
		if err := w.Capture(g.hold, charge); err != nil {
			s.d.Logger.Error("jobs: capture", "generation", g.id, "err", err)
		}
	}
	s.applyCompletedLocked(g, r, charge, w.Available())
	notes := s.settledNotesLocked(g, EventGenerationCompleted)
	s.mu.Unlock()
	ws.Unlock()
	s.emit(notes)
}

func (s *Store) applyCompletedLocked(g *generation, r rendered, charge, available int64) {
	now := s.d.Clock.Now()
	g.status, g.err = StatusCompleted, nil
	g.outputs, g.outputText, g.result = r.outputs, r.text, r.result
	g.charged, g.settlement, g.terminal, g.creditsLeft = &charge, "captured", true, &available
	g.completedAt = &now
	if g.runID == "" {
		g.runID = s.d.IDs.ID("run_")
	}
	s.touchLocked(g, now)
	s.stopTimersLocked(g)
	s.finishLocked(g)
	s.sweep.Ended(g.id, now)
	s.recordOutcomeLocked(g, false)
}

// canceledError is the error of a generation the app canceled.
var canceledError = GenError{Code: ErrorCodeCanceled, Message: "The job was canceled; nothing was charged."}

// Cancel cancels a running generation as the app does: it reads failed with
// error code canceled, its hold is released and generation.failed is sent.
// It reports the status after the call and whether it changed; unknown ids
// answer not_found.
func (s *Store) Cancel(id string) (Status, bool, error) {
	return s.control(id, func(gen int64) bool {
		return s.fail(id, gen, canceledError, false)
	})
}

// Fail fails a running generation now with code (default provider_error)
// and message; see Cancel for the answer.
func (s *Store) Fail(id, code, message string) (Status, bool, error) {
	if code == "" {
		code = ErrorCodeProviderError
	}
	if message == "" {
		message = "The render failed (" + code + "); nothing was charged."
	}
	return s.control(id, func(gen int64) bool { return s.fail(id, gen, GenError{Code: code, Message: message}, true) })
}

func (s *Store) control(id string, f func(gen int64) bool) (Status, bool, error) {
	s.mu.Lock()
	_, ok := s.gens[id]
	gen := s.resetGen
	s.mu.Unlock()
	if !ok {
		return "", false, apierr.NotFound("No generation " + id + ".")
	}
	changed := f(gen)
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gens[id]
	if !ok {
		return "", false, apierr.NotFound("No generation " + id + ".")
	}
	return g.status, changed, nil
}

// Recover turns a failed generation into a completed one: its outputs are
// rendered and delivered, and it is charged its price, taken from available
// credits (at most what is available; no spend limit applies to a started
// job), then generation.completed is sent. Any other status is left as is
// (changed false).
func (s *Store) Recover(id string) (Status, bool, error) {
	return s.control(id, func(gen int64) bool { return s.recoverGen(id, gen) })
}

// recoverGen is Recover of generation id of reset generation gen: nothing once a reset made gen
// stale (a timer of a recover test input outliving the state it was set for).
func (s *Store) recoverGen(id string, gen int64) bool {
	s.mu.Lock()
	g := s.liveLocked(id, gen)
	if g == nil || g.status != StatusFailed {
		s.mu.Unlock()
		return false
	}
	wsID, capID, pl := g.workspaceID, g.cp.ID, g.plan
	s.mu.Unlock()
	r, err := s.renderAll(id, wsID, capID, pl)
	if err != nil {
		s.d.Logger.Error("jobs: render on recovery", "generation", id, "err", err)
		return false
	}
	g, ws, found := s.relock(wsID, id, gen, func(g *generation) bool { return g.status == StatusFailed })
	if g == nil {
		if found {
			s.discard(wsID, r)
		}
		return false
	}
	w := ws.Wallet()
	charge := min(g.estimated, w.Available())
	if charge > 0 {
		h, err := w.Hold(charge, ledger.Spender{})
		if err == nil {
			err = w.Capture(h, charge)
		}
		if err != nil {
			s.d.Logger.Error("jobs: charge on recovery", "generation", id, "err", err)
			charge = 0
		}
	}
	s.applyCompletedLocked(g, r, charge, w.Available())
	notes := []note{{workspaceID: g.workspaceID, eventType: EventGenerationCompleted, data: GenerationEventData(s.viewLocked(g)), settledID: g.id}}
	s.mu.Unlock()
	ws.Unlock()
	s.emit(notes)
	return true
}
