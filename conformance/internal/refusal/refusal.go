// Package refusal reads the suite's refusals past their envelope (which framework.ExpectError
// checks): what the error object names (a field at fault, the upload ids), wherever and in
// whatever form it names them, and the amounts of a spend refusal.
//
// Its functions fail the running spec (Gomega's Expect) when a refusal breaks the text; they are
// called from inside a spec. Names is pure.
package refusal

import (
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
)

// errorObject is the refusal's error object, failing the spec when it is not one.
func errorObject(r *framework.Response) map[string]any {
	GinkgoHelper()
	e, ok := r.Field("error").(map[string]any)
	Expect(ok).To(BeTrue(), "\"error\" is not an object"+r.Describe())
	return e
}

// Words are the strings of a refusal's error object, at any depth (message, and whatever
// fields a server adds to name what is at fault), and the keys of the objects inside it
// ({"details": {"aspect_ratio": "unknown"}} names aspect_ratio; the error object's own keys, code
// and message among them, are not words): "invalid_config naming the key" and "naming the ids"
// say that the refusal names them, not where, so a name anywhere in the error object counts.
func Words(r *framework.Response) []string {
	GinkgoHelper()
	return words(errorObject(r))
}

// words is Words of the error object e.
func words(e map[string]any) []string {
	var out []string
	var walk func(v any, nested bool)
	walk = func(v any, nested bool) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for k, c := range x {
				if nested {
					out = append(out, k)
				}
				walk(c, true)
			}
		case []any:
			for _, c := range x {
				walk(c, true)
			}
		}
	}
	walk(e, false)
	return out
}

// Names reports whether some string of the error object holds name: the name alone, a dotted
// path ending in it (config.aspect_ratio), a JSON pointer (/config/aspect_ratio) or a sentence
// naming it; name is matched as a whole word.
func Names(words []string, name string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	for _, w := range words {
		if re.MatchString(w) {
			return true
		}
	}
	return false
}

// ExpectField checks the refusal names the field at fault ("invalid_config naming the key",
// ERR-020). The text does not say where or in which form: any string of the error object that
// names it counts, as the field's own name or its path (config.aspect_ratio, /config/aspect_ratio,
// config[aspect_ratio]). Decided in round 4 (issue 35): the reference's error.field is one form.
func ExpectField(r *framework.Response, field string) {
	GinkgoHelper()
	name := field[strings.LastIndex(field, ".")+1:]
	Expect(Names(Words(r), name)).To(BeTrue(), "the refusal names the field at fault ("+field+") in its error object"+r.Describe())
}

// ExpectAssetIDs checks the refusal names the upload id ("naming the ids"): anywhere in its error
// object, in whatever field or sentence.
func ExpectAssetIDs(r *framework.Response, id string) {
	GinkgoHelper()
	Expect(Names(Words(r), id)).To(BeTrue(), "the refusal names the upload "+id+" in its error object"+r.Describe())
}

// ExpectAssetIDsIfNamed is for input_not_ready, which the text does not say names the ids: when
// the error object names upload ids, the upload is among them.
func ExpectAssetIDsIfNamed(r *framework.Response, id string) {
	GinkgoHelper()
	if named := openshape.IDs(errorObject(r), "ast_"); len(named) > 0 {
		Expect(named).To(ContainElement(id), "the upload ids the refusal names include the upload not ready"+r.Describe())
	}
}

// ExpectSpend checks a 402 spend_limit_exceeded naming the cap ("limit.bound_by names it"); the
// reference's cap value and what it still allows are checked when sent.
func ExpectSpend(s *framework.Spec, r *framework.Response, boundBy string, limit, remaining int64) {
	GinkgoHelper()
	Expect(r.String("error.limit.bound_by")).To(Equal(boundBy), r.Describe())
	ExpectLimitAmounts(s, r, &limit, &remaining)
}

// ExpectLimitAmounts checks the amounts the reference adds to a spend_limit_exceeded refusal's
// limit (ERR-014): limit_credits and remaining_credits, integers, equal to limit and remaining
// where given. The text names only limit.bound_by on a spend refusal, so they are judged under
// --strict only (an advisory otherwise).
func ExpectLimitAmounts(s *framework.Spec, r *framework.Response, limit, remaining *int64) {
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
