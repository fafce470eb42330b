package faults

import (
	"errors"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/apierr"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/mock/ids"
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
