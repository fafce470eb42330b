// Package diff compares two versions of the contract and judges the change by the interface's
// versioning rules (the VER rules of rules.yaml): additive changes pass; a removed config field or
// enum value or a narrowed bound needs a minor version bump; a renamed config field keeps its old
// name for one minor version as a deprecated alias; a renamed REST field, error code or
// limit.bound_by value, a deleted capability and newly set strictness are never allowed; and
// info.version moves as the change demands.
//
// Two things are compared. OpenAPI compares two REST descriptions: the structural diff comes from
// oasdiff (github.com/oasdiff/oasdiff), whose findings are re-judged by the interface's rules, and
// the rules oasdiff has none for (strictness, deprecated aliases, the error-code and bound_by sets,
// the retryable verdicts, the version number) are checked here. Capabilities compares two capability
// catalogues: every capability's config_schema, output_kind, category and status.
//
// Every Finding names the rule it applies (a VER id) and where the change is. A Report is breaking
// when any finding fails; the caller maps that to an exit status.
package diff

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict is what the versioning rules say of one change.
type Verdict string

const (
	// Breaking changes are never allowed within a major version.
	Breaking Verdict = "breaking"
	// NeedsMinor changes (a removed field or enum value, a narrowed bound) are allowed only with a
	// minor version bump; the report fails when the version did not move by one.
	NeedsMinor Verdict = "needs-minor-bump"
	// Allowed changes needed a minor version bump and got one.
	Allowed Verdict = "allowed"
	// Compatible changes are additive (or detail): they ship without warning.
	Compatible Verdict = "compatible"
	// Note marks a change worth a reader's look that fails nothing.
	Note Verdict = "note"
)

// Fails reports whether a finding with this verdict makes the comparison breaking.
func (v Verdict) Fails() bool { return v == Breaking || v == NeedsMinor }

// The VER rules of rules.yaml a finding can name.
const (
	RuleRemovedAfterWindow = "VER-009" // a deprecated name stops being accepted after one minor version
	RuleRetired            = "VER-010" // a retired capability leaves the list
	RuleErrorSets          = "VER-012" // error codes, retryable verdicts and bound_by values are contract sets
	RuleNeverRenamed       = "VER-016" // a renamed REST field or error code is never done
	RuleAdditive           = "VER-019" // additive changes ship without warning
	RuleContract           = "VER-020" // the contract changes only through the versioning process
	RuleMinorBump          = "VER-021" // a removed field or enum value or a narrowed bound needs a minor bump
	RuleAlias              = "VER-022" // a renamed config field keeps a deprecated alias for one minor version
	RuleNotDeleted         = "VER-023" // a removed capability is retired, never deleted
	RuleStrictness         = "VER-024" // strictness is neither newly set nor dropped
	RuleVersion            = "VER-025" // info.version moves as the change demands
)

// Finding is one change and the versioning rule's verdict on it.
type Finding struct {
	// Rule is the id of the versioning rule in rules.yaml (VER-NNN).
	Rule    string  `json:"rule"`
	Verdict Verdict `json:"verdict"` // what the versioning rule says of the change
	// Change names the kind of change: an oasdiff check id (e.g. response-optional-property-removed)
	// or one of mediaspec's own (e.g. error-code-renamed, strictness-added).
	Change string `json:"change"`
	// Path says where: an operation ("GET /generations/{id}"), a webhook event, a schema or a
	// capability config field ("capabilities.tts.config.voiceId").
	Path string `json:"path"`
	// Operations lists every operation an oasdiff finding was reported for, when more than one.
	Operations []string `json:"operations,omitempty"`
	Message    string   `json:"message"` // the change in one sentence
}

// Side describes one of the two things compared.
type Side struct {
	Name    string `json:"name"`              // where the side was read from: a file name or URL
	Version string `json:"version,omitempty"` // its contract version (info.version); empty when unknown
}

// Report is the outcome of one comparison.
type Report struct {
	// Kind is "openapi" or "capabilities".
	Kind     string    `json:"kind"`
	Old      Side      `json:"old"`      // the side compared from
	New      Side      `json:"new"`      // the side compared to
	Breaking bool      `json:"breaking"` // a finding fails (Verdict.Fails)
	Findings []Finding `json:"findings"` // every change, the failing ones first
}

// Count returns how many findings have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, f := range r.Findings {
		if f.Verdict == v {
			n++
		}
	}
	return n
}

// CompareError means the two inputs could not be compared (unreadable, not a description, different
// major versions). The command exits 2 on it.
type CompareError struct {
	Err error // why, unwrapped by errors.Is and errors.As
}

// Error says the versions could not be compared, and why.
func (e *CompareError) Error() string { return "could not compare: " + e.Err.Error() }

// Unwrap is the cause.
func (e *CompareError) Unwrap() error { return e.Err }

var _ error = (*CompareError)(nil)

func compareErrorf(format string, args ...any) error {
	return &CompareError{Err: fmt.Errorf(format, args...)}
}

// collector gathers findings; its methods are the one place a finding is made.
type collector struct {
	findings []Finding
}

func (c *collector) add(rule string, v Verdict, change, path, format string, args ...any) {
	c.findings = append(c.findings, Finding{Rule: rule, Verdict: v, Change: change, Path: path, Message: fmt.Sprintf(format, args...)})
}

// finish judges the version numbers against the findings and returns the report. A finding that
// needs a minor bump is allowed when the minor moved; the version rule itself is a finding.
func (c *collector) finish(kind string, oldSide, newSide Side) (*Report, error) {
	oldV, oldOK := parseVersion(oldSide.Version)
	newV, newOK := parseVersion(newSide.Version)
	if oldOK && newOK && oldV.major != newV.major {
		return nil, compareErrorf("info.version %s and %s differ in the major version; "+
			"a new major is a new REST path (/api/v%d), compare within one major", oldSide.Version, newSide.Version, newV.major)
	}
	needs := 0
	for _, f := range c.findings {
		if f.Verdict == NeedsMinor {
			needs++
		}
	}
	switch {
	case oldOK && newOK && newV.less(oldV):
		c.add(RuleVersion, Breaking, "version-decreased", "info.version",
			"info.version moved backwards, %s -> %s", oldSide.Version, newSide.Version)
	case needs > 0 && oldOK && newOK && newV.minor > oldV.minor:
		for i := range c.findings {
			if c.findings[i].Verdict == NeedsMinor {
				c.findings[i].Verdict = Allowed
				c.findings[i].Message += fmt.Sprintf(" (allowed: info.version moves the minor, %s -> %s)", oldSide.Version, newSide.Version)
			}
		}
	case needs > 0 && oldOK && newOK:
		c.add(RuleVersion, Breaking, "version-not-bumped", "info.version",
			"%d change(s) need a minor version bump, but info.version moves %s -> %s", needs, oldSide.Version, newSide.Version)
	case needs > 0:
		c.add(RuleVersion, Breaking, "version-unknown", "info.version",
			"%d change(s) need a minor version bump, and the versions are not known (old %q, new %q)",
			needs, oldSide.Version, newSide.Version)
	}
	r := &Report{Kind: kind, Old: oldSide, New: newSide, Findings: c.findings}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if d := verdictRank(a.Verdict) - verdictRank(b.Verdict); d != 0 {
			return d
		}
		if d := strings.Compare(a.Rule, b.Rule); d != 0 {
			return d
		}
		if d := strings.Compare(a.Path, b.Path); d != 0 {
			return d
		}
		return strings.Compare(a.Message, b.Message)
	})
	for _, f := range r.Findings {
		if f.Verdict.Fails() {
			r.Breaking = true
		}
	}
	return r, nil
}

func verdictRank(v Verdict) int {
	return slices.Index([]Verdict{Breaking, NeedsMinor, Allowed, Note, Compatible}, v)
}
