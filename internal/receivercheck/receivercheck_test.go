package receivercheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/receiver"
)

var secret = "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))

func check(t *testing.T, h http.Handler, timeout time.Duration) Result {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/hooks", Secret: secret, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func states(res Result) map[string]string {
	m := map[string]string{}
	for _, v := range res.Verdicts {
		m[v.Rule] = v.State
	}
	return m
}

func TestTheProjectReceiverPassesEveryRule(t *testing.T) {
	rcv, err := receiver.New(receiver.Config{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	res := check(t, rcv, DefaultTimeout)
	if res.Failed() || len(res.Verdicts) != len(rules) {
		t.Fatalf("verdicts %+v\ncases %+v", res.Verdicts, res.Cases)
	}
	for _, v := range res.Verdicts {
		if v.State != Pass {
			t.Errorf("%s: %s (%s)", v.Rule, v.State, v.Reason)
		}
	}
}

// A receiver that refuses everything fails RECV-005, and its refusals prove nothing (skip).
func TestARefuseAllReceiverFailsAndSkips(t *testing.T) {
	res := check(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(401) }), DefaultTimeout)
	got := states(res)
	if got["RECV-005"] != Fail || got["RECV-001"] != Skip || got["RECV-002"] != Fail || got["RECV-006"] != Fail {
		t.Fatalf("verdicts %+v", res.Verdicts)
	}
}

// A receiver that does not answer within the timeout fails RECV-005, saying there was no answer.
func TestASilentReceiverFailsTheTimeout(t *testing.T) {
	res := check(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices the client's close only once the body is read
		<-r.Context().Done()
	}), 50*time.Millisecond)
	for _, v := range res.Verdicts {
		if v.Rule == "RECV-005" && (v.State != Fail || !strings.Contains(v.Reason, "no answer")) {
			t.Fatalf("RECV-005: %+v", v)
		}
	}
}

// A receiver that checks only the first signature of the header fails the rotation.
func TestFirstSignatureOnlyFailsTheRotation(t *testing.T) {
	rcv, err := receiver.New(receiver.Config{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	res := check(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sig := r.Header.Get("Webhook-Signature")
		r.Header.Set("Webhook-Signature", strings.Fields(sig + " x")[0])
		rcv.ServeHTTP(w, r)
	}), DefaultTimeout)
	if got := states(res); got["RECV-006"] != Fail || got["RECV-001"] != Pass {
		t.Fatalf("verdicts %+v", res.Verdicts)
	}
}

func TestSetupErrors(t *testing.T) {
	for _, cfg := range []Config{
		{URL: "mailto:x@example.com", Secret: secret},
		{URL: "http://127.0.0.1:1/", Secret: "whsec_AAAA"},
	} {
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrSetup) {
			t.Errorf("%+v: %v, want ErrSetup", cfg, err)
		}
	}
}
