package framework

import (
	"context"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
)

// Helpers for the specs that follow generations: moving the service clock, driving a job to its end,
// waits that block on the service clock, file links and the control hooks of jobs and faults.

// finishStep is how far Finish moves the service clock between two reads of a running job.
const finishStep = 5

// finishLimit is the most service time Finish lets a job run before it fails the spec.
const finishLimit = 2 * time.Hour

// SetWaitCheck makes check run on every 200 answer of GET /generations/{id}/wait the run's calls
// get (Client.Do, Finish, WaitAdvancing): the specs read there what they read on every generation
// read (the fixed values of the record inside, issue 37 item 1). Call it once, before the run.
func (f *Framework) SetWaitCheck(check func(*Response)) { f.waitCheck = check }

// waitAnswer matches the path of a generation wait.
var waitAnswer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/generations/[^/?]+/wait(\?|$)`) })

// checkWait runs the wait check (SetWaitCheck) on r when it is a 200 answer of a generation wait.
func (f *Framework) checkWait(method string, r *Response) {
	GinkgoHelper()
	if f.waitCheck == nil || r == nil || method != http.MethodGet || r.Status != http.StatusOK {
		return
	}
	if u, err := url.Parse(r.Exchange.URL); err == nil && waitAnswer().MatchString(u.Path) {
		f.waitCheck(r)
	}
}

// HasControl reports whether the run can use the control API.
func (s *Spec) HasControl() bool { return s.f.Capabilities().Control }

// APIPath returns the path below the service origin of an API path ("/generations/x" ->
// "/api/v1/generations/x"), as a Location header names it.
func (s *Spec) APIPath(p string) string {
	return strings.TrimRight(s.f.apiRoot.Path, "/") + "/" + strings.TrimLeft(p, "/")
}

// Advance moves the service clock forward through control, failing the spec when control refuses.
func (s *Spec) Advance(ctx context.Context, seconds float64) {
	GinkgoHelper()
	Expect(s.Control().AdvanceClock(ctx, seconds)).To(Succeed(), "advance the service clock")
}

// Finish drives generation id to its end and returns the final answer of GET
// /generations/{id}/wait (200, still_running false), read with c.
//
// With control it reads the generation (which answers at once) and, while its status is still a
// running one, moves the service clock forward a few seconds at a time; once the status is
// completed or failed it calls the wait, which must answer at once. Without control it calls the
// wait again and again (each call blocks about 18 s of service time) until still_running is false.
// Either way it fails the spec after finishLimit of service time.
func (s *Spec) Finish(ctx context.Context, c *Client, id string) *Response {
	GinkgoHelper()
	if s.HasControl() {
		var r *Response
		for elapsed := 0; ; elapsed += finishStep {
			r = c.Get(ctx, "/generations/"+id).ExpectOK(http.StatusOK)
			st := r.String("generation.status")
			if st == "completed" || st == "failed" {
				break
			}
			Expect(time.Duration(elapsed)*time.Second).To(BeNumerically("<", finishLimit),
				fmt.Sprintf("generation %s still %s after %s of service time", id, st, finishLimit)+r.Describe())
			s.Advance(ctx, finishStep)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		w := c.Get(wctx, "/generations/"+id+"/wait").ExpectOK(http.StatusOK)
		Expect(w.Bool("still_running")).To(BeFalse(), "a finished generation's wait answers still_running false"+w.Describe())
		finalAsRead(r, w)
		return w
	}
	start := time.Now()
	for {
		w := c.Get(ctx, "/generations/"+id+"/wait").ExpectOK(http.StatusOK)
		if !w.Bool("still_running") {
			return w
		}
		Expect(time.Since(start)).To(BeNumerically("<", time.Duration(float64(finishLimit)/s.f.wallScale())),
			"generation "+id+" still running"+w.Describe())
	}
}

// finalAsRead checks that w, a wait answer made after the read r of a finished generation, still
// shows the charge r showed final: "the same shape as the read", and a final charge does not turn
// back, so credits.terminal stays true (GEN-017) and credits_left, which appears once the charge
// is final, is still there (GEN-019).
func finalAsRead(r, w *Response) {
	GinkgoHelper()
	if terminal, _ := r.Field("generation.credits.terminal").(bool); !terminal {
		return
	}
	w.Charge([]string{"GEN-017"}, func() {
		Expect(w.Field("generation.credits.terminal")).To(Equal(true),
			"the read before this wait showed the charge final (credits.terminal true); the wait's generation shows it too"+w.Describe())
	})
	if _, has := r.Lookup("generation.credits_left"); has {
		w.Charge([]string{"GEN-019"}, func() {
			_, has := w.Lookup("generation.credits_left")
			Expect(has).To(BeTrue(), "the read before this wait carried credits_left (the charge is final); the wait's generation carries it too"+w.Describe())
		})
	}
}

// WaitAdvancing calls GET /generations/{id}/wait (with opts) and, while the call has not answered,
// moves the service clock forward step seconds at a time, up to limit seconds in all. It returns
// the answer and the service seconds it advanced before the answer came. It fails the spec when no
// answer came after limit seconds. It needs control.
func (s *Spec) WaitAdvancing(ctx context.Context, c *Client, id string, step, limit float64, opts ...CallOption) (*Response, float64) {
	GinkgoHelper()
	return s.WaitAdvancingFrom(ctx, c, id, step, step, limit, opts...)
}

// WaitAdvancingFrom is WaitAdvancing whose first move is first seconds in one jump (then step at a
// time): for a spec whose verdict needs the moment of the answer only to the step past first (a
// wait answering within the jump shows as an answer after first seconds). Each move waits 50 ms
// (real time) for an answer first, so a jump saves that wait for every step it spans.
func (s *Spec) WaitAdvancingFrom(ctx context.Context, c *Client, id string, first, step, limit float64, opts ...CallOption) (*Response, float64) {
	GinkgoHelper()
	type result struct {
		r   *Response
		err error
	}
	done := make(chan result, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		u := c.f.resolve(c.f.apiRoot, "/generations/"+id+"/wait")
		r, err := c.f.exchange(cctx, c.f.judge, http.MethodGet, u, c.key, c.scheme, opts)
		done <- result{r, err}
	}()
	advanced := 0.0
	for {
		select {
		case res := <-done:
			if res.err != nil {
				c.f.failCall(res.err)
			}
			c.f.checkWait(http.MethodGet, res.r)
			return res.r, advanced
		case <-time.After(50 * time.Millisecond):
		}
		if advanced >= limit {
			cancel()
			res := <-done
			Fail(fmt.Sprintf("GET /generations/%s/wait had not answered after %.0f s of service time (it blocks about %.0f s)", id, advanced, contract.WaitBudget.Seconds()) + describeMaybe(res.r))
		}
		move := step
		if advanced == 0 {
			move = first
		}
		s.Advance(ctx, move)
		advanced += move
	}
}

func describeMaybe(r *Response) string {
	if r == nil {
		return ""
	}
	return r.Describe()
}

// FetchLink makes a GET of a file link without a key: an absolute URL, or a path on the service's
// origin. The exchange is recorded in the transcript but not checked against the REST description:
// file links are served outside it.
func (s *Spec) FetchLink(ctx context.Context, link string) *Response {
	GinkgoHelper()
	u, err := url.Parse(link)
	Expect(err).NotTo(HaveOccurred(), "the file link is not a URL: "+s.f.redactor.String(link))
	if !u.IsAbs() {
		u = s.f.apiRoot.ResolveReference(u)
	}
	r, err := s.f.exchange(ctx, nil, http.MethodGet, u, "", NoAuth, nil)
	if err != nil {
		Fail(err.Error())
	}
	return r
}

// QueueFault queues a fault through control (POST /faults): kind, scoped to capabilityID when not
// empty, affecting count events (0: the default, 1). code is the render_fail error code (empty: the
// default). It fails the spec when control refuses, so a target that cannot inject the fault makes
// the spec fail loudly rather than pass on a fault that never fired.
//
// The fault is scoped to the spec's workspace: the one it made last with NewWorkspace, else the
// workspace of its Client (its own when the run made workspaces), else the run's main workspace
// (so a job another spec left running in another workspace cannot take it); unscoped when the run
// made no workspace.
//
// Before it queues a render_fail it moves the service clock forward an hour, so that every job an
// earlier spec left running has finished and cannot take the fault (specs run one at a time).
func (s *Spec) QueueFault(ctx context.Context, kind, capabilityID string, count int, code string) {
	GinkgoHelper()
	ws := s.workspaceID
	if ws == "" {
		ws = s.home
	}
	if ws == "" {
		ws = s.f.envCopy().workspaceID
	}
	s.QueueFaultIn(ctx, ws, map[string]any{"kind": kind}, capabilityID, count, code)
}

// QueueFaultIn queues a fault as QueueFault does, scoped to workspaceID (empty: every workspace),
// with body holding kind and any kind-specific fields (such as slow_render's seconds).
func (s *Spec) QueueFaultIn(ctx context.Context, workspaceID string, body map[string]any, capabilityID string, count int, code string) {
	GinkgoHelper()
	kind, _ := body["kind"].(string)
	if kind == "render_fail" {
		s.Advance(ctx, 3600)
	}
	if workspaceID != "" {
		body["workspace_id"] = workspaceID
	}
	if capabilityID != "" {
		body["capability_id"] = capabilityID
	}
	if count > 0 {
		body["count"] = count
	}
	if code != "" {
		body["code"] = code
	}
	r, err := s.Control().Call(ctx, http.MethodPost, "/faults", body)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Status).To(Equal(http.StatusCreated), "control POST /faults "+kind+r.Describe())
	DeferCleanup(func(ctx SpecContext) { s.ClearFaults(ctx) })
}

// ClearFaults drops every queued fault through control (DELETE /faults), so that a fault a spec
// queued and the target did not use cannot leak into another spec.
func (s *Spec) ClearFaults(ctx context.Context) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodDelete, "/faults", nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Status).To(Equal(http.StatusOK), "control DELETE /faults"+r.Describe())
}

// JobHook calls a control job operation on a generation (POST /generations/{id}/cancel, fail or
// recover) and returns the answer. It skips the spec with the reason when the control API does not
// offer the operation (an unimplemented hook answers 404 not_found for a generation that exists).
func (s *Spec) JobHook(ctx context.Context, id, op string, body any) *Response {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/generations/"+id+"/"+op, body)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		SkipFor(Unsupported(Control, "the control API does not offer POST /generations/{id}/"+op))
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control POST /generations/{id}/"+op+r.Describe())
	return r
}

// SetCredits sets a workspace's available credits through control.
func (s *Spec) SetCredits(ctx context.Context, workspaceID string, available int) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/credits", map[string]any{"set": available})
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Status).To(Equal(http.StatusOK), "control POST /workspaces/{id}/credits"+r.Describe())
}

// SetLimits changes a workspace's spend limits through control (PATCH /workspaces/{id} with
// limits); a nil value restores the default.
func (s *Spec) SetLimits(ctx context.Context, workspaceID string, limits map[string]any) {
	GinkgoHelper()
	Expect(s.Control().PatchWorkspace(ctx, workspaceID, map[string]any{"limits": limits})).To(Succeed())
}

// PatchKey changes a key through control (PATCH /keys/{key_id}).
func (s *Spec) PatchKey(ctx context.Context, keyID string, body map[string]any) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPatch, "/keys/"+keyID, body)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Status).To(Equal(http.StatusOK), "control PATCH /keys/{id}"+r.Describe())
}
