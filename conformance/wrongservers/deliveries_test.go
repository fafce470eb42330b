package wrongservers

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/mediaspec/mediaspec/receiver"
)

// TestResignedPayloadVerifies: a wrong server that changes a payload before signing must still
// send a valid signature, or the suite would kill it for the signature and not for the payload.
func TestResignedPayloadVerifies(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	rcv, err := receiver.New(receiver.Config{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	env := &Env{}
	env.remember("http://127.0.0.1:1/hooks/a", secret)

	for _, tc := range []struct {
		name   string
		hooks  Wrap
		verify bool
	}{
		{"unchanged", func(_ *Env, next http.Handler) http.Handler { return next }, true},
		{"changed before signing", payload(func(_, data map[string]any) { delete(data, "disclosure") }), true},
		{"changed after signing", deliveriesVia(false, func(_ *Env, d *delivery) { d.body = append(d.body, ' ') }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "whd_" + strconv.FormatInt(time.Now().UnixNano(), 16)
			body := []byte(`{"id":"` + id + `","type":"credits.low","created_at":"2026-01-01T00:00:00Z","data":{"disclosure":"x","available_credits":1}}`)
			wh, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			sig, err := wh.Sign(id, now, body)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, "/hooks/a", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("webhook-id", id)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
			req.Header.Set("webhook-signature", sig)
			w := httptest.NewRecorder()
			tc.hooks(env, rcv).ServeHTTP(w, req)
			atts := rcv.AttemptsFor(id)
			if len(atts) != 1 {
				t.Fatalf("%d attempts recorded, want 1", len(atts))
			}
			if got := atts[0].Verdict == receiver.VerdictVerified; got != tc.verify {
				t.Errorf("verdict %s (%s), want verified %v", atts[0].Verdict, atts[0].Detail, tc.verify)
			}
		})
	}
}

// TestCaptureRemembersSecrets: the proxy learns each registered endpoint's secret (by receiver
// path) and each issued key's scopes, reading the request before the mock consumes it.
func TestCaptureRemembersSecrets(t *testing.T) {
	mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the mock consumes the body
		w.WriteHeader(http.StatusCreated)
		if strings.HasSuffix(r.URL.Path, "/keys") {
			_, _ = w.Write([]byte(`{"ok":true,"key":"sk_live_r","scopes":["read"]}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true,"secret":"whsec_abc"}`))
	})
	env := &Env{}
	h := capture(env, mock)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v1/webhooks", strings.NewReader(`{"url":"http://127.0.0.1:9/hooks/x","events":["credits.low"]}`)))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/_control/v1/workspaces/ws_1/keys", strings.NewReader(`{"scopes":["read"]}`)))
	if s, ok := env.Secret("/hooks/x"); !ok || s != "whsec_abc" {
		t.Errorf("secret of /hooks/x: %q %v, want whsec_abc", s, ok)
	}
	if !env.readOnly("sk_live_r") {
		t.Error("sk_live_r is not known as a read-only key")
	}
}
