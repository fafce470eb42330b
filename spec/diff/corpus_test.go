package diff

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// corpusDir holds the before/after pairs: fixtures/diff/{openapi,capabilities}/<case>/{old,new}.yaml.
const corpusDir = "../../fixtures/diff"

// outcome is what a comparison ends in, as the command's exit status says it.
type outcome int

const (
	compatible outcome = 0
	breaking   outcome = 1
	noCompare  outcome = 2
)

// corpusCase is one pair and what the versioning rules say of it: fails is the exact set of failing
// findings ("RULE change"), has lists findings that must be there whatever their verdict.
type corpusCase struct {
	name  string
	want  outcome
	fails []string
	has   []string
}

var openAPICorpus = []corpusCase{
	{name: "same", want: compatible},
	{name: "additive", want: compatible, has: []string{"VER-019 endpoint-added", "VER-019 new-optional-request-property",
		"VER-019 response-optional-property-added", "VER-019 request-property-enum-value-added",
		"VER-019 response-property-enum-value-added", "VER-019 request-property-max-increased", "VER-019 error-code-added"}},
	{name: "response-field-removed", want: breaking, fails: []string{"VER-016 response-optional-property-removed"}},
	{name: "request-field-renamed", want: breaking, fails: []string{"VER-016 request-property-removed"}},
	{name: "error-code-renamed", want: breaking, fails: []string{"VER-016 error-code-renamed"}},
	{name: "error-code-removed", want: breaking, fails: []string{"VER-012 error-code-removed"}},
	{name: "retryable-changed", want: breaking, fails: []string{"VER-012 error-retryable-changed"}},
	{name: "bound-by-renamed", want: breaking, fails: []string{"VER-016 limit.bound_by-value-renamed"}},
	{name: "bound-narrowed", want: breaking, fails: []string{"VER-021 request-property-max-decreased", "VER-025 version-not-bumped"}},
	{name: "bound-narrowed-with-bump", want: compatible, has: []string{"VER-021 request-property-max-decreased"}},
	{name: "enum-value-removed", want: breaking, fails: []string{"VER-021 request-property-enum-value-removed", "VER-025 version-not-bumped"}},
	{name: "enum-value-removed-with-bump", want: compatible, has: []string{"VER-021 request-property-enum-value-removed"}},
	{name: "strictness-added", want: breaking, fails: []string{"VER-024 strictness-added"}},
	{name: "strictness-removed", want: breaking, fails: []string{"VER-024 strictness-removed"}},
	{name: "route-removed", want: breaking, fails: []string{"VER-020 api-path-removed-without-deprecation"}},
	{name: "version-decreased", want: breaking, fails: []string{"VER-025 version-decreased"}},
	{name: "major-version-changed", want: noCompare},
	{name: "not-a-description", want: noCompare},
	{name: "enum-moved-under-allof", want: compatible},
	{name: "webhook-field-removed", want: breaking, fails: []string{"VER-016 response-optional-property-removed"}},
	{name: "webhook-layout-path-item", want: compatible},
}

var capabilitiesCorpus = []corpusCase{
	{name: "same", want: compatible},
	{name: "additive", want: compatible, has: []string{"VER-019 capability-added", "VER-019 field-added",
		"VER-019 enum-value-added", "VER-019 bound-widened"}},
	{name: "renamed-with-alias", want: compatible, has: []string{"VER-022 alias-added", "VER-019 field-added"}},
	{name: "renamed-without-alias", want: breaking, fails: []string{"VER-022 renamed-without-alias"}},
	{name: "alias-not-deprecated", want: breaking, fails: []string{"VER-022 alias-not-deprecated"}},
	{name: "alias-with-default", want: breaking, fails: []string{"VER-022 alias-malformed"}},
	{name: "alias-removed-after-window", want: compatible, has: []string{"VER-009 alias-removed"}},
	{name: "alias-removed-early", want: breaking, fails: []string{"VER-009 alias-removed-early"}},
	{name: "enum-value-removed", want: breaking, fails: []string{"VER-021 enum-value-removed", "VER-025 version-not-bumped"}},
	{name: "enum-value-removed-with-bump", want: compatible, has: []string{"VER-021 enum-value-removed"}},
	{name: "field-removed-with-bump", want: compatible, has: []string{"VER-021 field-removed"}},
	{name: "bound-narrowed", want: breaking, fails: []string{"VER-021 bound-narrowed", "VER-025 version-not-bumped"}},
	{name: "bound-narrowed-with-bump", want: compatible, has: []string{"VER-021 bound-narrowed"}},
	{name: "capability-retired", want: compatible, has: []string{"VER-010 capability-retired"}},
	{name: "capability-deleted", want: breaking, fails: []string{"VER-023 capability-deleted"}},
	{name: "strictness-added", want: breaking, fails: []string{"VER-024 strictness-added"}},
	{name: "output-kind-changed", want: breaking, fails: []string{"VER-020 output-kind-changed"}},
	{name: "type-changed", want: breaking, fails: []string{"VER-020 type-changed"}},
	{name: "required-field-added", want: breaking, fails: []string{"VER-020 field-became-required"}},
	{name: "default-changed", want: breaking, fails: []string{"VER-020 default-changed"}},
}

func TestOpenAPICorpus(t *testing.T) {
	for _, tc := range openAPICorpus {
		t.Run(tc.name, func(t *testing.T) {
			oldData, newData := readPair(t, "openapi", tc.name)
			r, err := OpenAPI(context.Background(), "old.yaml", oldData, "new.yaml", newData)
			checkOutcome(t, tc, r, err)
		})
	}
}

func TestCapabilitiesCorpus(t *testing.T) {
	for _, tc := range capabilitiesCorpus {
		t.Run(tc.name, func(t *testing.T) {
			oldData, newData := readPair(t, "capabilities", tc.name)
			oldCat, err := ParseCatalogue("old.yaml", oldData)
			if err != nil {
				t.Fatal(err)
			}
			newCat, err := ParseCatalogue("new.yaml", newData)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Capabilities(oldCat, newCat)
			checkOutcome(t, tc, r, err)
		})
	}
}

// TestCorpusComplete keeps the tables and the directories in step: every pair is judged.
func TestCorpusComplete(t *testing.T) {
	for kind, table := range map[string][]corpusCase{"openapi": openAPICorpus, "capabilities": capabilitiesCorpus} {
		entries, err := os.ReadDir(filepath.Join(corpusDir, kind))
		if err != nil {
			t.Fatal(err)
		}
		var dirs, names []string
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
		for _, tc := range table {
			names = append(names, tc.name)
		}
		sort.Strings(names)
		if !slices.Equal(dirs, names) {
			t.Errorf("%s: corpus directories %v, test table %v", kind, dirs, names)
		}
	}
}

// TestRulesExist checks that every rule a finding can name is in the rule catalogue.
func TestRulesExist(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{RuleRemovedAfterWindow, RuleRetired, RuleErrorSets, RuleNeverRenamed, RuleAdditive,
		RuleContract, RuleMinorBump, RuleAlias, RuleNotDeleted, RuleStrictness, RuleVersion} {
		if _, ok := cat.Get(id); !ok {
			t.Errorf("rule %s is not in rules.yaml", id)
		}
	}
}

func readPair(t *testing.T, kind, name string) (oldData, newData []byte) {
	t.Helper()
	dir := filepath.Join(corpusDir, kind, name)
	oldData, err := os.ReadFile(filepath.Join(dir, "old.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	newData, err = os.ReadFile(filepath.Join(dir, "new.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return oldData, newData
}

func checkOutcome(t *testing.T, tc corpusCase, r *Report, err error) {
	t.Helper()
	if tc.want == noCompare {
		if !IsCompareError(err) {
			t.Fatalf("want could-not-compare, got report %v, error %v", r, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Breaking; got != (tc.want == breaking) {
		t.Errorf("breaking = %v, want %v", got, tc.want == breaking)
	}
	var fails, all []string
	for _, f := range r.Findings {
		if f.Rule == "" || f.Path == "" || f.Message == "" {
			t.Errorf("finding without rule, path or message: %+v", f)
		}
		key := f.Rule + " " + f.Change
		all = append(all, key)
		if f.Verdict.Fails() && !slices.Contains(fails, key) {
			fails = append(fails, key)
		}
	}
	sort.Strings(fails)
	want := slices.Clone(tc.fails)
	sort.Strings(want)
	if !slices.Equal(fails, want) {
		t.Errorf("failing findings %v, want %v", fails, want)
	}
	for _, h := range tc.has {
		if !slices.Contains(all, h) {
			t.Errorf("no finding %q among %v", h, all)
		}
	}
	if t.Failed() {
		_ = r.Write(os.Stderr, "text", true)
	}
}
