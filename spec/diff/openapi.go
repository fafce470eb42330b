package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	oasdiff "github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
	yaml "go.yaml.in/yaml/v3"
)

// webhookPathPrefix is where the events of x-webhooks are put for the structural diff (see
// normalizeWebhooks).
const webhookPathPrefix = "/x-webhooks/"

// OpenAPI compares two REST descriptions (YAML or JSON) by the versioning rules. oldName and newName
// label the two sides in the report. It returns a *CompareError when either side is not a readable
// OpenAPI document or the major versions differ.
func OpenAPI(ctx context.Context, oldName string, oldData []byte, newName string, newData []byte) (*Report, error) {
	oldDoc, err := loadDescription(ctx, oldName, oldData)
	if err != nil {
		return nil, err
	}
	newDoc, err := loadDescription(ctx, newName, newData)
	if err != nil {
		return nil, err
	}
	c := &collector{}
	newV, newOK := parseVersion(newDoc.Spec.Info.Version)
	walk := &schemaWalk{c: c, newVersion: newV, newVersionOK: newOK}
	requestBodies(walk, oldDoc.Spec, newDoc.Spec)
	errorSets(c, oldDoc.Spec, newDoc.Spec)
	if err := structural(c, oldDoc, newDoc); err != nil {
		return nil, err
	}
	return c.finish("openapi", Side{Name: oldName, Version: oldDoc.Spec.Info.Version}, Side{Name: newName, Version: newDoc.Spec.Info.Version})
}

// loadDescription parses a REST description, moves its x-webhooks events into paths (see
// normalizeWebhooks) and resolves its internal references. External references are refused.
func loadDescription(ctx context.Context, name string, data []byte) (*load.SpecInfo, error) {
	root, err := decodeDocument(data)
	if err != nil {
		return nil, compareErrorf("%s: %w", name, err)
	}
	if _, ok := root["openapi"]; !ok {
		return nil, compareErrorf("%s: not an OpenAPI document (no openapi field)", name)
	}
	normalizeWebhooks(root)
	js, err := json.Marshal(root)
	if err != nil {
		return nil, compareErrorf("%s: %w", name, err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	// allOf merged, path-level parameters moved into operations and header names lower-cased, so
	// that a change of layout alone (an enum moved into a referenced schema under allOf) is no change.
	info, err := load.NewSpecInfoFromData(loader, js, url.PathEscape(name),
		load.WithFlattenAllOf(), load.WithFlattenParams(), load.WithLowercaseHeaders())
	if err != nil {
		return nil, compareErrorf("%s: %w", name, err)
	}
	if info.Spec.Info == nil {
		return nil, compareErrorf("%s: the description has no info object", name)
	}
	return info, nil
}

// decodeDocument reads YAML or JSON into maps with string keys (YAML allows others, e.g. 200).
func decodeDocument(data []byte) (map[string]any, error) {
	v, err := decodeAny(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a YAML or JSON object")
	}
	return m, nil
}

func decodeAny(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return stringKeys(v), nil
}

func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = stringKeys(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = stringKeys(e)
		}
	}
	return v
}

// normalizeWebhooks turns each event of the x-webhooks extension into a path
// /x-webhooks/{event} whose GET answers 200 with the event's payload and the delivery headers, so
// that the structural diff judges events the way a client sees them: as something the service
// sends. Both layouts are read: event -> schema (with x-webhook-headers beside it), and Redocly's
// event -> Path Item whose post.requestBody holds the payload and whose header parameters are the
// delivery headers.
func normalizeWebhooks(root map[string]any) {
	hooks := asMap(root["x-webhooks"])
	if hooks == nil {
		return
	}
	paths := asMap(root["paths"])
	if paths == nil {
		paths = map[string]any{}
		root["paths"] = paths
	}
	// Content-Type is the payload's media type, which the content map already says (OpenAPI
	// ignores a header parameter of that name).
	// x-webhook-headers lists the headers every delivery carries: required unless it says otherwise.
	shared := map[string]any{}
	for name, h := range asMap(root["x-webhook-headers"]) {
		if !strings.EqualFold(name, "content-type") {
			hm := map[string]any{"required": true}
			for k, v := range asMap(h) {
				hm[k] = v
			}
			shared[strings.ToLower(name)] = hm
		}
	}
	for event, v := range hooks {
		item := asMap(v)
		schema := item
		headers := map[string]any{}
		for k, h := range shared {
			headers[k] = h
		}
		if post := asMap(item["post"]); post != nil {
			schema = nil
			body := resolveLocal(root, asMap(post["requestBody"]))
			if media := asMap(asMap(body["content"])["application/json"]); media != nil {
				schema = asMap(media["schema"])
			}
			params, _ := post["parameters"].([]any)
			for _, p := range params {
				pm := resolveLocal(root, asMap(p))
				if pm["in"] == "header" && str(pm["name"]) != "" && !strings.EqualFold(str(pm["name"]), "content-type") {
					headers[strings.ToLower(str(pm["name"]))] = map[string]any{
						"description": pm["description"], "required": pm["required"], "schema": pm["schema"]}
				}
			}
		}
		if schema == nil {
			continue
		}
		for k, h := range headers {
			hm := map[string]any{}
			for hk, hv := range asMap(h) {
				if hv != nil {
					hm[hk] = hv
				}
			}
			headers[k] = hm
		}
		response := map[string]any{
			"description": "the payload of the " + event + " event",
			"content":     map[string]any{"application/json": map[string]any{"schema": schema}},
		}
		if len(headers) > 0 {
			response["headers"] = headers
		}
		paths[webhookPathPrefix+event] = map[string]any{
			"get": map[string]any{"responses": map[string]any{"200": response}},
		}
	}
	delete(root, "x-webhooks")
	delete(root, "x-webhook-headers")
}

// resolveLocal follows a local $ref (#/components/...) inside the raw document.
func resolveLocal(root, m map[string]any) map[string]any {
	for range 8 {
		ref := str(m["$ref"])
		if !strings.HasPrefix(ref, "#/") {
			return m
		}
		cur := any(root)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			cur = asMap(cur)[part]
		}
		m = asMap(cur)
	}
	return m
}

// requestBodies walks the JSON request body of every operation both sides have, for strictness
// and deprecated aliases.
func requestBodies(w *schemaWalk, oldDoc, newDoc *openapi3.T) {
	for _, path := range oldDoc.Paths.InMatchingOrder() {
		oldItem, newItem := oldDoc.Paths.Value(path), newDoc.Paths.Value(path)
		if oldItem == nil || newItem == nil {
			continue
		}
		for method, oldOp := range oldItem.Operations() {
			newOp := newItem.GetOperation(method)
			if newOp == nil || oldOp.RequestBody == nil || newOp.RequestBody == nil {
				continue
			}
			om, nm := oldOp.RequestBody.Value.Content.Get("application/json"), newOp.RequestBody.Value.Content.Get("application/json")
			if om == nil || nm == nil || om.Schema == nil || nm.Schema == nil {
				continue
			}
			w.compare(method+" "+path+" body", schemaMap(om.Schema, nil), schemaMap(nm.Schema, nil))
		}
	}
}

// schemaMap turns a resolved kin-openapi schema into decoded JSON with every reference inlined
// (a reference back into its own ancestry is left as {$ref}).
func schemaMap(ref *openapi3.SchemaRef, seen []*openapi3.Schema) map[string]any {
	if ref == nil || ref.Value == nil {
		return nil
	}
	s := ref.Value
	if slices.Contains(seen, s) {
		return map[string]any{"$ref": ref.Ref}
	}
	seen = append(seen, s)
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for name, p := range s.Properties {
			props[name] = schemaMap(p, seen)
		}
		m["properties"] = props
	}
	if s.Items != nil {
		m["items"] = schemaMap(s.Items, seen)
	}
	if s.AdditionalProperties.Schema != nil {
		m["additionalProperties"] = schemaMap(s.AdditionalProperties.Schema, seen)
	}
	for key, list := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		if len(list) > 0 {
			out := make([]any, len(list))
			for i, e := range list {
				out[i] = schemaMap(e, seen)
			}
			m[key] = out
		}
	}
	return m
}

// errorSchemas finds the schemas of error.code and error.limit.bound_by in a description.
func errorSchemas(doc *openapi3.T) (code, boundBy *openapi3.Schema) {
	prop := func(s *openapi3.Schema, name string) *openapi3.Schema {
		if s == nil || s.Properties[name] == nil {
			return nil
		}
		return s.Properties[name].Value
	}
	if doc.Components == nil {
		return nil, nil
	}
	if e := doc.Components.Schemas["Error"]; e != nil {
		body := prop(e.Value, "error")
		code, boundBy = prop(body, "code"), prop(prop(body, "limit"), "bound_by")
	}
	if code == nil && doc.Components.Schemas["ErrorCode"] != nil {
		code = doc.Components.Schemas["ErrorCode"].Value
	}
	if boundBy == nil && doc.Components.Schemas["SpendLimitBoundBy"] != nil {
		boundBy = doc.Components.Schemas["SpendLimitBoundBy"].Value
	}
	return code, boundBy
}

// errorSets judges the error-code set, each code's status and retryable verdict (x-error-table) and
// the limit.bound_by set: renaming or removing one is never done. It then gives the new side the old
// sets, so the structural diff does not report the same change again on every operation.
func errorSets(c *collector, oldDoc, newDoc *openapi3.T) {
	oc, ob := errorSchemas(oldDoc)
	nc, nb := errorSchemas(newDoc)
	if oc != nil && nc != nil {
		enumSet(c, "error code", "error.code", oc, nc)
		ot, nt := errorTable(oc), errorTable(nc)
		for _, code := range sortedKeys(ot) {
			o, n := asMap(ot[code]), asMap(nt[code])
			if n == nil {
				continue
			}
			for _, k := range []string{"status", "retryable"} {
				if !sameJSON(o[k], n[k]) {
					c.add(RuleErrorSets, Breaking, "error-"+k+"-changed", "error.code "+code,
						"the %s of error code %s changed, %s -> %s", k, code, jsonText(o[k]), jsonText(n[k]))
				}
			}
		}
		nc.Enum = slices.Clone(oc.Enum)
	}
	if ob != nil && nb != nil {
		enumSet(c, "limit.bound_by value", "error.limit.bound_by", ob, nb)
		nb.Enum = slices.Clone(ob.Enum)
	}
}

func errorTable(s *openapi3.Schema) map[string]any {
	b, err := json.Marshal(s.Extensions["x-error-table"])
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// enumSet judges a contract set of values: an added value is additive; a removed one is never done,
// and when values were added beside the removal it reads as a rename.
func enumSet(c *collector, what, path string, old, new *openapi3.Schema) {
	removed, added := setDiff(old.Enum, new.Enum), setDiff(new.Enum, old.Enum)
	for i, v := range removed {
		if i < len(added) {
			c.add(RuleNeverRenamed, Breaking, strings.ReplaceAll(what, " ", "-")+"-renamed", path,
				"%s %s renamed to %s: a renamed %s is never done; add %s beside %s", what, v, added[i], what, added[i], v)
			continue
		}
		c.add(RuleErrorSets, Breaking, strings.ReplaceAll(what, " ", "-")+"-removed", path,
			"%s %s removed: the set of %ss is contract", what, v, what)
	}
	for _, v := range added[min(len(removed), len(added)):] {
		c.add(RuleAdditive, Compatible, strings.ReplaceAll(what, " ", "-")+"-added", path, "%s %s added", what, v)
	}
}

// structural runs oasdiff's checks and re-judges each finding by the versioning rules. Findings
// that differ only in the operation they were reported for are merged into one.
func structural(c *collector, oldDoc, newDoc *load.SpecInfo) error {
	d, sources, err := oasdiff.GetWithOperationsSourcesMap(oasdiff.NewConfig(), oldDoc, newDoc)
	if err != nil {
		return compareErrorf("structural diff: %w", err)
	}
	changes := checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), d, sources, checker.INFO)
	l := checker.NewDefaultLocalizer()
	type group struct {
		f   Finding
		ops []string
	}
	groups := map[string]*group{}
	var order []string
	for _, ch := range changes {
		v, rule, keep := judge(ch.GetId(), ch.GetLevel())
		if !keep {
			continue
		}
		text := ch.GetUncolorizedText(l)
		if strings.HasPrefix(ch.GetPath(), webhookPathPrefix) {
			text = webhookWording.Replace(text)
		}
		if rule == RuleNeverRenamed {
			text += " (a REST field is never removed or renamed; add a new one beside it)"
		}
		key := ch.GetId() + "\x00" + text
		g := groups[key]
		if g == nil {
			g = &group{f: Finding{Rule: rule, Verdict: v, Change: ch.GetId(), Message: text}}
			groups[key] = g
			order = append(order, key)
		}
		if op := operationName(ch.GetOperation(), ch.GetPath()); op != "" && !slices.Contains(g.ops, op) {
			g.ops = append(g.ops, op)
		}
	}
	for _, key := range order {
		g := groups[key]
		sort.Strings(g.ops)
		switch len(g.ops) {
		case 0:
			g.f.Path = "(document)"
		case 1:
			g.f.Path = g.ops[0]
		default:
			g.f.Path = g.ops[0]
			g.f.Operations = g.ops
		}
		c.findings = append(c.findings, g.f)
	}
	return nil
}

// webhookWording rewords oasdiff's texts for the events put under /x-webhooks/.
var webhookWording = strings.NewReplacer(
	"the response with the `200` status", "the event payload",
	"for the response status `200`", "of the event payload",
	"response header", "delivery header",
	"response property", "payload property",
)

func operationName(method, path string) string {
	if path == "" {
		return ""
	}
	if event, ok := strings.CutPrefix(path, webhookPathPrefix); ok {
		return "webhook " + event
	}
	if method == "" {
		return path
	}
	return method + " " + path
}

var (
	// the oasdiff checks the versioning rules have nothing to say about: oasdiff's own semver
	// policy (the interface's is VER-025), sunset dates and stability levels (the interface has
	// version windows instead), operation ids and tags (not contract).
	ignoredChecks = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^api-version-|^api-major-version-|sunset|stability|operation-id|` +
			`^api-tag-|^api-schema-removed$|deprecated|reactivated`)
	})
	// a REST field, query parameter or response header removed: never done (VER-016).
	fieldRemoved = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(request|response)-(optional-|required-)?(write-only-)?property-removed|` +
			`^request-parameter-removed|^(optional|required)-response-header-removed$`)
	})
	// a path, method or webhook event removed.
	routeRemoved = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^api-(path-)?removed|^webhook-removed$`) })
	// an enum value removed (not from a read-only property, which no request carries), or an enum
	// newly set on something a client sends.
	enumRemoved = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(request|response)-(body|property|parameter|parameter-property|header-property)-enum-value-removed$|` +
			`^request-.*became-enum$`)
	})
	// a bound moved, and the enum widenings of a response.
	boundMoved = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(request|response)-(body|property|parameter|header)-(exclusive-)?(max|min)` +
			`(-length|-items|-properties|-contains)?-(decreased|increased|set|unset)$`)
	})
	responseWider = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^response-.*(enum-value-added|became-not-enum)$`) })
	// a default or a pattern of something a client sends changed.
	requestDefaultOrPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^request-.*(default-value-(changed|removed|added)|pattern-changed)$`)
	})
)

// judge maps an oasdiff check id and level to the versioning rule's verdict. keep is false for
// checks that are not about the contract.
func judge(id string, level checker.Level) (v Verdict, rule string, keep bool) {
	switch {
	case fieldRemoved().MatchString(id):
		return Breaking, RuleNeverRenamed, true
	case routeRemoved().MatchString(id):
		return Breaking, RuleContract, true
	case ignoredChecks().MatchString(id):
		return "", "", false
	case enumRemoved().MatchString(id):
		return NeedsMinor, RuleMinorBump, true
	case boundMoved().MatchString(id) && strings.HasPrefix(id, "request-"):
		if level >= checker.ERR {
			return NeedsMinor, RuleMinorBump, true
		}
		return Compatible, RuleAdditive, true
	case boundMoved().MatchString(id), responseWider().MatchString(id):
		// The interface counts a new enum value and a wider bound as additive; a narrower bound
		// on what the service sends breaks no client.
		return Compatible, RuleAdditive, true
	case requestDefaultOrPattern().MatchString(id):
		return Breaking, RuleContract, true
	case level >= checker.ERR:
		return Breaking, RuleContract, true
	case level >= checker.WARN:
		return Note, RuleContract, true
	default:
		return Compatible, RuleAdditive, true
	}
}
