// Package receiver is a Standard Webhooks receiver for the media generation API's deliveries.
//
// A Receiver is an http.Handler. Every POST outside the reserved prefix APIPrefix is a delivery
// attempt: the receiver reads the raw body, verifies the webhook-signature on those raw bytes with
// one of its secrets before parsing anything, checks webhook-timestamp against its own injected
// clock, parses the envelope {id, type, created_at, data}, checks that webhook-id equals the body id
// and dedupes on webhook-id. It records every attempt (bounded) and every unique verified event,
// lets Go code wait for an event or for a number of attempts without polling, lists both over a
// small JSON API under APIPrefix, can forward verified deliveries to a loopback URL, and can
// misbehave on purpose (fail, hold, redirect, drop) through its Behavior policy so that a sender's
// retries can be exercised.
//
// The receiver accepts deliveries on any path, so one receiver can stand for several webhook
// endpoints; every attempt and event records the path it came in on.
//
// This package never imports Ginkgo or Gomega: the conformance suite and client authors both use it.
package receiver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTolerance  = 5 * time.Minute
	DefaultMaxBody    = 1 << 20
	DefaultMaxRecords = 10000
	// MaxRecordBytes bounds the bytes the kept attempts hold (bodies and headers), and the kept
	// events theirs: past it the oldest are dropped as past MaxRecords, so 10,000 deliveries of
	// 1 MiB each keep at most this much, not 10 GB.
	MaxRecordBytes = 32 << 20
	// MinSecretBytes is the shortest signing key (the bytes the whsec_ secret encodes) New accepts.
	MinSecretBytes = 16
	// APIPrefix is the reserved path prefix of the listing API; deliveries are never accepted under it.
	APIPrefix = "/_receiver/"
	// forwardTimeout bounds one forward of a verified delivery.
	forwardTimeout = 10 * time.Second
	// maxForwardHeader caps the header block of the forward target's answer (Go's default: 10 MB).
	maxForwardHeader = 64 << 10
)

// Errors returned by New, SetSecrets and ParseSecret (wrapped with details; test with errors.Is).
var (
	// ErrNoSecret: no secret, or an empty one, was given.
	ErrNoSecret = errors.New("receiver: a signing secret is required")
	// ErrBadSecret: a secret is not whsec_ followed by standard base64 of at least MinSecretBytes bytes.
	ErrBadSecret = errors.New("receiver: malformed signing secret")
	// ErrBadForward: the forward URL is not an http(s) URL on a loopback host.
	ErrBadForward = errors.New("receiver: forward URL must be http(s) on a loopback host")
	// ErrBadConfig: another Config field is out of range.
	ErrBadConfig = errors.New("receiver: invalid config")
)

// Config configures a Receiver. The zero value of every field but Secrets is usable.
type Config struct {
	// Secrets are the signing secrets (whsec_ + base64 of the HMAC key). A signature made with any
	// of them passes, so a rotation can be followed by listing the old and the new secret. Required.
	Secrets []string
	// Tolerance is how far webhook-timestamp may lie from Now, in the past or in the future.
	// Exactly Tolerance passes; one second more is refused. Default DefaultTolerance (5 min).
	Tolerance time.Duration
	// Now is the receiver's clock for the timestamp check and for recorded times. Default time.Now.
	Now func() time.Time
	// Window, when set, replaces Now when an attempt arrives: from one reading of the clock it
	// returns the arrival time (Attempt.Time) and the earliest and the latest time the sender's
	// clock may have shown when it stamped the attempt (for a sender whose clock jumps while
	// messages are in flight, or when either of two clocks may stamp); a timestamp passes when it
	// lies within Tolerance of that span. It is called once per attempt, without the receiver's
	// lock held, so it may be slow (a remote clock). Now still stamps when an answer is settled.
	Window func() (now, earliest, latest time.Time)
	// Forward is an optional http(s) URL on a loopback host (127.0.0.0/8, ::1 or localhost). Every
	// attempt whose verdict is VerdictVerified is re-posted there (same body, same headers) in the
	// background after it was answered; the forward's outcome is logged, never answered to the sender.
	Forward string
	// Logger receives debug lines per attempt and warnings about failed forwards. Default: discard.
	Logger *slog.Logger
	// Behavior decides the answer to each attempt after it was verified and recorded. Nil answers
	// the default (see Response). Replace it at run time with SetBehavior.
	Behavior Behavior
	// MaxBody is the largest body read, in bytes; a longer body is VerdictBadBody. Default 1 MiB.
	MaxBody int64
	// MaxRecords bounds the attempts, the events and the remembered delivery ids each. Past it the
	// earliest attempt (by arrival), the earliest event (by created_at) and the earliest delivery id
	// (by first sight; a later repeat of it counts as new) are dropped. Default DefaultMaxRecords.
	MaxRecords int
	// OnAttempt, when set, is called once per attempt after its answer is settled (answered,
	// abandoned by the client, or dropped), from the request's goroutine: it must be safe for
	// concurrent use and should return quickly.
	OnAttempt func(Attempt)
}

// Receiver verifies, records and answers webhook deliveries. It is safe for concurrent use.
// Create it with New; call Close to stop forwards and release held requests.
type Receiver struct {
	now        func() time.Time
	window     func() (now, earliest, latest time.Time)
	tolerance  time.Duration
	maxBody    int64
	maxRecords int
	forward    *url.URL
	log        *slog.Logger
	onAttempt  func(Attempt)
	client     *http.Client // forwards; never follows redirects

	closeOnce sync.Once
	done      chan struct{} // closed by Close: ends holds and in-flight forwards
	forwards  sync.WaitGroup

	mu sync.Mutex // guards everything below
	// hooks is the verifier per secret, in the order given.
	hooks      []*standardwebhooks.Webhook
	behavior   Behavior
	seq        int64
	attempts   []*Attempt // arrival order, at most maxRecords and MaxRecordBytes
	events     []Event    // ordered by CreatedAt then Seq, at most maxRecords and MaxRecordBytes
	keptBytes  int64      // what attempts hold (attemptSize)
	eventBytes int64      // what events hold (len of Raw)
	deliveries map[string]*delivery
	order      []string      // delivery ids in first-seen order, for eviction
	changed    chan struct{} // closed and replaced whenever attempts or events change
}

// delivery is what the receiver remembers of one webhook-id.
type delivery struct {
	attempts int  // attempts seen with this webhook-id, verified or not
	verified bool // an attempt with this webhook-id was verified
}

// New checks cfg and returns a Receiver. It refuses an empty or malformed secret (ErrNoSecret,
// ErrBadSecret), a forward URL that is not on a loopback host (ErrBadForward) and negative bounds
// (ErrBadConfig).
func New(cfg Config) (*Receiver, error) {
	hooks, err := parseSecrets(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	if cfg.Tolerance < 0 || cfg.MaxBody < 0 || cfg.MaxRecords < 0 {
		return nil, fmt.Errorf("%w: Tolerance, MaxBody and MaxRecords must not be negative", ErrBadConfig)
	}
	r := &Receiver{
		now:        cfg.Now,
		window:     cfg.Window,
		tolerance:  cfg.Tolerance,
		maxBody:    cfg.MaxBody,
		maxRecords: cfg.MaxRecords,
		log:        cfg.Logger,
		onAttempt:  cfg.OnAttempt,
		done:       make(chan struct{}),
		hooks:      hooks,
		behavior:   cfg.Behavior,
		deliveries: map[string]*delivery{},
		changed:    make(chan struct{}),
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.window == nil {
		r.window = func() (time.Time, time.Time, time.Time) { now := r.now(); return now, now, now }
	}
	if r.tolerance == 0 {
		r.tolerance = DefaultTolerance
	}
	if r.maxBody == 0 {
		r.maxBody = DefaultMaxBody
	}
	if r.maxRecords == 0 {
		r.maxRecords = DefaultMaxRecords
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Forward != "" {
		u, err := ParseForward(cfg.Forward)
		if err != nil {
			return nil, err
		}
		r.forward = u
		r.client = &http.Client{
			Transport:     &http.Transport{MaxResponseHeaderBytes: maxForwardHeader},
			Timeout:       forwardTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return r, nil
}

// ParseSecret checks one signing secret and returns the HMAC key it encodes: the standard base64
// (padded) text after the whsec_ prefix, at least MinSecretBytes bytes once decoded.
func ParseSecret(secret string) ([]byte, error) {
	if secret == "" {
		return nil, ErrNoSecret
	}
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, fmt.Errorf("%w: want the prefix whsec_", ErrBadSecret)
	}
	if rest == "" {
		return nil, ErrNoSecret
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: the part after whsec_ is not standard base64", ErrBadSecret)
	}
	if len(key) < MinSecretBytes {
		return nil, fmt.Errorf("%w: the key is %d bytes, want at least %d", ErrBadSecret, len(key), MinSecretBytes)
	}
	return key, nil
}

func parseSecrets(secrets []string) ([]*standardwebhooks.Webhook, error) {
	if len(secrets) == 0 {
		return nil, ErrNoSecret
	}
	hooks := make([]*standardwebhooks.Webhook, 0, len(secrets))
	for i, s := range secrets {
		if _, err := ParseSecret(s); err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		h, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w: %v", i+1, ErrBadSecret, err)
		}
		hooks = append(hooks, h)
	}
	return hooks, nil
}

// ParseForward checks a forward URL: http or https, a loopback IP or localhost, no user info.
func ParseForward(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadForward, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q", ErrBadForward, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: user info is not allowed", ErrBadForward)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%w: no host in %q", ErrBadForward, raw)
	}
	if !strings.EqualFold(host, "localhost") {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("%w: host %q", ErrBadForward, host)
		}
	}
	return u, nil
}

// SetSecrets replaces the accepted secrets at once (for example after a rotation; list the old
// and the new secret to accept both). It refuses the same secrets New refuses and then keeps the
// previous ones.
func (r *Receiver) SetSecrets(secrets ...string) error {
	hooks, err := parseSecrets(secrets)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.hooks = hooks
	r.mu.Unlock()
	return nil
}

// SetBehavior replaces the answer policy for the attempts that arrive from now on (nil: default).
func (r *Receiver) SetBehavior(b Behavior) {
	r.mu.Lock()
	r.behavior = b
	r.mu.Unlock()
}

// Close ends every held request by dropping its connection (no answer), cancels in-flight
// forwards and waits for them. Records stay readable and deliveries are still verified, recorded
// and answered after Close, but nothing is forwarded and a Behavior's Hold drops at once.
func (r *Receiver) Close() error {
	r.closeOnce.Do(func() { close(r.done) })
	r.forwards.Wait()
	return nil
}

// ServeHTTP routes APIPrefix to the listing API and treats every other POST as a delivery attempt.
// Other methods outside APIPrefix answer 405 and are not recorded.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if strings.HasPrefix(req.URL.Path, APIPrefix) || req.URL.Path == strings.TrimSuffix(APIPrefix, "/") {
		r.serveAPI(w, req)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook receiver: deliveries are POSTs", http.StatusMethodNotAllowed)
		return
	}
	r.serveDelivery(w, req)
}

// serveDelivery handles one delivery attempt: verify, record, then answer per Behavior.
func (r *Receiver) serveDelivery(w http.ResponseWriter, req *http.Request) {
	body, readErr := io.ReadAll(http.MaxBytesReader(w, req.Body, r.maxBody))
	// One reading of the clock per attempt: its arrival time and the span its timestamp is judged
	// against come from it, so they agree, and a slow clock (the suite's reads the target's over
	// HTTP) is read once and never under the lock.
	now, earliest, latest := r.window()
	a, env := r.check(req.Header, body, readErr, earliest, latest)
	a.Method = req.Method
	a.Path = req.URL.Path
	a.Header = req.Header.Clone()
	a.Body = body

	rec, a, behavior := r.record(a, env, now)
	r.log.Debug("webhook attempt", "path", a.Path, "delivery_id", a.DeliveryID, "number", a.Number,
		"type", a.Type, "verdict", a.Verdict, "detail", a.Detail)

	var resp Response
	if behavior != nil {
		resp = behavior(a)
	}
	status := resp.Status
	if status == 0 {
		status = a.Verdict.DefaultStatus()
	}
	switch {
	case resp.Drop:
		r.settle(rec, 0, false, true)
		dropConnection(w)
		return
	case resp.Hold > 0:
		t := time.NewTimer(resp.Hold)
		select {
		case <-t.C:
		case <-resp.Release:
			t.Stop()
		case <-req.Context().Done():
			t.Stop()
			r.settle(rec, 0, true, false)
			return
		case <-r.done:
			// Returning without writing would make net/http answer an empty 200: drop instead.
			t.Stop()
			r.settle(rec, 0, true, false)
			dropConnection(w)
			return
		}
	}
	if resp.Location != "" {
		w.Header().Set("Location", resp.Location)
	}
	switch {
	case resp.Body != "" && status != http.StatusNoContent:
		ct := resp.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp.Body)
	case status == http.StatusNoContent || status < 400:
		w.WriteHeader(status)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintln(w, string(a.Verdict))
	}
	// Send the answer now: OnAttempt and the forward must not delay it.
	_ = http.NewResponseController(w).Flush()
	r.settle(rec, status, false, false)
	if a.Verdict == VerdictVerified && r.forward != nil {
		r.startForward(a)
	}
}

// envelope is the body of a delivery.
type envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// check computes the verdict of one attempt (all but VerdictDuplicate, which needs the records),
// judging webhook-timestamp against [earliest, latest]. The signature is verified on the raw bytes
// before the body is parsed.
func (r *Receiver) check(h http.Header, body []byte, readErr error, earliest, latest time.Time) (Attempt, *Event) {
	a := Attempt{DeliveryID: h.Get(standardwebhooks.HeaderWebhookID)}
	if readErr != nil {
		var tooBig *http.MaxBytesError
		if errors.As(readErr, &tooBig) {
			return a.refuse(VerdictBadBody, fmt.Sprintf("body over %d bytes", tooBig.Limit)), nil
		}
		return a.refuse(VerdictBadBody, "reading the body: "+readErr.Error()), nil
	}
	tsText := h.Get(standardwebhooks.HeaderWebhookTimestamp)
	sigText := h.Get(standardwebhooks.HeaderWebhookSignature)
	var missing []string
	for name, v := range map[string]string{"webhook-id": a.DeliveryID, "webhook-timestamp": tsText, "webhook-signature": sigText} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return a.refuse(VerdictMissingHeaders, "missing "+strings.Join(missing, ", ")), nil
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return a.refuse(VerdictMissingHeaders, fmt.Sprintf("webhook-timestamp %q is not integer Unix seconds", tsText)), nil
	}
	r.mu.Lock()
	hooks := r.hooks
	r.mu.Unlock()
	ok := false
	for _, hook := range hooks {
		if hook.VerifyIgnoringTimestamp(body, h) == nil {
			ok = true
			break
		}
	}
	if !ok {
		return a.refuse(VerdictBadSignature, "no v1 signature matches any secret"), nil
	}
	sent := time.Unix(ts, 0)
	if d := earliest.Sub(sent); d > r.tolerance {
		return a.refuse(VerdictStaleTimestamp, fmt.Sprintf("webhook-timestamp is %s old, tolerance %s", d, r.tolerance)), nil
	}
	if d := sent.Sub(latest); d > r.tolerance {
		return a.refuse(VerdictFutureTimestamp, fmt.Sprintf("webhook-timestamp is %s ahead, tolerance %s", d, r.tolerance)), nil
	}
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&env); err != nil {
		return a.refuse(VerdictBadBody, "body is not a JSON envelope: "+err.Error()), nil
	}
	if dec.More() {
		return a.refuse(VerdictBadBody, "body has data after the JSON envelope"), nil
	}
	a.Type = env.Type
	switch {
	case env.ID == "":
		return a.refuse(VerdictBadBody, "envelope id is missing or empty"), nil
	case env.Type == "":
		return a.refuse(VerdictBadBody, "envelope type is missing or empty"), nil
	case len(bytes.TrimSpace(env.Data)) == 0 || bytes.TrimSpace(env.Data)[0] != '{':
		return a.refuse(VerdictBadBody, "envelope data is missing or not an object"), nil
	}
	created, err := time.Parse(time.RFC3339Nano, env.CreatedAt)
	if err != nil {
		return a.refuse(VerdictBadBody, fmt.Sprintf("envelope created_at %q is not RFC 3339", env.CreatedAt)), nil
	}
	ev := &Event{ID: env.ID, Type: env.Type, CreatedAt: created, Data: env.Data, Raw: body, resourceID: resourceIDOf(env.Data)}
	a.EventID = env.ID
	a.ResourceID = ev.resourceID
	if env.ID != a.DeliveryID {
		return a.refuse(VerdictIDMismatch, fmt.Sprintf("webhook-id %q but body id %q", a.DeliveryID, env.ID)), nil
	}
	a.Verdict = VerdictVerified
	return a, ev
}

func (a Attempt) refuse(v Verdict, detail string) Attempt {
	a.Verdict = v
	a.Detail = detail
	return a
}

// dropConnection closes the client connection without writing an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// startForward re-posts a verified attempt to the forward URL in the background.
func (r *Receiver) startForward(a Attempt) {
	select {
	case <-r.done:
		return
	default:
	}
	r.forwards.Add(1)
	go func() {
		defer r.forwards.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-r.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.forward.String(), bytes.NewReader(a.Body))
		if err != nil {
			r.log.Warn("webhook forward failed", "delivery_id", a.DeliveryID, "error", err)
			return
		}
		for k, vs := range a.Header {
			if hopByHop(http.CanonicalHeaderKey(k)) {
				continue
			}
			req.Header[k] = append([]string(nil), vs...)
		}
		res, err := r.client.Do(req)
		if err != nil {
			r.log.Warn("webhook forward failed", "delivery_id", a.DeliveryID, "url", r.forward.String(), "error", err)
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
		_ = res.Body.Close()
		if res.StatusCode/100 != 2 {
			r.log.Warn("webhook forward answered non-2XX", "delivery_id", a.DeliveryID, "url", r.forward.String(), "status", res.StatusCode)
			return
		}
		r.log.Debug("webhook forwarded", "delivery_id", a.DeliveryID, "status", res.StatusCode)
	}()
}

// hopByHop reports the (canonical) request headers not copied to a forward.
func hopByHop(name string) bool {
	switch name {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding",
		"Upgrade", "Content-Length", "Host", "Accept-Encoding":
		return true
	}
	return false
}
