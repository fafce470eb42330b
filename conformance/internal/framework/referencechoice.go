package framework

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/spec"
)

// Fail is the suite's Gomega fail handler. A failed assertion whose rules (the current step, or
// every rule of the spec when it named none) are all the reference's own choices through and
// through (rules.yaml basis `reference` judged `strict-only`: the text says "not shown" or is
// silent there) does not fail a run that is not strict: the spec is skipped, naming the rules and
// what differed, since the interface text, the only judge, says nothing a server could break
// there. With --strict (mediaspec's own mock, which must hold its documented choices) it fails as
// any assertion. A rule judged open or text-part asserts what the text states, so its failure
// fails (its reference part is asserted through Spec.ReferenceOnly).
func (f *Framework) Fail(message string, callerSkip ...int) {
	skip := 1
	if len(callerSkip) > 0 {
		skip += callerSkip[0]
	}
	if ids := f.referenceChoice(); len(ids) > 0 {
		SkipFor(StrictOnlySkip(ReferenceChoiceSkip(ids, message)), skip)
	}
	Fail(message, skip)
}

// ReferenceChoiceSkip is the reason a spec is skipped when an assertion of the reference's own
// choices (rules ids) failed with message on a target that is not the reference.
func ReferenceChoiceSkip(ids []string, message string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	return fmt.Sprintf("reference choice: the target differs from the reference's own choice of %s, where the text says \"not shown\" or is silent (a failure only with --strict): %s",
		strings.Join(ids, ", "), first)
}

// referenceChoice returns the rules a failure now would be charged to when every one of them is
// the reference's own choice and the run is not strict; nil otherwise.
func (f *Framework) referenceChoice() []string {
	if f == nil || f.catalogue == nil || f.cfg.Strict {
		return nil
	}
	ids := f.currentStep()
	if len(ids) == 0 {
		ids = f.specRules()
	}
	return f.referenceOnly(ids)
}

// referenceOnly returns ids when there is one and every one is a rule of basis reference judged
// strict-only in the catalogue, nil otherwise.
func (f *Framework) referenceOnly(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if r, ok := f.catalogue.Get(id); !ok || r.Basis != spec.BasisReference || r.Judged != spec.JudgedStrictOnly {
			return nil
		}
	}
	return ids
}
