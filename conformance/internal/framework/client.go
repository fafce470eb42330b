package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // the DSL reads best unqualified
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/internal/jsoncount"
	"github.com/mediaspec/mediaspec/spec"
)

// AuthScheme is how a Client presents its key.
type AuthScheme int

// The ways to send a key.
const (
	Bearer    AuthScheme = iota // Authorization: Bearer <key>
	APIKeyHdr                   // <the target's key header>: <key> (Config.KeyHeader)
	NoAuth                      // no key at all
)

// Client calls the service under test with one key. Every exchange under the API root goes through
// the REST description's validating transport and into the current spec's transcript. A response
// that breaks the description fails the spec that made the call; so does a request that breaks it,
// unless the call is marked Invalid.
//
// Client methods must be called from a running spec (they fail it through Ginkgo); a Client is
// safe for concurrent use.
type Client struct {
	f      *Framework
	key    string
	scheme AuthScheme
	shared bool // the key is shared by specs: wait out bucket refusals
	// with are options every call of the client carries first (a test input: Spec.Force).
	with []CallOption
}

// WithScheme returns a copy of c that sends its key the given way. APIKeyHdr needs the target to
// name its key header (Config.KeyHeader; the text does not): without one the spec is skipped with
// the reason. A spec that checks both schemes in turn ranges over Spec.KeySchemes instead.
func (c *Client) WithScheme(s AuthScheme) *Client {
	if h, _, _, _ := c.f.cfg.Named(); s == APIKeyHdr && h == "" {
		GinkgoHelper()
		SkipFor(NotDeclared(NoKeyHeader))
	}
	cp := *c
	cp.scheme = s
	return &cp
}

// Key returns the client's key. Never print it: transcripts and reports redact it.
func (c *Client) Key() string { return c.key }

// CallOption adjusts one call.
type CallOption func(*call)

type call struct {
	query       url.Values
	header      http.Header
	body        []byte
	contentType string
	hasBody     bool
	invalid     bool
	keep        bool  // answer a bucket refusal as it came, never waited out
	unjudged    bool  // the exchange is not judged against the description (Unjudged)
	judgedOn    []int // when set, the exchange is judged only when answered with one of these (JudgedOn)
}

// judges reports whether an answer with status is judged against the description (JudgedOn).
func (c *call) judges(status int) bool {
	return len(c.judgedOn) == 0 || slices.Contains(c.judgedOn, status)
}

// Query adds a query parameter.
func Query(name, value string) CallOption {
	return func(c *call) { c.query.Add(name, value) }
}

// Header sets a request header; it overrides the key header when it names the same header.
func Header(name, value string) CallOption {
	return func(c *call) { c.header.Set(name, value) }
}

// JSONBody sends v encoded as JSON with Content-Type application/json.
func JSONBody(v any) CallOption {
	return func(c *call) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("framework: JSONBody: %v", err))
		}
		c.body, c.contentType, c.hasBody = b, "application/json", true
	}
}

// RawBody sends body as given with the Content-Type given (none when empty).
func RawBody(body []byte, contentType string) CallOption {
	return func(c *call) { c.body, c.contentType, c.hasBody = body, contentType, true }
}

// Invalid marks the request as deliberately breaking the REST description (a bad body, an unknown
// key, a malformed key): its request violations are recorded but do not fail the spec. Response
// violations still do.
func Invalid() CallOption {
	return func(c *call) { c.invalid = true }
}

// Unjudged sends a call whose request and answer the text gives no shape for (an OPTIONS
// preflight): neither is judged against the REST description; the spec checks what the text says
// of it.
func Unjudged() CallOption {
	return func(c *call) { c.unjudged = true }
}

// JudgedOn judges the exchange against the description only when it is answered with one of
// statuses: a spec whose subject is which answer comes (a refusal where a wrong server replays)
// judges the body of the answer it asked for on that call, and leaves another one to its own
// checks rather than charging it to the other answer's rules.
func JudgedOn(statuses ...int) CallOption {
	return func(c *call) { c.judgedOn = append(c.judgedOn, statuses...) }
}

// KeepRefusal makes a call on a shared key answer a 429 rate_limited as it came instead of waiting
// it out and retrying: for a spec whose subject is the refusal itself.
func KeepRefusal() CallOption {
	return func(c *call) { c.keep = true }
}

// Get calls GET path (relative to the API root; it may carry a query string).
func (c *Client) Get(ctx context.Context, path string, opts ...CallOption) *Response {
	GinkgoHelper()
	return c.Do(ctx, http.MethodGet, path, opts...)
}

// Post calls POST path with body encoded as JSON; a nil body sends no body.
func (c *Client) Post(ctx context.Context, path string, body any, opts ...CallOption) *Response {
	GinkgoHelper()
	if body != nil {
		opts = append([]CallOption{JSONBody(body)}, opts...)
	}
	return c.Do(ctx, http.MethodPost, path, opts...)
}

// Delete calls DELETE path.
func (c *Client) Delete(ctx context.Context, path string, opts ...CallOption) *Response {
	GinkgoHelper()
	return c.Do(ctx, http.MethodDelete, path, opts...)
}

// Do makes one call to path below the API root. A transport error fails the spec. On a shared key
// a bucket refusal is waited out (unless the call is KeepRefusal), and a job the call started is
// remembered so that it ends before the spec does (jobs.go).
func (c *Client) Do(ctx context.Context, method, path string, opts ...CallOption) *Response {
	GinkgoHelper()
	res, err := c.call(ctx, method, path, opts)
	if err != nil {
		c.f.failCall(err)
	}
	c.track(method, res)
	c.f.checkWait(method, res)
	return res
}

// call makes one call like Do, without Ginkgo: on a shared key it waits out bucket refusals (at
// most a few times, each by the refusal's retry_after_seconds scaled by the time scale).
func (c *Client) call(ctx context.Context, method, path string, opts []CallOption) (*Response, error) {
	if len(c.with) > 0 {
		opts = append(append([]CallOption(nil), c.with...), opts...)
	}
	keep, unjudged := false, false
	if len(opts) > 0 {
		probe := &call{query: url.Values{}, header: http.Header{}}
		for _, o := range opts {
			o(probe)
		}
		keep, unjudged = probe.keep, probe.unjudged
	}
	var chk checker = c.f.judge
	if p, _, _ := strings.Cut(path, "?"); c.f.namedElsewhere(p) || unjudged {
		chk = nil // a path the text does not give, where the description has the reference's own
	}
	for attempt := 0; ; attempt++ {
		u := c.f.resolve(c.f.apiRoot, path)
		res, err := c.f.exchange(ctx, chk, method, u, c.key, c.scheme, opts)
		if err != nil {
			return res, err
		}
		wait, again := c.sharedBackoff(res)
		if keep || !again || attempt >= 3 {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(wait):
		}
	}
}

// sharedBackoff says how long to wait before retrying a shared-key call refused by a bucket.
func (c *Client) sharedBackoff(r *Response) (time.Duration, bool) {
	if !c.shared || r.Status != http.StatusTooManyRequests {
		return 0, false
	}
	doc, err := r.object()
	if err != nil {
		return 0, false
	}
	e, _ := doc["error"].(map[string]any)
	if e == nil || e["code"] != "rate_limited" {
		return 0, false
	}
	n, ok := AsInt(e["retry_after_seconds"])
	if !ok || n <= 0 {
		return 0, false
	}
	return time.Duration(float64(n)*float64(time.Second)/c.f.wallScale()) + 100*time.Millisecond, true
}

// Response is one answer, with the exchange that produced it.
type Response struct {
	Status   int         // the HTTP status
	Header   http.Header // the answer's header
	Body     []byte      // the whole body, read under the suite's cap
	Exchange *Exchange   // the call as the transcript shows it, redacted

	doc    any
	docErr error
	parsed bool
	viewed bool       // doc was given by View, not decoded from Body
	f      *Framework // the run that made the call (nil for a hand-made Response)
	// described is Describe's text once made: specs build it for every assertion's message, passed
	// or not (Go evaluates the argument), several times per answer.
	described string
}

// Copy returns the answer afresh: its body decoded again on first use, so that a caller changing
// the decoded document (a memoized answer handed to many specs) changes only its own copy.
func (r *Response) Copy() *Response {
	c := &Response{Status: r.Status, Header: r.Header, Body: r.Body, Exchange: r.Exchange, f: r.f}
	if r.viewed {
		// A view (Response.View) reads its own document, not the body: the copy gets its own.
		c.doc, c.parsed, c.viewed = deepCopyJSON(r.doc), true, true
	}
	return c
}

// Describe renders the exchange for a failure message. The exchange is complete once the call has
// returned (its violations included), so the text is made once per answer.
func (r *Response) Describe() string {
	if r.described == "" {
		r.described = "\n" + r.Exchange.String()
	}
	return r.described
}

// Doc is the body decoded as JSON (numbers as json.Number); it fails the spec when the body is not
// JSON.
func (r *Response) Doc() any {
	GinkgoHelper()
	if !r.parsed {
		r.parsed = true
		if r.docErr = r.decodable(); r.docErr == nil {
			dec := json.NewDecoder(bytes.NewReader(r.Body))
			dec.UseNumber()
			r.docErr = dec.Decode(&r.doc)
		}
	}
	Expect(r.docErr).NotTo(HaveOccurred(), "the body is not JSON"+r.Describe())
	return r.doc
}

// decodable refuses a body over the JSON cap (--max-json-bytes): an answer that came with another
// Content-Type may be as large as the file cap, and decoded JSON takes many times its size.
func (r *Response) decodable() error {
	limit := int64(DefaultMaxJSONBytes)
	if r.f != nil {
		limit, _ = r.f.maxAnswer("application/json")
	}
	if int64(len(r.Body)) > limit {
		return fmt.Errorf("the body is %d bytes, over %s, the most the suite decodes as JSON (--max-json-bytes raises it)", len(r.Body), ByteSize(limit))
	}
	if most := limit / BytesPerJSONValue; int64(jsoncount.Values(r.Body)) > most {
		return fmt.Errorf("the body holds over %d JSON values, the most the suite decodes within %s (--max-json-bytes raises both)", most, ByteSize(limit))
	}
	return nil
}

// object decodes the body as a JSON object (decodeObject) within the JSON cap.
func (r *Response) object() (map[string]any, error) {
	if err := r.decodable(); err != nil {
		return nil, err
	}
	return decodeObject(r.Body)
}

// Lookup returns the value at a dotted path of the decoded body ("error.code", "items.0.id") and
// whether it is present. A present JSON null is (nil, true).
func (r *Response) Lookup(path string) (any, bool) {
	GinkgoHelper()
	return Lookup(r.Doc(), path)
}

// Field returns the value at path, failing the spec when it is absent.
func (r *Response) Field(path string) any {
	GinkgoHelper()
	v, ok := r.Lookup(path)
	if !ok {
		r.f.referenceAbsent(path)
	}
	Expect(ok).To(BeTrue(), fmt.Sprintf("the body has no %q", path)+r.Describe())
	return v
}

// String returns the string at path, failing the spec when it is absent or not a string.
func (r *Response) String(path string) string {
	GinkgoHelper()
	v := r.Field(path)
	s, ok := v.(string)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is %s, want a string", path, jsonType(v))+r.Describe())
	return s
}

// Int returns the integer at path, failing the spec when it is absent or not a whole number.
func (r *Response) Int(path string) int64 {
	GinkgoHelper()
	v := r.Field(path)
	n, ok := AsInt(v)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is %s %v, want an integer", path, jsonType(v), v)+r.Describe())
	return n
}

// Bool returns the boolean at path, failing the spec when it is absent or not a boolean.
func (r *Response) Bool(path string) bool {
	GinkgoHelper()
	v := r.Field(path)
	b, ok := v.(bool)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is %s, want a boolean", path, jsonType(v))+r.Describe())
	return b
}

// Array returns the array at path, failing the spec when it is absent or not an array.
func (r *Response) Array(path string) []any {
	GinkgoHelper()
	v := r.Field(path)
	a, ok := v.([]any)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is %s, want an array", path, jsonType(v))+r.Describe())
	return a
}

// ExpectStatus fails the spec unless the answer has the status.
func (r *Response) ExpectStatus(status int) *Response {
	GinkgoHelper()
	Expect(r.Status).To(Equal(status), fmt.Sprintf("want HTTP %d", status)+r.Describe())
	return r
}

// ExpectOK fails the spec unless the answer has the status and a JSON object body with ok true.
// Where the text does not show ok on the answer (the normative view does not require it: the
// capability list, the generation list, answers not shown at all), ok is checked only when sent.
func (r *Response) ExpectOK(status int) *Response {
	GinkgoHelper()
	r.ExpectStatus(status)
	// ok: true is what a success answer carries (CORE-002), whatever rule the call serves.
	prev := r.f.swapStep([]string{"CORE-002"})
	_, isObj := r.Doc().(map[string]any)
	Expect(isObj).To(BeTrue(), "want a JSON object"+r.Describe())
	if _, has := r.Lookup("ok"); has || r.f == nil || r.f.okStated(r) {
		Expect(r.Field("ok")).To(Equal(true), "want ok: true"+r.Describe())
	}
	r.f.swapStep(prev)
	return r
}

// Charge runs check with ids as the step (Spec.Step) and puts the step before back after it: a
// failure in check fails the rules ids, the ones its assertions judge, not the rules of the step
// the spec was in when it read r (a fixed value checked on every read of a record, say). It panics
// on an id that is not in the catalogue, as Step does.
func (r *Response) Charge(ids []string, check func()) {
	GinkgoHelper()
	if r.f != nil {
		if err := r.f.CheckRules(ids); err != nil {
			panic(err.Error())
		}
	}
	prev := r.f.swapStep(ids)
	check()
	r.f.swapStep(prev)
}

// ExpectError fails the spec unless the answer is the error envelope with the status and code, and
// the envelope is right for that code: ok false, a non-empty message, retryable exactly as the
// error table says, credits_charged 0, a JSON Content-Type and no Cache-Control that lets it be
// stored; and for a 429 rate_limited carrying retry_after_seconds, a Retry-After header with the
// same whole number (on a 409 submission_in_flight, one that agrees if it is sent).
func (r *Response) ExpectError(status int, code string) *Response {
	GinkgoHelper()
	// A wrong status or code is the spec's own rules' failure, not the envelope's (none was checked
	// yet, maybe none was sent), nor the code's error table row's unless the answer carries that
	// code (then its status breaks the row).
	except := append([]string(nil), EnvelopeRules...)
	if !r.carriesCode(code) {
		except = append(except, r.f.codeRules(code)...)
	}
	prev, swapped := r.f.ownStep(except)
	Expect(r.Status).To(Equal(status), fmt.Sprintf("want HTTP %d %s", status, code)+r.Describe())
	CheckErrorEnvelope(r, code)
	if swapped {
		r.f.swapStep(prev)
	}
	return r
}

// carriesCode reports whether the answer is a JSON object whose error.code is code; it never fails
// the spec.
func (r *Response) carriesCode(code string) bool {
	doc, err := r.object()
	if err != nil {
		return false
	}
	e, _ := doc["error"].(map[string]any)
	return e != nil && e["code"] == code
}

// CheckErrorEnvelope checks the error envelope of r for code (the status is the caller's concern).
func CheckErrorEnvelope(r *Response, code string) {
	GinkgoHelper()
	Expect(r.Field("error.code")).To(Equal(code), fmt.Sprintf("want error.code %q", code)+r.Describe())
	// The code is the spec's own rule; each check of the envelope every refusal shares is charged
	// to the envelope rule it checks (steps.go), not to the rule whose refusal the spec asked for.
	prev := r.f.swapStep([]string{"CORE-003"})
	Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"), "an error answer is JSON"+r.Describe())
	doc, ok := r.Doc().(map[string]any)
	Expect(ok).To(BeTrue(), "an error body is a JSON object"+r.Describe())
	// {"error": {...}}: the error object is required; a key beside it is a response field the
	// versioning rules let a service add and a client ignore (Versioning 4), so it is not refused.
	Expect(doc).To(HaveKey("error"), "an error body is {\"error\": {...}}"+r.Describe())
	_, isObj := doc["error"].(map[string]any)
	Expect(isObj).To(BeTrue(), "error is an object"+r.Describe())
	r.f.swapStep([]string{"ERR-001"})
	Expect(r.Field("error.ok")).To(Equal(false), "error.ok is false"+r.Describe())
	r.f.swapStep([]string{"ERR-003"})
	msg := r.String("error.message")
	Expect(msg).NotTo(BeEmpty(), "error.message is a sentence"+r.Describe())
	r.f.swapStep([]string{"ERR-046"})
	if leak := UnsafeMessage(msg); leak != "" {
		Fail("error.message is one safe sentence, but it carries " + leak + r.Describe())
	}
	row, known := spec.LookupErrorCode(code)
	Expect(known).To(BeTrue(), "the spec asked for an error code the table does not have: "+code)
	// A wrong verdict breaks the code's own row of the table (ERR-021..ERR-042) as well as ERR-005.
	r.f.swapStep(append([]string{"ERR-005"}, r.f.codeRules(code)...))
	Expect(r.Bool("error.retryable")).To(Equal(row.Retryable), fmt.Sprintf("error.retryable for %s is %v", code, row.Retryable)+r.Describe())
	r.f.swapStep([]string{"ERR-007"})
	Expect(r.Int("error.credits_charged")).To(BeZero(), "a refusal charges nothing"+r.Describe())
	r.f.swapStep([]string{"CORE-018"})
	Expect(strings.Join(r.Header.Values("Cache-Control"), ", ")).NotTo(MatchRegexp(`(?i)\bpublic\b|\b(s-)?max-age=0*[1-9]`), "an error answer is never marked cacheable"+r.Describe())
	// The text promises Retry-After with retry_after_seconds on a bucket refusal only; on
	// submission_in_flight a Retry-After, when sent, must agree (ERR-010).
	if ras, has := r.Lookup("error.retry_after_seconds"); has && (code == "rate_limited" || code == "submission_in_flight") {
		// A wrong header is charged to the header's own rule, not to the envelope's.
		if code == "rate_limited" {
			r.f.swapStep([]string{"ERR-009"})
		} else {
			r.f.swapStep([]string{"ERR-010"})
		}
		n, isInt := AsInt(ras)
		Expect(isInt).To(BeTrue(), "error.retry_after_seconds is a whole number"+r.Describe())
		if ra := r.Header.Get("Retry-After"); code == "rate_limited" || ra != "" {
			Expect(retryAfterSeconds(ra, r.Header.Get("Date"))).To(Equal(n), "Retry-After (delta-seconds, or an HTTP-date that far after the answer's Date) equals error.retry_after_seconds"+r.Describe())
		}
	}
	r.f.swapStep(prev) // not reached when a check failed: the failure stays with the envelope rules
}

// Lookup walks a decoded JSON document along a dotted path; numeric segments index arrays.
func Lookup(doc any, path string) (any, bool) {
	cur := doc
	if path == "" {
		return cur, true
	}
	for _, seg := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// AsInt reports whether v (a decoded JSON value) is a whole number and returns it.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(n.String(), 10, 64)
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// retryAfterSeconds reads a Retry-After value as the seconds it asks to wait: delta-seconds, or an
// HTTP-date (RFC 9110 allows both) measured from the answer's Date header (rounded up to a whole
// second). -1 when it is neither, or an HTTP-date without a Date to measure from.
func retryAfterSeconds(v, date string) int64 {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return n
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return -1
	}
	sent, err := http.ParseTime(date)
	if err != nil {
		return -1
	}
	d := at.Sub(sent)
	if d < 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
