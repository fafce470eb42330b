package conformance_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"time"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// Running the suite from Go against a server, here the mock on httptest. With the control API the
// suite makes its own workspaces and keys (against a server without it, set Key, ReadKey and
// OtherKey); the label filter selects the specs of two rules, the health probes, whose paths the
// interface text leaves open, so the configuration names them. Run prints its console on stdout
// (discarded here) and returns every rule's verdict. The suite runs once per process: Ginkgo keeps
// one spec tree.
func ExampleRun() {
	srv, err := mock.New(mock.Config{
		Seed:         1,
		Clock:        clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)),
		ControlToken: "ctl_example",
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	srv.SetPublicURL(ts.URL)
	info := srv.Info()

	cfg := conformance.Config{
		BaseURL:      info.BaseURL,
		ControlURL:   info.ControlURL,
		ControlToken: info.ControlToken,
		TimeScale:    1,
		LivePath:     "/health/live",
		ReadyPath:    "/health/ready",
		LabelFilter:  "HEALTH-001 || HEALTH-002",
	}
	sum, err := conformance.Run(context.Background(), cfg, io.Discard, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range sum.Results.Rules {
		if slices.Contains([]string{"HEALTH-001", "HEALTH-002"}, v.Rule.ID) {
			fmt.Println(v.Rule.ID, v.Verdict)
		}
	}
	// Output:
	// HEALTH-001 passed
	// HEALTH-002 passed
}
