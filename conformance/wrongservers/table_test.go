package wrongservers

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/spec"
)

// suiteLabels are the label lists of the suite's specs, read once per test process (building the
// tree claims the process's one suite).
var suiteLabels = sync.OnceValues(func() ([][]string, error) { return conformance.SpecLabels(context.Background()) })

// selected counts the specs filter selects ("" selects every spec).
func selected(t *testing.T, filter string) int {
	t.Helper()
	specs, err := suiteLabels()
	if err != nil {
		t.Fatal(err)
	}
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		t.Fatalf("label filter %q: %v", filter, err)
	}
	n := 0
	for _, ls := range specs {
		if match(ls) {
			n++
		}
	}
	return n
}

// TestRowsSelectSpecs: every row of both tables says which specs judge it, and its label filter
// selects at least one spec of the suite: a row whose filter selects nothing would be measured on
// an empty run (a wrong server never killed, a legal variant passed by default).
func TestRowsSelectSpecs(t *testing.T) {
	if selected(t, "") == 0 || selected(t, "AUTH-001") == 0 || selected(t, "NO-RULE-000") != 0 {
		t.Fatal("the suite's spec list reads wrong: the whole suite, AUTH-001 and a rule nobody has")
	}
	for _, s := range defined() {
		if n := selected(t, s.Filter()); n == 0 {
			t.Errorf("wrong server %s: its filter %q selects no spec", s.Name, s.Filter())
		}
	}
	vs, err := LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if n := selected(t, v.Filter); n == 0 {
			t.Errorf("legal variant %s: its filter %q selects no spec", v.Name, v.Filter)
		}
	}
}

// TestEveryAreaHasLegalRows: every rule area the suite has specs for is seen by at least one legal
// variant that is not the whole suite's (a variant aimed at it), so a spec stricter than the text
// in any area meets a variant that shows it.
func TestEveryAreaHasLegalRows(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	specs, err := suiteLabels()
	if err != nil {
		t.Fatal(err)
	}
	vs, err := LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{} // area -> the aimed variants whose filter selects a spec of it
	withSpecs := map[string]bool{}
	for _, v := range vs {
		if v.Filter == "" {
			continue
		}
		match, err := types.ParseLabelFilter(v.Filter)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		for _, ls := range specs {
			if !match(ls) {
				continue
			}
			for _, l := range ls {
				if _, ok := cat.Get(l); ok {
					seen[ruleArea(l)] = append(seen[ruleArea(l)], v.Name)
				}
			}
		}
	}
	for _, ls := range specs {
		for _, l := range ls {
			if _, ok := cat.Get(l); ok {
				withSpecs[ruleArea(l)] = true
			}
		}
	}
	var missing []string
	for area := range withSpecs {
		if len(seen[area]) == 0 {
			missing = append(missing, area)
		}
	}
	sort.Strings(missing)
	for _, area := range missing {
		t.Errorf("area %s (%s) has specs but no legal variant aimed at it", area, cat.Areas[area])
	}
}

// filterPart is a rule id or a /regexp/ label of a label filter.
var filterPart = regexp.MustCompile(`/[^/]+/|\b[A-Z]+-\d{3}\b`)

// TestFilterPartsSelectSpecs: every part of every row's filter selects what it says, not only the
// filter as a whole: each rule id it names is a rule of the catalogue that a spec of the suite is
// labeled with, and each /regexp/ matches a spec's label. A mistyped id beside a right one
// ("GEN-001 || GEN-0O2") still selects specs, so the whole filter's count cannot show it.
func TestFilterPartsSelectSpecs(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	check := func(row, filter string) {
		t.Helper()
		for _, part := range filterPart.FindAllString(filter, -1) {
			if !strings.HasPrefix(part, "/") {
				if _, ok := cat.Get(part); !ok {
					t.Errorf("%s: its filter %q names %s, a rule the catalogue does not have", row, filter, part)
					continue
				}
			}
			if selected(t, part) == 0 {
				t.Errorf("%s: the part %s of its filter %q selects no spec", row, part, filter)
			}
		}
	}
	for _, s := range defined() {
		check("wrong server "+s.Name, s.Filter())
	}
	vs, err := LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		check("legal variant "+v.Name, v.Filter)
	}
}
