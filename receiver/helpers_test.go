package receiver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// makeSecret returns a whsec_ secret whose 32-byte key is filled with b.
func makeSecret(b byte) string {
	return "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32))
}

var (
	secretA = makeSecret(0xA1)
	secretB = makeSecret(0xB2)
)

// t0 is the fake clock's start: 2026-11-21T10:00:00Z.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// fakeClock is a manually set clock for the timestamp check.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// signer signs one delivery: it returns the webhook-signature header value.
type signer func(t testing.TB, secret, id string, ts int64, body []byte) string

// signLib signs with the Standard Webhooks library.
func signLib(t testing.TB, secret, id string, ts int64, body []byte) string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, time.Unix(ts, 0), body)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// signHMAC is an independent implementation of the scheme: v1, + base64(HMAC-SHA256(key,
// "{id}.{ts}.{body}")) where key is the base64 text after whsec_.
func signHMAC(t testing.TB, secret, id string, ts int64, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

var signers = map[string]signer{"library": signLib, "hmac": signHMAC}

// envelopeBody makes a delivery body.
func envelopeBody(id, typ string, created time.Time, data map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"id": id, "type": typ, "created_at": created.UTC().Format(time.RFC3339), "data": data})
	if err != nil {
		panic(err)
	}
	return b
}

func genData(genID string) map[string]any {
	return map[string]any{"generation_id": genID, "status": "completed", "batch_group_id": nil, "workflow_run_id": nil}
}

// whdID returns a deterministic delivery id.
func whdID(n int) string { return fmt.Sprintf("whd_%032x", n) }

func genID(n int) string { return fmt.Sprintf("gen_%032x", n) }

// signedRequest builds a delivery POST to path signed by sign with secret at ts.
func signedRequest(t testing.TB, sign signer, secret, path, id string, ts int64, body []byte) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mediaspec-Webhooks/1.0")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sign(t, secret, id, ts, body))
	return req
}

// serve runs one request through h and returns the recorded answer.
func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// newTestReceiver makes a receiver on a fake clock at t0 with secretA.
func newTestReceiver(t testing.TB, mod func(*Config)) (*Receiver, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: t0}
	cfg := Config{Secrets: []string{secretA}, Now: clk.Now}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, clk
}

// deliver posts a valid delivery of a generation.completed event and returns the answer.
func deliver(t testing.TB, r http.Handler, path string, n int, created time.Time) *httptest.ResponseRecorder {
	t.Helper()
	body := envelopeBody(whdID(n), "generation.completed", created, genData(genID(n)))
	return serve(r, signedRequest(t, signLib, secretA, path, whdID(n), t0.Unix(), body))
}

func lastAttempt(t testing.TB, r *Receiver) Attempt {
	t.Helper()
	as := r.Attempts()
	if len(as) == 0 {
		t.Fatal("no attempt recorded")
	}
	return as[len(as)-1]
}
