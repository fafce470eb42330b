package proxy_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/proxy"
)

// A proxy in front of a server (here the mock on httptest): the client calls the proxy with the
// paths it would call the server with, gets the server's answer unchanged, and the proxy judges
// the exchange. This client sends its API key from a browser (an Origin header), and keys are used
// only from a server side (CORE-014): the proxy records one finding on the client's side.
func ExampleNew() {
	srv, err := mock.New(mock.Config{Logger: slog.New(slog.DiscardHandler), NoControl: true})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	upstream := httptest.NewServer(srv)
	defer upstream.Close()

	ctx := context.Background()
	p, err := proxy.New(ctx, proxy.Config{Upstream: upstream.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	front := httptest.NewServer(p)
	defer front.Close()
	srv.SetPublicURL(front.URL) // the links the mock hands out lead through the proxy too

	req, _ := http.NewRequest(http.MethodGet, front.URL+"/api/v1/credits/balance", nil)
	req.Header.Set("Authorization", "Bearer "+srv.Info().GenerateKey)
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	// Judging runs off the request's path; Sync waits until every exchange so far is judged.
	if err := p.Sync(ctx); err != nil {
		panic(err)
	}
	rep := p.Report()
	fmt.Println(resp.StatusCode, rep.Exchanges, len(rep.Findings))
	for _, f := range rep.Findings {
		fmt.Println(f.RuleID, f.Level, f.Side, f.Request)
	}
	// Output:
	// 200 1 1
	// CORE-014 MUST client GET /api/v1/credits/balance
}
