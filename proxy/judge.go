package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// work is the ordered stage: it takes the queued exchanges in the order they ended, waits until
// the parallel stage is done with each, and runs the rules across exchanges until the queue is
// closed.
func (p *Proxy) work() {
	defer close(p.done)
	for it := range p.queue {
		if it.marker != nil {
			close(it.marker)
			continue
		}
		<-it.ex.ready
		p.budget.judged(func() { p.judgeOrdered(it.ex) })
		p.queued.Add(-it.ex.size)
		p.remember(it.ex)
	}
}

// judgeWorker is one worker of the parallel stage: the rules one exchange shows on its own.
func (p *Proxy) judgeWorker() {
	defer p.workers.Done()
	for ex := range p.pool {
		p.budget.judged(func() { p.judgeSingle(ex) })
		close(ex.ready)
		// Let the forwarding goroutines that became ready run before the next judgement.
		runtime.Gosched()
	}
}

// call is one exchange as the checks see it: the request line, the documented route (template
// "" when undocumented), the decoded bodies.
type call struct {
	ex      *exchange
	req     *http.Request
	route   string         // "GET /generations/{id}" relative to the base path; "" outside the description
	rt      *routers.Route // the route route names (p.val's); nil outside the description
	params  map[string]string
	line    string         // request line with the query
	reqJSON any            // the request body decoded (numbers as json.Number), nil when not JSON
	body    map[string]any // reqJSON as an object (nil otherwise)
	answer  any
	obj     map[string]any // answer as an object (nil otherwise)
	at      time.Time
	apiPath string // path relative to the base path
	health  bool
}

// judgeSingle runs the checks of one exchange that need no other (parallel stage): the request
// and the answer against the description, and the rules an answer shows on its own. It leaves the
// decoded exchange in ex.call for the ordered stage, whose judges (the audit, the rules across
// exchanges) read the bodies decoded here: each body is decoded once.
func (p *Proxy) judgeSingle(ex *exchange) {
	ex.key, ex.keyID = keyOf(ex.header)
	if !p.isAPI(ex.path) || ex.failed {
		return
	}
	c := &call{ex: ex, at: ex.start, line: ex.method + " " + ex.path}
	if ex.rawQuery != "" {
		c.line += "?" + ex.rawQuery
	}
	c.apiPath = strings.TrimPrefix(ex.path, p.basePath)
	if c.apiPath == "" {
		c.apiPath = "/"
	}
	c.req = &http.Request{Method: ex.method, URL: &url.URL{Path: ex.path, RawQuery: ex.rawQuery}, Header: ex.header, Host: p.upstream.Host}
	// The route is found once here; the request's judge and the ordered stage read it from c.
	if r, params, ok := p.val.FindRoute(ex.method, ex.path); ok {
		c.route, c.rt, c.params = r.Method+" "+r.Path, r, params
	}
	c.reqJSON = judge.DecodeJSON(ex.body)
	c.body, _ = c.reqJSON.(map[string]any)
	if !ex.answerCut {
		was := len(ex.answer)
		ex.answer, ex.answerCut = decodedAnswer(ex.respHeader, ex.answer)
		// A decoded answer is held until the ordered stage: the queue's byte bound counts it.
		if grow := int64(len(ex.answer) - was); grow > 0 {
			ex.size += grow
			p.queued.Add(grow)
		}
	}
	if !ex.answerCut {
		c.answer = judge.DecodeJSON(ex.answer)
		c.obj, _ = c.answer.(map[string]any)
	}
	c.health = strings.HasPrefix(c.apiPath, "/health/")
	ex.call = c

	// The client: the request against the description. Only its body is judged (requestBody).
	if !ex.bodyCut && c.route != "" {
		if err := p.requestBody(c, ex.body); err != nil {
			p.find(c, SideClient, requestRule(c.route), false, "The request body breaks the description: "+sentence(err))
		}
	}
	// The server: the answer against the description, then the rules an answer shows.
	if !ex.answerCut {
		failure, advisory := p.judgeAnswer(c)
		if failure != nil {
			p.find(c, SideServer, p.answerRule(c), false, "The answer breaks the description: "+sentence(failure))
		}
		if advisory != nil {
			p.find(c, SideServer, p.answerRule(c), true, "The answer differs from the reference's own choices (the text leaves this open): "+sentence(advisory))
		}
	}
	p.checkAnswer(c)
}

// judgeAnswer is the description's verdict on c's answer, remembered for large answers when the
// judge is the default one (memo.go).
func (p *Proxy) judgeAnswer(c *call) (failure, advisory error) {
	ex := c.ex
	k := ""
	if p.memo != nil {
		k = p.memo.key(ex)
	}
	if k != "" {
		if v, ok := p.memo.get(k); ok {
			return v.failure, v.advisory
		}
	}
	failure, advisory = p.judge.Response(c.req.Context(), c.req, ex.status, ex.respHeader, ex.answer)
	if k != "" {
		p.memo.put(k, verdict{failure, advisory})
	}
	return failure, advisory
}

// judgeOrdered runs the checks across exchanges on one exchange (ordered stage): the control
// API's effects, the audit's client duties, and the rules across exchanges of state.go.
func (p *Proxy) judgeOrdered(ex *exchange) {
	p.current = ex
	defer func() { p.current = nil }()
	if p.lost.Swap(0) > 0 {
		// Exchanges were dropped unjudged: the audit's memory (ids and cursors handed out, calls
		// refused) may miss what they showed, so it starts afresh rather than blame the client for
		// an answer it did not see. The rules across exchanges of state.go hold whatever traffic
		// went unseen.
		p.auditor.Forget()
	}
	switch {
	case strings.HasPrefix(ex.path, judge.ControlBase+"/"):
		p.observeControl(ex)
		return
	case strings.HasPrefix(ex.path, judge.FilesPath):
		if !ex.failed {
			p.auditor.Observe(audit.Exchange{Method: ex.method, Path: ex.path, RawQuery: ex.rawQuery, Status: ex.status,
				Start: ex.svcStart, End: ex.svcEnd})
		}
		return
	case ex.call == nil:
		return
	}
	c := ex.call
	if !c.health {
		p.auditor.Observe(audit.Exchange{KeyID: ex.keyID, WorkspaceID: p.st.workspaceOf(ex.keyID), Method: ex.method, Path: ex.path,
			RawQuery: ex.rawQuery, Origin: ex.header.Get("Origin"), Body: ex.body, Status: ex.status,
			RetryAfter: ex.respHeader.Get("Retry-After"), Answer: ex.answer, Start: ex.svcStart, End: ex.svcEnd,
			Decoded: true, BodyJSON: c.reqJSON, AnswerJSON: c.answer})
	}
	p.st.observe(p, c)
}

// find records a finding of rule about the call.
func (p *Proxy) find(c *call, side, rule string, advisory bool, why string) {
	route := c.route
	if route == "" {
		route = c.ex.method + " " + maskIDs(c.apiPath)
	}
	c.ex.findings++
	p.store.add(Finding{RuleID: rule, Advisory: advisory, Side: side, KeyID: c.ex.keyID, Request: c.line, Advice: why,
		LastSeen: c.at}, side+" "+route, c.ex.n)
}

// auditFinding records a finding of the audit (client side) with the proxy's grouping and exchange
// number. Called by the auditor
// from the judging goroutine, with the auditor's lock held.
func (p *Proxy) auditFinding(f Finding) {
	ex := p.current
	var n int64
	route := f.Request
	if ex != nil {
		n = ex.n
		ex.findings++
		route = ex.method + " " + maskIDs(strings.TrimPrefix(ex.path, p.basePath))
		// The route judgeSingle found (an exchange without a call is not audited, but for files).
		if ex.call != nil && ex.call.route != "" {
			route = ex.call.route
		}
	}
	p.store.add(Finding{RuleID: f.RuleID, Level: f.Level, Side: SideClient, KeyID: f.KeyID, Request: f.Request, Advice: f.Advice,
		LastSeen: f.LastSeen}, "client "+route, n)
}

// observeControl follows the test-control API: a key it issues joins its workspace (the audit's
// id and cursor sets are per workspace), and a write that succeeds changes state no client sent,
// so the audit forgets recent calls (as in the mock) and a reset forgets everything.
func (p *Proxy) observeControl(ex *exchange) {
	if ex.failed || ex.status >= 400 {
		return
	}
	p.learnClock(ex)
	if ex.method == http.MethodGet {
		return
	}
	rel := strings.TrimPrefix(ex.path, judge.ControlBase)
	if rel == "/reset" {
		p.auditor.Forget()
		p.st.reset()
		return
	}
	p.auditor.ForgetCalls()
	seg := strings.Split(strings.Trim(rel, "/"), "/")
	m, _ := judge.DecodeJSON(ex.answer).(map[string]any)
	buckets, _ := m["buckets"].(map[string]any)
	controlID, _ := m["key_id"].(string)
	switch {
	case len(seg) == 3 && seg[0] == "workspaces" && seg[2] == "keys":
		if key, ok := m["key"].(string); ok {
			_, id := keyOf(http.Header{"Authorization": {"Bearer " + key}})
			p.st.joinWorkspace(id, seg[1])
			p.st.controlKey(id, controlID, len(buckets) > 0)
		}
	case len(seg) == 2 && seg[0] == "keys" && ex.method == http.MethodPatch:
		// The answer names the key by the control API's id only.
		p.st.controlKey("", seg[1], len(buckets) > 0)
	}
}

// BodyJudge is a Judge that can judge a request's body alone, skipping at once an operation that
// declares none (spec.Judge does, with RequestBody). Another Judge is asked Request, and only
// what it says of the body is kept.
type BodyJudge interface {
	Judge
	// RequestBody returns why the request's body breaks the description, or nil.
	RequestBody(ctx context.Context, r *http.Request, body []byte) error
}

// requestBody is the judge's verdict on a request's body alone. The default judge is handed the
// route judgeSingle found, when it was found on that judge's own reference validator.
func (p *Proxy) requestBody(c *call, body []byte) error {
	r := c.req
	if p.events != nil && p.judge == Judge(p.events) && p.val == p.events.Reference() {
		return p.events.RequestBodyOn(r.Context(), r, c.rt, c.params, body)
	}
	if bj, ok := p.judge.(BodyJudge); ok {
		return bj.RequestBody(r.Context(), r, body)
	}
	// Only the body: a query the text reads leniently (blank counts as omitted, limits are
	// clamped, an unreadable cursor restarts) is never a client finding.
	if err := p.judge.Request(r.Context(), r, body); err != nil && spec.BodyViolation(err) {
		return err
	}
	return nil
}

// requestRule is the rule a request that breaks the description breaks: the strictness rule of
// its body.
func requestRule(route string) string {
	switch route {
	case "POST /generations":
		return "SUBMIT-010"
	case "POST /estimates":
		return "EST-006"
	case "POST /uploads":
		return "UPLOAD-007"
	case "POST /webhooks":
		return "WH-008"
	case "POST /workflows/{id}/invoke", "POST /workflows/templates/{key}/invoke":
		return "WF-008"
	}
	return "VER-005"
}

// answerRule is the rule an answer that breaks the description breaks: for a failure (4XX, 5XX)
// the error envelope's (or the health probe's), for a success the route's shape rule, for an
// undocumented path the versioned-root rule.
func (p *Proxy) answerRule(c *call) string {
	switch {
	case c.route == "GET /generations/{id}/wait" && (c.ex.status == http.StatusRequestTimeout || c.ex.status == http.StatusGatewayTimeout):
		return "GEN-030"
	case c.route == "GET /health/ready" && c.ex.status == http.StatusServiceUnavailable:
		return "HEALTH-003"
	case c.ex.status >= 400:
		return "CORE-003"
	case c.route == "":
		return "CORE-001"
	}
	if r, ok := spec.AnswerRule(c.route); ok {
		if _, known := p.rules.Get(r); known {
			return r
		}
	}
	return "CORE-002"
}

// sentence is err on one line (every field the judge names, separated by semicolons), at most 600
// characters.
func sentence(err error) string {
	var v spec.Violation
	if errors.As(err, &v) && v.Err != nil {
		err = v.Err
	}
	var fe spec.FieldErrors
	var s string
	if errors.As(err, &fe) && len(fe) > 0 {
		parts := make([]string, len(fe))
		for i, e := range fe {
			parts[i] = e.String()
		}
		s = strings.Join(parts, "; ")
	} else {
		s = strings.SplitN(err.Error(), "\nSchema:", 2)[0]
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:597] + "..."
	}
	return s
}

var idSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]+_[0-9A-Za-z]{8,}$`) })

// maskIDs replaces the id segments of a path with {id}, so repeats on one route group together.
func maskIDs(p string) string {
	seg := strings.Split(p, "/")
	for i, s := range seg {
		if idSegment().MatchString(s) {
			seg[i] = "{id}"
		}
	}
	return strings.Join(seg, "/")
}

// decodedAnswer is an answer's body as its client reads it once the content coding is undone (the
// proxy passes the coding on untouched): gzip is undone, up to MaxAnswerBody decoded bytes; an
// answer without a coding is kept. Any other coding, a broken gzip stream or a longer decoded body
// leave it cut, judged by its status and headers only, as an answer longer than MaxAnswerBody is.
func decodedAnswer(h http.Header, b []byte) ([]byte, bool) {
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding"))) {
	case "", "identity":
		return b, false
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, true
		}
		out, err := io.ReadAll(io.LimitReader(zr, MaxAnswerBody+1))
		if err != nil || len(out) > MaxAnswerBody {
			return nil, true
		}
		return out, false
	}
	return nil, true
}
