package specs

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// TestReferenceOnlyRulesAreJudgedSo holds the specs to rules.yaml's judged: a spec asserts a
// rule's part under s.ReferenceOnly only when rules.yaml says the rule has a reference part
// (text-part or strict-only), and skips a whole spec under s.StrictOnly only for a rule judged
// strict-only. A rule judged open asserts what the text states, everywhere.
func TestReferenceOnlyRulesAreJudgedSo(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\.(ReferenceOnly|StrictOnly)\("([A-Z]+(?:-[A-Z]+)?-[0-9]{3})"`)
	seen := 0
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			seen++
			how, id := m[1], m[2]
			r, ok := cat.Get(id)
			switch {
			case !ok:
				t.Errorf("%s: %s names %s, not a rule of rules.yaml", name, how, id)
			case r.Basis != spec.BasisReference:
				t.Errorf("%s: %s(%q): the rule's basis is %q, not reference: what the text states is asserted on every run", name, how, id, r.Basis)
			case how == "StrictOnly" && r.Judged != spec.JudgedStrictOnly:
				t.Errorf("%s: StrictOnly(%q) skips a spec of a rule judged %s, not strict-only", name, id, r.Judged)
			case how == "ReferenceOnly" && r.Judged == spec.JudgedOpen:
				t.Errorf("%s: ReferenceOnly(%q) on a rule judged open: judge it text-part (or strict-only) in rules.yaml, or assert it", name, id)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no ReferenceOnly or StrictOnly call found: the pattern no longer matches the specs")
	}
}
