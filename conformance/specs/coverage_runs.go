package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	"github.com/mediaspec/mediaspec/receiver"
)

// Specs of the workflow run events.

// runEnded are the statuses a workflow run ends in.
var runEnded = []string{"completed", "partial", "failed", "canceled"}

// cheapestTemplate reads the workflow templates and returns the key, example inputs and node ids
// of the one whose example inputs need the smallest max_credits (learnt from the 402
// max_credits_exceeded a max_credits of 1 answers), and that number. It skips the spec when no
// template's example inputs can be invoked.
func cheapestTemplate(ctx context.Context, c *framework.Client) (key string, inputs map[string]any, nodes []string, need int64) {
	GinkgoHelper()
	r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
	for i, v := range r.Array("templates") {
		t := asObject(r, v, fmt.Sprintf("templates[%d]", i))
		k := stringField(r, t, "template_key", "template")
		in := asObject(r, t["example_inputs"], "example_inputs")
		if namesUpload(in) {
			continue
		}
		probe := c.Post(ctx, "/workflows/templates/"+k+"/invoke", map[string]any{"inputs": in, "max_credits": 1})
		if probe.Status != http.StatusPaymentRequired {
			continue
		}
		probe.ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
		n := probe.Int("error.limit.required_credits")
		if key == "" || n < need {
			key, inputs, need = k, in, n
			nodes = nil
			for j, nv := range t["nodes"].([]any) {
				nodes = append(nodes, stringField(r, asObject(r, nv, fmt.Sprintf("templates[%d].nodes[%d]", i, j)), "node_id", "node"))
			}
		}
	}
	if key == "" {
		Skip("unsupported: no workflow template's example inputs can be invoked without uploads")
	}
	return key, inputs, nodes, need
}

// finishRun drives workflow run id to its end and returns its final read: with control it moves
// the service clock forward between reads; without, it waits (scaled by the time scale). It fails
// the spec after two hours of service time.
func finishRun(ctx context.Context, s *framework.Spec, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	const step = 5
	for elapsed := 0; ; elapsed += step {
		r := c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
		if st := r.String("run.status"); st != "queued" && st != "running" {
			Expect(st).To(oneOf(runEnded...), r.Describe())
			return r
		}
		Expect(elapsed).To(BeNumerically("<", 7200), "workflow run "+id+" still running after two hours of service time"+r.Describe())
		if s.HasControl() {
			s.Advance(ctx, step)
		} else {
			time.Sleep(time.Duration(float64(step*time.Second) / s.TimeScale()))
		}
	}
}

func coverageRunSpecs(f *framework.Framework) {
	Describe("workflow run events", func() {
		f.Rule("EVT-029", "EVT-030").Needs(framework.Receiver, framework.Spends).It("a run's end event carries the documented run data and nodes with ids only", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			key, inputs, nodeIDs, need := cheapestTemplate(ctx, sp.c)
			s.Spend(int(need))
			inv := sp.c.Post(ctx, "/workflows/templates/"+key+"/invoke", map[string]any{"inputs": inputs, "max_credits": need}).ExpectOK(http.StatusCreated)
			id := inv.String("workflow_run_id")
			final := finishRun(ctx, s, sp.c, id)
			status := final.String("run.status")
			eventType := "workflow_run.completed"
			if status == "failed" || status == "canceled" {
				eventType = "workflow_run.failed"
			}
			ev, err := s.Hooks().Await(ctx, receiver.Match{Type: eventType, Path: h.path, ResourceID: id}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no "+eventType+" for run "+id+" (it ended "+status+")")
			data := checkEnvelope(s, ev)
			raw := string(ev.Raw)

			// EVT-029: the run data.
			for _, k := range []string{"workflow_run_id", "workflow_id", "status", "credits", "nodes", "started_at", "finished_at", "disclosure"} {
				Expect(data).To(HaveKey(k), "run event data carries "+k+": "+raw)
			}
			Expect(data["workflow_run_id"]).To(Equal(id), raw)
			Expect(data["workflow_id"]).To(BeNil(), "a template run has no workflow_id: "+raw)
			Expect(data["status"]).To(Equal(status), "the event status is the run's: "+raw)
			if eventType == "workflow_run.completed" {
				Expect(data["status"]).To(BeElementOf("completed", "partial"), raw)
			}
			credits, _ := data["credits"].(map[string]any)
			for _, k := range []string{"credits_estimated", "credits_charged", "settlement", "terminal"} {
				Expect(credits).To(HaveKey(k), "run event credits carry "+k+": "+raw)
			}
			Expect(credits["terminal"]).To(Equal(true), "an ended run's credits are terminal: "+raw)
			Expect(data["finished_at"]).To(BeAssignableToTypeOf(""), raw)
			Expect(data["disclosure"]).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())), raw)

			// EVT-030: the nodes, with generation ids only.
			nodes, _ := data["nodes"].([]any)
			Expect(nodes).To(HaveLen(len(nodeIDs)), "one entry per node of the template: "+raw)
			var seen []string
			for i, n := range nodes {
				node, ok := n.(map[string]any)
				Expect(ok).To(BeTrue(), raw)
				for _, k := range []string{"node_id", "label", "status", "credits", "generation_ids", "error"} {
					Expect(node).To(HaveKey(k), fmt.Sprintf("nodes[%d] carries %s: %s", i, k, raw))
				}
				seen = append(seen, fmt.Sprint(node["node_id"]))
				Expect(node["label"]).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())), raw)
				gens, isArr := node["generation_ids"].([]any)
				Expect(isArr).To(BeTrue(), fmt.Sprintf("nodes[%d].generation_ids is an array: %s", i, raw))
				for _, g := range gens {
					gid, isStr := g.(string)
					Expect(isStr).To(BeTrue(), fmt.Sprintf("nodes[%d].generation_ids holds ids only, not objects: %s", i, raw))
					Expect(gid).To(MatchRegexp(genIDPattern), raw)
				}
				if e := node["error"]; e != nil {
					em, _ := e.(map[string]any)
					Expect(em).To(And(HaveKey("code"), HaveKey("message")), fmt.Sprintf("nodes[%d].error is {code, message} or null: %s", i, raw))
				}
				if node["status"] == "completed" {
					Expect(gens).NotTo(BeEmpty(), fmt.Sprintf("a completed node names its generations: %s", raw))
					Expect(node["error"]).To(BeNil(), raw)
				}
			}
			Expect(seen).To(ConsistOf(nodeIDs), "the event names the template's nodes: "+raw)
		})
	})
}
