package wrongservers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/report"
)

// after is the value that follows flag in args ("" when flag is absent or last).
func after(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// Modes p and t run the mock as .ci/check-modes does (no control API, a running clock at x10, its
// profile written for the check, test inputs in t only) and the check from that profile alone,
// with the row's filter and the receiver behind the webhook proxy; mode b keeps the control API.
func TestModeArgs(t *testing.T) {
	srv := Server{Name: "x", Rules: []string{"AUTH-001", "WH-011"}}
	tg := target{info: mockInfo{BaseURL: "http://127.0.0.1:1/api/v1", ControlURL: "http://127.0.0.1:2/_control/v1", ControlToken: "tok"},
		rcvListen: "127.0.0.1:3", hookURL: "http://127.0.0.1:4", profile: "/d/profile.yaml"}
	for _, mode := range []string{"p", "t"} {
		s := inMode(srv, mode, 0)
		if s.timeout < profileCheckTimeout {
			t.Errorf("mode %s: timeout %s", mode, s.timeout)
		}
		m := mockArgs(s, "127.0.0.1:5", "http://127.0.0.1:6", tg.profile)
		if !slices.Contains(m, "--no-control") || after(m, "--profile-out") != tg.profile || after(m, "--time-scale") != "10" ||
			slices.Contains(m, "--clock") || slices.Contains(m, "--test-inputs") != (mode == "t") {
			t.Errorf("mode %s: mock %v", mode, m)
		}
		c := checkArgs("bin", s, tg, "/d/report.json", s.timeout)
		for _, f := range []string{"--control-url", "--control-token", "--base-url", "--reference", "--procs"} {
			if slices.Contains(c, f) {
				t.Errorf("mode %s: check has %s: %v", mode, f, c)
			}
		}
		if after(c, "--config") != tg.profile || after(c, "--receiver-listen") != tg.rcvListen || after(c, "--receiver-url") != tg.hookURL ||
			!slices.Contains(c, "--slow") || !slices.Contains(c, "--real-time") || after(c, "--label-filter") != "AUTH-001 || WH-011" ||
			after(c, "--json-report") != "/d/report.json" || after(c, "--timeout") != s.timeout.String() {
			t.Errorf("mode %s: check %v", mode, c)
		}
	}
	b := inMode(srv, "b", 3)
	if b.mode != "" || b.timeout != 0 {
		t.Errorf("mode b changed the row: %+v", b)
	}
	if m := mockArgs(b, "a", "u", "p"); !slices.Contains(m, "--clock") || slices.Contains(m, "--no-control") || slices.Contains(m, "--profile-out") {
		t.Errorf("mode b: mock %v", m)
	}
	c := checkArgs("bin", b, tg, "r", time.Minute)
	if after(c, "--control-url") != tg.info.ControlURL || !slices.Contains(c, "--reference") || slices.Contains(c, "--config") {
		t.Errorf("mode b: check %v", c)
	}
}

// A row whose rules' selected specs all skip for a need above the mode's tier is unreachable; one
// spec that ran, or skipped for another reason, makes it reachable (a survivor when nothing failed).
func TestUnreachable(t *testing.T) {
	skip := func(rule string, tier report.Tier) report.SpecResult {
		return report.SpecResult{Rules: []string{rule}, State: report.Skipped, Skip: &report.SkipReason{Kind: report.SkipUnsupported, Tier: tier, Text: "needs"}}
	}
	ran := report.SpecResult{Rules: []string{"A-1"}, State: report.Passed}
	budget := report.SpecResult{Rules: []string{"A-1"}, State: report.Skipped, Skip: &report.SkipReason{Kind: report.SkipDisabled, Text: "disabled: --budget"}}
	other := report.SpecResult{Rules: []string{"B-1"}, State: report.Passed}
	unselected := report.SpecResult{Rules: []string{"A-1"}, State: report.NotSelected}
	strict := report.SpecResult{Rules: []string{"A-1"}, State: report.StrictOnly}
	for _, c := range []struct {
		name  string
		specs []report.SpecResult
		mode  string
		want  string
	}{
		{"all need control", []report.SpecResult{skip("A-1", report.TierControl), skip("A-1", report.TierTestHelpers), other, unselected, strict}, "t", Unreachable},
		{"one ran", []report.SpecResult{skip("A-1", report.TierControl), ran}, "t", Survived},
		{"a budget skip", []report.SpecResult{skip("A-1", report.TierControl), budget}, "t", Survived},
		{"test inputs at t", []report.SpecResult{skip("A-1", report.TierTestInputs)}, "t", Survived},
		{"test inputs at p", []report.SpecResult{skip("A-1", report.TierTestInputs)}, "p", Unreachable},
		{"no spec at all", []report.SpecResult{other}, "t", Survived},
		{"mode b", []report.SpecResult{skip("A-1", report.TierControl)}, "", Survived},
	} {
		res := Result{Server: Server{Name: "x", Rules: []string{"A-1"}, mode: c.mode}}
		judge(&res, &report.Results{Specs: c.specs})
		if res.Verdict != c.want {
			t.Errorf("%s: %s, want %s", c.name, res.Verdict, c.want)
		}
	}
	res := Result{Server: Server{Name: "x", Rules: []string{"A-1"}}, Verdict: Unreachable, Above: []string{"control"}}
	var b strings.Builder
	WriteTable(&b, []Result{res}, "t")
	if !strings.Contains(b.String(), "AT t") || !strings.Contains(b.String(), "not reachable (needs control)") {
		t.Errorf("the table:\n%s", b.String())
	}
}

// Mode t's second pass runs the row's specs that wait out hours (--long, filter "(...) && long")
// against a mock at x1000, as .ci/check-modes t does; it is due when such a spec skipped.
func TestModeTLongPass(t *testing.T) {
	srv := inMode(Server{Name: "x", Rules: []string{"DLV-009", "DLV-004"}}, "t", 0)
	srv.long = true
	m := mockArgs(srv, "a", "u", "/d/p.yaml")
	if after(m, "--time-scale") != "1000" || !slices.Contains(m, "--test-inputs") {
		t.Errorf("mock %v", m)
	}
	c := checkArgs("bin", srv, target{profile: "/d/p.yaml"}, "r", time.Minute)
	if !slices.Contains(c, "--long") || after(c, "--label-filter") != "(DLV-009 || DLV-004) && long" {
		t.Errorf("check %v", c)
	}
	long := report.SpecResult{Rules: []string{"DLV-009"}, Labels: []string{"DLV-009", "long"}, State: report.Skipped}
	if !waitsLong(&report.Results{Specs: []report.SpecResult{long}}, srv.Rules) {
		t.Error("a skipped long spec of the row's rules asks for the second pass")
	}
	long.State = report.Passed
	if waitsLong(&report.Results{Specs: []report.SpecResult{long}}, srv.Rules) || waitsLong(&report.Results{Specs: []report.SpecResult{long}}, []string{"AUTH-001"}) {
		t.Error("a long spec that ran, or of other rules, asks for no second pass")
	}
}

// Split over processes (--procs), modes p and t run the mock with a key set per process and the
// check with --procs, each process's receiver reached through the webhook proxy's rewrite (no
// --receiver-listen, which check refuses with --procs).
func TestModeTProcs(t *testing.T) {
	srv := inMode(Server{Name: "x", Rules: []string{"ERR-005"}}, "t", 4)
	if !srv.split() {
		t.Fatal("a mode t row over 4 processes is split")
	}
	if m := mockArgs(srv, "a", "u", "p"); after(m, "--key-sets") != "4" {
		t.Errorf("mock %v", m)
	}
	c := checkArgs("bin", srv, target{profile: "p", rcvListen: "127.0.0.1:3", hookURL: "http://127.0.0.1:4"}, "r", time.Minute)
	if after(c, "--procs") != "4" || slices.Contains(c, "--receiver-listen") || slices.Contains(c, "--receiver-url") ||
		after(c, "--config") != "p" || !slices.Contains(c, "--real-time") || after(c, "--json-report") != "r" {
		t.Errorf("check %v", c)
	}
	if inMode(Server{Name: "x"}, "t", 1).split() {
		t.Error("one process is not split")
	}
}
