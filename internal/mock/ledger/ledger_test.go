package ledger

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func i64(v int64) *int64 { return &v }

func key(id string) Spender { return Spender{KeyID: id} }

func TestHoldCaptureRelease(t *testing.T) {
	w := New(clock.NewManual(t0), 1000)
	id, err := w.Hold(300, key("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Available() != 700 || w.Held() != 300 {
		t.Fatalf("after hold %d/%d", w.Available(), w.Held())
	}
	if amt, _ := w.HoldAmount(id); amt != 300 {
		t.Fatalf("hold amount %d", amt)
	}
	if err := w.Capture(id, 301); !errors.Is(err, ErrOverCapture) {
		t.Fatalf("over capture: %v", err)
	}
	if err := w.Capture(id, -1); !errors.Is(err, ErrNegative) {
		t.Fatalf("negative capture: %v", err)
	}
	if err := w.Capture(id, 250); err != nil {
		t.Fatal(err)
	}
	if w.Available() != 750 || w.Held() != 0 || w.Captured() != 250 {
		t.Fatalf("after capture %d/%d/%d", w.Available(), w.Held(), w.Captured())
	}
	if err := w.Capture(id, 1); !errors.Is(err, ErrHoldSettled) {
		t.Fatalf("double capture: %v", err)
	}
	if err := w.Release(id); !errors.Is(err, ErrHoldSettled) {
		t.Fatalf("release after capture: %v", err)
	}
	if _, err := w.HoldAmount(id); !errors.Is(err, ErrHoldSettled) {
		t.Fatalf("amount of settled hold: %v", err)
	}
	id2, _ := w.Hold(100, key("k1"))
	if err := w.Release(id2); err != nil {
		t.Fatal(err)
	}
	if err := w.Release(id2); !errors.Is(err, ErrHoldSettled) {
		t.Fatalf("double release: %v", err)
	}
	if err := w.Release(999); !errors.Is(err, ErrUnknownHold) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := w.Hold(0, key("k1")); !errors.Is(err, ErrNotWholeHold) {
		t.Fatalf("zero hold: %v", err)
	}
}

func TestInsufficientCredits(t *testing.T) {
	w := New(clock.NewManual(t0), 100)
	_, err := w.Hold(130, key("k"))
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.CodeInsufficientCredits || e.Shortfall != 30 {
		t.Fatalf("err %v", err)
	}
	if w.Available() != 100 || w.Held() != 0 {
		t.Fatal("refused hold moved credits")
	}
}

func TestAdjustAndSet(t *testing.T) {
	w := New(clock.NewManual(t0), 100)
	if err := w.Adjust(-101); !errors.Is(err, ErrBelowZero) || w.Available() != 100 {
		t.Fatalf("drain below zero: %v %d", err, w.Available())
	}
	if err := w.Adjust(-100); err != nil || w.Available() != 0 {
		t.Fatalf("drain: %v", err)
	}
	if err := w.Set(-1); !errors.Is(err, ErrBelowZero) {
		t.Fatal("negative set")
	}
	if err := w.Set(42); err != nil || w.Available() != 42 {
		t.Fatal("set")
	}
}

func spendErr(t *testing.T, err error) *apierr.Limit {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.CodeSpendLimitExceeded || e.Limit == nil {
		t.Fatalf("want spend_limit_exceeded, got %v", err)
	}
	return e.Limit
}

func TestSpendLimits(t *testing.T) {
	c := clock.NewManual(t0)
	w := New(c, 100000)

	// Per generation default 600.
	lim := spendErr(t, func() error { _, err := w.Hold(601, key("k")); return err }())
	if lim.BoundBy != apierr.BoundOrgPerGeneration || lim.LimitCredits != 600 || *lim.RemainingCredits != 600 {
		t.Fatalf("per gen %+v", lim)
	}
	// Daily default 2000: three holds of 600 then 200 left.
	var ids []HoldID
	for range 3 {
		id, err := w.Hold(600, key("k"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	lim = spendErr(t, func() error { _, err := w.Hold(201, key("k2")); return err }())
	if lim.BoundBy != apierr.BoundOrgDaily || lim.LimitCredits != 2000 || *lim.RemainingCredits != 200 {
		t.Fatalf("daily %+v", lim)
	}
	// App spends are not limited or counted.
	if _, err := w.Hold(5000, Spender{}); err != nil {
		t.Fatalf("app spend: %v", err)
	}
	// Release gives back, capture keeps the captured part.
	if err := w.Release(ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Capture(ids[1], 100); err != nil {
		t.Fatal(err)
	}
	st := w.Status("k", nil)
	if st.DailySpent != 700 || st.DailyRemaining != 1300 || st.KeySpent != 700 || st.KeyBudget != nil || st.KeyRemaining != nil {
		t.Fatalf("status %+v", st)
	}
	// Leaving the 24 h window frees it.
	c.Advance(SpendWindow)
	st = w.Status("k", i64(50))
	if st.DailySpent != 0 || *st.KeyRemaining != 50 {
		t.Fatalf("after window %+v", st)
	}
}

func TestKeyBudgetAndSmallestWins(t *testing.T) {
	c := clock.NewManual(t0)
	w := New(c, 100000)
	sp := Spender{KeyID: "k", KeyBudget: i64(500)}
	if _, err := w.Hold(450, sp); err != nil {
		t.Fatal(err)
	}
	lim := spendErr(t, func() error { _, err := w.Hold(51, sp); return err }())
	if lim.BoundBy != apierr.BoundAPIKeyBudget || lim.LimitCredits != 500 || *lim.RemainingCredits != 50 {
		t.Fatalf("key budget %+v", lim)
	}
	// Another key is not bound by k's budget.
	if _, err := w.Hold(400, key("other")); err != nil {
		t.Fatal(err)
	}
	// Per-gen 100 is tighter than the key budget's remaining 50? No: 50 wins.
	w.Limits.PerGeneration = i64(100)
	lim = spendErr(t, func() error { _, err := w.Hold(60, sp); return err }())
	if lim.BoundBy != apierr.BoundAPIKeyBudget {
		t.Fatalf("smallest remaining should win: %+v", lim)
	}
	// Zero means no spend at all.
	w.Limits.Daily = i64(0)
	lim = spendErr(t, func() error { _, err := w.Hold(1, key("z")); return err }())
	if lim.BoundBy != apierr.BoundOrgDaily || *lim.RemainingCredits != 0 {
		t.Fatalf("zero daily %+v", lim)
	}
	w.Limits = Limits{PerGeneration: i64(0)}
	lim = spendErr(t, func() error { _, err := w.Hold(1, key("z")); return err }())
	if lim.BoundBy != apierr.BoundOrgPerGeneration {
		t.Fatalf("zero per gen %+v", lim)
	}
	// Spend limits come before credits in the check order.
	w2 := New(c, 10)
	spendErr(t, func() error { _, err := w2.Hold(700, key("k")); return err }())
}

func TestLowBalanceOncePerRefill(t *testing.T) {
	w := New(clock.NewManual(t0), 1000)
	w.LowThreshold = 500
	var got []Low
	w.OnLow = func(l Low) { got = append(got, l) }
	w.Hold(400, key("k"))          // 600: above
	id, _ := w.Hold(200, key("k")) // 400: crosses
	w.Hold(100, key("k"))          // 300: still low, no second event
	if len(got) != 1 || got[0] != (Low{AvailableCredits: 400, ThresholdCredits: 500}) {
		t.Fatalf("events %v", got)
	}
	w.Release(id) // 500: back above, but a release is not a refill
	w.Hold(100, key("k"))
	if len(got) != 1 {
		t.Fatalf("fired again without a refill: %v", got)
	}
	w.Adjust(1000) // refill re-arms
	w.Set(100)     // drop below again
	if len(got) != 2 || got[1].AvailableCredits != 100 {
		t.Fatalf("events after refill %v", got)
	}
}

// TestConservation: random operations never create or lose credits and
// never go negative.
func TestConservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := clock.NewManual(t0)
	w := New(c, 50000)
	w.Limits = Limits{PerGeneration: i64(1000), Daily: i64(20000)}
	total := w.Available()
	var open []HoldID
	keys := []string{"", "k1", "k2", "k3"}
	for i := range 20000 {
		switch op := rng.IntN(10); {
		case op < 4:
			sp := Spender{KeyID: keys[rng.IntN(len(keys))]}
			if rng.IntN(3) == 0 {
				sp.KeyBudget = i64(int64(rng.IntN(3000)))
			}
			id, err := w.Hold(int64(1+rng.IntN(1500)), sp)
			if err == nil {
				open = append(open, id)
			} else if apierr.CodeOf(err) != apierr.CodeInsufficientCredits && apierr.CodeOf(err) != apierr.CodeSpendLimitExceeded {
				t.Fatalf("op %d: hold: %v", i, err)
			}
		case op < 6 && len(open) > 0:
			j := rng.IntN(len(open))
			amt, _ := w.HoldAmount(open[j])
			if err := w.Capture(open[j], rng.Int64N(amt+1)); err != nil {
				t.Fatalf("op %d: capture: %v", i, err)
			}
			if err := w.Capture(open[j], 0); !errors.Is(err, ErrHoldSettled) {
				t.Fatalf("op %d: double capture: %v", i, err)
			}
			open = append(open[:j], open[j+1:]...)
		case op < 8 && len(open) > 0:
			j := rng.IntN(len(open))
			if err := w.Release(open[j]); err != nil {
				t.Fatalf("op %d: release: %v", i, err)
			}
			if err := w.Release(open[j]); !errors.Is(err, ErrHoldSettled) {
				t.Fatalf("op %d: double release: %v", i, err)
			}
			open = append(open[:j], open[j+1:]...)
		case op == 8:
			c.Advance(time.Duration(rng.IntN(3600)) * time.Second)
		default:
			d := int64(rng.IntN(2000) - 1000)
			if err := w.Adjust(d); err == nil {
				total += d
			}
		}
		if w.Available() < 0 || w.Held() < 0 {
			t.Fatalf("op %d: negative: %d/%d", i, w.Available(), w.Held())
		}
		if got := w.Available() + w.Held() + w.Captured(); got != total {
			t.Fatalf("op %d: available+held+captured = %d, want %d", i, got, total)
		}
		st := w.Status("k1", nil)
		if st.DailySpent > 20000 || st.DailyRemaining < 0 {
			t.Fatalf("op %d: window broken %+v", i, st)
		}
	}
	var sumOpen int64
	for _, id := range open {
		a, _ := w.HoldAmount(id)
		sumOpen += a
	}
	if sumOpen != w.Held() {
		t.Fatalf("open holds sum %d, held %d", sumOpen, w.Held())
	}
}
