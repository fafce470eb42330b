// Package ledger is a workspace's wallet: available and held credits, holds
// that are captured or released exactly once, the spend limits that apply to
// API-key spends, and low-balance detection.
//
// Concurrency: a Wallet has no mutex of its own. It belongs to one workspace
// aggregate and every method must be called with that aggregate's mutex held
// (workspace.Workspace.mu), so that a credit movement and the job record it
// belongs to change together. The OnLow hook is called with that lock held.
//
// Invariants (tested): available and held never go negative; credits are
// never created or lost by holds, captures and releases, i.e.
// available + held + captured total changes only through Adjust and Set.
package ledger

import (
	"errors"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Defaults of the interface spec's limits table.
const (
	DefaultPerGeneration = contract.PerGenerationCap
	DefaultDaily         = contract.DailyBudget
	// SpendWindow is the rolling window of the daily and key budgets.
	SpendWindow = contract.SpendWindow
)

// Errors for misuse of holds; they are programming errors, not API refusals.
var (
	ErrUnknownHold  = errors.New("ledger: unknown hold")
	ErrHoldSettled  = errors.New("ledger: hold already captured or released")
	ErrOverCapture  = errors.New("ledger: capture larger than the hold")
	ErrNegative     = errors.New("ledger: amount must not be negative")
	ErrBelowZero    = errors.New("ledger: available credits cannot go below 0")
	ErrNotWholeHold = errors.New("ledger: hold amount must be positive")
)

// HoldID names a hold within its wallet.
type HoldID int64

// Limits are the workspace's person-set limits. nil means the default.
type Limits struct {
	PerGeneration *int64
	Daily         *int64
}

// Effective returns the limits with defaults filled in.
func (l Limits) Effective() (perGeneration, daily int64) {
	perGeneration, daily = DefaultPerGeneration, DefaultDaily
	if l.PerGeneration != nil {
		perGeneration = *l.PerGeneration
	}
	if l.Daily != nil {
		daily = *l.Daily
	}
	return perGeneration, daily
}

// Spender says who takes a hold. API-key spends are bound by the spend
// limits and counted in the rolling windows; app spends (KeyID "") are not.
type Spender struct {
	KeyID string
	// KeyBudget is the key's rolling 24 h budget; nil means no limit.
	KeyBudget *int64
}

// Low is the payload of a low-balance crossing.
type Low struct {
	AvailableCredits int64
	ThresholdCredits int64
}

type hold struct {
	amount  int64
	keyID   string
	at      time.Time
	counted int64 // amount counted against the rolling windows
	settled bool
}

// Wallet is one workspace's credits. See the package comment for locking.
type Wallet struct {
	clock clock.Clock

	available int64
	held      int64
	captured  int64 // total captured since creation

	holds  map[HoldID]*hold
	nextID HoldID

	// Limits are the workspace limits; change them directly.
	Limits Limits
	// LowThreshold is the low-balance threshold in credits (0: never low).
	LowThreshold int64
	// OnLow, when set, is called once each time available credits fall
	// below LowThreshold; it re-arms when a refill (Adjust or Set) brings
	// them back to the threshold or above. It runs with the workspace lock
	// held and must not block or call back into the workspace.
	OnLow    func(Low)
	lowFired bool
}

// New returns a wallet holding balance available credits.
func New(c clock.Clock, balance int64) *Wallet {
	w := &Wallet{clock: c, available: max(balance, 0), holds: map[HoldID]*hold{}}
	return w
}

// Available returns the spendable credits.
func (w *Wallet) Available() int64 { return w.available }

// Held returns the credits under open holds.
func (w *Wallet) Held() int64 { return w.held }

// Captured returns the total captured since the wallet was made.
func (w *Wallet) Captured() int64 { return w.captured }

// Adjust adds delta (negative drains). It refuses to take available credits
// below zero and changes nothing then.
func (w *Wallet) Adjust(delta int64) error {
	if w.available+delta < 0 {
		return ErrBelowZero
	}
	w.available += delta
	w.checkLow(delta > 0)
	return nil
}

// Set makes the available credits exactly n (n >= 0); holds are untouched.
func (w *Wallet) Set(n int64) error {
	if n < 0 {
		return ErrBelowZero
	}
	refill := n > w.available
	w.available = n
	w.checkLow(refill)
	return nil
}

// checkLow fires OnLow on a downward crossing and re-arms on a refill.
func (w *Wallet) checkLow(refill bool) {
	if w.LowThreshold <= 0 {
		return
	}
	if w.available >= w.LowThreshold {
		if refill {
			w.lowFired = false
		}
		return
	}
	if !w.lowFired {
		w.lowFired = true
		if w.OnLow != nil {
			w.OnLow(Low{AvailableCredits: w.available, ThresholdCredits: w.LowThreshold})
		}
	}
}

// SpendStatus is what the rolling windows allow right now.
type SpendStatus struct {
	PerGeneration  int64
	Daily          int64
	DailySpent     int64
	DailyRemaining int64
	// KeyBudget is nil when the key has no budget (then KeyRemaining is nil).
	KeyBudget    *int64
	KeySpent     int64
	KeyRemaining *int64
}

// Status reports the limits and the rolling spend of the workspace and of
// keyID (keyBudget nil: no key budget).
func (w *Wallet) Status(keyID string, keyBudget *int64) SpendStatus {
	perGen, daily := w.Limits.Effective()
	dailySpent, keySpent := w.spent(keyID)
	s := SpendStatus{
		PerGeneration: perGen, Daily: daily, DailySpent: dailySpent,
		DailyRemaining: max(daily-dailySpent, 0), KeySpent: keySpent,
	}
	if keyBudget != nil {
		b := *keyBudget
		rem := max(b-keySpent, 0)
		s.KeyBudget, s.KeyRemaining = &b, &rem
	}
	return s
}

// spent sums the counted amounts of key holds inside the rolling window,
// for the workspace and for keyID, and forgets settled holds that left it.
func (w *Wallet) spent(keyID string) (workspace, key int64) {
	cutoff := w.clock.Now().Add(-SpendWindow)
	for id, h := range w.holds {
		if !h.at.After(cutoff) {
			if h.settled {
				delete(w.holds, id)
			}
			continue
		}
		if h.keyID == "" {
			continue
		}
		workspace += h.counted
		if keyID != "" && h.keyID == keyID {
			key += h.counted
		}
	}
	return workspace, key
}

// CheckLimits reports the spend-limit refusal a hold of amount by sp would
// meet (an *apierr.Error), or nil. The binding limit is the one with the smallest remaining
// allowance (ties in the order per-generation, key budget, daily); 0 allows
// no spend. App spends (sp.KeyID "") are never limited.
func (w *Wallet) CheckLimits(amount int64, sp Spender) error {
	if sp.KeyID == "" {
		return nil
	}
	perGen, daily := w.Limits.Effective()
	dailySpent, keySpent := w.spent(sp.KeyID)
	type bound struct {
		by        apierr.Bound
		limit     int64
		remaining int64
	}
	bounds := []bound{{apierr.BoundOrgPerGeneration, perGen, perGen}}
	if sp.KeyBudget != nil {
		bounds = append(bounds, bound{apierr.BoundAPIKeyBudget, *sp.KeyBudget, max(*sp.KeyBudget-keySpent, 0)})
	}
	bounds = append(bounds, bound{apierr.BoundOrgDaily, daily, max(daily-dailySpent, 0)})
	tight := bounds[0]
	for _, b := range bounds[1:] {
		if b.remaining < tight.remaining {
			tight = b
		}
	}
	if amount <= tight.remaining {
		return nil
	}
	var msg string
	switch tight.by {
	case apierr.BoundOrgPerGeneration:
		msg = fmt.Sprintf("The workspace allows at most %d credits per agent generation; this one needs a hold of %d. Ask an owner or admin to raise the limit, or make the request cheaper.", tight.limit, amount)
	case apierr.BoundAPIKeyBudget:
		msg = fmt.Sprintf("This key's 24 hour budget of %d credits has %d left; this request needs a hold of %d. Wait for earlier spends to leave the window or ask for a larger budget.", tight.limit, tight.remaining, amount)
	default:
		msg = fmt.Sprintf("The workspace's 24 hour agent limit of %d credits has %d left; this request needs a hold of %d. Wait for earlier spends to leave the window or ask an owner or admin to raise it.", tight.limit, tight.remaining, amount)
	}
	return apierr.SpendLimitExceeded(tight.by, tight.limit, tight.remaining, msg)
}

// CanHold reports the refusal a hold of amount by sp would meet, in the submit check order:
// spend_limit_exceeded (API-key spends, CheckLimits), then insufficient_credits with the
// shortfall; nil when the hold may be taken. It is the one "can this spender hold N credits"
// of submits, workflow invokes and Hold. max_credits_exceeded is the caller's check, made before.
func (w *Wallet) CanHold(amount int64, sp Spender) error {
	if err := w.CheckLimits(amount, sp); err != nil {
		return err
	}
	if amount > w.available {
		short := amount - w.available
		return apierr.InsufficientCredits(short, fmt.Sprintf("The workspace has %d credits available and this request needs a hold of %d (%d short). Top up, or make the request cheaper.", w.available, amount, short))
	}
	return nil
}

// Hold takes amount (> 0) from available into held for sp, after CanHold.
func (w *Wallet) Hold(amount int64, sp Spender) (HoldID, error) {
	if amount <= 0 {
		return 0, ErrNotWholeHold
	}
	if err := w.CanHold(amount, sp); err != nil {
		return 0, err
	}
	return w.Take(amount, sp)
}

// Take is Hold without asking CanHold again, for a caller that asked CanHold for at least the
// total it takes while holding the same workspace lock (a submit asks once, at its spend-caps
// step, for every generation's hold, and takes one hold per generation when it accepts). It still
// never takes available credits below zero (ErrBelowZero) or holds nothing (ErrNotWholeHold).
func (w *Wallet) Take(amount int64, sp Spender) (HoldID, error) {
	switch {
	case amount <= 0:
		return 0, ErrNotWholeHold
	case amount > w.available:
		return 0, ErrBelowZero
	}
	w.available -= amount
	w.held += amount
	w.nextID++
	id := w.nextID
	h := &hold{amount: amount, keyID: sp.KeyID, at: w.clock.Now()}
	if sp.KeyID != "" {
		h.counted = amount
	}
	w.holds[id] = h
	w.checkLow(false)
	return id, nil
}

// HoldAmount returns an open hold's amount.
func (w *Wallet) HoldAmount(id HoldID) (int64, error) {
	h, ok := w.holds[id]
	if !ok {
		return 0, ErrUnknownHold
	}
	if h.settled {
		return 0, ErrHoldSettled
	}
	return h.amount, nil
}

// Capture charges amount (0 <= amount <= hold) and releases the remainder
// to available. A hold is settled exactly once: a second Capture or a
// Release after it fails with ErrHoldSettled. The captured amount keeps
// counting in the rolling windows; the released remainder is given back.
func (w *Wallet) Capture(id HoldID, amount int64) error {
	h, ok := w.holds[id]
	switch {
	case !ok:
		return ErrUnknownHold
	case h.settled:
		return ErrHoldSettled
	case amount < 0:
		return ErrNegative
	case amount > h.amount:
		return ErrOverCapture
	}
	h.settled = true
	w.held -= h.amount
	w.captured += amount
	w.available += h.amount - amount
	if h.keyID != "" {
		h.counted = amount
	}
	return nil
}

// Release returns the whole hold to available (a failed job costs nothing)
// and gives its amount back to the rolling windows. Exactly once, as Capture.
func (w *Wallet) Release(id HoldID) error {
	h, ok := w.holds[id]
	switch {
	case !ok:
		return ErrUnknownHold
	case h.settled:
		return ErrHoldSettled
	}
	h.settled = true
	w.held -= h.amount
	w.available += h.amount
	h.counted = 0
	return nil
}
