package framework

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec"
)

// ReceiverOff as Config.ReceiverListen starts no receiver.
const ReceiverOff = "off"

// receiverProbePath is the path of the registration Setup makes to learn whether the target admits
// the receiver's URL.
const receiverProbePath = "/conformance-probe"

// Hooks is the run's webhook receiver: one receiver.Receiver on ReceiverListen that stands for
// every endpoint the specs register. Each spec registers its endpoints on paths of its own
// (NewURL), tells the receiver their secrets (Trust) and, when it wants misbehaviour, sets a
// Behavior for its path (Behave). The receiver checks webhook-timestamp against the target's
// clock (read through the control API when there is one, else the local clock), so a target on a
// jumped or scaled clock is judged by its own time; see stampWindow. It is safe for concurrent use.
type Hooks struct {
	rcv    *receiver.Receiver
	srv    *http.Server
	public string // scheme and host the target delivers to
	// tlsSrv serves the same receiver over TLS (a self-signed certificate) on tlsPort of the same
	// loopback address, for URLs on a hostname the control API's resolver maps there (NamedURL).
	// Unset when the receiver is reached through ReceiverPublicURL.
	tlsSrv  *http.Server
	tlsPort string

	mu        sync.Mutex // guards secrets, behaviors
	secrets   []string
	behaviors map[string]receiver.Behavior
}

// startReceiver starts the receiver (unless ReceiverListen is "off") and reports whether the
// target admits its URL: it registers an endpoint there with key and deletes it again. A refusal,
// or a webhook route the target does not have, leaves the Receiver need unmet with the reason
// (why); only a receiver that cannot listen is an error. The probe is setup, not a verdict: its
// answers are not checked against the description (the webhook specs judge them).
func (f *Framework) startReceiver(ctx context.Context, key string) (ok bool, why string, err error) {
	listen := f.cfg.ReceiverListen
	if listen == ReceiverOff {
		return false, "", nil
	}
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	placeholder := make([]byte, 32)
	_, _ = rand.Read(placeholder)
	h := &Hooks{behaviors: map[string]receiver.Behavior{}, secrets: []string{"whsec_" + base64.StdEncoding.EncodeToString(placeholder)}}
	rcv, err := receiver.New(receiver.Config{Secrets: h.secrets, Now: f.targetNow, Window: f.stampWindow, Behavior: h.behave})
	if err != nil {
		return false, "", err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return false, "", fmt.Errorf("webhook receiver: listen on %s: %w", listen, err)
	}
	h.rcv = rcv
	// The target is a peer nobody here controls: a delivery's header block and the time to read
	// it are capped (its body is, by the receiver: receiver.DefaultMaxBody).
	h.srv = &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: receiverReadTimeout, MaxHeaderBytes: MaxRequestHeaderBytes}
	go func() { _ = h.srv.Serve(ln) }()
	h.public = strings.TrimRight(f.cfg.ReceiverPublicURL, "/")
	if h.public == "" {
		h.public = "http://" + ln.Addr().String()
		if err := h.serveTLS(ln.Addr()); err != nil {
			fmt.Fprintf(GinkgoWriter, "webhook receiver: no TLS listener (%v); specs that deliver to a mapped hostname are skipped\n", err)
		}
	}
	f.mu.Lock()
	f.hooks = h
	f.mu.Unlock()

	u := f.resolve(f.apiRoot, "/webhooks")
	body := map[string]any{"url": h.public + receiverProbePath, "events": []string{"credits.low"}, "description": "conformance probe"}
	r, err := f.exchange(ctx, nil, http.MethodPost, u, key, Bearer, []CallOption{JSONBody(body)})
	if err != nil {
		why = fmt.Sprintf("registering the receiver's URL (POST /webhooks) got no answer: %v", err)
		fmt.Fprintln(GinkgoWriter, why)
		return false, why, nil
	}
	if r.Status != http.StatusCreated {
		why = fmt.Sprintf("the target refuses the receiver URL %s (POST /webhooks answered %d)", h.public, r.Status)
		fmt.Fprintln(GinkgoWriter, why+"; specs that need a receiver are skipped")
		return false, why, nil
	}
	var doc struct {
		Webhook struct {
			ID string `json:"webhook_id"`
		} `json:"webhook"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || doc.Webhook.ID == "" {
		return false, "registering the receiver's URL answered 201 without webhook.webhook_id", nil
	}
	// The delete is not checked against the REST description: its answer is judged by the WH-021
	// spec, not by the setup (a wrong answer there must fail that spec, not the whole run).
	if _, err := f.exchange(ctx, nil, http.MethodDelete, f.resolve(f.apiRoot, "/webhooks/"+doc.Webhook.ID), key, Bearer, nil); err != nil {
		return false, fmt.Sprintf("deleting the probe registration got no answer: %v", err), nil
	}
	return true, "", nil
}

// stopReceiver stops the receiver, if one runs.
func (f *Framework) stopReceiver(ctx context.Context) {
	f.mu.Lock()
	h := f.hooks
	f.hooks = nil
	f.mu.Unlock()
	if h == nil {
		return
	}
	_ = h.rcv.Close()
	_ = h.srv.Shutdown(ctx)
	if h.tlsSrv != nil {
		_ = h.tlsSrv.Shutdown(ctx)
	}
}

// serveTLS serves the receiver over TLS on a second port of addr's loopback address, with a
// self-signed certificate made now (a target admits it only where it trusts loopback peers, as
// the mock does under --allow-loopback-webhooks).
func (h *Hooks) serveTLS(addr net.Addr) error {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "mediaspec conformance receiver"},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{tcp.IP},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(tcp.IP.String(), "0"))
	if err != nil {
		return err
	}
	h.tlsSrv = &http.Server{Handler: h.rcv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: receiverReadTimeout, MaxHeaderBytes: MaxRequestHeaderBytes,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	_, h.tlsPort, _ = net.SplitHostPort(ln.Addr().String())
	go func() { _ = h.tlsSrv.ServeTLS(ln, "", "") }()
	return nil
}

// NamedURL returns a fresh path on the receiver and an https URL reaching it through host, a
// name the spec maps to the receiver's loopback address with Spec.MapHost; ok is false when the
// receiver has no TLS listener (it is reached through ReceiverPublicURL).
func (h *Hooks) NamedURL(host string) (path, url string, ok bool) {
	if h.tlsPort == "" {
		return "", "", false
	}
	path, _ = h.NewURL()
	return path, "https://" + net.JoinHostPort(host, h.tlsPort) + path, true
}

// PublicURL returns the base URL (scheme and host) the target delivers to.
func (h *Hooks) PublicURL() string { return h.public }

// targetNow is the receiver's clock for when an answer is settled: the target's service time on
// a manual clock, else the wall clock. An arrival is stamped, and its timestamp judged, by one
// reading in stampWindow (clock.go).
func (f *Framework) targetNow() time.Time {
	if f.manualClock() {
		if now, err := f.serviceNow(context.Background()); err == nil {
			return now
		}
	}
	return time.Now()
}

func (h *Hooks) behave(a receiver.Attempt) receiver.Response {
	h.mu.Lock()
	b := h.behaviors[a.Path]
	h.mu.Unlock()
	if b == nil {
		return receiver.Response{}
	}
	return b(a)
}

// HasReceiver reports whether the run's receiver runs and the target admits its URL (the
// Receiver need is met), for specs that use it when they can but do not need it.
func (s *Spec) HasReceiver() bool { return s.f.Capabilities().Receiver }

// Hooks returns the run's receiver. The spec must need Receiver.
func (s *Spec) Hooks() *Hooks {
	GinkgoHelper()
	s.f.mu.Lock()
	h := s.f.hooks
	s.f.mu.Unlock()
	Expect(h).NotTo(BeNil(), "the spec uses the webhook receiver without declaring the receiver need")
	return h
}

// NewURL returns a fresh path on the receiver and the URL the target should deliver to it.
func (h *Hooks) NewURL() (path, url string) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	path = fmt.Sprintf("/hooks/%x", b)
	return path, h.public + path
}

// Trust makes the receiver accept signatures made with secret (besides every secret trusted
// before). A malformed secret fails the spec.
func (h *Hooks) Trust(secret string) {
	GinkgoHelper()
	h.mu.Lock()
	defer h.mu.Unlock()
	Expect(h.rcv.SetSecrets(append(append([]string(nil), h.secrets...), secret)...)).To(Succeed(), "the signing secret is not a whsec_ secret")
	h.secrets = append(h.secrets, secret)
}

// Behave sets how the receiver answers attempts on path (nil: verify and answer 204). It is reset
// when the spec ends.
func (h *Hooks) Behave(path string, b receiver.Behavior) {
	h.mu.Lock()
	h.behaviors[path] = b
	h.mu.Unlock()
	DeferCleanup(func() {
		h.mu.Lock()
		delete(h.behaviors, path)
		h.mu.Unlock()
	})
}

// Await waits up to timeout (real time) for a verified event matching m.
func (h *Hooks) Await(ctx context.Context, m receiver.Match, timeout time.Duration) (receiver.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return h.rcv.Await(ctx, m)
}

// AwaitAttempts waits up to timeout (real time) until n attempts of deliveryID arrived, and
// returns them in arrival order (the latest may not be answered yet: specs watch attempts the
// receiver holds as they arrive; receiver.AwaitArrivals).
func (h *Hooks) AwaitAttempts(ctx context.Context, deliveryID string, n int, timeout time.Duration) ([]receiver.Attempt, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return h.rcv.AwaitArrivals(ctx, deliveryID, n)
}

// Attempts returns every attempt that arrived on path, in arrival order.
func (h *Hooks) Attempts(path string) []receiver.Attempt {
	var out []receiver.Attempt
	for _, a := range h.rcv.Attempts() {
		if a.Path == path {
			out = append(out, a)
		}
	}
	return out
}

// Events returns the verified events that arrived on path, ordered by created_at.
func (h *Hooks) Events(path string) []receiver.Event {
	return h.rcv.Find(receiver.Match{Path: path})
}

// EventSchema returns the schema of eventType's whole delivery body (the envelope) as the REST
// description's x-webhooks names it, or nil when it names none: the normative view's (what the
// interface text states), or the reference document's under Config.Strict.
func (s *Spec) EventSchema(eventType string) *openapi3.Schema {
	doc := s.f.judge.Normative().Document()
	if s.f.cfg.Strict {
		doc = s.f.validator.Document()
	}
	if sch := spec.EventSchemas(doc)[eventType]; sch != nil {
		return sch.Value
	}
	return nil
}

// AttemptsFor returns every attempt of delivery id that arrived, in arrival order.
func (h *Hooks) AttemptsFor(deliveryID string) []receiver.Attempt {
	return h.rcv.AttemptsFor(deliveryID)
}

// Find returns the verified events matching m, ordered by created_at.
func (h *Hooks) Find(m receiver.Match) []receiver.Event { return h.rcv.Find(m) }

// MapHost makes the target resolve host to addrs (none: host does not resolve) through the
// control API's resolver override (PUT /resolver/{host}) until the spec ends, when the override is
// dropped. It skips the spec when the control API has no resolver override (404 on PUT).
func (s *Spec) MapHost(ctx context.Context, host string, addrs ...string) {
	GinkgoHelper()
	if !s.TryMapHost(ctx, host, addrs...) {
		SkipFor(Unsupported(Control, "the control API has no resolver override (PUT /resolver/{host} answered 404)"))
	}
}

// TryMapHost is MapHost, reporting false (instead of skipping) when the control API has no
// resolver override.
func (s *Spec) TryMapHost(ctx context.Context, host string, addrs ...string) bool {
	GinkgoHelper()
	if addrs == nil {
		addrs = []string{}
	}
	r, err := s.Control().Call(ctx, http.MethodPut, "/resolver/"+host, map[string]any{"addresses": addrs})
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		return false
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control PUT /resolver/"+host+r.Describe())
	DeferCleanup(func(ctx SpecContext) {
		// 404: already dropped (the spec or a reset did); anything else is the target's failure.
		d, err := s.Control().Call(ctx, http.MethodDelete, "/resolver/"+host, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Status).To(BeElementOf(http.StatusOK, http.StatusNotFound), "control DELETE /resolver/"+host+d.Describe())
	})
	return true
}
