package specs

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// balanceWords are the words a sentence saying a failure "is not a balance problem" refers to the
// balance with.
var balanceWords = []string{"balance", "credit", "wallet", "fund"}

// balanceFaultSpecs registers the spec of an internal error on the balance read (issue 37 item 3):
// the Errors table says internal_error, "for the balance read, says it is not a balance problem".
// The control API's internal_error fault, or the internal_error test input (spec/testmode.yaml)
// on the one read, makes the read fail on demand.
func balanceFaultSpecs(f *framework.Framework) {
	Describe("errors: an internal error on the balance read", func() {
		f.Rule(rules("ERR-044", "ERR-039")...).Needs(framework.TestInputs).It("an internal_error on the balance read says it is not a balance problem", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			failing := c
			if s.HasControl() {
				queueInternalError(ctx, s)
			} else {
				// The test input makes the one read that carries it fail; the reads without it answer.
				failing = s.Force(ctx, c, framework.Outcome{Kind: "internal_error"})
			}
			s.Step("ERR-039")
			r := failing.Get(ctx, "/credits/balance").ExpectError(http.StatusInternalServerError, "internal_error")
			// The wording is detail (Versioning 3), but a sentence that says the failure is not a
			// balance problem names the balance: a generic message says nothing of it.
			s.Step("ERR-044")
			msg := strings.ToLower(r.String("error.message"))
			named := false
			for _, w := range balanceWords {
				named = named || strings.Contains(msg, w)
			}
			Expect(named).To(BeTrue(), "an internal_error on the balance read says it is not a balance problem (its message names the balance, credits or wallet)"+r.Describe())
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
		})
	})
}

// queueInternalError queues control's internal_error fault for the next call and clears the faults
// when the spec ends; a control API without the fault leaves the spec unverified.
func queueInternalError(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	q, err := s.Control().Call(ctx, http.MethodPost, "/faults", map[string]any{"kind": "internal_error"})
	Expect(err).NotTo(HaveOccurred())
	if q.Status == http.StatusBadRequest {
		if fld, _ := q.Lookup("error.field"); fld == "kind" {
			s.Lacks("the control API does not offer the internal_error fault, so the suite cannot make the balance read fail internally")
		}
	}
	Expect(q.Status).To(Equal(http.StatusCreated), "control POST /faults internal_error"+q.Describe())
	DeferCleanup(func(ctx SpecContext) { s.ClearFaults(ctx) })
}
