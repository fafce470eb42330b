package specs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Field readers and small value helpers shared by every area's specs.

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

// findRow returns the row of id in rows, or nil.
func findRow(rows []map[string]any, id string) map[string]any {
	for _, r := range rows {
		if r["asset_id"] == id {
			return r
		}
	}
	return nil
}

// oneOf is a matcher for enum values.
func oneOf(values ...string) OmegaMatcher {
	ms := make([]any, 0, len(values))
	for _, v := range values {
		ms = append(ms, v)
	}
	return BeElementOf(ms...)
}

// clone deep-copies a JSON object.
func clone(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func parseTime(r *framework.Response, path string) time.Time {
	GinkgoHelper()
	t, err := parseStamp(r.String(path))
	Expect(err).NotTo(HaveOccurred(), path+" is RFC 3339"+r.Describe())
	return t
}

// schemaProps returns the properties of a capability detail's config_schema.
func schemaProps(d *framework.Response) map[string]any {
	GinkgoHelper()
	props, _ := objectAt(d, "config_schema")["properties"].(map[string]any)
	return props
}

// enumsOf collects the enum arrays of every property named prop anywhere in a JSON document; a
// property given as a local $ref ("#/components/schemas/X") is resolved in root.
func enumsOf(root, doc any, prop string) [][]string {
	var out [][]string
	switch x := doc.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			if p, ok := props[prop].(map[string]any); ok {
				if ref, ok := p["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
					if target, ok := framework.Lookup(root, strings.ReplaceAll(strings.TrimPrefix(ref, "#/"), "/", ".")); ok {
						p, _ = target.(map[string]any)
					}
				}
				if e, ok := p["enum"].([]any); ok {
					var vals []string
					for _, v := range e {
						if s, ok := v.(string); ok {
							vals = append(vals, s)
						}
					}
					out = append(out, vals)
				}
			}
		}
		for _, v := range x {
			out = append(out, enumsOf(root, v, prop)...)
		}
	case []any:
		for _, v := range x {
			out = append(out, enumsOf(root, v, prop)...)
		}
	}
	return out
}

// urlQuery escapes a query value for a path string.
func urlQuery(s string) string { return url.QueryEscape(s) }

// randomHex returns n random lowercase hex characters.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}

// wfInt reads a whole number, null (or anything else) as 0.
func wfInt(v any) int64 {
	n, _ := framework.AsInt(v)
	return n
}
