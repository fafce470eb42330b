package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/spec"
)

// Helpers for refusals: the envelope rules every refusal checks and the shapes of typed refusals.

// envelopeRules are the error-envelope rules every refusal a spec triggers checks (through
// Response.ExpectError, which charges an envelope failure to them).
var envelopeRules = framework.EnvelopeRules

func rules(ids ...string) []string { return append(append([]string(nil), ids...), envelopeRules...) }

// refuse sends a submit that must be refused with status and code and checks that it started
// nothing and moved no credit. body is a map (sent as JSON) or []byte (sent as is).
func refuse(ctx context.Context, c *framework.Client, body any, status int, code string, opts ...framework.CallOption) *framework.Response {
	GinkgoHelper()
	return refuseBy(ctx, c, body, func(r *framework.Response) { r.ExpectError(status, code) }, opts...)
}

// refuseAny is refuse for a refusal whose code the text does not name: any 4XX error of the
// error table, answered with the status the table gives its code, in the documented envelope.
// what says why the submit must be refused.
func refuseAny(ctx context.Context, c *framework.Client, body any, what string, opts ...framework.CallOption) *framework.Response {
	GinkgoHelper()
	return refuseBy(ctx, c, body, func(r *framework.Response) {
		GinkgoHelper()
		Expect(r.Status).To(And(BeNumerically(">=", 400), BeNumerically("<", 500)), what+": want a refusal, a 4XX error"+r.Describe())
		code, _ := r.Field("error.code").(string)
		row, known := spec.LookupErrorCode(code)
		Expect(known).To(BeTrue(), fmt.Sprintf("%s: error.code %q is not a code of the error table", what, code)+r.Describe())
		Expect(r.Status).To(Equal(row.Status), fmt.Sprintf("%s: %s is answered with HTTP %d", what, code, row.Status)+r.Describe())
		framework.CheckErrorEnvelope(r, code)
	}, opts...)
}

// refuseBy sends a submit, judges its answer with expect, and checks that it started nothing and
// moved no credit.
func refuseBy(ctx context.Context, c *framework.Client, body any, expect func(*framework.Response), opts ...framework.CallOption) *framework.Response {
	GinkgoHelper()
	switch b := body.(type) {
	case []byte:
		opts = append([]framework.CallOption{framework.RawBody(b, "application/json")}, opts...)
	default:
		opts = append([]framework.CallOption{framework.JSONBody(b)}, opts...)
	}
	// A job of the spec's own that ends meanwhile moves the balance: then the refusal (which
	// changes nothing, so it can be sent again) is judged once more, a few times at most.
	var r *framework.Response
	var before, after snapshot
	for try := 0; try < 3; try++ {
		before = takeSnapshot(ctx, c)
		r = c.Do(ctx, http.MethodPost, "/generations", opts...)
		expect(r)
		after = takeSnapshot(ctx, c)
		if slices.Equal(before.ended, after.ended) {
			break
		}
	}
	Expect(after.available).To(Equal(before.available), "a refused submit leaves available_credits unchanged"+r.Describe())
	Expect(after.held).To(Equal(before.held), "a refused submit holds nothing"+r.Describe())
	Expect(after.newest).To(Equal(before.newest), "a refused submit starts no generation"+r.Describe())
	return r
}

// configFirst says why a refusal of an unavailable capability may be undecidable without control.
const configFirst = "the spec sends a config it cannot make valid for the refused capability (its schema is not " +
	"readable), and the text's submit check order (\"the first failing check wins\": ..., config validity, " +
	"capability availability and plan, ...; an estimate checks the config as on submit) lets a correct " +
	"server refuse the config first"

// expectUnavailable judges r, the answer of an estimate or submit that must be refused 404
// capability_unavailable. With open the spec sent a config it could not make valid for the
// capability (configFirst): then 400 invalid_config, or with template (a template of another
// preset) 404 not_found ("not a template of this preset"), is judged as that error and
// expectUnavailable reports false, the refusal of the capability undecided.
func expectUnavailable(r *framework.Response, open, template bool) bool {
	GinkgoHelper()
	if open {
		code, _ := r.Field("error.code").(string)
		if r.Status == http.StatusBadRequest && code == "invalid_config" || template && r.Status == http.StatusNotFound && code == "not_found" {
			r.ExpectError(r.Status, code)
			return false
		}
	}
	r.ExpectError(http.StatusNotFound, "capability_unavailable")
	return true
}
