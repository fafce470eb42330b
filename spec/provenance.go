package spec

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// ProvenanceKey is the extension that says where an element of the REST description comes from:
// the interface text, or the reference's own choice (the format is in docs/provenance.md).
const ProvenanceKey = "x-provenance"

// Source is where one part of the description comes from.
type Source struct {
	// Kind is "text" (the interface text states it) or "reference" (our own choice, where the text
	// says "not shown" or is silent).
	Kind string
	// Where is what follows the kind: for text, the section heading optionally followed by
	// "> a short quote"; for reference, why it is ours.
	Where string
}

// Text reports whether the interface text states the element.
func (s Source) Text() bool { return s.Kind == "text" }

// Reference reports whether the element is the reference's own choice.
func (s Source) Reference() bool { return s.Kind == "reference" }

// String is the kind and where: "text: Errors" or "reference: ...".
func (s Source) String() string { return s.Kind + ": " + s.Where }

// Heading is the section heading a text source names: what comes before the first " > ".
func (s Source) Heading() string {
	h, _, _ := strings.Cut(s.Where, ">")
	return strings.TrimSpace(h)
}

// Provenance is the parsed x-provenance of one element. Is covers the element as a whole (its
// presence, type and every constraint keyword and required entry); Keywords and Required hold the
// parts of a schema node whose provenance differs (or is listed anyway).
type Provenance struct {
	Is       Source            // the element as a whole
	Keywords map[string]Source // schema keywords whose provenance differs, by keyword
	Required map[string]Source // required entries whose provenance differs, by property
}

// Keyword returns the provenance of a constraint keyword of the element: its own entry, or Is.
func (p Provenance) Keyword(k string) Source {
	if s, ok := p.Keywords[k]; ok {
		return s
	}
	return p.Is
}

// RequiredEntry returns the provenance of the required entry name: its own entry, or Is.
func (p Provenance) RequiredEntry(name string) Source {
	if s, ok := p.Required[name]; ok {
		return s
	}
	return p.Is
}

// provenanceKeywords are the schema keywords a mapping-form x-provenance may list. The agreed
// format names enum, the bounds, format, nullable and additionalProperties; type, multipleOf,
// uniqueItems and the property counts are added so that every constraint a schema node can carry
// has a place.
var provenanceKeywords = map[string]bool{
	"enum": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "minItems": true, "maxItems": true,
	"format": true, "nullable": true, "additionalProperties": true,
	"type": true, "multipleOf": true, "uniqueItems": true, "minProperties": true, "maxProperties": true,
}

// ParseSource parses one "text: <where>" or "reference: <why>" value.
func ParseSource(v any) (Source, error) {
	s, ok := v.(string)
	if !ok {
		return Source{}, fmt.Errorf("want a string %q or %q, got %T", "text: <where>", "reference: <why>", v)
	}
	kind, rest, ok := strings.Cut(s, ":")
	kind = strings.TrimSpace(kind)
	if !ok || (kind != "text" && kind != "reference") {
		return Source{}, fmt.Errorf("%q starts neither with \"text:\" nor with \"reference:\"", s)
	}
	rest = strings.TrimSpace(rest)
	if rest == "" || (kind == "text" && strings.TrimSpace(strings.SplitN(rest, ">", 2)[0]) == "") {
		return Source{}, fmt.Errorf("%q says %s but not where from", s, kind)
	}
	return Source{Kind: kind, Where: rest}, nil
}

// ParseProvenance parses an x-provenance value in either form: a string (ParseSource) or a
// mapping with `is` and optional keyword entries and a `required` mapping.
func ParseProvenance(v any) (Provenance, error) {
	if m, ok := v.(map[string]any); ok {
		var p Provenance
		is, ok := m["is"]
		if !ok {
			return p, errors.New("mapping form without `is`")
		}
		var err error
		if p.Is, err = ParseSource(is); err != nil {
			return p, fmt.Errorf("is: %w", err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case k == "is":
			case k == "required":
				req, ok := m[k].(map[string]any)
				if !ok {
					return p, fmt.Errorf("required: want a mapping of required entries, got %T", m[k])
				}
				p.Required = map[string]Source{}
				for name, rv := range req {
					if p.Required[name], err = ParseSource(rv); err != nil {
						return p, fmt.Errorf("required.%s: %w", name, err)
					}
				}
			case provenanceKeywords[k]:
				if p.Keywords == nil {
					p.Keywords = map[string]Source{}
				}
				if p.Keywords[k], err = ParseSource(m[k]); err != nil {
					return p, fmt.Errorf("%s: %w", k, err)
				}
			default:
				return p, fmt.Errorf("unknown key %q (want is, required or a constraint keyword)", k)
			}
		}
		return p, nil
	}
	s, err := ParseSource(v)
	return Provenance{Is: s}, err
}

// provenanceIn reads the x-provenance of an element's extensions: ok is false when there is none.
// ProvenanceOf is the provenance of an element as a whole (its Is), from the extension map of its
// schema, $ref, operation or response; the zero Source when it has none or it does not parse.
func ProvenanceOf(ext map[string]any) Source {
	p, ok, err := provenanceIn(ext)
	if !ok || err != nil {
		return Source{}
	}
	return p.Is
}

func provenanceIn(ext map[string]any) (p Provenance, ok bool, err error) {
	v, ok := ext[ProvenanceKey]
	if !ok {
		return Provenance{}, false, nil
	}
	p, err = ParseProvenance(v)
	return p, true, err
}

// headingIndex holds the headings of the interface text, each as its set of normalised words.
type headingIndex [][]string

// interfaceHeadings reads the `#` headings of a Markdown text (outside code fences).
func interfaceHeadings(text []byte) headingIndex {
	var idx headingIndex
	fence := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if !fence && strings.HasPrefix(line, "#") {
			idx = append(idx, headingWords(strings.TrimLeft(line, "#")))
		}
	}
	return idx
}

// headingWords splits s into lower-case words of letters and digits, a trailing plural "s"
// dropped, so that "Generations" finds "Generation (inside `generation` of a read ...)".
func headingWords(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		if len(w) > 3 && strings.HasSuffix(w, "s") {
			words[i] = strings.TrimSuffix(w, "s")
		}
	}
	return words
}

// names reports whether some heading holds every word of where's heading part.
func (idx headingIndex) names(heading string) bool {
	want := headingWords(heading)
	if len(want) == 0 {
		return false
	}
	for _, h := range idx {
		have := map[string]bool{}
		for _, w := range h {
			have[w] = true
		}
		all := true
		for _, w := range want {
			if !have[w] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// ProvenanceProblems lists every way doc breaks the provenance format (docs/provenance.md), one
// line each, naming the element by its JSON pointer in the document:
//   - an element without x-provenance: every operation, parameter, response, response header,
//     component schema, inline request or response body schema, entry under `properties`, the
//     inline object `items` of an array, and an inline x-webhooks event schema;
//   - a malformed value (neither form, an unknown key, a keyword the schema does not carry, a
//     required entry the schema does not list);
//   - a `text:` required entry whose property is `reference:`;
//   - a `text:` source whose section heading names no heading of interfaceText.
//
// The list is sorted; empty means the document carries complete, consistent provenance.
func ProvenanceProblems(doc *openapi3.T, interfaceText []byte) []string {
	c := &provChecker{headings: interfaceHeadings(interfaceText), seen: map[*openapi3.Schema]bool{}}
	c.document(doc)
	sort.Strings(c.problems)
	return c.problems
}

type provChecker struct {
	headings headingIndex
	problems []string
	seen     map[*openapi3.Schema]bool
}

func (c *provChecker) addf(ptr, format string, args ...any) {
	c.problems = append(c.problems, ptr+": "+fmt.Sprintf(format, args...))
}

// pointer joins JSON pointer tokens, escaping each.
func pointer(tokens ...string) string {
	var b strings.Builder
	b.WriteString("#")
	for _, t := range tokens {
		b.WriteString("/")
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// check reads the provenance of the element at ptr; required says the element must carry one.
// It reports malformed values and unknown headings; ok is false when there is no usable value.
func (c *provChecker) check(ptr string, ext map[string]any, required bool) (Provenance, bool) {
	p, has, err := provenanceIn(ext)
	switch {
	case !has:
		if required {
			c.addf(ptr, "no %s", ProvenanceKey)
		}
		return p, false
	case err != nil:
		c.addf(ptr, "malformed %s: %v", ProvenanceKey, err)
		return p, false
	}
	c.source(ptr, "", p.Is)
	for _, k := range sortedKeys(p.Keywords) {
		c.source(ptr, k, p.Keywords[k])
	}
	for _, k := range sortedKeys(p.Required) {
		c.source(ptr, "required."+k, p.Required[k])
	}
	return p, true
}

func (c *provChecker) source(ptr, part string, s Source) {
	if s.Text() && !c.headings.names(s.Heading()) {
		if part != "" {
			ptr += " (" + part + ")"
		}
		c.addf(ptr, "%q names no heading of the interface text", s.Heading())
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (c *provChecker) document(doc *openapi3.T) {
	if comp := doc.Components; comp != nil {
		for _, name := range sortedKeys(comp.Schemas) {
			if ref := comp.Schemas[name]; ref != nil && ref.Value != nil && ref.Ref == "" {
				c.schemaNode(pointer("components", "schemas", name), ref.Value, true)
			}
		}
		for _, name := range sortedKeys(comp.Parameters) {
			if ref := comp.Parameters[name]; ref != nil && ref.Value != nil {
				c.check(pointer("components", "parameters", name), ref.Value.Extensions, true)
				c.inlineSchema(pointer("components", "parameters", name, "schema"), ref.Value.Schema, false)
			}
		}
		for _, name := range sortedKeys(comp.Headers) {
			if ref := comp.Headers[name]; ref != nil && ref.Value != nil {
				c.header(pointer("components", "headers", name), ref.Value)
			}
		}
		for _, name := range sortedKeys(comp.Responses) {
			if ref := comp.Responses[name]; ref != nil && ref.Value != nil {
				c.response(pointer("components", "responses", name), ref.Value)
			}
		}
		for _, name := range sortedKeys(comp.RequestBodies) {
			if ref := comp.RequestBodies[name]; ref != nil && ref.Value != nil {
				c.content(pointer("components", "requestBodies", name, "content"), ref.Value.Content)
			}
		}
	}
	if doc.Paths != nil {
		for _, path := range sortedKeys(doc.Paths.Map()) {
			item := doc.Paths.Value(path)
			for _, method := range sortedKeys(item.Operations()) {
				c.operation(pointer("paths", path, strings.ToLower(method)), item.Operations()[method])
			}
		}
	}
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	for _, name := range sortedKeys(hooks) {
		content, _ := dig(hooks[name], "post", "requestBody", "content").(map[string]any)
		for _, mt := range sortedKeys(content) {
			sch, _ := dig(content[mt], "schema").(map[string]any)
			if sch == nil {
				continue
			}
			if _, isRef := sch["$ref"]; !isRef {
				c.check(pointer("x-webhooks", name, "post", "requestBody", "content", mt, "schema"), sch, true)
			}
		}
	}
}

func (c *provChecker) operation(ptr string, op *openapi3.Operation) {
	c.check(ptr, op.Extensions, true)
	for i, p := range op.Parameters {
		if p == nil || p.Value == nil {
			continue
		}
		pp := pointer("parameters", fmt.Sprint(i))
		if p.Ref != "" {
			// The component carries it; a sibling value is allowed and checked.
			c.check(ptr+pp[1:], p.Extensions, false)
			continue
		}
		c.check(ptr+pp[1:], p.Value.Extensions, true)
		c.inlineSchema(ptr+pp[1:]+"/schema", p.Value.Schema, false)
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil && rb.Ref == "" {
		c.content(ptr+"/requestBody/content", rb.Value.Content)
	}
	if op.Responses != nil {
		for _, status := range sortedKeys(op.Responses.Map()) {
			ref := op.Responses.Value(status)
			rp := ptr + pointer("responses", status)[1:]
			if ref == nil || ref.Value == nil {
				continue
			}
			if ref.Ref != "" {
				c.check(rp, ref.Extensions, false)
				continue
			}
			c.response(rp, ref.Value)
		}
	}
	for _, name := range sortedKeys(op.Callbacks) {
		cb := op.Callbacks[name]
		if cb == nil || cb.Value == nil {
			continue
		}
		for _, expr := range sortedKeys(cb.Value.Map()) {
			item := cb.Value.Value(expr)
			for _, method := range sortedKeys(item.Operations()) {
				if rb := item.Operations()[method].RequestBody; rb != nil && rb.Value != nil && rb.Ref == "" {
					c.content(ptr+pointer("callbacks", name, expr, strings.ToLower(method), "requestBody", "content")[1:], rb.Value.Content)
				}
			}
		}
	}
}

func (c *provChecker) response(ptr string, r *openapi3.Response) {
	c.check(ptr, r.Extensions, true)
	for _, name := range sortedKeys(r.Headers) {
		h := r.Headers[name]
		if h == nil || h.Value == nil {
			continue
		}
		hp := ptr + pointer("headers", name)[1:]
		if h.Ref != "" {
			c.check(hp, h.Extensions, false)
			continue
		}
		c.header(hp, h.Value)
	}
	c.content(ptr+"/content", r.Content)
}

func (c *provChecker) header(ptr string, h *openapi3.Header) {
	p, ok := c.check(ptr, h.Extensions, true)
	if ok && h.Schema != nil && h.Schema.Value != nil {
		c.keywordsPresent(ptr, p, h.Schema.Value)
	}
	c.inlineSchema(ptr+"/schema", h.Schema, false)
}

// content checks the body schema of each media type: an inline one must carry provenance.
func (c *provChecker) content(ptr string, content openapi3.Content) {
	for _, mt := range sortedKeys(content) {
		if m := content[mt]; m != nil {
			c.inlineSchema(ptr+pointer(mt, "schema")[1:], m.Schema, true)
		}
	}
}

// inlineSchema checks an inline schema (a $ref's target is checked under components): required
// says the node itself must carry provenance; its sub-schemas are walked either way.
func (c *provChecker) inlineSchema(ptr string, ref *openapi3.SchemaRef, required bool) {
	if ref == nil || ref.Value == nil || ref.Ref != "" {
		return
	}
	c.schemaNode(ptr, ref.Value, required)
}

func (c *provChecker) schemaNode(ptr string, s *openapi3.Schema, required bool) {
	if c.seen[s] {
		return
	}
	c.seen[s] = true
	p, ok := c.check(ptr, s.Extensions, required)
	if ok {
		c.keywordsPresent(ptr, p, s)
		for _, name := range sortedKeys(p.Required) {
			if !containsString(s.Required, name) {
				c.addf(ptr, "%s lists required entry %q, which the schema does not require", ProvenanceKey, name)
			}
		}
	}
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		if prop == nil {
			continue
		}
		pp := ptr + pointer("properties", name)[1:]
		ext := prop.Extensions
		if prop.Ref == "" && prop.Value != nil {
			ext = prop.Value.Extensions
		}
		// An inline property is a schema node too; schemaNode checks its value and walks it.
		if prop.Ref == "" && prop.Value != nil {
			c.schemaNode(pp, prop.Value, true)
		} else {
			c.check(pp, ext, true)
		}
		propProv, has, err := provenanceIn(ext)
		if !ok || !has || err != nil {
			continue
		}
		if containsString(s.Required, name) && p.RequiredEntry(name).Text() && propProv.Is.Reference() {
			c.addf(ptr, "required entry %q is text but its property is reference (%s)", name, propProv.Is.Where)
		}
	}
	if it := s.Items; it != nil && it.Value != nil && it.Ref == "" {
		objectItems := it.Value.Type.Is(openapi3.TypeObject) || len(it.Value.Properties) > 0
		c.schemaNode(ptr+"/items", it.Value, objectItems)
	}
	for kw, list := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		for i, sub := range list {
			c.inlineSchema(ptr+pointer(kw, fmt.Sprint(i))[1:], sub, false)
		}
	}
	c.inlineSchema(ptr+"/not", s.Not, false)
	c.inlineSchema(ptr+"/additionalProperties", s.AdditionalProperties.Schema, false)
}

// keywordsPresent reports each keyword entry of p that names a keyword s does not carry.
func (c *provChecker) keywordsPresent(ptr string, p Provenance, s *openapi3.Schema) {
	for _, k := range sortedKeys(p.Keywords) {
		if !hasKeyword(s, k) {
			c.addf(ptr, "%s names keyword %s, which the schema does not carry", ProvenanceKey, k)
		}
	}
}

// hasKeyword reports whether schema node s carries the constraint keyword k.
func hasKeyword(s *openapi3.Schema, k string) bool {
	switch k {
	case "enum":
		return len(s.Enum) > 0
	case "minimum":
		return s.Min != nil
	case "maximum":
		return s.Max != nil
	case "exclusiveMinimum":
		return s.ExclusiveMin.IsSet()
	case "exclusiveMaximum":
		return s.ExclusiveMax.IsSet()
	case "minLength":
		return s.MinLength != 0
	case "maxLength":
		return s.MaxLength != nil
	case "pattern":
		return s.Pattern != ""
	case "minItems":
		return s.MinItems != 0
	case "maxItems":
		return s.MaxItems != nil
	case "format":
		return s.Format != ""
	case "nullable":
		return s.Nullable
	case "additionalProperties":
		return s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil
	case "type":
		return s.Type != nil && len(*s.Type) > 0
	case "multipleOf":
		return s.MultipleOf != nil
	case "uniqueItems":
		return s.UniqueItems
	case "minProperties":
		return s.MinProps != 0
	case "maxProperties":
		return s.MaxProps != nil
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
