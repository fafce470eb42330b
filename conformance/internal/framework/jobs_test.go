package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// A stopped run (Ctrl-C, --timeout) does not wait for the jobs a spec left running on a shared
// key: settling ends when the run is stopped, and does not start after it. (--timeout 5s ended
// after 15 s and more: the AfterEach waited, in real time, for a render no spec would read.)
func TestSettleEndsWhenTheRunStops(t *testing.T) {
	waiting := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The job never ends: the wait answers only when the caller gives up.
		select {
		case waiting <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	root, err := url.Parse(srv.URL + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	f := testFramework(t)
	f.apiRoot, f.base = root, http.DefaultTransport
	c := f.client("sk_live_test")
	f.jobs.add(trackedJob{c: c, id: "gen_0123456789abcdef"})
	done := make(chan error, 1)
	go func() { done <- f.settleAll(context.Background()) }()
	<-waiting // the wait call is in flight
	f.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("settling a stopped run: %v, want nil (nothing to judge)", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("settling did not end when the run was stopped")
	}
	// Jobs tracked after the stop are not waited for at all; both are counted as left running.
	f.jobs.add(trackedJob{c: c, id: "gen_fedcba9876543210"})
	if err := f.settleAll(context.Background()); err != nil {
		t.Errorf("after the stop: %v", err)
	}
	if n := f.AbandonedJobs(); n != 2 {
		t.Errorf("%d jobs counted as left running, want 2", n)
	}
	f.Stop() // twice is fine
}
