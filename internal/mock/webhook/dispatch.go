package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// envelope is the body of every delivery.
type envelope struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// CreditsLowData is the data of credits.low.
type CreditsLowData struct {
	AvailableCredits int64 `json:"available_credits"`
	ThresholdCredits int64 `json:"threshold_credits"`
}

// TestData is the data of webhook.test.
type TestData struct {
	WebhookID string `json:"webhook_id"`
	Message   string `json:"message"`
}

// TestMessage is the message of every webhook.test.
const TestMessage = "This is a test event sent from the app; answer any 2XX and ignore it."

// MaxTestMessage is the most characters a webhook.test's own data.message may have (at least one),
// asked through control or a test input alike.
const MaxTestMessage = 1000

// Emit fans the event out: one delivery to every endpoint of workspaceID that subscribed to
// eventType and is not disabled (a disabled endpoint receives nothing, and the event is never
// replayed to it). The envelope's created_at is the service time of the call. data is encoded
// now, so later changes to it are not sent. Emit returns at once: it never waits for the network,
// takes only the Service's own mutex, and may be called with a workspace lock held (the ledger's
// OnLow hook). Data that cannot be encoded is logged and dropped (a service-side failure).
func (s *Service) Emit(workspaceID, eventType string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		s.log.Error("webhook: event data cannot be encoded; event dropped", "type", eventType, "err", err)
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []string
	for _, ep := range s.byWS[workspaceID] {
		if ep.Status == StatusDisabled || !slices.Contains(ep.Events, eventType) {
			continue
		}
		due = append(due, s.newDeliveryLocked(ep, eventType, now, raw, false).id)
	}
	if len(due) > 0 {
		s.notifyLocked()
	}
	for _, id := range due {
		s.enqueue(id)
	}
}

// SendTest queues one webhook.test delivery to endpoint id (any workspace), data {webhook_id,
// message}, signed and retried like any other delivery. A disabled endpoint gets it too, and a
// test delivery to a disabled endpoint leaves its status alone. It returns the delivery id.
func (s *Service) SendTest(id string) (string, error) { return s.SendTestMessage(id, TestMessage) }

// SendTestMessage is SendTest with data.message set to message (any text, so a test can send a
// payload that is not ASCII).
func (s *Service) SendTestMessage(id, message string) (string, error) {
	s.mu.Lock()
	ep, ok := s.endpoints[id]
	if !ok {
		s.mu.Unlock()
		return "", notFound(id)
	}
	raw, _ := json.Marshal(TestData{WebhookID: id, Message: message})
	d := s.newDeliveryLocked(ep, EventWebhookTest, s.clock.Now(), raw, true)
	s.notifyLocked()
	s.mu.Unlock()
	s.enqueue(d.id)
	return d.id, nil
}

// newDeliveryLocked records a pending delivery and trims ep's history.
func (s *Service) newDeliveryLocked(ep *endpoint, eventType string, at time.Time, data json.RawMessage, test bool) *delivery {
	id := s.newID("whd_")
	body, _ := json.Marshal(envelope{ID: id, Type: eventType, CreatedAt: clock.Format(at), Data: data})
	d := &delivery{id: id, ep: ep, eventType: eventType, createdAt: at, body: body, test: test, status: DeliveryPending}
	s.deliveries[id] = d
	ep.history = append(ep.history, d)
	s.trimLocked(ep)
	for len(ep.history) > s.history {
		old := ep.history[0]
		if old.status == DeliveryPending || old.status == DeliveryRetrying {
			break // never forget a delivery still being sent
		}
		s.forgetLocked(old)
		ep.history = ep.history[1:]
	}
	return d
}

// enqueue hands a delivery to the workers without blocking. When the queue is full the attempt is
// put back on the clock for a minute; that wait is the service's own and counts for nothing.
func (s *Service) enqueue(id string) {
	select {
	case <-s.stop:
		return // closed: no new workers, nothing more is sent
	default:
	}
	s.startOnce.Do(s.startWorkers)
	select {
	case s.queue <- id:
	case <-s.stop:
	default:
		s.log.Warn("webhook: delivery queue full; attempt deferred", "delivery_id", id)
		s.clock.AfterFunc(serviceSideRetry, func() { s.enqueue(id) })
	}
}

func (s *Service) startWorkers() {
	for range s.workers {
		s.wg.Add(1)
		go s.work()
	}
}

func (s *Service) work() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case id := <-s.queue:
			s.run(id)
		}
	}
}

// job is what one attempt needs, copied under the lock.
type job struct {
	d      *delivery
	ep     *endpoint
	url    string
	number int
	body   []byte
	sign   func(id string, at time.Time, body []byte) (string, error)
}

// run makes the next attempt of delivery id, unless it is gone, finished, or its endpoint is busy.
func (s *Service) run(id string) {
	s.mu.Lock()
	d, ok := s.deliveries[id]
	if !ok || d.gone || (d.status != DeliveryPending && d.status != DeliveryRetrying) {
		s.mu.Unlock()
		return
	}
	ep := d.ep
	if ep.Status == StatusDisabled && !d.test {
		d.status, d.nextAt = DeliveryDropped, nil
		s.notifyLocked()
		s.mu.Unlock()
		return
	}
	if ep.inflight >= s.perEP {
		ep.backlog = append(ep.backlog, id)
		s.mu.Unlock()
		return
	}
	ep.inflight++
	hook := ep.hook
	j := job{d: d, ep: ep, url: ep.URL, number: len(d.attempts) + 1, body: d.body, sign: hook.Sign}
	d.nextAt = nil
	s.mu.Unlock()

	a, serviceSide := s.attempt(j)

	s.mu.Lock()
	ep.inflight--
	var next string
	if len(ep.backlog) > 0 {
		next, ep.backlog = ep.backlog[0], ep.backlog[1:]
	}
	if !d.gone {
		if serviceSide {
			s.log.Warn("webhook: attempt failed on the service side; retrying without counting it", "delivery_id", d.id, "err", a.Error)
			at := s.clock.Now().Add(serviceSideRetry)
			d.nextAt = &at
			d.timer = s.clock.AfterFunc(serviceSideRetry, func() { s.enqueue(d.id) })
		} else {
			s.settleLocked(d, a)
		}
		s.notifyLocked()
	}
	s.mu.Unlock()
	if next != "" {
		s.enqueue(next)
	}
}

// settleLocked records attempt a of d and moves d and its endpoint on.
func (s *Service) settleLocked(d *delivery, a Attempt) {
	d.attempts = append(d.attempts, a)
	ep := d.ep
	leaveStatus := d.test && ep.Status == StatusDisabled
	if a.Error == "" {
		d.status, d.endedAt = DeliveryDelivered, s.clock.Now()
		if !leaveStatus {
			ep.Status, ep.ConsecutiveFailures, ep.UpdatedAt = StatusActive, 0, s.clock.Now()
		}
		return
	}
	if a.Number <= len(s.schedule) {
		at := a.SentAt.Add(s.schedule[a.Number-1])
		d.status, d.nextAt = DeliveryRetrying, &at
		wait := at.Sub(s.clock.Now())
		id := d.id
		d.timer = s.clock.AfterFunc(wait, func() { s.enqueue(id) })
		return
	}
	d.status, d.nextAt, d.timer, d.endedAt = DeliveryExhausted, nil, nil, s.clock.Now()
	if leaveStatus {
		return
	}
	ep.ConsecutiveFailures++
	ep.UpdatedAt = s.clock.Now()
	switch {
	case ep.Status == StatusActive && ep.ConsecutiveFailures >= FailingAfter:
		ep.Status = StatusFailing
	}
	if ep.Status == StatusFailing && ep.ConsecutiveFailures >= DisabledAfter {
		s.disableLocked(ep)
	}
}

// attempt sends one attempt. serviceSide reports a failure of the mock itself (it does not count).
func (s *Service) attempt(j job) (a Attempt, serviceSide bool) {
	sentAt := s.clock.Now()
	a = Attempt{Number: j.number, SentAt: sentAt}
	start := time.Now()
	defer func() { a.Duration = time.Since(start) }()

	if s.fault != nil && s.fault(j.ep.WorkspaceID) {
		a.Error = "service_fault"
		return a, true
	}
	u, err := url.Parse(j.url)
	if err != nil {
		a.Error = "invalid_url: " + err.Error()
		return a, true
	}
	// The attempt's deadline: real time (the client's own timeout bounds the exchange too), and the
	// service clock, so a clock advanced past the deadline abandons the attempt, once it has had
	// minAttemptReal of wall time: a clock jumped while a receiver answers in milliseconds (a test
	// finishing a run while its events go out) must not cut that answer. The clock's timer is
	// stopped before the attempt is settled, so a settled delivery leaves no clock timer behind.
	ctx, cancel := context.WithTimeout(s.stopCtx, s.client.Timeout)
	defer cancel()
	ctx, expire := context.WithCancelCause(ctx)
	defer expire(nil)
	began := time.Now()
	deadline := s.clock.AfterFunc(s.clockTimeout, func() {
		if wait := minAttemptReal - time.Since(began); wait > 0 {
			time.AfterFunc(wait, func() { expire(errClockDeadline) }) // a no-op once the attempt ended
			return
		}
		expire(errClockDeadline)
	})
	defer deadline.Stop()
	// Re-check the address at each attempt: a hostname now pointing at a private address fails.
	if _, err := s.guard.resolve(ctx, u.Hostname()); err != nil {
		a.Error = classifyIn(ctx, err)
		return a, false
	}
	stamped := s.stamp()
	sig, err := j.sign(j.d.id, stamped, j.body)
	if err != nil {
		a.Error = "sign: " + err.Error()
		return a, true
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.url, bytes.NewReader(j.body))
	if err != nil {
		a.Error = "request: " + err.Error()
		return a, true
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("Webhook-Id", j.d.id)
	h.Set("Webhook-Timestamp", strconv.FormatInt(stamped.Unix(), 10))
	h.Set("Webhook-Signature", sig)
	res, err := s.client.Do(req)
	if err != nil {
		a.Error = classifyIn(ctx, err)
		return a, false
	}
	// The body is never read: close it at once (keep-alives are off, so nothing is reused).
	_ = res.Body.Close()
	a.StatusCode = res.StatusCode
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode >= 300 && res.StatusCode < 400:
		a.Error = "redirect"
	default:
		a.Error = "status_" + strconv.Itoa(res.StatusCode)
	}
	return a, false
}

// minAttemptReal is the wall time an attempt always has before the service clock may abandon it.
const minAttemptReal = time.Second

// errClockDeadline ends an attempt whose deadline the service clock has passed.
var errClockDeadline = errors.New("the service clock passed the attempt's deadline")

// classifyIn names a failure of an attempt made with ctx: a timeout when the service clock passed
// the attempt's deadline (the exchange then ends as canceled), else as classify.
func classifyIn(ctx context.Context, err error) string {
	if errors.Is(context.Cause(ctx), errClockDeadline) {
		return "timeout"
	}
	return classify(err)
}

// classify names a transport failure for the delivery history.
func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return ErrPrivateAddress.Error()
	case errors.Is(err, ErrUnresolvable):
		return ErrUnresolvable.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection_dropped"
	}
	return "connection_error"
}
