// Package webhook is the mock's webhook endpoints and their signed deliveries: registration with
// the address guard, the fan-out of events to subscribed endpoints, the dispatcher (a bounded
// worker pool), the retry schedule on the injected clock, the Standard Webhooks signer, the
// endpoint status machine (active -> failing -> disabled) and the delivery history the control
// API shows.
//
// Time: the retry schedule (attempt 2 five minutes after attempt 1, then 30 minutes, 2 hours and
// 12 hours) runs on the injected clock, so tests and the control API jump it. The 10 second
// receiver timeout of one attempt bounds a real HTTP exchange, so it is real (wall) time, and it
// is on the injected clock too: an attempt is abandoned as a timeout when 10 seconds of wall time
// pass or when the service clock passes the attempt's deadline, whichever comes first. On a
// manual or real clock that deadline is 10 seconds of service time after the attempt began (an
// advance past it abandons the attempt as soon as it has had a second of wall time, so a test jumps the clock instead of waiting, and a jump never cuts a receiver answering in milliseconds); on
// a clock scaled N times faster it is 10×N seconds, which scaled time reaches together with the
// wall bound, so a receiver always has its full 10 real seconds. Each attempt's webhook-timestamp
// is the time it is sent (Config.Stamp).
//
// Concurrency: a Service is safe for concurrent use. Emit never blocks on the network: it records
// the deliveries and hands them to the worker pool through a bounded queue. A slow or dead
// receiver occupies at most PerEndpoint workers, so it never holds up the API or other endpoints.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
)

// Event names.
const (
	EventGenerationCompleted  = "generation.completed"
	EventGenerationFailed     = "generation.failed"
	EventBatchSettled         = "batch.settled"
	EventWorkflowRunCompleted = "workflow_run.completed"
	EventWorkflowRunFailed    = "workflow_run.failed"
	EventCreditsLow           = "credits.low"
	// EventWebhookTest is sent only through SendTest (the app's "Send test"); not subscribable.
	EventWebhookTest = "webhook.test"
)

// Subscribable lists the event names an endpoint may subscribe to, in the interface's order.
func Subscribable() []string {
	return []string{EventGenerationCompleted, EventGenerationFailed, EventBatchSettled,
		EventWorkflowRunCompleted, EventWorkflowRunFailed, EventCreditsLow}
}

// Status is an endpoint's status.
type Status string

// The endpoint statuses.
const (
	StatusActive   Status = "active"
	StatusFailing  Status = "failing"
	StatusDisabled Status = "disabled"
)

// Limits and thresholds of the interface.
const (
	MaxEndpoints      = contract.MaxWebhookEndpoints   // per workspace
	MaxDescription    = contract.MaxWebhookDescription // characters
	FailingAfter      = 3                              // exhausted deliveries in a row: active -> failing
	DisabledAfter     = 20                             // exhausted deliveries in a row: failing -> disabled
	MaxAttempts       = contract.DeliveryAttempts
	UserAgent         = "Mediaspec-Webhooks/1.0"
	SecretPrefix      = "whsec_"
	secretBytes       = 32
	defaultTimeout    = contract.DeliveryTimeout
	defaultWorkers    = 8
	defaultQueue      = 1024
	defaultPerEP      = 2
	defaultHistory    = 500
	serviceSideRetry  = time.Minute // when the mock itself fails an attempt (not counted)
	defaultLookupTime = 5 * time.Second
)

// DefaultAttemptTimeout is how long one attempt may take by default (interface text: a receiver
// answers within 10 seconds).
const DefaultAttemptTimeout = defaultTimeout

// DefaultSchedule is the wait before attempts 2, 3, 4 and 5, each counted from the previous
// attempt's send time: 5 minutes, 30 minutes, 2 hours, 12 hours (about 14.5 hours in all).
var DefaultSchedule = contract.RetryWaits()

// Config configures a Service. Zero values mean the documented defaults.
type Config struct {
	Clock  clock.Clock
	IDs    *ids.Source
	Logger *slog.Logger
	// Resolver resolves endpoint hostnames at registration and at each attempt (nil:
	// net.DefaultResolver). Names under .invalid and .localhost are never looked up.
	Resolver Resolver
	// AllowLoopback also admits http and https URLs on 127.0.0.1 and localhost (any port), and
	// nothing else private (the mock's --allow-loopback-webhooks).
	AllowLoopback bool
	// AttemptTimeout is how long one attempt may take (default 10 s): in real time, and in service
	// time scaled by the clock's Scale when above 1 (see the package comment).
	AttemptTimeout time.Duration
	// Workers is the size of the delivery worker pool (default 8).
	Workers int
	// QueueSize bounds the attempts waiting for a worker (default 1024); past it an attempt is
	// put back on the clock for a minute, not counted against the endpoint.
	QueueSize int
	// PerEndpoint bounds one endpoint's attempts in flight at once (default 2).
	PerEndpoint int
	// Schedule is the wait before each retry (default DefaultSchedule; its length + 1 is the
	// number of attempts).
	Schedule []time.Duration
	// History is how many deliveries per endpoint the history keeps (default 500); older finished
	// deliveries are forgotten.
	History int
	// Retain forgets a finished delivery (delivered, exhausted or dropped) this long after it
	// finished, on the service clock (0: only History bounds the history). A delivery still being
	// sent is never forgotten.
	Retain time.Duration
	// Stamp is the clock each attempt's webhook-timestamp (and so its signature) is read from
	// (nil: Clock.Now). A receiver checks that timestamp against its own clock, as every Standard
	// Webhooks library does; when service time runs faster than wall time (the mock's
	// --time-scale) the mock stamps with the wall clock, or every receiver would refuse deliveries
	// within seconds. Retry timing and history stay on the service clock.
	Stamp func() time.Time
	// ServiceFault, when set, is asked before each attempt whether the service itself fails it
	// (the control API's delivery_fail fault for the endpoint's workspace). Such a failure is no
	// attempt: nothing is sent or counted, and the delivery is tried again a minute later.
	ServiceFault func(workspaceID string) bool
}

// Endpoint is a snapshot of a webhook endpoint. It never carries the secret.
type Endpoint struct {
	ID                  string
	WorkspaceID         string
	URL                 string
	Events              []string
	Status              Status
	ConsecutiveFailures int
	Description         *string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// CreateParams is a registration. Nil URL or Events means the field was not sent.
type CreateParams struct {
	URL         *string
	Events      *[]string
	Description *string
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// The delivery statuses of the control API's history.
const (
	DeliveryPending   DeliveryStatus = "pending"   // waiting for (or in) its first attempt
	DeliveryRetrying  DeliveryStatus = "retrying"  // an attempt failed; the next is scheduled
	DeliveryDelivered DeliveryStatus = "delivered" // answered 2XX
	DeliveryExhausted DeliveryStatus = "exhausted" // attempt 5 failed; never sent again
	DeliveryDropped   DeliveryStatus = "dropped"   // the endpoint was disabled before success
)

// Attempt is one delivery attempt as the service saw it.
type Attempt struct {
	Number int
	// SentAt is the service time the attempt was sent (its webhook-timestamp, unless Config.Stamp
	// reads another clock).
	SentAt time.Time
	// StatusCode is the receiver's status, 0 when no response came.
	StatusCode int
	// Error is why the attempt failed ("" on success): timeout, redirect, status_<code>,
	// private_address, unresolvable, connection_refused, connection_dropped, connection_error.
	Error string
	// Duration is the real time the exchange took.
	Duration time.Duration
}

// Delivery is a snapshot of one delivery (one event to one endpoint).
type Delivery struct {
	ID          string
	WebhookID   string
	EventType   string
	CreatedAt   time.Time
	Status      DeliveryStatus
	Attempts    []Attempt
	NextAttempt *time.Time
}

// Service holds every workspace's endpoints and deliveries and sends the deliveries.
type Service struct {
	clock  clock.Clock
	stamp  func() time.Time // webhook-timestamp of an attempt (Config.Stamp)
	fault  func(workspaceID string) bool
	ids    *ids.Source
	log    *slog.Logger
	guard  guard
	client *http.Client
	// clockTimeout is an attempt's timeout on the service clock: AttemptTimeout, times the clock's
	// Scale when above 1.
	clockTimeout time.Duration
	schedule     []time.Duration
	workers      int
	perEP        int
	history      int
	retain       time.Duration // Config.Retain

	queue     chan string // delivery ids due for an attempt
	startOnce sync.Once
	stop      chan struct{}
	stopCtx   context.Context // done once Close starts: attempts in flight give up
	cancel    context.CancelFunc
	stopOnce  sync.Once
	wg        sync.WaitGroup

	mu         sync.Mutex // guards endpoints, byWS, deliveries, changed
	endpoints  map[string]*endpoint
	byWS       map[string][]*endpoint // registration order
	deliveries map[string]*delivery
	changed    chan struct{} // closed and replaced whenever a delivery or endpoint changes
}

type endpoint struct {
	Endpoint
	hook     *standardwebhooks.Webhook
	inflight int      // attempts being sent now
	backlog  []string // delivery ids waiting because inflight reached PerEndpoint
	history  []*delivery
}

type delivery struct {
	id        string
	ep        *endpoint
	eventType string
	createdAt time.Time
	body      []byte
	// test deliveries reach a disabled endpoint and then leave its status alone.
	test     bool
	status   DeliveryStatus
	attempts []Attempt
	nextAt   *time.Time
	timer    clock.Timer
	// endedAt is when the delivery was delivered, exhausted or dropped (zero while it is sent).
	endedAt time.Time
	// gone is set when the delivery was removed (endpoint deleted, reset, history trimmed).
	gone bool
}

// New returns a Service. Workers start on the first delivery; Close stops them.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = defaultTimeout
	}
	if cfg.Workers <= 0 {
		cfg.Workers = defaultWorkers
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = defaultQueue
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = defaultPerEP
	}
	if len(cfg.Schedule) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.History <= 0 {
		cfg.History = defaultHistory
	}
	if cfg.Stamp == nil {
		cfg.Stamp = cfg.Clock.Now
	}
	g := guard{resolver: cfg.Resolver, allowLoopback: cfg.AllowLoopback, lookupTimeout: defaultLookupTime}
	s := &Service{
		clock: cfg.Clock, stamp: cfg.Stamp, fault: cfg.ServiceFault, ids: cfg.IDs, log: cfg.Logger, guard: g,
		schedule: append([]time.Duration(nil), cfg.Schedule...),
		workers:  cfg.Workers, perEP: cfg.PerEndpoint, history: cfg.History, retain: cfg.Retain,
		queue: make(chan string, cfg.QueueSize), stop: make(chan struct{}),
		changed: make(chan struct{}),
	}
	s.clockTimeout = time.Duration(float64(cfg.AttemptTimeout) * max(1, cfg.Clock.Scale()))
	s.stopCtx, s.cancel = context.WithCancel(context.Background())
	s.client = &http.Client{
		Timeout: cfg.AttemptTimeout,
		Transport: &http.Transport{
			Proxy:                  nil, // never through an environment proxy
			DialContext:            g.dialContext,
			DialTLSContext:         g.dialTLSContext,
			DisableKeepAlives:      true, // every attempt dials, so every attempt is address-checked
			ForceAttemptHTTP2:      false,
			TLSHandshakeTimeout:    cfg.AttemptTimeout,
			ResponseHeaderTimeout:  cfg.AttemptTimeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		// Redirects are never followed: a 3XX is the answer, and a failed attempt.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	s.resetLocked()
	return s
}

// Close cancels the attempts in flight, stops the workers and cancels every pending retry. The
// Service must not be used afterwards.
func (s *Service) Close() {
	s.stopOnce.Do(func() { close(s.stop); s.cancel() })
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.deliveries {
		if d.timer != nil {
			d.timer.Stop()
		}
	}
}

// Reset forgets every endpoint and delivery and cancels every pending retry. Attempts in flight
// finish and are discarded.
func (s *Service) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.deliveries {
		d.gone = true
		if d.timer != nil {
			d.timer.Stop()
		}
	}
	s.resetLocked()
	s.notifyLocked()
}

func (s *Service) resetLocked() {
	s.endpoints = map[string]*endpoint{}
	s.byWS = map[string][]*endpoint{}
	s.deliveries = map[string]*delivery{}
}

// notifyLocked wakes everyone waiting on a change; s.mu must be held.
func (s *Service) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// newSecret makes a whsec_ secret from 32 bytes of the seeded stream.
func (s *Service) newSecret() (string, *standardwebhooks.Webhook) {
	var key []byte
	if s.ids != nil {
		key = s.ids.Bytes(secretBytes)
	} else {
		key = make([]byte, secretBytes)
		_, _ = rand.Read(key)
	}
	hook, _ := standardwebhooks.NewWebhookRaw(key) // never fails
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), hook
}

func (s *Service) newID(prefix string) string {
	if s.ids != nil {
		return s.ids.ID(prefix)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s%x", prefix, b)
}

// Create registers an endpoint in workspaceID and returns it with its secret (shown once).
// Refusals are 400 invalid_config with Field url, events or description: url missing, empty,
// over 2048 characters, not https (with AllowLoopback also http on 127.0.0.1 and localhost),
// with a username or password, naming a private or local address, or whose hostname does not
// resolve (or resolves to a private address); events missing, empty, naming an unknown event or
// webhook.test, or naming one event twice; description over 200 characters; and, with no Field,
// a workspace that already has 10 endpoints. The hostname is resolved last, after every other
// check passed.
func (s *Service) Create(ctx context.Context, workspaceID string, p CreateParams) (Endpoint, string, error) {
	if p.URL == nil {
		return Endpoint{}, "", apierr.InvalidConfig("url", "url is required: the https URL of your receiver.")
	}
	u, err := s.guard.normalize(*p.URL)
	if err != nil {
		return Endpoint{}, "", apierr.InvalidConfig("url", sentence(err))
	}
	if p.Events == nil || len(*p.Events) == 0 {
		return Endpoint{}, "", apierr.InvalidConfig("events", "events is required: one or more of "+strings.Join(Subscribable(), ", ")+".")
	}
	events := *p.Events
	for i, e := range events {
		switch {
		case e == EventWebhookTest:
			return Endpoint{}, "", apierr.InvalidConfig("events", "webhook.test is not subscribable: it is sent only when someone presses Send test in the app.")
		case !slices.Contains(Subscribable(), e):
			return Endpoint{}, "", apierr.InvalidConfig("events", fmt.Sprintf("%q is not an event name; use %s.", e, strings.Join(Subscribable(), ", ")))
		case slices.Contains(events[:i], e):
			return Endpoint{}, "", apierr.InvalidConfig("events", fmt.Sprintf("events names %q twice; name each event once.", e))
		}
	}
	if p.Description != nil {
		if n := len([]rune(*p.Description)); n > MaxDescription {
			return Endpoint{}, "", apierr.InvalidConfig("description", fmt.Sprintf("description is %d characters; at most %d are accepted.", n, MaxDescription))
		}
	}
	if s.count(workspaceID) >= MaxEndpoints {
		return Endpoint{}, "", s.limitErr()
	}
	if _, err := s.guard.resolve(ctx, u.Hostname()); err != nil {
		if errors.Is(err, ErrUnresolvable) {
			return Endpoint{}, "", apierr.InvalidConfig("url", "The url's hostname "+u.Hostname()+" does not resolve.")
		}
		return Endpoint{}, "", apierr.InvalidConfig("url", "The url's hostname "+u.Hostname()+" resolves to a private or local address; only public receivers are accepted.")
	}
	secret, hook := s.newSecret()
	now := s.clock.Now()
	ep := &endpoint{Endpoint: Endpoint{
		ID: s.newID("wh_"), WorkspaceID: workspaceID, URL: u.String(),
		Events: append([]string(nil), events...), Status: StatusActive,
		Description: p.Description, CreatedAt: now, UpdatedAt: now,
	}, hook: hook}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byWS[workspaceID]) >= MaxEndpoints { // a concurrent registration won
		return Endpoint{}, "", s.limitErr()
	}
	s.endpoints[ep.ID] = ep
	s.byWS[workspaceID] = append(s.byWS[workspaceID], ep)
	s.notifyLocked()
	return ep.snapshot(), secret, nil
}

func (s *Service) limitErr() error {
	return apierr.InvalidConfig("", fmt.Sprintf("This workspace already has %d webhook endpoints, the most allowed; delete one first.", MaxEndpoints))
}

func (s *Service) count(workspaceID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byWS[workspaceID])
}

// sentence makes an error text a sentence for a message.
func sentence(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "+ErrPrivateAddress.Error()); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func (e *endpoint) snapshot() Endpoint {
	out := e.Endpoint
	out.Events = append([]string(nil), e.Events...)
	if e.Description != nil {
		d := *e.Description
		out.Description = &d
	}
	return out
}

// List returns the workspace's endpoints, newest first (at most MaxEndpoints).
func (s *Service) List(workspaceID string) []Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.byWS[workspaceID]
	out := make([]Endpoint, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, list[i].snapshot())
	}
	return out
}

func notFound(id string) error {
	return apierr.NotFound("No webhook endpoint " + id + " in this workspace.")
}

// Delete removes the workspace's endpoint id and its deliveries (pending retries are cancelled;
// an attempt in flight finishes and is discarded). Another workspace's id, an unknown id and an
// already deleted id answer 404 not_found.
func (s *Service) Delete(workspaceID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok || ep.WorkspaceID != workspaceID {
		return notFound(id)
	}
	delete(s.endpoints, id)
	s.byWS[workspaceID] = slices.DeleteFunc(s.byWS[workspaceID], func(e *endpoint) bool { return e == ep })
	if len(s.byWS[workspaceID]) == 0 {
		delete(s.byWS, workspaceID)
	}
	for _, d := range ep.history {
		s.forgetLocked(d)
	}
	ep.history, ep.backlog = nil, nil
	s.notifyLocked()
	return nil
}

// trimLocked forgets the oldest deliveries of ep's history that finished Retain ago or more, up
// to the first one that did not (the history is in creation order; what is still being sent
// stops the trim, and History bounds what waits behind it). Called on each new delivery and each
// history read, so the cost is amortised over the deliveries made.
func (s *Service) trimLocked(ep *endpoint) {
	if s.retain <= 0 {
		return
	}
	now := s.clock.Now()
	n := 0
	for _, d := range ep.history {
		if d.endedAt.IsZero() || now.Before(d.endedAt.Add(s.retain)) {
			break
		}
		s.forgetLocked(d)
		n++
	}
	if n > 0 {
		ep.history = slices.Delete(ep.history, 0, n)
	}
}

// forgetLocked removes a delivery and cancels its retry.
func (s *Service) forgetLocked(d *delivery) {
	d.gone = true
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	delete(s.deliveries, d.id)
}

// Get returns endpoint id of any workspace (for the control API), or 404 not_found.
func (s *Service) Get(id string) (Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok {
		return Endpoint{}, notFound(id)
	}
	return ep.snapshot(), nil
}

// Rotate gives endpoint id a new secret and returns it (shown once). It takes effect at once:
// every attempt sent from now on, retries of earlier deliveries included, is signed with it.
func (s *Service) Rotate(id string) (string, error) {
	secret, hook := s.newSecret()
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok {
		return "", notFound(id)
	}
	ep.hook = hook
	ep.UpdatedAt = s.clock.Now()
	s.notifyLocked()
	return secret, nil
}

// Enable makes endpoint id active with consecutive_failures 0 (from any status). Events sent
// while it was disabled are not replayed.
func (s *Service) Enable(id string) (Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok {
		return Endpoint{}, notFound(id)
	}
	ep.Status, ep.ConsecutiveFailures, ep.UpdatedAt = StatusActive, 0, s.clock.Now()
	s.notifyLocked()
	return ep.snapshot(), nil
}

// Disable makes endpoint id disabled: it receives nothing and its pending retries are dropped.
func (s *Service) Disable(id string) (Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok {
		return Endpoint{}, notFound(id)
	}
	s.disableLocked(ep)
	s.notifyLocked()
	return ep.snapshot(), nil
}

// disableLocked sets ep disabled and drops its unfinished deliveries but test deliveries.
func (s *Service) disableLocked(ep *endpoint) {
	ep.Status, ep.UpdatedAt = StatusDisabled, s.clock.Now()
	for _, d := range ep.history {
		if d.test || (d.status != DeliveryPending && d.status != DeliveryRetrying) {
			continue
		}
		d.status, d.nextAt, d.endedAt = DeliveryDropped, nil, ep.UpdatedAt
		if d.timer != nil {
			d.timer.Stop()
			d.timer = nil
		}
	}
}

// Deliveries returns one page of endpoint id's delivery history, newest first: up to limit
// deliveries after the delivery named by cursor ("" for the first page), and the cursor of the
// next page ("" on the last). An unknown cursor restarts from the first page.
func (s *Service) Deliveries(id string, limit int, cursor string) ([]Delivery, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep, ok := s.endpoints[id]
	if !ok {
		return nil, "", notFound(id)
	}
	s.trimLocked(ep)
	start := len(ep.history) - 1
	if cursor != "" {
		for i, d := range ep.history {
			if d.id == cursor {
				start = i - 1
				break
			}
		}
	}
	var out []Delivery
	i := start
	for ; i >= 0 && len(out) < limit; i-- {
		out = append(out, ep.history[i].snapshot())
	}
	next := ""
	if i >= 0 && len(out) > 0 {
		next = out[len(out)-1].ID
	}
	return out, next, nil
}

func (d *delivery) snapshot() Delivery {
	out := Delivery{ID: d.id, WebhookID: d.ep.ID, EventType: d.eventType, CreatedAt: d.createdAt,
		Status: d.status, Attempts: append([]Attempt(nil), d.attempts...)}
	if d.nextAt != nil {
		t := *d.nextAt
		out.NextAttempt = &t
	}
	return out
}

// AwaitAttempts blocks until delivery id has at least n attempts recorded (each settled: its
// outcome known and its retry, if any, on the clock), or ctx ends, and returns its snapshot. It is
// how a caller waits for an attempt without sleeping; a delivery forgotten meanwhile waits on.
func (s *Service) AwaitAttempts(ctx context.Context, id string, n int) (Delivery, error) {
	var out Delivery
	err := s.await(ctx, func() bool {
		d, ok := s.deliveries[id]
		if ok && len(d.attempts) >= n {
			out = d.snapshot()
			return true
		}
		return false
	})
	return out, err
}

// await blocks until cond (called with s.mu held) is true, or ctx ends.
func (s *Service) await(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
