// Package proxy is `mediaspec proxy`: a reverse proxy that sits between any client and any server
// of the media generation API, forwards every request and answer unchanged, and judges the traffic
// it carries against the contract, both sides, with state across exchanges.
//
// Each exchange is judged after its answer was streamed to the client, off the request's path, in
// two stages: the rules one exchange shows on its own run on a pool of workers in parallel; the
// rules across exchanges (and the audit's client duties) then run on one goroutine that sees the
// exchanges in the order they ended:
//
//   - the request against the REST description and the client duties of `mediaspec mock --audit`
//     (package spec/judge/audit, driven here by observed exchanges instead of from inside the mock);
//   - the answer against the description (a Judge: failures break the interface text, advisories
//     only depart from the reference's own choices and never fail anything) and against the rules
//     an answer shows on its own (error envelope and table, ids, CORS, links, wait and submit
//     answers);
//   - rules across exchanges, passively: statuses moving along the stated order, a submit held
//     within max_credits and the estimate, cursor walks, Retry-After coherence (see state.go); the
//     credit arithmetic (ledger.go) and the buckets (buckets.go), judged only where the traffic
//     seen proves a rule broken whatever unseen traffic did.
//
// Webhook deliveries pass through Hooks (hooks.go), which checks them as `mediaspec receive` does
// and judges the client receiver's answers by the check-receiver rules.
//
// Findings are kept in a bounded store (repeats counted) and served at FindingsPath. Memory is
// bounded whatever the traffic: request and answer bodies are read up to MaxRequestBody and
// MaxAnswerBody while they stream (the rest is forwarded unread), the queue of exchanges waiting to
// be judged is bounded in entries and in bytes (when it is full the exchange is forwarded and
// counted as unjudged: the forwarding never waits for the judge), and all state across exchanges
// lives in LRU maps of fixed size.
//
// API keys never leave the process: a finding names a key by KeyID, a hash prefix.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// Paths the proxy serves itself; nothing under APIPrefix is forwarded.
const (
	APIPrefix     = "/_proxy/v1/"
	FindingsPath  = APIPrefix + "findings"
	ExchangesPath = APIPrefix + "exchanges"
)

// Bounds of what the proxy reads and keeps.
const (
	// MaxRequestBody is how much of a request body is read for judging (as the mock's audit).
	MaxRequestBody = 64 << 10
	// MaxAnswerBody is how much of an answer is read for judging; a longer answer is forwarded
	// whole and judged only by its status and headers.
	MaxAnswerBody = 512 << 10
	// QueueSize is how many ended exchanges may wait to be judged; past it (or past QueueBytes) an
	// exchange is forwarded and counted as unjudged (Report.Unjudged).
	QueueSize = 1024
	// QueueBytes bounds the captured bodies of the exchanges waiting to be judged.
	QueueBytes = 64 << 20
	// MaxAnswerHeader caps the header block of an upstream answer (Go's own default is 10 MB); a
	// larger one is answered 502, naming the cap.
	MaxAnswerHeader = 64 << 10
	// MaxExchanges is how many exchange summaries GET /_proxy/v1/exchanges lists (the latest).
	MaxExchanges = 512
)

// Judge judges one exchange against the description. spec.Judge (the normative view: failures
// break what the interface text states, advisories only differ from the reference's own choices)
// satisfies it, and is the default; a spec.Validator does through ValidatorJudge (every departure
// from the document is then a failure, as for our own mock).
type Judge interface {
	// Request returns why the request breaks the description, or nil.
	Request(ctx context.Context, r *http.Request, body []byte) error
	// Response returns why the answer breaks the interface text (failure) and why it departs from
	// the reference's own choices only (advisory); either may be nil.
	Response(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) (failure, advisory error)
}

// ValidatorJudge judges with a spec.Validator: every departure from the document is a failure.
type ValidatorJudge struct {
	// V is the validator both sides are judged with.
	V *spec.Validator
}

// Request implements Judge.
func (j ValidatorJudge) Request(ctx context.Context, r *http.Request, body []byte) error {
	return j.V.ValidateRequest(ctx, r, body)
}

// Response implements Judge.
func (j ValidatorJudge) Response(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) (error, error) {
	return j.V.ValidateResponse(ctx, r, status, header, body), nil
}

// Config configures a Proxy.
type Config struct {
	// Upstream is the server's origin or its base URL (http://host:port or .../api/v1). Requests
	// keep their path: the client calls the proxy with the paths it would call the server with.
	Upstream string
	// Judge judges single exchanges; nil uses spec.NewJudge over the embedded REST description.
	Judge Judge
	// Validator finds the documented route of a request; nil uses the reference validator of the
	// default Judge.
	Validator *spec.Validator
	// Rules is the rule catalogue (levels, names); nil loads the embedded one.
	Rules *spec.Catalogue
	// Transport carries the forwarded requests; nil carries a plain GET or HEAD to an http upstream
	// on the proxy's own connections (forward.go) and everything else on a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Now is the proxy's clock (default time.Now).
	Now func() time.Time
	// OnFinding is called once per new distinct finding (repeats are only counted), from the
	// judging goroutines and the webhook handlers, possibly at once: it must be safe for
	// concurrent use and return quickly.
	OnFinding func(Finding)
	// Logger gets a warning per upstream that could not be reached (default: discard).
	Logger *slog.Logger
	// JudgeShare is how much of one CPU's wall time the judging may take while the forwarding is
	// busy (budget.go); 0 means DefaultJudgeShare, a negative value no bound (every exchange the
	// queue takes is judged as fast as the CPU allows, competing with the forwarding).
	JudgeShare float64
}

// Proxy forwards and judges. It is an http.Handler, safe for concurrent use. Create it with New
// and Close it to stop judging.
type Proxy struct {
	cfg      Config
	upstream *url.URL
	basePath string
	rp       *httputil.ReverseProxy
	judge    Judge
	events   *spec.Judge // judges webhook payloads; nil with a Config.Judge of its own
	val      *spec.Validator
	rules    *spec.Catalogue
	now      func() time.Time
	log      *slog.Logger
	store    *store
	auditor  *audit.Auditor
	audClock clock.Clock
	st       *state
	memo     *memo // the verdicts on large answers already judged; nil with a Config.Judge
	budget   *budget

	seq      atomic.Int64
	inFlight atomic.Int64   // requests being forwarded
	unjudged atomic.Int64   // exchanges dropped from the full judging queue
	lost     atomic.Int64   // unjudged exchanges the ordered stage has not yet accounted for
	queued   atomic.Int64   // bytes of captured bodies waiting to be judged
	qmu      sync.RWMutex   // held for reading while sending on queue, for writing to close it
	queue    chan item      // every judged exchange, in the order they ended (the ordered stage)
	pool     chan *exchange // the same exchanges, for the parallel stage's workers
	workers  sync.WaitGroup
	done     chan struct{}
	closed   atomic.Bool
	closer   sync.Once

	streamMu  sync.Mutex // guards streaming
	streaming map[*exchange]struct{}

	ringMu sync.Mutex // guards ring, ringNext
	ring   []ExchangeSummary
	ringAt int

	clockMu sync.Mutex // guards clk
	clk     serviceClock
	// controlToken is the Authorization header of the last control-API call (memory only, never
	// printed): the proxy reads the service clock with it for webhooks (a wrong one only fails
	// that read, and the wall clock stands in).
	controlToken atomic.Value
	clockClient  *http.Client

	// current is the exchange being judged by the ordered stage (its goroutine only): the audit's
	// findings name it.
	current *exchange
}

// item is one entry of the judging queue: an exchange, or a marker whose channel is closed once
// everything before it was judged.
type item struct {
	ex     *exchange
	marker chan struct{}
}

// ExchangeSummary is one exchange as GET /_proxy/v1/exchanges lists it (no bodies, no keys).
type ExchangeSummary struct {
	N        int64     `json:"n"`                // the exchange's number, from 1 in the order they began
	At       time.Time `json:"at"`               // when the request came
	KeyID    string    `json:"key_id,omitempty"` // the key's id (never the key), when one was sent
	Request  string    `json:"request"`          // method and path (and the query of an API call)
	Status   int       `json:"status"`           // the answer's status
	Millis   float64   `json:"duration_ms"`      // request to the answer's end, in milliseconds
	Findings int       `json:"findings"`         // findings the exchange gave
}

// exchange is what the judge sees: one request and its answer.
type exchange struct {
	n                      int64
	start, end             time.Time
	svcStart, svcEnd       time.Time // the same instants on the estimated service clock
	method, path, rawQuery string
	header                 http.Header // request headers (the key is read from them, never kept)
	keyID                  string
	key                    string
	body                   []byte
	bodyCut                bool
	status                 int
	respHeader             http.Header
	answer                 []byte
	answerCut              bool
	answerFrom             *capture
	reqBody                *capture
	once                   sync.Once
	failed                 bool // no answer came from the upstream
	findings               int
	svcEndMax              time.Time     // svcEnd plus the clock advances in flight: the latest service time the answer may carry
	ready                  chan struct{} // closed once the parallel stage is done with the exchange
	call                   *call         // the parallel stage's view of an API exchange, for the ordered stage
	size                   int64         // bytes of captured bodies, counted in Proxy.queued
	streamed               chan struct{} // closed once the exchange is queued, when its answer streams
}

// New checks cfg and returns a Proxy whose judging goroutine runs until Close.
func New(ctx context.Context, cfg Config) (*Proxy, error) {
	up, err := url.Parse(strings.TrimSpace(cfg.Upstream))
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return nil, fmt.Errorf("proxy: upstream %q is not an http(s) URL", cfg.Upstream)
	}
	p := &Proxy{cfg: cfg, basePath: spec.BasePath, now: cfg.Now, log: cfg.Logger, queue: make(chan item, QueueSize),
		pool: make(chan *exchange, QueueSize+1), done: make(chan struct{}), streaming: map[*exchange]struct{}{}, ring: make([]ExchangeSummary, 0, MaxExchanges)}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.clk.scale = 1
	switch share := cfg.JudgeShare; {
	case share == 0:
		p.budget = newBudget(DefaultJudgeShare)
	case share > 0:
		p.budget = newBudget(share)
	}
	if i := strings.Index(up.Path, spec.BasePath); i >= 0 && strings.TrimRight(up.Path[i:], "/") == spec.BasePath {
		p.basePath = strings.TrimRight(up.Path, "/")
	}
	p.upstream = &url.URL{Scheme: up.Scheme, Host: up.Host}
	if p.rules = cfg.Rules; p.rules == nil {
		if p.rules, err = spec.LoadRules(); err != nil {
			return nil, err
		}
	}
	p.judge, p.val = cfg.Judge, cfg.Validator
	if p.judge == nil || p.val == nil {
		j, err := spec.NewJudge(ctx, spec.WithBasePath(p.basePath))
		if err != nil {
			return nil, err
		}
		if p.judge == nil {
			p.judge, p.events = j, j
			p.memo = newMemo(j.Reference().Document(), j.Normative().Document())
		}
		if p.val == nil {
			p.val = j.Reference()
		}
	}
	p.store = newStore(p.rules, cfg.OnFinding)
	p.audClock = clock.NewReal()
	p.auditor = audit.New(audit.Config{Clock: p.audClock, OnFinding: p.auditFinding})
	p.st = newState()
	tr := cfg.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		t.MaxResponseHeaderBytes = MaxAnswerHeader
		// The same bound on a silent upstream as the proxy's own forwarding of plain reads.
		t.ResponseHeaderTimeout = answerHeaderTimeout
		tr = newPlainTransport(t, p.upstream)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.upstream)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
		},
		Transport:  tr,
		BufferPool: copyBuffers{},
		// The default: an answer of unknown length (or an event stream) is flushed as it comes, one
		// of known length leaves in as few writes as its size allows.
		ModifyResponse: p.captureAnswer,
		ErrorHandler:   p.upstreamError,
	}
	p.clockClient = &http.Client{Transport: tr, Timeout: 2 * time.Second}
	for range Workers() {
		p.workers.Add(1)
		go p.judgeWorker()
	}
	go p.work()
	return p, nil
}

// Workers is how many goroutines run the parallel stage of the judging: one per CPU but one, at
// least one. The CPU left is the forwarding's: judging never competes with it for every CPU.
func Workers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Close stops the judging once every exchange already queued was judged, and closes the idle
// upstream connections of the default forwarding. Requests served after Close are forwarded and
// not judged.
func (p *Proxy) Close() {
	p.closer.Do(func() {
		p.qmu.Lock()
		p.closed.Store(true)
		close(p.pool)
		close(p.queue)
		p.qmu.Unlock()
		p.workers.Wait()
		<-p.done
		p.audClock.Stop()
		if t, ok := p.rp.Transport.(*plainTransport); ok {
			t.CloseIdleConnections()
		}
	})
}

// Sync waits until every exchange that ended before the call was judged, or ctx ends. An answer
// the client may have had whole while the proxy still streams it counts as ended: Sync waits for
// it to be queued first.
func (p *Proxy) Sync(ctx context.Context) error {
	p.streamMu.Lock()
	waits := make([]chan struct{}, 0, len(p.streaming))
	for ex := range p.streaming {
		waits = append(waits, ex.streamed)
	}
	p.streamMu.Unlock()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m := make(chan struct{})
	p.qmu.RLock()
	if p.closed.Load() {
		p.qmu.RUnlock()
		return nil
	}
	select {
	case p.queue <- item{marker: m}:
		p.qmu.RUnlock()
	case <-ctx.Done():
		p.qmu.RUnlock()
		return ctx.Err()
	}
	select {
	case <-m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Report returns the findings judged so far (call Sync first to include every ended exchange).
func (p *Proxy) Report() Report {
	r := p.store.report()
	r.Exchanges = p.seq.Load()
	r.Unjudged = p.unjudged.Load()
	return r
}

// Clear drops every finding and what the proxy remembers across exchanges.
func (p *Proxy) Clear() {
	_ = p.Sync(context.Background())
	p.store.mu.Lock()
	p.store.clear()
	p.store.mu.Unlock()
	p.auditor.Clear()
	p.st.reset()
}

// Failed reports whether a non-advisory finding of a MUST rule (should false) or of a MUST or
// SHOULD rule (should true) was recorded on one of sides (every side when none is given).
func (p *Proxy) Failed(should bool, sides ...string) bool {
	must, sh := p.store.worst(sides...)
	if should {
		return sh
	}
	return must
}

// Exchanges returns the summaries of the latest exchanges, oldest first.
func (p *Proxy) Exchanges() []ExchangeSummary {
	p.ringMu.Lock()
	defer p.ringMu.Unlock()
	out := make([]ExchangeSummary, 0, len(p.ring))
	if len(p.ring) < MaxExchanges {
		return append(out, p.ring...)
	}
	out = append(out, p.ring[p.ringAt:]...)
	return append(out, p.ring[:p.ringAt]...)
}

type ctxKey struct{}

// ServeHTTP serves the proxy's own API under APIPrefix and forwards everything else.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, APIPrefix) {
		p.serveAPI(w, r)
		return
	}
	p.budget.forwarding(p.inFlight.Add(1))
	defer p.inFlight.Add(-1)
	ex := &exchange{n: p.seq.Add(1), start: p.now(), method: r.Method, path: r.URL.Path, rawQuery: r.URL.RawQuery}
	ex.svcStart = p.serviceNow()
	api := p.isAPI(r.URL.Path)
	control := strings.HasPrefix(r.URL.Path, judge.ControlBase+"/")
	if api || control || strings.HasPrefix(r.URL.Path, judge.FilesPath) {
		// Kept as it is, not cloned: nothing writes a request's header once it is served (the
		// forwarding works on a clone of its own, and httputil.ProxyRequest.In must not be
		// modified).
		ex.header = r.Header
	}
	var reqBody *capture
	if (api || control) && r.Body != nil && r.Body != http.NoBody {
		reqBody = &capture{rc: r.Body, limit: MaxRequestBody, length: -1}
		r.Body = reqBody
	}
	if control {
		// Kept before the call is forwarded: the service may send a delivery the call causes before
		// its answer reaches the proxy, and the hooks then need the service clock already.
		if a := r.Header.Get("Authorization"); a != "" {
			if p.controlToken.Swap(a) == nil {
				// A control API: its clock may be manual or scaled; learn its scale at once.
				go p.readServiceClock()
			}
		}
		advanced := p.trackAdvance(r)
		defer func() { advanced(!ex.failed && ex.status == http.StatusOK) }()
	}
	ex.reqBody = reqBody
	ctx := context.WithValue(r.Context(), ctxKey{}, ex)
	p.rp.ServeHTTP(w, r.WithContext(ctx))
	// An answer whose body reached its end was handed on already (finish from the body's last
	// read, before its last bytes reach the client, so that GET /_proxy/v1/findings right after an
	// answer includes it); this catches the rest (no body read, an upstream error, a cut stream).
	p.finish(ex)
}

// finish completes an exchange once: its end, the captured bodies, then the judging queue (or only
// the list of exchanges, for traffic outside the API and the control API).
func (p *Proxy) finish(ex *exchange) {
	ex.once.Do(func() {
		ex.end = p.now()
		ex.svcEnd, ex.svcEndMax = p.serviceSpan()
		if c := ex.reqBody; c != nil {
			ex.body, ex.bodyCut = c.snapshot()
		}
		if c := ex.answerFrom; c != nil {
			ex.answer, ex.answerCut = c.snapshot()
		}
		if ex.header == nil {
			p.remember(ex)
			return
		}
		p.enqueue(ex)
		if ex.streamed != nil {
			p.streamMu.Lock()
			delete(p.streaming, ex)
			p.streamMu.Unlock()
			close(ex.streamed)
		}
	})
}

// enqueue hands an ended exchange to the judging stages without ever waiting: when the queue is
// full (in entries or in bytes) the exchange is only listed and counted as unjudged. After Close
// it is only listed.
func (p *Proxy) enqueue(ex *exchange) {
	p.qmu.RLock()
	defer p.qmu.RUnlock()
	if p.closed.Load() {
		p.remember(ex)
		return
	}
	ex.size = int64(len(ex.body) + len(ex.answer))
	if p.queued.Add(ex.size) > QueueBytes {
		p.queued.Add(-ex.size)
		p.drop(ex)
		return
	}
	ex.ready = make(chan struct{})
	select {
	case p.queue <- item{ex: ex}:
	default:
		p.queued.Add(-ex.size)
		p.drop(ex)
		return
	}
	// The pool holds only exchanges the queue holds too, or the one the ordered stage waits for:
	// it has room.
	p.pool <- ex
}

// drop lists an exchange the full queue cannot take and counts it as unjudged; the ordered stage
// then treats it as traffic it did not see.
func (p *Proxy) drop(ex *exchange) {
	p.unjudged.Add(1)
	p.lost.Add(1)
	p.remember(ex)
}

// isAPI reports whether path lies under the versioned API root.
func (p *Proxy) isAPI(path string) bool {
	return path == p.basePath || strings.HasPrefix(path, p.basePath+"/")
}

// captureAnswer records the answer's status and headers and wraps its body so the first
// MaxAnswerBody bytes are kept while it streams to the client.
func (p *Proxy) captureAnswer(res *http.Response) error {
	ex, _ := res.Request.Context().Value(ctxKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	ex.status = res.StatusCode
	// Kept as it is, not cloned: the hop-by-hop headers are already gone, and the forwarding only
	// reads it from here on (it copies it to the client's header, and the trailers apart).
	ex.respHeader = res.Header
	captured := ex.header != nil && !strings.HasPrefix(ex.path, judge.FilesPath)
	if captured {
		c := &capture{rc: res.Body, limit: MaxAnswerBody, length: res.ContentLength, atEOF: func() { p.finish(ex) }}
		res.Body = c
		ex.answerFrom = c
	}
	// The client may see the whole answer before the proxy reads the upstream body's end (an
	// answer of unknown length, or one not captured): Sync waits for the answers being streamed.
	// A captured answer of known length is queued by the read that completes it, before its last
	// bytes are handed on, so it needs no such wait (nor the lock, on every answer of a load test).
	if ex.header != nil && (!captured || res.ContentLength < 0) {
		ex.streamed = make(chan struct{})
		p.streamMu.Lock()
		p.streaming[ex] = struct{}{}
		p.streamMu.Unlock()
	}
	return nil
}

// upstreamError answers 502 when the upstream gave no answer; the exchange is not judged as the
// server's.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if ex, _ := r.Context().Value(ctxKey{}).(*exchange); ex != nil {
		ex.failed = true
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadGateway)
	if strings.Contains(err.Error(), "server response headers exceeded") {
		p.log.Warn("upstream answer's header block over the cap", "request", r.Method+" "+r.URL.Path, "cap", MaxAnswerHeader)
		fmt.Fprintf(w, "mediaspec proxy: the header block of the upstream's answer to %s %s is over %d KiB, the cap the proxy reads\n", r.Method, r.URL.Path, MaxAnswerHeader>>10)
		return
	}
	p.log.Warn("upstream gave no answer", "request", r.Method+" "+r.URL.Path, "err", err)
	fmt.Fprintf(w, "mediaspec proxy: the upstream %s gave no answer: %v\n", p.upstream, err)
}

// capture is a body that keeps its first limit bytes as they are read; atEOF (when set) is called
// once the body reached its end, before the last bytes are handed on. The transport may read a
// request body on its own goroutine while the answer is already read, hence the lock.
type capture struct {
	rc     io.ReadCloser
	limit  int
	length int64 // the body's Content-Length; -1 unknown
	atEOF  func()

	mu    sync.Mutex // guards buf, cut, eof, total
	buf   []byte
	cut   bool
	eof   bool
	total int64
}

func (c *capture) Read(b []byte) (int, error) {
	n, err := c.rc.Read(b)
	c.mu.Lock()
	if n > 0 {
		if c.buf == nil && c.length > 0 {
			// A body of known length is kept in one allocation, not grown by appends, up to
			// preallocMax (a length is only what the sender says: past that, the bytes that came).
			c.buf = make([]byte, 0, min(c.length, int64(c.limit), preallocMax))
		}
		if room := c.limit - len(c.buf); room > 0 {
			c.buf = append(c.buf, b[:min(n, room)]...)
			if n > room {
				c.cut = true
			}
		} else {
			c.cut = true
		}
	}
	c.total += int64(n)
	// The end is the read that returns EOF, or the one that completes a known length: its bytes
	// may be the last the client waits for, so atEOF must run before they are handed on.
	end := err == io.EOF || (c.length >= 0 && c.total >= c.length)
	first := end && !c.eof
	if end {
		c.eof = true
	}
	c.mu.Unlock()
	if first && c.atEOF != nil {
		c.atEOF()
	}
	return n, err
}

func (c *capture) Close() error { return c.rc.Close() }

// preallocMax is the most a capture sets aside for a body ahead of its bytes.
const preallocMax = 16 << 10

// snapshot returns what was kept and whether it is cut (longer than the limit, or not read to
// its end).
func (c *capture) snapshot() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.cut || !c.eof
}

// keyOf returns the API key a request presents (bearer or any header holding an sk_live_ value)
// and its KeyID.
func keyOf(h http.Header) (key, keyID string) {
	if a := h.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "Bearer ") {
		key = strings.TrimSpace(a[7:])
	}
	if key == "" {
		for name, vals := range h {
			if name == "Authorization" || len(vals) == 0 {
				continue
			}
			if v := strings.TrimSpace(vals[0]); strings.HasPrefix(v, "sk_live_") {
				key = v
				break
			}
		}
	}
	if key == "" {
		return "", ""
	}
	sum := sha256.Sum256([]byte(key))
	return key, "key_" + hex.EncodeToString(sum[:6])
}

// remember adds the exchange to the ring of summaries.
func (p *Proxy) remember(ex *exchange) {
	req := ex.method + " " + ex.path
	if ex.rawQuery != "" && p.isAPI(ex.path) {
		req += "?" + ex.rawQuery
	}
	s := ExchangeSummary{N: ex.n, At: ex.start, KeyID: ex.keyID, Request: req, Status: ex.status,
		Millis: float64(ex.end.Sub(ex.start).Microseconds()) / 1000, Findings: ex.findings}
	p.ringMu.Lock()
	defer p.ringMu.Unlock()
	if len(p.ring) < MaxExchanges {
		p.ring = append(p.ring, s)
		return
	}
	p.ring[p.ringAt] = s
	p.ringAt = (p.ringAt + 1) % MaxExchanges
}

// copyBuffers lends the forwarding its copy buffers (httputil.ReverseProxy takes a new 32 KiB one
// per answer otherwise: most of the proxy's allocation under load).
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (copyBuffers) Get() []byte  { return *copyBufferPool.Get().(*[]byte) }
func (copyBuffers) Put(b []byte) { copyBufferPool.Put(&b) }
