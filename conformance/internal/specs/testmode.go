package specs

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/spec"
)

// testModeSpecs registers the specs of test-mode inputs themselves (spec/testmode.yaml), the
// optional extension a target declares with features: [test-inputs] and its test_keys.
func testModeSpecs(f *framework.Framework) {
	Describe("auth: test-mode inputs", func() {
		f.Rule("AUTH-031").It("a test key's test input forces its outcome on that one request; a value that is not a test input answers 400 naming the header", func(ctx context.Context, s *framework.Spec) {
			s.StrictOnly("AUTH-031", "how a test forces an outcome (the text has one environment and no test mode)")
			bad := s.TestInputClient("no_such_outcome")
			r := bad.Get(ctx, "/credits/balance", framework.Unjudged()).ExpectError(http.StatusBadRequest, "invalid_config")
			Expect(r.String("error.field")).To(Equal(spec.TestInputHeader), "the refusal names the header"+r.Describe())
			failing := s.TestInputClient("internal_error")
			r = failing.Get(ctx, "/credits/balance").ExpectError(http.StatusInternalServerError, "internal_error")
			Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
			s.WithKey(failing.Key()).Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
		})
	})
}
