package framework

import (
	"net/url"
	"slices"
	"strings"

	"github.com/mediaspec/mediaspec/spec"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Report entries the suite attaches to a failed spec besides its transcript.
const (
	// FailedCallEntry is the call whose answer the failed assertion judged, bodies cut
	// (Exchange.Short): the call its message shows.
	FailedCallEntry = "failed call"
	// LastCallEntry is, when the failure names no call of the spec, the last call it made before
	// failing, bodies cut.
	LastCallEntry = "last call"
	// FailedRulesEntry is the space-separated rule ids of the step that failed (Spec.Step).
	FailedRulesEntry = "failed rules"
	// OperationEntry is the operation of the failed call ("GET /capabilities/{id}"), which groups
	// failures by cause.
	OperationEntry = "operation"
)

// EnvelopeRules are the error-envelope rules every refusal checks (CheckErrorEnvelope): a failed
// envelope check is charged to the one of them it checks, not to the rule whose refusal the spec
// asked for.
var EnvelopeRules = []string{"ERR-001", "ERR-002", "ERR-003", "ERR-005", "ERR-007", "ERR-046", "CORE-003", "CORE-018"}

// codeRules are the rules of the error table's row for code ("The code <code> is answered with
// HTTP ... and retryable ..."), found in the catalogue; none on a nil Framework.
func (f *Framework) codeRules(code string) []string {
	if f == nil || f.catalogue == nil {
		return nil
	}
	var ids []string
	for _, r := range f.catalogue.Filter(spec.RuleFilter{Area: "ERR"}) {
		if strings.HasPrefix(r.Statement, "The code "+code+" is answered with HTTP") {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// maxBodyInLastCall is how much of each body the console's failed or last call shows.
const maxBodyInLastCall = 600

// Step says which of the spec's rules the assertions that follow check, until the next Step: when
// one of them fails, only these rules fail; the spec's other rules are left undecided by it (a
// passing spec passes them all). Step() with no id charges failures to every rule of the spec
// again, which is also how a spec that never calls Step is judged. It panics on an id that is not
// in the catalogue or is unobservable.
//
//	s.Step("CORE-001")
//	Expect(r.Status).To(Equal(200))          // a failure here fails CORE-001 only
//	s.Step("LIST-004")
//	Expect(row).To(HaveKey("batch_group_id")) // and here LIST-004 only
func (s *Spec) Step(ids ...string) {
	if len(ids) > 0 {
		if err := s.f.CheckRules(ids); err != nil {
			panic(err.Error())
		}
	}
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.step = append([]string(nil), ids...)
}

// swapStep makes ids the current step and returns the one before; a nil Framework does nothing.
func (f *Framework) swapStep(ids []string) []string {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.step
	f.step = ids
	return prev
}

// ownStep, when the running spec named no step, makes its own rules but those of except the
// current step (a failure is then not charged to rules the assertions that follow cannot break),
// and returns the step before and whether it changed it; a nil Framework, a named step, or a spec
// with no other rule changes nothing.
func (f *Framework) ownStep(except []string) (prev []string, swapped bool) {
	if f == nil || f.catalogue == nil {
		return nil, false
	}
	f.mu.Lock()
	named := len(f.step) > 0
	f.mu.Unlock()
	if named {
		return nil, false
	}
	var own []string
	for _, l := range CurrentSpecReport().Labels() {
		if _, ok := f.catalogue.Get(l); ok && !slices.Contains(except, l) {
			own = append(own, l)
		}
	}
	if len(own) == 0 {
		return nil, false
	}
	return f.swapStep(own), true
}

// takeStep returns the current step's rule ids and forgets them.
func (f *Framework) takeStep() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.step
	f.step = nil
	return ids
}

// afterFailure attaches what the reports need about a failed spec: the full transcript, the call
// whose answer failed cut short (or, when the failure names none, the last call before it), and
// the rules of the step that failed.
func (f *Framework) afterFailure() {
	step := f.takeStep()
	sr := CurrentSpecReport()
	if !sr.Failed() {
		return
	}
	if len(f.transcript.Exchanges()) > 0 {
		AddReportEntry(TranscriptEntry, f.transcript.String(), ReportEntryVisibilityFailureOrVerbose)
	}
	judged, last := f.transcript.judged(sr.Failure.Message, sr.Failure.TimelineLocation.Time)
	switch {
	case judged != nil:
		AddReportEntry(FailedCallEntry, judged.Short(maxBodyInLastCall), ReportEntryVisibilityNever)
		if op := f.operationOf(judged); op != "" {
			AddReportEntry(OperationEntry, op, ReportEntryVisibilityNever)
		}
	case last != nil:
		AddReportEntry(LastCallEntry, last.Short(maxBodyInLastCall), ReportEntryVisibilityNever)
	}
	if len(step) > 0 {
		AddReportEntry(FailedRulesEntry, strings.Join(step, " "), ReportEntryVisibilityNever)
	}
}

// operationOf is the operation of the REST description an exchange called ("GET /generations/{id}"),
// or "" for a call outside it (control, file links).
func (f *Framework) operationOf(ex *Exchange) string {
	if f.validator == nil {
		return ""
	}
	u, err := url.Parse(ex.URL)
	if err != nil {
		return ""
	}
	route, _, ok := f.validator.FindRoute(ex.Method, u.Path)
	if !ok {
		return ""
	}
	return ex.Method + " " + route.Path
}
