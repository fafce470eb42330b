package jobs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// View is a snapshot of one generation.
type View struct {
	GenerationID   string
	WorkspaceID    string
	KeyID          string
	CapabilityID   string
	CapabilityName string
	OutputKind     string
	Status         Status
	Source         string
	Purpose        string // "" is null
	WorkflowRunID  string
	FanOutLabel    string
	BatchGroupID   string
	BatchIndex     int // meaningful when BatchGroupID is set
	RunID          string
	// OutputsExpected counts the files to wait for (1 for a text result).
	OutputsExpected  int
	OutputsDelivered int
	Outputs          []Output
	CreditsEstimated int64
	CreditsHeld      int64
	CreditsCharged   *int64 // nil until Terminal
	Settlement       string // open | captured
	Terminal         bool
	CreditsLeft      *int64 // available credits when the charge became final
	Error            *GenError
	OutputText       *string
	Result           json.RawMessage
	CreatedAt        time.Time
	UpdatedAt        time.Time
	CompletedAt      *time.Time
	// Done is closed once the generation first finished.
	Done <-chan struct{}
	// Rev identifies this state of the generation: it changes with every change a read shows
	// and is never reused (Store.Revision).
	Rev uint64
}

// OutputAssetIDs are the asset ids of the delivered outputs.
func (v View) OutputAssetIDs() []string {
	out := make([]string, 0, len(v.Outputs))
	for _, o := range v.Outputs {
		out = append(out, o.AssetID)
	}
	return out
}

func (s *Store) viewLocked(g *generation) View {
	v := View{
		GenerationID: g.id, WorkspaceID: g.workspaceID, KeyID: g.keyID, CapabilityID: g.cp.ID, CapabilityName: g.cp.Name,
		OutputKind: string(g.cp.OutputKind), Status: g.status, Source: g.source, Purpose: g.purpose,
		WorkflowRunID: g.workflowRunID, FanOutLabel: g.fanOutLabel, BatchGroupID: g.batchGroupID, BatchIndex: g.batchIndex,
		RunID: g.runID, OutputsExpected: expected(g), Outputs: slices.Clone(g.outputs),
		CreditsEstimated: g.estimated, CreditsHeld: g.holdAmount, CreditsCharged: g.charged, Settlement: g.settlement,
		Terminal: g.terminal, CreditsLeft: g.creditsLeft, Error: g.err, OutputText: g.outputText, Result: g.result,
		CreatedAt: g.createdAt, UpdatedAt: g.updatedAt, CompletedAt: g.completedAt, Done: g.done, Rev: g.rev,
	}
	if g.status == StatusCompleted {
		v.OutputsDelivered = len(g.outputs)
		if g.plan.outputs == 0 {
			v.OutputsDelivered = 1
		}
	}
	return v
}

// Get returns the generation id of workspaceID; another workspace's id is
// reported absent.
func (s *Store) Get(workspaceID, id string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gens[id]
	if !ok || g.workspaceID != workspaceID {
		return View{}, false
	}
	return s.viewLocked(g), true
}

// BatchView is a snapshot of one batch.
type BatchView struct {
	BatchGroupID string
	WorkspaceID  string
	Generations  []View // in batch_index order
}

// Status is the derived batch status.
func (b BatchView) Status() string {
	done, failed := 0, 0
	for _, g := range b.Generations {
		switch g.Status {
		case StatusCompleted:
			done++
		case StatusFailed:
			failed++
		}
	}
	switch {
	case done+failed < len(b.Generations):
		return "running"
	case failed == 0:
		return "completed"
	case done == 0:
		return "failed"
	}
	return "partial"
}

func (s *Store) batchViewLocked(b *batch) BatchView {
	v := BatchView{BatchGroupID: b.id, WorkspaceID: b.workspaceID}
	for _, id := range b.genIDs {
		v.Generations = append(v.Generations, s.viewLocked(s.gens[id]))
	}
	return v
}

// GetBatch returns the batch id of workspaceID.
func (s *Store) GetBatch(workspaceID, id string) (BatchView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.batches[id]
	if !ok || b.workspaceID != workspaceID {
		return BatchView{}, false
	}
	return s.batchViewLocked(b), true
}

// HeldCredits is the credits object without the wallet balance (batches
// and events).
type HeldCredits struct {
	CreditsHeld    int64  `json:"credits_held"`
	CreditsCharged *int64 `json:"credits_charged"`
	Settlement     string `json:"settlement"`
	Terminal       bool   `json:"terminal"`
}

func (v View) heldCredits() HeldCredits {
	c := HeldCredits{CreditsHeld: v.CreditsHeld, Settlement: v.Settlement, Terminal: v.Terminal}
	if v.Terminal {
		c.CreditsCharged = v.CreditsCharged
	}
	return c
}

// Rolled-up credits of a batch: held summed; charged null until every
// sibling is terminal, then summed.
func (b BatchView) credits() HeldCredits {
	c := HeldCredits{Settlement: "open", Terminal: true}
	var charged int64
	for _, g := range b.Generations {
		c.CreditsHeld += g.CreditsHeld
		if !g.Terminal {
			c.Terminal = false
			continue
		}
		if g.CreditsCharged != nil {
			charged += *g.CreditsCharged
		}
	}
	if c.Terminal {
		c.CreditsCharged = &charged
		c.Settlement = "captured"
	}
	return c
}

// ChargeSummary is the one-sentence charge text of a generation.
func (v View) ChargeSummary() string {
	n := strconv.FormatInt // every read says it: no fmt
	switch {
	case !v.Terminal:
		return n(v.CreditsHeld, 10) + " credits are held; the final charge is settled when the job ends and is never more than the hold."
	case v.Status == StatusFailed:
		return "Nothing was charged: the job failed and its " + n(v.CreditsHeld, 10) + " held credits were released."
	}
	c := int64(0)
	if v.CreditsCharged != nil {
		c = *v.CreditsCharged
	}
	return "Charged " + n(c, 10) + " credits; " + n(max(v.CreditsHeld-c, 0), 10) + " held credits were released."
}

func (b BatchView) chargeSummary() string {
	c := b.credits()
	if c.CreditsCharged == nil {
		return fmt.Sprintf("%d credits are held across %d generations; the charge is final when every one has finished.", c.CreditsHeld, len(b.Generations))
	}
	return fmt.Sprintf("Charged %d credits for the delivered generations; failed ones cost nothing.", *c.CreditsCharged)
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ErrorDoc is a generation error as answered.
type ErrorDoc struct {
	Code    *string `json:"code"`
	Message string  `json:"message"`
}

func errDoc(e *GenError) *ErrorDoc {
	if e == nil {
		return nil
	}
	return &ErrorDoc{Code: strPtr(e.Code), Message: e.Message}
}

// OutputDoc is one output of a generation read.
type OutputDoc struct {
	Index      int     `json:"index"`
	Kind       string  `json:"kind"`
	AssetID    *string `json:"asset_id"`
	URL        *string `json:"url"`
	FileName   *string `json:"file_name"`
	Width      *int    `json:"width"`
	Height     *int    `json:"height"`
	DurationMS *int64  `json:"duration_ms"`
}

// GenerationDoc is the generation object of a read or wait answer.
type GenerationDoc struct {
	GenerationID     string          `json:"generation_id"`
	CapabilityID     *string         `json:"capability_id"`
	Status           Status          `json:"status"`
	Source           string          `json:"source"`
	Purpose          *string         `json:"purpose"`
	WorkflowRunID    *string         `json:"workflow_run_id"`
	FanOutLabel      *string         `json:"fan_out_label"`
	OutputKind       *string         `json:"output_kind"`
	BatchGroupID     *string         `json:"batch_group_id"`
	BatchIndex       *int            `json:"batch_index"`
	Outputs          []OutputDoc     `json:"outputs"`
	OutputsExpected  int             `json:"outputs_expected"`
	OutputsDelivered int             `json:"outputs_delivered"`
	Credits          Credits         `json:"credits"`
	ChargeSummary    string          `json:"charge_summary"`
	CreditsEstimated int64           `json:"credits_estimated"`
	CreditsLeft      *int64          `json:"credits_left,omitempty"`
	Error            *ErrorDoc       `json:"error"`
	HasResult        bool            `json:"has_result"`
	OutputText       *string         `json:"output_text,omitempty"`
	Result           json.RawMessage `json:"result,omitempty"`
	CreatedAt        string          `json:"created_at"`
	UpdatedAt        string          `json:"updated_at"`
	CompletedAt      *string         `json:"completed_at"`
}

// outputDocs renders outputs; links are signed afresh (lasting LinkTTL)
// only when the generation is completed and settled.
func (s *Store) outputDocs(v View) ([]OutputDoc, bool) {
	linked := v.Status == StatusCompleted && v.Settlement == "captured"
	out := make([]OutputDoc, 0, len(v.Outputs))
	for _, o := range v.Outputs {
		d := OutputDoc{Index: o.Index, Kind: o.Kind, AssetID: strPtr(o.AssetID), FileName: strPtr(o.FileName),
			Width: o.Width, Height: o.Height, DurationMS: o.DurationMS}
		if linked && o.AssetID != "" {
			u, _ := s.d.Blob.DownloadURL(o.AssetID, o.FileName, LinkTTL)
			d.URL = &u
		}
		out = append(out, d)
	}
	return out, linked && len(out) > 0
}

// Doc renders v as the generation object of a read, with fresh links and
// the wallet balance (the workspace's available credits now). hasLink
// reports whether some output carries a link.
func (s *Store) Doc(v View, walletBalance int64) (doc GenerationDoc, hasLink bool) {
	outs, hasLink := s.outputDocs(v)
	doc = GenerationDoc{
		GenerationID: v.GenerationID, CapabilityID: strPtr(v.CapabilityID), Status: v.Status, Source: v.Source,
		Purpose: strPtr(v.Purpose), WorkflowRunID: strPtr(v.WorkflowRunID), FanOutLabel: strPtr(v.FanOutLabel),
		OutputKind: strPtr(v.OutputKind), Outputs: outs, OutputsExpected: v.OutputsExpected,
		OutputsDelivered: v.OutputsDelivered, ChargeSummary: v.ChargeSummary(), CreditsEstimated: v.CreditsEstimated,
		Error: errDoc(v.Error), HasResult: v.OutputText != nil, OutputText: v.OutputText, Result: v.Result,
		CreatedAt: clock.Format(v.CreatedAt), UpdatedAt: clock.Format(v.UpdatedAt), CompletedAt: clock.FormatPtr(v.CompletedAt),
	}
	h := v.heldCredits()
	bal := walletBalance
	doc.Credits = Credits{CreditsHeld: h.CreditsHeld, CreditsCharged: h.CreditsCharged, Settlement: h.Settlement, Terminal: h.Terminal, WalletBalance: &bal}
	if v.Terminal {
		doc.CreditsLeft = &bal
	}
	if v.BatchGroupID != "" {
		doc.BatchGroupID = strPtr(v.BatchGroupID)
		i := v.BatchIndex
		doc.BatchIndex = &i
	}
	return doc, hasLink
}

// BatchGenerationDoc is one sibling of a batch read.
type BatchGenerationDoc struct {
	GenerationID     string      `json:"generation_id"`
	BatchIndex       int         `json:"batch_index"`
	Status           Status      `json:"status"`
	FanOutLabel      *string     `json:"fan_out_label"`
	Outputs          []OutputDoc `json:"outputs"`
	OutputsExpected  int         `json:"outputs_expected"`
	OutputsDelivered int         `json:"outputs_delivered"`
	Credits          HeldCredits `json:"credits"`
	Error            *ErrorDoc   `json:"error"`
	CreatedAt        string      `json:"created_at"`
	CompletedAt      *string     `json:"completed_at"`
}

// BatchDoc is the answer of GET /batches/{id}.
type BatchDoc struct {
	OK                        bool                 `json:"ok"`
	BatchGroupID              string               `json:"batch_group_id"`
	Status                    string               `json:"status"`
	Variants                  int                  `json:"variants"`
	VariantsFinished          int                  `json:"variants_finished"`
	OutputsDelivered          int                  `json:"outputs_delivered"`
	Credits                   HeldCredits          `json:"credits"`
	ChargeSummary             string               `json:"charge_summary"`
	Generations               []BatchGenerationDoc `json:"generations"`
	NextAction                string               `json:"next_action"`
	OutputURLsExpireInSeconds *int                 `json:"output_urls_expire_in_seconds,omitempty"`
}

// BatchDoc renders a batch read with fresh links.
func (s *Store) BatchDoc(b BatchView) BatchDoc {
	d := BatchDoc{OK: true, BatchGroupID: b.BatchGroupID, Status: b.Status(), Variants: len(b.Generations),
		Credits: b.credits(), ChargeSummary: b.chargeSummary(), Generations: []BatchGenerationDoc{}}
	anyLink := false
	for _, g := range b.Generations {
		if !g.Status.Running() {
			d.VariantsFinished++
		}
		d.OutputsDelivered += g.OutputsDelivered
		outs, has := s.outputDocs(g)
		anyLink = anyLink || has
		d.Generations = append(d.Generations, BatchGenerationDoc{
			GenerationID: g.GenerationID, BatchIndex: g.BatchIndex, Status: g.Status, FanOutLabel: strPtr(g.FanOutLabel),
			Outputs: outs, OutputsExpected: g.OutputsExpected, OutputsDelivered: g.OutputsDelivered, Credits: g.heldCredits(),
			Error: errDoc(g.Error), CreatedAt: clock.Format(g.CreatedAt), CompletedAt: clock.FormatPtr(g.CompletedAt),
		})
	}
	if anyLink {
		n := int(LinkTTL / time.Second)
		d.OutputURLsExpireInSeconds = &n
	}
	if d.Status == "running" {
		first := b.Generations[0].GenerationID
		for _, g := range b.Generations {
			if g.Status.Running() {
				first = g.GenerationID
				break
			}
		}
		d.NextAction = "Call GET /generations/" + first + "/wait until still_running is false, then read this batch again."
	} else {
		d.NextAction = "Every generation has finished; read each one for fresh links and keep the asset ids."
	}
	return d
}

// GenerationEventData builds the data of generation.completed and
// generation.failed (openapi GenerationEventData): no link, no text result,
// no wallet balance, with the disclosure sentence.
func GenerationEventData(v View) map[string]any {
	m := generationEventCore(v)
	m["disclosure"] = Disclosure
	return m
}

func generationEventCore(v View) map[string]any {
	outs := []map[string]any{}
	if v.Status == StatusCompleted {
		for _, o := range v.Outputs {
			outs = append(outs, map[string]any{"index": o.Index, "asset_id": o.AssetID, "kind": o.Kind})
		}
	}
	var bg, bi any
	if v.BatchGroupID != "" {
		bg, bi = v.BatchGroupID, v.BatchIndex
	}
	status := string(v.Status)
	return map[string]any{
		"generation_id": v.GenerationID, "capability_id": strPtr(v.CapabilityID), "status": status,
		"output_kind": strPtr(v.OutputKind), "outputs": outs, "outputs_expected": v.OutputsExpected,
		"outputs_delivered": v.OutputsDelivered, "credits": v.heldCredits(), "charge_summary": v.ChargeSummary(),
		"batch_group_id": bg, "batch_index": bi, "workflow_run_id": strPtr(v.WorkflowRunID), "purpose": strPtr(v.Purpose),
		"error": errDoc(v.Error), "created_at": clock.Format(v.CreatedAt), "completed_at": clock.FormatPtr(v.CompletedAt),
	}
}

// BatchEventData builds the data of batch.settled (openapi BatchEventData).
func BatchEventData(b BatchView) map[string]any {
	gens := make([]map[string]any, 0, len(b.Generations))
	delivered, finished := 0, 0
	for _, g := range b.Generations {
		gens = append(gens, generationEventCore(g))
		delivered += g.OutputsDelivered
		if !g.Status.Running() {
			finished++
		}
	}
	return map[string]any{
		"batch_group_id": b.BatchGroupID, "status": b.Status(), "variants": len(b.Generations),
		"variants_finished": finished, "outputs_delivered": delivered, "credits": b.credits(),
		"charge_summary": b.chargeSummary(), "generations": gens, "disclosure": Disclosure,
	}
}
