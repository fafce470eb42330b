package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var receiveSecret = "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 24))

// startReceive runs `mediaspec receive` on a free loopback port and returns the start line, a
// line reader and a stop function that checks the command ended cleanly.
func startReceive(t *testing.T, extra ...string) (string, *bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	args := append([]string{"receive", "--addr", "127.0.0.1:0"}, extra...)
	go func() {
		done <- Run(ctx, args, pw, io.Discard)
		_ = pw.Close()
	}()
	lines := bufio.NewReader(pr)
	first, err := lines.ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no start line: %v (run: %v)", err, <-done)
	}
	stop := func() {
		go func() { _, _ = io.Copy(io.Discard, pr) }()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("receive ended with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("receive did not stop when its context ended")
		}
	}
	return first, lines, stop
}

// postSigned posts a delivery signed with an independent HMAC implementation of Standard Webhooks.
func postSigned(t *testing.T, url, secret, id string, body []byte) int {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + string(body)))
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

const (
	receiveWhd = "whd_0123456789abcdef0123456789abcdef"
	receiveGen = "gen_fedcba9876543210fedcba9876543210"
)

var receiveBody = []byte(`{"id":"` + receiveWhd + `","type":"generation.completed","created_at":"2026-11-21T10:00:00Z","data":{"generation_id":"` + receiveGen + `","status":"completed"}}`)

func TestReceiveCommandPrintsOneLinePerAttempt(t *testing.T) {
	first, lines, stop := startReceive(t, "--secret", receiveSecret)
	defer stop()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(first)
	if url == "" || !strings.Contains(first, "/_receiver/attempts") {
		t.Fatalf("start line %q", first)
	}
	if code := postSigned(t, url+"hooks", receiveSecret, receiveWhd, receiveBody); code != 204 {
		t.Fatalf("verified delivery answered %d", code)
	}
	line, err := lines.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  generation\.completed  ` + receiveWhd + `  ` + receiveGen + `  verified\n$`)
	if !want.MatchString(line) {
		t.Fatalf("attempt line %q", line)
	}
	wrong := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 24))
	if code := postSigned(t, url, wrong, receiveWhd, receiveBody); code != 400 {
		t.Fatalf("wrong secret answered %d", code)
	}
	if line, _ = lines.ReadString('\n'); !strings.Contains(line, "  -  "+receiveWhd+"  -  bad_signature  (") {
		t.Fatalf("refused attempt line %q", line)
	}
	if code := postSigned(t, url, receiveSecret, receiveWhd, receiveBody); code != 204 {
		t.Fatalf("repeat answered %d", code)
	}
	if line, _ = lines.ReadString('\n'); !strings.HasSuffix(line, receiveGen+"  duplicate\n") {
		t.Fatalf("duplicate line %q", line)
	}
}

func TestReceiveCommandJSONAndEnv(t *testing.T) {
	t.Setenv("MEDIASPEC_RECEIVE_SECRET", receiveSecret)
	t.Setenv("MEDIASPEC_RECEIVE_JSON", "true")
	first, lines, stop := startReceive(t)
	defer stop()
	var info struct {
		URL       string `json:"url"`
		EventsURL string `json:"events_url"`
	}
	if err := json.Unmarshal([]byte(first), &info); err != nil || !strings.HasPrefix(info.URL, "http://127.0.0.1:") {
		t.Fatalf("start line %q: %v", first, err)
	}
	if code := postSigned(t, info.URL+"ep", receiveSecret, receiveWhd, receiveBody); code != 204 {
		t.Fatalf("answered %d", code)
	}
	line, _ := lines.ReadString('\n')
	var a struct {
		DeliveryID string `json:"delivery_id"`
		Type       string `json:"type"`
		ResourceID string `json:"resource_id"`
		Verdict    string `json:"verdict"`
		Status     int    `json:"status"`
		Path       string `json:"path"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("attempt line %q: %v", line, err)
	}
	if a.DeliveryID != receiveWhd || a.Type != "generation.completed" || a.ResourceID != receiveGen || a.Verdict != "verified" ||
		a.Status != 204 || a.Path != "/ep" || a.Body != string(receiveBody) {
		t.Fatalf("attempt %+v", a)
	}
	res, err := http.Get(info.EventsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var evs struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.NewDecoder(res.Body).Decode(&evs); err != nil || len(evs.Events) != 1 || evs.Events[0].ID != receiveWhd {
		t.Fatalf("events listing: %+v %v", evs, err)
	}
}

func TestReceiveCommandRefusesBadFlags(t *testing.T) {
	cases := map[string][]string{
		"no secret":            {"receive", "--addr", "127.0.0.1:0"},
		"empty secret":         {"receive", "--secret", "", "--addr", "127.0.0.1:0"},
		"no prefix":            {"receive", "--secret", strings.TrimPrefix(receiveSecret, "whsec_")},
		"not base64":           {"receive", "--secret", "whsec_%%%"},
		"short key":            {"receive", "--secret", "whsec_YWJj"},
		"non-loopback forward": {"receive", "--secret", receiveSecret, "--forward", "http://example.com/hook"},
		"zero tolerance":       {"receive", "--secret", receiveSecret, "--tolerance", "0s"},
		"stray argument":       {"receive", "--secret", receiveSecret, "extra"},
	}
	for name, args := range cases {
		var stderr bytes.Buffer
		err := Run(context.Background(), args, io.Discard, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || ue.msg == "" {
			t.Errorf("%s: %v, want a usage error with a message", name, err)
		}
	}
}
