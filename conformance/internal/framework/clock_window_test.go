package framework

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// The receiver's window reads the target's clock once per arriving attempt: on a manual clock the
// arrival time is that reading, the span reaches back to the last jump; on a running clock the
// arrival time is the wall clock and the span covers it too.
func TestStampWindowReadsTheClockOnce(t *testing.T) {
	svc := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_control/v1/clock" {
			http.NotFound(w, r)
			return
		}
		reads.Add(1)
		fmt.Fprintf(w, `{"ok":true,"now":%q,"time_scale":0}`, svc.Format(time.RFC3339Nano))
	}))
	defer srv.Close()
	root, err := url.Parse(srv.URL + "/_control/v1")
	if err != nil {
		t.Fatal(err)
	}
	f := testFramework(t)
	f.controlRoot, f.base = root, http.DefaultTransport
	f.clock.known = true
	f.noteJump(svc.Add(-time.Hour))

	now, earliest, latest := f.stampWindow()
	if reads.Load() != 1 || !now.Equal(svc) || !earliest.Equal(svc.Add(-time.Hour)) || !latest.Equal(svc) {
		t.Fatalf("manual clock: %d reads, now %s, span %s..%s; want 1 read, now %s, span from the jump", reads.Load(), now, earliest, latest, svc)
	}

	f.clock.scale = 1
	before := time.Now()
	now, earliest, latest = f.stampWindow()
	if reads.Load() != 2 || now.Before(before) || now.Equal(svc) || earliest.After(svc.Add(-time.Hour)) || latest.Before(now) {
		t.Fatalf("running clock: %d reads, now %s, span %s..%s; want 2 reads, the wall clock inside the span", reads.Load(), now, earliest, latest)
	}
}
