package spec

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// normativeSuffix names the answer-side copy of a component schema that requests use too: requests
// keep the reference's schema, answers get the normative one.
const normativeSuffix = ".normative"

const schemaRefPrefix = "#/components/schemas/"

// Normative returns the normative view of doc: a deep copy in which every answer (response bodies,
// response headers and webhook events) is held only to what the interface text states, as the
// x-provenance of each element says (docs/provenance.md):
//   - a `reference:` property is removed from `properties` (any value passes) and from `required`;
//   - a `reference:` required entry is removed from `required`;
//   - a `reference:` constraint keyword is removed (a `reference:` type or nullable lets any type
//     or null through; a reference enum is dropped whole); a schema node whose `is` is
//     `reference:` also loses allOf, oneOf, anyOf, not and its discriminator (its composition
//     is its layout, which the text does not show);
//   - `additionalProperties: false` is removed from every annotated answer schema unless its
//     mapping lists `additionalProperties` as `text:` (the text states the object is closed);
//   - a `reference:` response becomes a bare response (no headers, no body schema), a `reference:`
//     response header is removed, and every response of a `reference:` operation becomes bare.
//
// Requests and parameters are left as the reference states them: they judge what the suite sends,
// not the server. A component schema that both a request and an answer use is copied, the answer
// side getting the normative copy (named NAME.normative). An element without x-provenance is kept
// as it is (the reference document's behaviour), so the view is safe on a partly annotated
// document. A malformed x-provenance is an error.
func Normative(doc *openapi3.T) (*openapi3.T, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("spec: normative view: encode the document: %w", err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("spec: normative view: decode the document: %w", err)
	}
	n := &normalizer{root: root}
	if err := n.run(); err != nil {
		return nil, fmt.Errorf("spec: normative view: %w", err)
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("spec: normative view: encode: %w", err)
	}
	return LoadDocument(context.Background(), out)
}

type normalizer struct {
	root    map[string]any
	schemas map[string]any // components.schemas
	errs    []string
}

func (n *normalizer) failf(ptr, format string, args ...any) {
	n.errs = append(n.errs, ptr+": "+fmt.Sprintf(format, args...))
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func (n *normalizer) run() error {
	comps := obj(n.root["components"])
	n.schemas = obj(comps["schemas"])

	// The two sides: what the suite sends (requests) and what the server answers (responses,
	// headers, events).
	var reqRoots, ansRoots []any
	paths := obj(n.root["paths"])
	for _, path := range sortedKeys(paths) {
		item := obj(paths[path])
		reqRoots = append(reqRoots, item["parameters"])
		for _, m := range httpMethods {
			op := obj(item[m])
			if op == nil {
				continue
			}
			reqRoots = append(reqRoots, op["parameters"], op["requestBody"])
			ansRoots = append(ansRoots, op["responses"], op["callbacks"])
		}
	}
	reqRoots = append(reqRoots, comps["parameters"], comps["requestBodies"])
	ansRoots = append(ansRoots, comps["responses"], comps["headers"], n.root["x-webhooks"])
	// Callbacks and x-webhooks carry parameters (delivery headers) that are the server's too; the
	// whole subtree counts as an answer.
	reqSet, ansSet := n.closure(reqRoots), n.closure(ansRoots)

	shared := map[string]string{}
	for name := range ansSet {
		if reqSet[name] {
			shared[name] = name + normativeSuffix
		}
	}
	for name, copyName := range shared {
		n.schemas[copyName] = deepCopy(n.schemas[name])
	}
	var ansSchemas []string
	for name := range ansSet {
		if c, ok := shared[name]; ok {
			name = c
		}
		ansSchemas = append(ansSchemas, name)
	}
	sort.Strings(ansSchemas)
	if len(shared) > 0 {
		for _, r := range ansRoots {
			rewriteRefs(r, shared)
		}
		for _, name := range ansSchemas {
			rewriteRefs(n.schemas[name], shared)
		}
	}

	// Read from the document as written, before its responses are made bare.
	successHeaders := map[string]map[string]any{}
	for _, path := range sortedKeys(paths) {
		for _, m := range httpMethods {
			if op := obj(obj(paths[path])[m]); op != nil {
				ptr := pointer("paths", path, m)
				if h := n.successHeaders(ptr, obj(op["responses"])); h != nil {
					successHeaders[ptr] = h
				}
			}
		}
	}

	for _, name := range ansSchemas {
		n.schema(pointer("components", "schemas", name), obj(n.schemas[name]))
	}
	for _, name := range sortedKeys(obj(comps["responses"])) {
		n.response(pointer("components", "responses", name), obj(obj(comps["responses"])[name]))
	}
	for _, name := range sortedKeys(obj(comps["headers"])) {
		h := obj(obj(comps["headers"])[name])
		if p, ok := n.prov(pointer("components", "headers", name), h); ok {
			n.keywords(pointer("components", "headers", name, "schema"), obj(h["schema"]), p)
		}
	}
	for _, path := range sortedKeys(paths) {
		item := obj(paths[path])
		for _, m := range httpMethods {
			op := obj(item[m])
			if op == nil {
				continue
			}
			ptr := pointer("paths", path, m)
			p, ok := n.prov(ptr, op)
			responses := obj(op["responses"])
			onSuccess := successHeaders[ptr]
			if ok && p.Is.Reference() {
				onSuccess = nil
			}
			for _, status := range sortedKeys(responses) {
				rp := ptr + pointer("responses", status)[1:]
				entry := obj(responses[status])
				if ok && p.Is.Reference() {
					responses[status] = bareResponse(entry, "the operation is the reference's choice")
					continue
				}
				if ref, _ := entry["$ref"].(string); ref != "" {
					_, ep, has := n.provFollowing(rp, entry)
					if has && ep.Is.Reference() {
						responses[status] = bareResponse(entry, ep.Is.Where)
					}
					continue
				}
				n.response(rp, entry)
				if ep, has := n.prov(rp, entry); has && ep.Is.Reference() {
					responses[status] = bareResponse(entry, ep.Is.Where)
				}
			}
			if len(onSuccess) > 0 {
				n.judgeOnSuccess(responses, onSuccess)
			}
			for _, cbName := range sortedKeys(obj(op["callbacks"])) {
				n.contentSchemasIn(obj(op["callbacks"])[cbName])
			}
		}
	}
	for _, name := range sortedKeys(obj(n.root["x-webhooks"])) {
		n.contentSchemasIn(obj(n.root["x-webhooks"])[name])
	}
	if len(n.errs) > 0 {
		sort.Strings(n.errs)
		return fmt.Errorf("malformed %s:\n  %s", ProvenanceKey, strings.Join(n.errs, "\n  "))
	}
	return nil
}

// successHeaders returns the headers the text states on an operation's success answer when the
// text states no success status: every 2xx response of the operation is `reference:` (the
// reference chose the status), and a header of one of them is `text:`. Such a header is stated
// for the answer, whatever success status a server picks: "An invoke answers with a Location
// header naming the run" (Gaps in the endpoint shapes) gives no status, so the reference's 201 is
// its choice, yet the header is the text's. It returns nil when the text states a success status
// (its own response entry judges its headers) or no header. It reads the document as written:
// call it before the responses are made bare.
func (n *normalizer) successHeaders(opPtr string, responses map[string]any) map[string]any {
	out := map[string]any{}
	for _, status := range sortedKeys(responses) {
		if !isSuccess(status) {
			continue
		}
		rp := opPtr + pointer("responses", status)[1:]
		entry := obj(responses[status])
		target, p, has := n.provFollowing(rp, entry)
		if !has || !p.Is.Reference() {
			return nil // a success status of the text's, or one unannotated: judged as written
		}
		headers := obj(target["headers"])
		for _, name := range sortedKeys(headers) {
			h := obj(headers[name])
			_, hp, hhas := n.provFollowing(rp+pointer("headers", name)[1:], h)
			if !hhas || hp.Is.Reference() {
				continue
			}
			c := obj(deepCopy(h))
			if c["$ref"] == nil {
				n.keywords(rp+pointer("headers", name, "schema")[1:], obj(c["schema"]), hp)
			}
			out[name] = c
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// judgeOnSuccess puts the text's success headers (successHeaders) on every bare success response
// of the operation and on a 2XX range response, added when the operation has none, so that any
// success status a server answers with is held to them; the bodies stay unchecked.
func (n *normalizer) judgeOnSuccess(responses, headers map[string]any) {
	why := "success status and body not stated; the text's headers are judged on any success status"
	for _, status := range sortedKeys(responses) {
		if isSuccess(status) {
			desc, _ := obj(responses[status])["description"].(string)
			responses[status] = map[string]any{"description": desc, "headers": deepCopy(headers), ProvenanceKey: "reference: " + why}
		}
	}
	if _, has := responses["2XX"]; !has {
		responses["2XX"] = map[string]any{"description": "Any success the text allows: " + why, "headers": deepCopy(headers),
			ProvenanceKey: "reference: " + why}
	}
}

// isSuccess reports whether a responses key is a 2xx status or the 2XX range.
func isSuccess(status string) bool {
	return len(status) == 3 && status[0] == '2'
}

// bareResponse is a response that checks nothing: no headers, no body schema.
func bareResponse(entry map[string]any, why string) map[string]any {
	desc, _ := entry["description"].(string)
	if desc == "" {
		desc = "Not checked: " + why
	}
	return map[string]any{"description": desc, ProvenanceKey: "reference: " + why}
}

// resolve returns the object a local "#/..." reference names, or nil.
func (n *normalizer) resolve(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = n.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		cur = obj(cur)[tok]
	}
	return obj(cur)
}

// provFollowing is the provenance of node at ptr or, when node is a $ref carrying none of its own,
// of the element it refers to; target is that element (node itself when node is no $ref).
func (n *normalizer) provFollowing(ptr string, node map[string]any) (target map[string]any, p Provenance, has bool) {
	target = node
	p, has = n.prov(ptr, node)
	if ref, _ := node["$ref"].(string); ref != "" {
		target = n.resolve(ref)
		if !has {
			p, has = n.prov(ref, target)
		}
	}
	return target, p, has
}

// prov reads node's x-provenance; a malformed one is recorded as an error and counts as none.
func (n *normalizer) prov(ptr string, node map[string]any) (Provenance, bool) {
	p, has, err := provenanceIn(node)
	if err != nil {
		n.failf(ptr, "%v", err)
		return p, false
	}
	return p, has
}

// response normalises an inline response: its headers and its body schemas.
func (n *normalizer) response(ptr string, r map[string]any) {
	if r == nil {
		return
	}
	if p, has := n.prov(ptr, r); has && p.Is.Reference() {
		delete(r, "headers")
		delete(r, "content")
		return
	}
	headers := obj(r["headers"])
	for _, name := range sortedKeys(headers) {
		h := obj(headers[name])
		hp := ptr + pointer("headers", name)[1:]
		_, p, has := n.provFollowing(hp, h)
		if has && p.Is.Reference() {
			delete(headers, name)
			continue
		}
		if h["$ref"] == nil && has {
			n.keywords(hp+"/schema", obj(h["schema"]), p)
		}
	}
	content := obj(r["content"])
	for _, mt := range sortedKeys(content) {
		if s := obj(obj(content[mt])["schema"]); s != nil && s["$ref"] == nil {
			n.schema(ptr+pointer("content", mt, "schema")[1:], s)
		}
	}
}

// contentSchemasIn normalises every inline body schema under a path-item-like subtree (a callback
// or an x-webhooks entry): the events the server sends.
func (n *normalizer) contentSchemasIn(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if k == "content" {
				for _, mt := range sortedKeys(obj(c)) {
					if s := obj(obj(obj(c)[mt])["schema"]); s != nil && s["$ref"] == nil {
						n.schema("#/(event)", s)
					}
				}
				continue
			}
			n.contentSchemasIn(c)
		}
	case []any:
		for _, c := range t {
			n.contentSchemasIn(c)
		}
	}
}

// keywords relaxes the constraint keywords of schema s whose provenance in p is reference.
func (n *normalizer) keywords(ptr string, s map[string]any, p Provenance) {
	if s == nil || s["$ref"] != nil {
		return
	}
	for k := range provenanceKeywords {
		if _, present := s[k]; !present || !p.Keyword(k).Reference() {
			continue
		}
		switch k {
		case "type", "nullable":
			delete(s, "type")
			s["nullable"] = true
		case "minimum":
			delete(s, "minimum")
			delete(s, "exclusiveMinimum")
		case "maximum":
			delete(s, "maximum")
			delete(s, "exclusiveMaximum")
		default:
			delete(s, k)
		}
	}
	if p.Is.Reference() {
		// A reference node's composition is its layout (a record the text names fields of but
		// does not lay out: the capability detail, an asset read, a run): allOf goes with it.
		for _, k := range []string{"allOf", "oneOf", "anyOf", "not", "discriminator"} {
			delete(s, k)
		}
	}
}

// schema normalises one schema node (not a $ref) and its inline sub-schemas.
func (n *normalizer) schema(ptr string, s map[string]any) {
	if s == nil || s["$ref"] != nil {
		return
	}
	p, has := n.prov(ptr, s)
	if has {
		n.keywords(ptr, s, p)
		if ap, isBool := s["additionalProperties"].(bool); isBool && !ap {
			if kw, listed := p.Keywords["additionalProperties"]; !listed || !kw.Text() {
				delete(s, "additionalProperties")
			}
		}
	}
	props := obj(s["properties"])
	removed := map[string]bool{}
	for _, name := range sortedKeys(props) {
		child := obj(props[name])
		pp := ptr + pointer("properties", name)[1:]
		cp, chas := n.prov(pp, child)
		if chas && cp.Is.Reference() {
			delete(props, name)
			removed[name] = true
			continue
		}
		n.schema(pp, child)
	}
	if req, ok := s["required"].([]any); ok {
		var keep []any
		for _, e := range req {
			name, _ := e.(string)
			if removed[name] || (has && p.RequiredEntry(name).Reference()) {
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == 0 {
			delete(s, "required")
		} else {
			s["required"] = keep
		}
	}
	n.schema(ptr+"/items", obj(s["items"]))
	n.schema(ptr+"/not", obj(s["not"]))
	n.schema(ptr+"/additionalProperties", obj(s["additionalProperties"]))
	for _, kw := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := s[kw].([]any)
		for i, sub := range list {
			n.schema(ptr+pointer(kw, fmt.Sprint(i))[1:], obj(sub))
		}
	}
}

// closure returns the names of the component schemas the subtrees refer to, directly or through
// other component schemas.
func (n *normalizer) closure(roots []any) map[string]bool {
	seen := map[string]bool{}
	var queue []string
	add := func(v any) {
		collectRefs(v, func(ref string) {
			if name, ok := strings.CutPrefix(ref, schemaRefPrefix); ok && !seen[name] {
				seen[name] = true
				queue = append(queue, name)
			}
		})
	}
	for _, r := range roots {
		add(r)
	}
	// A $ref to a component response, header or parameter brings its schemas along.
	for i := 0; i < len(queue); i++ {
		add(n.schemas[queue[i]])
	}
	for _, r := range roots {
		collectRefs(r, func(ref string) {
			if !strings.HasPrefix(ref, schemaRefPrefix) {
				add(n.resolve(ref))
			}
		})
	}
	for i := 0; i < len(queue); i++ {
		add(n.schemas[queue[i]])
	}
	return seen
}

// collectRefs calls fn with every "$ref" string and every discriminator mapping value under v.
func collectRefs(v any, fn func(string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if s, ok := c.(string); ok && k == "$ref" {
				fn(s)
				continue
			}
			if k == "discriminator" {
				for _, mv := range obj(obj(c)["mapping"]) {
					if s, ok := mv.(string); ok {
						fn(s)
					}
				}
			}
			collectRefs(c, fn)
		}
	case []any:
		for _, c := range t {
			collectRefs(c, fn)
		}
	}
}

// rewriteRefs points every schema reference (and discriminator mapping) under v that names a key
// of to at its value instead.
func rewriteRefs(v any, to map[string]string) {
	swap := func(s string) string {
		if name, ok := strings.CutPrefix(s, schemaRefPrefix); ok {
			if c, ok := to[name]; ok {
				return schemaRefPrefix + c
			}
		}
		return s
	}
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if s, ok := c.(string); ok && k == "$ref" {
				t[k] = swap(s)
				continue
			}
			if k == "discriminator" {
				m := obj(obj(c)["mapping"])
				for mk, mv := range m {
					if s, ok := mv.(string); ok {
						m[mk] = swap(s)
					}
				}
			}
			rewriteRefs(c, to)
		}
	case []any:
		for _, c := range t {
			rewriteRefs(c, to)
		}
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, c := range t {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, c := range t {
			l[i] = deepCopy(c)
		}
		return l
	}
	return v
}
