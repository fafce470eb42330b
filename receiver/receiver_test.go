package receiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Both signers (the library and an independent HMAC) produce deliveries the receiver verifies,
// and every kind of tampering is caught for both.
func TestReceiveVerdictsForBothSigners(t *testing.T) {
	for name, sign := range signers {
		t.Run(name, func(t *testing.T) {
			body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
			ts := t0.Unix()
			// signed is a delivery of body signed with secret at Unix time at.
			signed := func(secret string, at int64) func() *http.Request {
				return func() *http.Request { return signedRequest(t, sign, secret, "/hook", whdID(1), at, body) }
			}
			cases := []struct {
				name   string
				req    func() *http.Request
				now    time.Time
				want   Verdict
				status int
			}{
				{"valid", signed(secretA, ts), t0, VerdictVerified, 204},
				{"flipped body byte", func() *http.Request {
					req := signedRequest(t, sign, secretA, "/hook", whdID(1), ts, body)
					flipped := bytes.Clone(body)
					flipped[len(flipped)/2] ^= 0x01
					return withBody(req, flipped)
				}, t0, VerdictBadSignature, 400},
				{"wrong secret", signed(secretB, ts), t0, VerdictBadSignature, 400},
				{"timestamp 300 s old passes", signed(secretA, ts-300), t0, VerdictVerified, 204},
				{"timestamp 301 s old", signed(secretA, ts-301), t0, VerdictStaleTimestamp, 400},
				{"timestamp 300 s ahead passes", signed(secretA, ts+300), t0, VerdictVerified, 204},
				{"timestamp 301 s ahead", signed(secretA, ts+301), t0, VerdictFutureTimestamp, 400},
				{"clock moved 301 s on", signed(secretA, ts), t0.Add(301 * time.Second), VerdictStaleTimestamp, 400},
				{"timestamp re-signed but header changed", func() *http.Request {
					req := signedRequest(t, sign, secretA, "/hook", whdID(1), ts, body)
					req.Header.Set("webhook-timestamp", fmt.Sprint(ts+1))
					return req
				}, t0, VerdictBadSignature, 400},
				{"id mismatch", func() *http.Request {
					return signedRequest(t, sign, secretA, "/hook", whdID(2), ts, body)
				}, t0, VerdictIDMismatch, 400},
			}
			for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
				cases = append(cases, struct {
					name   string
					req    func() *http.Request
					now    time.Time
					want   Verdict
					status int
				}{"missing " + h, func() *http.Request {
					req := signedRequest(t, sign, secretA, "/hook", whdID(1), ts, body)
					req.Header.Del(h)
					return req
				}, t0, VerdictMissingHeaders, 400})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					r, clk := newTestReceiver(t, nil)
					clk.Set(c.now)
					res := serve(r, c.req())
					a := lastAttempt(t, r)
					if a.Verdict != c.want || res.Code != c.status || a.Status != c.status {
						t.Fatalf("verdict %s (%s), answered %d recorded %d; want %s and %d", a.Verdict, a.Detail, res.Code, a.Status, c.want, c.status)
					}
					wantEvents := 0
					if c.want == VerdictVerified {
						wantEvents = 1
						if res.Body.Len() != 0 {
							t.Errorf("2XX answer has a body %q", res.Body.String())
						}
					}
					if n := len(r.Events()); n != wantEvents {
						t.Errorf("%d events, want %d", n, wantEvents)
					}
				})
			}
		})
	}
}

func withBody(req *http.Request, body []byte) *http.Request {
	r2 := req.Clone(req.Context())
	r2.Body = ioNopCloser(body)
	r2.ContentLength = int64(len(body))
	return r2
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func ioNopCloser(b []byte) nopCloser { return nopCloser{bytes.NewReader(b)} }

// A header with several signatures passes when any v1 entry matches; other versions are ignored.
func TestReceiveSeveralSignatures(t *testing.T) {
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	good := signHMAC(t, secretA, whdID(1), t0.Unix(), body)
	wrong := signHMAC(t, secretB, whdID(1), t0.Unix(), body)
	cases := map[string]Verdict{
		wrong + " " + good: VerdictVerified,
		"v1,bm90LWEtc2lnbmF0dXJl " + wrong + "  " + good: VerdictVerified,
		wrong:                                   VerdictBadSignature,
		"v2," + strings.TrimPrefix(good, "v1,"): VerdictBadSignature,
		"v1a," + strings.TrimPrefix(good, "v1,") + " junk": VerdictBadSignature,
	}
	for header, want := range cases {
		r, _ := newTestReceiver(t, nil)
		req := signedRequest(t, signHMAC, secretA, "/", whdID(1), t0.Unix(), body)
		req.Header.Set("webhook-signature", header)
		serve(r, req)
		if a := lastAttempt(t, r); a.Verdict != want {
			t.Errorf("signature header %q: verdict %s, want %s", header, a.Verdict, want)
		}
	}
}

func TestReceiveRefusesBadSecrets(t *testing.T) {
	cases := map[string]struct {
		secrets []string
		want    error
	}{
		"none":            {nil, ErrNoSecret},
		"empty":           {[]string{""}, ErrNoSecret},
		"prefix only":     {[]string{"whsec_"}, ErrNoSecret},
		"no prefix":       {[]string{strings.TrimPrefix(secretA, "whsec_")}, ErrBadSecret},
		"not base64":      {[]string{"whsec_not*base64!!"}, ErrBadSecret},
		"short key":       {[]string{"whsec_c2hvcnQ="}, ErrBadSecret},
		"one bad of two":  {[]string{secretA, ""}, ErrNoSecret},
		"unpadded base64": {[]string{strings.TrimRight(makeSecret(1)[:len(makeSecret(1))-1], "=")}, ErrBadSecret},
	}
	for name, c := range cases {
		_, err := New(Config{Secrets: c.secrets})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: New error %v, want %v", name, err, c.want)
		}
	}
	r, _ := newTestReceiver(t, nil)
	if err := r.SetSecrets(""); !errors.Is(err, ErrNoSecret) {
		t.Errorf("SetSecrets(\"\") = %v, want ErrNoSecret", err)
	}
	if _, err := New(Config{Secrets: []string{secretA}, Tolerance: -time.Second}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("negative tolerance: %v", err)
	}
}

// After a rotation the receiver accepts exactly the secrets it was given.
func TestReceiveSecretRotation(t *testing.T) {
	r, _ := newTestReceiver(t, nil)
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	byB := func() Verdict {
		r.Reset()
		serve(r, signedRequest(t, signLib, secretB, "/", whdID(1), t0.Unix(), body))
		return lastAttempt(t, r).Verdict
	}
	byA := func() Verdict {
		r.Reset()
		serve(r, signedRequest(t, signLib, secretA, "/", whdID(1), t0.Unix(), body))
		return lastAttempt(t, r).Verdict
	}
	if v := byB(); v != VerdictBadSignature {
		t.Fatalf("secret B before rotation: %s", v)
	}
	if err := r.SetSecrets(secretA, secretB); err != nil {
		t.Fatal(err)
	}
	if a, b := byA(), byB(); a != VerdictVerified || b != VerdictVerified {
		t.Fatalf("during rotation: A %s, B %s", a, b)
	}
	if err := r.SetSecrets(secretB); err != nil {
		t.Fatal(err)
	}
	if a, b := byA(), byB(); a != VerdictBadSignature || b != VerdictVerified {
		t.Fatalf("after rotation: A %s, B %s", a, b)
	}
}

func TestReceiveBadBodies(t *testing.T) {
	cases := map[string][]byte{
		"not json":           []byte("hello"),
		"no type":            []byte(`{"id":"` + whdID(1) + `","created_at":"2026-11-21T10:00:00Z","data":{}}`),
		"no id":              []byte(`{"type":"x","created_at":"2026-11-21T10:00:00Z","data":{}}`),
		"bad created_at":     []byte(`{"id":"` + whdID(1) + `","type":"x","created_at":"yesterday","data":{}}`),
		"data not an object": []byte(`{"id":"` + whdID(1) + `","type":"x","created_at":"2026-11-21T10:00:00Z","data":[1]}`),
		"trailing data":      []byte(`{"id":"` + whdID(1) + `","type":"x","created_at":"2026-11-21T10:00:00Z","data":{}} {}`),
	}
	for name, body := range cases {
		r, _ := newTestReceiver(t, nil)
		res := serve(r, signedRequest(t, signLib, secretA, "/", whdID(1), t0.Unix(), body))
		if a := lastAttempt(t, r); a.Verdict != VerdictBadBody || res.Code != 400 {
			t.Errorf("%s: verdict %s answered %d", name, a.Verdict, res.Code)
		}
	}
	// The signature is checked before the body is parsed: unparsable bytes with a wrong signature
	// are a bad signature, not a bad body.
	r, _ := newTestReceiver(t, nil)
	serve(r, signedRequest(t, signLib, secretB, "/", whdID(1), t0.Unix(), []byte("hello")))
	if a := lastAttempt(t, r); a.Verdict != VerdictBadSignature {
		t.Errorf("unsigned garbage: %s", a.Verdict)
	}
	r, _ = newTestReceiver(t, func(c *Config) { c.MaxBody = 64 })
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	serve(r, signedRequest(t, signLib, secretA, "/", whdID(1), t0.Unix(), body))
	if a := lastAttempt(t, r); a.Verdict != VerdictBadBody || !strings.Contains(a.Detail, "over 64 bytes") {
		t.Errorf("body over MaxBody: %s %q", a.Verdict, a.Detail)
	}
}

// A repeat of a verified delivery id is answered 2XX and does not make a second event.
func TestReceiveDedupesOnWebhookID(t *testing.T) {
	r, clk := newTestReceiver(t, nil)
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	first := serve(r, signedRequest(t, signLib, secretA, "/", whdID(1), t0.Unix(), body))
	clk.Set(t0.Add(5 * time.Minute))
	second := serve(r, signedRequest(t, signHMAC, secretA, "/", whdID(1), t0.Add(5*time.Minute).Unix(), body))
	if first.Code != 204 || second.Code/100 != 2 {
		t.Fatalf("answers %d and %d, want 2XX both", first.Code, second.Code)
	}
	as := r.Attempts()
	if len(as) != 2 || as[0].Verdict != VerdictVerified || as[1].Verdict != VerdictDuplicate || as[1].Number != 2 {
		t.Fatalf("attempts %+v", as)
	}
	if evs := r.Events(); len(evs) != 1 || evs[0].ID != whdID(1) || evs[0].Seq != as[0].Seq {
		t.Fatalf("events %+v, want the first attempt's only", evs)
	}
	// A refused attempt of an unseen id does not make the next valid one a duplicate.
	bad := signedRequest(t, signLib, secretB, "/", whdID(2), clk.Now().Unix(), envelopeBody(whdID(2), "x", t0, map[string]any{}))
	serve(r, bad)
	serve(r, signedRequest(t, signLib, secretA, "/", whdID(2), clk.Now().Unix(), envelopeBody(whdID(2), "x", t0, map[string]any{})))
	if a := lastAttempt(t, r); a.Verdict != VerdictVerified || a.Number != 2 {
		t.Fatalf("after a refused attempt: %s number %d", a.Verdict, a.Number)
	}
}

// Events are ordered by envelope created_at, then arrival, whatever the arrival order.
func TestReceiveOrdersByCreatedAt(t *testing.T) {
	r, _ := newTestReceiver(t, nil)
	created := map[int]time.Time{
		1: t0.Add(-3 * time.Minute), 2: t0.Add(-1 * time.Minute), 3: t0.Add(-2 * time.Minute), 4: t0.Add(-2 * time.Minute),
	}
	for _, n := range []int{2, 4, 1, 3} {
		if res := deliver(t, r, "/", n, created[n]); res.Code != 204 {
			t.Fatalf("delivery %d answered %d", n, res.Code)
		}
	}
	var got []string
	for _, e := range r.Events() {
		got = append(got, e.ID)
	}
	want := []string{whdID(1), whdID(4), whdID(3), whdID(2)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", got, want)
	}
	var arrival []string
	for _, a := range r.Attempts() {
		arrival = append(arrival, a.DeliveryID)
	}
	if strings.Join(arrival, ",") != strings.Join([]string{whdID(2), whdID(4), whdID(1), whdID(3)}, ",") {
		t.Fatalf("attempts not in arrival order: %v", arrival)
	}
}

func TestReceiveResourceID(t *testing.T) {
	cases := []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"generation_id": "gen_1", "batch_group_id": "bg_1", "workflow_run_id": "wfr_1"}, "gen_1"},
		{map[string]any{"batch_group_id": "bg_1", "generations": []any{map[string]any{"generation_id": "gen_2"}}}, "bg_1"},
		{map[string]any{"workflow_run_id": "wfr_1", "workflow_id": "wf_1"}, "wfr_1"},
		{map[string]any{"webhook_id": "wh_1", "message": "hi"}, "wh_1"},
		{map[string]any{"generation_id": nil, "batch_group_id": "bg_9"}, "bg_9"},
		{map[string]any{"available_credits": 3, "threshold_credits": 100}, ""},
	}
	for _, c := range cases {
		e := Event{Data: []byte(envelopeData(c.data))}
		if got := e.ResourceID(); got != c.want {
			t.Errorf("ResourceID of %v = %q, want %q", c.data, got, c.want)
		}
	}
}

func envelopeData(d map[string]any) string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Await returns an event received earlier at once and one delivered later from another goroutine.
func TestReceiveAwait(t *testing.T) {
	r, _ := newTestReceiver(t, nil)
	deliver(t, r, "/", 1, t0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := r.Await(ctx, Match{Type: "generation.completed", ResourceID: genID(1)})
	if err != nil || ev.ID != whdID(1) || ev.Path != "/" {
		t.Fatalf("already received: %+v %v", ev, err)
	}

	got := make(chan Event, 1)
	errc := make(chan error, 1)
	waiting := make(chan struct{})
	go func() {
		close(waiting)
		ev, err := r.Await(ctx, Match{ResourceID: genID(2), Path: "/later"})
		if err != nil {
			errc <- err
			return
		}
		got <- ev
	}()
	<-waiting
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		deliver(t, r, "/other", 3, t0) // does not match
		deliver(t, r, "/later", 2, t0)
	}()
	select {
	case ev := <-got:
		if ev.ID != whdID(2) || ev.ResourceID() != genID(2) || ev.Path != "/later" {
			t.Fatalf("awaited %+v", ev)
		}
	case err := <-errc:
		t.Fatal(err)
	}
	wg.Wait()

	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if _, err := r.Await(short, Match{Type: "batch.settled"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Await on an ended context: %v", err)
	}
	if n := len(r.Find(Match{Where: func(e Event) bool { return e.Path != "/" }})); n != 2 {
		t.Fatalf("Find with a predicate: %d events, want 2", n)
	}
}

// Each attempt reads the clock once when it arrives (Window: its arrival time and the span its
// timestamp is judged against) and once when its answer is settled (Now), refused or not.
func TestReceiveReadsTheClockOncePerArrival(t *testing.T) {
	var windows, nows atomic.Int32
	arrived := t0.Add(time.Minute)
	r, _ := newTestReceiver(t, func(cfg *Config) {
		cfg.Window = func() (time.Time, time.Time, time.Time) {
			windows.Add(1)
			return arrived, t0, t0.Add(time.Hour)
		}
		now := cfg.Now
		cfg.Now = func() time.Time { nows.Add(1); return now() }
	})
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	serve(r, signedRequest(t, signLib, secretA, "/hook", whdID(1), t0.Unix(), body))
	if a := lastAttempt(t, r); a.Verdict != VerdictVerified || !a.Time.Equal(arrived) || windows.Load() != 1 || nows.Load() != 1 {
		t.Fatalf("verified attempt %s at %s: %d window readings, %d clock readings; want 1 and 1, at %s",
			a.Verdict, a.Time, windows.Load(), nows.Load(), arrived)
	}
	serve(r, signedRequest(t, signLib, secretB, "/hook", whdID(2), t0.Unix(), body))
	if a := lastAttempt(t, r); a.Verdict != VerdictBadSignature || !a.Time.Equal(arrived) || windows.Load() != 2 || nows.Load() != 2 {
		t.Fatalf("refused attempt %s at %s: %d window readings, %d clock readings; want 2 and 2", a.Verdict, a.Time, windows.Load(), nows.Load())
	}
}

func TestReceiveAwaitAttempts(t *testing.T) {
	r, clk := newTestReceiver(t, func(c *Config) { c.Behavior = FailFirst(2, 503) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan []Attempt, 1)
	errc := make(chan error, 1)
	go func() {
		as, err := r.AwaitAttempts(ctx, whdID(7), 3)
		if err != nil {
			errc <- err
			return
		}
		done <- as
	}()
	body := envelopeBody(whdID(7), "generation.completed", t0, genData(genID(7)))
	for i := range 3 {
		ts := t0.Add(time.Duration(i) * time.Minute)
		clk.Set(ts)
		serve(r, signedRequest(t, signLib, secretA, "/", whdID(7), ts.Unix(), body))
	}
	select {
	case as := <-done:
		if len(as) != 3 {
			t.Fatalf("%d attempts", len(as))
		}
		wantStatus := []int{503, 503, 204}
		wantVerdict := []Verdict{VerdictVerified, VerdictDuplicate, VerdictDuplicate}
		for i, a := range as {
			if a.Number != i+1 || a.Status != wantStatus[i] || a.Verdict != wantVerdict[i] {
				t.Errorf("attempt %d: number %d status %d verdict %s", i+1, a.Number, a.Status, a.Verdict)
			}
		}
	case err := <-errc:
		t.Fatal(err)
	}
	ended, stop := context.WithCancel(context.Background())
	stop()
	as, err := r.AwaitAttempts(ended, whdID(7), 4)
	if !errors.Is(err, context.Canceled) || len(as) != 3 {
		t.Fatalf("waiting for a 4th: %d attempts, %v", len(as), err)
	}
}

// AwaitAttempts sees an attempt only once its answer is settled: while a Behavior still decides
// the answer, the attempt is recorded (AwaitArrivals sees it) but AwaitAttempts neither counts
// nor returns it; once answered, it returns it with its status.
func TestReceiveAwaitAttemptsSeesOnlyAnsweredAttempts(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	r, _ := newTestReceiver(t, func(c *Config) {
		c.Behavior = func(Attempt) Response {
			close(entered)
			<-release
			return Response{Status: http.StatusAccepted}
		}
	})
	served := make(chan *httptest.ResponseRecorder, 1)
	go func() { served <- deliver(t, r, "/", 1, t0) }()
	<-entered // recorded, not answered

	ended, stop := context.WithCancel(context.Background())
	stop()
	if as, err := r.AwaitAttempts(ended, whdID(1), 1); !errors.Is(err, context.Canceled) || len(as) != 0 {
		t.Fatalf("before the answer: AwaitAttempts gave %+v, %v; want nothing and the context's end", as, err)
	}
	if as, err := r.AwaitArrivals(ended, whdID(1), 1); err != nil || len(as) != 1 || as[0].Settled() {
		t.Fatalf("before the answer: AwaitArrivals gave %+v, %v; want the unanswered attempt", as, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan []Attempt, 1)
	errc := make(chan error, 1)
	go func() {
		as, err := r.AwaitAttempts(ctx, whdID(1), 1)
		errc <- err
		got <- as
	}()
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if as := <-got; len(as) != 1 || as[0].Status != http.StatusAccepted || !as[0].Settled() {
		t.Fatalf("after the answer: %+v", as)
	}
	if w := <-served; w.Code != http.StatusAccepted {
		t.Fatalf("answered %d", w.Code)
	}
}

func TestReceiveBoundsRecords(t *testing.T) {
	r, _ := newTestReceiver(t, func(c *Config) { c.MaxRecords = 3 })
	for n := 1; n <= 5; n++ {
		deliver(t, r, "/", n, t0.Add(time.Duration(n)*time.Second))
	}
	as, evs := r.Attempts(), r.Events()
	if len(as) != 3 || as[0].DeliveryID != whdID(3) || len(evs) != 3 || evs[0].ID != whdID(3) {
		t.Fatalf("kept %d attempts (first %s) and %d events", len(as), as[0].DeliveryID, len(evs))
	}
	r.Reset()
	if len(r.Attempts()) != 0 || len(r.Events()) != 0 {
		t.Fatal("Reset kept records")
	}
	if res := deliver(t, r, "/", 5, t0); res.Code != 204 || lastAttempt(t, r).Verdict != VerdictVerified {
		t.Fatal("after Reset a known id is not verified anew")
	}
}

func TestReceiveOnlyPostIsADelivery(t *testing.T) {
	r, _ := newTestReceiver(t, nil)
	res := serve(r, mustRequest(t, http.MethodGet, "/hook", nil))
	if res.Code != http.StatusMethodNotAllowed || len(r.Attempts()) != 0 {
		t.Fatalf("GET answered %d and recorded %d attempts", res.Code, len(r.Attempts()))
	}
}

// With a Window, a timestamp passes within Tolerance of any time in the span and is refused one
// second beyond either end, with the verdict naming the side.
func TestReceiveTimestampWindow(t *testing.T) {
	body := envelopeBody(whdID(1), "generation.completed", t0, genData(genID(1)))
	earliest, latest := t0, t0.Add(2*time.Hour)
	for _, c := range []struct {
		name string
		ts   time.Time
		want Verdict
	}{
		{"300 s before the earliest", earliest.Add(-300 * time.Second), VerdictVerified},
		{"301 s before the earliest", earliest.Add(-301 * time.Second), VerdictStaleTimestamp},
		{"inside the span", earliest.Add(time.Hour), VerdictVerified},
		{"300 s after the latest", latest.Add(300 * time.Second), VerdictVerified},
		{"301 s after the latest", latest.Add(301 * time.Second), VerdictFutureTimestamp},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := newTestReceiver(t, func(cfg *Config) {
				cfg.Window = func() (time.Time, time.Time, time.Time) { return latest, earliest, latest }
			})
			serve(r, signedRequest(t, signLib, secretA, "/hook", whdID(1), c.ts.Unix(), body))
			if a := lastAttempt(t, r); a.Verdict != c.want {
				t.Errorf("verdict %s (%s), want %s", a.Verdict, a.Detail, c.want)
			}
		})
	}
}
