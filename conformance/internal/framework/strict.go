package framework

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// A rule of rules.yaml with basis reference records the reference's own choice where the
// interface text is silent or says "not shown". The text alone judges a server, so a spec asserts
// such a choice only under Config.Strict (checking mediaspec's own mock, which must keep its
// documented shapes); against any other target the choice is an advisory, never a failure, and
// what the text does state is asserted always. The helpers below are how a spec says which part
// is which (rules.yaml `judged` records it per rule).

// UnjudgedRulesEntry is the report entry of a spec naming, space-separated, the rules it carries
// that the run does not judge (report.SpecResult.Unjudged): judged strict-only, on a run that is
// not strict.
const UnjudgedRulesEntry = "unjudged rules"

// unjudged are the rules of ids the run leaves undecided: those rules.yaml marks judged
// strict-only, unless the run is strict.
func (f *Framework) unjudged(ids []string) []string {
	if f.cfg.Strict || f.catalogue == nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if r, ok := f.catalogue.Get(id); ok && r.Judged == spec.JudgedStrictOnly {
			out = append(out, id)
		}
	}
	return out
}

// UnjudgedRules are the rules of ids the run does not judge: judged strict-only, on a run that is
// not strict (nil on a strict run).
func (f *Framework) UnjudgedRules(ids []string) []string { return f.unjudged(ids) }

// Strict reports whether the run holds the target to the reference document as written
// (Config.Strict, --strict): the reference's own choices are asserted as failures.
func (s *Spec) Strict() bool { return s.f.cfg.Strict }

// StrictOnly skips the spec unless the run is strict: everything it checks is the reference's own
// choice for rule (rules.yaml basis reference, judged strict-only), where the text leaves open
// what the phrase open names.
func (s *Spec) StrictOnly(rule, open string) {
	GinkgoHelper()
	if !s.f.cfg.Strict {
		SkipFor(strictOnlyReason(rule, open))
	}
}

// strictOnlyReason is the skip reason of a spec judged only with --strict (Spec.StrictOnly,
// Decl.StrictOnly).
func strictOnlyReason(rule, open string) SkipReason {
	return StrictOnlySkip(fmt.Sprintf("the text leaves %s open (rules.yaml %s basis reference); judged only with --strict", open, rule))
}

// ReferenceOnly runs check, the assertions of a choice the reference made for rule where the text
// leaves it open (what says which, "the invoke answers 201"). Under Config.Strict a failure of
// check fails the spec as any assertion does; otherwise it is recorded as an advisory of the run
// (its own section of console and reports, never a failure) and the spec goes on. check asserts
// on what the spec already read with Gomega (Expect) and makes no call: a call's answer the text
// refuses must fail the spec whatever the mode, so a call inside check panics when not strict.
func (s *Spec) ReferenceOnly(rule, what string, check func()) {
	GinkgoHelper()
	if s.f.cfg.Strict {
		check()
		return
	}
	s.f.mu.Lock()
	s.f.refOnly = true
	s.f.mu.Unlock()
	defer func() {
		s.f.mu.Lock()
		s.f.refOnly = false
		s.f.mu.Unlock()
	}()
	step := s.f.swapStep(nil)
	s.f.swapStep(step)
	err := InterceptGomegaFailure(check)
	s.f.swapStep(step) // a failed check leaves the step it set
	if err == nil {
		return
	}
	msg := s.f.redactor.String(strings.TrimSpace(err.Error()))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	s.f.adv.add(report.Advisory{Operation: "rule " + rule, Reference: what + " (the reference's choice): " + msg})
}

// inReferenceOnly panics when a call is made inside ReferenceOnly's check on a run that is not
// strict (see ReferenceOnly).
func (f *Framework) inReferenceOnly(method, path string) {
	f.mu.Lock()
	on := f.refOnly
	f.mu.Unlock()
	if on {
		panic(fmt.Sprintf("framework: a ReferenceOnly check called %s %s; make the call before it", method, path))
	}
}

// add records an advisory a spec found (ReferenceOnly), charged to the running spec.
func (a *advisories) add(adv report.Advisory) {
	a.mu.Lock()
	defer a.mu.Unlock()
	who := a.spec
	if who == "" {
		who = "(the suite's setup)"
	}
	adv.Count, adv.Specs = 1, []string{who}
	a.list = report.MergeAdvisories(a.list, []report.Advisory{adv})
}

// ExpectSuccess fails the spec unless the answer is a 2XX success (any of them: where the text
// gives no status, as on the workflow invoke) with a JSON object body carrying ok true where the
// text states it (ExpectOK's rule). It returns the answer.
func (r *Response) ExpectSuccess() *Response {
	GinkgoHelper()
	Expect(r.Status).To(And(BeNumerically(">=", http.StatusOK), BeNumerically("<", http.StatusMultipleChoices)), "want a 2XX success"+r.Describe())
	return r.ExpectOK(r.Status)
}
