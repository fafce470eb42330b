package wrongservers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediaspec/mediaspec/spec"
	specjudge "github.com/mediaspec/mediaspec/spec/judge"
)

// The rewrites legal variants are made of: each turns an answer (or a delivery) of the mock into
// another one the interface text allows.

// isJSON reports whether a Content-Type is a JSON media type.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// opaqueKeys hold data the client sends back or a schema, never a response object of the
// service's own: a rewrite of objects leaves them alone (a key added to a config schema's
// properties would be a new config field, one added to example_config an unknown key).
var opaqueKeys = map[string]bool{
	"config_schema": true, "example_config": true, "inputs_schema": true, "example_inputs": true,
	"config": true, "inputs": true, "result": true, "properties": true, "checks": true,
}

// eachObject calls fn on every JSON object in v, parents before children, leaving opaque subtrees
// alone.
func eachObject(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for k, c := range x {
			if !opaqueKeys[k] {
				eachObject(c, fn)
			}
		}
	case []any:
		for _, c := range x {
			eachObject(c, fn)
		}
	}
}

// encodeOrdered encodes v as JSON with every object's keys in reverse order of their names (the
// order of properties is detail, Versioning 3), indented when indent is set.
func encodeOrdered(v any, indent bool) []byte {
	var b bytes.Buffer
	writeOrdered(&b, v, indent, 0)
	return b.Bytes()
}

func writeOrdered(b *bytes.Buffer, v any, indent bool, depth int) {
	nl := func(d int) {
		if indent {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat("  ", d))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if indent {
				b.WriteByte(' ')
			}
			writeOrdered(b, x[k], indent, depth+1)
		}
		if len(keys) > 0 {
			nl(depth)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, c := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			writeOrdered(b, c, indent, depth+1)
		}
		if len(x) > 0 {
			nl(depth)
		}
		b.WriteByte(']')
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

// decodeAny decodes a JSON body keeping numbers exact.
func decodeAny(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// reencode answers matching calls with their JSON bodies encoded by enc (every status).
func reencode(m matcher, enc func(v any) []byte) Wrap {
	return answers(m, func(_ *Env, _ *http.Request, a *answer) {
		if !isJSON(a.header.Get("Content-Type")) {
			return
		}
		if v, ok := decodeAny(a.body); ok {
			a.body = enc(v)
		}
	})
}

// idPattern is a prefixed id of the text's table (specjudge.TextIDsInText): the prefix and 32
// lowercase hex.
var idPattern = specjudge.TextIDsInText

// flipTails maps every prefixed id in b to another id of the same prefix and form: each hex digit
// of the tail XOR 5. The map is its own inverse, so the same call turns the suite's ids back into
// the mock's and the mock's into the suite's, consistently.
func flipTails(b []byte) []byte {
	return idPattern().ReplaceAllFunc(b, func(m []byte) []byte {
		out := append([]byte(nil), m...)
		const hex = "0123456789abcdef"
		for i := len(out) - 32; i < len(out); i++ {
			out[i] = hex[strings.IndexByte(hex, out[i])^5]
		}
		return out
	})
}

// otherTails is the mock behind a proxy that shows every prefixed id with another tail: requests
// (path, query, JSON body) are mapped back before the mock sees them, answers (JSON body,
// Location) are mapped on the way out.
func otherTails() Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.URL.Path = string(flipTails([]byte(r.URL.Path)))
			r.URL.RawPath = ""
			r.URL.RawQuery = string(flipTails([]byte(r.URL.RawQuery)))
			r.RequestURI = r.URL.RequestURI()
			if isJSON(r.Header.Get("Content-Type")) {
				setRequestBody(r, flipTails(requestBody(r)))
			}
			a := serve(next, r)
			if isJSON(a.header.Get("Content-Type")) {
				a.body = flipTails(a.body)
			}
			if l := a.header.Get("Location"); l != "" {
				a.header.Set("Location", string(flipTails([]byte(l))))
			}
			a.send(w)
		})
	}
}

// hookBytes changes each delivery's raw body and headers with edit before the receiver sees it,
// then, when the body or webhook-id changed, signs it again with the endpoint's secret.
func hookBytes(edit func(h http.Header, body []byte) []byte) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			old, id := requestBody(r), r.Header.Get("Webhook-Id")
			b := edit(r.Header, old)
			if !bytes.Equal(b, old) || r.Header.Get("Webhook-Id") != id {
				setRequestBody(r, b)
				resign(env, r, b)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hookDocs changes each delivery's JSON body with edit (then encodes it with enc, json.Marshal
// when nil) and signs it again.
func hookDocs(edit func(d map[string]any), enc func(v any) []byte) Wrap {
	return hookBytes(func(_ http.Header, body []byte) []byte {
		v, ok := decodeAny(body)
		d, isObj := v.(map[string]any)
		if !ok || !isObj {
			return body
		}
		edit(d)
		if enc != nil {
			return enc(d)
		}
		out, err := json.Marshal(d)
		if err != nil {
			return body
		}
		return out
	})
}

// A list the text pages with a cursor: its path, the key of its rows, the key of a row's id, and
// whether its cursor is the last row's capability_id (capabilities and presets: "a cursor naming
// no current capability restarts", "next_cursor (the last row's capability_id ...)").
type pagedList struct {
	path, rows, id string
	native         bool
}

var pagedLists = []pagedList{
	{"/capabilities", "capabilities", "capability_id", true},
	{"/presets", "presets", "capability_id", true},
	{"/actors", "actors", "actor_id", false},
	{"/voices", "voices", "voice_id", false},
	{"/generations", "generations", "generation_id", false},
}

// Cursors a paging variant makes: split.<base64url of the mock's cursor>.<base64url of the last
// row shown> (the rest of the mock's page after that row), and end.<...> (an empty last page).
const (
	splitCursor = "lgsplit."
	endCursor   = "lgend."
)

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
func unb64(s string) string {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return string(b)
}

// splitPages answers every page of the lists with two or more rows as two shorter pages ("A page
// can be shorter than limit"): the first half with a cursor to the rest, then the rest with the
// mock's own next_cursor. Capabilities and presets use the last shown row's capability_id as the
// cursor, as the text describes.
func splitPages() Wrap {
	var ws []Wrap
	for _, l := range pagedLists {
		ws = append(ws, pageEdit(l, splitCursor, func(l pagedList, cursor string, d map[string]any) {
			rows, _ := d[l.rows].([]any)
			if rest, ours := strings.CutPrefix(cursor, splitCursor); ours {
				_, after, _ := strings.Cut(rest, ".")
				last := unb64(after)
				for i, row := range rows {
					if m, _ := row.(map[string]any); m != nil && m[l.id] == last {
						rows = rows[i+1:]
						break
					}
				}
				d[l.rows] = rows
				return
			}
			if len(rows) < 2 {
				return
			}
			half := rows[:len(rows)/2]
			lastRow, _ := half[len(half)-1].(map[string]any)
			id, _ := lastRow[l.id].(string)
			d[l.rows] = half
			if l.native {
				d["next_cursor"] = id
			} else {
				d["next_cursor"] = splitCursor + b64(cursor) + "." + b64(id)
			}
		}))
	}
	return chainWraps(ws...)
}

// trailingEmptyPage answers the page holding a list's last row with a next_cursor, and that cursor
// with an empty page whose next_cursor is null ("Only next_cursor null means the end"); presets
// are left out, their text says the last page's next_cursor is null, and the capability list's
// cursor stays its last row's id.
func trailingEmptyPage() Wrap {
	var ws []Wrap
	for _, l := range pagedLists {
		if l.path == "/presets" {
			continue
		}
		ws = append(ws, pageEdit(l, endCursor, func(l pagedList, cursor string, d map[string]any) {
			if strings.HasPrefix(cursor, endCursor) {
				d[l.rows] = []any{}
				d["next_cursor"] = nil
				return
			}
			if rows, _ := d[l.rows].([]any); len(rows) > 0 && d["next_cursor"] == nil {
				if l.native {
					// The capability list's cursor is the last row's id ("cursor as in the
					// capability list"): after the last row, the mock's own page is empty.
					last, _ := rows[len(rows)-1].(map[string]any)
					d["next_cursor"] = last[l.id]
					return
				}
				d["next_cursor"] = endCursor + b64(cursor)
			}
		}))
	}
	return chainWraps(ws...)
}

// pageEdit runs edit on the 200 answers to GET l.path. A cursor of the variant's own (starting
// with own) is turned back into the mock's before the mock sees it (an end cursor reads the first
// page, for the answer's other fields); edit gets the cursor the suite sent.
func pageEdit(l pagedList, own string, edit func(l pagedList, cursor string, d map[string]any)) Wrap {
	m := route(http.MethodGet, l.path)
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !m(r) {
				next.ServeHTTP(w, r)
				return
			}
			q := r.URL.Query()
			cursor := strings.TrimSpace(q.Get("cursor"))
			switch {
			case own == splitCursor && strings.HasPrefix(cursor, splitCursor):
				o, _, _ := strings.Cut(strings.TrimPrefix(cursor, splitCursor), ".")
				setQuery(r, q, "cursor", unb64(o))
			case own == endCursor && strings.HasPrefix(cursor, endCursor):
				setQuery(r, q, "cursor", "")
			}
			a := serve(next, r)
			if a.status == http.StatusOK {
				if d, ok := a.doc(); ok {
					edit(l, cursor, d)
					a.setDoc(d)
				}
			}
			a.send(w)
		})
	}
}

func setQuery(r *http.Request, q map[string][]string, key, value string) {
	if value == "" {
		delete(q, key)
	} else {
		q[key] = []string{value}
	}
	r.URL.RawQuery = encodeQuery(q)
	r.RequestURI = r.URL.RequestURI()
}

func encodeQuery(q map[string][]string) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		for _, v := range q[k] {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	return strings.Join(parts, "&")
}

// refDropper removes from answers and events every property whose x-provenance is the reference's
// (the text does not show it). A property that holds objects the text does describe (the rows of a
// list whose key the text does not name) is kept, and pruned inside: a server must put what the
// text shows somewhere a client can find it.
type refDropper struct {
	doc      *spec.Validator
	events   map[string]*openapi3.SchemaRef
	mu       sync.Mutex
	hasTextM map[*openapi3.Schema]bool
}

// refDropperOnce is the one refDropper of the process, loaded on first use (LegalVariants loads it
// first and fails on its error, so the wraps below never meet one).
var refDropperOnce = sync.OnceValues(newRefDropper)

// dropReferenceAnswers leaves every property the document marks reference out of the JSON answers.
func dropReferenceAnswers() Wrap {
	return answers(anyAPI, func(_ *Env, r *http.Request, a *answer) {
		drop, err := refDropperOnce()
		if err != nil || !isJSON(a.header.Get("Content-Type")) {
			return
		}
		if d, ok := a.doc(); ok {
			kept := rowMeanings(r, d) // what a list row carries by meaning is not a reference choice
			drop.answer(r, a.status, d)
			kept()
			a.setDoc(d)
		}
	})
}

// dropReferenceEvent leaves every property the document marks reference out of a delivery's body.
func dropReferenceEvent(body map[string]any) {
	if drop, err := refDropperOnce(); err == nil {
		drop.event(body)
	}
}

func newRefDropper() (*refDropper, error) {
	v, err := spec.NewEmbeddedValidator(context.Background(), spec.WithBasePath(apiPrefix))
	if err != nil {
		return nil, err
	}
	return &refDropper{doc: v, events: spec.EventSchemas(v.Document()), hasTextM: map[*openapi3.Schema]bool{}}, nil
}

// answer drops the reference-only properties of the answer to r with status. A reference
// operation is left as it is: the text shows nothing of it to keep apart.
func (d *refDropper) answer(r *http.Request, status int, body any) {
	route, _, ok := d.doc.FindRoute(r.Method, r.URL.Path)
	if !ok || provOf(route.Operation.Extensions).Reference() {
		return
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil || provOf(resp.Extensions).Reference() || provOf(resp.Value.Extensions).Reference() {
		return
	}
	if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
		d.prune(body, mt.Schema.Value)
	}
}

// event drops the reference-only properties of an event body.
func (d *refDropper) event(body map[string]any) {
	t, _ := body["type"].(string)
	if sr := d.events[t]; sr != nil {
		d.prune(body, sr.Value)
	}
}

// provOf is spec.ProvenanceOf.
var provOf = spec.ProvenanceOf

// propProv is a property's provenance: on its $ref (SchemaRef extensions) or on its schema.
func propProv(sr *openapi3.SchemaRef) spec.Source {
	if p := provOf(sr.Extensions); p.Kind != "" {
		return p
	}
	if sr.Value != nil {
		return provOf(sr.Value.Extensions)
	}
	return spec.Source{}
}

func (d *refDropper) prune(v any, s *openapi3.Schema) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		ps := propRefs(s)
		for k, c := range x {
			p, listed := ps[k]
			if !listed || p.Value == nil {
				continue
			}
			_, container := c.(map[string]any)
			if _, isList := c.([]any); isList {
				container = true
			}
			if propProv(p).Reference() && !(container && d.hasText(p.Value, 0)) {
				delete(x, k)
				continue
			}
			d.prune(c, p.Value)
		}
	case []any:
		if it := items(s); it != nil {
			for _, c := range x {
				d.prune(c, it)
			}
		}
	}
}

// hasText reports whether some property below s is stated by the text.
func (d *refDropper) hasText(s *openapi3.Schema, depth int) bool {
	if s == nil || depth > 8 {
		return false
	}
	d.mu.Lock()
	known, seen := d.hasTextM[s]
	d.mu.Unlock()
	if seen {
		return known
	}
	found := false
	for _, p := range propRefs(s) {
		if propProv(p).Text() || (p.Value != nil && d.hasText(p.Value, depth+1)) {
			found = true
			break
		}
	}
	if !found {
		found = d.hasText(items(s), depth+1)
	}
	d.mu.Lock()
	d.hasTextM[s] = found
	d.mu.Unlock()
	return found
}

// propRefs are the properties a schema lists, through allOf, oneOf and anyOf.
func propRefs(s *openapi3.Schema) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	var walk func(s *openapi3.Schema, depth int)
	walk = func(s *openapi3.Schema, depth int) {
		if s == nil || depth > 8 {
			return
		}
		for k, p := range s.Properties {
			if _, seen := out[k]; !seen && p != nil {
				out[k] = p
			}
		}
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, g := range group {
				if g != nil {
					walk(g.Value, depth+1)
				}
			}
		}
	}
	walk(s, 0)
	return out
}

// items is an array schema's items schema, through allOf, oneOf and anyOf.
func items(s *openapi3.Schema) *openapi3.Schema {
	if s == nil {
		return nil
	}
	if s.Items != nil && s.Items.Value != nil {
		return s.Items.Value
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, g := range group {
			if g != nil {
				if it := items(g.Value); it != nil {
					return it
				}
			}
		}
	}
	return nil
}

// priceWordSettings are config settings whose names hold a price word but state no price: each
// capability's config_schema lists them (optional strings of an enum), and a config naming one
// of their values has it taken out before the mock sees it (the setting changes nothing). Any
// other value is left in, for the mock to refuse as it refuses an unknown key: invalid_config
// naming it. The control API removes and restores their enum values as the mock does its own
// (PUT and DELETE /capabilities/{id}/enum-removals/{field}/{value}).
func priceWordSettings() Wrap {
	settings := map[string][]any{
		"charge_level": {"low", "standard", "high"},
		"cost_profile": {"fast", "balanced", "quality"},
	}
	about := map[string]string{
		"charge_level": "How strongly the style is applied.",
		"cost_profile": "Quality against speed; the price is the same for each.",
	}
	removal := regexp.MustCompile(`^` + controlPrefix + `/capabilities/([^/]+)/enum-removals/([^/]+)/([^/]+)$`)
	return func(env *Env, next http.Handler) http.Handler {
		var mu sync.Mutex             // guards removed
		removed := map[string][]any{} // capability id + "/" + setting -> its values removed
		values := func(capID, k string) []any {
			mu.Lock()
			defer mu.Unlock()
			return slices.DeleteFunc(slices.Clone(settings[k]), func(v any) bool { return slices.Contains(removed[capID+"/"+k], v) })
		}
		api := chainWraps(
			schemaOf(func(capID string, schema map[string]any) {
				if props := obj(schema, "properties"); props != nil {
					for k := range settings {
						props[k] = map[string]any{"type": "string", "enum": values(capID, k), "default": settings[k][1], "description": about[k]}
					}
				}
			}),
			rewriteBody(spendCall, func(d map[string]any) bool {
				capID, _ := d["capability_id"].(string)
				cfg, changed := obj(d, "config"), false
				for k, v := range cfg {
					if _, ok := settings[k]; ok && slices.Contains(values(capID, k), v) {
						delete(cfg, k)
						changed = true
					}
				}
				return changed
			}))(env, next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := removal.FindStringSubmatch(r.URL.Path)
			if m == nil || (r.Method != http.MethodPut && r.Method != http.MethodDelete) {
				api.ServeHTTP(w, r)
				return
			}
			capID, k, v := m[1], m[2], m[3]
			if _, ok := settings[k]; !ok || !slices.Contains(settings[k], any(v)) {
				api.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			key := capID + "/" + k
			removed[key] = slices.DeleteFunc(removed[key], func(x any) bool { return x == v })
			if r.Method == http.MethodPut {
				removed[key] = append(removed[key], v)
			}
			mu.Unlock()
			a := &answer{header: http.Header{"Content-Type": {"application/json"}}, status: http.StatusOK}
			a.setDoc(map[string]any{"ok": true, "capability_id": capID, "field": k, "value": v, "removed": r.Method == http.MethodPut})
			a.send(w)
		})
	}
}
