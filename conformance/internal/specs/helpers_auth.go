package specs

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// Helpers for the authentication matrix: every operation of the REST description, called with a
// real id of the caller's own resource in each path parameter and a body the operation accepts.

// ownResources are the caller's own resources the matrix puts in path parameters: with real ids a
// route that forgot its key check answers 200, where a random id would answer a 404 that passes
// for a refusal. Made by makeOwnResources.
type ownResources struct {
	// ids maps a path template of the description to the id for its one parameter.
	ids map[string]string
	// stand is why a template's id is not one of the caller's resources (the run cannot make one);
	// such a route is still probed with a well-formed id, and an accepted key then reads 404.
	stand map[string]string
	// bodies maps "METHOD /template" to the body of an accepted request.
	bodies map[string]any
	// hookID is the caller's webhook endpoint, "" when the run has no receiver to register one.
	hookID string
	// link is a file link of the caller's output (served outside the API root, keyless).
	link string
}

// makeOwnResources makes one of each resource the description's paths name, with c (a
// read+generate key) in workspaceID ("" without control): a finished tts generation and its output,
// a batch, a finished workflow run, an upload reservation, a webhook endpoint and a saved workflow;
// and reads a capability, a preset and a workflow template. What the run cannot make (a batch
// renders video, which a keys-only run skips unless --slow; a saved workflow needs control; an
// endpoint needs the receiver) gets a stand-in id, noted in stand.
func makeOwnResources(ctx context.Context, s *framework.Spec, c *framework.Client, workspaceID string) ownResources {
	GinkgoHelper()
	o := ownResources{ids: map[string]string{}, stand: map[string]string{}, bodies: map[string]any{}}
	for _, row := range catalogue.Rows(ctx, c) {
		if row["status"] == "available" {
			o.ids["/capabilities/{id}"] = row["capability_id"].(string)
			break
		}
	}
	for _, row := range catalogue.PresetRows(ctx, c) {
		if row["status"] == "available" {
			o.ids["/presets/{id}/templates"] = row["capability_id"].(string)
			break
		}
	}
	Expect(o.ids).To(HaveKey("/capabilities/{id}"), "the catalogue lists an available capability")
	if _, ok := o.ids["/presets/{id}/templates"]; !ok {
		s.Lacks("no available preset: GET /presets/{id}/templates cannot be probed with a real id")
	}

	cfg := catalogue.TTSConfig(ctx, c)
	j := submit(ctx, s, c, "tts", cfg, nil)
	// Without control the tts and the workflow run render on the target's own clock (20 s and
	// 35 s on the reference at real time): the run is invoked while the tts renders, so the two
	// waits overlap instead of adding up. The text keeps one generation at a time per key for a
	// submit; a target that refuses the invoke while the tts runs gets it again after the tts.
	key, inputs, _, need, lack := findCheapestTemplate(ctx, c)
	var invoke map[string]any
	runID := ""
	if lack == "" {
		invoke = map[string]any{inputsKey(c): inputs, "max_credits": need}
		s.Spend(int(need))
		if !s.HasControl() && !s.Slow() { // with --slow a video batch renders next, after the tts
			if r := c.Post(ctx, "/workflows/templates/"+key+"/invoke", invoke); !refusedWhileBusy(r) {
				runID = expectInvoked(s, r)
			}
		}
	}
	s.Finish(ctx, c, j.id)
	g := readGen(ctx, c, j.id)
	o.ids["/generations/{id}"], o.ids["/generations/{id}/wait"] = j.id, j.id
	if v, has := g.Lookup("generation.outputs.0.asset_id"); has && v != nil {
		asset := g.String("generation.outputs.0.asset_id")
		o.ids["/assets/{id}"], o.ids["/assets/{id}/download"] = asset, asset
	} else {
		// The outputs table does not list asset_id: the asset routes get a well-formed stand-in.
		stand := "ast_" + framework.RandomHex(32)
		o.ids["/assets/{id}"], o.ids["/assets/{id}/download"] = stand, stand
		o.stand["/assets/{id}"] = "the generation's outputs carry no asset_id: the asset routes are probed with a well-formed ast_ id"
		o.stand["/assets/{id}/download"] = o.stand["/assets/{id}"]
	}
	if links := outputLinks(g, "generation"); len(links) > 0 {
		o.link = links[0]
	}

	if s.HasControl() || s.Slow() {
		b := videoBatch(ctx, s, c)
		finishAll(ctx, s, c, b.ids)
		o.ids["/batches/{id}"] = b.r.String("batch_group_id")
	} else {
		o.ids["/batches/{id}"] = j.id
		o.stand["/batches/{id}"] = "a batch renders video, which this run skips (no control, no --slow): the batch route is probed with the spec's own gen_ id"
	}

	if lack == "" {
		o.ids["/workflows/templates/{key}/invoke"] = key
		o.bodies["POST /workflows/templates/{key}/invoke"] = invoke
		o.bodies["POST /workflows/{id}/invoke"] = invoke
		if runID == "" {
			runID = expectInvoked(s, c.Post(ctx, "/workflows/templates/"+key+"/invoke", invoke))
		}
		finishRun(ctx, s, c, runID)
		o.ids["/workflow-runs/{id}"] = runID
	} else {
		// No template to invoke: the template and run routes are probed with well-formed stand-ins
		// and a body of the reference's invoke fields (a key is checked before the body).
		key = "conformance_template"
		o.ids["/workflows/templates/{key}/invoke"] = key
		o.ids["/workflow-runs/{id}"] = "wfr_" + framework.RandomHex(32)
		invoke := invokeStandIn(c, 1)
		o.bodies["POST /workflows/templates/{key}/invoke"] = invoke
		o.bodies["POST /workflows/{id}/invoke"] = invoke
		why := lack + ": the template and run routes are probed with a well-formed key and wfr_ id"
		o.stand["/workflows/templates/{key}/invoke"], o.stand["/workflow-runs/{id}"] = why, why
	}

	if workspaceID != "" {
		r, err := s.Control().Call(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/workflows", map[string]any{"template_key": key})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Status).To(Equal(http.StatusCreated), "control: save a workflow from the template"+r.Describe())
		o.ids["/workflows/{id}/invoke"] = r.String("workflow_id")
	} else {
		o.ids["/workflows/{id}/invoke"] = "wf_" + framework.RandomHex(32)
		o.stand["/workflows/{id}/invoke"] = "workflows are saved in the app (or through control): the saved-workflow route is probed with a well-formed wf_ id"
	}

	o.ids["/uploads/{assetId}/finalize"] = c.Post(ctx, "/uploads", uploads.Reservation()).ExpectOK(http.StatusCreated).String("asset_id")

	hookBody := map[string]any{"url": "https://hooks.example.com/mediaspec", "events": []string{"generation.completed"}}
	if s.HasReceiver() {
		h := registerHook(ctx, s, c, "generation.completed")
		o.hookID = h.id
		o.ids["/webhooks/{id}"] = h.id
		_, u := s.Hooks().NewURL()
		hookBody["url"] = u
	} else {
		o.ids["/webhooks/{id}"] = "wh_" + framework.RandomHex(32)
		o.stand["/webhooks/{id}"] = "no receiver to register an endpoint at: the endpoint route is probed with a well-formed wh_ id"
	}

	_, need = estimateOf(ctx, c, "tts", cfg, nil)
	o.bodies["POST /estimates"] = map[string]any{"capability_id": "tts", "config": cfg}
	o.bodies["POST /generations"] = submitBody("tts", catalogue.TTSConfig(ctx, c), need, nil)
	o.bodies["POST /uploads"] = uploads.Reservation()
	o.bodies["POST /uploads/from-url"] = fromURLStandIn(c)
	o.bodies["POST /webhooks"] = hookBody
	o.bodies["POST /uploads/{assetId}/finalize"] = nil
	return o
}

// path is op's path with its parameter filled with the caller's own id; real is false when the id
// is a stand-in (stand says why). It fails the spec on a path parameter the matrix has no id for:
// a new operation of the description must be given one here.
func (o ownResources) path(op framework.Operation) (path string, real bool) {
	GinkgoHelper()
	params := op.Params()
	if len(params) == 0 {
		return op.Path, true
	}
	Expect(params).To(HaveLen(1), "the auth matrix fills one path parameter per operation; "+op.String()+" has more")
	id, ok := o.ids[op.Path]
	Expect(ok).To(BeTrue(), "the auth matrix has no own resource id for "+op.String()+": add one to makeOwnResources")
	_, stand := o.stand[op.Path]
	return strings.Replace(op.Path, "{"+params[0]+"}", id, 1), !stand
}

// call makes op's request with c: the path with own ids, and for a POST the accepted body.
func (o ownResources) call(ctx context.Context, c *framework.Client, op framework.Operation, opts ...framework.CallOption) *framework.Response {
	GinkgoHelper()
	path, _ := o.path(op)
	if op.Method == http.MethodPost {
		body, ok := o.bodies[op.String()]
		Expect(ok).To(BeTrue(), "the auth matrix has no accepted body for "+op.String()+": add one to makeOwnResources")
		if body != nil {
			opts = append([]framework.CallOption{framework.JSONBody(body)}, opts...)
		}
	}
	return c.Do(ctx, op.Method, path, opts...)
}

// keyNotIn fails the spec when the answer carries key, whole or its secret part after sk_live_.
func keyNotIn(r *framework.Response, key string) {
	GinkgoHelper()
	answer.NoKeyIn(r, key)
	if rest, ok := strings.CutPrefix(key, "sk_live_"); ok && len(rest) >= 16 {
		answer.NoKeyIn(r, rest)
	}
}

// keyedOperations is the description's operations that take a key, and those that take none.
func keyedOperations(s *framework.Spec) (keyed, public []framework.Operation) {
	for _, op := range s.Operations() {
		if op.Public {
			public = append(public, op)
		} else {
			keyed = append(keyed, op)
		}
	}
	return keyed, public
}

// refusedWhileBusy reports whether an invoke made while the key's own generation runs was refused
// for that alone: 409 submission_in_flight, or 429 rate_limited for the workspace's renders at
// once (a bucket refusal on a shared key is waited out by the client). The caller invokes again
// once the generation has ended.
func refusedWhileBusy(r *framework.Response) bool {
	switch r.Status {
	case http.StatusConflict, http.StatusTooManyRequests:
		code, _ := r.Lookup("error.code")
		return code == "submission_in_flight" || code == "rate_limited"
	}
	return false
}
