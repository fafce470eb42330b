package framework

import (
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega" //nolint:revive
)

// On a run that is not strict, a ReferenceOnly check that fails is an advisory naming the rule,
// never a failure; a call made inside the check panics (an answer the text refuses must fail the
// spec in every mode, so the call belongs before the check).
func TestReferenceOnlyIsAnAdvisoryUnlessStrict(t *testing.T) {
	RegisterTestingT(t)
	f := judgedFramework(t, false, detailWithout())
	s := &Spec{f: f}
	s.ReferenceOnly("WF-004", "an invoke answers 201", func() {
		Expect(http.StatusAccepted).To(Equal(http.StatusCreated), "the invoke's status")
	})
	adv := f.Advisories()
	if len(adv) != 1 || adv[0].Operation != "rule WF-004" || !strings.Contains(adv[0].Reference, "an invoke answers 201") {
		t.Fatalf("advisories %+v, want one for rule WF-004", adv)
	}
	s.ReferenceOnly("WF-004", "passes", func() { Expect(1).To(Equal(1)) })
	if got := f.Advisories(); len(got) != 1 || got[0].Count != 1 {
		t.Errorf("a check that holds recorded an advisory: %+v", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a call inside a ReferenceOnly check did not panic")
			}
		}()
		s.ReferenceOnly("WF-004", "calls", func() { _, _ = getDetail(t, f) })
	}()
	// The check is over: calls are allowed again.
	if _, err := getDetail(t, f); err != nil {
		t.Errorf("a call after the check: %v", err)
	}
	if !judgedFramework(t, true, "{}").cfg.Strict || s.Strict() {
		t.Error("Strict does not report Config.Strict")
	}
}
