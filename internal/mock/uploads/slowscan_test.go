package uploads

import (
	"context"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
)

// slowScanEnv is an env whose store accepts slow_scan (New enables it) with one queued for ws.
func slowScanEnv(t *testing.T, ws string, seconds float64) *env {
	t.Helper()
	e := newEnv(t, nil)
	if !e.s.d.Faults.Enabled(faults.SlowScan) {
		t.Fatal("New did not enable slow_scan")
	}
	if _, err := e.s.d.Faults.Add(faults.Spec{Kind: faults.SlowScan, WorkspaceID: ws, Seconds: seconds}); err != nil {
		t.Fatal(err)
	}
	return e
}

type finalizeResult struct {
	f   Finalized
	err error
}

// finalizeHeld starts a finalize of id and returns once it holds the file, waiting on the service
// clock (a timer more than before).
func (e *env) finalizeHeld(t *testing.T, id string) <-chan finalizeResult {
	t.Helper()
	before := e.clk.Pending()
	done := make(chan finalizeResult, 1)
	go func() {
		f, err := e.s.Finalize(context.Background(), "ws_1", id)
		done <- finalizeResult{f, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.clk.BlockUntil(ctx, before+1); err != nil {
		t.Fatalf("the finalize never waited on the service clock: %v", err)
	}
	return done
}

// TestSlowScanPending: a scan longer than the finalize hold keeps the file held for the hold (a
// concurrent finalize answers 429 rate_limited), then answers pending; while pending a finalize
// answers pending at once, the file is not ready for submits and its asset reads pending; when
// the scan ends everything reads clean.
func TestSlowScanPending(t *testing.T) {
	e := slowScanEnv(t, "ws_1", 300)
	id := e.reserveFixture(t, "ws_1", "image.png")
	done := e.finalizeHeld(t, id)
	if _, err := e.s.Finalize(context.Background(), "ws_1", id); code(t, err) != apierr.CodeRateLimited {
		t.Fatalf("a finalize while the first holds the file: %v", err)
	}
	if u, _ := e.s.LookupUpload("ws_1", id); u.Ready || u.Flagged {
		t.Fatalf("held upload looks up %+v", u)
	}
	e.clk.Advance(FinalizeHold)
	got := <-done
	if got.err != nil || got.f.ScanStatus != ScanPending || got.f.Usable || got.f.Kind != "image" || got.f.NextAction == "" {
		t.Fatalf("after the hold: %+v %v", got.f, got.err)
	}
	again, err := e.s.Finalize(context.Background(), "ws_1", id)
	if err != nil || again.ScanStatus != ScanPending || again.Usable {
		t.Fatalf("a finalize while the scan runs: %+v %v", again, err)
	}
	if u, _ := e.s.LookupUpload("ws_1", id); u.Ready || u.Flagged {
		t.Fatalf("pending upload looks up %+v", u)
	}
	if a, ok := e.reg.Get("ws_1", id); !ok || !a.Listed || a.ScanStatus != ScanPending || a.Usable {
		t.Fatalf("pending asset %+v %v", a, ok)
	}
	e.clk.Advance(300*time.Second - FinalizeHold - time.Second)
	if again, _ := e.s.Finalize(context.Background(), "ws_1", id); again.ScanStatus != ScanPending {
		t.Fatalf("a second before the scan ends: %+v", again)
	}
	e.clk.Advance(time.Second)
	// The scan's end shows without a finalize too.
	if a, _ := e.reg.Get("ws_1", id); a.ScanStatus != ScanClean || !a.Usable {
		t.Fatalf("asset after the scan %+v", a)
	}
	if u, _ := e.s.LookupUpload("ws_1", id); !u.Ready {
		t.Fatalf("after the scan %+v", u)
	}
	fin, err := e.s.Finalize(context.Background(), "ws_1", id)
	if err != nil || fin.ScanStatus != ScanClean || !fin.Usable {
		t.Fatalf("after the scan: %+v %v", fin, err)
	}
}

// TestSlowScanWithinHold: a scan shorter than the hold holds the finalize and answers the result.
func TestSlowScanWithinHold(t *testing.T) {
	e := slowScanEnv(t, "ws_1", 30)
	id := e.reserveFixture(t, "ws_1", "flagged.png")
	done := e.finalizeHeld(t, id)
	e.clk.Advance(29 * time.Second)
	select {
	case got := <-done:
		t.Fatalf("answered before the scan ended: %+v %v", got.f, got.err)
	default:
	}
	e.clk.Advance(time.Second)
	got := <-done
	if got.err != nil || got.f.ScanStatus != ScanFlagged || got.f.Usable {
		t.Fatalf("%+v %v", got.f, got.err)
	}
}

// TestSlowScanScope: another workspace's slow_scan is not taken, and a file refused by its checks
// answers at once without taking the fault.
func TestSlowScanScope(t *testing.T) {
	e := slowScanEnv(t, "ws_2", 300)
	id := e.reserveFixture(t, "ws_1", "image.gif")
	if f, err := e.s.Finalize(context.Background(), "ws_1", id); err != nil || f.ScanStatus != ScanClean {
		t.Fatalf("%+v %v", f, err)
	}
	refused := e.reserveFixture(t, "ws_2", "png-named.jpg")
	if _, err := e.s.Finalize(context.Background(), "ws_2", refused); code(t, err) != apierr.CodeInvalidConfig {
		t.Fatalf("refused file: %v", err)
	}
	if n := len(e.s.d.Faults.List()); n != 1 {
		t.Fatalf("%d faults left, want the one of ws_2", n)
	}
}
