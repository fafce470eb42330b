package proxy

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/receiver"
)

// hookRig is the mock's webhook deliveries going through Hooks to a client receiver.
type hookRig struct {
	tg      *target
	hooks   *Hooks
	client  *receiver.Receiver // the client's receiver, behind the hooks
	hookURL string
	id      string // webhook_id
	secret  string
}

func startHooks(t *testing.T) *hookRig {
	t.Helper()
	tg := startTarget(t, nil)
	var h atomic.Pointer[Hooks]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	t.Cleanup(front.Close)
	c := tg.client(t, tg.info.GenerateKey)
	reg := c.do("POST", "/webhooks", map[string]any{"url": front.URL + "/hooks/main", "events": []string{"generation.completed", "generation.failed"}})
	if reg.status != 201 {
		t.Fatalf("register: %d %s", reg.status, reg.raw)
	}
	secret := reg.str("secret")
	rcv, err := receiver.New(receiver.Config{Secrets: []string{secret}, Window: tg.proxy.clockWindow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rcv.Close() })
	back := httptest.NewServer(rcv)
	t.Cleanup(back.Close)
	hooks, err := NewHooks(tg.proxy, HooksConfig{Secrets: []string{secret}, Forward: back.URL + "/in"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hooks.Close)
	h.Store(hooks)
	return &hookRig{tg: tg, hooks: hooks, client: rcv, hookURL: front.URL, id: reg.str("webhook", "webhook_id"), secret: secret}
}

func await(t *testing.T, r *receiver.Receiver, m receiver.Match) receiver.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := r.Await(ctx, m)
	if err != nil {
		t.Fatalf("no %s delivery reached the client's receiver: %v", m.Type, err)
	}
	return ev
}

// Deliveries pass through unchanged (same bytes, verified with the endpoint's secret by the
// client's receiver, on the path below the forward URL) and a correct sender and receiver give no
// finding.
func TestWebhooksThroughTheProxy(t *testing.T) {
	rig := startHooks(t)
	rig.tg.control(t, "POST", "/webhooks/"+rig.id+"/test", nil)
	ev := await(t, rig.client, receiver.Match{Type: "webhook.test"})
	if ev.Path != "/in/hooks/main" {
		t.Errorf("forwarded to %s, want /in/hooks/main", ev.Path)
	}
	gen := goodWalk(t, rig.tg, rig.tg.client(t, rig.tg.info.GenerateKey))
	await(t, rig.client, receiver.Match{Type: "generation.completed", ResourceID: gen})
	for _, a := range rig.client.Attempts() {
		if a.Verdict != receiver.VerdictVerified {
			t.Errorf("the client's receiver saw %s (%s)", a.Verdict, a.Detail)
		}
	}
	if fs := rig.tg.findings(t); len(fs) > 0 {
		t.Errorf("findings on correct traffic: %+v", fs)
	}
}

// The receiver's answers are judged: a 500 to a valid delivery breaks RECV-005; its retry comes
// on the schedule (no DLV-014 finding), and a forged delivery is the sender's DLV-006, refused by
// the client's receiver as it must be (no receiver finding).
func TestWebhookReceiverAndSenderFindings(t *testing.T) {
	rig := startHooks(t)
	rig.client.SetBehavior(receiver.Always(http.StatusInternalServerError))
	sent := rig.tg.control(t, "POST", "/webhooks/"+rig.id+"/test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rig.client.AwaitAttempts(ctx, sent.str("delivery_id"), 1); err != nil {
		t.Fatal(err)
	}
	rig.tg.control(t, "POST", "/clock/advance", map[string]any{"seconds": 330})
	if _, err := rig.client.AwaitAttempts(ctx, sent.str("delivery_id"), 2); err != nil {
		t.Fatal(err)
	}
	// A forged delivery straight to the hooks: a signature made with another secret.
	body := []byte(`{"id":"whd_0123456789abcdef0123456789abcdef","type":"webhook.test","created_at":"2026-03-02T10:00:00Z","data":{"webhook_id":"` + rig.id + `","message":"hi"}}`)
	req, _ := http.NewRequest("POST", rig.hookURL+"/hooks/main", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mediaspec-Webhooks/1.0")
	req.Header.Set("Webhook-Id", "whd_0123456789abcdef0123456789abcdef")
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(rig.tg.proxy.serviceNow().Unix(), 10))
	req.Header.Set("Webhook-Signature", "v1,bm90IHRoZSByaWdodCBzaWduYXR1cmUgYXQgYWxsIQ==")
	rig.client.SetBehavior(nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode < 400 {
		t.Errorf("a forged delivery was answered %d through the proxy", res.StatusCode)
	}
	var got []string
	for _, f := range rig.tg.findings(t) {
		got = append(got, f.Side+" "+f.RuleID)
	}
	for _, want := range []string{"receiver RECV-005", "sender DLV-006"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s finding; got %v", want, got)
		}
	}
	for _, g := range got {
		if strings.HasPrefix(g, "sender DLV-01") || g == "receiver RECV-001" {
			t.Errorf("finding %s on a correct schedule or a correct refusal; got %v", g, got)
		}
	}
}
