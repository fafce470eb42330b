package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
)

// The target's clock. Specs reason about time with the service clock the target reports (GET
// /_control/v1/clock) rather than with counts of their own advances, so that they are right on a
// manual clock (time moves only when a spec advances it), on a running one (×1 or ×N, where time
// also passes by itself) and, without control, against wall time.

// jumpMemory is how long (wall time) the run remembers a clock advance it made: an attempt the
// target stamped before a jump may still be on its way for about that long.
const jumpMemory = time.Minute

// targetClock is what the run knows of the target's service clock. It is safe for concurrent use.
type targetClock struct {
	mu    sync.Mutex // guards known, scale, jumps
	known bool       // the control API reported the clock
	scale float64    // service seconds per wall second; 0 for a manual clock
	jumps []jump     // advances made within the last jumpMemory
}

// jump is one advance of the service clock: from service time from, made at wall time at.
type jump struct {
	at   time.Time
	from time.Time
}

// readClock reads GET /clock of the control API directly (not recorded in transcripts: the clock
// is read often, and its answers are checked by the control specs).
func (f *Framework) readClock(ctx context.Context) (now time.Time, scale float64, err error) {
	if f.controlRoot == nil {
		return time.Time{}, 0, fmt.Errorf("no control API")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.resolve(f.controlRoot, "/clock").String(), nil)
	if err != nil {
		return time.Time{}, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+f.cfg.ControlToken)
	res, err := f.httpClient().Do(req)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("control GET /clock: %s", f.redactor.String(headerOverCap(err, "GET /clock").Error()))
	}
	defer res.Body.Close()
	var doc struct {
		Now       time.Time `json:"now"`
		TimeScale *float64  `json:"time_scale"`
	}
	if res.StatusCode != http.StatusOK {
		return time.Time{}, 0, fmt.Errorf("control GET /clock answered %d", res.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxClockAnswer)).Decode(&doc); err != nil || doc.Now.IsZero() || doc.TimeScale == nil {
		return time.Time{}, 0, fmt.Errorf("control GET /clock: want now and time_scale")
	}
	return doc.Now.UTC(), *doc.TimeScale, nil
}

// learnClock reads the target's clock mode once, at setup, when the run has control.
func (f *Framework) learnClock(ctx context.Context) error {
	if f.controlRoot == nil {
		return nil
	}
	_, scale, err := f.readClock(ctx)
	if err != nil {
		return fmt.Errorf("read the target's clock: %w", err)
	}
	f.clock.mu.Lock()
	defer f.clock.mu.Unlock()
	f.clock.known, f.clock.scale = true, scale
	return nil
}

// clockScale is the target's service seconds per wall second: the control API's report when there
// is one (0 for a manual clock), else the configured time scale.
func (f *Framework) clockScale() float64 {
	f.clock.mu.Lock()
	defer f.clock.mu.Unlock()
	if f.clock.known {
		return f.clock.scale
	}
	return f.cfg.TimeScale
}

// wallScale is the scale real-time waits divide by: the reported scale of a running clock, else
// the configured time scale.
func (f *Framework) wallScale() float64 {
	if sc := f.clockScale(); sc > 0 {
		return sc
	}
	return f.cfg.TimeScale
}

// manualClock reports whether the target's clock moves only when the run advances it.
func (f *Framework) manualClock() bool {
	f.clock.mu.Lock()
	defer f.clock.mu.Unlock()
	return f.clock.known && f.clock.scale == 0
}

// noteJump records an advance that moved service time on from from.
func (f *Framework) noteJump(from time.Time) {
	f.clock.mu.Lock()
	defer f.clock.mu.Unlock()
	now := time.Now()
	kept := f.clock.jumps[:0]
	for _, j := range f.clock.jumps {
		if now.Sub(j.at) < jumpMemory {
			kept = append(kept, j)
		}
	}
	f.clock.jumps = append(kept, jump{at: now, from: from})
}

// serviceNow is the target's service time: the control API's clock when there is one, else the
// wall clock (a service without control runs on real time).
func (f *Framework) serviceNow(ctx context.Context) (time.Time, error) {
	if f.controlRoot == nil {
		return time.Now().UTC(), nil
	}
	now, _, err := f.readClock(ctx)
	return now, err
}

// stampWindow is the receiver's one reading of the target's clock per arriving webhook attempt
// (receiver.Config.Window). now is the arrival time it records: the target's service time on a
// manual clock, else the wall clock (as targetNow). earliest and latest span the times the target
// may have stamped the attempt with: its service time now, back to where its clock stood before
// the advances of the last minute (an attempt sent before a jump may arrive after it); and on a
// running clock also the wall clock, for the interface does not say which clock stamps
// webhook-timestamp, so either reading passes. The service time is read once for all three.
func (f *Framework) stampWindow() (now, earliest, latest time.Time) {
	local := time.Now()
	wall := local.UTC()
	if f.controlRoot == nil {
		return local, wall, wall
	}
	svc, err := f.serviceNow(context.Background())
	if err != nil {
		return local, wall, wall
	}
	earliest, latest = svc, svc
	f.clock.mu.Lock()
	for _, j := range f.clock.jumps {
		if wall.Sub(j.at) < jumpMemory && j.from.Before(earliest) {
			earliest = j.from
		}
	}
	manual := f.clock.known && f.clock.scale == 0
	running := !f.clock.known || f.clock.scale > 0
	f.clock.mu.Unlock()
	if running {
		if wall.Before(earliest) {
			earliest = wall
		}
		if wall.After(latest) {
			latest = wall
		}
	}
	now = local
	if manual {
		now = svc
	}
	return now, earliest, latest
}

// Span is a stretch of the target's service time known to contain something the spec did: it
// began no earlier than From and ended no later than To. On a manual clock that nothing else moves,
// From and To are exact.
type Span struct{ From, To time.Time }

// Length is the longest the stretch can have lasted.
func (p Span) Length() time.Duration { return p.To.Sub(p.From) }

// ClockNow returns the target's service time (the wall clock when the run has no control API).
func (s *Spec) ClockNow(ctx context.Context) time.Time {
	GinkgoHelper()
	now, err := s.f.serviceNow(ctx)
	Expect(err).NotTo(HaveOccurred(), "read the target's clock")
	return now
}

// During runs do and returns the span of service time it took, read from the target's clock just
// before and just after.
func (s *Spec) During(ctx context.Context, do func()) Span {
	GinkgoHelper()
	from := s.ClockNow(ctx)
	do()
	return Span{From: from, To: s.ClockNow(ctx)}
}

// ManualClock reports whether the target's clock moves only when the run advances it (control
// reports time_scale 0). On such a target, nothing a spec has not caused can happen meanwhile.
func (s *Spec) ManualClock() bool { return s.f.manualClock() }

// Reference reports whether the target is mediaspec's own mock (Config.Reference). A spec may use
// a choice the mock documents to reach the same verdict sooner (e.g. its webhook attempt deadline
// runs on its clock, so a spec moves the clock instead of waiting), never to pass a server it
// would fail otherwise: against any other target it takes the way that holds for every server.
func (s *Spec) Reference() bool { return s.f.cfg.Reference }

// ClockScale is how many seconds of service time pass per wall second on the target: 0 on a manual
// clock; the control API's report, or the configured --time-scale without control.
func (s *Spec) ClockScale() float64 { return s.f.clockScale() }

// Undecidable skips the spec because the target's clock ran too far while it worked, naming what
// would let it decide (a slower or a manual clock).
func (s *Spec) Undecidable(what string, ran time.Duration) {
	SkipFor(Undecidable(fmt.Sprintf("the target's clock ran %s while %s; run the target at a lower --time-scale or with a manual clock (mediaspec mock --clock manual)",
		ran.Round(time.Second), what)))
}

// InWindow runs do, whose calls must all fall inside one stretch of service time shorter than
// window (a rate-limit bucket's 60 s). When do fails and the target's clock ran window or more
// meanwhile, the spec is skipped as undecidable instead of failed: on a running clock a slow run
// lets the window slide under it. On a manual clock the span is exact and nothing is skipped.
func (s *Spec) InWindow(ctx context.Context, window time.Duration, what string, do func()) {
	GinkgoHelper()
	var err error
	span := s.During(ctx, func() { err = InterceptGomegaFailure(do) })
	if err != nil {
		if span.Length() >= window {
			s.Undecidable(what, span.Length())
		}
		Fail(err.Error())
	}
}
