// Package specs holds the conformance specs: black-box checks of the media generation service over
// HTTP. Register adds them to Ginkgo's tree; each spec is declared through framework.Rule so that it
// carries the ids of the rules it checks and the labels of what it needs.
//
// Specs work against any implementation: they discover catalogue data (capability ids, actors,
// voices, presets) through the API and skip with the reason when the target has none of a kind.
package specs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// Register adds every spec to Ginkgo's tree. Call it once, before RunSpecs.
func Register(f *framework.Framework) {
	health(f)
	description(f)
	cors(f)
	auth(f)
	scopes(f)
	isolation(f)
	buckets(f)
	strictInput(f)
	capabilities(f)
	actors(f)
	voices(f)
	presets(f)
	estimates(f)
	balance(f)
	uploads(f)
	fromURL(f)
	assetSpecs(f)
	webhookSpecs(f)
	deliverySpecs(f)
	mutationDeliverySpecs(f)
	generationSpecs(f)
	genListSpecs(f)
	submitSpecs(f)
	batchSpecs(f)
	talkingSpecs(f)
	ledgerSpecs(f)
	linkSpecs(f)
	coverageCatalogSpecs(f)
	coveragePlatformSpecs(f)
	mutationPlatformSpecs(f)
	mutationGenerationSpecs(f)
	coverageTalkingSpecs(f)
	coverageFanOutSpecs(f)
	coverageSubmitSpecs(f)
	coverageRunSpecs(f)
	workflowSpecs(f)
}

// randomHex returns n random lowercase hex characters.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}

// unknownKey returns a well-formed sk_live_ key no service issued.
func unknownKey() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	b.WriteString("sk_live_")
	for i := 0; i < 40; i++ {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String()
}

// noKeyIn fails the spec when key appears anywhere in the raw answer. The check is a boolean so
// the failure message never prints the key.
func noKeyIn(r *framework.Response, key string) {
	GinkgoHelper()
	if key == "" {
		return
	}
	Expect(strings.Contains(string(r.Body), key)).To(BeFalse(), "the answer body contains the caller's API key (the transcript shows it redacted)"+r.Describe())
	for name, vals := range r.Header {
		for _, v := range vals {
			Expect(strings.Contains(v, key)).To(BeFalse(), "the answer header "+name+" contains the caller's API key"+r.Describe())
		}
	}
}

// noCORS fails the spec when the answer carries any Access-Control-* header.
func noCORS(r *framework.Response) {
	GinkgoHelper()
	for name := range r.Header {
		Expect(strings.HasPrefix(http.CanonicalHeaderKey(name), "Access-Control-")).To(BeFalse(),
			"the API sends no CORS headers, but the answer has "+name+r.Describe())
	}
}

// objectAt returns the object at path, failing the spec when it is not one.
func objectAt(r *framework.Response, path string) map[string]any {
	GinkgoHelper()
	v := r.Field(path)
	m, ok := v.(map[string]any)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is not an object", path)+r.Describe())
	return m
}

// asObject returns v as an object, failing the spec (with r's exchange) when it is not one.
func asObject(r *framework.Response, v any, what string) map[string]any {
	GinkgoHelper()
	m, ok := v.(map[string]any)
	Expect(ok).To(BeTrue(), what+" is not an object"+r.Describe())
	return m
}

// intField returns the integer m[key], failing the spec when it is absent or not whole.
func intField(r *framework.Response, m map[string]any, key, what string) int64 {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q", what, key)+r.Describe())
	n, isInt := framework.AsInt(v)
	Expect(isInt).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want an integer", what, key, v)+r.Describe())
	return n
}

// stringField returns the string m[key], failing the spec when it is absent or not a string.
func stringField(r *framework.Response, m map[string]any, key, what string) string {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q", what, key)+r.Describe())
	s, isStr := v.(string)
	Expect(isStr).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want a string", what, key, v)+r.Describe())
	return s
}

// nullableString checks m[key] is present and a string or null; it returns the string ("" for
// null) and whether it was null.
func nullableString(r *framework.Response, m map[string]any, key, what string) (string, bool) {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q (it must be present, null when empty)", what, key)+r.Describe())
	if v == nil {
		return "", true
	}
	s, isStr := v.(string)
	Expect(isStr).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want a string or null", what, key, v)+r.Describe())
	return s, false
}

// stringList checks m[key] is an array of strings (never null) and returns it.
func stringList(r *framework.Response, m map[string]any, key, what string) []string {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q", what, key)+r.Describe())
	arr, isArr := v.([]any)
	Expect(isArr).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want an array (never null)", what, key, v)+r.Describe())
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, isStr := x.(string)
		Expect(isStr).To(BeTrue(), fmt.Sprintf("%s.%s holds %v, want strings", what, key, x)+r.Describe())
		out = append(out, s)
	}
	return out
}

// page is one page of a cursor-paged list.
type page struct {
	r      *framework.Response
	rows   []map[string]any
	cursor *string // nil when next_cursor is null
}

// getPage reads one page of a list whose rows are under field.
func getPage(ctx context.Context, c *framework.Client, path, field string, opts ...framework.CallOption) page {
	GinkgoHelper()
	r := c.Get(ctx, path, opts...).ExpectOK(http.StatusOK)
	p := page{r: r}
	for i, v := range r.Array(field) {
		p.rows = append(p.rows, asObject(r, v, fmt.Sprintf("%s[%d]", field, i)))
	}
	nc, present := r.Lookup("next_cursor")
	Expect(present).To(BeTrue(), "the answer has no next_cursor (it must be present, null on the last page)"+r.Describe())
	if nc != nil {
		s, ok := nc.(string)
		Expect(ok).To(BeTrue(), "next_cursor is neither a string nor null"+r.Describe())
		Expect(s).NotTo(BeEmpty(), "next_cursor is an empty string; the end is null"+r.Describe())
		p.cursor = &s
	}
	return p
}

// walk follows next_cursor from the first page until it is null and returns every row and the
// pages. It fails the spec after maxPages pages (a cursor that never ends).
func walk(ctx context.Context, c *framework.Client, path, field string, limit int, maxPages int) ([]map[string]any, []page) {
	GinkgoHelper()
	var rows []map[string]any
	var pages []page
	cursor := ""
	for i := 0; ; i++ {
		Expect(i).To(BeNumerically("<", maxPages), fmt.Sprintf("%s: next_cursor did not end after %d pages", path, maxPages))
		opts := []framework.CallOption{}
		if limit > 0 {
			opts = append(opts, framework.Query("limit", fmt.Sprint(limit)))
		}
		if cursor != "" {
			opts = append(opts, framework.Query("cursor", cursor))
		}
		p := getPage(ctx, c, path, field, opts...)
		pages = append(pages, p)
		rows = append(rows, p.rows...)
		if p.cursor == nil {
			return rows, pages
		}
		cursor = *p.cursor
	}
}

// ids returns the string field key of every row.
func ids(rows []map[string]any, key string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		s, _ := r[key].(string)
		out = append(out, s)
	}
	return out
}

// oneOf is a matcher for enum values.
func oneOf(values ...string) OmegaMatcher {
	ms := make([]any, 0, len(values))
	for _, v := range values {
		ms = append(ms, v)
	}
	return BeElementOf(ms...)
}
