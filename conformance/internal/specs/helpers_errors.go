package specs

import (
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"

	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/buckets"
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

// errorWords are the strings of a refusal's error object, at any depth (message, and whatever
// fields a server adds to name what is at fault): "invalid_config naming the key" and "naming the
// ids" say that the refusal names them, not where, so a name anywhere in the error object counts.
func errorWords(r *framework.Response) []string {
	GinkgoHelper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(answer.ObjectAt(r, "error"))
	return out
}

// names reports whether some string of the error object holds name: the name alone, a dotted
// path ending in it (config.aspect_ratio), a JSON pointer (/config/aspect_ratio) or a sentence
// naming it; name is matched as a whole word.
func names(words []string, name string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	for _, w := range words {
		if re.MatchString(w) {
			return true
		}
	}
	return false
}

// expectField checks the refusal names the field at fault ("invalid_config naming the key",
// ERR-020). The text does not say where or in which form: any string of the error object that
// names it counts, as the field's own name or its path (config.aspect_ratio, /config/aspect_ratio,
// config[aspect_ratio]). Decided in round 4 (issue 35): the reference's error.field is one form.
func expectField(r *framework.Response, field string) {
	GinkgoHelper()
	name := field[strings.LastIndex(field, ".")+1:]
	Expect(names(errorWords(r), name)).To(BeTrue(), "the refusal names the field at fault ("+field+") in its error object"+r.Describe())
}

// expectAssetIDs checks the refusal names the upload id ("naming the ids"): anywhere in its error
// object, in whatever field or sentence.
func expectAssetIDs(r *framework.Response, id string) {
	GinkgoHelper()
	Expect(names(errorWords(r), id)).To(BeTrue(), "the refusal names the upload "+id+" in its error object"+r.Describe())
}

// expectAssetIDsIfNamed is for input_not_ready, which the text does not say names the ids: when
// the error object names upload ids, the upload is among them.
func expectAssetIDsIfNamed(r *framework.Response, id string) {
	GinkgoHelper()
	if named := openshape.IDs(answer.ObjectAt(r, "error"), "ast_"); len(named) > 0 {
		Expect(named).To(ContainElement(id), "the upload ids the refusal names include the upload not ready"+r.Describe())
	}
}

// spendRefusal checks a 402 spend_limit_exceeded naming the cap ("limit.bound_by names it"); the
// reference's cap value and what it still allows are checked when sent.
func spendRefusal(s *framework.Spec, r *framework.Response, boundBy string, limit, remaining int64) {
	GinkgoHelper()
	Expect(r.String("error.limit.bound_by")).To(Equal(boundBy), r.Describe())
	expectLimitAmounts(s, r, &limit, &remaining)
}

// expectLimitAmounts checks the amounts the reference adds to a spend_limit_exceeded refusal's
// limit (ERR-014): limit_credits and remaining_credits, integers, equal to limit and remaining
// where given. The text names only limit.bound_by on a spend refusal, so they are judged under
// --strict only (an advisory otherwise).
func expectLimitAmounts(s *framework.Spec, r *framework.Response, limit, remaining *int64) {
	GinkgoHelper()
	s.ReferenceOnly("ERR-014", "a spend refusal's limit carries limit_credits and remaining_credits", func() {
		l, rem := r.Int("error.limit.limit_credits"), r.Int("error.limit.remaining_credits")
		if limit != nil {
			Expect(l).To(Equal(*limit), "error.limit.limit_credits"+r.Describe())
		}
		if remaining != nil {
			Expect(rem).To(Equal(*remaining), "error.limit.remaining_credits"+r.Describe())
		}
	})
}

// expectWaitBetween checks a bucket refusal whose retry_after_seconds must lie between the
// shortest and the longest time the oldest call in the window can have left to go, as placed on
// the target's clock (whole seconds, so one second less than the shortest also passes). The text
// gives a per-minute bucket and a known wait; that the wait runs to the oldest call leaving a
// sliding window is the reference's (RATE-013), judged under --strict only.
func expectWaitBetween(s *framework.Spec, r *framework.Response, shortest, longest time.Duration) {
	GinkgoHelper()
	wait := buckets.ExpectRefusal(r)
	lo, hi := int64(shortest/time.Second)-1, int64((longest+time.Second-1)/time.Second)
	s.ReferenceOnly("RATE-013", "the wait runs until the oldest call leaves a sliding 60 s window", func() {
		Expect(wait).To(And(BeNumerically(">=", lo), BeNumerically("<=", hi)),
			fmt.Sprintf("retry_after_seconds is the seconds until the oldest call leaves the window: %d to %d on the target's clock", lo, hi)+r.Describe())
	})
}
