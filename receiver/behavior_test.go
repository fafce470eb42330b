package receiver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// startServer serves r on 127.0.0.1:0 and returns its URL and a channel of settled attempts.
func startServer(t *testing.T, b Behavior) (string, *Receiver, <-chan Attempt) {
	t.Helper()
	settled := make(chan Attempt, 16)
	r, _ := newTestReceiver(t, func(c *Config) {
		c.Behavior = b
		c.OnAttempt = func(a Attempt) { settled <- a }
	})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = r.Close() }) // runs before srv.Close: releases held requests
	return srv.URL, r, settled
}

// noRedirects is a client that, like the service's dispatcher, never follows redirects.
func noRedirects(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// post sends a signed delivery n (attempt timestamp t0) to base+path.
func post(t *testing.T, c *http.Client, base, path string, n int) (*http.Response, error) {
	t.Helper()
	body := envelopeBody(whdID(n), "generation.completed", t0, genData(genID(n)))
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", whdID(n))
	req.Header.Set("webhook-timestamp", strconv.FormatInt(t0.Unix(), 10))
	req.Header.Set("webhook-signature", signLib(t, secretA, whdID(n), t0.Unix(), body))
	res, err := c.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
	}
	return res, err
}

func TestReceiveFailFirst(t *testing.T) {
	base, r, _ := startServer(t, FailFirst(2, 500))
	c := noRedirects(10 * time.Second)
	var codes []int
	for range 3 {
		res, err := post(t, c, base, "/ep", 1)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, res.StatusCode)
	}
	if codes[0] != 500 || codes[1] != 500 || codes[2] != 204 {
		t.Fatalf("answers %v, want 500 500 204", codes)
	}
	if res, _ := post(t, c, base, "/ep", 2); res.StatusCode != 500 {
		t.Fatalf("a new delivery id starts failing again: %d", res.StatusCode)
	}
	if len(r.Events()) != 2 {
		t.Fatalf("%d events, want 2 (a failed answer still records the verified event)", len(r.Events()))
	}
}

func TestReceiveRedirectFirst(t *testing.T) {
	for _, status := range []int{301, 302, 307, 308} {
		base, r, _ := startServer(t, RedirectFirst(1, status, "/elsewhere"))
		c := noRedirects(10 * time.Second)
		res, err := post(t, c, base, "/ep", 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != status || res.Header.Get("Location") != "/elsewhere" {
			t.Errorf("%d: answered %d Location %q", status, res.StatusCode, res.Header.Get("Location"))
		}
		if res, _ := post(t, c, base, "/ep", 1); res.StatusCode != 204 || res.Header.Get("Location") != "" {
			t.Errorf("%d: second attempt answered %d Location %q", status, res.StatusCode, res.Header.Get("Location"))
		}
		if a := r.Attempts()[0]; a.Status != status {
			t.Errorf("%d: recorded status %d", status, a.Status)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("RedirectFirst(1, 200, ...) did not panic")
		}
	}()
	RedirectFirst(1, 200, "/x")
}

// A held attempt is never answered when the client gives up first; a short hold is answered late.
func TestReceiveTimeoutFirst(t *testing.T) {
	base, r, settled := startServer(t, TimeoutFirst(1, time.Hour))
	_, err := post(t, noRedirects(200*time.Millisecond), base, "/ep", 1)
	var ne interface{ Timeout() bool }
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("client did not time out: %v", err)
	}
	a := <-settled // the handler notices the closed connection and settles the attempt
	if !a.Abandoned || a.Status != 0 || !a.Settled() || a.Verdict != VerdictVerified {
		t.Fatalf("held attempt %+v", a)
	}
	if len(r.Events()) != 1 {
		t.Fatal("the verified event of a held attempt was not recorded")
	}
	res, err := post(t, noRedirects(10*time.Second), base, "/ep", 1)
	if err != nil || res.StatusCode != 204 {
		t.Fatalf("second attempt: %v %v", res, err)
	}
	if a := <-settled; a.Number != 2 || a.Verdict != VerdictDuplicate || a.Status != 204 {
		t.Fatalf("second attempt %+v", a)
	}

	base, _, settled = startServer(t, TimeoutFirst(1, 20*time.Millisecond))
	res, err = post(t, noRedirects(10*time.Second), base, "/ep", 1)
	if err != nil || res.StatusCode != 204 {
		t.Fatalf("short hold: %v %v", res, err)
	}
	if a := <-settled; a.Abandoned || a.Status != 204 {
		t.Fatalf("short hold attempt %+v", a)
	}
}

// Release ends a long hold early, and the held attempt is answered then.
func TestReceiveHoldReleased(t *testing.T) {
	release := make(chan struct{})
	base, r, settled := startServer(t, func(Attempt) Response {
		return Response{Status: 200, Hold: time.Hour, Release: release}
	})
	type answer struct {
		res *http.Response
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := post(t, noRedirects(time.Minute), base, "/ep", 1)
		got <- answer{res, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.AwaitArrivals(ctx, whdID(1), 1); err != nil { // held: it arrived, unanswered
		t.Fatal(err)
	}
	close(release)
	if a := <-got; a.err != nil || a.res.StatusCode != 200 {
		t.Fatalf("released hold: %v %v", a.res, a.err)
	}
	if a := <-settled; a.Abandoned || a.Status != 200 {
		t.Fatalf("released attempt %+v", a)
	}
}

// Close releases held requests without an answer.
func TestReceiveCloseReleasesHolds(t *testing.T) {
	base, r, settled := startServer(t, TimeoutFirst(1, time.Hour))
	errc := make(chan error, 1)
	go func() {
		_, err := post(t, noRedirects(time.Minute), base, "/ep", 1)
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.AwaitArrivals(ctx, whdID(1), 1); err != nil { // held: it arrived, unanswered
		t.Fatal(err)
	}
	_ = r.Close()
	if a := <-settled; !a.Abandoned {
		t.Fatalf("attempt after Close %+v", a)
	}
	if err := <-errc; err == nil {
		t.Fatal("a hold released by Close gave the client an answer")
	}
}

func TestReceiveDropFirst(t *testing.T) {
	base, _, settled := startServer(t, DropFirst(1))
	if _, err := post(t, noRedirects(10*time.Second), base, "/ep", 1); err == nil {
		t.Fatal("a dropped connection gave the client an answer")
	}
	if a := <-settled; !a.Dropped || a.Status != 0 {
		t.Fatalf("dropped attempt %+v", a)
	}
	if res, err := post(t, noRedirects(10*time.Second), base, "/ep", 1); err != nil || res.StatusCode != 204 {
		t.Fatalf("second attempt: %v %v", res, err)
	}
}

// ForPath misbehaves on one endpoint only; Chain combines per-path policies; SetBehavior swaps.
func TestReceiveForPathAndChain(t *testing.T) {
	b := Chain(ForPath("/a", FailFirst(5, 503)), ForPath("/b", Always(410)))
	base, r, _ := startServer(t, b)
	c := noRedirects(10 * time.Second)
	got := map[string]int{}
	for i, p := range []string{"/a", "/b", "/c"} {
		res, err := post(t, c, base, p, i+1)
		if err != nil {
			t.Fatal(err)
		}
		got[p] = res.StatusCode
	}
	if got["/a"] != 503 || got["/b"] != 410 || got["/c"] != 204 {
		t.Fatalf("answers %v", got)
	}
	r.SetBehavior(nil)
	if res, _ := post(t, c, base, "/a", 9); res.StatusCode != 204 {
		t.Fatalf("after SetBehavior(nil): %d", res.StatusCode)
	}
	for _, a := range r.Attempts() {
		if a.Path == "" {
			t.Fatal("attempt without path")
		}
	}
}

// Behavior can answer a refused attempt differently from the default 400.
func TestReceiveBehaviorSeesVerdict(t *testing.T) {
	b := func(a Attempt) Response {
		if a.Verdict == VerdictBadSignature {
			return Response{Status: 401}
		}
		return Response{}
	}
	r, _ := newTestReceiver(t, func(c *Config) { c.Behavior = b })
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	if res := serve(r, signedRequest(t, signLib, secretB, "/", whdID(1), t0.Unix(), body)); res.Code != 401 {
		t.Fatalf("answered %d", res.Code)
	}
}

// AnswerWith answers with the body and type given; a 204 stays empty.
func TestReceiveAnswerWithBody(t *testing.T) {
	for _, c := range []struct {
		status   int
		body, ct string
		wantBody string
		wantCT   string
	}{
		{200, "<html>not json</html>", "text/html", "<html>not json</html>", "text/html"},
		{202, `{"ok":false,"retry":true}`, "application/json", `{"ok":false,"retry":true}`, "application/json"},
		{200, "plain", "", "plain", "text/plain; charset=utf-8"},
		{204, "ignored", "", "", ""},
	} {
		r, _ := newTestReceiver(t, func(cfg *Config) { cfg.Behavior = AnswerWith(c.status, c.body, c.ct) })
		body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
		res := serve(r, signedRequest(t, signLib, secretA, "/ep", whdID(1), t0.Unix(), body)).Result()
		got, _ := io.ReadAll(res.Body)
		if res.StatusCode != c.status || string(got) != c.wantBody || res.Header.Get("Content-Type") != c.wantCT {
			t.Errorf("AnswerWith(%d, %q, %q): %d %q %q", c.status, c.body, c.ct, res.StatusCode, got, res.Header.Get("Content-Type"))
		}
	}
}
