package specs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// Shared helpers of the generation specs (submit, batches, talking actor, ledger, links) and the
// specs of the generation read, wait, state machine and list.

const (
	genIDPattern   = `^gen_[0-9a-f]{32}$`
	bgIDPattern    = `^bg_[0-9a-f]{32}$`
	assetIDPattern = `^ast_[0-9a-f]{32}$`
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

// findDetail reads the detail of the first available capability whose list row pred accepts,
// skipping the spec when there is none.
func findDetail(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		return c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
	}
	Skip("unsupported: the target lists no available " + what)
	return nil
}

func maxVariants(row map[string]any) int64 {
	n, _ := framework.AsInt(row["max_variants"])
	return n
}

// cheapest reads the details of the available capabilities whose list row pred accepts and
// returns the one whose cheapConfig holds the least (configs naming uploads are passed over),
// skipping the spec when there is none.
func cheapest(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	var best *framework.Response
	var bestNeed int64
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
		cfg := cheapConfig(d)
		if namesUpload(cfg) {
			continue
		}
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
		if r.Status != http.StatusOK {
			continue
		}
		if need := r.Int("max_credits_needed"); best == nil || need < bestNeed {
			best, bestNeed = d, need
		}
	}
	if best == nil {
		Skip("unsupported: the target lists no available " + what + " that can be priced without an upload")
	}
	return best
}

// imageModel is the cheapest available image model that makes several takes in one generation.
func imageModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return cheapest(ctx, c, "image model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "image" && row["output_kind"] == "image" && maxVariants(row) > 1
	})
}

// videoModel is the cheapest available video model that fans variants out.
func videoModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return cheapest(ctx, c, "video model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "video" && row["output_kind"] == "video" && maxVariants(row) > 1
	})
}

// textCapability is an available capability whose output is text.
func textCapability(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return findDetail(ctx, c, "text capability", func(row map[string]any) bool { return row["output_kind"] == "text" })
}

// clone deep-copies a JSON object.
func clone(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// cheapConfig is the capability's example_config with a duration set to its schema minimum (the
// cheapest take of a time-priced model), and a fresh marker in its prompt or script so that two
// specs never send identical requests.
func cheapConfig(d *framework.Response) map[string]any {
	GinkgoHelper()
	cfg := clone(objectAt(d, "example_config"))
	props, _ := objectAt(d, "config_schema")["properties"].(map[string]any)
	if p, ok := props["duration"].(map[string]any); ok && p["type"] == "integer" {
		if m, ok := framework.AsInt(p["minimum"]); ok {
			cfg["duration"] = m
		}
	}
	for _, k := range []string{"prompt", "script"} {
		if v, ok := cfg[k].(string); ok {
			cfg[k] = v + " Take " + randomHex(6) + "."
		}
	}
	return cfg
}

// ttsConfig is a tts config speaking a short, unique script.
func ttsConfig() map[string]any {
	return map[string]any{"script": "Fresh coffee, every morning. Batch " + randomHex(6) + "."}
}

// firstVoice returns the id of the first listed voice.
func firstVoice(ctx context.Context, c *framework.Client) string {
	GinkgoHelper()
	p := getPage(ctx, c, "/voices", "voices")
	if len(p.rows) == 0 {
		Skip("unsupported: the target lists no voice")
	}
	return p.rows[0]["voice_id"].(string)
}

// estimateOf estimates capID with config and the resource fields of extra (variants become
// config.count), and returns the answer and max_credits_needed.
func estimateOf(ctx context.Context, c *framework.Client, capID string, config map[string]any, extra map[string]any) (*framework.Response, int64) {
	GinkgoHelper()
	cfg := clone(config)
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

// job is an accepted submit.
type job struct {
	r     *framework.Response // the submit answer
	id    string
	ids   []string
	need  int64 // the estimate's max_credits_needed, sent as max_credits
	price int64 // the estimate's credits
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
	est, need := estimateOf(ctx, c, capID, config, extra)
	price, ok := framework.AsInt(est.Field("credits"))
	Expect(ok).To(BeTrue(), "estimate credits is a whole number"+est.Describe())
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

// balanceOf reads available and held credits.
func balanceOf(ctx context.Context, c *framework.Client) (available, held int64) {
	GinkgoHelper()
	r := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	return r.Int("available_credits"), r.Int("held_credits")
}

// readGen reads a generation and returns the answer.
func readGen(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	r := c.Get(ctx, "/generations/"+id).ExpectOK(http.StatusOK)
	Expect(r.String("generation.generation_id")).To(Equal(id), "the read answers the id asked for, exactly"+r.Describe())
	return r
}

// checkGeneration checks the fields every generation object carries, at path ("generation").
func checkGeneration(r *framework.Response, path string) {
	GinkgoHelper()
	g := objectAt(r, path)
	what := path
	Expect(stringField(r, g, "generation_id", what)).To(MatchRegexp(genIDPattern), r.Describe())
	nullableString(r, g, "capability_id", what)
	status := stringField(r, g, "status", what)
	Expect(status).To(oneOf("queued", "rendering", "post_processing", "completed", "failed"), what+".status"+r.Describe())
	Expect(stringField(r, g, "source", what)).To(oneOf("ui", "api", "mcp", "cli", "workflow", "agent", "preset"), r.Describe())
	for _, k := range []string{"purpose", "workflow_run_id", "fan_out_label", "output_kind", "batch_group_id"} {
		nullableString(r, g, k, what)
	}
	if bg, null := nullableString(r, g, "batch_group_id", what); !null {
		Expect(bg).To(MatchRegexp(bgIDPattern), r.Describe())
	}
	Expect(g).To(HaveKey("batch_index"), what+" has batch_index (null when not a sibling)"+r.Describe())
	Expect(g).To(HaveKey("outputs_expected"), r.Describe())
	Expect(g).To(HaveKey("outputs_delivered"), r.Describe())
	Expect(g).To(HaveKey("error"), what+" has error (null unless failed)"+r.Describe())
	Expect(g).To(HaveKey("completed_at"), what+" has completed_at (null while running)"+r.Describe())
	intField(r, g, "credits_estimated", what)
	Expect(stringField(r, g, "charge_summary", what)).NotTo(BeEmpty(), r.Describe())
	stringField(r, g, "created_at", what)
	stringField(r, g, "updated_at", what)
	_, isBool := g["has_result"].(bool)
	Expect(isBool).To(BeTrue(), what+".has_result is a boolean"+r.Describe())
	outs, isArr := g["outputs"].([]any)
	Expect(isArr).To(BeTrue(), what+".outputs is an array"+r.Describe())
	for i, o := range outs {
		out := asObject(r, o, fmt.Sprintf("%s.outputs[%d]", what, i))
		ow := fmt.Sprintf("%s.outputs[%d]", what, i)
		intField(r, out, "index", ow)
		Expect(stringField(r, out, "kind", ow)).To(oneOf("image", "video", "audio"), r.Describe())
		for _, k := range []string{"url", "file_name", "asset_id"} {
			nullableString(r, out, k, ow)
		}
		for _, k := range []string{"width", "height", "duration_ms"} {
			Expect(out).To(HaveKey(k), ow+" has "+k+r.Describe())
		}
	}
	credits := asObject(r, g["credits"], what+".credits")
	intField(r, credits, "credits_held", what+".credits")
	intField(r, credits, "wallet_balance", what+".credits")
	Expect(stringField(r, credits, "settlement", what+".credits")).To(oneOf("open", "captured"), r.Describe())
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
}

// anyLink reports whether some output of the generation at path has a url.
func anyLink(r *framework.Response, path string) bool {
	GinkgoHelper()
	for _, o := range r.Array(path + ".outputs") {
		if m, ok := o.(map[string]any); ok && m["url"] != nil {
			return true
		}
	}
	return false
}

// checkExpiry checks output_urls_expire_in_seconds: 600 when some output of the generation at path
// has a link, absent otherwise.
func checkExpiry(r *framework.Response, path string) {
	GinkgoHelper()
	v, present := r.Lookup("output_urls_expire_in_seconds")
	if anyLink(r, path) {
		Expect(present).To(BeTrue(), "output_urls_expire_in_seconds is present when an output has a link"+r.Describe())
		n, _ := framework.AsInt(v)
		Expect(n).To(Equal(int64(600)), "output links last 600 seconds"+r.Describe())
	} else {
		Expect(present).To(BeFalse(), "output_urls_expire_in_seconds is absent when no output has a link"+r.Describe())
	}
}

// checkCompleted checks a completed generation read: every output delivered with a link and an
// asset id, the charge captured and final, credits_left equal to wallet_balance.
func checkCompleted(r *framework.Response, path string) {
	GinkgoHelper()
	checkGeneration(r, path)
	Expect(r.String(path+".status")).To(Equal("completed"), r.Describe())
	expected := r.Int(path + ".outputs_expected")
	Expect(r.Int(path+".outputs_delivered")).To(Equal(expected), "a completed generation delivered every expected output"+r.Describe())
	if r.String(path+".output_kind") != "text" {
		Expect(r.Array(path+".outputs")).To(HaveLen(int(expected)), r.Describe())
	}
	for i := range r.Array(path + ".outputs") {
		p := fmt.Sprintf("%s.outputs.%d", path, i)
		Expect(r.String(p+".url")).NotTo(BeEmpty(), r.Describe())
		Expect(r.String(p+".asset_id")).To(MatchRegexp(assetIDPattern), r.Describe())
	}
	Expect(r.Bool(path+".credits.terminal")).To(BeTrue(), r.Describe())
	Expect(r.String(path+".credits.settlement")).To(Equal("captured"), "a completed, charged job's settlement is captured"+r.Describe())
	charged := r.Int(path + ".credits.credits_charged")
	Expect(charged).To(BeNumerically("<=", r.Int(path+".credits.credits_held")), "the charge is never more than the hold"+r.Describe())
	Expect(r.String(path+".completed_at")).NotTo(BeEmpty(), r.Describe())
	Expect(r.Int(path+".credits_left")).To(Equal(r.Int(path+".credits.wallet_balance")), "credits_left and wallet_balance both mean available credits"+r.Describe())
	checkExpiry(r, "generation")
}

// outputLinks returns the output urls of the generation at path.
func outputLinks(r *framework.Response, path string) []string {
	GinkgoHelper()
	var out []string
	for i := range r.Array(path + ".outputs") {
		out = append(out, r.String(fmt.Sprintf("%s.outputs.%d.url", path, i)))
	}
	return out
}

// expectPNG checks a fetched file is a PNG of the given size (0: any).
func expectPNG(r *framework.Response, width, height int64) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), "the file link answers 200"+r.Describe())
	Expect(r.Header.Get("Content-Type")).To(HavePrefix("image/"), "an image output's link answers an image type"+r.Describe())
	img, err := png.Decode(bytes.NewReader(r.Body))
	Expect(err).NotTo(HaveOccurred(), "the image output decodes as PNG")
	if width > 0 {
		Expect(int64(img.Bounds().Dx())).To(Equal(width), "the PNG is as wide as the output says")
		Expect(int64(img.Bounds().Dy())).To(Equal(height), "the PNG is as high as the output says")
	}
}

func generationSpecs(f *framework.Framework) {
	Describe("the documented flow", Ordered, func() {
		// The flow runs once, in BeforeAll (so that a label filter selecting any one step still runs
		// it); each step checks one part of it.
		var sp spender
		var d, est, after, done *framework.Response
		var j job
		var before int64
		f.BeforeAll([]framework.Need{framework.Spends}, func(ctx context.Context, s *framework.Spec) {
			sp = newSpender(ctx, s)
			d = imageModel(ctx, sp.c)
			config := cheapConfig(d)
			est, _ = estimateOf(ctx, sp.c, d.String("capability_id"), config, nil)
			before, _ = balanceOf(ctx, sp.c)
			j = submit(ctx, s, sp.c, d.String("capability_id"), config, nil)
			after = readGen(ctx, sp.c, j.id)
			done = s.Finish(ctx, sp.c, j.id)
		})
		ran := func() {
			GinkgoHelper()
			Expect(done).NotTo(BeNil(), "the flow did not run to its end")
		}

		f.Rule("CAP-019", "CAP-021", "EST-001").Needs(framework.Spends).It("1. reads the image model's strict config schema and estimates its config", func(ctx context.Context, s *framework.Spec) {
			ran()
			Expect(objectAt(d, "config_schema")["additionalProperties"]).To(Equal(false), d.Describe())
			price, ok := framework.AsInt(est.Field("credits"))
			Expect(ok).To(BeTrue(), est.Describe())
			Expect(est.Int("max_credits_needed")).To(BeNumerically(">=", price), est.Describe())
		})

		f.Rule("CORE-019", "CORE-009", "SUBMIT-001", "SUBMIT-002", "SUBMIT-003", "SUBMIT-004", "SUBMIT-005", "SUBMIT-006", "SUBMIT-009", "VAR-001", "ID-002", "ID-011", "CORE-010", "LEDGER-004").Needs(framework.Spends).It("2. submits with max_credits equal to max_credits_needed and is answered 201 at acceptance", func(ctx context.Context, s *framework.Spec) {
			ran()
			r := j.r
			Expect(j.id).To(MatchRegexp(genIDPattern), r.Describe())
			Expect(r.Header.Get("Location")).To(Or(Equal(s.APIPath("/generations/"+j.id)), HaveSuffix("://"+hostOf(r)+s.APIPath("/generations/"+j.id))),
				"Location names the generation's path"+r.Describe())
			Expect(r.Header.Values("Cache-Control")).To(ContainElement(ContainSubstring("no-store")), r.Describe())
			Expect(j.ids).To(Equal([]string{j.id}), "without variants generation_ids is [generation_id]"+r.Describe())
			Expect(r.Doc()).NotTo(HaveKey("batch_group_id"), "no batch_group_id without variants or fan-out"+r.Describe())
			Expect(r.Bool("replay")).To(BeFalse(), r.Describe())
			Expect(r.Doc()).To(HaveKey("run_id"), "run_id is always present"+r.Describe())
			if run, _ := r.Lookup("run_id"); run != nil {
				Expect(run).To(BeAssignableToTypeOf(""), "run_id is null or an opaque string"+r.Describe())
			}
			Expect(r.Field("credits.credits_charged")).To(BeNil(), "credits_charged is null at submit"+r.Describe())
			Expect(r.String("credits.settlement")).To(Equal("open"), r.Describe())
			Expect(r.Bool("credits.terminal")).To(BeFalse(), "the answer comes at acceptance, before the work is done"+r.Describe())
			Expect(r.Int("credits.credits_held")).To(Equal(j.need), "the hold is the estimate's max_credits_needed"+r.Describe())
			Expect(j.need).To(Equal(ceilPad(j.price)), "one take holds ceil(price x 1.1)")
			r.Int("credits.wallet_balance")
			Expect(r.String("capability_id")).To(Equal(d.String("capability_id")), r.Describe())
			Expect(r.String("capability_name")).NotTo(BeEmpty(), r.Describe())
			Expect(r.String("output_kind")).To(Equal(d.String("output_kind")), r.Describe())
			Expect(r.Int("outputs_expected")).To(BeNumerically(">=", 1), r.Describe())
			for _, k := range []string{"charge_summary", "next_action", "summary"} {
				Expect(r.String(k)).NotTo(BeEmpty(), r.Describe())
			}
			Expect(after.String("generation.status")).To(oneOf(runningStatuses...), "a just-accepted job is still running"+after.Describe())
			checkGeneration(after, "generation")
		})

		f.Rule("GEN-005", "GEN-028", "GEN-032", "GEN-035", "GEN-013", "GEN-014", "GEN-003", "GEN-042").Needs(framework.Spends).It("3. waits until still_running is false", func(ctx context.Context, s *framework.Spec) {
			ran()
			checkGeneration(done, "generation")
			Expect(done.String("generation.status")).To(Equal("completed"), done.Describe())
			for _, k := range []string{"waited_seconds", "age_seconds", "retry_after_seconds"} {
				Expect(done.Int(k)).To(BeNumerically(">=", 0), done.Describe())
			}
			Expect(done.String("next_action")).NotTo(BeEmpty(), done.Describe())
			checkExpiry(done, "generation")
			Expect(done.Int("generation.outputs_expected")).To(Equal(j.r.Int("outputs_expected")), "outputs_expected is the submit's"+done.Describe())
			Expect(done.Int("generation.credits_estimated")).To(Equal(j.price), "credits_estimated is the estimate's credits"+done.Describe())
			Expect(done.String("generation.source")).To(Equal("api"), "a REST submit has source api"+done.Describe())
			Expect(done.String("generation.output_kind")).To(Equal(d.String("output_kind")), done.Describe())
		})

		f.Rule("GEN-001", "GEN-002", "GEN-007", "GEN-011", "GEN-015", "GEN-016", "GEN-017", "GEN-018", "GEN-019", "GEN-022", "GEN-024", "CORE-020", "LEDGER-002", "ID-014", "CORE-005").Needs(framework.Spends).It("4. reads the completed generation: outputs stored, charge captured, never above the hold", func(ctx context.Context, s *framework.Spec) {
			ran()
			r := readGen(ctx, sp.c, j.id)
			checkCompleted(r, "generation")
			avail, held := balanceOf(ctx, sp.c)
			Expect(r.Int("generation.credits.wallet_balance")).To(Equal(avail), "wallet_balance is available_credits"+r.Describe())
			if sp.ws != nil {
				Expect(held).To(BeZero(), "the hold is gone once the charge is captured")
				Expect(before-avail).To(Equal(r.Int("generation.credits.credits_charged")), "the balance moved by exactly credits_charged"+r.Describe())
			}
		})

		f.Rule("LINK-001", "LINK-002", "LINK-007", "ID-004").Needs(framework.Spends).It("5. downloads the file through its link without a key and keeps the asset id", func(ctx context.Context, s *framework.Spec) {
			ran()
			r := readGen(ctx, sp.c, j.id)
			for i := range r.Array("generation.outputs") {
				p := fmt.Sprintf("generation.outputs.%d", i)
				file := s.FetchLink(ctx, r.String(p+".url"))
				w, _ := framework.AsInt(r.Field(p + ".width"))
				h, _ := framework.AsInt(r.Field(p + ".height"))
				expectPNG(file, w, h)
				asset := sp.c.Get(ctx, "/assets/"+r.String(p+".asset_id")).ExpectOK(http.StatusOK)
				Expect(asset.String("asset.asset_id")).To(Equal(r.String(p+".asset_id")), asset.Describe())
			}
		})
	})

	Describe("generation states", func() {
		f.Rule("GEN-004", "GEN-005", "GEN-009", "GEN-012", "GEN-015", "GEN-016", "GEN-022", "GEN-008", "CORE-009").Needs(framework.Spends, framework.Control).It("moves forward through queued, rendering, post_processing to completed as the clock advances, and stays completed", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			last := -1
			seen := []string{}
			for i := 0; i < 2000; i++ {
				r := readGen(ctx, sp.c, j.id)
				checkGeneration(r, "generation")
				st := r.String("generation.status")
				Expect(st).To(oneOf("queued", "rendering", "post_processing", "completed"), "no failure was asked for"+r.Describe())
				Expect(statusRank[st]).To(BeNumerically(">=", last), fmt.Sprintf("status stepped back to %s after %v", st, seen)+r.Describe())
				if len(seen) == 0 || seen[len(seen)-1] != st {
					seen = append(seen, st)
				}
				last = statusRank[st]
				if st == "completed" {
					// A wait on a running job blocks on the service clock; on a finished one it answers at once.
					w := sp.c.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
					Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
					break
				}
				s.Advance(ctx, 2)
			}
			Expect(seen[len(seen)-1]).To(Equal("completed"), fmt.Sprintf("statuses seen: %v", seen))
			Expect(seen[0]).To(oneOf(runningStatuses...), "the job is running right after the submit answered")
			final := readGen(ctx, sp.c, j.id)
			s.Advance(ctx, 3600)
			later := readGen(ctx, sp.c, j.id)
			Expect(later.String("generation.status")).To(Equal("completed"), "a finished status does not change"+later.Describe())
			Expect(later.Int("generation.credits.credits_charged")).To(Equal(final.Int("generation.credits.credits_charged")), later.Describe())
		})

		f.Rule("GEN-010", "GEN-017", "CORE-021", "LEDGER-003", "GEN-012", "GEN-005").Needs(framework.Spends, framework.Control).It("a render that fails (control fault render_fail) reads failed with error {code, message} and costs nothing", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			before, heldBefore := balanceOf(ctx, sp.c)
			s.QueueFault(ctx, "render_fail", d.String("capability_id"), 1, "")
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			avail, held := balanceOf(ctx, sp.c)
			Expect(before - avail).To(Equal(j.need))
			Expect(held - heldBefore).To(Equal(j.need))
			w := s.Finish(ctx, sp.c, j.id)
			checkGeneration(w, "generation")
			Expect(w.String("generation.status")).To(Equal("failed"), w.Describe())
			Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
			Expect(w.String("generation.error.message")).NotTo(BeEmpty(), "a failed generation carries error.message"+w.Describe())
			Expect(w.Field("generation.error.code")).To(Equal("provider_error"), "the fault's default code"+w.Describe())
			Expect(w.Bool("generation.credits.terminal")).To(BeTrue(), w.Describe())
			Expect(w.Int("generation.credits.credits_charged")).To(BeZero(), "a failed job is charged 0"+w.Describe())
			for _, u := range w.Array("generation.outputs") {
				Expect(u.(map[string]any)["url"]).To(BeNil(), "a failed generation has no link"+w.Describe())
			}
			avail, held = balanceOf(ctx, sp.c)
			Expect(avail).To(Equal(before), "the hold is released in full")
			Expect(held).To(Equal(heldBefore))
		})

		f.Rule("GEN-008", "GEN-007", "LEDGER-002", "CORE-020").Needs(framework.Spends, framework.Control).It("a recovered write-off moves failed to completed and is charged at most its hold", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			before, _ := balanceOf(ctx, sp.c)
			s.QueueFault(ctx, "render_fail", d.String("capability_id"), 1, "")
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			Expect(s.Finish(ctx, sp.c, j.id).String("generation.status")).To(Equal("failed"))
			s.JobHook(ctx, j.id, "recover", nil)
			w := s.Finish(ctx, sp.c, j.id)
			r := readGen(ctx, sp.c, j.id)
			Expect(w.String("generation.status")).To(Equal("completed"), "recovery turns failed into completed"+w.Describe())
			checkCompleted(r, "generation")
			charged := r.Int("generation.credits.credits_charged")
			Expect(charged).To(BeNumerically(">", 0), "a recovered render is charged"+r.Describe())
			Expect(charged).To(BeNumerically("<=", j.need), r.Describe())
			avail, held := balanceOf(ctx, sp.c)
			Expect(before - avail).To(Equal(charged))
			Expect(held).To(BeZero())
		})

		f.Rule("GEN-006", "GEN-004", "LEDGER-003").Needs(framework.Spends, framework.Control).It("a canceled job (control cancel) reads failed, never canceled, and its hold is released", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			before, _ := balanceOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			s.JobHook(ctx, j.id, "cancel", nil)
			r := readGen(ctx, sp.c, j.id)
			checkGeneration(r, "generation")
			Expect(r.String("generation.status")).To(Equal("failed"), "a canceled job reads failed"+r.Describe())
			Expect(r.Int("generation.credits.credits_charged")).To(BeZero(), r.Describe())
			avail, held := balanceOf(ctx, sp.c)
			Expect(avail).To(Equal(before))
			Expect(held).To(BeZero())
			list := getPage(ctx, sp.c, "/generations", "generations", framework.Query("status", "failed"))
			Expect(ids(list.rows, "generation_id")).To(ContainElement(j.id), "status=failed also matches canceled jobs"+list.r.Describe())
		})

		f.Rule("GEN-020", "GEN-005").Needs(framework.Spends).It("a text capability answers in output_text with has_result true", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := textCapability(ctx, sp.c)
			cfg := objectAt(d, "example_config")
			if namesUpload(cfg) {
				Skip("unsupported: the text capability's example_config needs an upload")
			}
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			w := s.Finish(ctx, sp.c, j.id)
			checkGeneration(w, "generation")
			Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			Expect(w.Bool("generation.has_result")).To(BeTrue(), w.Describe())
			Expect(w.String("generation.output_text")).NotTo(BeEmpty(), w.Describe())
		})
	})

	Describe("generation wait", func() {
		f.Rule("GEN-027", "GEN-029", "GEN-030", "GEN-031", "GEN-034", "GEN-028", "GEN-005").Needs(framework.Spends, framework.Control).It("a wait on a running job answers 200 after about 18 s with still_running true; ?timeout does not shorten it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := videoModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			for _, opts := range [][]framework.CallOption{nil, {framework.Query("timeout", "1")}} {
				w, advanced := s.WaitAdvancing(ctx, sp.c, j.id, 1, 30, opts...)
				w.ExpectOK(http.StatusOK)
				if !w.Bool("still_running") {
					Skip("unsupported: the job finished within one wait; a wait timeout cannot be observed")
				}
				checkGeneration(w, "generation")
				Expect(w.String("generation.status")).To(oneOf(runningStatuses...), w.Describe())
				waited := w.Int("waited_seconds")
				Expect(waited).To(And(BeNumerically(">=", 15), BeNumerically("<=", 20)), "a wait blocks about 18 s (15 to 20 accepted)"+w.Describe())
				Expect(advanced).To(BeNumerically(">=", 14), "the wait answered before 15 s of service time passed"+w.Describe())
				Expect(w.Int("retry_after_seconds")).To(BeZero(), "retry_after_seconds is 0 while running: call again at once"+w.Describe())
				Expect(w.Int("age_seconds")).To(BeNumerically(">=", waited), "age counts from creation, before the wait began"+w.Describe())
				Expect(w.String("next_action")).NotTo(BeEmpty(), w.Describe())
				Expect(w.Doc()).NotTo(HaveKey("output_urls_expire_in_seconds"), "no link while running"+w.Describe())
			}
		})

		f.Rule("GEN-032", "GEN-035", "GEN-034").Needs(framework.Spends).It("a wait on a finished job answers at once with still_running false", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			s.Finish(ctx, sp.c, j.id)
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			start := time.Now()
			w := sp.c.Get(wctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
			Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second), "a finished job's wait answers at once")
			Expect(w.Bool("still_running")).To(BeFalse(), w.Describe())
			Expect(w.Int("waited_seconds")).To(BeNumerically("<=", 2), w.Describe())
			checkExpiry(w, "generation")
			Expect(w.Int("output_urls_expire_in_seconds")).To(Equal(int64(600)), w.Describe())
		})

		f.Rule(rules("GEN-033", "RATE-001", "ERR-036")...).Needs(framework.Spends, framework.Control).It("each wait call costs one read from the agent_read bucket", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := imageModel(ctx, sp.c)
			j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
			s.Finish(ctx, sp.c, j.id)
			small, _ := sp.newKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, Buckets: map[string]int{"agent_read": 3}})
			for i := 0; i < 3; i++ {
				small.Get(ctx, "/generations/"+j.id+"/wait").ExpectOK(http.StatusOK)
			}
			expectBucketRefusal(small.Get(ctx, "/generations/"+j.id+"/wait"))
		})

		f.Rule(rules("GEN-025", "GEN-036", "ERR-029")...).It("a read or wait of an unknown generation id answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			id := "gen_" + randomHex(32)
			c.Get(ctx, "/generations/"+id).ExpectError(http.StatusNotFound, "not_found")
			c.Get(ctx, "/generations/"+id+"/wait").ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("GEN-026", "GEN-036", "ID-016", "GEN-053", "ERR-029")...).Needs(framework.Spends, framework.SecondWorkspace).It("another workspace's generation answers 404 not_found on read and wait and is not listed", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			j := submit(ctx, s, c, "tts", ttsConfig(), map[string]any{"voice_id": firstVoice(ctx, c)})
			other := s.OtherClient()
			other.Get(ctx, "/generations/"+j.id).ExpectError(http.StatusNotFound, "not_found")
			other.Get(ctx, "/generations/"+j.id+"/wait").ExpectError(http.StatusNotFound, "not_found")
			rows, _ := walk(ctx, other, "/generations", "generations", 50, 40)
			Expect(ids(rows, "generation_id")).NotTo(ContainElement(j.id), "only this workspace's generations are listed")
		})
	})
}

// ceilPad is ceil(n x 1.1) in integers.
func ceilPad(n int64) int64 { return (n*11 + 9) / 10 }

// hostOf is the host the exchange of r was made to.
func hostOf(r *framework.Response) string {
	u, err := url.Parse(r.Exchange.URL)
	if err != nil {
		return ""
	}
	return u.Host
}
