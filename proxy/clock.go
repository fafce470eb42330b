package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/spec/judge"
)

// The service clock as the proxy knows it. A server with the test-control API may run its own
// clock (manual, or scaled); the proxy learns it from the control answers that pass through it
// (GET /_control/v1/clock and POST /_control/v1/clock/advance carry `now`) and from the advances
// in flight. Without a control API, service time is the proxy's wall clock.

// serviceClock is guarded by Proxy.clockMu.
type serviceClock struct {
	offset  time.Duration // service time minus wall time at the last observation
	scaled  bool          // a time_scale other than 1 was seen: wall gaps say nothing
	pending time.Duration // seconds of advances in flight
	scale   float64       // the last time_scale seen (1 until one is seen; 0 is a manual clock)
	// scaleKnown: a control answer gave time_scale. Until then a server with a control API may run
	// a manual clock, and wall time is no lower bound of its time.
	scaleKnown bool
	// advances are the latest clock advances the traffic showed (at most MaxAdvances, oldest
	// first), with their wall times: the service time between two exchanges is bounded by them.
	advances []advance
	forgot   time.Time // the start of the latest advance no longer kept (zero: none forgotten)
}

// advance is one POST /_control/v1/clock/advance seen by the proxy, on its wall clock; end is zero
// while it is in flight.
type advance struct {
	start, end time.Time
	d          time.Duration
	moved      bool // answered 200: the clock moved by d
}

// MaxAdvances is how many clock advances the proxy keeps to bound service time across exchanges.
const MaxAdvances = 256

// serviceElapsed bounds the service time that passed between an instant of one exchange (wall
// times from..fromEnd) and an instant of a later one (to..toEnd): at least lo (wall time between
// them at the clock's scale, when the scale is known or no control API was seen, plus the advances
// that ran wholly between them), at most hi (wall time
// across both at the clock's scale, plus every advance that may have overlapped). hiKnown is false
// when advances that may matter were forgotten. The bounds hold when the service clock moves only
// with wall time and the advances the proxy carries (a server without a control API runs on the
// wall clock).
func (p *Proxy) serviceElapsed(from, fromEnd, to, toEnd time.Time) (lo, hi time.Duration, hiKnown bool) {
	control := p.controlToken.Load() != nil
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	scale := p.clk.scale
	if gap := to.Sub(fromEnd); gap > 0 && (p.clk.scaleKnown || !control) {
		lo = time.Duration(float64(gap) * scale)
	}
	hi = time.Duration(float64(toEnd.Sub(from)) * scale)
	for _, a := range p.clk.advances {
		if a.moved && !a.start.Before(fromEnd) && !a.end.After(to) {
			lo += a.d
		}
		if (a.end.IsZero() || !a.end.Before(from)) && !a.start.After(toEnd) {
			hi += a.d
		}
	}
	return lo, hi, p.clk.forgot.IsZero() || p.clk.forgot.Before(from)
}

// BasePath is the path of the versioned API root the proxy judges (/api/v1 unless the upstream's
// base URL names another).
func (p *Proxy) BasePath() string { return p.basePath }

// serviceNow is the proxy's estimate of the service clock now.
func (p *Proxy) serviceNow() time.Time {
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	return p.now().Add(p.clk.offset)
}

// serviceSpan is the proxy's estimate of the service clock now, and the latest it may read (the
// estimate plus the advances in flight, which may already have moved it).
func (p *Proxy) serviceSpan() (now, latest time.Time) {
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	now = p.now().Add(p.clk.offset)
	return now, now.Add(p.clk.pending)
}

// scheduleJudgeable reports whether gaps between arrivals can be read as service time.
func (p *Proxy) scheduleJudgeable() bool {
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	return !p.clk.scaled
}

// clockWindow is the receiver's Window: arrival on the wall clock, and the span the sender's
// clock may show: between the wall clock and the estimated service clock, widened by the advances
// in flight (a manual clock sends the retries an advance makes due before it answers). When the
// traffic showed a control token, the service clock is read first (GET /_control/v1/clock, the
// one call the proxy makes of its own; the token is kept in memory only).
func (p *Proxy) clockWindow() (now, earliest, latest time.Time) {
	p.readServiceClock()
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	now = p.now()
	svc := now.Add(p.clk.offset)
	earliest, latest = now, now
	if svc.Before(earliest) {
		earliest = svc
	}
	if svc.After(latest) {
		latest = svc
	}
	return now, earliest, latest.Add(p.clk.pending)
}

// trackAdvance notes an advance of the service clock while it is in flight; the returned function
// ends it (moved: the advance was answered 200). Called from ServeHTTP for POST /_control/v1/clock/advance, whose body it reads whole
// (a few bytes) and hands on unchanged.
func (p *Proxy) trackAdvance(r *http.Request) func(moved bool) {
	none := func(bool) {}
	if r.Method != http.MethodPost || r.URL.Path != judge.ControlBase+"/clock/advance" || r.Body == nil {
		return none
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBody))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil {
		return none
	}
	var body struct {
		Seconds float64 `json:"seconds"`
	}
	if json.Unmarshal(b, &body) != nil || body.Seconds <= 0 {
		return none
	}
	d := time.Duration(body.Seconds * float64(time.Second))
	p.clockMu.Lock()
	p.clk.pending += d
	a := &advance{start: p.now(), d: d}
	if len(p.clk.advances) >= MaxAdvances {
		p.clk.forgot = p.clk.advances[0].start
		p.clk.advances = append(p.clk.advances[:0], p.clk.advances[1:]...)
	}
	p.clk.advances = append(p.clk.advances, *a)
	p.clockMu.Unlock()
	return func(moved bool) {
		p.clockMu.Lock()
		defer p.clockMu.Unlock()
		p.clk.pending -= d
		for i := range p.clk.advances {
			if x := &p.clk.advances[i]; x.start.Equal(a.start) && x.d == d && x.end.IsZero() {
				x.end, x.moved = p.now(), moved
				break
			}
		}
	}
}

// readServiceClock reads the upstream's control clock with the last control token the traffic
// showed, if any, and learns its offset.
func (p *Proxy) readServiceClock() {
	tok, _ := p.controlToken.Load().(string)
	if tok == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.upstream.String()+judge.ControlBase+"/clock", nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", tok)
	res, err := p.clockClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4096))
	if err != nil || res.StatusCode != http.StatusOK {
		return
	}
	p.learnClock(&exchange{path: judge.ControlBase + "/clock", answer: b, end: p.now()})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// learnClock reads `now` (and `time_scale`) from a control answer about the clock.
func (p *Proxy) learnClock(ex *exchange) {
	rel := strings.TrimPrefix(ex.path, judge.ControlBase)
	if rel != "/clock" && rel != "/clock/advance" {
		return
	}
	var ans struct {
		Now       time.Time `json:"now"`
		TimeScale *float64  `json:"time_scale"`
	}
	if json.Unmarshal(ex.answer, &ans) != nil || ans.Now.IsZero() {
		return
	}
	p.clockMu.Lock()
	defer p.clockMu.Unlock()
	p.clk.offset = ans.Now.Sub(ex.end)
	if ans.TimeScale != nil {
		p.clk.scale, p.clk.scaleKnown = *ans.TimeScale, true
		if *ans.TimeScale != 1 {
			p.clk.scaled = true
		}
	}
}
