package report

import (
	"fmt"
	"sort"
	"strings"
)

// maxSpecsPerAdvisory is how many specs an advisory names; Count has them all.
const maxSpecsPerAdvisory = 3

// Advisory is a difference from the reference's own choices: an answer the interface text allows
// (the normative view of the description accepts it) that the reference document refuses. It is
// charged to no rule and never fails a run, except under check --strict, where it is a failure
// instead and not listed here. The same difference seen again only counts.
type Advisory struct {
	// Operation is the documented operation ("GET /capabilities/{id}"), or the event type.
	Operation string `json:"operation"`
	// Status is the answer's status; 0 for an event.
	Status int `json:"status,omitempty"`
	// Path is the field: a JSON path into the body ("$.description"), "header NAME", or empty for
	// the answer as a whole.
	Path string `json:"path,omitempty"`
	// Reference is what the reference document says about the field.
	Reference string `json:"reference"`
	// Count is how many times the difference was seen; Specs are the first specs that saw it.
	Count int      `json:"count"`
	Specs []string `json:"specs,omitempty"` // the first specs that saw it, up to a few
}

// Line renders the advisory on one line: the call, the field and what the reference says.
func (a Advisory) Line() string {
	call := a.Operation
	if a.Status != 0 {
		call = fmt.Sprintf("%s -> %d", a.Operation, a.Status)
	}
	field := ""
	if a.Path != "" {
		field = " " + a.Path
	}
	return fmt.Sprintf("%s%s: %s (the reference document; seen %d times)", call, field, a.Reference, a.Count)
}

func (a Advisory) key() string {
	return fmt.Sprintf("%s\x00%d\x00%s\x00%s", a.Operation, a.Status, a.Path, a.Reference)
}

// MergeAdvisories adds the advisories of each list together: one entry per operation, status,
// field and reference text, counts summed, the first specs kept, sorted by operation, status and
// field.
func MergeAdvisories(lists ...[]Advisory) []Advisory {
	by := map[string]*Advisory{}
	for _, list := range lists {
		for _, a := range list {
			cur := by[a.key()]
			if cur == nil {
				c := a
				c.Specs = nil
				cur = &c
				cur.Count = 0
				by[a.key()] = cur
			}
			cur.Count += max(a.Count, 1)
			for _, s := range a.Specs {
				if len(cur.Specs) < maxSpecsPerAdvisory && !contains(cur.Specs, s) {
					cur.Specs = append(cur.Specs, s)
				}
			}
		}
	}
	out := make([]Advisory, 0, len(by))
	for _, a := range by {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.Status != b.Status {
			return a.Status < b.Status
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Reference < b.Reference
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// advisorySuite is the JUnit suite that lists the advisories: no test cases (an advisory is never
// a failure), one property per advisory and the whole list as system-out.
func advisorySuite(list []Advisory) Suite {
	s := Suite{Name: "mediaspec.advisories", Properties: &Properties{}}
	lines := make([]string, len(list))
	for i, a := range list {
		lines[i] = a.Line()
		s.Properties.List = append(s.Properties.List, Property{Name: fmt.Sprintf("advisory.%d", i+1), Value: a.Line()})
	}
	s.Out = "Differences from the reference's own choices (never failures):\n" + strings.Join(lines, "\n")
	return s
}
