package receiver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/mediaspec/mediaspec/receiver"
)

// A receiver verifies each delivery's signature on the raw body before it parses anything, and
// lets Go code wait for an event instead of polling.
func ExampleNew() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	r, err := receiver.New(receiver.Config{Secrets: []string{secret}, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()

	body := `{"id":"evt_1","type":"generation.completed","created_at":"2026-01-05T09:00:00Z","data":{"generation_id":"gen_1"}}`
	wh, _ := standardwebhooks.NewWebhook(secret)
	sig, _ := wh.Sign("evt_1", now, []byte(body))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks", strings.NewReader(body))
	req.Header.Set("webhook-id", "evt_1")
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	ev, err := r.Await(context.Background(), receiver.Match{Type: "generation.completed"})
	fmt.Println(resp.StatusCode, err, ev.Path)
	// Output: 204 <nil> /hooks
}
