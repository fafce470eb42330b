package judge

import (
	"regexp"
	"testing"
)

// IsID answers what IDPattern's regular expression answers.
func TestIsIDMatchesPattern(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef"
	for _, k := range IDKinds() {
		re := regexp.MustCompile(k.Pattern())
		for _, s := range []string{
			k.Prefix + hex, k.Prefix + hex[:31], k.Prefix + hex + "0", k.Prefix + "0123456789ABCDEF0123456789abcdef",
			" " + k.Prefix + hex, k.Prefix + hex + "\n", "x" + k.Prefix + hex, hex, k.Prefix, "",
			k.Prefix + "0123456789abcdef0123456789abcdeg",
		} {
			if got, want := k.Is(s), re.MatchString(s); got != want {
				t.Errorf("%s.Is(%q) = %v, the pattern says %v", k.Prefix, s, got, want)
			}
		}
	}
}

func TestTable(t *testing.T) {
	if r, ok := PatternRule("^whd_[0-9a-f]{32}$"); !ok || r != "ID-009" {
		t.Errorf("PatternRule(whd_) = %q %v", r, ok)
	}
	if _, ok := PatternRule("^run_[0-9a-f]{32}$"); ok {
		t.Error("run_ ids are opaque (ID-011): no rule states their form")
	}
	if k, ok := FieldKind("default_voice_id"); !ok || k.Prefix != "voc_" || k.Rule != "ID-005" {
		t.Errorf("FieldKind(default_voice_id) = %+v %v", k, ok)
	}
	if p, ok := IsAnyID("wfr_0123456789abcdef0123456789abcdef"); !ok || p != "wfr_" {
		t.Errorf("IsAnyID(wfr_...) = %q %v", p, ok)
	}
	text := "see gen_0123456789abcdef0123456789abcdef and run_0123456789abcdef0123456789abcdef"
	if got := IDsInText().FindAllString(text, -1); len(got) != 2 {
		t.Errorf("IDsInText found %q", got)
	}
	if got := TextIDsInText().FindAllString(text, -1); len(got) != 1 {
		t.Errorf("TextIDsInText found %q", got)
	}
	seen := map[string]bool{}
	for _, k := range IDKinds() {
		for _, f := range k.Fields {
			if seen[f] {
				t.Errorf("field %s is in two kinds", f)
			}
			seen[f] = true
		}
	}
}
