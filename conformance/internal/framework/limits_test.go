package framework

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/hostile"
)

// A target that misbehaves on its first answer stops the run at the preflight with a one-line
// setup error naming what was wrong and where (issue 39), and the heap stays bounded: each hostile
// answer sends 256 MiB, over every cap.
func TestPreflightAgainstHostileTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("meets a slow target for the preflight's 10 seconds")
	}
	for _, kind := range hostile.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			srv, err := hostile.Start(kind, hostile.Options{Limit: 256 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			f, err := New(context.Background(), Config{BaseURL: srv.URL + "/api/v1", Key: "sk_test_hostile", TimeScale: 1})
			if err != nil {
				t.Fatal(err)
			}
			stop := hostile.HeapGrowth()
			err = f.Preflight(context.Background())
			grew := stop()
			var se *SetupError
			if !errors.As(err, &se) {
				t.Fatalf("preflight against a %s target: %v, want a setup error", kind, err)
			}
			call := "GET " + srv.URL + "/api/v1/capabilities"
			want := map[hostile.Kind]string{
				hostile.Endless:      "the answer body to " + call + " is over 4MiB, the cap the suite reads (--max-json-bytes raises it)",
				hostile.Bomb:         "the answer body to " + call + " is over 4MiB",
				hostile.Slow:         "the answer body of " + call + " was not complete within 10s (the preflight's limit per call)",
				hostile.Headers:      "the header block of the answer to " + call + " is over 64KiB",
				hostile.Chunked:      "the answer body of " + call + " could not be read: invalid byte in chunk length",
				hostile.ShortLength:  "the answer body of " + call + " ended after 10 of the 1000 bytes its Content-Length announced",
				hostile.HugeLength:   "the answer body to " + call + " is 10000000000 bytes (its Content-Length), over 32MiB",
				hostile.RedirectLoop: call + " answered 302, a redirect to " + srv.URL + "/api/v1/capabilities: the suite follows no redirect",
				hostile.RedirectAway: call + " answered 302, a redirect to http://192.0.2.1/api/v1/capabilities: the suite follows no redirect",
				hostile.Amplify:      "the answer body to " + call + " holds over 209715 JSON values",
			}[kind]
			if msg := se.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("setup error %q, want one line saying %q", msg, want)
			}
			if grew > 96<<20 {
				t.Errorf("the heap grew by %d MiB against a %s target, want under 96 MiB", grew>>20, kind)
			}
		})
	}
}

// A size is read as bytes or with a binary unit, and said back in the largest unit that divides it.
func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"1500": 1500, "4MiB": 4 << 20, "4mb": 4 << 20, "512 KiB": 512 << 10, "1GiB": 1 << 30, "0": 0} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "4TB", "1.5MiB", "99999999999GiB"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", bad)
		}
	}
	if s := (32 << 20 * ByteSize(1)).String(); s != "32MiB" {
		t.Errorf("32 MiB says %q", s)
	}
	if s := ByteSize(1500).String(); s != "1500" {
		t.Errorf("1500 bytes says %q", s)
	}
	cfg, err := Load(nil, func(k string) string { return map[string]string{"MEDIASPEC_MAX_ANSWER_BYTES": "64MiB"}[k] })
	if err != nil || cfg.MaxAnswerBytes != 64<<20 {
		t.Errorf("MEDIASPEC_MAX_ANSWER_BYTES=64MiB: %d, %v", cfg.MaxAnswerBytes, err)
	}
	if err := ParseConfigYAML([]byte("max_json_bytes: 8MiB\n"), &cfg); err != nil || cfg.MaxJSONBytes != 8<<20 {
		t.Errorf("max_json_bytes: 8MiB: %d, %v", cfg.MaxJSONBytes, err)
	}
}

// A transcript keeps the head of a large body, redacted, without copying the rest.
func TestClipBodyKeepsTheHead(t *testing.T) {
	red := &Redactor{}
	red.Add("sk_live_secretsecretsecret")
	body := []byte(strings.Repeat("a", maxBodyInTranscript-5) + "sk_live_secretsecretsecret" + strings.Repeat("b", 10<<20))
	got := clipBody(red, body)
	if strings.Contains(got, "secretsecret") || !strings.Contains(got, "more bytes)") || len(got) > maxBodyInTranscript+64 {
		t.Errorf("clipped body: %d bytes, ends %q", len(got), got[max(0, len(got)-80):])
	}
}

// A target that drip-feeds its answers stops the run after a few of them, in a row or not, as a
// silent one does: a whole run against it ends within a few request timeouts, not one per spec.
func TestDripFedAnswersStopTheRun(t *testing.T) {
	srv, err := hostile.Start(hostile.Slow, hostile.Options{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f, err := New(context.Background(), Config{BaseURL: srv.URL + "/api/v1", Key: "sk_test_hostile", TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.SetRequestTimeout(300 * time.Millisecond)
	for i := range maxSilentCalls {
		if f.Unresponsive() != "" {
			t.Fatalf("the run stopped after %d drip-fed answers", i)
		}
		_, err := f.exchange(context.Background(), nil, http.MethodGet, f.resolve(f.apiRoot, "/actors"), "", NoAuth, nil)
		if err == nil || !strings.Contains(err.Error(), "was not complete within 300ms (the per-request timeout, --request-timeout)") {
			t.Fatalf("call %d: %v", i+1, err)
		}
		f.answered() // an answered call between drip-fed ones does not reset their count
	}
	if why := f.Unresponsive(); !strings.Contains(why, "not run: the target drip-feeds its answers (3 answer bodies were still arriving after 300ms") {
		t.Errorf("after %d drip-fed answers: %q", maxSilentCalls, why)
	}
}
