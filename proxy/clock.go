package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/audit"
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
// ends it. Called from ServeHTTP for POST /_control/v1/clock/advance, whose body it reads whole
// (a few bytes) and hands on unchanged.
func (p *Proxy) trackAdvance(r *http.Request) func() {
	if r.Method != http.MethodPost || r.URL.Path != audit.ControlBase+"/clock/advance" || r.Body == nil {
		return func() {}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBody))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil {
		return func() {}
	}
	var body struct {
		Seconds float64 `json:"seconds"`
	}
	if json.Unmarshal(b, &body) != nil || body.Seconds <= 0 {
		return func() {}
	}
	d := time.Duration(body.Seconds * float64(time.Second))
	p.clockMu.Lock()
	p.clk.pending += d
	p.clockMu.Unlock()
	return func() {
		p.clockMu.Lock()
		p.clk.pending -= d
		p.clockMu.Unlock()
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.upstream.String()+audit.ControlBase+"/clock", nil)
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
	p.learnClock(&exchange{path: audit.ControlBase + "/clock", answer: b, end: p.now()})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// learnClock reads `now` (and `time_scale`) from a control answer about the clock.
func (p *Proxy) learnClock(ex *exchange) {
	rel := strings.TrimPrefix(ex.path, audit.ControlBase)
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
	if ans.TimeScale != nil && *ans.TimeScale != 1 {
		p.clk.scaled = true
	}
}
