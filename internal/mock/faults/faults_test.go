package faults

import (
	"errors"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
)

func newStore() *Store {
	return New(clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), ids.New(1), PricingUnavailable, RenderFail)
}

func TestQueueRefusals(t *testing.T) {
	s := newStore()
	for _, c := range []struct {
		kind  Kind
		code  string
		count int
		field string
	}{
		{"bogus", "", 1, "kind"},
		{ProviderUnavailable, "", 1, "kind"}, // documented but not enabled here
		{PricingUnavailable, "", -1, "count"},
		{PricingUnavailable, "", MaxCount + 1, "count"},
		{PricingUnavailable, "timeout", 1, "code"},
		{RenderFail, "exploded", 1, "code"},
	} {
		_, err := s.Queue(c.kind, "", c.code, c.count)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig || e.Field != c.field {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if len(s.List()) != 0 {
		t.Fatal("a refused fault was queued")
	}
	f, err := s.Queue(RenderFail, "", "", 0)
	if err != nil || f.Code != "provider_error" || f.Count != 1 || f.Remaining != 1 || len(f.ID) != 36 {
		t.Fatalf("%+v %v", f, err)
	}
}

func TestTakeOrderAndScope(t *testing.T) {
	s := newStore()
	a, _ := s.Queue(PricingUnavailable, "tts", "", 1)
	b, _ := s.Queue(PricingUnavailable, "", "", 2)
	if _, ok := s.Take(RenderFail, "tts"); ok {
		t.Fatal("other kind taken")
	}
	if f, ok := s.Take(PricingUnavailable, "video_fast"); !ok || f.ID != b.ID || f.Remaining != 2 {
		t.Fatalf("scoped fault must not match video_fast: %+v", f)
	}
	if f, ok := s.Take(PricingUnavailable, "tts"); !ok || f.ID != a.ID {
		t.Fatalf("oldest matching first: %+v", f)
	}
	if got := s.List(); len(got) != 1 || got[0].Remaining != 1 {
		t.Fatalf("left %+v", got)
	}
	if !s.Pending(PricingUnavailable) {
		t.Fatal("pending")
	}
	s.Take(PricingUnavailable, "tts")
	if _, ok := s.Take(PricingUnavailable, "tts"); ok || s.Pending(PricingUnavailable) {
		t.Fatal("used-up faults stay")
	}
	s.Queue(PricingUnavailable, "", "", 5)
	if n := s.Clear(); n != 1 || len(s.List()) != 0 {
		t.Fatalf("clear %d", n)
	}
	s.Enable(ProviderUnavailable)
	if _, err := s.Queue(ProviderUnavailable, "", "", 1); err != nil || !s.Enabled(ProviderUnavailable) {
		t.Fatal(err)
	}
}

func TestWorkspaceScope(t *testing.T) {
	s := newStore()
	mine, err := s.Add(Spec{Kind: RenderFail, WorkspaceID: "ws_a", Count: 2})
	if err != nil || mine.WorkspaceID != "ws_a" {
		t.Fatalf("%+v %v", mine, err)
	}
	if _, ok := s.TakeFor(RenderFail, "ws_b", "tts"); ok {
		t.Fatal("a fault scoped to ws_a was taken by an event of ws_b")
	}
	if f, ok := s.TakeFor(RenderFail, "ws_a", "tts"); !ok || f.ID != mine.ID {
		t.Fatalf("the scoped fault must match its workspace: %+v", f)
	}
	// A consumer that does not know the workspace matches every workspace.
	if f, ok := s.Take(RenderFail, "tts"); !ok || f.ID != mine.ID {
		t.Fatalf("an event of unknown workspace matches a scoped fault: %+v", f)
	}
	unscoped, _ := s.Add(Spec{Kind: RenderFail})
	if f, ok := s.TakeFor(RenderFail, "ws_b", "tts"); !ok || f.ID != unscoped.ID {
		t.Fatalf("an unscoped fault matches every workspace: %+v", f)
	}
	// Both scopes at once.
	both, _ := s.Add(Spec{Kind: RenderFail, WorkspaceID: "ws_a", CapabilityID: "tts"})
	if _, ok := s.TakeFor(RenderFail, "ws_a", "image_fast"); ok {
		t.Fatal("capability scope ignored")
	}
	if _, ok := s.TakeFor(RenderFail, "ws_b", "tts"); ok {
		t.Fatal("workspace scope ignored")
	}
	if f, ok := s.TakeFor(RenderFail, "ws_a", "tts"); !ok || f.ID != both.ID {
		t.Fatalf("%+v", f)
	}
}

func TestSlowRenderSeconds(t *testing.T) {
	s := newStore()
	s.Enable(SlowRender)
	for _, c := range []struct {
		sp    Spec
		field string
	}{
		{Spec{Kind: SlowRender}, "seconds"},
		{Spec{Kind: SlowRender, Seconds: -1}, "seconds"},
		{Spec{Kind: SlowRender, Seconds: MaxSlowSeconds + 1}, "seconds"},
		{Spec{Kind: RenderFail, Seconds: 5}, "seconds"},
	} {
		_, err := s.Add(c.sp)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig || e.Field != c.field {
			t.Errorf("%+v: %v", c.sp, err)
		}
	}
	f, err := s.Add(Spec{Kind: SlowRender, CapabilityID: "video_fast", Seconds: 900})
	if err != nil || f.Seconds != 900 || f.Code != "" {
		t.Fatalf("%+v %v", f, err)
	}
	if got, ok := s.TakeFor(SlowRender, "ws_a", "video_fast"); !ok || got.Seconds != 900 {
		t.Fatalf("%+v", got)
	}
}

// TestSlowScanSeconds: slow_scan takes seconds as slow_render does (required, bounded), and a
// slow_render's seconds are not a slow_scan's.
func TestSlowScanSeconds(t *testing.T) {
	s := newStore()
	s.Enable(SlowScan, SlowRender)
	for _, sp := range []Spec{{Kind: SlowScan}, {Kind: SlowScan, Seconds: -1}, {Kind: SlowScan, Seconds: MaxSlowSeconds + 1}} {
		_, err := s.Add(sp)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig || e.Field != "seconds" {
			t.Errorf("%+v: %v", sp, err)
		}
	}
	if _, err := s.Add(Spec{Kind: SlowRender, Seconds: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Spec{Kind: SlowScan, WorkspaceID: "ws_a", Seconds: 300}); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.TakeFor(SlowScan, "ws_a", ""); !ok || got.Seconds != 300 {
		t.Fatalf("%+v %v", got, ok)
	}
	if _, ok := s.TakeFor(SlowScan, "ws_a", ""); ok {
		t.Fatal("a used-up slow_scan fault was taken again")
	}
}
