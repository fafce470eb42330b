package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
)

// checker judges one exchange: spec.Judge for the REST API (failures by the interface text,
// advisories by the reference's own choices), strictValidator for the control API.
type checker interface {
	Covers(urlPath string) bool
	Request(ctx context.Context, r *http.Request, body []byte) error
	Response(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) (failure, advisory error)
}

var _ checker = (*spec.Judge)(nil)

// strictValidator judges by one document: every violation is a failure, nothing is advisory.
type strictValidator struct{ v *spec.Validator }

func (s strictValidator) Covers(urlPath string) bool { return s.v.Covers(urlPath) }

func (s strictValidator) Request(ctx context.Context, r *http.Request, body []byte) error {
	return s.v.ValidateRequest(ctx, r, body)
}

func (s strictValidator) Response(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) (error, error) {
	return s.v.ValidateResponse(ctx, r, status, header, body), nil
}

// validatorChecker is v as a checker; nil (checks nothing) when v is nil.
func validatorChecker(v *spec.Validator) checker {
	if v == nil {
		return nil
	}
	return strictValidator{v}
}

// brokenFields are the fields a judge's error names (one with an empty path for the answer as a
// whole).
func brokenFields(err error) []spec.FieldError {
	var fe spec.FieldErrors
	if !errors.As(err, &fe) || len(fe) == 0 {
		return []spec.FieldError{{Problem: err.Error()}}
	}
	return append([]spec.FieldError(nil), fe...)
}

// violationLines renders a judge's error one line per field, redacted.
func (f *Framework) violationLines(err error) []string {
	var v spec.Violation
	if !errors.As(err, &v) {
		return []string{f.redactor.String(violationText(err.Error()))}
	}
	lines := v.Lines()
	for i, l := range lines {
		lines[i] = f.redactor.String(violationText(l))
	}
	return lines
}

// advisories collects the run's differences from the reference's own choices, each charged to
// the spec that saw it first. It is safe for concurrent use.
type advisories struct {
	mu   sync.Mutex // guards spec, list
	spec string     // the running spec's full text; empty during the suite's setup
	list []report.Advisory
}

// setSpec names the spec whose calls come next.
func (a *advisories) setSpec(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.spec = text
}

// note records an advisory of the judge: one entry per field, the operation named by its
// documented path and the field by its path with array indexes masked (so the same difference on
// other ids and other rows counts once).
func (a *advisories) note(ref *spec.Validator, err error, red *Redactor) {
	var v spec.Violation
	if !errors.As(err, &v) {
		return
	}
	op := v.Method + " " + red.String(v.Path)
	if v.Kind == "event" {
		op = "event " + v.Path
	} else if route, _, ok := ref.FindRoute(v.Method, v.Path); ok {
		op = v.Method + " " + route.Path
	}
	var fields spec.FieldErrors
	if !errors.As(v.Err, &fields) {
		fields = spec.FieldErrors{{Problem: violationText(v.Err.Error())}}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	who := a.spec
	if who == "" {
		who = "(the suite's setup)"
	}
	add := make([]report.Advisory, len(fields))
	for i, fe := range fields {
		add[i] = report.Advisory{Operation: op, Status: v.Status, Path: arrayIndex().ReplaceAllString(fe.Path, "[*]"), Reference: red.String(fe.Problem), Count: 1, Specs: []string{who}}
	}
	a.list = report.MergeAdvisories(a.list, add)
}

// Advisories returns the run's differences from the reference's own choices so far, merged and
// sorted (report.MergeAdvisories). Under Config.Strict there are none: each is a failure.
func (f *Framework) Advisories() []report.Advisory {
	f.adv.mu.Lock()
	defer f.adv.mu.Unlock()
	return append([]report.Advisory(nil), f.adv.list...)
}

// CheckEvent judges the body of a webhook delivery of eventType the way the run judges answers:
// an error naming every field the interface text states that is missing or invalid (one line
// each) when the normative view refuses it. A difference from the reference's own choices is
// recorded as an advisory, or is the error under Config.Strict.
func (s *Spec) CheckEvent(eventType string, body []byte) error {
	f := s.f
	failure, advisory := f.judge.Event(eventType, body)
	var lines []string
	if failure != nil {
		lines = f.violationLines(failure)
	}
	if advisory != nil {
		if f.cfg.Strict {
			for _, l := range f.violationLines(advisory) {
				lines = append(lines, "strict: "+l+" (the reference document's choice)")
			}
		} else {
			f.adv.note(f.validator, advisory, f.redactor)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("the %s body breaks the REST description:\n  - %s\n%s", eventType, strings.Join(lines, "\n  - "), f.redactor.String(string(body)))
}
