package judge

import (
	"regexp"
	"strings"
	"sync"
)

// IDHexLen is how many lowercase hex characters follow an id's prefix ("Id prefixes": the prefix
// then exactly 32 lowercase hex characters).
const IDHexLen = 32

// IDKind is one kind of prefixed id: its prefix, the rule of spec/rules.yaml that states its form,
// and the answer fields that carry it.
type IDKind struct {
	// Prefix is the id's prefix with its underscore ("gen_").
	Prefix string
	// Rule states the form; "" for an id whose form is the reference's own (the text shows none).
	Rule string
	// Fields are the JSON keys of answers and requests whose values are ids of this kind.
	Fields []string
}

// Pattern is the regular expression every id of the kind matches: ^<prefix>[0-9a-f]{32}$.
func (k IDKind) Pattern() string { return IDPattern(k.Prefix) }

// Is reports whether s is an id of the kind: the prefix and exactly 32 lowercase hex characters.
func (k IDKind) Is(s string) bool { return IsID(k.Prefix, s) }

// idKinds is the one table of id forms. The text's own kinds come first, in the order of its "Id
// prefixes" rules (ID-002 .. ID-010); then the reference's own: run_ (the text calls run_id opaque,
// ID-011: the mock's run ids have this form but nothing may require it) and key_ (the ids of API
// keys: the control API's, the audit's and the proxy's findings name a key by one).
var idKinds = []IDKind{
	{"gen_", "ID-002", []string{"generation_id", "generation_ids", "approved_voice_generation_id"}},
	{"bg_", "ID-003", []string{"batch_group_id"}},
	{"ast_", "ID-004", []string{"asset_id", "actor_image_asset_id"}},
	{"act_", "ID-005", []string{"actor_id"}},
	{"voc_", "ID-005", []string{"voice_id", "default_voice_id"}},
	{"wf_", "ID-006", []string{"workflow_id"}},
	{"wfr_", "ID-007", []string{"workflow_run_id"}},
	{"wh_", "ID-008", []string{"webhook_id"}},
	{"whd_", "ID-009", nil},
	{"captpl_", "ID-010", []string{"template_id"}},
	{"run_", "", nil},
	{"key_", "", nil},
}

// IDKinds returns the table of id forms (a copy): the text's kinds, each with the rule that
// states it, then the reference's own (Rule "").
func IDKinds() []IDKind {
	out := make([]IDKind, len(idKinds))
	for i, k := range idKinds {
		k.Fields = append([]string(nil), k.Fields...)
		out[i] = k
	}
	return out
}

// FieldKind returns the kind of id an answer field carries ("asset_id": ast_); false when the
// field holds no prefixed id.
func FieldKind(field string) (IDKind, bool) {
	for _, k := range idKinds {
		for _, f := range k.Fields {
			if f == field {
				return k, true
			}
		}
	}
	return IDKind{}, false
}

// PatternRule is the rule that states an id pattern of the description ("^gen_[0-9a-f]{32}$":
// ID-002); false for any other pattern.
func PatternRule(pattern string) (string, bool) {
	for _, k := range idKinds {
		if k.Rule != "" && k.Pattern() == pattern {
			return k.Rule, true
		}
	}
	return "", false
}

// IDPattern is the regular expression of an id with prefix: ^<prefix>[0-9a-f]{32}$.
func IDPattern(prefix string) string {
	return "^" + regexp.QuoteMeta(prefix) + "[0-9a-f]{32}$"
}

// IsID reports whether s is prefix followed by exactly 32 lowercase hex characters (what
// IDPattern(prefix) matches), without a regular expression.
func IsID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && len(rest) == IDHexLen && isLowerHex(rest)
}

// IsAnyID reports whether s is an id of the table's kinds (text's or reference's) in its exact
// form, and which prefix it carries.
func IsAnyID(s string) (prefix string, ok bool) {
	for _, k := range idKinds {
		if IsID(k.Prefix, s) {
			return k.Prefix, true
		}
	}
	return "", false
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// prefixAlternation is every prefix of the table without its underscore, as a regexp group body.
func prefixAlternation(textOnly bool) string {
	names := make([]string, 0, len(idKinds))
	for _, k := range idKinds {
		if textOnly && k.Rule == "" {
			continue
		}
		names = append(names, regexp.QuoteMeta(strings.TrimSuffix(k.Prefix, "_")))
	}
	return strings.Join(names, "|")
}

var (
	anyIDInText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(` + prefixAlternation(false) + `)_[0-9a-f]{32}\b`)
	})
	textIDInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(` + prefixAlternation(true) + `)_[0-9a-f]{32}\b`) })
)

// IDsInText matches an id of any kind of the table, on word boundaries, anywhere in a text; the
// first group is its prefix without the underscore. Compiled at first use.
func IDsInText() *regexp.Regexp { return anyIDInText() }

// TextIDsInText is IDsInText for the kinds the text states only (no run_ or key_).
func TextIDsInText() *regexp.Regexp { return textIDInText() }
