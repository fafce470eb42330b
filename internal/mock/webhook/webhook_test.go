package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/receiver"
)

const ws = "ws_00000000000000000000000000000001"

// fakeResolver answers from a map; a missing name does not resolve. It never leaves the process.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
}

func (f *fakeResolver) set(host string, ips ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hosts[host] = ips
}

func (f *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ips, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(ips))
	for i, s := range ips {
		out[i] = net.IPAddr{IP: net.ParseIP(s)}
	}
	return out, nil
}

type env struct {
	t   *testing.T
	clk *clock.Manual
	svc *Service
	res *fakeResolver
}

func newEnv(t *testing.T, mut func(*Config)) *env {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC))
	res := &fakeResolver{hosts: map[string][]string{"hooks.example.com": {"93.184.216.34"}}}
	cfg := Config{Clock: clk, IDs: ids.New(7), Resolver: res, AllowLoopback: true, AttemptTimeout: 2 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	svc := New(cfg)
	t.Cleanup(svc.Close)
	return &env{t: t, clk: clk, svc: svc, res: res}
}

func ptr[T any](v T) *T { return &v }

// register makes an endpoint for url subscribed to events (default credits.low) and returns it and
// its secret.
func (e *env) register(url string, events ...string) (Endpoint, string) {
	e.t.Helper()
	if len(events) == 0 {
		events = []string{EventCreditsLow}
	}
	ep, secret, err := e.svc.Create(context.Background(), ws, CreateParams{URL: &url, Events: &events})
	if err != nil {
		e.t.Fatalf("register %s: %v", url, err)
	}
	return ep, secret
}

// receiver starts a verifying receiver on 127.0.0.1 whose clock is the service clock.
func (e *env) receiver(secret string, b receiver.Behavior) (*receiver.Receiver, string) {
	e.t.Helper()
	r, err := receiver.New(receiver.Config{Secrets: []string{secret}, Now: e.clk.Now, Behavior: b})
	if err != nil {
		e.t.Fatal(err)
	}
	ts := httptest.NewServer(r)
	e.t.Cleanup(func() { _ = r.Close(); ts.Close() })
	return r, ts.URL
}

// endpointWithReceiver registers an endpoint at a fresh receiver and points the receiver at its
// secret.
func (e *env) endpointWithReceiver(b receiver.Behavior) (Endpoint, *receiver.Receiver) {
	e.t.Helper()
	placeholder, _ := e.svc.newSecret()
	r, url := e.receiver(placeholder, b)
	ep, secret := e.register(url + "/hooks")
	if err := r.SetSecrets(secret); err != nil {
		e.t.Fatal(err)
	}
	return ep, r
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// delivery waits until cond holds for the delivery id and returns its snapshot.
func (e *env) delivery(id string, what string, cond func(d *delivery) bool) Delivery {
	e.t.Helper()
	var out Delivery
	err := e.svc.await(e.ctx(), func() bool {
		d, ok := e.svc.deliveries[id]
		if ok && cond(d) {
			out = d.snapshot()
			return true
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("delivery %s: waiting for %s: %v", id, what, err)
	}
	return out
}

func (e *env) attempts(id string, n int) Delivery {
	e.t.Helper()
	d, err := e.svc.AwaitAttempts(e.ctx(), id, n)
	if err != nil {
		e.t.Fatalf("delivery %s: waiting for %d attempts: %v", id, n, err)
	}
	return d
}

// lastDelivery returns the newest delivery id of endpoint id.
func (e *env) lastDelivery(epID string) string {
	e.t.Helper()
	list, _, err := e.svc.Deliveries(epID, 1, "")
	if err != nil || len(list) == 0 {
		e.t.Fatalf("no delivery for %s: %v", epID, err)
	}
	return list[0].ID
}

// exhaust drives delivery id through all its attempts, advancing the clock by each scheduled wait.
func (e *env) exhaust(id string) Delivery {
	e.t.Helper()
	for n := 1; n <= MaxAttempts; n++ {
		e.attempts(id, n)
		if n < MaxAttempts {
			e.clk.Advance(e.svc.schedule[n-1])
		}
	}
	return e.delivery(id, "exhausted", func(d *delivery) bool { return d.status == DeliveryExhausted })
}

func TestDeliverySignedWithExactHeaders(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(nil)
	created := e.clk.Now()
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{AvailableCredits: 40, ThresholdCredits: 100})
	ev, err := r.Await(e.ctx(), receiver.Match{Type: EventCreditsLow})
	if err != nil {
		t.Fatal(err)
	}
	atts := r.AttemptsFor(ev.ID)
	if len(atts) != 1 || atts[0].Verdict != receiver.VerdictVerified {
		t.Fatalf("attempts %+v", atts)
	}
	h := atts[0].Header
	want := map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        UserAgent,
		"Webhook-Id":        ev.ID,
		"Webhook-Timestamp": strconv.FormatInt(created.Unix(), 10),
	}
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if sig := h.Get("Webhook-Signature"); !strings.HasPrefix(sig, "v1,") {
		t.Errorf("signature %q", sig)
	}
	for k := range h {
		if strings.Contains(strings.ToLower(k), "signature") && k != "Webhook-Signature" {
			t.Errorf("extra signature header %s", k)
		}
	}
	if !strings.HasPrefix(ev.ID, "whd_") || len(ev.ID) != 36 || !ev.CreatedAt.Equal(created) {
		t.Errorf("envelope id %s created_at %s", ev.ID, ev.CreatedAt)
	}
	var data CreditsLowData
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.AvailableCredits != 40 || data.ThresholdCredits != 100 {
		t.Errorf("data %s", ev.Data)
	}
	var env map[string]json.RawMessage
	_ = json.Unmarshal(ev.Raw, &env)
	if len(env) != 4 {
		t.Errorf("envelope keys %v", env)
	}
	d := e.delivery(ev.ID, "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
	if d.WebhookID != ep.ID || d.Attempts[0].StatusCode != 204 || d.Attempts[0].Error != "" || d.NextAttempt != nil {
		t.Errorf("history %+v", d)
	}
}

func TestRetryScheduleOnTheClock(t *testing.T) {
	e := newEnv(t, nil)
	_, r := e.endpointWithReceiver(receiver.FailFirst(4, http.StatusInternalServerError))
	start := e.clk.Now()
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	list, _, _ := e.svc.Deliveries(e.svc.List(ws)[0].ID, 5, "")
	id := list[0].ID
	sent := start
	for n := 1; n <= 5; n++ {
		d := e.attempts(id, n)
		a := d.Attempts[n-1]
		if !a.SentAt.Equal(sent) {
			t.Fatalf("attempt %d sent at %s, want %s", n, a.SentAt, sent)
		}
		atts := r.AttemptsFor(id)
		if len(atts) != n || atts[n-1].Header.Get("Webhook-Timestamp") != strconv.FormatInt(sent.Unix(), 10) ||
			atts[n-1].Header.Get("Webhook-Id") != id {
			t.Fatalf("attempt %d as received: %+v", n, atts)
		}
		if n == 5 {
			if a.Error != "" || d.Status != DeliveryDelivered {
				t.Fatalf("attempt 5: %+v", d)
			}
			break
		}
		if a.Error != "status_500" || a.StatusCode != 500 || d.Status != DeliveryRetrying {
			t.Fatalf("attempt %d: %+v", n, d)
		}
		wait := DefaultSchedule[n-1]
		if d.NextAttempt == nil || !d.NextAttempt.Equal(sent.Add(wait)) {
			t.Fatalf("attempt %d: next at %v, want %s", n, d.NextAttempt, sent.Add(wait))
		}
		// Not before its delay: one second short, the retry is still on the clock.
		e.clk.Advance(wait - time.Second)
		if e.clk.Pending() != 1 || len(r.AttemptsFor(id)) != n {
			t.Fatalf("attempt %d: retry sent early (pending %d)", n+1, e.clk.Pending())
		}
		e.clk.Advance(time.Second)
		sent = sent.Add(wait)
	}
	if got := sent.Sub(start); got != 14*time.Hour+35*time.Minute {
		t.Fatalf("attempt 5 went out %s after the event", got)
	}
	if ep := e.svc.List(ws)[0]; ep.ConsecutiveFailures != 0 || ep.Status != StatusActive {
		t.Fatalf("endpoint %+v", ep)
	}
}

func TestExhaustedNeverSentAgain(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(receiver.Always(http.StatusGone))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	d := e.exhaust(id)
	if len(d.Attempts) != 5 || d.NextAttempt != nil || e.clk.Pending() != 0 {
		t.Fatalf("exhausted delivery %+v, pending %d", d, e.clk.Pending())
	}
	r.SetBehavior(nil)
	e.clk.Advance(48 * time.Hour)
	if n := len(r.AttemptsFor(id)); n != 5 {
		t.Fatalf("%d attempts after exhaustion", n)
	}
	got, _ := e.svc.Get(ep.ID)
	if got.ConsecutiveFailures != 1 || got.Status != StatusActive {
		t.Fatalf("endpoint %+v", got)
	}
}

func TestStatusTransitions(t *testing.T) {
	short := []time.Duration{time.Second, time.Second, time.Second, time.Second}
	e := newEnv(t, func(c *Config) { c.Schedule = short })
	ep, r := e.endpointWithReceiver(receiver.Always(http.StatusServiceUnavailable))
	for i := 1; i <= DisabledAfter; i++ {
		e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
		e.exhaust(e.lastDelivery(ep.ID))
		got, _ := e.svc.Get(ep.ID)
		want := StatusActive
		switch {
		case i >= DisabledAfter:
			want = StatusDisabled
		case i >= FailingAfter:
			want = StatusFailing
		}
		if got.Status != want || got.ConsecutiveFailures != i {
			t.Fatalf("after %d exhausted deliveries: %s %d, want %s %d", i, got.Status, got.ConsecutiveFailures, want, i)
		}
	}
	// Disabled: nothing is delivered, and nothing is replayed on enable.
	before := len(r.Attempts())
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	if list, _, _ := e.svc.Deliveries(ep.ID, 100, ""); len(list) != DisabledAfter {
		t.Fatalf("a disabled endpoint got a delivery: %d", len(list))
	}
	r.SetBehavior(nil)
	if got, _ := e.svc.Enable(ep.ID); got.Status != StatusActive || got.ConsecutiveFailures != 0 {
		t.Fatalf("enable: %+v", got)
	}
	e.clk.Advance(24 * time.Hour)
	if n := len(r.Attempts()); n != before {
		t.Fatalf("events of the disabled time were replayed: %d attempts, want %d", n, before)
	}
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	e.delivery(e.lastDelivery(ep.ID), "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
}

func TestSuccessResetsFailing(t *testing.T) {
	short := []time.Duration{time.Second, time.Second, time.Second, time.Second}
	e := newEnv(t, func(c *Config) { c.Schedule = short })
	ep, r := e.endpointWithReceiver(receiver.Always(http.StatusInternalServerError))
	for range FailingAfter {
		e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
		e.exhaust(e.lastDelivery(ep.ID))
	}
	if got, _ := e.svc.Get(ep.ID); got.Status != StatusFailing || got.ConsecutiveFailures != FailingAfter {
		t.Fatalf("endpoint %+v", got)
	}
	// A failed attempt still being retried leaves the count alone; the 2XX resets it.
	r.SetBehavior(receiver.FailFirst(1, http.StatusBadGateway))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	e.attempts(id, 1)
	if got, _ := e.svc.Get(ep.ID); got.ConsecutiveFailures != FailingAfter || got.Status != StatusFailing {
		t.Fatalf("a retried attempt changed the endpoint: %+v", got)
	}
	e.clk.Advance(time.Second)
	e.delivery(id, "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
	if got, _ := e.svc.Get(ep.ID); got.Status != StatusActive || got.ConsecutiveFailures != 0 {
		t.Fatalf("after a 2XX: %+v", got)
	}
}

func TestRedirectIsAFailureAndNotFollowed(t *testing.T) {
	e := newEnv(t, nil)
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer target.Close()
	for _, code := range []int{301, 302, 307, 308} {
		ep, _ := e.endpointWithReceiver(receiver.RedirectFirst(1, code, target.URL+"/elsewhere"))
		e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
		d := e.attempts(e.lastDelivery(ep.ID), 1)
		if a := d.Attempts[0]; a.StatusCode != code || a.Error != "redirect" || d.Status != DeliveryRetrying {
			t.Fatalf("%d: %+v", code, d)
		}
		if err := e.svc.Delete(ws, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the redirect target was hit %d times", hits.Load())
	}
}

func TestTimeoutAndDroppedConnection(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AttemptTimeout = 300 * time.Millisecond })
	ep, r := e.endpointWithReceiver(receiver.TimeoutFirst(1, time.Minute))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	d := e.attempts(id, 1)
	if a := d.Attempts[0]; a.Error != "timeout" || a.StatusCode != 0 || d.Status != DeliveryRetrying {
		t.Fatalf("timeout attempt %+v", d)
	}
	e.clk.Advance(5 * time.Minute)
	if d := e.attempts(id, 2); d.Status != DeliveryDelivered {
		t.Fatalf("after the timeout: %+v", d)
	}

	r.SetBehavior(receiver.DropFirst(1))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id = e.lastDelivery(ep.ID)
	d = e.attempts(id, 1)
	if a := d.Attempts[0]; a.Error != "connection_dropped" || a.StatusCode != 0 || d.Status != DeliveryRetrying {
		t.Fatalf("dropped attempt %+v", d)
	}

	// Nothing listening: refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/hooks"
	_ = ln.Close()
	ep2, _ := e.register(dead)
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	if d := e.attempts(e.lastDelivery(ep2.ID), 1); d.Attempts[0].Error != "connection_refused" {
		t.Fatalf("refused attempt %+v", d)
	}
}

func TestRotationAppliesToPendingRetries(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(receiver.FailFirst(1, http.StatusInternalServerError))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	e.attempts(id, 1)
	secret, err := e.svc.Rotate(ep.ID)
	if err != nil || !strings.HasPrefix(secret, SecretPrefix) {
		t.Fatalf("rotate: %q %v", secret, err)
	}
	if err := r.SetSecrets(secret); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(5 * time.Minute)
	e.attempts(id, 2)
	atts := r.AttemptsFor(id)
	// The receiver now holds only the new secret: an accepted retry was signed with it.
	if len(atts) != 2 || !atts[1].Verdict.Accepted() {
		t.Fatalf("the retry after rotation: %+v", atts)
	}
}

func TestDeleteRemovesPendingDeliveries(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(receiver.Always(http.StatusInternalServerError))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	e.attempts(id, 1)
	if err := e.svc.Delete(ws, ep.ID); err != nil {
		t.Fatal(err)
	}
	if e.clk.Pending() != 0 {
		t.Fatalf("%d timers left after delete", e.clk.Pending())
	}
	e.clk.Advance(24 * time.Hour)
	if n := len(r.AttemptsFor(id)); n != 1 {
		t.Fatalf("%d attempts after delete", n)
	}
	if err := e.svc.Delete(ws, ep.ID); apierr.CodeOf(err) != apierr.CodeNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if _, _, err := e.svc.Deliveries(ep.ID, 10, ""); apierr.CodeOf(err) != apierr.CodeNotFound {
		t.Fatalf("history of a deleted endpoint: %v", err)
	}
	ep2, _ := e.register("https://hooks.example.com/x")
	if err := e.svc.Delete("ws_other", ep2.ID); apierr.CodeOf(err) != apierr.CodeNotFound {
		t.Fatalf("another workspace's delete: %v", err)
	}
}

func TestLoopbackFlagAdmitsOnlyLoopback(t *testing.T) {
	for _, allow := range []bool{true, false} {
		e := newEnv(t, func(c *Config) { c.AllowLoopback = allow })
		for _, c := range []struct {
			url, stored string
			loopOnly    bool
		}{
			{"http://127.0.0.1:8080/hooks", "http://127.0.0.1:8080/hooks", true},
			{"https://127.0.0.1:9443/h", "https://127.0.0.1:9443/h", true},
			{"HTTP://LocalHost:5000/Hooks", "http://localhost:5000/Hooks", true},
			{"http://localhost:80/x", "http://localhost/x", true},
			{"http://[::1]:8080/", "", false},
			{"http://127.0.0.2:8080/", "", false},
			{"http://10.0.0.1/", "", false},
			{"https://10.0.0.1/", "", false},
			{"https://192.168.1.1/", "", false},
			{"https://169.254.169.254/latest", "", false},
			{"https://[::1]/", "", false},
			{"https://foo.localhost/", "", false},
			{"http://hooks.example.com/", "", false},
		} {
			u := c.url
			ep, _, err := e.svc.Create(context.Background(), ws, CreateParams{URL: &u, Events: &[]string{EventCreditsLow}})
			ok := c.stored != "" && (allow || !c.loopOnly)
			if ok != (err == nil) {
				t.Errorf("allow %v %s: err %v", allow, c.url, err)
				continue
			}
			if err == nil {
				if ep.URL != c.stored {
					t.Errorf("%s stored as %s, want %s", c.url, ep.URL, c.stored)
				}
				_ = e.svc.Delete(ws, ep.ID)
			} else if apierr.CodeOf(err) != apierr.CodeInvalidConfig {
				t.Errorf("%s: %v", c.url, err)
			}
		}
	}
}

func TestRegistrationValidation(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AllowLoopback = false })
	e.res.set("inside.example.com", "192.168.0.10")
	e.res.set("mixed.example.com", "93.184.216.34", "10.1.2.3")
	good := "https://hooks.example.com/hooks"
	ev := []string{EventGenerationCompleted}
	for _, c := range []struct {
		name  string
		p     CreateParams
		field string
	}{
		{"no url", CreateParams{Events: &ev}, "url"},
		{"empty url", CreateParams{URL: ptr(""), Events: &ev}, "url"},
		{"long url", CreateParams{URL: ptr("https://hooks.example.com/" + strings.Repeat("a", 2030)), Events: &ev}, "url"},
		{"http", CreateParams{URL: ptr("http://hooks.example.com/"), Events: &ev}, "url"},
		{"ftp", CreateParams{URL: ptr("ftp://hooks.example.com/"), Events: &ev}, "url"},
		{"relative", CreateParams{URL: ptr("/hooks"), Events: &ev}, "url"},
		{"userinfo", CreateParams{URL: ptr("https://u:p@hooks.example.com/"), Events: &ev}, "url"},
		{"user only", CreateParams{URL: ptr("https://u@hooks.example.com/"), Events: &ev}, "url"},
		{"private literal", CreateParams{URL: ptr("https://10.0.0.1/"), Events: &ev}, "url"},
		{"mapped private", CreateParams{URL: ptr("https://[::ffff:10.0.0.1]/"), Events: &ev}, "url"},
		{"documentation literal", CreateParams{URL: ptr("https://192.0.2.10/"), Events: &ev}, "url"},
		{"resolves private", CreateParams{URL: ptr("https://inside.example.com/"), Events: &ev}, "url"},
		{"resolves mixed", CreateParams{URL: ptr("https://mixed.example.com/"), Events: &ev}, "url"},
		{"does not resolve", CreateParams{URL: ptr("https://nowhere.example.com/"), Events: &ev}, "url"},
		{".invalid", CreateParams{URL: ptr("https://x.invalid/"), Events: &ev}, "url"},
		{"no events", CreateParams{URL: &good}, "events"},
		{"empty events", CreateParams{URL: &good, Events: &[]string{}}, "events"},
		{"unknown event", CreateParams{URL: &good, Events: &[]string{"generation.started"}}, "events"},
		{"webhook.test", CreateParams{URL: &good, Events: &[]string{EventWebhookTest}}, "events"},
		{"duplicate", CreateParams{URL: &good, Events: &[]string{EventCreditsLow, EventCreditsLow}}, "events"},
		{"long description", CreateParams{URL: &good, Events: &ev, Description: ptr(strings.Repeat("é", 201))}, "description"},
	} {
		_, _, err := e.svc.Create(context.Background(), ws, c.p)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.CodeInvalidConfig || ae.Field != c.field || ae.Message == "" {
			t.Errorf("%s: %v, want invalid_config field %s", c.name, err, c.field)
		}
	}
	// Exactly at the bounds: accepted.
	long := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))
	ep, secret, err := e.svc.Create(context.Background(), ws, CreateParams{URL: &long, Events: &ev, Description: ptr(strings.Repeat("é", 200))})
	if err != nil {
		t.Fatal(err)
	}
	key, err := receiver.ParseSecret(secret)
	if err != nil || len(key) != secretBytes || !strings.HasPrefix(ep.ID, "wh_") || ep.Status != StatusActive || ep.ConsecutiveFailures != 0 {
		t.Fatalf("endpoint %+v secret %q: %v", ep, secret, err)
	}
	// Normalizing.
	raw := "HTTPS://Hooks.Example.COM:443/Path/To?q=1#frag"
	ep, _, err = e.svc.Create(context.Background(), ws, CreateParams{URL: &raw, Events: &ev})
	if err != nil || ep.URL != "https://hooks.example.com/Path/To?q=1" {
		t.Fatalf("normalized %q: %v", ep.URL, err)
	}
	// At most 10 per workspace.
	for len(e.svc.List(ws)) < MaxEndpoints {
		e.register(good)
	}
	_, _, err = e.svc.Create(context.Background(), ws, CreateParams{URL: &good, Events: &ev})
	if ae, ok := err.(*apierr.Error); !ok || ae.Code != apierr.CodeInvalidConfig {
		t.Fatalf("11th endpoint: %v", err)
	}
	list := e.svc.List(ws)
	for i := 1; i < len(list); i++ {
		if list[i].CreatedAt.After(list[i-1].CreatedAt) {
			t.Fatal("list is not newest first")
		}
	}
	if list[len(list)-1].URL != long {
		t.Fatal("the oldest endpoint is not last")
	}
}

func TestAddressRecheckedAtEachAttempt(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AllowLoopback = false })
	ep, _ := e.register("https://hooks.example.com/hooks")
	// The name now points inside: the attempt fails without dialling anything.
	e.res.set("hooks.example.com", "10.20.30.40")
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	d := e.attempts(e.lastDelivery(ep.ID), 1)
	if a := d.Attempts[0]; a.Error != "private_address" || a.StatusCode != 0 || d.Status != DeliveryRetrying {
		t.Fatalf("attempt %+v", d)
	}
	e.res.set("hooks.example.com") // no addresses: does not resolve
	e.clk.Advance(5 * time.Minute)
	if d := e.attempts(d.ID, 2); d.Attempts[1].Error != "unresolvable" {
		t.Fatalf("attempt 2 %+v", d)
	}
	// The dialer applies the same policy (a rebinding between check and dial cannot reach inside).
	if _, err := e.svc.guard.dialContext(context.Background(), "tcp", "10.0.0.1:443"); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("dial of a private address: %v", err)
	}
}

// gate is a receiver that reports each arriving request on arrived and answers it with the status
// sent on release, or nothing when the client gives up first.
type gate struct {
	arrived chan struct{}
	release chan int
}

func newGate(t *testing.T) (*gate, string) {
	g := &gate{arrived: make(chan struct{}, 8), release: make(chan int)}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	return g, ts.URL
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end: only then does the server watch the connection, so that the
	// client giving up ends r's context.
	_, _ = io.Copy(io.Discard, r.Body)
	g.arrived <- struct{}{}
	select {
	case code := <-g.release:
		w.WriteHeader(code)
	case <-r.Context().Done():
	}
}

// wait blocks until a request has arrived.
func (g *gate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt arrived")
	}
}

func TestAttemptDeadlineOnTheServiceClock(t *testing.T) {
	// The real-time bound is far off: only the clock can end the attempt within the test.
	e := newEnv(t, func(c *Config) { c.AttemptTimeout = 10 * time.Second })
	g, url := newGate(t)
	ep, _ := e.register(url + "/hooks")

	// 9 seconds of service time in flight, then a 2XX: delivered.
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	g.wait(t)
	e.clk.Advance(9 * time.Second)
	if e.clk.Pending() != 1 {
		t.Fatalf("%d timers pending in flight, want the attempt's deadline", e.clk.Pending())
	}
	g.release <- http.StatusNoContent
	if d := e.attempts(id, 1); d.Status != DeliveryDelivered || d.Attempts[0].Error != "" || e.clk.Pending() != 0 {
		t.Fatalf("answered 9 s into the attempt: %+v, %d timers pending", d, e.clk.Pending())
	}

	// The clock reaching 10 seconds abandons the attempt at once, as a timeout, retried on schedule.
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id = e.lastDelivery(ep.ID)
	g.wait(t)
	sent := e.clk.Now()
	e.clk.Advance(10 * time.Second)
	d := e.attempts(id, 1)
	if a := d.Attempts[0]; a.Error != "timeout" || a.StatusCode != 0 || a.Duration >= 10*time.Second ||
		d.Status != DeliveryRetrying || !d.NextAttempt.Equal(sent.Add(DefaultSchedule[0])) {
		t.Fatalf("attempt past its deadline on the clock: %+v", d)
	}
	if e.clk.Pending() != 1 {
		t.Fatalf("%d timers pending after the timeout, want the retry", e.clk.Pending())
	}
}

func TestAttemptDeadlineOnAScaledClock(t *testing.T) {
	// On a clock 1000 times faster than wall time, 10 s of service time pass in 10 ms: the deadline
	// on the clock is scaled with it, so a receiver answering after 200 ms (real) is in time.
	clk := clock.NewScaled(time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC), 1000)
	t.Cleanup(clk.Stop)
	e := newEnv(t, func(c *Config) { c.Clock = clk; c.AttemptTimeout = 10 * time.Second })
	ep, r := e.endpointWithReceiver(func(receiver.Attempt) receiver.Response {
		return receiver.Response{Hold: 200 * time.Millisecond}
	})
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	if d := e.attempts(id, 1); d.Status != DeliveryDelivered {
		t.Fatalf("a 2XX after 200 ms on a scaled clock: %+v", d)
	}
	if atts := r.AttemptsFor(id); len(atts) != 1 || atts[0].Abandoned {
		t.Fatalf("as received: %+v", atts)
	}
}

// hang is a receiver that holds every request until released.
type hang struct {
	release chan struct{}
	got     atomic.Int32
}

func (h *hang) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.got.Add(1)
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusNoContent)
}

func TestHungReceiverBlocksNothing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = 3; c.PerEndpoint = 2; c.AttemptTimeout = 5 * time.Second })
	h := &hang{release: make(chan struct{})}
	slow := httptest.NewServer(h)
	defer slow.Close()
	defer close(h.release)
	e.register(slow.URL+"/slow", EventGenerationCompleted)
	done := make(chan struct{})
	go func() {
		for range 20 {
			e.svc.Emit(ws, EventGenerationCompleted, map[string]any{"generation_id": "gen_x"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Emit blocked behind a hung receiver")
	}
	// Another endpoint is still served while the hung one holds its workers.
	_, r := e.endpointWithReceiver(nil)
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{AvailableCredits: 1})
	if _, err := r.Await(e.ctx(), receiver.Match{Type: EventCreditsLow}); err != nil {
		t.Fatalf("the healthy endpoint got nothing: %v", err)
	}
	if n := h.got.Load(); n > 2 {
		t.Fatalf("the hung endpoint holds %d attempts at once, want at most 2", n)
	}
}

func TestTestEventAndDisabledEndpoint(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(nil)
	if _, err := e.svc.Disable(ep.ID); err != nil {
		t.Fatal(err)
	}
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id, err := e.svc.SendTest(ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Await(e.ctx(), receiver.Match{Type: EventWebhookTest})
	if err != nil || ev.ID != id {
		t.Fatalf("test event: %+v %v", ev, err)
	}
	var data TestData
	if json.Unmarshal(ev.Data, &data) != nil || data.WebhookID != ep.ID || data.Message == "" {
		t.Fatalf("test data %s", ev.Data)
	}
	e.delivery(id, "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
	if got, _ := e.svc.Get(ep.ID); got.Status != StatusDisabled {
		t.Fatalf("a test delivery changed a disabled endpoint: %+v", got)
	}
	if len(r.Find(receiver.Match{Type: EventCreditsLow})) != 0 {
		t.Fatal("a disabled endpoint received an event")
	}
	if _, err := e.svc.SendTest("wh_00000000000000000000000000000000"); apierr.CodeOf(err) != apierr.CodeNotFound {
		t.Fatalf("unknown endpoint: %v", err)
	}
}

func TestDisableDropsPendingRetries(t *testing.T) {
	e := newEnv(t, nil)
	ep, r := e.endpointWithReceiver(receiver.Always(500))
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	e.attempts(id, 1)
	if _, err := e.svc.Disable(ep.ID); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Hour)
	d := e.delivery(id, "dropped", func(d *delivery) bool { return d.status == DeliveryDropped })
	if len(r.AttemptsFor(id)) != 1 || d.NextAttempt != nil {
		t.Fatalf("dropped delivery %+v", d)
	}
}

func TestSubscriptionsAndWorkspaces(t *testing.T) {
	e := newEnv(t, nil)
	_, r := e.endpointWithReceiver(nil) // credits.low only
	e.svc.Emit(ws, EventGenerationCompleted, map[string]any{"generation_id": "gen_1"})
	e.svc.Emit("ws_other", EventCreditsLow, CreditsLowData{})
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{AvailableCredits: 7})
	ev, err := r.Await(e.ctx(), receiver.Match{Type: EventCreditsLow})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Events(); len(got) != 1 || got[0].ID != ev.ID {
		t.Fatalf("events %+v", got)
	}
}

func TestDeliveriesPagingAndReset(t *testing.T) {
	e := newEnv(t, nil)
	ep, _ := e.endpointWithReceiver(nil)
	var want []string
	for range 5 {
		id, _ := e.svc.SendTest(ep.ID)
		want = append([]string{id}, want...)
	}
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := e.svc.Deliveries(ep.ID, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			got = append(got, d.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %v, want %v", got, want)
	}
	e.svc.Reset()
	if len(e.svc.List(ws)) != 0 {
		t.Fatal("reset kept endpoints")
	}
}

func TestSameSeedSameSecrets(t *testing.T) {
	a, b := newEnv(t, nil), newEnv(t, nil)
	epA, sa := a.register("https://hooks.example.com/a")
	epB, sb := b.register("https://hooks.example.com/a")
	if sa != sb || epA.ID != epB.ID {
		t.Fatal("the seeded stream does not fix ids and secrets")
	}
}

// With Config.Stamp (the mock on a running, scaled clock), webhook-timestamp and the signature carry
// the stamp clock's time — what a receiver compares with its own clock — while the envelope's
// created_at and the delivery history stay on the service clock.
func TestStampClockSignsTheTimestamp(t *testing.T) {
	wall := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC) // an hour behind the service clock
	e := newEnv(t, func(c *Config) { c.Stamp = func() time.Time { return wall } })
	placeholder, _ := e.svc.newSecret()
	r, err := receiver.New(receiver.Config{Secrets: []string{placeholder}, Now: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(r)
	t.Cleanup(func() { _ = r.Close(); ts.Close() })
	_, secret := e.register(ts.URL + "/hooks")
	if err := r.SetSecrets(secret); err != nil {
		t.Fatal(err)
	}
	created := e.clk.Now()
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{AvailableCredits: 1, ThresholdCredits: 2})
	ev, err := r.Await(e.ctx(), receiver.Match{Type: EventCreditsLow})
	if err != nil {
		t.Fatalf("a receiver on the stamp clock did not verify the delivery: %v (attempts %+v)", err, r.Attempts())
	}
	if got := r.AttemptsFor(ev.ID)[0].Header.Get("Webhook-Timestamp"); got != strconv.FormatInt(wall.Unix(), 10) {
		t.Errorf("webhook-timestamp %s, want the stamp clock's %d", got, wall.Unix())
	}
	if !ev.CreatedAt.Equal(created) {
		t.Errorf("created_at %s, want service time %s", ev.CreatedAt, created)
	}
	d := e.delivery(ev.ID, "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
	if !d.Attempts[0].SentAt.Equal(created) {
		t.Errorf("history SentAt %s, want service time %s", d.Attempts[0].SentAt, created)
	}
}

// TestRebindingAfterLoopbackName: with AllowLoopback a name resolving to 127.0.0.1 is admitted
// over https (a loopback receiver's self-signed certificate is accepted), not over http; when the
// name is re-pointed at a private address the next attempt fails before any dial, and the dialer
// itself refuses the name.
func TestRebindingAfterLoopbackName(t *testing.T) {
	e := newEnv(t, nil)
	e.res.set("rebind.conformance.test", "127.0.0.1")
	placeholder, _ := e.svc.newSecret()
	r, err := receiver.New(receiver.Config{Secrets: []string{placeholder}, Now: e.clk.Now, Behavior: receiver.Always(http.StatusInternalServerError)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(r)
	t.Cleanup(func() { _ = r.Close(); ts.Close() })
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	plain := "http://rebind.conformance.test:" + port + "/hooks"
	if _, _, err := e.svc.Create(context.Background(), ws, CreateParams{URL: &plain, Events: &[]string{EventCreditsLow}}); err == nil {
		t.Fatal("http to a name admitted (http is for 127.0.0.1 and localhost only)")
	}
	ep, secret := e.register("https://rebind.conformance.test:" + port + "/hooks")
	if err := r.SetSecrets(secret); err != nil {
		t.Fatal(err)
	}
	e.svc.Emit(ws, EventCreditsLow, CreditsLowData{})
	id := e.lastDelivery(ep.ID)
	if _, err := r.AwaitAttempts(e.ctx(), id, 1); err != nil {
		t.Fatal(err)
	}
	if d := e.attempts(id, 1); d.Attempts[0].Error != "status_500" {
		t.Fatalf("attempt 1 %+v", d.Attempts[0])
	}
	e.res.set("rebind.conformance.test", "10.0.0.1")
	e.clk.Advance(5 * time.Minute)
	if d := e.attempts(id, 2); d.Attempts[1].Error != "private_address" || d.Attempts[1].StatusCode != 0 {
		t.Fatalf("attempt 2 %+v", d.Attempts[1])
	}
	if n := len(r.AttemptsFor(id)); n != 1 {
		t.Fatalf("the receiver got %d attempts after the name left loopback", n)
	}
	for _, dial := range []func(context.Context, string, string) (net.Conn, error){e.svc.guard.dialContext, e.svc.guard.dialTLSContext} {
		if _, err := dial(context.Background(), "tcp", "rebind.conformance.test:"+port); !errors.Is(err, ErrPrivateAddress) {
			t.Fatalf("dial of the re-pointed name: %v", err)
		}
	}
	// Without the flag a name resolving to loopback is refused.
	strict := newEnv(t, func(c *Config) { c.AllowLoopback = false })
	strict.res.set("rebind.conformance.test", "127.0.0.1")
	u := "https://rebind.conformance.test/hooks"
	if _, _, err := strict.svc.Create(context.Background(), ws, CreateParams{URL: &u, Events: &[]string{EventCreditsLow}}); apierr.CodeOf(err) != apierr.CodeInvalidConfig {
		t.Fatalf("a loopback name without the flag: %v", err)
	}
}

// TestServiceFaultNeverCounts: failures on the service's own side are no attempts: nothing is
// sent, the endpoint's status and count stay, and the delivery goes out a minute later.
func TestServiceFaultNeverCounts(t *testing.T) {
	var left atomic.Int32
	left.Store(12)
	var asked atomic.Value
	e := newEnv(t, func(c *Config) {
		c.ServiceFault = func(workspaceID string) bool {
			asked.Store(workspaceID)
			return left.Add(-1) >= 0
		}
	})
	ep, r := e.endpointWithReceiver(nil)
	var ids []string
	for range 3 {
		id, err := e.svc.SendTest(ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		d := e.delivery(id, "a service-side retry", func(d *delivery) bool { return d.nextAt != nil || len(d.attempts) > 0 })
		if d.Status != DeliveryPending || len(d.Attempts) != 0 || d.NextAttempt == nil || !d.NextAttempt.Equal(e.clk.Now().Add(time.Minute)) {
			t.Fatalf("after a service-side failure %+v", d)
		}
	}
	for step := 0; left.Load() > 0; step++ {
		if step > 20 {
			t.Fatal("the faults were not used up")
		}
		e.clk.Advance(time.Minute)
		for _, id := range ids {
			e.delivery(id, "the retry to settle", func(d *delivery) bool { return d.nextAt != nil && d.nextAt.After(e.clk.Now()) || len(d.attempts) > 0 })
		}
	}
	e.clk.Advance(time.Minute)
	for _, id := range ids {
		d := e.attempts(id, 1)
		if d.Status != DeliveryDelivered || len(d.Attempts) != 1 || d.Attempts[0].Number != 1 {
			t.Fatalf("delivery %+v", d)
		}
		if n := len(r.AttemptsFor(id)); n != 1 {
			t.Fatalf("the receiver got %d attempts of %s", n, id)
		}
	}
	got, _ := e.svc.Get(ep.ID)
	if got.Status != StatusActive || got.ConsecutiveFailures != 0 || asked.Load() != ws {
		t.Fatalf("endpoint %+v after service-side failures (asked for %v)", got, asked.Load())
	}
}

// With Retain, a finished delivery leaves the history Retain after it finished; one still being
// retried stays however old it is.
func TestRetainForgetsFinishedDeliveries(t *testing.T) {
	const retain = 20 * time.Hour
	e := newEnv(t, func(c *Config) { c.Retain = retain })
	ok, _ := e.endpointWithReceiver(nil)
	done, _ := e.svc.SendTest(ok.ID)
	ended := e.delivery(done, "delivered", func(d *delivery) bool { return d.status == DeliveryDelivered })
	failing, _ := e.endpointWithReceiver(receiver.Behavior(func(receiver.Attempt) receiver.Response { return receiver.Response{Status: 500} }))
	retrying, _ := e.svc.SendTest(failing.ID)
	e.attempts(retrying, 1)
	ids := func(ep string) []string {
		page, _, err := e.svc.Deliveries(ep, 50, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range page {
			out = append(out, d.ID)
		}
		return out
	}
	e.clk.Advance(ended.Attempts[0].SentAt.Add(retain - time.Second).Sub(e.clk.Now()))
	if got := ids(ok.ID); len(got) != 1 {
		t.Fatalf("history %v a second before the retention, want the delivery", got)
	}
	e.clk.Advance(time.Second)
	if got := ids(ok.ID); len(got) != 0 {
		t.Fatalf("history %v at the retention, want it empty", got)
	}
	if got := ids(failing.ID); len(got) != 1 || got[0] != retrying {
		t.Fatalf("a delivery still being retried left the history: %v", got)
	}
}
