package specs

import (
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"

	"strings"

	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Workflow helpers: templates, invokes, runs and their nodes.

var (
	wfRunStatuses   = []string{"queued", "running", "completed", "partial", "failed", "canceled"}
	wfRunFinished   = []string{"completed", "partial", "failed", "canceled"}
	wfNodeStatuses  = []string{"pending", "ready", "dispatching", "running", "completed", "failed", "skipped", "canceled"}
	wfNodeFinished  = []string{"completed", "failed", "skipped", "canceled"}
	wfNodeStarted   = []string{"ready", "dispatching", "running", "completed", "failed"}
	wfNodeErrorCode = []string{"provider_error", "moderation", "timeout", "canceled", "insufficient_credits", "invalid_input", "unknown"}
)

// wfNode is one step of a template as GET /workflows/templates lists it.
type wfNode struct {
	id, capID string
	deps      []string
}

// wfTemplate is a template whose example inputs can be invoked, with the max_credits they need.
type wfTemplate struct {
	key    string
	inputs map[string]any
	nodes  []wfNode
	need   int64
}

// dependents reports whether another node depends on node id.
func (t wfTemplate) dependents(id string) bool {
	for _, n := range t.nodes {
		if slices.Contains(n.deps, id) {
			return true
		}
	}
	return false
}

// capUnique reports whether node i is the only node of its capability.
func (t wfTemplate) capUnique(i int) bool {
	for j, n := range t.nodes {
		if j != i && n.capID == t.nodes[i].capID {
			return false
		}
	}
	return true
}

// wfTemplates reads GET /workflows/templates and returns the templates whose example inputs name no
// upload, each with the max_credits its example inputs need (learnt from the 402
// max_credits_exceeded that max_credits 1 answers), cheapest first.
func wfTemplates(ctx context.Context, c *framework.Client) []wfTemplate {
	GinkgoHelper()
	r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
	var out []wfTemplate
	for i, v := range openRows(r) {
		tm := answer.AsObject(r, v, fmt.Sprintf("templates[%d]", i))
		key, ok := templateKey(c, tm)
		if !ok {
			c.Lacks(noTemplateKey)
		}
		t := wfTemplate{key: key}
		t.inputs = answer.AsObject(r, tm[c.Shape("workflow.example_inputs")], "the template's example inputs")
		if catalogue.NamesUpload(t.inputs) {
			continue
		}
		ns, _ := tm["nodes"].([]any)
		for j, nv := range ns {
			nm := answer.AsObject(r, nv, fmt.Sprintf("templates[%d].nodes[%d]", i, j))
			t.nodes = append(t.nodes, wfNode{
				id: answer.String(r, nm, "node_id", "node"), capID: answer.String(r, nm, "capability_id", "node"),
				deps: answer.Strings(r, nm, "depends_on", "node"),
			})
		}
		p := c.Post(ctx, "/workflows/templates/"+t.key+"/invoke", map[string]any{inputsKey(c): t.inputs, "max_credits": 1})
		if p.Status != http.StatusPaymentRequired {
			continue
		}
		p.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
		t.need = p.Int("error.limit.required_credits")
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b wfTemplate) int { return int(a.need - b.need) })
	return out
}

// wfPick returns the cheapest template pred accepts, skipping the spec when there is none.
func wfPick(ctx context.Context, s *framework.Spec, c *framework.Client, what string, pred func(wfTemplate) bool) wfTemplate {
	GinkgoHelper()
	for _, t := range wfTemplates(ctx, c) {
		if pred == nil || pred(t) {
			return t
		}
	}
	s.Lacks("the target lists no workflow template %s whose example inputs can be invoked without uploads", what)
	return wfTemplate{}
}

// wfChainFailure finds a node with a dependency whose capability no other node uses (a fault on
// that capability breaks only it); it returns its index or -1.
func wfChainFailure(t wfTemplate) int {
	for i, n := range t.nodes {
		if len(n.deps) > 0 && t.capUnique(i) {
			return i
		}
	}
	return -1
}

// wfRootFailure finds the template's only root node when its capability is unique and some node
// depends on it; it returns its index or -1.
func wfRootFailure(t wfTemplate) int {
	root := -1
	for i, n := range t.nodes {
		if len(n.deps) == 0 {
			if root >= 0 {
				return -1
			}
			root = i
		}
	}
	if root < 0 || !t.capUnique(root) || !t.dependents(t.nodes[root].id) {
		return -1
	}
	return root
}

// wfInvoke invokes template t with its example inputs and the max_credits they need, reserving
// that from the run's budget, and requires it accepted (expectInvoked). With control, the service
// clock moves an hour forward when the spec ends so that no step is left running for the next spec.
func wfInvoke(ctx context.Context, s *framework.Spec, c *framework.Client, t wfTemplate) (*framework.Response, string) {
	GinkgoHelper()
	s.Spend(int(t.need))
	r := c.Post(ctx, "/workflows/templates/"+t.key+"/invoke", map[string]any{inputsKey(c): t.inputs, "max_credits": t.need})
	id := expectInvoked(s, r)
	if s.HasControl() {
		DeferCleanup(func(ctx SpecContext) { s.Advance(ctx, 3600) })
	}
	return r, id
}

// wfrID is a workflow run id (Id prefixes: wfr_, also in the Location header of an invoke).
var wfrID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`wfr_[0-9a-f]{32}`) })

// expectInvoked checks an invoke was accepted and returns the run's id. The text gives the invoke
// no status or body ("Workflow endpoints: request and answer shapes: not shown. An invoke answers
// with a Location header naming the run"), so any 2XX success with a Location naming the run
// passes; the reference's 201 and its path /api/v1/workflow-runs/{id} are its own choice (WF-004),
// asserted only under --strict. The id is the body's workflow_run_id when it has one (the
// reference's body), else the wfr_ id Location names.
func expectInvoked(s *framework.Spec, r *framework.Response) string {
	GinkgoHelper()
	r.ExpectSuccess()
	loc := r.Header.Get("Location")
	Expect(loc).NotTo(BeEmpty(), "an invoke answers with a Location header naming the run"+r.Describe())
	id := wfrID().FindString(loc)
	if v, has := r.Lookup("workflow_run_id"); has {
		if sv, ok := v.(string); ok {
			id = sv
		}
	}
	Expect(id).NotTo(BeEmpty(), "the invoke names its run (a wfr_ id in Location)"+r.Describe())
	Expect(loc).To(ContainSubstring(id), "the invoke's Location header names the run "+id+r.Describe())
	s.ReferenceOnly("WF-004", "an invoke answers 201 with Location /api/v1/workflow-runs/{id}", func() {
		Expect(r.Status).To(Equal(http.StatusCreated), r.Describe())
		Expect(loc).To(Equal(s.APIPath("/workflow-runs/"+id)), r.Describe())
	})
	return id
}

// wfCheckRun checks the invariants every read of a run holds (WF-012 to WF-015, WF-017, WF-024,
// WF-025) and returns the run object. The run read's shape is not shown: its timestamps (WF-025),
// its nodes' credits (WF-024) and its credits object are the reference's, asserted under --strict.
func wfCheckRun(s *framework.Spec, r *framework.Response) map[string]any {
	GinkgoHelper()
	run := runRecord(r)
	st := runStatus(r)
	Expect(st).To(answer.OneOf(wfRunStatuses...), "WF-012: a run status is one of the six"+r.Describe())
	finished := slices.Contains(wfRunFinished, st)
	if v, has := run["still_running"]; has || s.Strict() { // the run record is not shown: judged where it carries it
		Expect(v).To(Equal(!finished), "WF-013: still_running is false exactly on a finished status"+r.Describe())
	}
	s.ReferenceOnly("WF-025", "a run read's started_at and finished_at", func() {
		if st == "queued" {
			Expect(run["started_at"]).To(BeNil(), "WF-025: started_at is null while the run is queued"+r.Describe())
		}
		if finished {
			Expect(run["finished_at"]).To(BeAssignableToTypeOf(""), "WF-025: finished_at is set once the run finished"+r.Describe())
		} else {
			Expect(run["finished_at"]).To(BeNil(), "finished_at is null while the run works"+r.Describe())
		}
	})
	s.ReferenceOnly("WF-011", "a run read's credits object", func() {
		credits := answer.AsObject(r, run["credits"], "run.credits")
		Expect(credits["terminal"]).To(Equal(finished), "run credits are terminal exactly when the run finished"+r.Describe())
		if !finished {
			Expect(credits["credits_charged"]).To(BeNil(), "credits_charged is null until the run is terminal"+r.Describe())
		}
	})
	byID := map[string]map[string]any{}
	nodes, _ := run["nodes"].([]any)
	for i, v := range nodes {
		n := answer.AsObject(r, v, fmt.Sprintf("run.nodes[%d]", i))
		byID[answer.String(r, n, "node_id", "node")] = n
	}
	for id, n := range byID {
		ns := answer.String(r, n, "status", "node")
		Expect(ns).To(answer.OneOf(wfNodeStatuses...), "WF-014: node "+id+" has a documented status"+r.Describe())
		if e := n["error"]; e != nil {
			em := answer.AsObject(r, e, "node error")
			Expect(em["code"]).To(BeElementOf(wfNodeErrorCode), "WF-015: node "+id+" error code"+r.Describe())
			Expect(em["message"]).To(BeAssignableToTypeOf(""), "WF-015: node "+id+" error message"+r.Describe())
		}
		if !slices.Contains(wfNodeFinished, ns) {
			s.ReferenceOnly("WF-024", "a node's credits stay null until it settles", func() {
				Expect(n["credits"]).To(BeNil(), "WF-024: node "+id+" credits stay null until it settles"+r.Describe())
			})
		}
		if slices.Contains(wfNodeStarted, ns) {
			for _, dep := range answer.Strings(r, n, "depends_on", "node") {
				Expect(byID).To(HaveKey(dep), "a depends_on entry names a node of the run"+r.Describe())
				Expect(byID[dep]["status"]).To(Equal("completed"), "WF-017: node "+id+" reads "+ns+" only after "+dep+" completed"+r.Describe())
			}
		}
	}
	return run
}

// wfFinish reads run id until it finishes, checking every read (wfCheckRun), and returns the
// final read and the run statuses seen.
func wfFinish(ctx context.Context, s *framework.Spec, c *framework.Client, id string) (*framework.Response, []string) {
	GinkgoHelper()
	return awaitRun(ctx, s, c, id, func(r *framework.Response) { wfCheckRun(s, r) })
}

// finishRun drives workflow run id to its end and returns its final read, checking only that it
// ends in one of the run's final statuses.
func finishRun(ctx context.Context, s *framework.Spec, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	r, _ := awaitRun(ctx, s, c, id, nil)
	return r
}

// awaitRun reads run id until its status is neither queued nor running, runs check (when not nil)
// on every read, and returns the final read, whose status must be one of wfRunFinished, and the
// statuses seen in order. With control it moves the service clock a few seconds between reads;
// without, it waits (scaled by the time scale) realStep, a run's end being seen at most that
// late (20 reads of the 120 per minute read bucket over the reference's 35 s runs). It fails
// after two hours of service time.
func awaitRun(ctx context.Context, s *framework.Spec, c *framework.Client, id string, check func(*framework.Response)) (*framework.Response, []string) {
	GinkgoHelper()
	step := 5
	if !s.HasControl() {
		step = realStep
	}
	var seen []string
	for elapsed := 0; ; elapsed += step {
		r := c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
		if check != nil {
			check(r)
		}
		st := runStatus(r)
		if !slices.Contains(seen, st) {
			seen = append(seen, st)
		}
		if st != "queued" && st != "running" {
			Expect(st).To(answer.OneOf(wfRunFinished...), r.Describe())
			return r, seen
		}
		Expect(elapsed).To(BeNumerically("<", 7200), "workflow run "+id+" still running after two hours of service time"+r.Describe())
		if s.HasControl() {
			s.Advance(ctx, float64(step))
		} else {
			time.Sleep(time.Duration(float64(time.Duration(step)*time.Second) / s.TimeScale()))
		}
	}
}

// realStep is awaitRun's service seconds between two reads of a run without control (the text's
// "poll about every 30 seconds" is a client's pace; a judge sees the end sooner for little).
const realStep = 2

// wfNodes returns the run's nodes by node id.
func wfNodes(r *framework.Response, run map[string]any) map[string]map[string]any {
	GinkgoHelper()
	out := map[string]map[string]any{}
	nodes, _ := run["nodes"].([]any)
	if len(nodes) == 0 {
		// The run record is not shown ("Workflow endpoints (invoke, templates, runs): request and
		// answer shapes: not shown"): a read that lists no nodes under the events' name leaves the
		// steps unread.
		r.Lacks("the run read lists no nodes[] (the run record is not shown; its events name them nodes)")
	}
	for i, v := range nodes {
		n := answer.AsObject(r, v, fmt.Sprintf("run.nodes[%d]", i))
		out[fmt.Sprint(n["node_id"])] = n
	}
	return out
}

// wfGenIDs returns a node's generation ids.
func wfGenIDs(r *framework.Response, n map[string]any) []string {
	return answer.Strings(r, n, "generation_ids", "node")
}

// wfSumCredits sums the nodes' credits (null counts as 0).
func wfSumCredits(run map[string]any) int64 {
	var sum int64
	nodes, _ := run["nodes"].([]any)
	for _, v := range nodes {
		n, _ := v.(map[string]any)
		if c, ok := framework.AsInt(n["credits"]); ok {
			sum += c
		}
	}
	return sum
}

// wfCancel cancels run id through control, skipping the spec when the control API does not offer
// the operation.
func wfCancel(ctx context.Context, s *framework.Spec, id string) *framework.Response {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/workflow-runs/"+id+"/cancel", nil)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		s.Lacks("the control API does not offer POST /workflow-runs/{id}/cancel")
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control POST /workflow-runs/{id}/cancel"+r.Describe())
	return r
}

// wfAwaitRunEvent waits for the run event of id on hook h and checks its envelope and status.
func wfAwaitRunEvent(ctx context.Context, s *framework.Spec, h hook, eventType, id, status string) map[string]any {
	GinkgoHelper()
	ev, err := s.Hooks().Await(ctx, receiver.Match{Type: eventType, Path: h.path, ResourceID: id}, arrival(s))
	Expect(err).NotTo(HaveOccurred(), "no "+eventType+" for run "+id+" (it ended "+status+")")
	data := checkEnvelope(s, ev)
	Expect(data["status"]).To(Equal(status), "EVT-031: the event status is the run's: "+string(ev.Raw))
	return data
}

// wfListed reads the first page (50 rows, newest first) of GET /generations?source=workflow.
func wfListed(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	return paging.Get(ctx, c, "/generations", paging.Open, framework.Query("source", "workflow"), framework.Query("limit", "50")).Rows
}

// cheapestTemplate reads the workflow templates and returns the key, example inputs and node ids
// of the one whose example inputs need the smallest max_credits (learnt from the 402
// max_credits_exceeded a max_credits of 1 answers), and that number. It skips the spec when no
// template's example inputs can be invoked.
func cheapestTemplate(ctx context.Context, s *framework.Spec, c *framework.Client) (key string, inputs map[string]any, nodes []string, need int64) {
	GinkgoHelper()
	key, inputs, nodes, need, lack := findCheapestTemplate(ctx, c)
	if lack != "" {
		s.Lacks("%s", lack)
	}
	return key, inputs, nodes, need
}

// findCheapestTemplate is cheapestTemplate for a caller that can do without a template: when
// none can be invoked it returns why (lack) instead of skipping.
func findCheapestTemplate(ctx context.Context, c *framework.Client) (key string, inputs map[string]any, nodes []string, need int64, lack string) {
	GinkgoHelper()
	r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
	for i, v := range openRows(r) {
		t := answer.AsObject(r, v, fmt.Sprintf("templates[%d]", i))
		k, ok := templateKey(c, t)
		if !ok {
			return "", nil, nil, 0, noTemplateKey
		}
		in := answer.AsObject(r, t[c.Shape("workflow.example_inputs")], "the template's example inputs")
		if catalogue.NamesUpload(in) {
			continue
		}
		probe := c.Post(ctx, "/workflows/templates/"+k+"/invoke", map[string]any{inputsKey(c): in, "max_credits": 1})
		if probe.Status != http.StatusPaymentRequired {
			continue
		}
		probe.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
		n := probe.Int("error.limit.required_credits")
		if key == "" || n < need {
			key, inputs, need = k, in, n
			nodes = nil
			ns, _ := t["nodes"].([]any)
			for j, nv := range ns {
				nodes = append(nodes, answer.String(r, answer.AsObject(r, nv, fmt.Sprintf("templates[%d].nodes[%d]", i, j)), "node_id", "node"))
			}
		}
	}
	if key == "" {
		return "", nil, nil, 0, "no workflow template's example inputs can be invoked without uploads"
	}
	return key, inputs, nodes, need, ""
}

// noTemplateKey is why a spec cannot invoke a template of a target whose template rows do not
// carry the key under the reference's name.
const noTemplateKey = "the workflow templates carry no key under the declared workflow.template_key (the text does not show the template record: \"Workflow endpoints (invoke, templates, runs): request and answer shapes: not shown\")"

// runsList reads GET /workflow-runs and returns its rows: the one array of the answer (beside
// next_cursor when it has one), whatever its key ("Workflow endpoints (invoke, templates, runs):
// request and answer shapes: not shown").
func runsList(ctx context.Context, s *framework.Spec, c *framework.Client) []any {
	GinkgoHelper()
	return openRows(c.Get(ctx, "/workflow-runs").ExpectOK(http.StatusOK))
}

// templateKey returns the key of a workflow template row, under the field the target declares
// (shape workflow.template_key; the template record is not shown); ok is false when the row has
// none.
func templateKey(c *framework.Client, tm map[string]any) (string, bool) {
	GinkgoHelper()
	k, ok := tm[c.Shape("workflow.template_key")].(string)
	return k, ok && k != ""
}

// cheapestTemplateRun finds the workflow template whose example inputs need the fewest credits
// (read from the 402 max_credits_exceeded refusal of an invoke with max_credits 1, which names
// the number that passes) and invokes it with that number. It returns the answer and the run id
// (expectInvoked).
func cheapestTemplateRun(ctx context.Context, s *framework.Spec, c *framework.Client) (*framework.Response, string) {
	GinkgoHelper()
	r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
	best, bestNeed := "", int64(0)
	var bestInputs map[string]any
	for i, t := range openRows(r) {
		tm := answer.AsObject(r, t, fmt.Sprintf("templates[%d]", i))
		key, ok := templateKey(c, tm)
		if !ok {
			s.Lacks("%s", noTemplateKey)
		}
		inputs, _ := tm[c.Shape("workflow.example_inputs")].(map[string]any)
		if catalogue.NamesUpload(inputs) {
			continue
		}
		ref := c.Post(ctx, "/workflows/templates/"+key+"/invoke", map[string]any{inputsKey(c): inputs, "max_credits": 1})
		if ref.Status != http.StatusPaymentRequired {
			continue // the example inputs do not run as they are (e.g. they name catalogue ids of another target)
		}
		ref.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
		need := ref.Int("error.limit.required_credits")
		if best == "" || need < bestNeed {
			best, bestNeed, bestInputs = key, need, inputs
		}
	}
	if best == "" {
		s.Lacks("no workflow template's example inputs can be priced as they are (without an upload)")
	}
	s.Spend(int(bestNeed))
	run := c.Post(ctx, "/workflows/templates/"+best+"/invoke", map[string]any{inputsKey(c): bestInputs, "max_credits": bestNeed})
	id := expectInvoked(s, run)
	if s.HasControl() {
		// Let the run's jobs end before the next spec.
		DeferCleanup(func(ctx SpecContext) { s.Advance(ctx, 3600) })
	}
	return run, id
}

// wfStep is one step of a workflow a spec saves through control: every config and body field a
// literal, so the spec knows each step's request and prices it itself with POST /estimates.
type wfStep struct {
	id, capID string
	deps      []string
	config    map[string]any
	body      map[string]any // submit-body fields (voice_id, ...)
}

// saveWorkflow saves steps as a workflow of workspace wsID through control (POST
// /workspaces/{id}/workflows, inputs none) and returns its wf_ id. It skips the spec when the
// control API does not save workflows.
func saveWorkflow(ctx context.Context, s *framework.Spec, wsID string, steps []wfStep) string {
	GinkgoHelper()
	literal := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = map[string]any{"value": v}
		}
		return out
	}
	var nodes []any
	for _, st := range steps {
		deps := st.deps
		if deps == nil {
			deps = []string{}
		}
		nodes = append(nodes, map[string]any{"node_id": st.id, "capability_id": st.capID, "depends_on": deps, "config": literal(st.config), "body": literal(st.body)})
	}
	body := map[string]any{
		"name": "conformance steps " + framework.RandomHex(6), "nodes": nodes,
		"inputs_schema": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
	}
	r, err := s.Control().Call(ctx, http.MethodPost, "/workspaces/"+wsID+"/workflows", body)
	Expect(err).NotTo(HaveOccurred())
	if code, _ := r.Lookup("error.code"); r.Status == http.StatusNotFound && code != "not_found" {
		s.Lacks("the control API does not save workflows (POST /workspaces/{id}/workflows)")
	}
	Expect(r.Status).To(Equal(http.StatusCreated), "control POST /workspaces/{id}/workflows"+r.Describe())
	id := r.String("workflow_id")
	Expect(id).To(MatchRegexp(judge.IDPattern("wf_")), r.Describe())
	return id
}

// stepsPrice estimates every step as its own request and returns, per step id, the estimate's
// credits (the price) and max_credits_needed (the padded hold).
func stepsPrice(ctx context.Context, c *framework.Client, steps []wfStep) (price map[string]float64, need map[string]int64) {
	GinkgoHelper()
	price, need = map[string]float64{}, map[string]int64{}
	for _, st := range steps {
		est, n := estimateOf(ctx, c, st.capID, st.config, st.body)
		p := priceOf(est)
		Expect(n).To(Equal(ceilPad(p)), "one take holds ceil(price x 1.1)"+est.Describe())
		price[st.id], need[st.id] = p, n
	}
	return price, need
}

// cheapSteps is a workflow of three steps the spec can price: a tts and an image model at the
// start, and a second tts (a longer script, so another price) after the first.
func cheapSteps(ctx context.Context, c *framework.Client) []wfStep {
	GinkgoHelper()
	voice := catalogue.FirstVoice(ctx, c)
	d := catalogue.ImageModel(ctx, c)
	return []wfStep{
		{id: "voice", capID: "tts", config: catalogue.TTSConfig(ctx, c), body: map[string]any{"voice_id": voice}},
		{id: "still", capID: d.String("capability_id"), config: catalogue.CheapConfig(d)},
		{id: "voice_two", capID: "tts", deps: []string{"voice"}, config: catalogue.ScriptConfig(ctx, c, "tts", "A second line, longer than the first one, for a second price. Take "+framework.RandomHex(6)+"."), body: map[string]any{"voice_id": voice}},
	}
}

// runCharge is credits.credits_charged of a run read's record, and whether the record carries a
// credits object: the run record is not shown, so a target without one is not judged there
// (under --strict the mock must carry it).
func runCharge(s *framework.Spec, r *framework.Response) (int64, bool) {
	GinkgoHelper()
	credits, ok := runRecord(r)["credits"].(map[string]any)
	if !ok {
		Expect(s.Strict()).To(BeFalse(), "the run read carries credits"+r.Describe())
		return 0, false
	}
	n, isInt := framework.AsInt(credits["credits_charged"])
	Expect(isInt).To(BeTrue(), "the run's credits_charged is a whole number"+r.Describe())
	return n, true
}

// runStatus is the status of the run a run read answers (openshape.RunStatus: its record's status,
// or the one run status among the record's own fields); the spec fails when the read shows none.
func runStatus(r *framework.Response) string {
	GinkgoHelper()
	st, ok := openshape.RunStatus(r.Doc())
	Expect(ok).To(BeTrue(), "the run read shows the run's status (one of "+strings.Join(openshape.RunStatuses, ", ")+")"+r.Describe())
	return st
}

// savedWorkflowCharges invokes a saved workflow and runs it to its end: the spec's own (with
// control: three steps it priced, cheapSteps) or the profile's (saved_workflow_ids, taking no
// inputs). The invoke needs the sum of the steps' own padded holds (WF-009: max_credits one below
// is refused naming the same required_credits), each step's generation holds its own padded
// estimate and its node's credits are that generation's charge (WF-023). With priced, the steps
// are the spec's and each is also priced as its own estimate (GEN-014) and paid from the balance.
func savedWorkflowCharges(ctx context.Context, s *framework.Spec, priced bool) {
	GinkgoHelper()
	c := s.Client()
	var wf string
	var price map[string]float64 // by node id: known when the spec saved the steps
	var need map[string]int64
	if s.HasControl() {
		sp := newSpender(ctx, s)
		steps := cheapSteps(ctx, sp.c)
		price, need = stepsPrice(ctx, sp.c, steps)
		c, wf = sp.c, saveWorkflow(ctx, s, sp.ws.ID, steps)
		DeferCleanup(func(ctx SpecContext) { s.Advance(ctx, 3600) })
	} else {
		wf = s.SavedWorkflowID()
	}
	path := "/workflows/" + wf + "/invoke"
	body := func(maxCredits int64) map[string]any {
		return map[string]any{inputsKey(c): map[string]any{}, "max_credits": maxCredits}
	}
	s.Step("WF-009")
	want := c.Post(ctx, path, body(1)).ExpectError(http.StatusPaymentRequired, "max_credits_exceeded").Int("error.limit.required_credits")
	var sum float64
	if need != nil {
		var padded int64
		for id, n := range need {
			padded, sum = padded+n, sum+price[id]
		}
		Expect(want).To(Equal(padded), fmt.Sprintf("required_credits is the sum over the steps of ceil(price x 1.1): %v of prices %v (not ceil(%v x 1.1) = %d)", need, price, sum, ceilPad(sum)))
	}
	e := c.Post(ctx, path, body(want-1)).ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
	Expect(e.String("error.limit.bound_by")).To(Equal("max_credits"), e.Describe())
	Expect(e.Int("error.limit.required_credits")).To(Equal(want), "required_credits is the same whatever max_credits was sent"+e.Describe())
	var before int64
	if s.HasControl() { // the spec's own workspace: its balance is judged at the end
		before = availableOf(ctx, c)
	}
	s.Spend(int(want))
	s.Step("WF-009", "WF-004")
	inv := c.Post(ctx, path, body(want))
	id := expectInvoked(s, inv)
	if need != nil {
		s.ReferenceOnly("WF-005", "the invoke answer's credits_estimated is the sum of its steps' prices", func() {
			Expect(inv.Int("credits.credits_estimated")).To(BeNumerically("~", sum, float64(len(need))), "the run is estimated at the sum of its steps' prices"+inv.Describe())
		})
	}
	final, _ := wfFinish(ctx, s, c, id)
	run := runRecord(final)
	st := runStatus(final)
	if st == "partial" {
		// The text makes partial a normal finish: a step that failed (on the provider's side, by
		// moderation, ...) says nothing of the run's credits, and leaves them unjudged.
		for nid, node := range wfNodes(final, run) {
			e, _ := node["error"].(map[string]any)
			if code, _ := e["code"].(string); code != "" {
				framework.SkipFor(framework.Undecidable("step " + nid + " failed with " + code + " and the run ended partial: its steps' holds and charges are not all there to judge"))
			}
		}
	}
	Expect(st).To(Equal("completed"), final.Describe())
	var charged, held int64
	for nid, node := range wfNodes(final, run) {
		gens := wfGenIDs(final, node)
		Expect(gens).To(HaveLen(1), "step "+nid+" made one generation"+final.Describe())
		g := readGen(ctx, c, gens[0])
		if priced {
			s.Step("GEN-014")
			Expect(g.Int("generation.credits_estimated")).To(chargeOf(price[nid]), "step "+nid+" is priced as its own estimate"+g.Describe())
		}
		s.Step("WF-009")
		h := g.Int("generation.credits.credits_held")
		if need != nil {
			Expect(h).To(Equal(need[nid]), "step "+nid+" holds its own padded estimate"+g.Describe())
		}
		held += h
		s.Step("WF-023")
		Expect(wfInt(node["credits"])).To(Equal(g.Int("generation.credits.credits_charged")), "step "+nid+"'s credits are its generation's charge"+final.Describe())
		charged += g.Int("generation.credits.credits_charged")
	}
	s.Step("WF-009")
	Expect(held).To(Equal(want), "the invoke's required_credits is the sum of its steps' holds, each step padded on its own"+final.Describe())
	s.Step("WF-023")
	if rc, ok := runCharge(s, final); ok { // the run record is not shown: judged where it carries credits
		Expect(rc).To(Equal(charged), "the run's charge is its steps' charges"+final.Describe())
	}
	if s.HasControl() { // the spec's own workspace: nothing else moves its balance
		after, onHold := balanceOf(ctx, c)
		Expect(onHold).To(BeZero())
		Expect(before-after).To(Equal(charged), "the balance paid each step's charge")
	}
}
