package receiver

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// FuzzCheck feeds the receiver's verification any headers and body: it never panics, and it
// verifies an attempt only when the library's own check of the signature passes.
func FuzzCheck(f *testing.F) {
	hook, err := standardwebhooks.NewWebhook(secretA)
	if err != nil {
		f.Fatal(err)
	}
	body := []byte(`{"id":"whd_1","type":"webhook.test","created_at":"2026-11-21T10:00:00Z","data":{"webhook_id":"wh_1","message":"m"}}`)
	ts := t0.Unix()
	sig, err := hook.Sign("msg_1", t0, body)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("msg_1", strconv.FormatInt(ts, 10), sig, body)
	f.Add("msg_1", strconv.FormatInt(ts, 10), "v1,AAAA v1a,xx", body)
	f.Add("", "", "", []byte(nil))
	f.Add("msg_2", "-1", "v1,", []byte(`{`))
	r, err := New(Config{Secrets: []string{secretA}, Now: func() time.Time { return t0 }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, tsText, sigText string, body []byte) {
		h := http.Header{}
		h.Set(standardwebhooks.HeaderWebhookID, id)
		h.Set(standardwebhooks.HeaderWebhookTimestamp, tsText)
		h.Set(standardwebhooks.HeaderWebhookSignature, sigText)
		a, _ := r.check(h, body, nil, t0, t0)
		if a.Verdict == VerdictVerified && hook.VerifyIgnoringTimestamp(body, h) != nil {
			t.Fatalf("verified an attempt whose signature does not verify: id %q ts %q sig %q", id, tsText, sigText)
		}
	})
}
