package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func mustRequest(t testing.TB, method, target string, body []byte) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, target, bytes.NewReader(body))
}

// A verified delivery is forwarded to a loopback URL with the same body and headers; a refused
// one is not.
func TestReceiveForwardsToLoopback(t *testing.T) {
	type got struct {
		header http.Header
		body   []byte
		path   string
	}
	gotc := make(chan got, 4)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		gotc <- got{req.Header.Clone(), b, req.URL.Path}
		w.WriteHeader(200)
	}))
	defer target.Close()
	r, _ := newTestReceiver(t, func(c *Config) { c.Forward = target.URL + "/app/hooks" })

	serve(r, signedRequest(t, signLib, secretB, "/", whdID(9), t0.Unix(), []byte(`{}`))) // refused, not forwarded
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	req := signedRequest(t, signLib, secretA, "/ep", whdID(1), t0.Unix(), body)
	if res := serve(r, req); res.Code != 204 {
		t.Fatalf("answered %d", res.Code)
	}
	g := <-gotc
	if !bytes.Equal(g.body, body) || g.path != "/app/hooks" {
		t.Fatalf("forward got path %s body %q", g.path, g.body)
	}
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "user-agent"} {
		if g.header.Get(h) != req.Header.Get(h) || g.header.Get(h) == "" {
			t.Errorf("forwarded %s = %q, want %q", h, g.header.Get(h), req.Header.Get(h))
		}
	}
	// Close waits for in-flight forwards; then nothing else reached the target.
	_ = r.Close()
	select {
	case g := <-gotc:
		t.Fatalf("a second forward arrived: %s", g.header.Get("webhook-id"))
	default:
	}
}

func TestReceiveRefusesNonLoopbackForward(t *testing.T) {
	for _, u := range []string{
		"http://example.com/hook", "https://10.0.0.1/hook", "http://192.168.1.2:8080/", "ftp://127.0.0.1/x",
		"http://user:pw@127.0.0.1/x", "http://127.0.0.1.example.com/", "127.0.0.1:9000", "http:///path",
	} {
		if _, err := New(Config{Secrets: []string{secretA}, Forward: u}); !errors.Is(err, ErrBadForward) {
			t.Errorf("forward %q: %v, want ErrBadForward", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:3000/webhooks", "http://localhost:8080/", "https://[::1]:443/x", "http://127.1.2.3/"} {
		if _, err := New(Config{Secrets: []string{secretA}, Forward: u}); err != nil {
			t.Errorf("forward %q refused: %v", u, err)
		}
	}
}

func getJSON(t *testing.T, h http.Handler, method, target string, v any) int {
	t.Helper()
	res := serve(h, mustRequest(t, method, target, nil))
	if ct := res.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content-type %q", method, target, ct)
	}
	if err := json.Unmarshal(res.Body.Bytes(), v); err != nil {
		t.Fatalf("%s %s: %v in %q", method, target, err, res.Body.String())
	}
	return res.Code
}

func TestReceiveListingAPI(t *testing.T) {
	r, _ := newTestReceiver(t, nil)
	deliver(t, r, "/a", 1, t0.Add(time.Second))
	deliver(t, r, "/b", 2, t0)
	deliver(t, r, "/b", 2, t0) // duplicate
	batch := envelopeBody(whdID(3), "batch.settled", t0, map[string]any{"batch_group_id": "bg_1", "status": "completed"})
	serve(r, signedRequest(t, signHMAC, secretA, "/a", whdID(3), t0.Unix(), batch))
	serve(r, signedRequest(t, signHMAC, secretB, "/a", whdID(4), t0.Unix(), batch)) // bad signature

	var atts struct {
		OK       bool             `json:"ok"`
		Attempts []map[string]any `json:"attempts"`
	}
	if code := getJSON(t, r, "GET", "/_receiver/attempts", &atts); code != 200 || !atts.OK || len(atts.Attempts) != 5 {
		t.Fatalf("attempts: %d %+v", code, atts)
	}
	first := atts.Attempts[0]
	if first["verdict"] != "verified" || first["path"] != "/a" || first["delivery_id"] != whdID(1) || first["status"] != float64(204) ||
		!strings.Contains(first["body"].(string), genID(1)) || first["resource_id"] != genID(1) {
		t.Fatalf("first attempt %+v", first)
	}
	hdr, _ := first["headers"].(map[string]any)
	if sig, _ := hdr["Webhook-Signature"].([]any); len(sig) != 1 || !strings.HasPrefix(sig[0].(string), "v1,") {
		t.Fatalf("signature header not kept: %+v", hdr)
	}
	getJSON(t, r, "GET", "/_receiver/attempts?delivery_id="+whdID(2), &atts)
	if len(atts.Attempts) != 2 || atts.Attempts[1]["verdict"] != "duplicate" {
		t.Fatalf("attempts of one delivery: %+v", atts.Attempts)
	}
	getJSON(t, r, "GET", "/_receiver/attempts?verdict=bad_signature&path=/a", &atts)
	if len(atts.Attempts) != 1 || atts.Attempts[0]["delivery_id"] != whdID(4) {
		t.Fatalf("refused attempts: %+v", atts.Attempts)
	}

	var evs struct {
		OK     bool             `json:"ok"`
		Events []map[string]any `json:"events"`
	}
	getJSON(t, r, "GET", "/_receiver/events", &evs)
	if len(evs.Events) != 3 || evs.Events[2]["id"] != whdID(1) {
		t.Fatalf("events not in created_at order: %+v", evs.Events)
	}
	getJSON(t, r, "GET", "/_receiver/events?type=batch.settled&resource_id=bg_1", &evs)
	if len(evs.Events) != 1 || evs.Events[0]["resource_id"] != "bg_1" || evs.Events[0]["path"] != "/a" {
		t.Fatalf("filtered events: %+v", evs.Events)
	}
	data, _ := evs.Events[0]["data"].(map[string]any)
	if data["status"] != "completed" {
		t.Fatalf("event data %+v", evs.Events[0])
	}

	var one struct {
		OK    bool           `json:"ok"`
		Event map[string]any `json:"event"`
		Error string         `json:"error"`
	}
	code := getJSON(t, r, "GET", "/_receiver/events/await?resource_id="+genID(2)+"&timeout=5s", &one)
	if code != 200 || one.Event["id"] != whdID(2) {
		t.Fatalf("await: %d %+v", code, one)
	}
	if code := getJSON(t, r, "GET", "/_receiver/events/await?type=credits.low&timeout=1ms", &one); code != 504 || one.OK || one.Error == "" {
		t.Fatalf("await with no match: %d %+v", code, one)
	}
	if code := getJSON(t, r, "GET", "/_receiver/events/await?timeout=forever", &one); code != 400 {
		t.Fatalf("await with a bad timeout: %d", code)
	}

	var ok struct {
		OK bool `json:"ok"`
	}
	if code := getJSON(t, r, "GET", "/_receiver/reset", &ok); code != 405 {
		t.Fatalf("GET reset: %d", code)
	}
	if code := getJSON(t, r, "POST", "/_receiver/reset", &ok); code != 200 || !ok.OK || len(r.Attempts()) != 0 || len(r.Events()) != 0 {
		t.Fatalf("reset: %d, %d attempts left", code, len(r.Attempts()))
	}
	if code := getJSON(t, r, "GET", "/_receiver/nope", &ok); code != 404 {
		t.Fatalf("unknown route: %d", code)
	}
	// A POST under the reserved prefix is never a delivery.
	serve(r, signedRequest(t, signLib, secretA, "/_receiver/attempts", whdID(5), t0.Unix(), envelopeBody(whdID(5), "x", t0, map[string]any{})))
	if len(r.Attempts()) != 0 {
		t.Fatal("a POST under /_receiver/ was recorded as a delivery")
	}
}

// A body that is not UTF-8 is listed as body_base64.
func TestReceiveAttemptJSONBinaryBody(t *testing.T) {
	a := Attempt{Body: []byte{0xff, 0xfe}, Verdict: VerdictBadBody}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["body_base64"] != "//4=" || m["body"] != nil || m["answered_at"] != nil {
		t.Fatalf("%s", b)
	}
}
