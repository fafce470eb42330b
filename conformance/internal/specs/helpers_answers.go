package specs

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
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

// Checks every answer must pass: no API key, no CORS headers, timestamps and ids in their formats.

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

// noKeyAnywhere fails when any object key in v (at any depth) is one of keys.
func noKeyAnywhere(v any, where string, keys ...string) {
	GinkgoHelper()
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			for _, bad := range keys {
				Expect(k).NotTo(Equal(bad), fmt.Sprintf("%s carries %q", where, bad))
			}
			noKeyAnywhere(val, where+"."+k, keys...)
		}
	case []any:
		for i, val := range x {
			noKeyAnywhere(val, fmt.Sprintf("%s[%d]", where, i), keys...)
		}
	}
}

// linkPattern finds an http or https URL anywhere in a string.
var linkPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bhttps?://`) })

// noLinks fails when any string value in v, at any depth and under any key, holds an http(s) URL,
// except under the keys in allowed (a path's last key, e.g. "preview_url" where the interface
// names a link in that row). Where links may not appear, a signed URL under a key nobody expected
// (thumbnail, preview_image_url, ...) is as much a leak as one under "url". JSON Schema's
// identifiers ($schema, $id, $ref) name documents, not files, and are never links.
func noLinks(v any, where string, allowed ...string) {
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

// timestampPattern is an RFC 3339 date-time with a zone: Z or a numeric offset (the text says
// only ISO 8601; the mock writes UTC with Z). A pattern for MatchRegexp, which compiles it.
const timestampPattern = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}([.,]\d+)?(Z|[+-]\d{2}(:?\d{2})?)$`

// parseStamp parses an answer's timestamp: an ISO 8601 extended date-time with a zone, RFC 3339's
// forms (Z, +00:00, a fraction after a dot) and the other ISO 8601 forms of the zone and the
// fraction (+0000, +00, a fraction after a comma) alike. The text says "ISO 8601" and refuses only
// zoneless times (in filters); issue 35 decided both readings pass.
func parseStamp(s string) (time.Time, error) {
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

// checkTimestamps checks every string under a key ending in _at (and every "now") in doc, and
// returns how many it checked.
func checkTimestamps(r *framework.Response, doc any, path string) int {
	GinkgoHelper()
	n := 0
	switch x := doc.(type) {
	case map[string]any:
		for k, v := range x {
			p := path + "." + k
			if str, ok := v.(string); ok && (strings.HasSuffix(k, "_at") || k == "now") {
				Expect(str).To(MatchRegexp(timestampPattern), p+" is an ISO 8601 date-time with a zone"+r.Describe())
				_, err := parseStamp(str)
				Expect(err).NotTo(HaveOccurred(), p+" parses as a date-time"+r.Describe())
				n++
				continue
			}
			n += checkTimestamps(r, v, p)
		}
	case []any:
		for i, v := range x {
			n += checkTimestamps(r, v, fmt.Sprintf("%s[%d]", path, i))
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

// checkIDs checks every value of an id field of idPrefixes in doc (a string, a string array, or
// null) against ^<prefix>[0-9a-f]{32}$ and returns how many ids it checked.
func checkIDs(r *framework.Response, doc any, path string) int {
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
				n += checkIDs(r, v, p)
			}
		}
	case []any:
		for i, v := range x {
			n += checkIDs(r, v, fmt.Sprintf("%s[%d]", path, i))
		}
	}
	return n
}

// serviceNow reads the target's clock: control's, or the wall clock of a target without it (Spec.ClockNow).
func serviceNow(ctx context.Context, s *framework.Spec) time.Time {
	GinkgoHelper()
	return s.ClockNow(ctx)
}
