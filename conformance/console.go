package conformance

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/report"
)

// heartbeat is the longest the console stays silent while specs run.
const heartbeat = 10 * time.Second

// console is the check command's output: a line per area as it completes (a line per spec with
// -v), a progress line when nothing was said for a while, then failures grouped by cause and
// skips by reason. It writes plain text: no escape codes, whatever the terminal.
type console struct {
	w       io.Writer
	verbose bool
	total   map[string]int // selected specs per area
	started time.Time

	mu       sync.Mutex // guards the rest
	done     map[string]*areaTally
	running  map[int]specEvent // per process (0 without --procs): the spec it runs now
	lastLine time.Time
	stop     chan struct{}
	stopped  bool
}

// specEvent is one spec starting or ending, as the console needs it; a process of a split run
// (check --procs) sends it to the parent as a line of JSON.
type specEvent struct {
	Proc     int           `json:"proc"`
	Area     string        `json:"area"`
	Text     string        `json:"text"`
	Leaf     string        `json:"leaf"`
	Rules    []string      `json:"rules,omitempty"`
	State    string        `json:"state,omitempty"` // ok, FAIL, BLKD (blocked), skip, stop (ended specs)
	RunTime  time.Duration `json:"run_time_ns,omitempty"`
	Started  time.Time     `json:"-"`
	Selected bool          `json:"-"`
}

// eventOf is a Ginkgo spec report as a specEvent. stopped is when the run was stopped (nil: it
// was not): a spec that failed after it, or was not reached, was interrupted, as the reports say.
func eventOf(r types.SpecReport, stopped *time.Time) specEvent {
	rules := ruleLabels(r.Labels())
	sr := report.SpecResult{State: report.Passed, Rules: rules, Reason: r.FailureMessage()}
	switch {
	case r.State.Is(types.SpecStateInterrupted):
		sr.State = report.Interrupted
	case r.State.Is(types.SpecStateFailureStates) && stopped != nil && !r.EndTime.Before(*stopped):
		sr.State = report.Interrupted
	case r.State.Is(types.SpecStateFailureStates):
		sr.State = report.Failed
	case r.State.Is(types.SpecStatePassed):
	case stopped != nil && sr.Reason == "":
		sr.State = report.Interrupted
	default:
		sr.State = report.Skipped
	}
	for _, e := range r.ReportEntries {
		switch e.Name {
		case framework.FailedRulesEntry:
			if sr.State == report.Failed {
				sr.FailedRules = strings.Fields(e.StringRepresentation())
			}
		case framework.UnjudgedRulesEntry:
			sr.Unjudged = strings.Fields(e.StringRepresentation())
		}
	}
	// Blocked when the failed step checked only rules the spec does not carry; strict-only when it
	// checked only rules the run does not judge, or skipped for that reason (report.Settle).
	state := map[string]string{report.Passed: "ok  ", report.Failed: "FAIL", report.Blocked: "BLKD", report.Skipped: "skip",
		report.Interrupted: "stop", report.StrictOnly: "strc"}[report.Settle(sr).State]
	return specEvent{Area: framework.AreaOf(r.LeafNodeLocation.FileName), Text: r.FullText(), Leaf: r.LeafNodeText,
		Rules: rules, State: state, RunTime: r.RunTime}
}

type areaTally struct{ passed, failed, blocked, skipped, interrupted, strictOnly int }

func (t *areaTally) n() int {
	return t.passed + t.failed + t.blocked + t.skipped + t.interrupted + t.strictOnly
}

func newConsole(w io.Writer, verbose bool, total map[string]int) *console {
	return &console{w: w, verbose: verbose, total: total,
		done: map[string]*areaTally{}, running: map[int]specEvent{}, stop: make(chan struct{})}
}

// start prints the opening line (the run's headline: mode, target, budget, what it can judge) and
// starts the heartbeat.
func (c *console) start(headline string) {
	c.mu.Lock()
	c.started = time.Now()
	c.lastLine = c.started
	c.mu.Unlock()
	fmt.Fprintln(c.w, headline)
	go c.beat()
}

func (c *console) beat() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-t.C:
			c.mu.Lock()
			if !c.stopped && now.Sub(c.lastLine) >= heartbeat && len(c.running) > 0 {
				// The spec that has run longest, in whichever process.
				var cur specEvent
				for _, ev := range c.running {
					if cur.Started.IsZero() || ev.Started.Before(cur.Started) {
						cur = ev
					}
				}
				a := c.tally(cur.Area)
				procs := ""
				if len(c.running) > 1 {
					procs = fmt.Sprintf(" (%d processes running)", len(c.running))
				}
				fmt.Fprintf(c.w, "  ... %s: %d of %d done, %s elapsed%s; running for %s: %s\n", cur.Area, a.n(), c.total[cur.Area],
					elapsed(now.Sub(c.started)), procs, elapsed(now.Sub(cur.Started)), report.Clip(cur.Leaf, 90))
				c.lastLine = now
			}
			c.mu.Unlock()
		}
	}
}

// tally is area's tally; c.mu is held.
func (c *console) tally(area string) *areaTally {
	a := c.done[area]
	if a == nil {
		a = &areaTally{}
		c.done[area] = a
	}
	return a
}

// finish stops the heartbeat.
func (c *console) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped = true
		close(c.stop)
	}
}

// willRun notes which spec a process runs now (for the heartbeat).
func (c *console) willRun(ev specEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev.Started = time.Now()
	c.running[ev.Proc] = ev
	c.tally(ev.Area)
}

// didRun counts a finished spec and prints its area's line when the area is complete.
func (c *console) didRun(ev specEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, ev.Proc)
	if c.stopped {
		return
	}
	a := c.tally(ev.Area)
	switch ev.State {
	case "stop":
		a.interrupted++
	case "strc":
		a.strictOnly++
	case "skip":
		a.skipped++
	case "FAIL":
		a.failed++
	case "BLKD":
		a.blocked++
	default:
		a.passed++
	}
	now := time.Now()
	if c.verbose {
		fmt.Fprintf(c.w, "  %s %s: %s (%s)\n", ev.State, strings.Join(ev.Rules, ", "), report.Clip(ev.Text, 110),
			ev.RunTime.Round(time.Millisecond))
		c.lastLine = now
	}
	if a.n() == c.total[ev.Area] {
		fmt.Fprintf(c.w, "%-14s %3d specs: %s  (%s elapsed)\n", ev.Area, a.n(), a.line(), elapsed(now.Sub(c.started)))
		c.lastLine = now
	}
}

// line is the area's tally in the words of the spec line (report.Results.SpecLine).
func (t *areaTally) line() string {
	out := fmt.Sprintf("%d passed", t.passed)
	if t.failed > 0 {
		out += fmt.Sprintf(", %d FAILED", t.failed)
	}
	if t.blocked > 0 {
		out += fmt.Sprintf(", %d BLOCKED", t.blocked)
	}
	if t.skipped > 0 {
		out += fmt.Sprintf(", %d skipped", t.skipped)
	}
	if t.interrupted > 0 {
		out += fmt.Sprintf(", %d interrupted (not run)", t.interrupted)
	}
	if t.strictOnly > 0 {
		out += fmt.Sprintf(" (%d strict-only)", t.strictOnly)
	}
	return out
}

func elapsed(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

var ruleID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]+-\d+$`) })

func ruleLabels(labels []string) []string {
	var out []string
	for _, l := range labels {
		if ruleID().MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// maxSpecsPerCause is how many specs a cause lists by name.
const maxSpecsPerCause = 5

// maxRulesPerCause is how many rule ids a cause lists by id.
const maxRulesPerCause = 12

// maxCauses is how many causes the console details; the reports have them all.
const maxCauses = 25

// summary prints skips grouped by reason (they add up to the skipped count; specs the label
// filter left out are not among them), then the root causes of failures: each a rule broken on a
// call (the one whose answer the failed assertion judged), with the specs that failed on it and
// those it blocked.
func (c *console) summary(res report.Results, reportHint string) {
	causes := res.Causes()
	skips := map[string]int{}
	for _, s := range res.Specs {
		if s.State == report.Skipped && s.Selected() {
			skips[s.Reason]++
		}
	}
	if len(skips) > 0 {
		fmt.Fprintln(c.w)
		fmt.Fprintln(c.w, "Skipped, by reason:")
		reasons := make([]string, 0, len(skips))
		for r := range skips {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool {
			if skips[reasons[i]] != skips[reasons[j]] {
				return skips[reasons[i]] > skips[reasons[j]]
			}
			return reasons[i] < reasons[j]
		})
		for _, r := range reasons {
			fmt.Fprintf(c.w, "  %4d  %s\n", skips[r], report.Clip(firstLine(r), 150))
		}
	}
	if len(res.Advisories) > 0 {
		fmt.Fprintln(c.w)
		fmt.Fprintf(c.w, "Advisories: %d differences from the reference's own choices that the interface text allows "+
			"(never failures; --strict makes them failures):\n", len(res.Advisories))
		for i, a := range res.Advisories {
			if i == maxCauses {
				fmt.Fprintf(c.w, "  ... and %d more: see the reports (--html-report, --json-report)\n", len(res.Advisories)-i)
				break
			}
			fmt.Fprintf(c.w, "  - %s\n", report.Clip(a.Line(), 200))
		}
	}
	c.apart(res)
	c.notJudged(res)
	if len(causes) == 0 {
		return
	}
	fmt.Fprintln(c.w)
	stopped := fmt.Sprintf("%d specs failed", res.SpecCounts.Failed)
	if res.SpecCounts.Blocked > 0 {
		stopped += fmt.Sprintf(", %d blocked", res.SpecCounts.Blocked)
	}
	fmt.Fprintf(c.w, "Root causes: %d (%s)%s\n", len(causes), stopped, reportHint)
	for i, cs := range causes {
		if i == maxCauses {
			left := 0
			for _, rest := range causes[i:] {
				left += len(rest.Specs)
			}
			fmt.Fprintf(c.w, "\n... and %d more causes (of %d specs) not shown: see the reports (--html-report, --json-report)\n",
				len(causes)-i, left)
			break
		}
		first := cs.Specs[0]
		fmt.Fprintf(c.w, "\n%d) %s\n", i+1, cs.Sentence)
		rules, more := cs.Rules, ""
		if len(rules) > maxRulesPerCause {
			rules, more = rules[:maxRulesPerCause], fmt.Sprintf(" and %d more", len(cs.Rules)-maxRulesPerCause)
		}
		fmt.Fprintf(c.w, "   rules: %s%s\n", strings.Join(rules, ", "), more)
		switch len(cs.Calls) {
		case 0:
		case 1:
			fmt.Fprintf(c.w, "   call: %s\n", cs.Calls[0])
		default:
			fmt.Fprintf(c.w, "   calls (%d): %s\n", len(cs.Calls), cs.CallList())
		}
		if cs.Location != "" {
			fmt.Fprintf(c.w, "   at: %s\n", cs.Location)
		}
		fmt.Fprintf(c.w, "   %d spec(s): %s\n", len(cs.Specs), cs.Tally())
		for j, s := range cs.Specs {
			if j == maxSpecsPerCause {
				fmt.Fprintf(c.w, "     ... and %d more\n", len(cs.Specs)-j)
				break
			}
			blocked := ""
			if s.State == report.Blocked {
				blocked = " [blocked]"
			}
			where := ""
			if s.Location != "" {
				where = " (" + s.Location + ")"
			}
			fmt.Fprintf(c.w, "     - %s%s%s\n", report.Clip(s.Text, 110), where, blocked)
		}
		// The call whose answer failed; when the failure names none, the last call before it, said
		// so: never a call made after the failure (waiting for the spec's jobs).
		call, label := first.FailedCall, "failing call:"
		if call == "" {
			call, label = first.LastCall, "last call before the failure (the failure names no call):"
		}
		if call != "" {
			fmt.Fprintln(c.w, "   "+label)
			for _, line := range strings.Split(strings.TrimRight(call, "\n"), "\n") {
				fmt.Fprintln(c.w, "     "+report.Clip(line, 200))
			}
		}
	}
	fmt.Fprintln(c.w)
}

// apart prints the specs outside the counts, each kind with its reasons: interrupted (the run
// was stopped), strict-only (judged with --strict) and not selected (the label filter, another
// shard), never among the skips.
func (c *console) apart(res report.Results) {
	reasons := map[string]map[string]int{}
	for _, s := range res.Specs {
		switch s.State {
		case report.Interrupted, report.NotSelected:
			why := s.Reason
			if s.State == report.Interrupted {
				why = res.Run.Cancelled
				if why == "" {
					why = "the run was stopped"
				}
			}
			if reasons[s.State] == nil {
				reasons[s.State] = map[string]int{}
			}
			reasons[s.State][why]++
		}
	}
	for _, k := range []struct{ state, title string }{
		{report.Interrupted, "interrupted (not run to their end: the run was stopped)"},
		{report.NotSelected, "not selected (not counted as skipped)"},
	} {
		if len(reasons[k.state]) == 0 {
			continue
		}
		fmt.Fprintln(c.w)
		for why, n := range reasons[k.state] {
			fmt.Fprintf(c.w, "%d specs %s: %s\n", n, k.title, why)
		}
	}
	if n := res.SpecCounts.StrictOnly; n > 0 {
		fmt.Fprintf(c.w, "\n%d specs strict-only (about the reference's own choices, not judged against another server; --strict runs them)\n", n)
	}
}

// maxIDsPerNeed is how many rule ids the console lists per need; the reports have them all.
const maxIDsPerNeed = 10

// notJudged prints the text rules the run did not fully judge, grouped by the lowest tier that would
// judge them, then by what no tier offers.
func (c *console) notJudged(res report.Results) {
	groups := res.NotJudged()
	if len(groups) == 0 {
		return
	}
	fmt.Fprintln(c.w)
	fmt.Fprintf(c.w, "Text rules not fully judged, by the lowest tier that would judge them (%d not judged, %d partly judged):\n",
		res.Coverage.NotJudged, res.Coverage.PartlyJudged)
	for _, g := range groups {
		ids, more := g.Rules, ""
		if g.Need == report.NeedNotSelected {
			fmt.Fprintf(c.w, "  %4d  %s\n", len(g.Rules), g.Title)
			continue
		}
		if len(ids) > maxIDsPerNeed {
			ids, more = ids[:maxIDsPerNeed], fmt.Sprintf(" and %d more", len(g.Rules)-maxIDsPerNeed)
		}
		fmt.Fprintf(c.w, "  %4d  %s: %s%s\n", len(g.Rules), g.Title, strings.Join(ids, ", "), more)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
