package specs

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec/judge"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// workflowSpecs registers the specs of workflow templates, invokes, runs and their events.
func workflowSpecs(f *framework.Framework) {
	workflowTemplateSpecs(f)
	workflowInvokeSpecs(f)
	workflowRunIDSpecs(f)
	workflowRunSpecs(f)
	workflowRunOutcomeSpecs(f)
	workflowRunReadSpecs(f)
	workflowRunEventSpecs(f)
	recoveredRenderSpecs(f)
}

// workflowTemplateSpecs registers the specs of workflow templates.
func workflowTemplateSpecs(f *framework.Framework) {
	Describe("workflows: templates", func() {
		f.Rule("WF-001", "WF-002", "WF-003").It("templates list their nodes, a strict inputs_schema and example inputs that validate", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("WF-001", "the workflow template list's shape")
			r := s.Client().Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
			Expect(r.Field("ok")).To(Equal(true), r.Describe())
			tpls := openRows(r)
			if len(tpls) == 0 {
				s.Lacks("the target lists no workflow template")
			}
			for i, v := range tpls {
				s.Step("WF-001")
				t := answer.AsObject(r, v, fmt.Sprintf("templates[%d]", i))
				key, ok := templateKey(s.Client(), t)
				if !ok {
					s.Lacks("%s", noTemplateKey)
				}
				for _, k := range []string{"name", "description"} {
					Expect(t[k]).To(BeAssignableToTypeOf(""), key+": "+k+r.Describe())
				}
				s.Step("WF-002")
				schema := answer.AsObject(r, t["inputs_schema"], key+".inputs_schema")
				Expect(schema["additionalProperties"]).To(Equal(false), "WF-002: "+key+" inputs_schema is strict"+r.Describe())
				example := answer.AsObject(r, t["example_inputs"], key+".example_inputs")
				comp := jsonschema.NewCompiler()
				comp.DefaultDraft(jsonschema.Draft2020)
				Expect(comp.AddResource("inputs_schema.json", schema)).To(Succeed(), key+r.Describe())
				sch, err := comp.Compile("inputs_schema.json")
				Expect(err).NotTo(HaveOccurred(), "WF-002: "+key+" inputs_schema is a JSON Schema"+r.Describe())
				Expect(sch.Validate(example)).To(Succeed(), "WF-002: "+key+" example_inputs validate against inputs_schema"+r.Describe())
				s.Step("WF-001")
				nodes, _ := t["nodes"].([]any)
				Expect(nodes).NotTo(BeEmpty(), key+" has nodes"+r.Describe())
				var ids []string
				for j, nv := range nodes {
					n := answer.AsObject(r, nv, fmt.Sprintf("%s.nodes[%d]", key, j))
					ids = append(ids, answer.String(r, n, "node_id", "node"))
					answer.String(r, n, "label", "node")
					answer.String(r, n, "capability_id", "node")
				}
				s.Step("WF-003")
				for j, nv := range nodes {
					n := answer.AsObject(r, nv, fmt.Sprintf("%s.nodes[%d]", key, j))
					for _, dep := range answer.Strings(r, n, "depends_on", "node") {
						Expect(ids).To(ContainElement(dep), "WF-003: "+key+" depends_on names a node of the template"+r.Describe())
					}
				}
			}
		})
	})
}

// workflowInvokeSpecs registers the specs of workflow invokes.
func workflowInvokeSpecs(f *framework.Framework) {
	Describe("workflows: invokes", func() {
		f.Rule("WF-007").It("an unknown wf_ id or template key answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			body := map[string]any{inputsKey(c): map[string]any{}, "max_credits": 10}
			c.Post(ctx, "/workflows/wf_"+framework.RandomHex(32)+"/invoke", body).ExpectError(http.StatusNotFound, "not_found")
			c.Post(ctx, "/workflows/templates/no_such_template_"+framework.RandomHex(8)+"/invoke", body).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule("WF-007", "ID-016").Needs(framework.Profile, framework.SecondWorkspace).It("real ids that name no workflow of the caller answer 404 not_found: another workspace's wf_ id, a template key or a wf_ id on the other invoke path", func(ctx context.Context, s *framework.Spec) {
			// Without control: the profile's saved workflow of the key's workspace (saved_workflow_ids),
			// which the second workspace's key (other_key) invokes as another workspace's id.
			c, other := s.Client(), s.OtherClient()
			var mine, theirs string
			if s.HasControl() {
				sp, o := newSpender(ctx, s), newSpender(ctx, s)
				steps := cheapSteps(ctx, sp.c)
				c, mine = sp.c, saveWorkflow(ctx, s, sp.ws.ID, steps)
				theirs = saveWorkflow(ctx, s, o.ws.ID, steps)
			} else {
				mine = s.SavedWorkflowID()
			}
			t := wfPick(ctx, s, c, "", nil)
			// max_credits 1 is below any price: a 402 shows the id was found, a 404 that it was not.
			body := map[string]any{inputsKey(c): map[string]any{}, "max_credits": 1}
			s.Step("WF-007")
			c.Post(ctx, "/workflows/"+mine+"/invoke", body).ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
			s.Step("WF-007", "ID-016")
			other.Post(ctx, "/workflows/"+mine+"/invoke", body).ExpectError(http.StatusNotFound, "not_found")
			if theirs != "" {
				c.Post(ctx, "/workflows/"+theirs+"/invoke", body).ExpectError(http.StatusNotFound, "not_found")
			}
			s.Step("WF-007")
			c.Post(ctx, "/workflows/"+t.key+"/invoke", map[string]any{inputsKey(c): t.inputs, "max_credits": 1}).ExpectError(http.StatusNotFound, "not_found")
			c.Post(ctx, "/workflows/templates/"+mine+"/invoke", body).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule("WF-008", "WF-010").It("the invoke body is strict and inputs are checked against inputs_schema", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
			tpls := openRows(r)
			if len(tpls) == 0 {
				s.Lacks("the target lists no workflow template")
			}
			t := answer.AsObject(r, tpls[0], "templates[0]")
			key, ok := templateKey(c, t)
			if !ok {
				s.Lacks("%s", noTemplateKey)
			}
			example := answer.AsObject(r, t[c.Shape("workflow.example_inputs")], "the template's example inputs")
			path := "/workflows/templates/" + key + "/invoke"
			extra := unknownKey()
			s.Step("WF-008")
			e := c.Post(ctx, path, map[string]any{inputsKey(c): example, "max_credits": 100000, extra: 1}, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
			refusal.ExpectField(e, extra)
			// max_credits is required on every spend call (Limits: required, no default); that inputs
			// is too is the reference's choice for a body the text does not show.
			c.Post(ctx, path, map[string]any{inputsKey(c): example}, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
			if !s.Strict() {
				return // WF-010 reads the reference's inputs_schema: judged only with --strict
			}
			c.Post(ctx, path, map[string]any{"max_credits": 100000}, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
			s.Step("WF-010")
			bad := catalogue.Clone(example)
			bad[extra] = "x"
			c.Post(ctx, path, map[string]any{inputsKey(c): bad, "max_credits": 100000}).ExpectError(http.StatusBadRequest, "invalid_config")
		})

		f.Rule("WF-009", "WF-004", "WF-005", "WF-006").It("max_credits must cover every step padded; an invoke answers 201 with Location and the queued run", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			t := wfPick(ctx, s, sp.c, "", nil)
			path := "/workflows/templates/" + t.key + "/invoke"
			s.Step("WF-009")
			e := sp.c.Post(ctx, path, map[string]any{inputsKey(sp.c): t.inputs, "max_credits": t.need - 1}).ExpectError(http.StatusPaymentRequired, "max_credits_exceeded")
			Expect(e.String("error.limit.bound_by")).To(Equal("max_credits"), e.Describe())
			Expect(e.Int("error.limit.required_credits")).To(Equal(t.need), "WF-009: required_credits is the same number whatever max_credits was sent"+e.Describe())
			Expect(t.need).To(BeNumerically(">=", len(t.nodes)), "every step is priced at least 1 padded credit"+e.Describe())
			s.Step("WF-004")
			r, id := wfInvoke(ctx, s, sp.c, t)
			Expect(id).To(MatchRegexp(judge.IDPattern("wfr_")), r.Describe())
			s.ReferenceOnly("WF-004", "an invoke answers Cache-Control: no-store", func() {
				Expect(r.Header.Get("Cache-Control")).To(Equal("no-store"), "WF-004"+r.Describe())
			})
			// The invoke's body is not shown: the reference's (WF-005, WF-006) is its own choice.
			s.Step("WF-005")
			s.ReferenceOnly("WF-005", "the invoke answer is the queued run with open credits", func() {
				Expect(r.Field("ok")).To(Equal(true), r.Describe())
				Expect(r.String("status")).To(Equal("queued"), "WF-005"+r.Describe())
				credits := answer.ObjectAt(r, "credits")
				Expect(credits["credits_charged"]).To(BeNil(), "WF-005"+r.Describe())
				Expect(credits["settlement"]).To(Equal("open"), "WF-005"+r.Describe())
				Expect(credits["terminal"]).To(Equal(false), "WF-005"+r.Describe())
				Expect(credits).To(HaveKey("credits_estimated"), "WF-005"+r.Describe())
				Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
				Expect(r.String("summary")).NotTo(BeEmpty(), r.Describe())
			})
			s.Step("WF-006")
			s.ReferenceOnly("WF-006", "a template invoke answers workflow_id null and its template_key", func() {
				Expect(r.Field("workflow_id")).To(BeNil(), "WF-006: a template invoke has no workflow_id"+r.Describe())
				Expect(r.String("template_key")).To(Equal(t.key), "WF-006"+r.Describe())
			})
		})

		f.Rule("WF-009", "WF-004", "WF-023").Needs(framework.Spends, framework.Profile).It("a saved workflow needs the sum of its steps' own padded estimates, each step padded on its own; it holds and charges each step as estimated", func(ctx context.Context, s *framework.Spec) {
			savedWorkflowCharges(ctx, s, false)
		})

		f.Rule("GEN-014").Needs(framework.Spends, framework.Control).It("a saved workflow's steps are each priced as the estimate of their own config", func(ctx context.Context, s *framework.Spec) {
			// The spec saves the steps itself, so it knows each step's config and estimates it: a
			// saved workflow the profile declares shows the suite no step's config.
			savedWorkflowCharges(ctx, s, true)
		})

		f.Rule("WF-031").It("spend caps and the balance refuse an invoke with 402", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				// The profile's keys: one whose 24-hour budget (a spend cap) is below the invoke's
				// padded price, and one of a workspace whose balance is.
				bc := s.RoleKey(framework.BudgetKey)
				t := wfPick(ctx, s, bc, "", nil)
				path := "/workflows/templates/" + t.key + "/invoke"
				if budget := s.BudgetKeyCredits(); t.need <= budget {
					framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: budget_key_credits %d is at or above the invoke's price of %d: declare a budget key with a smaller budget", budget, t.need)))
				}
				e := bc.Post(ctx, path, map[string]any{inputsKey(bc): t.inputs, "max_credits": t.need}).ExpectError(http.StatusPaymentRequired, "spend_limit_exceeded")
				Expect(e.String("error.limit.bound_by")).To(Equal("api_key_budget"), e.Describe())
				lc := s.RoleKey(framework.LowBalanceKey)
				t = wfPick(ctx, s, lc, "", nil)
				if avail := availableOf(ctx, lc); t.need <= avail {
					framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: the workspace of low_balance_key holds %d credits, enough for the invoke's price of %d: declare a key of a workspace holding less", avail, t.need)))
				}
				e = lc.Post(ctx, "/workflows/templates/"+t.key+"/invoke", map[string]any{inputsKey(lc): t.inputs, "max_credits": t.need}).
					ExpectError(http.StatusPaymentRequired, "insufficient_credits")
				Expect(e.Int("error.shortfall")).To(BeNumerically(">", 0), e.Describe())
				return
			}
			sp := newSpender(ctx, s)
			t := wfPick(ctx, s, sp.c, "", nil)
			path := "/workflows/templates/" + t.key + "/invoke"
			body := map[string]any{inputsKey(sp.c): t.inputs, "max_credits": t.need}
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 0})
			e := sp.c.Post(ctx, path, body).ExpectError(http.StatusPaymentRequired, "spend_limit_exceeded")
			Expect(e.String("error.limit.bound_by")).To(Equal("org_per_generation"), e.Describe())
			s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": nil})
			s.SetCredits(ctx, sp.ws.ID, int(t.need-1))
			e = sp.c.Post(ctx, path, body).ExpectError(http.StatusPaymentRequired, "insufficient_credits")
			Expect(e.Int("error.shortfall")).To(BeNumerically(">", 0), e.Describe())
		})
	})
}

// workflowRunIDSpecs registers the specs of workflow run ids.
func workflowRunIDSpecs(f *framework.Framework) {
	Describe("workflows: run ids", func() {
		f.Rule("ID-006", "ID-007").It("a template invoke answers a wfr_ id named by its Location, with workflow_id null; listed runs carry wf_ ids or null", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			s.Step("ID-007")
			run, id := cheapestTemplateRun(ctx, s, sp.c)
			Expect(id).To(MatchRegexp(judge.IDPattern("wfr_")), run.Describe())
			s.Step("ID-006")
			if _, has := run.Lookup("workflow_id"); has || s.Strict() {
				Expect(run.Field("workflow_id")).To(BeNil(), "a template invoke runs no saved workflow"+run.Describe())
			}
			r := sp.c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
			Expect(runView(r).String("workflow_run_id")).To(Equal(id), r.Describe())
			if w, has := runView(r).Lookup("workflow_id"); has || s.Strict() { // the run record is not shown
				Expect(w).To(BeNil(), "a template's run names no saved workflow"+r.Describe())
			}
			runsList(ctx, s, sp.c)
			rows, _ := paging.Walk(ctx, sp.c, "/workflow-runs", paging.Open, 0, 20)
			runIDs := paging.IDs(rows, "workflow_run_id") // the run record is not shown: its id by its prefix
			Expect(runIDs).To(ContainElement(id))
			for _, rid := range runIDs {
				Expect(rid).To(MatchRegexp(judge.IDPattern("wfr_")))
			}
			for _, row := range rows {
				if w := row["workflow_id"]; w != nil {
					Expect(w).To(MatchRegexp(judge.IDPattern("wf_")))
				}
			}
		})
	})
}

// workflowRunSpecs registers the specs of a run's course and its completed events. The specs of
// runs are over three functions under one container text, the prefix of their spec names
// (workflowRunOutcomeSpecs in workflows_outcomes.go, workflowRunReadSpecs).
func workflowRunSpecs(f *framework.Framework) {
	Describe("workflows: runs", func() {
		f.Rule("WF-011", "WF-012", "WF-013", "WF-014", "WF-015", "WF-016", "WF-017", "WF-018", "WF-024", "WF-025", "WF-026", "GEN-051", "GEN-052").It(
			"a run goes queued, running, completed, its steps are workflow generations and only deliverables are listed", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				t := wfPick(ctx, s, sp.c, "", nil)
				_, id := wfInvoke(ctx, s, sp.c, t)
				first := sp.c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
				s.Step("WF-012", "WF-013", "WF-014", "WF-015", "WF-017", "WF-024", "WF-025")
				run := wfCheckRun(s, first)
				s.Step("WF-011")
				s.ReferenceOnly("WF-011", "the run read's layout", func() {
					for _, k := range []string{"workflow_run_id", "workflow_id", "template_key", "status", "still_running", "credits", "nodes", "created_at", "started_at", "finished_at", "summary"} {
						Expect(run).To(HaveKey(k), "WF-011: the run carries "+k+first.Describe())
					}
					Expect(first.String("next_action")).NotTo(BeEmpty(), "WF-011"+first.Describe())
					Expect(run["workflow_run_id"]).To(Equal(id), first.Describe())
				})
				s.Step("WF-016")
				if s.HasControl() {
					// The clock has not moved: nothing can have started.
					Expect(run["status"]).To(Equal("queued"), "WF-016: a run reads queued when created"+first.Describe())
				}
				s.Step("WF-012", "WF-013", "WF-014", "WF-015", "WF-017", "WF-024", "WF-025")
				final, seen := wfFinish(ctx, s, sp.c, id)
				s.Step("WF-016")
				if s.HasControl() {
					Expect(seen).To(ContainElement("running"), "WF-016: a run reads running while a step works")
				}
				run = runRecord(final)
				s.Step("WF-018")
				Expect(run["status"]).To(Equal("completed"), "WF-018: every step finished"+final.Describe())
				s.ReferenceOnly("WF-025", "a finished run read's started_at", func() {
					Expect(run["started_at"]).To(BeAssignableToTypeOf(""), final.Describe())
				})
				if charged, ok := runCharge(s, final); ok { // the run record is not shown: judged where it carries credits
					Expect(charged).To(Equal(wfSumCredits(run)), "the run's charge is the sum of its nodes'"+final.Describe())
				}
				nodes := wfNodes(final, run)
				listedRows := wfListed(ctx, sp.c)
				s.Step("WF-026", "GEN-051", "GEN-052", "WF-018")
				for _, n := range t.nodes {
					node := nodes[n.id]
					Expect(node).NotTo(BeNil(), "the run lists node "+n.id+final.Describe())
					Expect(node["status"]).To(Equal("completed"), final.Describe())
					gens := wfGenIDs(final, node)
					Expect(gens).NotTo(BeEmpty(), "a completed node names its generations"+final.Describe())
					for _, g := range gens {
						Expect(g).To(MatchRegexp(genIDPattern), final.Describe())
						gr := readGen(ctx, sp.c, g)
						// The Generation table has no source or workflow_run_id: checked when the read has them.
						if _, has := gr.Lookup("generation.source"); has {
							Expect(gr.String("generation.source")).To(Equal("workflow"), "WF-026: a step's source is workflow"+gr.Describe())
						}
						if _, has := gr.Lookup("generation.workflow_run_id"); has {
							Expect(gr.String("generation.workflow_run_id")).To(Equal(id), "WF-026: a step names its run"+gr.Describe())
						}
						p, _ := gr.Lookup("generation.purpose") // not in the Generation table
						purpose, _ := p.(string)
						listed := false
						for _, row := range listedRows {
							if row["generation_id"] == g {
								listed = true
								if v, has := row["source"]; has {
									Expect(v).To(Equal("workflow"), "GEN-051: a listed step has source workflow")
								}
							}
						}
						switch {
						case p == nil && !listed:
							// No purpose on the read (not in the Generation table): a step left out of
							// the list may be a preview or an intermediate.
						case purpose == "preview" || purpose == "intermediate":
							Expect(listed).To(BeFalse(), "GEN-052: step "+g+" ("+purpose+") is not listed")
						default:
							Expect(listed).To(BeTrue(), "GEN-051: step "+g+" (purpose "+fmt.Sprint(p)+") is listed with source workflow")
						}
					}
				}
			})

		f.Rule("EVT-004", "EVT-010", "EVT-031", "EVT-001", "EVT-024", "EVT-026", "DLV-029").It("a completed run sends workflow_run.completed and each step its own generation event, once", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed", "generation.completed", "generation.failed")
			t := wfPick(ctx, s, sp.c, "", nil)
			_, id := wfInvoke(ctx, s, sp.c, t)
			final, _ := wfFinish(ctx, s, sp.c, id)
			run := runRecord(final)
			st := run["status"].(string)
			Expect(st).To(BeElementOf("completed", "partial"), "the run ended without faults"+final.Describe())
			s.Step("EVT-004", "EVT-031")
			wfAwaitRunEvent(ctx, s, h, "workflow_run.completed", id, st)
			s.Step("DLV-029")
			expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "workflow_run.completed", ResourceID: id}, 1, "a run ends once: its workflow_run.completed reaches the endpoint once")
			s.Step("EVT-010")
			for _, node := range wfNodes(final, run) {
				for _, g := range wfGenIDs(final, node) {
					ev, err := s.Hooks().Await(ctx, receiver.Match{Path: h.path, ResourceID: g}, arrival(s))
					Expect(err).NotTo(HaveOccurred(), "EVT-010: no generation event for step "+g)
					data := checkEnvelope(s, ev)
					Expect(data["workflow_run_id"]).To(Equal(id), "EVT-010: a step's event names its run: "+string(ev.Raw))
					// A step's event carries what the text fixes for any generation's event.
					s.Step("EVT-001", "EVT-026")
					expectEventFixed(ev, data)
					// "batch_group_id, batch_index (null unless a fanned-out sibling)": a step that is
					// not a sibling (no batch_group_id) has no position either.
					s.Step("EVT-024")
					if data["batch_group_id"] == nil {
						Expect(data["batch_index"]).To(BeNil(), "EVT-024: batch_index is null on a step's event outside a batch: "+string(ev.Raw))
					}
					s.Step("DLV-029")
					expectOnce(ctx, s, sp.c, h, receiver.Match{ResourceID: g}, 1, "a step's generation event reaches the endpoint once")
					s.Step("EVT-010")
				}
			}
		})
	})
}

// workflowRunReadSpecs registers the specs of reading runs: no wait endpoint, the run list and its
// filters, and another workspace's run.
func workflowRunReadSpecs(f *framework.Framework) {
	Describe("workflows: runs", func() {
		f.Rule("WF-027").Needs(framework.Spends, framework.SecondWorkspace).It("there is no wait endpoint for runs: the caller's own running and finished runs, and another workspace's, answer 404 there", func(ctx context.Context, s *framework.Spec) {
			var sp spender
			var mine, theirs string
			if s.HasControl() {
				// Runs of a saved workflow, each in a workspace of its own.
				other := newSpender(ctx, s)
				sp = newSpender(ctx, s)
				steps := cheapSteps(ctx, sp.c)
				_, need := stepsPrice(ctx, sp.c, steps)
				var want int64
				for _, n := range need {
					want += n
				}
				invoke := func(c spender) string {
					wf := saveWorkflow(ctx, s, c.ws.ID, steps)
					s.Spend(int(want))
					inv := c.c.Post(ctx, "/workflows/"+wf+"/invoke", map[string]any{inputsKey(c.c): map[string]any{}, "max_credits": want})
					DeferCleanup(func(ctx SpecContext) { s.Advance(ctx, 3600) })
					return expectInvoked(s, inv)
				}
				theirs = invoke(other)
				mine = invoke(sp)
			} else {
				// Template runs (a run is a run, saved workflow or template): the run key's own, and
				// one of the profile's second workspace.
				sp = newSpender(ctx, s)
				_, theirs = cheapestTemplateRun(ctx, s, s.OtherClient())
				_, mine = cheapestTemplateRun(ctx, s, sp.c)
			}
			// The run exists and is the caller's: GET /workflow-runs/{id} reads it, so a 404 on /wait is
			// about the route, not the id.
			sp.c.Get(ctx, "/workflow-runs/"+mine).ExpectOK(http.StatusOK)
			sp.c.Get(ctx, "/workflow-runs/"+mine+"/wait", framework.Invalid()).ExpectError(http.StatusNotFound, "not_found")
			sp.c.Get(ctx, "/workflow-runs/"+theirs+"/wait", framework.Invalid()).ExpectError(http.StatusNotFound, "not_found")
			wfFinish(ctx, s, sp.c, mine)
			sp.c.Get(ctx, "/workflow-runs/"+mine+"/wait", framework.Invalid()).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule("WF-029", "CORE-013").It("GET /workflow-runs lists runs without nodes or links, filters on status and workflow_id and refuses an invalid status", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			c := sp.c
			// An empty list proves nothing about its rows: list at least one run of the workspace.
			if len(runsList(ctx, s, c)) == 0 {
				wfInvoke(ctx, s, c, wfPick(ctx, s, c, "", nil))
			}
			s.Step("WF-029")
			r := c.Get(ctx, "/workflow-runs").ExpectOK(http.StatusOK)
			Expect(openRows(r)).NotTo(BeEmpty(), "the workspace's run is listed"+r.Describe())
			s.ReferenceOnly("WF-029", "the run list's layout: ok, next_cursor, rows without nodes", func() {
				Expect(r.Field("ok")).To(Equal(true), r.Describe())
				Expect(r.Doc()).To(HaveKey("next_cursor"), r.Describe())
				for i, v := range openRows(r) {
					Expect(answer.AsObject(r, v, fmt.Sprintf("run row %d", i))).NotTo(HaveKey("nodes"), "a list row carries no nodes"+r.Describe())
				}
			})
			s.Step("CORE-013")
			for i, v := range openRows(r) {
				answer.NoLinks(answer.AsObject(r, v, fmt.Sprintf("run row %d", i)), fmt.Sprintf("run row %d", i))
			}
			s.Step("WF-029")
			if !s.Strict() {
				return // the run list's filters are the reference's (WF-029): judged only with --strict
			}
			for _, st := range []string{"completed", "failed", "queued"} {
				f := c.Get(ctx, "/workflow-runs", framework.Query("status", st)).ExpectOK(http.StatusOK)
				for i, v := range openRows(f) {
					Expect(answer.AsObject(f, v, fmt.Sprintf("run row %d", i))["status"]).To(Equal(st), "status filters the list"+f.Describe())
				}
			}
			wf := c.Get(ctx, "/workflow-runs", framework.Query("workflow_id", "wf_"+framework.RandomHex(32))).ExpectOK(http.StatusOK)
			Expect(openRows(wf)).To(BeEmpty(), "an unknown workflow_id matches no run"+wf.Describe())
			e := c.Get(ctx, "/workflow-runs", framework.Query("status", "done"), framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
			refusal.ExpectField(e, "status")
		})

		f.Rule("WF-030").It("an unknown or another workspace's run answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			sp.c.Get(ctx, "/workflow-runs/wfr_"+framework.RandomHex(32)).ExpectError(http.StatusNotFound, "not_found")
			t := wfPick(ctx, s, sp.c, "", nil)
			_, id := wfInvoke(ctx, s, sp.c, t)
			s.OtherClient().Get(ctx, "/workflow-runs/"+id).ExpectError(http.StatusNotFound, "not_found")
			sp.c.Get(ctx, "/workflow-runs/"+id).ExpectOK(http.StatusOK)
		})
	})
}

// workflowRunEventSpecs registers the specs of workflow run events.
func workflowRunEventSpecs(f *framework.Framework) {
	Describe("workflows: run events", func() {
		f.Rule("EVT-029", "EVT-030", "DLV-029").Needs(framework.Receiver, framework.Spends).It("a run's end event carries the documented run data and nodes with ids only, once", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "workflow_run.completed", "workflow_run.failed")
			key, inputs, nodeIDs, need := cheapestTemplate(ctx, s, sp.c)
			s.Spend(int(need))
			id := expectInvoked(s, sp.c.Post(ctx, "/workflows/templates/"+key+"/invoke", map[string]any{inputsKey(sp.c): inputs, "max_credits": need}))
			final := finishRun(ctx, s, sp.c, id)
			status := runStatus(final)
			eventType := "workflow_run.completed"
			if status == "failed" || status == "canceled" {
				eventType = "workflow_run.failed"
			}
			ev, err := s.Hooks().Await(ctx, receiver.Match{Type: eventType, Path: h.path, ResourceID: id}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no "+eventType+" for run "+id+" (it ended "+status+")")
			data := checkEnvelope(s, ev)
			raw := string(ev.Raw)

			s.Step("EVT-029")
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

			s.Step("EVT-030")
			nodes, _ := data["nodes"].([]any)
			if len(nodeIDs) > 0 { // the template's nodes, where its (not shown) record lists them
				Expect(nodes).To(HaveLen(len(nodeIDs)), "one entry per node of the template: "+raw)
			}
			Expect(nodes).NotTo(BeEmpty(), "a run's end event lists its nodes: "+raw)
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
			if len(nodeIDs) > 0 { // the template's nodes, where its (not shown) record lists them
				Expect(seen).To(ConsistOf(nodeIDs), "the event names the template's nodes: "+raw)
			}
			s.Step("DLV-029")
			expectOnce(ctx, s, sp.c, h, receiver.Match{ResourceID: id}, 1, "the run's end event reaches the endpoint once")
		})
	})
}

// recoveredRenderSpecs registers the specs of recovered renders.
func recoveredRenderSpecs(f *framework.Framework) {
	Describe("workflows: recovered renders", func() {
		f.Rule("EVT-015", "EVT-026").Needs(framework.Spends, framework.Receiver, framework.TestInputs, framework.RealTime).WaitsOut(recoverAfter).It("a generation that sent generation.failed sends generation.completed when it is recovered", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			h := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed")
			d := catalogue.ImageModel(ctx, sp.c)
			capID := d.String("capability_id")
			// Recovering a failed render is an operator's act: control's job hook, or a recover test input.
			ti, forced := s.AppAct(sp.c, framework.Outcome{Kind: "recover", Seconds: int(recoverAfter.Seconds())})
			if !forced {
				s.QueueFault(ctx, "render_fail", capID, 1, "")
			}
			j := submit(ctx, s, ti, capID, catalogue.CheapConfig(d), nil)
			w := s.Finish(ctx, sp.c, j.id)
			Expect(w.String("generation.status")).To(Equal("failed"), "the render was written off"+w.Describe())
			failed, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.failed", Path: h.path, ResourceID: j.id}, arrival(s))
			Expect(err).NotTo(HaveOccurred(), "no generation.failed for "+j.id)
			if !forced {
				s.JobHook(ctx, j.id, "recover", nil)
			}
			done, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.completed", Path: h.path, ResourceID: j.id}, arrival(s)+time.Duration(float64(recoverAfter)/s.TimeScale()))
			Expect(err).NotTo(HaveOccurred(), "no generation.completed for the recovered "+j.id)
			Expect(done.ID).NotTo(Equal(failed.ID), "the later event is a delivery of its own")
			data := checkEnvelope(s, done)
			Expect(data["status"]).To(Equal("completed"), string(done.Raw))
			// The later event is a generation.completed like any other: its error is null ("error
			// ({ code, message } on generation.failed, else null)"), not the write-off's error kept
			// on the recovered row, and its charge was captured.
			s.Step("EVT-026", "EVT-015")
			expectEventFixed(done, data)
			s.Step("EVT-015")
			Expect(readGen(ctx, sp.c, j.id).String("generation.status")).To(Equal("completed"), "the later event is the truth")
			// One stated move, each event once: the recovery sends generation.completed, not the
			// failure again (issue 37 item 2).
			expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "generation.failed", ResourceID: j.id}, 1, "generation.failed is sent once, not again on recovery")
			expectOnce(ctx, s, sp.c, h, receiver.Match{Type: "generation.completed", ResourceID: j.id}, 1, "the recovery sends generation.completed once")
		})
	})
}
