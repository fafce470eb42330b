package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Webhook deliveries through the proxy: Hooks stands in front of the client's webhook receiver.
// Each attempt is checked as `mediaspec receive` checks it (package receiver: signature on the raw
// bytes, timestamp, headers, envelope, webhook-id equal to the body id, duplicates), plus the
// sender's delivery rules an attempt shows (user-agent, content type, a single signature header,
// the delivery id's form, the payload rules, the retry schedule across attempts), then forwarded
// unchanged (same path below the forward URL, same headers, same bytes), and the receiver's answer
// is relayed to the sender and judged by the rules check-receiver judges (RECV-001, RECV-002,
// RECV-004, RECV-005).

// Defaults of HooksConfig.
const (
	// DeliveryTimeout is how long the service waits for a 2XX per attempt.
	DeliveryTimeout = contract.DeliveryTimeout
	// MaxDeliveries is how many delivery ids' attempts are remembered for the retry schedule.
	MaxDeliveries = 4096
)

// retryWaits are the waits before attempts 2 to 5 ("about"; judged within 20 percent).
var retryWaits = contract.RetryWaits()

// HooksConfig configures Hooks.
type HooksConfig struct {
	// Secrets are the endpoint's signing secrets (whsec_...). Required.
	Secrets []string
	// Forward is the client's receiver: an http(s) URL on a loopback host. Required.
	Forward string
	// Tolerance is the timestamp tolerance (default 5 minutes, as the text states).
	Tolerance time.Duration
}

// Hooks receives webhook deliveries, checks them, forwards them to the client's receiver and
// judges its answers. It is an http.Handler (deliveries on any path; the receiver package's
// listing API under /_receiver/), safe for concurrent use.
type Hooks struct {
	p      *Proxy
	rcv    *receiver.Receiver
	fwd    *url.URL
	client *http.Client

	mu         sync.Mutex // guards deliveries
	deliveries *lru[*deliverySeen]
}

// deliverySeen is what the hooks remember of one delivery id.
type deliverySeen struct {
	stamps    []int64     // webhook-timestamp of each attempt
	arrivals  []time.Time // estimated service time of each arrival
	createdAt string      // envelope created_at of the first attempt
	accepted  bool        // an attempt was answered 2XX
}

// NewHooks checks cfg and returns Hooks that record their findings in p.
func NewHooks(p *Proxy, cfg HooksConfig) (*Hooks, error) {
	fwd, err := receiver.ParseForward(cfg.Forward)
	if err != nil {
		return nil, err
	}
	h := &Hooks{p: p, fwd: fwd, deliveries: newLRU[*deliverySeen](MaxDeliveries),
		client: &http.Client{
			Transport:     &http.Transport{Proxy: http.ProxyFromEnvironment, MaxResponseHeaderBytes: MaxAnswerHeader},
			Timeout:       DeliveryTimeout + 5*time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	h.rcv, err = receiver.New(receiver.Config{Secrets: cfg.Secrets, Tolerance: cfg.Tolerance, Window: p.clockWindow,
		MaxRecords: 1000, Behavior: h.behave})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// ServeHTTP receives a delivery attempt (or serves the receiver's listing API).
func (h *Hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.rcv.ServeHTTP(w, r) }

// Close releases the receiver.
func (h *Hooks) Close() { _ = h.rcv.Close() }

// behave is called by the receiver once per attempt, verified and recorded: it judges the sender,
// forwards the attempt, judges the client receiver's answer and relays it.
func (h *Hooks) behave(a receiver.Attempt) receiver.Response {
	at := h.p.now()
	h.judgeSender(a, at)
	target := *h.fwd
	if a.Path != "" && a.Path != "/" {
		target.Path = strings.TrimRight(h.fwd.Path, "/") + a.Path
	}
	req, err := http.NewRequest(http.MethodPost, target.String(), bytes.NewReader(a.Body))
	if err != nil {
		return receiver.Response{Drop: true}
	}
	for k, vals := range a.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Connection", "Content-Length", "Transfer-Encoding", "Keep-Alive", "Te", "Upgrade", "Proxy-Connection":
			continue
		}
		req.Header[k] = append([]string(nil), vals...)
	}
	start := time.Now()
	res, err := h.client.Do(req)
	elapsed := time.Since(start)
	if err != nil {
		h.judgeReceiver(a, 0, elapsed, at)
		return receiver.Response{Drop: true}
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	h.judgeReceiver(a, res.StatusCode, elapsed, at)
	return receiver.Response{Status: res.StatusCode, Location: res.Header.Get("Location"), Body: string(body), ContentType: res.Header.Get("Content-Type")}
}

// hookFind records a finding about a delivery attempt.
func (h *Hooks) hookFind(a receiver.Attempt, side, rule, why string, at time.Time) {
	line := "POST " + a.Path
	if a.DeliveryID != "" {
		line += " webhook-id " + a.DeliveryID
		if a.Number > 0 {
			line += fmt.Sprintf(" attempt %d", a.Number)
		}
	}
	if a.Type != "" {
		line += " (" + a.Type + ")"
	}
	h.p.store.add(Finding{RuleID: rule, Side: side, Request: line, Advice: why, LastSeen: at}, side+" webhook "+a.Type, 0)
}

var (
	userAgent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^\s/]+-Webhooks/1\.0$`) })
)

// judgeSender checks the sender's side of one attempt.
func (h *Hooks) judgeSender(a receiver.Attempt, at time.Time) {
	switch a.Verdict {
	case receiver.VerdictBadSignature:
		h.hookFind(a, SideSender, "DLV-006", "No webhook-signature v1 entry matches HMAC SHA-256 of {id}.{timestamp}.{body} keyed with the endpoint's secret.", at)
	case receiver.VerdictStaleTimestamp, receiver.VerdictFutureTimestamp:
		h.hookFind(a, SideSender, "RECV-003", "webhook-timestamp is not within 5 minutes of the service clock ("+a.Detail+").", at)
	case receiver.VerdictIDMismatch:
		h.hookFind(a, SideSender, "DLV-003", "webhook-id differs from the envelope id ("+a.Detail+").", at)
	case receiver.VerdictMissingHeaders:
		h.hookFind(a, SideSender, "DLV-006", "A delivery carries webhook-id, webhook-timestamp (Unix seconds) and webhook-signature ("+a.Detail+").", at)
	case receiver.VerdictBadBody:
		h.hookFind(a, SideSender, "EVT-016", "The body is not the envelope {id, type, created_at, data} ("+a.Detail+").", at)
	}
	if ct := a.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
		h.hookFind(a, SideSender, "DLV-001", fmt.Sprintf("A delivery has content-type application/json (got %q).", ct), at)
	}
	if ua := a.Header.Get("User-Agent"); !userAgent().MatchString(ua) {
		h.hookFind(a, SideSender, "DLV-002", fmt.Sprintf("A delivery's user-agent is <Service>-Webhooks/1.0 (got %q).", ua), at)
	}
	for name := range a.Header {
		if l := strings.ToLower(name); strings.Contains(l, "signature") && l != "webhook-signature" {
			h.hookFind(a, SideSender, "DLV-007", "There is no other signature header than webhook-signature (got "+name+").", at)
		}
	}
	if a.DeliveryID != "" && !judge.IsID("whd_", a.DeliveryID) {
		h.hookFind(a, SideSender, "ID-009", fmt.Sprintf("webhook-id %q is not whd_ and 32 lowercase hex characters.", a.DeliveryID), at)
	}
	var env struct {
		CreatedAt string         `json:"created_at"`
		Data      map[string]any `json:"data"`
	}
	if a.Verdict == receiver.VerdictVerified || a.Verdict == receiver.VerdictDuplicate {
		if json.Unmarshal(a.Body, &env) == nil {
			h.judgePayload(a, env.Data, at)
		}
		if h.p.events != nil && a.Type != "" {
			failure, advisory := h.p.events.Event(a.Type, a.Body)
			if failure != nil {
				h.hookFind(a, SideSender, eventRule(a.Type), "The delivery breaks the event's description: "+sentence(failure), at)
			}
			if advisory != nil {
				h.p.store.add(Finding{RuleID: eventRule(a.Type), Advisory: true, Side: SideSender, Request: "POST " + a.Path + " (" + a.Type + ")",
					Advice: "The delivery differs from the reference's own choices (the text leaves this open): " + sentence(advisory), LastSeen: at}, "sender webhook "+a.Type, 0)
			}
		}
	}
	h.judgeSchedule(a, env.CreatedAt, at)
}

// eventRule is the rule that states the data of an event type.
func eventRule(eventType string) string {
	switch {
	case strings.HasPrefix(eventType, "generation."):
		return "EVT-021"
	case eventType == "batch.settled":
		return "EVT-027"
	case strings.HasPrefix(eventType, "workflow_run."):
		return "EVT-029"
	case eventType == "credits.low":
		return "EVT-032"
	case eventType == "webhook.test":
		return "EVT-008"
	}
	return "EVT-016"
}

// judgePayload checks the payload rules of a verified delivery.
func (h *Hooks) judgePayload(a receiver.Attempt, data map[string]any, at time.Time) {
	if data == nil {
		return
	}
	var link, text bool
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "url" || strings.HasSuffix(k, "_url") {
					link = true
				}
				if k == "output_text" || k == "result" {
					text = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(data)
	if link {
		h.hookFind(a, SideSender, "EVT-018", "No payload contains a link: data carries a url field.", at)
	}
	if text {
		h.hookFind(a, SideSender, "EVT-019", "Text results are not in event bodies: data carries output_text or result.", at)
	}
	switch {
	case strings.HasPrefix(a.Type, "generation."), a.Type == "batch.settled", strings.HasPrefix(a.Type, "workflow_run."):
		if d, _ := data["disclosure"].(string); strings.TrimSpace(d) == "" {
			h.hookFind(a, SideSender, "EVT-020", "Every generation, batch and run data carries a non-empty disclosure sentence.", at)
		}
		if cr, ok := data["credits"].(map[string]any); ok {
			if _, has := cr["wallet_balance"]; has {
				h.hookFind(a, SideSender, "EVT-023", "Event credits carry no wallet_balance.", at)
			}
		}
	}
	if strings.HasPrefix(a.Type, "generation.") {
		if e, has := data["error"]; has {
			if (a.Type == "generation.completed") != (e == nil) {
				h.hookFind(a, SideSender, "EVT-026", "error is {code, message} on generation.failed and null otherwise.", at)
			}
		}
	}
}

// judgeSchedule follows the attempts of one delivery id: a sixth attempt (DLV-018), an attempt
// after a 2XX (DLV-020), a timestamp that is not fresh (DLV-005), created_at changing between
// attempts (EVT-017), and the waits between attempts (DLV-014 .. DLV-017), judged early or late
// only when both the webhook-timestamps and the service time at arrival say so.
func (h *Hooks) judgeSchedule(a receiver.Attempt, createdAt string, at time.Time) {
	if a.DeliveryID == "" || a.Verdict == receiver.VerdictMissingHeaders {
		return
	}
	ts, err := strconv.ParseInt(a.Header.Get("Webhook-Timestamp"), 10, 64)
	if err != nil {
		return
	}
	arrival := h.p.serviceNow()
	h.mu.Lock()
	d, ok := h.deliveries.get(a.DeliveryID)
	if !ok {
		d = &deliverySeen{createdAt: createdAt}
		h.deliveries.put(a.DeliveryID, d)
	}
	n := len(d.stamps) + 1
	var prevTS int64
	var prevArrival time.Time
	if n > 1 {
		prevTS, prevArrival = d.stamps[n-2], d.arrivals[n-2]
	}
	accepted := d.accepted
	sameCreated := d.createdAt == "" || createdAt == "" || d.createdAt == createdAt
	if len(d.stamps) < 8 {
		d.stamps, d.arrivals = append(d.stamps, ts), append(d.arrivals, arrival)
	}
	h.mu.Unlock()
	if n == 1 {
		return
	}
	if accepted {
		h.hookFind(a, SideSender, "DLV-020", "A 2XX answer ended this delivery: it was sent again.", at)
	}
	if n > 5 {
		h.hookFind(a, SideSender, "DLV-018", fmt.Sprintf("After attempt 5 a delivery is exhausted and never sent again: this is attempt %d.", n), at)
		return
	}
	if ts <= prevTS {
		h.hookFind(a, SideSender, "DLV-005", fmt.Sprintf("webhook-timestamp is fresh on each retry: attempt %d has %d, attempt %d had %d.", n, ts, n-1, prevTS), at)
	}
	if !sameCreated {
		h.hookFind(a, SideSender, "EVT-017", "created_at is when the event happened: it changed between attempts of one delivery.", at)
	}
	if !h.p.scheduleJudgeable() || accepted {
		return
	}
	wait := retryWaits[n-2]
	rule := fmt.Sprintf("DLV-%03d", 12+n)
	stampGap := time.Duration(ts-prevTS) * time.Second
	arrivalGap := arrival.Sub(prevArrival)
	switch {
	case stampGap < wait*8/10 && arrivalGap < wait*8/10:
		h.hookFind(a, SideSender, rule, fmt.Sprintf("Attempt %d came %s after attempt %d: about %s is the wait.", n, max(stampGap, arrivalGap).Round(time.Second), n-1, wait), at)
	case stampGap > wait*12/10 && arrivalGap > wait*12/10+DeliveryTimeout:
		h.hookFind(a, SideSender, rule, fmt.Sprintf("Attempt %d came %s after attempt %d: about %s is the wait.", n, min(stampGap, arrivalGap).Round(time.Second), n-1, wait), at)
	}
}

// judgeReceiver judges the client receiver's answer to one attempt (status 0: no answer).
func (h *Hooks) judgeReceiver(a receiver.Attempt, status int, elapsed time.Duration, at time.Time) {
	ok := status >= 200 && status < 300
	before := false // an earlier attempt of this delivery was answered 2XX
	if a.DeliveryID != "" {
		h.mu.Lock()
		if d, seen := h.deliveries.get(a.DeliveryID); seen {
			before = d.accepted
			d.accepted = d.accepted || ok
		}
		h.mu.Unlock()
	}
	answer := fmt.Sprintf("answered %d", status)
	if status == 0 {
		answer = "gave no answer"
	}
	switch a.Verdict {
	case receiver.VerdictVerified:
		if !ok || elapsed > DeliveryTimeout {
			h.hookFind(a, SideReceiver, "RECV-005", fmt.Sprintf("A valid delivery is answered with any 2XX within 10 seconds: the receiver %s after %s.", answer, elapsed.Round(time.Millisecond)), at)
		}
	case receiver.VerdictDuplicate:
		switch {
		case !ok && before:
			h.hookFind(a, SideReceiver, "RECV-004", "A webhook-id already acknowledged is deduplicated and acknowledged again with a 2XX: the receiver "+answer+".", at)
		case !ok || elapsed > DeliveryTimeout:
			h.hookFind(a, SideReceiver, "RECV-005", fmt.Sprintf("A valid delivery is answered with any 2XX within 10 seconds: the receiver %s after %s.", answer, elapsed.Round(time.Millisecond)), at)
		}
	case receiver.VerdictBadSignature, receiver.VerdictMissingHeaders:
		if ok {
			h.hookFind(a, SideReceiver, "RECV-001", "The receiver accepted a delivery whose signature does not verify on the raw body.", at)
		}
	case receiver.VerdictStaleTimestamp, receiver.VerdictFutureTimestamp:
		if ok {
			h.hookFind(a, SideReceiver, "RECV-002", "The receiver accepted a delivery whose webhook-timestamp is more than 5 minutes off ("+a.Detail+").", at)
		}
	}
}
