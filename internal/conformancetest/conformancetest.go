// Package conformancetest starts the reference mock in process for the module's own tests that
// run the conformance suite against it: the in-process harness of package conformance and the
// proxy's suite test (the suite through a proxy in front of the mock). Both set the mock and the
// suite up the same way, so they are written once here.
package conformancetest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/spec"
)

// Start is the time the mock's manual clock starts at.
var Start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// ControlToken is the mock's control API token.
const ControlToken = "ctl_conformance_harness"

// StartMock starts the reference mock on an httptest server on 127.0.0.1:0 and points its
// public URL at it: a manual clock at Start (it moves only when a spec advances it through
// control, so slow specs run at once and every bucket count is exact), the control API on with
// ControlToken, the REST description served, webhooks to loopback and from-url fetches of
// loopback allowed (the suite's receiver and file server listen on 127.0.0.1). Both are closed
// when tb ends. A test that puts something in front of the mock sets the public URL again.
func StartMock(tb testing.TB) (*mock.Server, *httptest.Server) {
	tb.Helper()
	doc, err := spec.OpenAPIJSON(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := mock.New(mock.Config{
		Seed:                  1,
		Clock:                 clock.NewManual(Start),
		ControlToken:          ControlToken,
		OpenAPIJSON:           doc,
		Logger:                slog.New(slog.DiscardHandler),
		AllowLoopbackWebhooks: true,
		AllowLoopbackFetch:    true,
		// Its start-state keys are test keys (Config declares them): the specs of test-mode inputs
		// themselves run too, as in the embedded check.
		TestInputs: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	ts := httptest.NewServer(srv)
	tb.Cleanup(ts.Close)
	srv.SetPublicURL(ts.URL)
	return srv, ts
}

// Config is the suite's configuration against the reference mock as info names it (its own
// server, or a proxy in front of it once the public URL names that): control access (the suite
// makes its own workspaces and keys), a budget the whole suite fits in, slow specs on (the clock
// is manual), the retired capability the harness knows of the mock it starts (retired ids are not
// listed), Reference, and Strict (the mock keeps its documented shapes: a difference from the
// reference's choices fails). No report is written; the caller names the ones it wants.
func Config(info mock.StartInfo) conformance.Config {
	return conformance.Config{
		BaseURL:             info.BaseURL,
		ControlURL:          info.ControlURL,
		ControlToken:        info.ControlToken,
		Budget:              2000,
		TimeScale:           1,
		Slow:                true,
		RetiredCapabilityID: "actor_classic",
		Reference:           true,
		Strict:              true,
		Features:            conformance.FeatureList{conformance.FeatureTestInputs},
		TestKeys:            conformance.KeyList{info.GenerateKey},
	}
}
