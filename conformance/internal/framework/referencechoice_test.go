package framework

import (
	"slices"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

const choiceCatalogue = `version: 1
areas: {ASSET: Assets, AUTH: Authentication}
needs: {control: c}
rules:
  - {id: ASSET-001, level: MUST, section: Gaps, statement: the asset row shape, interpretation: designed, basis: reference, judged: strict-only}
  - {id: ASSET-002, level: MUST, section: Gaps, statement: the asset filters, interpretation: designed, basis: reference, judged: strict-only}
  - {id: ASSET-003, level: MUST, section: Gaps, statement: an unknown asset is not_found, interpretation: designed, basis: reference, judged: open}
  - {id: AUTH-001, level: MUST, section: Authentication, statement: a key is required}
  - {id: AUTH-004, level: MUST, section: Authentication, statement: read as, interpretation: our reading, basis: text}
`

func TestReferenceChoiceOnlyWhenEveryRuleIsTheReferences(t *testing.T) {
	cat, err := spec.ParseRules([]byte(choiceCatalogue))
	if err != nil {
		t.Fatal(err)
	}
	f := &Framework{catalogue: cat}
	for _, c := range []struct {
		ids  []string
		want bool
	}{
		{[]string{"ASSET-001"}, true},
		{[]string{"ASSET-001", "ASSET-002"}, true},
		{[]string{"ASSET-001", "AUTH-001"}, false}, // a text rule among them: a failure
		{[]string{"AUTH-004"}, false},              // an interpretation of the text
		{[]string{"ASSET-003"}, false},             // the reference's rule, but what it asserts is the text's
		{[]string{"NOPE-001"}, false},
		{nil, false},
	} {
		if got := f.referenceOnly(c.ids); (got != nil) != c.want || (c.want && !slices.Equal(got, c.ids)) {
			t.Errorf("referenceOnly(%v) = %v, want reference choice %v", c.ids, got, c.want)
		}
	}
	// --strict holds the mock to its own choices: every failure fails. --reference alone (the
	// wrong-server table's runs) names the mock's paths and header, and is held to the text.
	f.step = []string{"ASSET-001"}
	for _, cfg := range []Config{{}, {Reference: true}} {
		f.cfg = cfg
		if got := f.referenceChoice(); !slices.Equal(got, []string{"ASSET-001"}) {
			t.Errorf("referenceChoice() = %v on a target held to the text (reference %v)", got, cfg.Reference)
		}
	}
	f.cfg = Config{Strict: true}
	if got := f.referenceChoice(); got != nil {
		t.Errorf("referenceChoice() = %v with --strict, want nil", got)
	}
	reason := ReferenceChoiceSkip([]string{"ASSET-001"}, "an asset row carries scan_status\nExpected ...")
	if !strings.Contains(reason, "ASSET-001") || !strings.HasSuffix(reason, "an asset row carries scan_status") {
		t.Errorf("reason %q", reason)
	}
}
