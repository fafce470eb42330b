package report

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Sentence is the first statement of a failure message in words: the text before the first
// transcript line ("> ..." or "< ...") or schema dump, on one line, at most 300 characters. When a
// described assertion failed (a description, then Gomega's "Expected ..." dump), it is the
// description alone; Go value dumps left in it are shortened (Tidy).
func Sentence(msg string) string { return Clip(statement(msg), 300) }

// statement is Sentence uncut.
func statement(msg string) string {
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "> ") || strings.HasPrefix(t, "< ") || t == ">" || t == "<" || strings.HasPrefix(t, "--- call ") ||
			t == "Schema:" || t == "Value:" || (t == "Expected" && len(parts) > 0) {
			break
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	return Tidy(strings.Join(parts, " "))
}

// gomegaType is the type annotation of a Gomega value dump: <map[string]interface {} | len:2>.
var gomegaType = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<(map\[[^\]]*\][^|>]*|\[\][^|>]*|[a-z0-9.]+)( \| len:\d+)?>: `)
})

// Tidy shortens the Go value dumps a message may carry: a Gomega type annotation becomes the JSON
// kind ("an object: "), and a Go map printed with %v (map[a:1 b:map[c:2]]) becomes "{...}".
func Tidy(s string) string {
	s = gomegaType().ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "<map["):
			return "an object: "
		case strings.HasPrefix(m, "<[]"):
			return "an array: "
		}
		return ""
	})
	for {
		i := strings.Index(s, "map[")
		if i < 0 {
			return s
		}
		depth, j := 0, i+len("map")
		for ; j < len(s); j++ {
			if s[j] == '[' {
				depth++
			} else if s[j] == ']' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(s) {
			return s[:i] + "{...}"
		}
		s = s[:i] + "{...}" + s[j+1:]
	}
}

// Cause is one root cause of failures: the rules a failure was charged to and what was expected,
// with the calls that showed it and the specs that stopped on it (those that check the rules
// failed; those that only needed a call are blocked).
type Cause struct {
	Rules []string // the rules the failed assertions were charged to
	// Calls are the operations whose answers the failed assertions judged ("GET
	// /generations/{id}"), or those calls with ids masked: one, or several for one answer shape
	// broken on many routes; none when no failure named a call.
	Calls    []string
	Sentence string       // what was expected, one sentence
	Location string       // where the first spec's assertion is
	Specs    []SpecResult // the specs that stopped on it, failed and blocked
	Failed   int          // specs that failed on it
	Blocked  int          // specs blocked by it
}

// maxCallsShown is how many calls CallList names.
const maxCallsShown = 3

// CallList is the cause's calls in words: "GET /capabilities", or "POST /generations, POST
// /estimates, GET /assets/{id} and 15 more"; "" when none.
func (c Cause) CallList() string {
	if len(c.Calls) <= maxCallsShown {
		return strings.Join(c.Calls, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(c.Calls[:maxCallsShown], ", "), len(c.Calls)-maxCallsShown)
}

// Title is the cause in one line: its rules, the calls, and the sentence.
func (c Cause) Title() string {
	out := strings.Join(c.Rules, ", ")
	if calls := c.CallList(); calls != "" {
		out += " on " + calls
	}
	return out + ": " + c.Sentence
}

// calls are the requests a message names ("GET /api/v1/capabilities/image_basic").
var calls = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) /\S*`) })

// volatile masks ids, hex and numbers so one cause over many rows groups as one.
var volatile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[a-z]+_[0-9A-Za-z]{8,}|\b[0-9a-f]{16,}\b|\d+(\.\d+)?`)
})

// CallOf is the call whose answer a failed spec's assertion judged (FailedCall), normalised:
// method and URL path below the API version, ids and numbers masked, no query ("GET
// /generations/#"); "" when the failure names no call. The last call before a failure that names
// none (LastCall) is never the cause's call.
func CallOf(s SpecResult) string {
	line, _, _ := strings.Cut(s.FailedCall, "\n")
	method, raw, ok := strings.Cut(strings.TrimPrefix(line, "> "), " ")
	if !ok || method == "" || strings.ToUpper(method) != method {
		return ""
	}
	path := raw
	if u, err := url.Parse(raw); err == nil {
		path = u.Path
	}
	if i := strings.Index(path, "/api/v1"); i >= 0 {
		path = path[i+len("/api/v1"):]
	}
	return method + " " + volatile().ReplaceAllString(path, "#")
}

// causeSentence is what a failed spec says, never empty.
func causeSentence(s SpecResult) string { return Clip(causeStatement(s), 300) }

// causeStatement is causeSentence uncut.
func causeStatement(s SpecResult) string {
	if t := statement(s.Reason); t != "" {
		return t
	}
	if s.FailureLocation != "" {
		return "an assertion failed without a message at " + s.FailureLocation
	}
	return "the spec failed without a message"
}

// Causes groups the failed and blocked specs by normalised cause — the rules charged and the
// sentence with calls, ids and numbers masked, the calls listed — the cause that stopped most
// specs first.
func (r Results) Causes() []Cause {
	var out []*Cause
	by := map[string]*Cause{}
	for _, s := range r.Specs {
		if !s.Stopped() {
			continue
		}
		rules := slices.Clone(s.Blamed())
		sort.Strings(rules)
		rules = slices.Compact(rules)
		call := s.Operation
		if call == "" {
			call = CallOf(s)
		}
		// The calls a message names (a broken answer's route, ids in it) are masked in the (uncut)
		// sentence, as are ids and numbers: one expectation broken on many calls under one rule
		// (the error envelope, ok on success answers) is one cause, naming its calls. The rules
		// keep apart what differs by route: each answer's shape has its own rule.
		key := strings.Join(rules, ",") + "\x00" + volatile().ReplaceAllString(calls().ReplaceAllString(causeStatement(s), "CALL"), "#")
		c := by[key]
		if c == nil {
			c = &Cause{Rules: rules, Sentence: causeSentence(s), Location: s.FailureLocation}
			by[key] = c
			out = append(out, c)
		}
		if call != "" && !slices.Contains(c.Calls, call) {
			c.Calls = append(c.Calls, call)
		}
		c.Specs = append(c.Specs, s)
		if s.State == Blocked {
			c.Blocked++
		} else {
			c.Failed++
		}
	}
	res := make([]Cause, 0, len(out))
	for _, c := range out {
		res = append(res, *c)
	}
	sort.SliceStable(res, func(i, j int) bool { return len(res[i].Specs) > len(res[j].Specs) })
	return res
}

// Tally is "N failed, N blocked" of a cause, leaving out a zero.
func (c Cause) Tally() string {
	var parts []string
	if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.Failed))
	}
	if c.Blocked > 0 {
		parts = append(parts, fmt.Sprintf("%d blocked", c.Blocked))
	}
	return strings.Join(parts, ", ")
}
