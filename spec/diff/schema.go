package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// schemaWalk compares two JSON Schemas of something a client sends (a capability config or a REST
// request body), given as decoded JSON or YAML (map[string]any).
//
// With full set (capability configs) it judges every contract keyword: property names, types,
// required, default, enum, const, pattern, bounds, strictness and deprecated. Without it (REST
// request bodies, whose structural diff oasdiff makes) it judges only what oasdiff has no rule for:
// strictness and deprecated aliases.
type schemaWalk struct {
	c    *collector
	full bool
	// newVersion is the version of the new side, for the deprecation window (zero when unknown).
	newVersion   version
	newVersionOK bool
}

// compare walks old and new at path (a dotted field path such as capabilities.tts.config).
func (w *schemaWalk) compare(path string, old, new map[string]any) {
	if old == nil || new == nil {
		return
	}
	w.strictness(path, old, new)
	if w.full {
		w.types(path, old, new)
		w.keywords(path, old, new)
	}
	w.properties(path, old, new)
	if oi, ni := asMap(old["items"]), asMap(new["items"]); oi != nil && ni != nil {
		w.compare(path+"[]", oi, ni)
	}
	if oa, na := asMap(old["additionalProperties"]), asMap(new["additionalProperties"]); oa != nil && na != nil {
		w.compare(path+".*", oa, na)
	}
}

// strictness: additionalProperties: false is contract in both directions.
func (w *schemaWalk) strictness(path string, old, new map[string]any) {
	if !isObjectSchema(old) && !isObjectSchema(new) {
		return
	}
	wasStrict, isStrict := old["additionalProperties"] == false, new["additionalProperties"] == false
	switch {
	case isStrict && !wasStrict:
		w.c.add(RuleStrictness, Breaking, "strictness-added", path,
			"additionalProperties: false newly set on %s: requests that sent other keys are now refused", path)
	case wasStrict && !isStrict:
		w.c.add(RuleStrictness, Breaking, "strictness-removed", path,
			"additionalProperties: false dropped from %s: unknown keys are no longer refused", path)
	}
}

func isObjectSchema(s map[string]any) bool {
	return s["type"] == "object" || s["properties"] != nil || s["additionalProperties"] != nil
}

// types judges a change of type: a widening (integer to number, a type added) is additive.
func (w *schemaWalk) types(path string, old, new map[string]any) {
	ot, nt := typeSet(old), typeSet(new)
	if slices.Equal(ot, nt) {
		return
	}
	widened := len(nt) == 0
	if len(ot) > 0 && len(nt) > 0 {
		widened = true
		for _, t := range ot {
			if !slices.Contains(nt, t) && (t != "integer" || !slices.Contains(nt, "number")) {
				widened = false
			}
		}
	}
	if widened {
		w.c.add(RuleAdditive, Compatible, "type-widened", path, "type of %s widened, %s -> %s", path, typeText(ot), typeText(nt))
		return
	}
	w.c.add(RuleContract, Breaking, "type-changed", path, "type of %s changed, %s -> %s", path, typeText(ot), typeText(nt))
}

func typeSet(s map[string]any) []string {
	var out []string
	switch t := s["type"].(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, e := range t {
			out = append(out, fmt.Sprint(e))
		}
	}
	if s["nullable"] == true && len(out) > 0 {
		out = append(out, "null")
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func typeText(ts []string) string {
	if len(ts) == 0 {
		return "any"
	}
	return strings.Join(ts, "|")
}

// bound keywords: for a lower bound a larger value narrows; for an upper bound a smaller one does.
var lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
var upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}

// changedKeywords are contract keywords judged by equality: any change is breaking.
var changedKeywords = []string{"format", "multipleOf", "uniqueItems", "oneOf", "anyOf", "allOf", "not",
	"if", "then", "else", "dependentRequired", "dependentSchemas", "propertyNames", "contains"}

// keywords judges enum, const, pattern, default, the bounds and the keywords compared by equality.
func (w *schemaWalk) keywords(path string, old, new map[string]any) {
	w.enum(path, old, new)
	ov, oOK := old["const"]
	nv, nOK := new["const"]
	switch {
	case oOK && nOK && !sameJSON(ov, nv):
		w.c.add(RuleContract, Breaking, "const-changed", path, "const of %s changed, %s -> %s", path, jsonText(ov), jsonText(nv))
	case !oOK && nOK:
		w.c.add(RuleMinorBump, NeedsMinor, "const-added", path, "const %s newly set on %s (narrows it)", jsonText(nv), path)
	case oOK && !nOK:
		w.c.add(RuleAdditive, Compatible, "const-removed", path, "const dropped from %s (widens it)", path)
	}
	op, np := old["pattern"], new["pattern"]
	switch {
	case op != nil && np != nil && op != np:
		w.c.add(RuleContract, Breaking, "pattern-changed", path, "pattern of %s changed, %s -> %s", path, jsonText(op), jsonText(np))
	case op == nil && np != nil:
		w.c.add(RuleContract, Breaking, "pattern-added", path, "pattern %s newly set on %s", jsonText(np), path)
	case op != nil && np == nil:
		w.c.add(RuleAdditive, Compatible, "pattern-removed", path, "pattern dropped from %s (widens it)", path)
	}
	// A default on a deprecated alias is the alias rule's business.
	if new["deprecated"] != true {
		od, oOK := old["default"]
		nd, nOK := new["default"]
		switch {
		case oOK && nOK && !sameJSON(od, nd):
			w.c.add(RuleContract, Breaking, "default-changed", path, "default of %s changed, %s -> %s", path, jsonText(od), jsonText(nd))
		case oOK && !nOK:
			w.c.add(RuleContract, Breaking, "default-removed", path, "default %s dropped from %s", jsonText(od), path)
		case !oOK && nOK:
			w.c.add(RuleContract, Breaking, "default-added", path, "default %s newly set on %s", jsonText(nd), path)
		}
	}
	for _, k := range lowerBounds {
		w.bound(path, k, old[k], new[k], true)
	}
	for _, k := range upperBounds {
		w.bound(path, k, old[k], new[k], false)
	}
	for _, k := range changedKeywords {
		if ov, nv := old[k], new[k]; !sameJSON(ov, nv) {
			w.c.add(RuleContract, Breaking, strings.ToLower(k)+"-changed", path, "%s of %s changed, %s -> %s", k, path, jsonText(ov), jsonText(nv))
		}
	}
}

func (w *schemaWalk) enum(path string, old, new map[string]any) {
	oe, oOK := old["enum"].([]any)
	ne, nOK := new["enum"].([]any)
	switch {
	case !oOK && !nOK:
		return
	case !oOK:
		w.c.add(RuleMinorBump, NeedsMinor, "enum-added", path, "%s newly limited to the enum %s", path, jsonText(ne))
		return
	case !nOK:
		w.c.add(RuleAdditive, Compatible, "enum-removed", path, "enum dropped from %s (widens it)", path)
		return
	}
	removed, added := setDiff(oe, ne), setDiff(ne, oe)
	for _, v := range removed {
		w.c.add(RuleMinorBump, NeedsMinor, "enum-value-removed", path, "enum value %s removed from %s", v, path)
	}
	for _, v := range added {
		w.c.add(RuleAdditive, Compatible, "enum-value-added", path, "enum value %s added to %s", v, path)
	}
}

// setDiff returns the JSON texts of the values of a that b lacks.
func setDiff(a, b []any) []string {
	have := map[string]bool{}
	for _, v := range b {
		have[jsonText(v)] = true
	}
	var out []string
	for _, v := range a {
		if t := jsonText(v); !have[t] {
			out = append(out, t)
		}
	}
	return out
}

func (w *schemaWalk) bound(path, key string, ov, nv any, lower bool) {
	if ov == nil && nv == nil {
		return
	}
	of, oNum := number(ov)
	nf, nNum := number(nv)
	var narrowed bool
	switch {
	case ov == nil:
		narrowed = true
	case nv == nil:
		narrowed = false
	case oNum && nNum:
		if of == nf {
			return
		}
		narrowed = (lower && nf > of) || (!lower && nf < of)
	default: // OpenAPI 3.0's boolean exclusiveMinimum/exclusiveMaximum
		if ov == nv {
			return
		}
		narrowed = nv == true
	}
	if narrowed {
		w.c.add(RuleMinorBump, NeedsMinor, "bound-narrowed", path, "%s of %s narrowed, %s -> %s", key, path, boundText(ov), boundText(nv))
		return
	}
	w.c.add(RuleAdditive, Compatible, "bound-widened", path, "%s of %s widened, %s -> %s", key, path, boundText(ov), boundText(nv))
}

func boundText(v any) string {
	if v == nil {
		return "none"
	}
	return jsonText(v)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// properties judges added, removed, renamed and newly deprecated properties, and walks the ones
// both sides have.
func (w *schemaWalk) properties(path string, old, new map[string]any) {
	op, np := asMap(old["properties"]), asMap(new["properties"])
	if op == nil && np == nil {
		return
	}
	oreq, nreq := stringSet(old["required"]), stringSet(new["required"])
	var removed, added []string
	for _, name := range sortedKeys(op) {
		if _, ok := np[name]; !ok {
			removed = append(removed, name)
		}
	}
	for _, name := range sortedKeys(np) {
		if _, ok := op[name]; !ok {
			added = append(added, name)
		}
	}
	if w.full {
		renamedTo := pairRenames(op, np, removed, added)
		for _, name := range removed {
			p := path + "." + name
			prop := asMap(op[name])
			switch {
			case prop["deprecated"] == true:
				w.aliasDropped(p, prop)
			case renamedTo[name] != "":
				w.c.add(RuleAlias, Breaking, "renamed-without-alias", p,
					"%s looks renamed to %s without an alias: keep %s for one minor version as an optional property "+
						"with deprecated: true, no default and a description naming %s and the version it stops in",
					p, renamedTo[name], name, renamedTo[name])
			default:
				w.c.add(RuleMinorBump, NeedsMinor, "field-removed", p, "field %s removed", p)
			}
		}
		for _, name := range added {
			p := path + "." + name
			if nreq[name] {
				w.c.add(RuleContract, Breaking, "required-field-added", p, "new required field %s: configs that worked before are refused", p)
			} else {
				w.c.add(RuleAdditive, Compatible, "field-added", p, "new optional field %s", p)
			}
		}
		for _, name := range sortedKeys(np) {
			if _, ok := op[name]; !ok {
				continue
			}
			p := path + "." + name
			switch {
			case nreq[name] && !oreq[name]:
				w.c.add(RuleContract, Breaking, "field-became-required", p, "field %s became required", p)
			case oreq[name] && !nreq[name]:
				w.c.add(RuleAdditive, Compatible, "field-became-optional", p, "field %s became optional", p)
			}
		}
	}
	for _, name := range sortedKeys(np) {
		p := path + "." + name
		nprop := asMap(np[name])
		oprop, existed := op[name]
		if existed && nprop != nil {
			w.compare(p, asMap(oprop), nprop)
		}
		wasDeprecated := existed && asMap(oprop)["deprecated"] == true
		if nprop["deprecated"] == true {
			w.alias(p, name, nprop, nreq[name], np, !wasDeprecated)
			continue
		}
		if wasDeprecated {
			w.c.add(RuleAdditive, Compatible, "undeprecated", p, "%s is no longer marked deprecated", p)
			continue
		}
		// An old name that now reads as the alias of a new field, but is not marked deprecated.
		if existed {
			od, nd := str(asMap(oprop)["description"]), str(nprop["description"])
			for _, a := range added {
				if mentions(nd, a) && !mentions(od, a) && versionInText().MatchString(nd) {
					w.c.add(RuleAlias, Breaking, "alias-not-deprecated", p,
						"%s reads as the old name of %s but is not marked deprecated: true", p, a)
					break
				}
			}
		}
	}
}

// pairRenames pairs each removed property with an added one of the same type, in name order: the
// likely renames. Deprecated removed properties are not renames of this change.
func pairRenames(op, np map[string]any, removed, added []string) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, r := range removed {
		rp := asMap(op[r])
		if rp["deprecated"] == true {
			continue
		}
		for _, a := range added {
			if !used[a] && slices.Equal(typeSet(rp), typeSet(asMap(np[a]))) {
				out[r], used[a] = a, true
				break
			}
		}
	}
	return out
}

// alias checks a property marked deprecated: while accepted it is optional, has no default and a
// description naming the new field and the version it stops in; after that version it is gone.
func (w *schemaWalk) alias(path, name string, prop map[string]any, required bool, siblings map[string]any, newlyDeprecated bool) {
	desc := str(prop["description"])
	if newlyDeprecated {
		var problems []string
		if required {
			problems = append(problems, "it is required")
		}
		if _, ok := prop["default"]; ok {
			problems = append(problems, "it has a default")
		}
		namesNew := false
		for _, s := range sortedKeys(siblings) {
			if s != name && mentions(desc, s) {
				namesNew = true
			}
		}
		if !namesNew {
			problems = append(problems, "its description names no new field")
		}
		if !versionInText().MatchString(desc) {
			problems = append(problems, "its description names no stopping version")
		}
		if len(problems) > 0 {
			w.c.add(RuleAlias, Breaking, "alias-malformed", path,
				"deprecated alias %s must be optional with no default and a description naming the new field and the version it stops in: %s",
				path, strings.Join(problems, ", "))
		} else {
			w.c.add(RuleAlias, Compatible, "alias-added", path, "%s deprecated as a proper alias: %s", path, desc)
		}
	}
	if stop, ok := stopVersion(desc); ok && w.newVersionOK && !w.newVersion.less(stop) {
		w.c.add(RuleRemovedAfterWindow, Breaking, "alias-past-window", path,
			"deprecated alias %s is still accepted in %d.%d.%d, at or after the version it stops in (%d.%d)",
			path, w.newVersion.major, w.newVersion.minor, w.newVersion.patch, stop.major, stop.minor)
	}
}

// aliasDropped judges the removal of a deprecated alias: allowed from the version it stops in.
func (w *schemaWalk) aliasDropped(path string, prop map[string]any) {
	stop, ok := stopVersion(str(prop["description"]))
	switch {
	case !ok:
		w.c.add(RuleMinorBump, NeedsMinor, "alias-removed", path, "deprecated alias %s removed; its description names no stopping version", path)
	case w.newVersionOK && !w.newVersion.less(stop):
		w.c.add(RuleRemovedAfterWindow, Compatible, "alias-removed", path,
			"deprecated alias %s removed at the end of its window (%d.%d)", path, stop.major, stop.minor)
	default:
		w.c.add(RuleRemovedAfterWindow, Breaking, "alias-removed-early", path,
			"deprecated alias %s removed before the version it stops in (%d.%d): it is accepted for one minor version", path, stop.major, stop.minor)
	}
}

// stopVersion reads the highest version number a deprecated alias's description names.
func stopVersion(desc string) (version, bool) {
	var best version
	found := false
	for _, m := range versionInText().FindAllString(desc, -1) {
		if v, ok := parseVersion(m); ok && (!found || best.less(v)) {
			best, found = v, true
		}
	}
	return best, found
}

// mentions reports whether text names field as a word (plain or in backquotes).
func mentions(text, field string) bool {
	if text == "" || field == "" {
		return false
	}
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(field) + `($|[^A-Za-z0-9_])`).MatchString(text)
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	if l, ok := v.([]any); ok {
		for _, e := range l {
			out[fmt.Sprint(e)] = true
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sameJSON(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return jsonText(a) == jsonText(b) || reflect.DeepEqual(a, b)
}

// jsonText renders a value as compact JSON (map keys sorted), the form findings quote values in.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
