// Package answer reads and checks the fields of the target's answers for the suite's specs: a
// field of a given type (an object, an integer, a string, a string or null, an array of strings),
// a timestamp, and what every answer must pass wherever it sits (ids in the form of the one id
// table, timestamps with a zone, no API key, no CORS header, no link where the text gives none).
//
// Its functions fail the running spec (Gomega's Expect) with the answer's exchange when an answer
// breaks the text; they are called from inside a spec. ParseStamp, StampPattern and EnumsOf are
// pure.
package answer

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// ObjectAt returns the object at path, failing the spec when it is not one.
func ObjectAt(r *framework.Response, path string) map[string]any {
	GinkgoHelper()
	v := r.Field(path)
	m, ok := v.(map[string]any)
	Expect(ok).To(BeTrue(), fmt.Sprintf("%q is not an object", path)+r.Describe())
	return m
}

// AsObject returns v as an object, failing the spec (with r's exchange) when it is not one.
func AsObject(r *framework.Response, v any, what string) map[string]any {
	GinkgoHelper()
	m, ok := v.(map[string]any)
	Expect(ok).To(BeTrue(), what+" is not an object"+r.Describe())
	return m
}

// Int returns the integer m[key], failing the spec when it is absent or not whole.
func Int(r *framework.Response, m map[string]any, key, what string) int64 {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q", what, key)+r.Describe())
	n, isInt := framework.AsInt(v)
	Expect(isInt).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want an integer", what, key, v)+r.Describe())
	return n
}

// String returns the string m[key], failing the spec when it is absent or not a string.
func String(r *framework.Response, m map[string]any, key, what string) string {
	GinkgoHelper()
	v, ok := m[key]
	Expect(ok).To(BeTrue(), fmt.Sprintf("%s has no %q", what, key)+r.Describe())
	s, isStr := v.(string)
	Expect(isStr).To(BeTrue(), fmt.Sprintf("%s.%s is %v, want a string", what, key, v)+r.Describe())
	return s
}

// NullableString checks m[key] is present and a string or null; it returns the string ("" for
// null) and whether it was null.
func NullableString(r *framework.Response, m map[string]any, key, what string) (string, bool) {
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

// Strings checks m[key] is an array of strings (never null) and returns it.
func Strings(r *framework.Response, m map[string]any, key, what string) []string {
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

// OneOf is a matcher for enum values.
func OneOf(values ...string) OmegaMatcher {
	ms := make([]any, 0, len(values))
	for _, v := range values {
		ms = append(ms, v)
	}
	return BeElementOf(ms...)
}

// Time reads the timestamp at path (ParseStamp), failing the spec when it is not one.
func Time(r *framework.Response, path string) time.Time {
	GinkgoHelper()
	t, err := ParseStamp(r.String(path))
	Expect(err).NotTo(HaveOccurred(), path+" is RFC 3339"+r.Describe())
	return t
}

// SchemaProps returns the properties of a capability detail's config_schema.
func SchemaProps(d *framework.Response) map[string]any {
	GinkgoHelper()
	props, _ := ObjectAt(d, "config_schema")["properties"].(map[string]any)
	return props
}

// EnumsOf collects the enum arrays of every property named prop anywhere in a JSON document; a
// property given as a local $ref ("#/components/schemas/X") is resolved in root.
func EnumsOf(root, doc any, prop string) [][]string {
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
			out = append(out, EnumsOf(root, v, prop)...)
		}
	case []any:
		for _, v := range x {
			out = append(out, EnumsOf(root, v, prop)...)
		}
	}
	return out
}

// NoKeyIn fails the spec when key appears anywhere in the raw answer. The check is a boolean so
// the failure message never prints the key.
func NoKeyIn(r *framework.Response, key string) {
	GinkgoHelper()
	if key == "" {
		return
	}
	Expect(strings.Contains(string(r.Body), key)).To(BeFalse(),
		"the answer body contains the caller's API key (the transcript shows it redacted)"+r.Describe())
	for name, vals := range r.Header {
		for _, v := range vals {
			Expect(strings.Contains(v, key)).To(BeFalse(), "the answer header "+name+" contains the caller's API key"+r.Describe())
		}
	}
}

// NoCORS fails the spec when the answer carries any Access-Control-* header.
func NoCORS(r *framework.Response) {
	GinkgoHelper()
	for name := range r.Header {
		Expect(strings.HasPrefix(http.CanonicalHeaderKey(name), "Access-Control-")).To(BeFalse(),
			"the API sends no CORS headers, but the answer has "+name+r.Describe())
	}
}

// NoKeyAnywhere fails when any object key in v (at any depth) is one of keys.
func NoKeyAnywhere(v any, where string, keys ...string) {
	GinkgoHelper()
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			for _, bad := range keys {
				Expect(k).NotTo(Equal(bad), fmt.Sprintf("%s carries %q", where, bad))
			}
			NoKeyAnywhere(val, where+"."+k, keys...)
		}
	case []any:
		for i, val := range x {
			NoKeyAnywhere(val, fmt.Sprintf("%s[%d]", where, i), keys...)
		}
	}
}

// linkPattern finds an http or https URL anywhere in a string.
var linkPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bhttps?://`) })

// NoLinks fails when any string value in v, at any depth and under any key, holds an http(s) URL,
// except under the keys in allowed (a path's last key, e.g. "preview_url" where the interface
// names a link in that row). Where links may not appear, a signed URL under a key nobody expected
// (thumbnail, preview_image_url, ...) is as much a leak as one under "url". JSON Schema's
// identifiers ($schema, $id, $ref) name documents, not files, and are never links.
func NoLinks(v any, where string, allowed ...string) {
	GinkgoHelper()
	allowed = append([]string{"$schema", "$id", "$ref"}, allowed...)
	var walk func(v any, path, key string)
	walk = func(v any, path, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				walk(val, path+"."+k, k)
			}
		case []any:
			for i, val := range x {
				walk(val, fmt.Sprintf("%s[%d]", path, i), key)
			}
		case string:
			for _, ok := range allowed {
				if key == ok {
					return
				}
			}
			Expect(linkPattern().MatchString(x)).To(BeFalse(), fmt.Sprintf("%s holds a link (%.80q) where the interface gives none", path, x))
		}
	}
	walk(v, where, "")
}

// StampPattern is an RFC 3339 date-time with a zone: Z or a numeric offset (the text says
// only ISO 8601; the mock writes UTC with Z). A pattern for MatchRegexp, which compiles it.
const StampPattern = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}([.,]\d+)?(Z|[+-]\d{2}(:?\d{2})?)$`

// ParseStamp parses an answer's timestamp: an ISO 8601 extended date-time with a zone, RFC 3339's
// forms (Z, +00:00, a fraction after a dot) and the other ISO 8601 forms of the zone and the
// fraction (+0000, +00, a fraction after a comma) alike. The text says "ISO 8601" and refuses only
// zoneless times (in filters); issue 35 decided both readings pass.
func ParseStamp(s string) (time.Time, error) {
	m := stampParts().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date-time with a zone", s)
	}
	frac, zone := strings.Replace(m[2], ",", ".", 1), m[3]
	switch {
	case zone == "Z":
	case len(zone) == 3: // +hh
		zone += ":00"
	case len(zone) == 5: // +hhmm
		zone = zone[:3] + ":" + zone[3:]
	}
	return time.Parse(time.RFC3339Nano, m[1]+frac+zone)
}

var stampParts = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})([.,]\d+)?(Z|[+-]\d{2}(?::?\d{2})?)$`)
})

// CheckStamps checks every string under a key ending in _at (and every "now") in doc, and
// returns how many it checked.
func CheckStamps(r *framework.Response, doc any, path string) int {
	GinkgoHelper()
	n := 0
	switch x := doc.(type) {
	case map[string]any:
		for k, v := range x {
			p := path + "." + k
			if str, ok := v.(string); ok && (strings.HasSuffix(k, "_at") || k == "now") {
				Expect(str).To(MatchRegexp(StampPattern), p+" is an ISO 8601 date-time with a zone"+r.Describe())
				_, err := ParseStamp(str)
				Expect(err).NotTo(HaveOccurred(), p+" parses as a date-time"+r.Describe())
				n++
				continue
			}
			n += CheckStamps(r, v, p)
		}
	case []any:
		for i, v := range x {
			n += CheckStamps(r, v, fmt.Sprintf("%s[%d]", path, i))
		}
	}
	return n
}

// idPrefixes maps id fields of answers to the prefix their values carry (the one id table,
// package judge).
var idPrefixes = func() map[string]string {
	m := map[string]string{}
	for _, k := range judge.IDKinds() {
		for _, f := range k.Fields {
			m[f] = k.Prefix
		}
	}
	return m
}()

// CheckIDs checks every value of an id field of idPrefixes in doc (a string, a string array, or
// null) against ^<prefix>[0-9a-f]{32}$ and returns how many ids it checked.
func CheckIDs(r *framework.Response, doc any, path string) int {
	GinkgoHelper()
	n := 0
	one := func(p, prefix string, v any) {
		str, ok := v.(string)
		Expect(ok).To(BeTrue(), p+" is a string"+r.Describe())
		Expect(str).To(MatchRegexp(judge.IDPattern(prefix)), p+" is "+prefix+" and 32 lowercase hex"+r.Describe())
		n++
	}
	switch x := doc.(type) {
	case map[string]any:
		for k, v := range x {
			p := path + "." + k
			prefix, isID := idPrefixes[k]
			switch {
			case isID && v == nil:
			case isID:
				if arr, ok := v.([]any); ok {
					for i, e := range arr {
						one(fmt.Sprintf("%s[%d]", p, i), prefix, e)
					}
				} else {
					one(p, prefix, v)
				}
			default:
				n += CheckIDs(r, v, p)
			}
		}
	case []any:
		for i, v := range x {
			n += CheckIDs(r, v, fmt.Sprintf("%s[%d]", path, i))
		}
	}
	return n
}
