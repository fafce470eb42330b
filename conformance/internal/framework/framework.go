// Package framework is the machinery of the conformance suite: configuration, the validating and
// recording HTTP client, the control-API client, needs and the credit budget, the one wrapper that
// labels every spec with its rule ids and needs, and the rule verdicts and reports built from a
// Ginkgo report.
//
// It speaks HTTP only; it never imports an implementation of the service.
package framework

import (
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"

	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediaspec/mediaspec/spec"
)

// Framework is one conformance run's shared state: the configuration, the documents traffic is
// checked against, the keys the run uses, the budget and the current spec's transcript. Create it
// with New, register its suite nodes with RegisterSuiteNodes, and hand it to the spec registrars.
type Framework struct {
	cfg         Config
	catalogue   *spec.Catalogue
	judge       *spec.Judge     // the API's answers: failures by the text, advisories by the reference
	validator   *spec.Validator // the reference document's validator (judge.Reference())
	ctlValid    *spec.Validator // nil without control access
	apiRoot     *url.URL
	controlRoot *url.URL // nil without control access
	redactor    *Redactor
	transcript  *Transcript
	budget      *Budget
	base        http.RoundTripper
	// reqTimeout bounds every call the suite makes (SetRequestTimeout); 0: only the spec's context.
	reqTimeout time.Duration
	// silentCalls counts calls in a row that had no answer within reqTimeout (timeout.go).
	silentCalls atomic.Int32
	// dripCalls counts the answers of the run whose body was still arriving at the deadline, in a
	// row or not: a target that drip-feeds answers stops the run after maxSilentCalls of them.
	dripCalls atomic.Int32
	step      []string // the running spec's current step's rule ids (steps.go), guarded by mu
	// refNames are the reference-only field names of the description (shapes.go), made once.
	refNames func() map[string]bool
	// waitCheck checks every 200 answer of GET /generations/{id}/wait (SetWaitCheck); set before
	// the run, read only after.
	waitCheck func(*Response)

	mu      sync.Mutex // guards env, caps, created
	env     environment
	caps    Capabilities
	created []string // workspaces this run made through control, deleted at teardown
	hooks   *Hooks   // the webhook receiver, when one runs (receiver.go)

	clock targetClock // what the run knows of the target's clock (clock.go)

	jobs jobTracker // jobs started on shared keys, settled after each spec (jobs.go)

	spread atomic.Uint64 // SpreadClient's turn

	// noReceiver is set (WantReceiver) when no selected spec needs a receiver: Setup then starts
	// none and registers nothing at the target.
	noReceiver atomic.Bool

	memoMu sync.Mutex     // guards memo
	memo   map[string]any // what specs read once per run (Client.Memo)

	adv advisories // differences from the reference's choices (advisory.go)

	refOnly bool // a ReferenceOnly check runs on a run that is not strict (strict.go), guarded by mu
}

// environment is the keys and workspaces the run uses, known after Setup.
type environment struct {
	key, readKey, otherKey string
	workspaceID            string // the main workspace, when the run made it
	otherWorkspaceID       string
}

// New prepares a Framework for cfg: it loads the REST description, the control description (when
// a control URL is set) and the rule catalogue. It makes no network call.
func New(ctx context.Context, cfg Config) (*Framework, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cat, err := spec.LoadRules()
	if err != nil {
		return nil, err
	}
	f := &Framework{
		cfg:        cfg,
		catalogue:  cat,
		redactor:   &Redactor{},
		transcript: &Transcript{},
		budget:     NewBudget(cfg.Budget),
		base:       newTransport(),
	}
	// Every key the profile names, by the one list of its roles (a role added there is hidden too).
	secrets := []string{cfg.ControlToken}
	for _, r := range cfg.roleKeys() {
		secrets = append(secrets, r.key)
	}
	f.redactor.Add(secrets...)
	if f.apiRoot, err = cfg.APIRoot(); err != nil {
		return nil, err
	}
	doc, err := spec.LoadOpenAPI(ctx)
	if err != nil {
		return nil, err
	}
	if f.judge, err = spec.NewJudgeFor(doc, spec.WithBasePath(f.apiRoot.Path)); err != nil {
		return nil, err
	}
	f.validator = f.judge.Reference()
	f.refNames = sync.OnceValue(func() map[string]bool {
		names, err := openshape.ReferenceNames(doc, spec.ControlYAML())
		if err != nil {
			return nil // the embedded documents load; a bad one fails elsewhere first
		}
		return names
	})
	if cfg.ControlURL != "" {
		if f.controlRoot, err = cfg.ControlRoot(); err != nil {
			return nil, err
		}
		ctl, err := spec.LoadControl(ctx)
		if err != nil {
			return nil, err
		}
		if f.ctlValid, err = spec.NewValidator(ctl, spec.WithBasePath(f.controlRoot.Path)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Config returns the run's configuration.
func (f *Framework) Config() Config { return f.cfg }

// Catalogue returns the rule catalogue the run checks.
func (f *Framework) Catalogue() *spec.Catalogue { return f.catalogue }

// Redactor returns the run's redactor; every key the run learns is registered with it.
func (f *Framework) Redactor() *Redactor { return f.redactor }

// Budget returns the run's credit budget.
func (f *Framework) Budget() *Budget { return f.budget }

// Capabilities returns what the run can offer specs; it is complete after Setup.
func (f *Framework) Capabilities() Capabilities {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caps
}

// Setup makes the run's keys: with control access and no key given, it creates a main workspace
// with a read+generate key and a read-only key, and a second workspace with its own key; keys given
// in the configuration are used as they are. It then records what the run can offer.
func (f *Framework) Setup(ctx context.Context) error {
	env := environment{key: f.cfg.Key, readKey: f.cfg.ReadKey, otherKey: f.cfg.OtherKey}
	ctl := f.control()
	if ctl != nil {
		if env.key == "" {
			ws, err := ctl.CreateWorkspace(ctx, WorkspaceOptions{Name: "conformance main"})
			if err != nil {
				return fmt.Errorf("make the main workspace: %w", err)
			}
			f.remember(ws.ID)
			env.workspaceID = ws.ID
			k, err := ctl.CreateKey(ctx, ws.ID, KeyOptions{Name: "conformance", Scopes: []string{"read", "generate"}})
			if err != nil {
				return fmt.Errorf("make the main key: %w", err)
			}
			env.key = k.Key
			if env.readKey == "" {
				rk, err := ctl.CreateKey(ctx, ws.ID, KeyOptions{Name: "conformance read", Scopes: []string{"read"}})
				if err != nil {
					return fmt.Errorf("make the read key: %w", err)
				}
				env.readKey = rk.Key
			}
		}
		if env.otherKey == "" {
			ws, err := ctl.CreateWorkspace(ctx, WorkspaceOptions{Name: "conformance other"})
			if err != nil {
				return fmt.Errorf("make the second workspace: %w", err)
			}
			f.remember(ws.ID)
			env.otherWorkspaceID = ws.ID
			k, err := ctl.CreateKey(ctx, ws.ID, KeyOptions{Name: "conformance other", Scopes: []string{"read", "generate"}})
			if err != nil {
				return fmt.Errorf("make the second workspace's key: %w", err)
			}
			env.otherKey = k.Key
		}
	}
	if env.key == "" {
		return errors.New("no API key: give --key or control access")
	}
	if err := f.learnClock(ctx); err != nil {
		return err
	}
	receiverOK, receiverWhy := false, "no selected spec needs one, so the run set none up"
	if !f.noReceiver.Load() {
		var err error
		if receiverOK, receiverWhy, err = f.startReceiver(ctx, env.key); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.env = env
	f.caps = Capabilities{
		Control:         ctl != nil,
		TestInputs:      f.cfg.Offers(FeatureTestInputs),
		SecondWorkspace: env.otherKey != "",
		ReadKey:         env.readKey != "",
		Budget:          f.cfg.Budget,
		Slow:            f.cfg.Slow,
		RealTime:        f.cfg.RealTime,
		Long:            f.cfg.RealTime && f.cfg.Long,
		Uploads:         true,
		Receiver:        receiverOK,
		ReceiverWhy:     receiverWhy,
		Roles:           f.cfg.Roles(),
	}
	return nil
}

// WantReceiver tells Setup whether a selected spec needs a webhook receiver (Receiver): without
// one it starts none and probes no webhook route, so a target without that route is not touched
// for nothing. Call it before the suite runs; the default is to start one.
func (f *Framework) WantReceiver(want bool) { f.noReceiver.Store(!want) }

func (f *Framework) remember(workspaceID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, workspaceID)
}

// Teardown deletes the workspaces the run made. It returns the first error and tries them all.
func (f *Framework) Teardown(ctx context.Context) error {
	f.stopReceiver(ctx)
	ctl := f.control()
	if ctl == nil {
		return nil
	}
	f.mu.Lock()
	ids := f.created
	f.created = nil
	f.mu.Unlock()
	var first error
	for _, id := range ids {
		if err := ctl.DeleteWorkspace(ctx, id); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (f *Framework) control() *ControlAPI {
	if f.controlRoot == nil {
		return nil
	}
	return &ControlAPI{f: f}
}

func (f *Framework) client(key string) *Client { return &Client{f: f, key: key} }

// UnjudgedClient returns a client of key whose calls are not judged against the REST description:
// for a driver's own tests, against a test server that serves only what the driver reads.
func (f *Framework) UnjudgedClient(key string) *Client {
	return &Client{f: f, key: key, with: []CallOption{Unjudged()}}
}

// resolve joins a path (with an optional query string) below a root URL.
func (f *Framework) resolve(root *url.URL, path string) *url.URL {
	u := *root
	p, q, _ := strings.Cut(path, "?")
	u.Path = strings.TrimRight(root.Path, "/") + "/" + strings.TrimLeft(p, "/")
	if p == "" {
		u.Path = root.Path
	}
	u.RawQuery = q
	return &u
}

// exchange makes one call, records it in the transcript and judges it with chk: a request that
// breaks the description (unless marked Invalid) or an answer the text refuses is an error that
// carries the exchange; an answer only the reference refuses is an advisory (a failure under
// Config.Strict). chk nil checks nothing.
func (f *Framework) exchange(ctx context.Context, chk checker, method string, u *url.URL, key string, scheme AuthScheme, opts []CallOption) (*Response, error) {
	f.inReferenceOnly(method, u.Path)
	ctx, cancel := f.callContext(ctx)
	defer cancel()
	c := &call{query: url.Values{}, header: http.Header{}}
	for _, o := range opts {
		o(c)
	}
	if len(c.query) > 0 {
		q := u.Query()
		for k, vals := range c.query {
			for _, val := range vals {
				q.Add(k, val)
			}
		}
		u.RawQuery = q.Encode()
	}
	var body *bytes.Reader
	if c.hasBody {
		body = bytes.NewReader(c.body)
	}
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, u.String(), body)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u.String(), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, f.redactor.String(u.String()), err)
	}
	if key != "" {
		switch scheme {
		case Bearer:
			req.Header.Set("Authorization", "Bearer "+key)
		case APIKeyHdr:
			h, _, _, _ := f.cfg.Named()
			req.Header.Set(h, key)
		}
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	req.Header.Set("Accept", "application/json")
	for k, vals := range c.header {
		req.Header[k] = vals
	}

	reqHeader := req.Header.Clone()
	callName := method + " " + f.redactor.String(u.String())
	res, err := f.httpClient().Do(req)
	if err != nil {
		ex := newExchange(f.redactor, method, u.String(), reqHeader, c.body, 0, nil, nil)
		ex.Invalid = c.invalid
		var over *OverCapError
		if errors.As(headerOverCap(err, callName), &over) {
			f.answered() // the target answered, with too much
			ex.Err = over.Error()
			f.transcript.Add(ex)
			return nil, over
		}
		ex.Err = f.redactor.String(f.callError(ctx, err).Error())
		f.transcript.Add(ex)
		return nil, fmt.Errorf("no answer to %s %s: %s", method, ex.URL, ex.Err)
	}
	resBody, err := f.readBody(ctx, res, callName)
	if !errors.Is(err, errBodyTimeout) {
		f.answered() // a body still arriving at the deadline is counted apart (readBody)
	}
	if err != nil {
		ex := newExchange(f.redactor, method, u.String(), reqHeader, c.body, res.StatusCode, res.Header, nil)
		ex.Invalid = c.invalid
		ex.Err = f.redactor.String(err.Error())
		f.transcript.Add(ex)
		return nil, errors.New(ex.Err)
	}
	ex := newExchange(f.redactor, method, u.String(), reqHeader, c.body, res.StatusCode, res.Header, resBody)
	ex.Invalid = c.invalid
	var fatal []string
	requestBroke := false
	var brokeFields []spec.FieldError // the answer's fields that broke the description
	if chk != nil && chk.Covers(req.URL.Path) && c.judges(res.StatusCode) {
		if err := chk.Request(ctx, req, c.body); err != nil {
			lines := f.violationLines(err)
			ex.Violations = append(ex.Violations, lines...)
			if !c.invalid {
				fatal = append(fatal, lines...)
				requestBroke = true
			}
		}
		failure, advisory := chk.Response(ctx, req, res.StatusCode, res.Header, resBody)
		if failure != nil {
			lines := f.violationLines(failure)
			ex.Violations = append(ex.Violations, lines...)
			fatal = append(fatal, lines...)
			brokeFields = append(brokeFields, brokenFields(failure)...)
		}
		if advisory != nil {
			lines := f.violationLines(advisory)
			if f.cfg.Strict {
				for i := range lines {
					lines[i] = "strict: " + lines[i] + " (the reference document's choice)"
				}
				ex.Violations = append(ex.Violations, lines...)
				fatal = append(fatal, lines...)
				brokeFields = append(brokeFields, brokenFields(advisory)...)
			} else {
				ex.Advisories = append(ex.Advisories, lines...)
				f.adv.note(f.validator, advisory, f.redactor)
			}
		}
	}
	f.transcript.Add(ex)
	r := &Response{Status: res.StatusCode, Header: res.Header, Body: resBody, Exchange: ex, f: f}
	if len(fatal) > 0 {
		hint := ""
		if requestBroke {
			hint = "\n(a request the spec sends on purpose against the description must be marked framework.Invalid())"
		}
		de := &descriptionError{msg: fmt.Sprintf("the exchange broke the REST description:\n  - %s%s\n\n%s", strings.Join(fatal, "\n  - "), hint, ex.String())}
		if hint == "" && f.judge != nil && chk == checker(f.judge) {
			de.rules, de.answer = f.answerOwners(method, u.Path, res.StatusCode, brokeFields)
		}
		return r, de
	}
	return r, nil
}
