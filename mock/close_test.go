package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Shutting Serve down answers a parked wait with 200 (still running), lets it finish, and returns
// nil; Close then leaves no timer behind.
func TestServeDrainAnswersParkedWait(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	key := e.s.Info().GenerateKey
	sub := e.call("POST", "/api/v1/generations", `{"capability_id":"video_fast","config":{"prompt":"a dog"},"max_credits":22}`,
		bearer(key), "Content-Type: application/json")
	if sub.code != 202 && sub.code != 201 && sub.code != 200 {
		t.Fatalf("submit: %d %s", sub.code, sub.raw)
	}
	id := sub.body["generation_id"].(string)
	pending := e.clk.Pending()
	type answer struct {
		code int
		body map[string]any
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/api/v1/generations/"+id+"/wait", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer res.Body.Close()
		var a answer
		a.code = res.StatusCode
		raw, _ := io.ReadAll(res.Body)
		a.err = json.Unmarshal(raw, &a.body)
		got <- a
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := e.clk.BlockUntil(wctx, pending+1); err != nil {
		t.Fatal("the wait did not park")
	}
	cancel()
	a := <-got
	if a.err != nil || a.code != 200 || a.body["still_running"] != true {
		t.Fatalf("parked wait during drain: %d %v %v", a.code, a.body, a.err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("still accepting after the drain")
	}
	e.s.Close()
	if n := e.clk.Pending(); n != 0 {
		t.Fatalf("%d timers pending after Close", n)
	}
	e.clk.Advance(time.Hour) // nothing fires, nothing panics
	e.s.Close()              // twice is fine
}

// The connection cap holds a further client while every connection is busy, and makes room for
// it by closing an idle keep-alive connection as soon as one goes idle (issue 24: idle clients at
// the cap made a new client wait for the idle timeout).
func TestConnectionCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Limits.MaxConns = 1 })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.s.Serve(ctx, ln) }()
	first, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	req := "GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
	// The first client is busy: its request has not ended yet.
	if _, err := first.Write([]byte(req[:len(req)-2])); err != nil {
		t.Fatal(err)
	}
	second, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		b := make([]byte, 12)
		n, _ := io.ReadFull(second, b)
		answered <- string(b[:n])
	}()
	select {
	case s := <-answered:
		t.Fatalf("second connection served while the first is busy: %q", s)
	default:
	}
	// The first request ends and is answered; its connection then idles, kept alive.
	if _, err := first.Write([]byte("\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(first)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("first: %v %v", res, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	// The idle connection is closed to serve the waiting client.
	if s := <-answered; !strings.HasPrefix(s, "HTTP/1.1 200") {
		t.Fatalf("second: %q", s)
	}
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the idle first connection was not closed: %v", err)
	}
	first.Close()
	second.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
