package apierr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mediaspec/mediaspec/spec/errtable"
)

// Every code constant is a code of the interface spec's error table, every code of the table has a
// constant, and New takes status and retryable from the table.
func TestTableMatchesSpec(t *testing.T) {
	constants := []Code{
		CodeNotAuthorized, CodeInsufficientScope, CodeRequiredPlan, CodeInvalidConfig, CodeMaxCreditsExceeded,
		CodeInsufficientCredits, CodeSpendLimitExceeded, CodeCapabilityUnavailable, CodeNotFound,
		CodeInputNotReady, CodeSubmissionInFlight, CodeEstimateChanged, CodeNotPriced, CodeWorkspaceUnavailable,
		CodeModerationBlocked, CodeRateLimited, CodeQuotaExceeded, CodeRequestBlocked, CodeInternalError,
		CodeProviderUnavailable, CodeModerationUnavailable, CodePricingUnavailable,
	}
	if len(constants) != len(errtable.Rows) || len(Codes()) != len(errtable.Rows) {
		t.Fatalf("%d constants, %d table codes, %d in the spec", len(constants), len(Codes()), len(errtable.Rows))
	}
	for _, c := range constants {
		want, ok := errtable.Lookup(string(c))
		if !ok {
			t.Fatalf("constant %q is not a code of the spec", c)
		}
		e := New(c, "m")
		if e.Status != want.Status || e.Retryable != want.Retryable {
			t.Errorf("%s: %d/%v, want %d/%v", c, e.Status, e.Retryable, want.Status, want.Retryable)
		}
	}
	if e := New("bogus", "m"); e.Code != CodeInternalError || e.Status != 500 {
		t.Fatalf("unknown code rendered %+v", e)
	}
}

func TestWrappedErrorKeepsCode(t *testing.T) {
	wrapped := fmt.Errorf("context: %w", QuotaExceeded("used up"))
	if st, re := StatusOf(CodeOf(wrapped)); st != 429 || re {
		t.Fatalf("%d %v", st, re)
	}
	if CodeOf(wrapped) != CodeQuotaExceeded || CodeOf(errors.New("x")) != CodeInternalError {
		t.Fatal("CodeOf")
	}
	if !errors.Is(wrapped, New(CodeQuotaExceeded, "")) || errors.Is(wrapped, New(CodeNotFound, "")) {
		t.Fatal("errors.Is by code")
	}
	cause := errors.New("root")
	if !errors.Is(Internal(cause, "m"), cause) {
		t.Fatal("Unwrap")
	}
}
