package control

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/receiver"
)

// TestWebhookOperations drives the webhook operations against a receiver on 127.0.0.1 and checks
// every answer against control.yaml.
func TestWebhookOperations(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := workspace.NewRegistry(clk, ids.New(3))
	svc := webhook.New(webhook.Config{Clock: clk, IDs: ids.New(9), AllowLoopback: true})
	defer svc.Close()
	h := New(Deps{Clock: clk, Registry: reg, Limiter: ratelimit.New(clk, nil), Token: token,
		DefaultWorkspaceID: func() string { return "" }, Reset: func() {}})
	h.RegisterWebhooks(svc)

	rcv, err := receiver.New(receiver.Config{Secrets: []string{"whsec_" + strings.Repeat("A", 44)}, Now: clk.Now,
		Behavior: receiver.FailFirst(1, http.StatusServiceUnavailable)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	url := ts.URL + "/hooks"
	ep, secret, err := svc.Create(context.Background(), "ws_a", webhook.CreateParams{URL: &url, Events: &[]string{webhook.EventCreditsLow}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rcv.SetSecrets(secret); err != nil {
		t.Fatal(err)
	}

	call := func(method, path string, want int) map[string]any {
		t.Helper()
		path = strings.ReplaceAll(path, "{id}", ep.ID)
		req := httptest.NewRequest(method, BasePath+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		CheckAgainstDocument(t, method, path, "", req.Header, rec)
		if rec.Code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, want)
		}
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	test := call("POST", "/webhooks/{id}/test", http.StatusAccepted)
	did, _ := test["delivery_id"].(string)
	if _, err := rcv.AwaitAttempts(ctx, did, 1); err != nil {
		t.Fatal(err)
	}
	// Wait until the failed first attempt is in the history with its retry scheduled.
	if _, err := svc.AwaitAttempts(ctx, did, 1); err != nil {
		t.Fatal(err)
	}
	hist := call("GET", "/webhooks/{id}/deliveries", http.StatusOK)
	d := hist["deliveries"].([]any)[0].(map[string]any)
	a := d["attempts"].([]any)[0].(map[string]any)
	if d["delivery_id"] != did || d["event_type"] != "webhook.test" || d["status"] != "retrying" || d["next_attempt_at"] == nil ||
		a["status_code"] != float64(503) || a["error"] != "status_503" || a["attempt"] != float64(1) {
		t.Fatalf("history %v", hist)
	}

	// Rotation takes effect for the pending retry.
	rot := call("POST", "/webhooks/{id}/rotate", http.StatusOK)
	newSecret, _ := rot["secret"].(string)
	if newSecret == secret || rcv.SetSecrets(newSecret) != nil {
		t.Fatalf("rotate %v", rot)
	}
	clk.Advance(5 * time.Minute)
	atts, err := rcv.AwaitAttempts(ctx, did, 2)
	if err != nil || !atts[1].Verdict.Accepted() {
		t.Fatalf("retry after rotation: %v %+v", err, atts)
	}

	if st := call("POST", "/webhooks/{id}/disable", http.StatusOK); st["status"] != "disabled" {
		t.Fatalf("disable %v", st)
	}
	if st := call("POST", "/webhooks/{id}/enable", http.StatusOK); st["status"] != "active" || st["consecutive_failures"] != float64(0) {
		t.Fatalf("enable %v", st)
	}
	call("GET", "/webhooks/{id}/deliveries?limit=1&cursor=nope", http.StatusOK)
	// A test event with a message of the test's own (not ASCII), and a refused one.
	for _, c := range []struct {
		body string
		want int
	}{{`{"message":"Grüße ✓ テスト"}`, http.StatusAccepted}, {`{"message":""}`, http.StatusBadRequest}, {`{"text":"x"}`, http.StatusBadRequest}} {
		path := "/webhooks/" + ep.ID + "/test"
		req := httptest.NewRequest("POST", BasePath+path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		CheckAgainstDocument(t, "POST", path, c.body, req.Header, rec)
		if rec.Code != c.want {
			t.Fatalf("POST %s %s: %d %s", path, c.body, rec.Code, rec.Body)
		}
		if c.want == http.StatusAccepted {
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			atts, err := rcv.AwaitAttempts(ctx, m["delivery_id"].(string), 1)
			if err != nil || !strings.Contains(string(atts[0].Body), "Grüße ✓ テスト") {
				t.Fatalf("the test message did not arrive as sent: %v %v", err, atts)
			}
		}
	}
	if err := svc.Delete("ws_a", ep.ID); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"/test", "/rotate", "/enable", "/disable"} {
		call("POST", "/webhooks/{id}"+op, http.StatusNotFound)
	}
	call("GET", "/webhooks/{id}/deliveries", http.StatusNotFound)
}
