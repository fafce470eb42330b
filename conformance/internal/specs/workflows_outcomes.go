package specs

import (
	"context"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/receiver"
)

// workflowRunOutcomeSpecs registers the specs of how a run ends: its event sent once it has ended, and a run
// that ends partial, failed or canceled, charged for what ran.
func workflowRunOutcomeSpecs(f *framework.Framework) {
	Describe("workflows: runs", func() {
		f.Rule("EVT-004", "EVT-031").It("a run event is sent once the run has ended: read as the event arrives, the run reads the event's status", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			t := wfPick(ctx, s, sp.c, "", nil)
			_, id := wfInvoke(ctx, s, sp.c, t)
			// The event is awaited while the run goes on, not after it was seen to end: "fires when a
			// run ended completed or partial", so the run read right after the event arrives has
			// ended, with the event's status (a server sending before its commit shows running).
			m := receiver.Match{Type: "workflow_run.completed", Path: h.path, ResourceID: id}
			var ev receiver.Event
			if !s.HasControl() {
				e, err := s.Hooks().Await(ctx, m, arrival(s)+time.Duration(float64(2*time.Hour)/s.TimeScale()))
				Expect(err).NotTo(HaveOccurred(), "no workflow_run.completed for run "+id)
				ev = e
			}
			for elapsed := 0; ev.ID == "" && s.HasControl(); elapsed += 10 {
				Expect(elapsed).To(BeNumerically("<", 7200), "no workflow_run.completed for run "+id+" within two hours of service time")
				if e, err := s.Hooks().Await(ctx, m, 150*time.Millisecond); err == nil {
					ev = e
					break
				}
				s.Advance(ctx, 10)
			}
			r := sp.c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
			run := wfCheckRun(s, r)
			data := checkEnvelope(s, ev)
			Expect(run["status"]).To(BeElementOf("completed", "partial"), "the run read right after its workflow_run.completed arrived has ended: "+string(ev.Raw)+r.Describe())
			Expect(run["status"]).To(Equal(data["status"]), "the run reads the status its event carries: "+string(ev.Raw)+r.Describe())
			Expect(run["still_running"]).To(Equal(false), r.Describe())
		})

		f.Rule("WF-019", "WF-023", "WF-013", "EVT-004", "EVT-031").Needs(framework.TestInputs).It("a run where a later step fails reads partial and is charged for the finished steps only", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			t := wfPick(ctx, s, sp.c, "with a step after another on a capability of its own", func(t wfTemplate) bool { return wfChainFailure(t) >= 0 })
			broken := t.nodes[wfChainFailure(t)]
			failing := s.Force(ctx, sp.c, framework.Outcome{Kind: "render_fail", CapabilityID: broken.capID})
			availBefore := availableOf(ctx, sp.c)
			_, id := wfInvoke(ctx, s, failing, t)
			s.Step("WF-013")
			final, _ := wfFinish(ctx, s, sp.c, id)
			run := runRecord(final)
			s.Step("WF-019")
			Expect(run["status"]).To(Equal("partial"), "WF-019: some steps finished and one failed"+final.Describe())
			s.Step("WF-013")
			Expect(run["still_running"]).To(Equal(false), "WF-013: still_running is false on a partial run"+final.Describe())
			nodes := wfNodes(final, run)
			bn := nodes[broken.id]
			Expect(bn["status"]).To(Equal("failed"), final.Describe())
			Expect(answer.AsObject(final, bn["error"], "error")["code"]).To(Equal("provider_error"), final.Describe())
			s.Step("WF-023")
			Expect(wfInt(bn["credits"])).To(BeZero(), "WF-023: a broken step costs nothing"+final.Describe())
			charged := wfSumCredits(run)
			if c, ok := runCharge(s, final); ok {
				Expect(c).To(Equal(charged), "WF-023: the run's charge is the sum of its nodes'"+final.Describe())
			}
			if s.HasControl() {
				availAfter, held := balanceOf(ctx, sp.c)
				Expect(held).To(BeZero())
				Expect(availBefore-availAfter).To(Equal(charged), "the wallet paid exactly the run's charge (the sum of its nodes')")
			}
			s.Step("EVT-004", "EVT-031")
			wfAwaitRunEvent(ctx, s, h, "workflow_run.completed", id, "partial")
		})

		f.Rule("WF-020", "WF-022", "WF-023", "EVT-005", "EVT-031", "DLV-029").Needs(framework.TestInputs).It("a run whose first step fails reads failed, skips what depends on it and costs nothing", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			t := wfPick(ctx, s, sp.c, "with a single first step on a capability of its own", func(t wfTemplate) bool { return wfRootFailure(t) >= 0 })
			root := t.nodes[wfRootFailure(t)]
			failing := s.Force(ctx, sp.c, framework.Outcome{Kind: "render_fail", CapabilityID: root.capID})
			_, id := wfInvoke(ctx, s, failing, t)
			final, _ := wfFinish(ctx, s, sp.c, id)
			run := runRecord(final)
			s.Step("WF-020")
			Expect(run["status"]).To(Equal("failed"), "WF-020: nothing finished and a step broke"+final.Describe())
			nodes := wfNodes(final, run)
			Expect(nodes[root.id]["status"]).To(Equal("failed"), final.Describe())
			s.Step("WF-022", "WF-023")
			for _, n := range t.nodes {
				if slices.Contains(n.deps, root.id) {
					Expect(nodes[n.id]["status"]).To(Equal("skipped"), "WF-022: a node whose input failed reads skipped"+final.Describe())
					Expect(wfGenIDs(final, nodes[n.id])).To(BeEmpty(), "WF-022: a skipped node never ran"+final.Describe())
					Expect(wfInt(nodes[n.id]["credits"])).To(BeZero(), "WF-023"+final.Describe())
				}
			}
			if charged, ok := runCharge(s, final); ok { // the run record is not shown: judged where it carries credits
				Expect(charged).To(BeZero(), "WF-023: nothing finished, nothing charged"+final.Describe())
			}
			s.Step("EVT-005", "EVT-031")
			wfAwaitRunEvent(ctx, s, h, "workflow_run.failed", id, "failed")
			s.Step("DLV-029")
			expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "workflow_run.failed", ResourceID: id}, 1, "a run ends once: its workflow_run.failed reaches the endpoint once")
		})

		f.Rule("WF-021", "EVT-005", "EVT-031", "WF-013", "DLV-029").Needs(framework.Spends, framework.Receiver, framework.TestInputs).It("a run canceled before any step completed reads canceled and its unstarted nodes read canceled", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			t := wfPick(ctx, s, sp.c, "", nil)
			// A run is canceled in the app, not through the API: control's cancel, or a cancel test input.
			ti, forced := s.AppAct(sp.c, framework.Outcome{Kind: "cancel"})
			_, id := wfInvoke(ctx, s, ti, t)
			if !forced {
				c := wfCancel(ctx, s, id)
				Expect(c.String("workflow_run_id")).To(Equal(id), c.Describe())
			}
			final, _ := wfFinish(ctx, s, sp.c, id)
			run := runRecord(final)
			nodes := wfNodes(final, run)
			completed := false
			for _, n := range nodes {
				completed = completed || n["status"] == "completed"
			}
			if completed {
				framework.SkipFor(framework.Undecidable("a step of the run completed before the cancel reached it"))
			}
			Expect(run["status"]).To(Equal("canceled"), "WF-021"+final.Describe())
			for nid, n := range nodes {
				if len(wfGenIDs(final, n)) == 0 {
					Expect(n["status"]).To(Equal("canceled"), "WF-021: node "+nid+" never started and reads canceled"+final.Describe())
				}
			}
			if charged, ok := runCharge(s, final); ok { // the run record is not shown: judged where it carries credits
				Expect(charged).To(BeZero(), final.Describe())
			}
			s.Step("EVT-005", "EVT-031")
			wfAwaitRunEvent(ctx, s, h, "workflow_run.failed", id, "canceled")
			s.Step("DLV-029")
			expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "workflow_run.failed", ResourceID: id}, 1, "a run ends once: its workflow_run.failed reaches the endpoint once")
		})
	})
}
