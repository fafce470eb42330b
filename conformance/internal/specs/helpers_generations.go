package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"math"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
	"github.com/onsi/gomega/types"

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Submitting, reading and checking generations and batches, and the spenders that pay for them.

// The forms of generation, batch and asset ids, from the one id table (package judge).
var (
	genIDPattern   = judge.IDPattern("gen_")
	bgIDPattern    = judge.IDPattern("bg_")
	assetIDPattern = judge.IDPattern("ast_")
)

var runningStatuses = []string{"queued", "rendering", "post_processing"}

// statusRank orders the generation statuses along the one forward path.
var statusRank = map[string]int{"queued": 0, "rendering": 1, "post_processing": 2, "completed": 3}

// spender is a client whose workspace holds only what the spec does: a fresh workspace (and key)
// when the run has control, else the main client. Balance arithmetic is exact only in the first
// case; specs that need it declare Control.
type spender struct {
	c     *framework.Client
	ws    *framework.TestWorkspace // nil without control
	keyID string
}

func newSpender(ctx context.Context, s *framework.Spec) spender {
	GinkgoHelper()
	if s.HasControl() {
		ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
		c, k := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
		return spender{c: c, ws: ws, keyID: k.ID}
	}
	return spender{c: s.Client()}
}

// newKey makes another read+generate key in the spender's workspace (it needs control).
func (sp spender) newKey(ctx context.Context, o framework.KeyOptions) (*framework.Client, framework.Key) {
	GinkgoHelper()
	Expect(sp.ws).NotTo(BeNil(), "the spec makes keys without declaring Needs(Control)")
	if len(o.Scopes) == 0 {
		o.Scopes = []string{"read", "generate"}
	}
	return sp.ws.NewKey(ctx, o)
}

// siblingKey is a second read+generate key of the spender's workspace: with control a new one,
// else the profile's sibling key of the run's key set (the spec needs framework.SiblingKey), a key
// of the main key's workspace, which newSpender then spends with.
func (sp spender) siblingKey(ctx context.Context, s *framework.Spec) *framework.Client {
	GinkgoHelper()
	if sp.ws != nil {
		c, _ := sp.newKey(ctx, framework.KeyOptions{})
		return c
	}
	return s.RoleKey(framework.SiblingKey)
}

// liftCaps raises the spender's per-generation and daily caps and its balance (through control),
// so that a long recording is judged on its length, not on the spend caps that come first.
func liftCaps(ctx context.Context, s *framework.Spec, sp spender) {
	GinkgoHelper()
	s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 1000000, "daily_credits": 1000000})
	s.SetCredits(ctx, sp.ws.ID, 1000000)
}

// estimateOf estimates capID with config and the resource fields of extra (variants become
// config.count), and returns the answer and max_credits_needed.
func estimateOf(ctx context.Context, c *framework.Client, capID string, config map[string]any, extra map[string]any) (*framework.Response, int64) {
	GinkgoHelper()
	cfg := catalogue.Clone(config)
	body := map[string]any{"capability_id": capID, "config": cfg}
	for k, v := range extra {
		switch k {
		case "variants":
			cfg["count"] = v
		case "actor_id", "actor_image_asset_id", "voice_id", "approved_voice_generation_id":
			body[k] = v
		}
	}
	r := c.Post(ctx, "/estimates", body).ExpectOK(http.StatusOK)
	return r, r.Int("max_credits_needed")
}

// needOr estimates a request and returns max_credits_needed, or fallback when the estimate does
// not answer 200 (a service may refuse an out-of-bounds request at estimate time too).
func needOr(ctx context.Context, c *framework.Client, capID string, cfg, extra map[string]any, fallback int64) int64 {
	GinkgoHelper()
	body := map[string]any{"capability_id": capID, "config": cfg}
	for k, v := range extra {
		body[k] = v
	}
	r := c.Post(ctx, "/estimates", body)
	if r.Status != http.StatusOK {
		return fallback
	}
	return r.Int("max_credits_needed")
}

// job is an accepted submit.
type job struct {
	r     *framework.Response // the submit answer
	id    string
	ids   []string
	need  int64   // the estimate's max_credits_needed, sent as max_credits
	price float64 // the estimate's credits (a number)
	capID string
	body  map[string]any // the submit body as sent
}

// submitBody is a submit body with max_credits.
func submitBody(capID string, config map[string]any, maxCredits int64, extra map[string]any) map[string]any {
	body := map[string]any{"capability_id": capID, "config": config, "max_credits": maxCredits}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// submit estimates, reserves the hold from the run's budget, submits with max_credits equal to
// max_credits_needed and requires 201.
func submit(ctx context.Context, s *framework.Spec, c *framework.Client, capID string, config map[string]any, extra map[string]any) job {
	GinkgoHelper()
	skipRealTimeVideo(ctx, s, c, capID)
	est, need := estimateOf(ctx, c, capID, config, extra)
	price := priceOf(est)
	s.Spend(int(need))
	body := submitBody(capID, config, need, extra)
	r := c.Post(ctx, "/generations", body).ExpectOK(http.StatusCreated)
	j := job{r: r, id: r.String("generation_id"), need: need, price: price, capID: capID, body: body}
	for i, v := range r.Array("generation_ids") {
		id, isStr := v.(string)
		Expect(isStr).To(BeTrue(), fmt.Sprintf("generation_ids[%d] is a string", i)+r.Describe())
		j.ids = append(j.ids, id)
	}
	if s.HasControl() {
		// Leave no job running for the next spec: a running job would take a fault queued for
		// its capability by another spec.
		DeferCleanup(func(ctx SpecContext) {
			for _, id := range j.ids {
				s.Finish(ctx, c, id)
			}
		})
	}
	return j
}

// skipRealTimeVideo skips the spec as slow when it would render a video (a capability whose
// catalogue row has output_kind video) without control and without --slow: then the service runs at
// real time, a video job renders for a minute or more, and the run waits for every job a spec
// starts before the next spec begins (the shared key holds one job at a time). With control the
// spec moves the service clock instead, so nothing is skipped.
func skipRealTimeVideo(ctx context.Context, s *framework.Spec, c *framework.Client, capID string) {
	GinkgoHelper()
	if s.HasControl() || s.Slow() {
		return
	}
	for _, row := range catalogue.Rows(ctx, c) {
		if row["capability_id"] == capID && row["output_kind"] == "video" {
			framework.SkipFor(framework.Disabled(framework.Slow, "renders a video ("+capID+") at real time, a minute or more per job, which a run without the control API must wait out; pass --slow to run it, or give the control API to move the clock"))
		}
	}
}

// ttsBody is a valid tts submit body with max_credits (tts's config read through c).
func ttsBody(ctx context.Context, c *framework.Client, maxCredits int64) map[string]any {
	GinkgoHelper()
	return submitBody("tts", catalogue.TTSConfig(ctx, c), maxCredits, nil)
}

// naming is cfg with reference_images naming the upload id.
func naming(cfg map[string]any, id string) map[string]any {
	out := catalogue.Clone(cfg)
	out["reference_images"] = []any{map[string]any{"assetId": id, "alias": "image1"}}
	return out
}

// rotating hands out clients of the main workspace, a fresh key every 15 submits, so that a spec
// sending many refused submits stays inside each key's agent_submit bucket (20 a minute).
type rotating struct {
	s *framework.Spec
	c *framework.Client
	n int
}

func (r *rotating) client() *framework.Client {
	GinkgoHelper()
	if r.c == nil || r.n >= 15 {
		r.c, r.n = r.s.FreshClient(), 0
	}
	r.n++
	return r.c
}

// snapshot is what a refused submit must leave unchanged: the balance and the newest generations.
// ended lists the newest generations that had ended when it was taken: a job of the spec's own
// that ends between two snapshots moves the balance without the refusal's doing.
type snapshot struct {
	available, held int64
	newest          []string
	ended           []string
}

func takeSnapshot(ctx context.Context, c *framework.Client) snapshot {
	GinkgoHelper()
	var sn snapshot
	if _, declared := c.ShapeIf("balance.available"); declared {
		b := readBalance(ctx, c)
		sn.available, sn.held = b.available, b.held
	}
	rows := paging.Get(ctx, c, "/generations", paging.Open).Rows
	sn.newest = paging.IDs(rows, "generation_id")
	for i, row := range rows {
		if st, _ := row["status"].(string); st == "completed" || st == "failed" {
			sn.ended = append(sn.ended, sn.newest[i])
		}
	}
	return sn
}

// balanceOf reads the available and held credits from the balance answer at the places the
// target declares (shapes balance.available and balance.held; the spec skips naming the one that
// is not declared: "Credit balance record: not shown").
func balanceOf(ctx context.Context, c *framework.Client) (available, held int64) {
	GinkgoHelper()
	b := readBalance(ctx, c)
	return b.available, b.heldOf(c)
}

// availableOf reads the available credits from the balance answer (shape balance.available).
func availableOf(ctx context.Context, c *framework.Client) int64 {
	GinkgoHelper()
	return readBalance(ctx, c).available
}

// setRenderLimit sets a workspace's render-concurrency threshold through control, skipping the
// spec when the control API does not offer it.
func setRenderLimit(ctx context.Context, s *framework.Spec, workspaceID string, n int) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPut, "/workspaces/"+workspaceID+"/render-limit", map[string]any{"max_concurrent_renders": n})
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		s.Lacks("the control API does not offer PUT /workspaces/{id}/render-limit")
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control PUT /workspaces/{id}/render-limit"+r.Describe())
}

// readGen reads a generation and returns the answer.
func readGen(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	r := c.Get(ctx, "/generations/"+id).ExpectOK(http.StatusOK)
	Expect(r.String("generation.generation_id")).To(Equal(id), "the read answers the id asked for, exactly"+r.Describe())
	expectGenerationFixed(r, "generation")
	return r
}

// checkGeneration checks the fields every generation object carries, at path ("generation").
func checkGeneration(r *framework.Response, path string) {
	GinkgoHelper()
	g := answer.ObjectAt(r, path)
	what := path
	Expect(answer.String(r, g, "generation_id", what)).To(MatchRegexp(genIDPattern), r.Describe())
	answer.NullableString(r, g, "capability_id", what)
	status := answer.String(r, g, "status", what)
	Expect(status).To(answer.OneOf("queued", "rendering", "post_processing", "completed", "failed"), what+".status"+r.Describe())
	// The Generation table lists the fields a read carries; the reference's source, purpose,
	// workflow_run_id, fan_out_label (shown on fan-out jobs), output_kind and updated_at are
	// checked when sent.
	if _, has := g["source"]; has {
		Expect(answer.String(r, g, "source", what)).To(answer.OneOf("ui", "api", "mcp", "cli", "workflow", "agent", "preset"), r.Describe())
	}
	for _, k := range []string{"purpose", "workflow_run_id", "fan_out_label", "output_kind"} {
		if _, has := g[k]; has {
			answer.NullableString(r, g, k, what)
		}
	}
	if bg, null := answer.NullableString(r, g, "batch_group_id", what); !null {
		Expect(bg).To(MatchRegexp(bgIDPattern), r.Describe())
	}
	Expect(g).To(HaveKey("batch_index"), what+" has batch_index (null when not a sibling)"+r.Describe())
	Expect(g).To(HaveKey("outputs_expected"), r.Describe())
	Expect(g).To(HaveKey("outputs_delivered"), r.Describe())
	Expect(g).To(HaveKey("error"), what+" has error (null unless failed)"+r.Describe())
	Expect(g).To(HaveKey("completed_at"), what+" has completed_at (null while running)"+r.Describe())
	answer.Int(r, g, "credits_estimated", what)
	Expect(answer.String(r, g, "charge_summary", what)).NotTo(BeEmpty(), r.Describe())
	answer.String(r, g, "created_at", what)
	if _, has := g["updated_at"]; has {
		answer.String(r, g, "updated_at", what)
	}
	_, isBool := g["has_result"].(bool)
	Expect(isBool).To(BeTrue(), what+".has_result is a boolean"+r.Describe())
	outs, isArr := g["outputs"].([]any)
	Expect(isArr).To(BeTrue(), what+".outputs is an array"+r.Describe())
	for i, o := range outs {
		out := answer.AsObject(r, o, fmt.Sprintf("%s.outputs[%d]", what, i))
		ow := fmt.Sprintf("%s.outputs[%d]", what, i)
		answer.Int(r, out, "index", ow)
		Expect(answer.String(r, out, "kind", ow)).To(answer.OneOf("image", "video", "audio"), r.Describe())
		for _, k := range []string{"url", "file_name"} {
			answer.NullableString(r, out, k, ow)
		}
		if _, has := out["asset_id"]; has {
			answer.NullableString(r, out, "asset_id", ow)
		}
		for _, k := range []string{"width", "height"} {
			Expect(out).To(HaveKey(k), ow+" has "+k+r.Describe())
		}
	}
	credits := answer.AsObject(r, g["credits"], what+".credits")
	answer.Int(r, credits, "credits_held", what+".credits")
	answer.Int(r, credits, "wallet_balance", what+".credits")
	// "values seen: open, captured": the set is not closed.
	Expect(answer.String(r, credits, "settlement", what+".credits")).NotTo(BeEmpty(), r.Describe())
	terminal, isBool := credits["terminal"].(bool)
	Expect(isBool).To(BeTrue(), r.Describe())
	charged, present := credits["credits_charged"]
	Expect(present).To(BeTrue(), what+".credits has credits_charged (null until terminal)"+r.Describe())
	running := status != "completed" && status != "failed"
	if running {
		Expect(charged).To(BeNil(), "credits_charged is null while the job runs (null means unknown, never zero)"+r.Describe())
		Expect(terminal).To(BeFalse(), "credits.terminal is false while the job runs"+r.Describe())
		Expect(credits["settlement"]).To(Equal("open"), "settlement is open while the job runs"+r.Describe())
		Expect(g["completed_at"]).To(BeNil(), "completed_at is null while the job runs"+r.Describe())
		Expect(g["error"]).To(BeNil(), "error is null unless failed"+r.Describe())
		Expect(g).NotTo(HaveKey("credits_left"), "credits_left appears once the charge is final"+r.Describe())
		for i, o := range outs {
			Expect(o.(map[string]any)["url"]).To(BeNil(), fmt.Sprintf("outputs[%d].url is null until the generation is completed", i)+r.Describe())
		}
	}
	if !terminal {
		Expect(charged).To(BeNil(), "credits_charged is null until terminal is true"+r.Describe())
	}
	if status == "completed" {
		Expect(g["error"]).To(BeNil(), "error is null unless failed"+r.Describe())
	}
	created := timeField(r, g, "created_at", what)
	if _, has := g["updated_at"]; has {
		Expect(timeField(r, g, "updated_at", what)).NotTo(BeTemporally("<", created), what+".updated_at is not before created_at"+r.Describe())
	}
	if !running {
		// GEN-022: completed_at is set once the job completes or fails (a failed job too).
		at, _ := g["completed_at"].(string)
		Expect(at).NotTo(BeEmpty(), what+".completed_at is set once the job is "+status+r.Describe())
		Expect(timeField(r, g, "completed_at", what)).NotTo(BeTemporally("<", created), what+".completed_at is not before created_at"+r.Describe())
	}
}

// timeField reads the RFC 3339 time at key of obj (part of r's answer, named what).
func timeField(r *framework.Response, obj map[string]any, key, what string) time.Time {
	GinkgoHelper()
	t, err := answer.ParseStamp(answer.String(r, obj, key, what))
	Expect(err).NotTo(HaveOccurred(), what+"."+key+" is an RFC 3339 time"+r.Describe())
	return t
}

// checkCompleted checks a completed generation read: every output delivered with a link and an
// asset id, the charge captured and final, credits_left equal to wallet_balance.
func checkCompleted(r *framework.Response, path string) {
	GinkgoHelper()
	checkGeneration(r, path)
	Expect(r.String(path+".status")).To(Equal("completed"), r.Describe())
	expected := r.Int(path + ".outputs_expected")
	Expect(r.Int(path+".outputs_delivered")).To(Equal(expected), "a completed generation delivered every expected output"+r.Describe())
	// output_kind is not in the Generation table: a text answer is known by has_result.
	kind, hasKind := r.Lookup(path + ".output_kind")
	text := kind == "text" || (!hasKind && r.Bool(path+".has_result"))
	if !text {
		Expect(r.Array(path+".outputs")).To(HaveLen(int(expected)), r.Describe())
	}
	for i := range r.Array(path + ".outputs") {
		p := fmt.Sprintf("%s.outputs.%d", path, i)
		Expect(r.String(p+".url")).NotTo(BeEmpty(), r.Describe())
		if v, has := r.Lookup(p + ".asset_id"); has && v != nil {
			Expect(r.String(p+".asset_id")).To(MatchRegexp(assetIDPattern), r.Describe())
		}
	}
	Expect(r.Bool(path+".credits.terminal")).To(BeTrue(), r.Describe())
	Expect(r.String(path+".credits.settlement")).To(Equal("captured"), "a completed, charged job's settlement is captured"+r.Describe())
	charged := r.Int(path + ".credits.credits_charged")
	Expect(charged).To(BeNumerically("<=", r.Int(path+".credits.credits_held")), "the charge is never more than the hold"+r.Describe())
	Expect(r.String(path+".completed_at")).NotTo(BeEmpty(), r.Describe())
	Expect(r.Int(path+".credits_left")).To(Equal(r.Int(path+".credits.wallet_balance")), "credits_left and wallet_balance both mean available credits"+r.Describe())
	checkExpiry(r, "generation")
}

// checkBatch checks a batch answer's fields and its roll-ups against its siblings' reads; it
// returns the siblings' reads.
func checkBatch(ctx context.Context, s *framework.Spec, c *framework.Client, b *framework.Response, siblings []string) []*framework.Response {
	GinkgoHelper()
	Expect(b.String("batch_group_id")).To(MatchRegexp(bgIDPattern), b.Describe())
	Expect(b.Int("variants")).To(Equal(int64(len(siblings))), "variants is the number of siblings"+b.Describe())
	Expect(b.Doc()).NotTo(HaveKey("wallet_balance"), b.Describe())
	Expect(answer.ObjectAt(b, "credits")).NotTo(HaveKey("wallet_balance"), "batch credits carry no wallet balance"+b.Describe())
	Expect(b.String("charge_summary")).NotTo(BeEmpty(), b.Describe())
	Expect(b.String("next_action")).NotTo(BeEmpty(), b.Describe())
	gens := b.Array("generations")
	Expect(gens).To(HaveLen(len(siblings)), b.Describe())
	byID := map[string]map[string]any{}
	for i, g := range gens {
		m := answer.AsObject(b, g, fmt.Sprintf("generations[%d]", i))
		id := answer.String(b, m, "generation_id", "batch generation")
		answer.Int(b, m, "batch_index", "batch generation")
		answer.String(b, m, "status", "batch generation")
		byID[id] = m
	}
	var reads []*framework.Response
	var held, delivered, charged int64
	finished, completed, failed, allTerminal := 0, 0, 0, true
	linked := false
	var base int64 // the first sibling's batch_index
	for i, id := range siblings {
		Expect(byID).To(HaveKey(id), "the batch lists every sibling"+b.Describe())
		r := readGen(ctx, c, id)
		reads = append(reads, r)
		Expect(r.String("generation.batch_group_id")).To(Equal(b.String("batch_group_id")), r.Describe())
		expectPosition(s, r, r.Int("generation.batch_index"), &base, i)
		Expect(answer.Int(b, byID[id], "batch_index", "batch generation")).To(Equal(r.Int("generation.batch_index")), "the batch and the read give the sibling one batch_index"+b.Describe())
		held += r.Int("generation.credits.credits_held")
		if n, ok := framework.AsInt(r.Field("generation.outputs_delivered")); ok {
			delivered += n
		}
		switch r.String("generation.status") {
		case "completed":
			finished++
			completed++
		case "failed":
			finished++
			failed++
		}
		if r.Bool("generation.credits.terminal") {
			charged += r.Int("generation.credits.credits_charged")
		} else {
			allTerminal = false
		}
		linked = linked || anyLink(r, "generation")
	}
	Expect(b.Int("variants_finished")).To(Equal(int64(finished)), "variants_finished counts siblings completed or failed"+b.Describe())
	Expect(b.Int("outputs_delivered")).To(Equal(delivered), "outputs_delivered is the siblings' sum"+b.Describe())
	Expect(b.Int("credits.credits_held")).To(Equal(held), "credits_held is the siblings' sum"+b.Describe())
	want := "running"
	switch {
	case finished < len(siblings):
	case completed == len(siblings):
		want = "completed"
	case failed == len(siblings):
		want = "failed"
	default:
		want = "partial"
	}
	Expect(b.String("status")).To(Equal(want), "the batch status is derived from its siblings"+b.Describe())
	if allTerminal && finished == len(siblings) {
		Expect(b.Bool("credits.terminal")).To(BeTrue(), b.Describe())
		Expect(b.Int("credits.credits_charged")).To(Equal(charged), "the batch charge is the siblings' sum"+b.Describe())
	} else {
		Expect(b.Field("credits.credits_charged")).To(BeNil(), "the batch credits_charged stays null until every sibling is done"+b.Describe())
		Expect(b.Bool("credits.terminal")).To(BeFalse(), b.Describe())
	}
	v, has := b.Lookup("output_urls_expire_in_seconds")
	if linked {
		Expect(has).To(BeTrue(), "output_urls_expire_in_seconds is present when a sibling has a link"+b.Describe())
		n, _ := framework.AsInt(v)
		Expect(n).To(Equal(int64(600)), b.Describe())
	} else {
		Expect(has).To(BeFalse(), "no sibling has a link yet"+b.Describe())
	}
	return reads
}

// videoBatch submits the cheapest config of a video model with variants 2 and returns the job.
func videoBatch(ctx context.Context, s *framework.Spec, c *framework.Client) job {
	GinkgoHelper()
	d := catalogue.VideoModel(ctx, c)
	j := submit(ctx, s, c, d.String("capability_id"), catalogue.CheapConfig(d), map[string]any{"variants": 2})
	Expect(j.ids).To(HaveLen(2), "variants 2 on a video model answers two generation_ids"+j.r.Describe())
	return j
}

// finishAll drives every sibling to its end.
func finishAll(ctx context.Context, s *framework.Spec, c *framework.Client, ids []string) {
	GinkgoHelper()
	for _, id := range ids {
		s.Finish(ctx, c, id)
	}
}

// ceilPad is ceil(p x 1.1): the hold of one take priced p (a price may be fractional; the tiny
// slack absorbs binary rounding of p x 1.1).
func ceilPad(p float64) int64 { return int64(math.Ceil(p*1.1 - 1e-6)) }

// padsOf are the holds the text allows for takes whose padded values sum to perTake and whose
// prices sum to total: every take is padded ("hold pad on every take"), but where the rounding up
// happens is not said, so each take rounded alone (the reference's perTake) or the padded total
// rounded once, ceil(total x 1.1). Under --strict only the reference's.
func padsOf(s *framework.Spec, perTake int64, total float64) []int64 {
	if s.Strict() {
		return []int64{perTake}
	}
	return []int64{perTake, ceilPad(total)}
}

// priceOf is an estimate's credits, the price: a number (Estimate answer), which may be
// fractional, though charges and holds are whole numbers.
func priceOf(r *framework.Response) float64 {
	GinkgoHelper()
	p, ok := asNumber(r.Field("credits"))
	Expect(ok).To(BeTrue(), "estimate credits is a number"+r.Describe())
	Expect(p).To(BeNumerically(">=", 0), "estimate credits is not negative"+r.Describe())
	return p
}

// asNumber reads a JSON number.
func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	i, ok := framework.AsInt(v)
	return float64(i), ok
}

// chargesOf matches the whole credits charged for k takes priced p each: k x p when p is whole,
// else anything from k x floor(p) to k x ceil(p).
func chargesOf(p float64, k int) types.GomegaMatcher {
	return And(BeNumerically(">=", float64(k)*math.Floor(p+1e-6)), BeNumerically("<=", float64(k)*math.Ceil(p-1e-6)))
}

// chargeOf matches a whole number of credits charged at price p: p itself when it is whole, else
// a whole number next to it (the text does not say how a fractional price rounds to a charge).
func chargeOf(p float64) types.GomegaMatcher {
	return SatisfyAny(BeNumerically("==", math.Floor(p+1e-6)), BeNumerically("==", math.Ceil(p-1e-6)))
}

// waitEndSlack is how late, in seconds, a wait may answer after its job ended and still count as
// answering when it ended: age_seconds and waited_seconds are whole seconds.
const waitEndSlack = 2.0

// blockingWait is the least service time a wait on a running job blocks (about 18 s; 15 to 20
// accepted), and longestWait the most (the reference table's 20 s, plus one second for the step in
// which the run moves a manual clock).
const (
	blockingWait = 15 * time.Second
	longestWait  = contract.WaitCeiling + time.Second
)

// slowWaitRender is the extra render time (seconds) forced on the job whose waits the wait specs
// watch: longer than three waits of at most 20 s each, so that the job still runs through them,
// and short enough that the run waits little for it to end afterwards.
const slowWaitRender = 70

// serviceSpan is the service time span lasted: s.During reads the target's clock with control and
// the wall clock without, which the target's clock runs at its time scale.
func serviceSpan(s *framework.Spec, span framework.Span) time.Duration {
	if s.HasControl() || s.ClockScale() <= 0 {
		return span.Length()
	}
	return time.Duration(float64(span.Length()) * s.ClockScale())
}

// letPass lets d of the target's service time pass on a running clock without control (wall time
// divided by its time scale): for a spec that reads a state again later, not for one that waits out
// a window (WaitOut). The spec's context ends it early.
func letPass(ctx context.Context, s *framework.Spec, d time.Duration) {
	scale := s.ClockScale()
	if scale <= 0 {
		scale = 1
	}
	t := time.NewTimer(time.Duration(float64(d) / scale))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// waitEndsWithJob is GEN-027's "a wait answers as soon as the job ends" without control: an image
// job at its own render time, waited on from a few seconds after the submit until a wait answers
// still_running false. That wait began before the job ended (else the spec cannot tell and skips)
// and must answer when it ended: the answer's age_seconds is at most completed_at - created_at
// plus waitEndSlack (the rounding of whole seconds), where a wait that
// answers only at its own 15 to 20 s is later by however much of that was left when the job ended
// (about 6 s for a 15 s render waited on from 3 s); where that is within the slack, it skips.
func waitEndsWithJob(ctx context.Context, s *framework.Spec, sp spender) {
	GinkgoHelper()
	d := catalogue.ImageModel(ctx, sp.c)
	j := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
	letPass(ctx, s, 3*time.Second)
	var w *framework.Response
	for i := 0; ; i++ {
		w = sp.c.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
		if !w.Bool("still_running") {
			break
		}
		Expect(i).To(BeNumerically("<", 400), "generation "+j.id+" still running after 400 waits"+w.Describe())
	}
	s.Step("GEN-027", "GEN-030")
	ended := answer.Time(w, "generation.completed_at").Sub(answer.Time(w, "generation.created_at")).Seconds()
	age, waited := w.Int("age_seconds"), w.Int("waited_seconds")
	if float64(age-waited) >= ended-1 {
		framework.SkipFor(framework.Undecidable(fmt.Sprintf("the job ended (%.1f s after its creation) before or as the last wait began (%d s after it); a wait released by the job's end cannot be observed", ended, age-waited) + w.Describe()))
	}
	began := float64(age - waited)
	if began+blockingWait.Seconds() <= ended+waitEndSlack {
		framework.SkipFor(framework.Undecidable(fmt.Sprintf("the last wait began %.0f s after the job's creation and the job ended %.1f s after it: "+
			"a wait released only at its own 15 s would answer within %.0f s of the end as well", began, ended, waitEndSlack) + w.Describe()))
	}
	Expect(float64(age)).To(BeNumerically("<=", ended+waitEndSlack), fmt.Sprintf("the wait answered %d s after the job's creation, but the job ended %.1f s after it: a wait answers as soon as the job ends, not at its own 18 s", age, ended)+w.Describe())
}

// atOnce makes call, one request that must be answered without waiting on the service clock (a wait
// on a finished job or an unknown id), and returns its answer. Time is the target's: on a manual clock
// the answer must come while the clock stands still (a call still open after 10 s of wall time is
// blocked on the clock: the clock is moved past a wait's 20 s to release it and the spec fails); on a
// running clock the call must take less service time than a blocking wait's 15 s.
func atOnce(ctx context.Context, s *framework.Spec, what string, call func(ctx context.Context) *framework.Response) *framework.Response {
	GinkgoHelper()
	if !s.ManualClock() {
		var r *framework.Response
		span := s.During(ctx, func() { r = call(ctx) })
		Expect(span.Length()).To(BeNumerically("<", blockingWait), fmt.Sprintf("%s took %s of the target's time; it answers at once", what, span.Length())+r.Describe())
		return r
	}
	done := make(chan *framework.Response, 1)
	go func() {
		defer GinkgoRecover()
		var r *framework.Response
		defer func() { done <- r }() // also when call fails the spec
		r = call(ctx)
	}()
	var r *framework.Response
	select {
	case r = <-done:
		Expect(r).NotTo(BeNil(), what+" failed")
		return r
	case <-time.After(10 * time.Second):
	}
	s.Advance(ctx, longestWait.Seconds())
	msg := what + " did not answer while the service clock stood still; it answered only once the clock moved"
	if r = <-done; r != nil {
		msg += r.Describe()
	}
	Fail(msg)
	return nil
}

// lacksUnlessRunning ends the spec when the target did not show a state the spec needs, a state
// the reference mock shows on a manual clock: there it is Spec.Lacks (the reference mock fails);
// on a running clock the state may have passed between two reads, so the spec is skipped as
// undecidable.
func lacksUnlessRunning(s *framework.Spec, format string, args ...any) {
	GinkgoHelper()
	if s.ManualClock() {
		s.Lacks(format, args...)
	}
	framework.SkipFor(framework.Undecidable(fmt.Sprintf(format, args...) + "; on a running clock the state can pass between two reads (run the target with a manual clock)"))
}

// runningNow reports whether generation id still runs (queued, rendering or post_processing).
func runningNow(ctx context.Context, c *framework.Client, id string) bool {
	GinkgoHelper()
	return slices.Contains(runningStatuses, readGen(ctx, c, id).String("generation.status"))
}

// expectPosition checks index, the batch_index of the i-th sibling in the order of generation_ids
// (read r), is its position: the first sibling's (*base, set at i 0) plus i ("batch_index: the
// sibling's position"). That positions count from 0 is the reference's (VAR-010), held with
// --strict.
func expectPosition(s *framework.Spec, r *framework.Response, index int64, base *int64, i int) {
	GinkgoHelper()
	if i == 0 {
		*base = index
		s.ReferenceOnly("VAR-010", "batch_index counts from 0", func() {
			Expect(index).To(BeZero(), "batch_index is the sibling's position, from 0"+r.Describe())
		})
		return
	}
	Expect(index).To(Equal(*base+int64(i)), fmt.Sprintf("batch_index is the sibling's position: sibling %d of generation_ids reads the first sibling's index plus %d", i, i)+r.Describe())
}

// stillRunning reads generation id and reports whether it is still queued, rendering or
// post-processing.
func stillRunning(ctx context.Context, c *framework.Client, id string) bool {
	GinkgoHelper()
	st := readGen(ctx, c, id).String("generation.status")
	return st == "queued" || st == "rendering" || st == "post_processing"
}

// lowBalanceHold is the profile's low-balance key with a tts config, the hold its estimate names and
// the key's available credits, read where the text names them; it skips, naming the setting, when
// the key's workspace holds enough for that hold.
func lowBalanceHold(ctx context.Context, s *framework.Spec) (c *framework.Client, cfg map[string]any, need, avail int64) {
	GinkgoHelper()
	c = s.RoleKey(framework.LowBalanceKey)
	cfg = catalogue.TTSConfig(ctx, c)
	_, need = estimateOf(ctx, c, "tts", cfg, nil)
	avail = availableOf(ctx, c)
	if need <= avail {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: the workspace of low_balance_key holds %d credits, "+
			"enough for a tts hold of %d: declare a key of a workspace holding less", avail, need)))
	}
	return c, cfg, need, avail
}

// stagedModel is the model whose job a spec follows through its states: a video model, whose render
// control's clock moves through, or without the control API an image model, which renders in
// seconds on the target's own clock.
func stagedModel(ctx context.Context, s *framework.Spec, c *framework.Client) *framework.Response {
	GinkgoHelper()
	if s.HasControl() {
		return catalogue.VideoModel(ctx, c)
	}
	return catalogue.ImageModel(ctx, c)
}
