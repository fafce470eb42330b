package framework

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/spec"
)

// Outcome is an outcome a spec forces on the target (Spec.Force): a fault kind of the control
// API's /faults table (spec/control.yaml), which is also a test input (spec/testmode.yaml), with
// the fault's parameters.
type Outcome struct {
	// Kind is the fault kind: render_fail, moderation_block, provider_unavailable, ...
	Kind string
	// CapabilityID scopes the outcome to events of that capability ("" every one).
	CapabilityID string
	// Code is a render_fail's error code ("" the default, provider_error).
	Code string
	// Seconds is a slow_render's extra render time or a slow_scan's scan time.
	Seconds int
	// Count is how many matching events meet the outcome (0: 1).
	Count int
	// Message is a webhook_test's data.message ("" the target's default text); sent
	// percent-encoded.
	Message string
}

// value is the outcome as a test input's header value.
func (o Outcome) value() string {
	parts := []string{o.Kind}
	if o.Code != "" {
		parts = append(parts, "code="+o.Code)
	}
	if o.Seconds > 0 {
		parts = append(parts, fmt.Sprintf("seconds=%d", o.Seconds))
	}
	if o.Count > 0 {
		parts = append(parts, fmt.Sprintf("count=%d", o.Count))
	}
	if o.CapabilityID != "" {
		parts = append(parts, "capability_id="+o.CapabilityID)
	}
	if o.Message != "" {
		parts = append(parts, "message="+url.PathEscape(o.Message))
	}
	return strings.Join(parts, "; ")
}

// Force makes o happen to the next matching events that calls of the returned client cause, the
// least way the target offers (the spec needs TestInputs):
//
//   - with the control API, it queues o as a fault (POST /faults, QueueFaultIn), scoped to the
//     spec's workspace, and returns c: the fault is met by the next matching event of that
//     workspace;
//   - else, with test-mode inputs, it returns a copy of c whose calls carry o as the
//     Mediaspec-Test-Input header (spec/testmode.yaml): only the events those calls cause meet
//     it, so the spec makes the call that should meet o with the returned client and every other
//     call with c. It skips, naming the setting, when c's key is not one of the profile's
//     test_keys;
//   - else it skips with the typed reason of the TestInputs need.
func (s *Spec) Force(ctx context.Context, c *Client, o Outcome) *Client {
	GinkgoHelper()
	caps := s.f.Capabilities()
	switch {
	case caps.Control:
		body := map[string]any{"kind": o.Kind}
		if o.Seconds > 0 {
			body["seconds"] = o.Seconds
		}
		ws := s.workspaceID
		if ws == "" {
			ws = s.home
		}
		if ws == "" {
			ws = s.f.envCopy().workspaceID
		}
		s.QueueFaultIn(ctx, ws, body, o.CapabilityID, o.Count, o.Code)
		return c
	case caps.TestInputs:
		return s.testInputOn(c, o)
	}
	s.lacksTestInputs(caps)
	return nil
}

// testInputOn is a copy of c whose calls carry o as a test input, skipping, naming the setting,
// when c's key is not one of the profile's test_keys.
func (s *Spec) testInputOn(c *Client, o Outcome) *Client {
	GinkgoHelper()
	if !s.f.cfg.IsTestKey(c.key) {
		SkipFor(NotDeclared("unsupported: the key this spec uses is not one of the profile's test_keys, so the target would not honour a test input on it (declare it in test_keys)"))
	}
	return withTestInput(c, o.value())
}

// lacksTestInputs skips with the TestInputs need's typed reason for a run of caps.
func (s *Spec) lacksTestInputs(caps Capabilities) {
	GinkgoHelper()
	r, _ := caps.Lack([]Need{TestInputs})
	SkipFor(r)
}

func withTestInput(c *Client, value string) *Client {
	cp := *c
	cp.with = append(append([]CallOption(nil), c.with...), Header(spec.TestInputHeader, value))
	return &cp
}

// TestInputClient returns a client with a test key of the profile (the run's main key when it is
// one, else the first of test_keys) whose calls carry value, as sent, in the Mediaspec-Test-Input
// header: for a spec about test-mode inputs themselves (spec/testmode.yaml). It skips with the
// typed reason of the TestInputs need unless the target offers test-mode inputs; the control API
// does not stand in for them here.
func (s *Spec) TestInputClient(value string) *Client {
	GinkgoHelper()
	if !s.f.Capabilities().TestInputs {
		SkipFor(Unsupported(TestInputs, "needs test-mode inputs: the profile declares no features: [test-inputs] with its test_keys"))
	}
	key := s.f.envCopy().key
	if !s.f.cfg.IsTestKey(key) {
		key = s.f.cfg.TestKeys[0]
	}
	return withTestInput(s.f.client(key), value)
}

// AppAct arranges the app's act o (Kind "cancel", "recover" or "webhook_test", spec/testmode.yaml) on what the
// returned client's calls start, where the target offers test-mode inputs: it returns a copy of c
// carrying o as the Mediaspec-Test-Input header, and true. With the control API it returns c and
// false: control has no fault for these acts, so the spec does the act itself with control's job
// hooks (JobHook "cancel" or "recover", a run's cancel, an endpoint's Send test), which act at once. It skips, naming the
// setting, when c's key is not one of the profile's test_keys, and with the TestInputs need's
// typed reason when neither is offered.
func (s *Spec) AppAct(c *Client, o Outcome) (*Client, bool) {
	GinkgoHelper()
	caps := s.f.Capabilities()
	switch {
	case caps.Control:
		return c, false
	case caps.TestInputs:
		return s.testInputOn(c, o), true
	}
	s.lacksTestInputs(caps)
	return nil, false
}
