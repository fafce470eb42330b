package proxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/hostile"
)

// The proxy in front of an upstream that misbehaves in each hostile way (issue 39): it streams what
// it may, keeps at most its caps, answers 502 naming the cap when the upstream's header block is
// over it, and its heap stays bounded while 64 MiB (or a gzip body expanding to that) pass.
func TestProxyAgainstHostileUpstreams(t *testing.T) {
	for _, kind := range hostile.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			up, err := hostile.Start(kind, hostile.Options{Limit: 64 << 20, Drip: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			p, err := New(context.Background(), Config{Upstream: up.URL + "/api/v1"})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, ln, p, nil) }()
			defer func() { cancel(); <-served }()

			stop := hostile.HeapGrowth()
			// No Accept-Encoding from the client: the proxy's transport asks for gzip itself and
			// decompresses a gzip answer as it streams it.
			hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableCompression: true},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := hc.Get("http://" + ln.Addr().String() + "/api/v1/capabilities")
			var readErr error
			if err == nil {
				_, readErr = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
			}
			grew := stop()
			if grew > 48<<20 {
				t.Errorf("the proxy's heap grew by %d MiB, want under 48 MiB", grew>>20)
			}
			switch kind {
			case hostile.Headers:
				if err != nil || res.StatusCode != http.StatusBadGateway {
					t.Fatalf("want 502, got %v %v", res, err)
				}
			case hostile.RedirectLoop, hostile.RedirectAway:
				if err != nil || res.StatusCode != http.StatusFound {
					t.Errorf("want the 302 forwarded as it came, got %v %v", res, err)
				}
			case hostile.Slow:
				if err == nil && readErr == nil {
					t.Errorf("a drip-fed answer ended within the client's 3s")
				}
			case hostile.Endless, hostile.Bomb:
				if err != nil || readErr != nil || res.StatusCode != http.StatusOK {
					t.Errorf("want the answer streamed whole, got %v %v %v", res, err, readErr)
				}
			case hostile.Chunked, hostile.ShortLength, hostile.HugeLength:
				if err == nil && readErr == nil {
					t.Errorf("a broken answer reached the client as a whole one")
				}
			}
		})
	}
}

// The 502 for an upstream header block over the cap says so in one line.
func TestProxySaysTheUpstreamHeaderBlockIsOverItsCap(t *testing.T) {
	up, err := hostile.Start(hostile.Headers, hostile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	p, err := New(context.Background(), Config{Upstream: up.URL + "/api/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front := &http.Server{Handler: p}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	defer front.Close()
	res, err := http.Get("http://" + ln.Addr().String() + "/api/v1/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	_ = res.Body.Close()
	want := "mediaspec proxy: the header block of the upstream's answer to GET /api/v1/capabilities is over 64 KiB, the cap the proxy reads\n"
	if res.StatusCode != http.StatusBadGateway || string(b) != want {
		t.Errorf("got %d %q, want 502 %q", res.StatusCode, b, want)
	}
}
