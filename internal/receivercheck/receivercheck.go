// Package receivercheck judges a client's webhook receiver from outside: it sends the receiver a
// set of deliveries signed as the service signs them (Standard Webhooks), some valid and some that
// a receiver must refuse, and turns the answered statuses into a verdict per rule of
// spec/rules.yaml (the RECV rules, and VER-017 for what a receiver must tolerate).
//
// Only statuses can be seen from outside: a check can tell that a replayed webhook-id was accepted
// again, not that the receiver acted on it once; it can tell that an out-of-order delivery was
// accepted, not that the receiver ordered it by created_at.
package receivercheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/mediaspec/mediaspec/receiver"
)

// Defaults of the interface's Limits table.
const (
	// DefaultTimeout is how long the service waits for a 2XX per attempt.
	DefaultTimeout = 10 * time.Second
	// DefaultTolerance is the webhook-timestamp tolerance a receiver applies, past and future.
	DefaultTolerance = 5 * time.Minute
	// UserAgent is the user-agent of the deliveries (the service's `<Service>-Webhooks/1.0`).
	UserAgent = "Mediaspec-Webhooks/1.0"
)

// Verdict states.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// ErrSetup wraps every error that stops a check before it can judge anything (exit 2 in the CLI).
var ErrSetup = errors.New("receiver check setup")

// Config configures a check.
type Config struct {
	// URL is the receiver's endpoint, http or https.
	URL string
	// Secret is the endpoint's signing secret, whsec_ + standard base64.
	Secret string
	// Timeout is the longest wait for one answer (default DefaultTimeout).
	Timeout time.Duration
	// Tolerance is the timestamp tolerance the receiver should apply (default DefaultTolerance).
	Tolerance time.Duration
	// Now is the clock that stamps deliveries (default time.Now).
	Now func() time.Time
	// Client sends the deliveries (default: a client with Timeout that never follows redirects).
	Client *http.Client
}

// Case is one delivery sent and how the receiver answered it.
type Case struct {
	Rule    string        // the rule id the case bears on
	Name    string        // what was sent, in a few words
	Accept  bool          // true: a 2XX is wanted; false: a non-2XX is wanted
	Status  int           // the status answered; 0 when no answer came
	Elapsed time.Duration // time to the answer's headers
	Err     string        // transport error, when no answer came
	OK      bool          // the answer is the wanted one

	unreachable bool // no connection could be made
}

// Verdict is the outcome of one rule.
type Verdict struct {
	Rule   string
	State  string // Pass, Fail or Skip
	Reason string
}

// Result is a whole check.
type Result struct {
	Cases    []Case
	Verdicts []Verdict
}

// Counts tallies the verdicts by state.
func (r Result) Counts() (passed, failed, skipped int) {
	for _, v := range r.Verdicts {
		switch v.State {
		case Pass:
			passed++
		case Fail:
			failed++
		default:
			skipped++
		}
	}
	return
}

// CaseCounts tallies the deliveries by outcome.
func (r Result) CaseCounts() (passed, failed int) {
	for _, c := range r.Cases {
		if c.OK {
			passed++
		} else {
			failed++
		}
	}
	return
}

// Failed reports whether any rule failed.
func (r Result) Failed() bool {
	_, f, _ := r.Counts()
	return f > 0
}

// rules are the judged rules in report order, with what a pass means.
var rules = []struct{ id, pass string }{
	{"RECV-001", "every delivery with a bad, tampered, malformed or missing signature header, or a missing webhook-id or webhook-timestamp, was refused"},
	{"RECV-002", "timestamps beyond the tolerance, past and future, were refused; ones within it were accepted"},
	{"RECV-004", "a replayed webhook-id was accepted again (from outside only statuses are seen: whether it was acted on once cannot be judged)"},
	{"RECV-005", "every valid delivery, webhook.test included, was answered 2XX within the timeout"},
	{"RECV-006", "a header with two signatures (an old secret's and the current one's) was accepted"},
	{"RECV-007", "a delivery older by created_at than one already accepted was accepted (whether the receiver orders by created_at cannot be seen from outside)"},
	{"VER-017", "unknown envelope and data fields and an unknown event type were accepted"},
}

// Validate checks cfg's URL and secret; its errors wrap ErrSetup.
func Validate(cfg Config) error {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: --url %q: want an http or https URL with a host", ErrSetup, cfg.URL)
	}
	if _, err := receiver.ParseSecret(cfg.Secret); err != nil {
		// The receiver's error carries its package's prefix; the setup error has its own.
		return fmt.Errorf("%w: --secret: %s", ErrSetup, strings.TrimPrefix(err.Error(), "receiver: "))
	}
	return nil
}

// What check-receiver reads of one answer of the receiver: the status decides, so at most
// maxAnswerBody bytes of the body are read (and dropped) and the header block is capped.
const (
	maxAnswerBody   = 64 << 10
	maxAnswerHeader = 64 << 10
)

// Run sends the deliveries one after another and judges the answers. An error wraps ErrSetup
// when cfg is unusable or the receiver cannot be reached at all.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := Validate(cfg); err != nil {
		return Result{}, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = DefaultTolerance
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		// The receiver is a peer nobody here controls: the header block of its answer is capped
		// (Go's default is 10 MB); of its body at most maxAnswerBody bytes are read, and each
		// delivery has cfg.Timeout.
		cfg.Client = &http.Client{
			Transport:     &http.Transport{Proxy: http.ProxyFromEnvironment, MaxResponseHeaderBytes: maxAnswerHeader},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	hook, err := standardwebhooks.NewWebhook(cfg.Secret)
	if err != nil {
		return Result{}, fmt.Errorf("%w: --secret: %v", ErrSetup, err)
	}
	other, err := standardwebhooks.NewWebhookRaw(randomBytes(32))
	if err != nil {
		return Result{}, err
	}
	s := &sender{cfg: cfg, hook: hook, other: other}
	var res Result

	// The first valid delivery doubles as the reachability probe.
	first := s.delivery("generation.completed", s.cfg.Now().Add(-time.Minute), nil)
	c := s.send(ctx, "RECV-005", "valid generation.completed", true, first, nil)
	if c.unreachable {
		return Result{}, fmt.Errorf("%w: cannot reach %s: %s", ErrSetup, cfg.URL, c.Err)
	}
	res.Cases = append(res.Cases, c)
	add := func(rule, name string, accept bool, d delivery, edit func(http.Header, []byte)) {
		res.Cases = append(res.Cases, s.send(ctx, rule, name, accept, d, edit))
	}
	add("RECV-005", "valid webhook.test", true, s.delivery("webhook.test", time.Time{}, nil), nil)

	// RECV-001: the signature, on the raw bytes.
	add("RECV-001", "signed with another secret", false, s.delivery("generation.completed", time.Time{}, nil),
		func(h http.Header, body []byte) { h.Set("Webhook-Signature", s.signWith(other, h, body)) })
	tampered := s.delivery("generation.completed", time.Time{}, nil)
	add("RECV-001", "body changed after signing", false, tampered, func(h http.Header, body []byte) {
		h.Set("Webhook-Signature", s.signWith(hook, h, bytes.Replace(body, []byte(`"credits_charged":12`), []byte(`"credits_charged":11`), 1)))
	})
	add("RECV-001", "signature not v1 base64", false, s.delivery("generation.completed", time.Time{}, nil),
		func(h http.Header, _ []byte) { h.Set("Webhook-Signature", "v1,not-a-signature") })
	add("RECV-001", "signature with an unknown version", false, s.delivery("generation.completed", time.Time{}, nil),
		func(h http.Header, _ []byte) {
			h.Set("Webhook-Signature", "v9,"+strings.TrimPrefix(h.Get("Webhook-Signature"), "v1,"))
		})
	for _, name := range []string{"Webhook-Signature", "Webhook-Id", "Webhook-Timestamp"} {
		add("RECV-001", "no "+strings.ToLower(name)+" header", false, s.delivery("generation.completed", time.Time{}, nil),
			func(h http.Header, _ []byte) { h.Del(name) })
	}

	// RECV-002: the timestamp tolerance, correctly signed.
	beyond := cfg.Tolerance + 5*time.Minute
	add("RECV-002", "timestamp "+beyond.String()+" old", false, s.delivery("generation.completed", cfg.Now().Add(-beyond), nil), nil)
	add("RECV-002", "timestamp "+beyond.String()+" ahead", false, s.delivery("generation.completed", cfg.Now().Add(beyond), nil), nil)
	within := cfg.Tolerance - time.Minute
	add("RECV-002", "timestamp "+within.String()+" old", true, s.delivery("generation.completed", cfg.Now().Add(-within), nil), nil)

	// RECV-004: the first delivery again, same webhook-id and body, a fresh timestamp (a retry).
	add("RECV-004", "replayed webhook-id", true, delivery{id: first.id, body: first.body, stamp: cfg.Now()}, nil)

	// RECV-006: a rotation: the old secret's signature first, then the current one's.
	add("RECV-006", "two signatures, old secret first", true, s.delivery("generation.completed", time.Time{}, nil),
		func(h http.Header, body []byte) {
			h.Set("Webhook-Signature", s.signWith(other, h, body)+" "+h.Get("Webhook-Signature"))
		})

	// RECV-007: an event older than the first one arrives after it.
	add("RECV-007", "older created_at after a newer one", true, s.delivery("generation.failed", time.Time{}, nil), nil)

	// VER-017: what a receiver must tolerate.
	add("VER-017", "unknown envelope and data fields", true, s.delivery("generation.completed", time.Time{},
		map[string]string{`"type":`: `"delivery_attempt":1,"type":`, `"disclosure":`: `"new_field_2027":{"a":[1,2]},"disclosure":`}), nil)
	add("VER-017", "unknown event type", true, s.delivery("generation.archived", time.Time{}, nil), nil)

	res.Verdicts = judge(res.Cases)
	return res, nil
}

// judge turns the cases into one verdict per rule.
func judge(cases []Case) []Verdict {
	validOK := true
	for _, c := range cases {
		if c.Rule == "RECV-005" && !c.OK {
			validOK = false
		}
	}
	out := make([]Verdict, 0, len(rules))
	for _, r := range rules {
		var bad []string
		refusals := true
		for _, c := range cases {
			if c.Rule != r.id {
				continue
			}
			refusals = refusals && !c.Accept
			if !c.OK {
				bad = append(bad, c.describe())
			}
		}
		switch {
		case len(bad) > 0:
			out = append(out, Verdict{r.id, Fail, strings.Join(bad, "; ")})
		case refusals && !validOK:
			out = append(out, Verdict{r.id, Skip, "the valid deliveries were not accepted, so a refusal shows nothing"})
		default:
			out = append(out, Verdict{r.id, Pass, r.pass})
		}
	}
	return out
}

func (c Case) describe() string {
	want := "want a non-2XX"
	if c.Accept {
		want = "want a 2XX"
	}
	got := fmt.Sprintf("answered %d in %s", c.Status, c.Elapsed.Round(time.Millisecond))
	if c.Status == 0 {
		got = "no answer: " + c.Err
	}
	return fmt.Sprintf("%s: %s, %s", c.Name, got, want)
}

type sender struct {
	cfg   Config
	hook  *standardwebhooks.Webhook // the receiver's secret
	other *standardwebhooks.Webhook // a secret the receiver does not know
	n     int                       // deliveries built, for created_at order
}

type delivery struct {
	id    string
	body  []byte
	stamp time.Time
}

// delivery builds a delivery of event typ stamped at stamp (zero: now). Each edit
// replaces the first occurrence of its key in the body, to add fields.
func (s *sender) delivery(typ string, stamp time.Time, edits map[string]string) delivery {
	if stamp.IsZero() {
		stamp = s.cfg.Now()
	}
	s.n++
	id := "whd_" + hex.EncodeToString(randomBytes(16))
	// Each later delivery's event happened earlier, so the RECV-007 case arrives out of order.
	created := s.cfg.Now().UTC().Add(-time.Duration(s.n) * time.Second).Truncate(time.Second).Format(time.RFC3339)
	body := envelope(id, typ, created)
	keys := make([]string, 0, len(edits))
	for k := range edits {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		body = strings.Replace(body, k, edits[k], 1)
	}
	return delivery{id: id, body: []byte(body), stamp: stamp}
}

// envelope is a delivery body of the interface's shape for typ.
func envelope(id, typ, created string) string {
	gen := "gen_" + hex.EncodeToString(randomBytes(16))
	var data string
	switch typ {
	case "webhook.test":
		data = `{"webhook_id":"wh_` + hex.EncodeToString(randomBytes(16)) + `","message":"This is a test event sent from the app."}`
	case "generation.failed":
		data = `{"generation_id":"` + gen + `","capability_id":"image_basic","status":"failed","output_kind":"image","outputs":[],` +
			`"outputs_expected":1,"outputs_delivered":0,"credits":{"credits_held":12,"credits_charged":0,"settlement":"captured","terminal":true},` +
			`"charge_summary":"Held 12 credits; released on failure.","batch_group_id":null,"batch_index":null,"workflow_run_id":null,"purpose":"deliverable",` +
			`"error":{"code":"provider_error","message":"The provider failed."},"created_at":"` + created + `","completed_at":"` + created + `",` +
			`"disclosure":"Nothing is published on your behalf; the files are AI generated."}`
	default:
		data = `{"generation_id":"` + gen + `","capability_id":"image_basic","status":"completed","output_kind":"image",` +
			`"outputs":[{"index":0,"asset_id":"ast_` + hex.EncodeToString(randomBytes(16)) + `","kind":"image"}],` +
			`"outputs_expected":1,"outputs_delivered":1,"credits":{"credits_held":12,"credits_charged":12,"settlement":"captured","terminal":true},` +
			`"charge_summary":"Charged 12 credits.","batch_group_id":null,"batch_index":null,"workflow_run_id":null,"purpose":"deliverable",` +
			`"error":null,"created_at":"` + created + `","completed_at":"` + created + `",` +
			`"disclosure":"Nothing is published on your behalf; the files are AI generated."}`
	}
	return `{"id":"` + id + `","type":"` + typ + `","created_at":"` + created + `","data":` + data + `}`
}

// signWith signs body as the delivery in h (webhook-id, webhook-timestamp) with hook; it returns
// "" when h lacks what a signature needs.
func (s *sender) signWith(hook *standardwebhooks.Webhook, h http.Header, body []byte) string {
	ts, err := strconv.ParseInt(h.Get("Webhook-Timestamp"), 10, 64)
	if err != nil {
		return ""
	}
	sig, err := hook.Sign(h.Get("Webhook-Id"), time.Unix(ts, 0), body)
	if err != nil {
		return ""
	}
	return sig
}

// send signs d as the service does, lets edit change the headers, posts it and records the answer.
func (s *sender) send(ctx context.Context, rule, name string, accept bool, d delivery, edit func(h http.Header, body []byte)) Case {
	c := Case{Rule: rule, Name: name, Accept: accept}
	sig, err := s.hook.Sign(d.id, d.stamp, d.body)
	if err != nil {
		c.Err = "sign: " + err.Error()
		return c
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("Webhook-Id", d.id)
	h.Set("Webhook-Timestamp", strconv.FormatInt(d.stamp.Unix(), 10))
	h.Set("Webhook-Signature", sig)
	if edit != nil {
		edit(h, d.body)
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, s.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		c.Err = err.Error()
		return c
	}
	req.Header = h
	start := time.Now()
	resp, err := s.cfg.Client.Do(req)
	c.Elapsed = time.Since(start)
	if err != nil {
		c.Err = err.Error()
		if strings.Contains(c.Err, "server response headers exceeded") {
			c.Err = fmt.Sprintf("the header block of the receiver's answer is over %d KiB, the cap check-receiver reads", maxAnswerHeader>>10)
		}
		var op *net.OpError
		c.unreachable = errors.As(err, &op) && op.Op == "dial"
		return c
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBody))
	_ = resp.Body.Close()
	c.Status = resp.StatusCode
	c.OK = (c.Status/100 == 2) == accept
	return c
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
