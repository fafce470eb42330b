// Package openshape reads a target's answers where the interface text shows no shape: the array
// of a page, the capability detail's layout, asset, download and from-url answers, the credit
// balance, workflow records. It is the one place of the suite that knows those answers have a
// layout at all. It finds each value from what the text does name (the array beside next_cursor,
// the JSON Schema object of a capability answer, ids by their prefix, a field the text names
// wherever it sits), else from the target's configuration (Shapes, set with check --shape
// NAME=VALUE or the shapes: map of the --config file), else it says which shape name would tell it,
// so the caller can skip naming that key.
//
// The reference mock's own choices are here too (Known's Reference values), used only when the run
// checks that mock (--reference): no other package of the suite may name them (the fence test in
// conformance/internal/specs).
//
// Every function is pure: it reads decoded JSON (encoding/json with UseNumber) and returns values
// and errors; it never fails a spec itself.
package openshape

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Cursor is the key the text names for a page's cursor ("send next_cursor back as cursor").
const Cursor = "next_cursor"

// ErrNotFound says the answer holds no value of the kind asked for.
var ErrNotFound = errors.New("not found")

// Name is one open shape a target may declare: its key (check --shape KEY=VALUE), what the value
// is, and the reference mock's own value.
type Name struct {
	Key       string
	What      string
	Reference string
}

// Known lists the open shapes a target may declare, in the order --help shows them. A page's
// array key is found without one (the one array beside next_cursor); "page:<path>" names it where
// an answer holds several (see PageKey).
var Known = []Name{
	{Key: "balance.available", Reference: "/available_credits",
		What: "JSON pointer, in the answer of GET /credits/balance, to the available credits (an integer)"},
	{Key: "balance.held", Reference: "/held_credits",
		What: "JSON pointer, in the answer of GET /credits/balance, to the credits held by open jobs (an integer)"},
	{Key: "balance.total", Reference: "/balance_credits",
		What: "JSON pointer, in the answer of GET /credits/balance, to the whole balance, available plus held (an integer)"},
	{Key: "from_url.link", Reference: "url",
		What: "body field of POST /uploads/from-url that carries the link to import"},
	{Key: "invoke.inputs", Reference: "inputs",
		What: "body field of a workflow invoke that carries the run's inputs (an object)"},
	{Key: "workflow.template_key", Reference: "template_key",
		What: "field of a GET /workflows/templates row that holds the key the template invoke path takes"},
	{Key: "workflow.example_inputs", Reference: "example_inputs",
		What: "field of a GET /workflows/templates row that holds inputs an invoke accepts (an object)"},
}

// pagePrefix starts a shape key naming the array key of a page: "page:/capabilities" = "items".
const pagePrefix = "page:"

// PageKey is the shape key that names the array of the page answered at path ("/capabilities").
func PageKey(path string) string { return pagePrefix + path }

// Lookup returns the Known entry of key.
func Lookup(key string) (Name, bool) {
	for _, n := range Known {
		if n.Key == key {
			return n, true
		}
	}
	return Name{}, false
}

// CheckKey reports whether key is a shape a target may declare (Known, or page:<path>).
func CheckKey(key string) error {
	if _, ok := Lookup(key); ok {
		return nil
	}
	if p, ok := strings.CutPrefix(key, pagePrefix); ok && strings.HasPrefix(p, "/") {
		return nil
	}
	keys := make([]string, 0, len(Known)+1)
	for _, n := range Known {
		keys = append(keys, n.Key)
	}
	keys = append(keys, pagePrefix+"<path>")
	return fmt.Errorf("unknown shape %q (known: %s)", key, strings.Join(keys, ", "))
}

// Shapes is what a target declared: shape key -> value.
type Shapes map[string]string

// Get returns the value of key: the declared one, else the reference mock's when reference is
// set, else "" and false.
func (s Shapes) Get(key string, reference bool) (string, bool) {
	if v, ok := s[key]; ok && v != "" {
		return v, true
	}
	if reference {
		if n, ok := Lookup(key); ok {
			return n.Reference, true
		}
	}
	return "", false
}

// Undeclared is the reason a spec skips when the shape key is neither found nor declared.
func Undeclared(key string) string {
	what := "the array key of that page"
	if n, ok := Lookup(key); ok {
		what = n.What
	}
	return fmt.Sprintf("the text shows no shape here and the target declares none: "+
		"set shape %s (check --shape %s=VALUE, or shapes: in the --config file): %s", key, key, what)
}

// ---- pages ----

// Page is one page read from a list answer.
type Page struct {
	Rows []any
	// Key is where the rows were found (the array's key).
	Key string
	// Holder is the object that holds the rows and next_cursor.
	Holder map[string]any
}

// PageOf finds the page in doc. named is the array key when the text names it (presets, actors,
// voices, webhooks, templates), "" where it does not; declared is the key a target declared for
// this page ("" when none). Without either, the rows are the one array beside next_cursor: in the
// object that holds next_cursor (the answer itself, or the first object below it that does), the
// one array value, or the one array of objects when there are several.
func PageOf(doc any, named, declared string) (Page, error) {
	top, ok := doc.(map[string]any)
	if !ok {
		return Page{}, errors.New("the answer is not a JSON object")
	}
	for _, k := range []string{named, declared} {
		if k == "" {
			continue
		}
		holder := holderOf(top, Cursor)
		if holder == nil {
			holder = top
		}
		v, has := holder[k]
		if !has {
			if v, has = top[k]; has {
				holder = top
			}
		}
		if !has {
			return Page{}, fmt.Errorf("the answer has no %q", k)
		}
		rows, isArr := v.([]any)
		if !isArr {
			return Page{}, fmt.Errorf("%q is not an array", k)
		}
		return Page{Rows: rows, Key: k, Holder: holder}, nil
	}
	holder := holderOf(top, Cursor)
	if holder == nil {
		holder = top
	}
	var arrays, objArrays []string
	for _, k := range sortedKeys(holder) {
		a, isArr := holder[k].([]any)
		if !isArr {
			continue
		}
		arrays = append(arrays, k)
		if allObjects(a) {
			objArrays = append(objArrays, k)
		}
	}
	pick := ""
	switch {
	case len(arrays) == 1:
		pick = arrays[0]
	case len(objArrays) == 1:
		pick = objArrays[0]
	case len(arrays) == 0:
		return Page{}, fmt.Errorf("no array beside %s: %w", Cursor, ErrNotFound)
	default:
		return Page{}, fmt.Errorf("several arrays beside %s (%s): which one holds the rows is not shown", Cursor, strings.Join(arrays, ", "))
	}
	return Page{Rows: holder[pick].([]any), Key: pick, Holder: holder}, nil
}

func allObjects(a []any) bool {
	for _, v := range a {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// holderOf returns the first object, breadth first from v (v itself first), that has key; nil when
// none does.
func holderOf(v any, key string) map[string]any {
	var found map[string]any
	walk(v, func(o map[string]any) bool {
		if _, ok := o[key]; ok {
			found = o
			return false
		}
		return true
	})
	return found
}

// walk visits every object of v breadth first, v itself first, keys in sorted order, until fn
// returns false.
func walk(v any, fn func(map[string]any) bool) {
	if o, ok := v.(map[string]any); ok && !fn(o) {
		return
	}
	stopped := false
	children(v, func(_ string, x any) bool {
		if o, ok := x.(map[string]any); ok && !stopped && !fn(o) {
			stopped = true
		}
		return !stopped
	})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ---- records found by a key the text names ----

// Holding returns the object that carries key (breadth first from doc, doc itself first): the
// record of an answer whose layout is not shown, found by a field the text names for it
// (asset_id for an asset, capability_id for a capability).
func Holding(doc any, key string) (map[string]any, error) {
	if o := holderOf(doc, key); o != nil {
		return o, nil
	}
	return nil, fmt.Errorf("no object carries %q: %w", key, ErrNotFound)
}

// Detail is a capability answer read without its layout: the capability's own fields (the object
// that carries capability_id), its config schema and its smallest valid config.
type Detail struct {
	Fields  map[string]any
	Schema  map[string]any
	Example map[string]any
}

// View is the detail as one object in the text's names: the capability's fields with
// config_schema and example_config beside them (what the text names the two), plus the answer's
// top-level ok when it has one. The caller reads it as it would a flat answer.
func (d Detail) View(doc any) map[string]any {
	out := map[string]any{}
	if top, ok := doc.(map[string]any); ok {
		if v, has := top["ok"]; has {
			out["ok"] = v
		}
	}
	for k, v := range d.Fields {
		out[k] = v
	}
	if d.Schema != nil {
		out["config_schema"] = d.Schema
	}
	if d.Example != nil {
		out["example_config"] = d.Example
	}
	return out
}

// DetailOf reads a capability answer. The schema is the value of config_schema wherever it sits
// (the text names it), else the one JSON Schema object of the answer (an object schema with
// properties); the example is example_config wherever it sits. Fields is the object carrying
// capability_id. An answer with no schema is an error.
func DetailOf(doc any) (Detail, error) {
	var d Detail
	fields, err := Holding(doc, "capability_id")
	if err != nil {
		return d, err
	}
	d.Fields = map[string]any{}
	for k, v := range fields {
		if k == "config_schema" || k == "example_config" {
			continue
		}
		d.Fields[k] = v
	}
	if o := holderOf(doc, "config_schema"); o != nil {
		d.Schema, _ = o["config_schema"].(map[string]any)
	}
	if d.Schema == nil {
		var schemas []map[string]any
		walk(doc, func(o map[string]any) bool {
			if isObjectSchema(o) {
				schemas = append(schemas, o)
			}
			return true
		})
		if len(schemas) > 0 {
			d.Schema = schemas[0]
		}
	}
	if d.Schema == nil {
		return d, fmt.Errorf("no JSON Schema object (config_schema) in the capability answer: %w", ErrNotFound)
	}
	if o := holderOf(doc, "example_config"); o != nil {
		d.Example, _ = o["example_config"].(map[string]any)
	}
	return d, nil
}

// isObjectSchema reports whether o reads as a JSON Schema of an object: type object and a
// properties object.
func isObjectSchema(o map[string]any) bool {
	_, props := o["properties"].(map[string]any)
	return o["type"] == "object" && props
}

// ---- ids and links ----

var idTail = `[0-9a-f]{32}`

// IDs returns every string of v, at any depth, that is an id of the prefix (prefix then 32
// lowercase hex characters), once each, in the order found (breadth first, keys sorted).
func IDs(v any, prefix string) []string {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + idTail + `$`)
	var out []string
	seen := map[string]bool{}
	add := func(x any) {
		if s, ok := x.(string); ok && re.MatchString(s) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(v)
	children(v, func(_ string, x any) bool { add(x); return true })
	return out
}

// Links returns every string of v, at any depth, that is an absolute http or https URL, values
// under a key named url first, then the rest, each in the order found.
func Links(v any) []string {
	var named, other []string
	children(v, func(k string, x any) bool {
		s, ok := x.(string)
		switch {
		case !ok || !isLink(s):
			return true
		case k == "url":
			named = append(named, s)
		default:
			other = append(other, s)
		}
		return false
	})
	return append(named, other...)
}

// children visits every value below v breadth first (an object's in key order, with its key; an
// array's with ""), descending into a value when fn says so.
func children(v any, fn func(key string, x any) bool) {
	Paths(v, func(_, key string, x any) bool { return fn(key, x) })
}

// Paths visits every value below v breadth first (an object's in key order, an array's in index
// order) with its dotted path from v ("credits.credits_charged", "outputs.0.asset_id": keys and
// indexes joined by dots) and its key ("" for an array element), descending into a value when fn
// says so: the walk of a record whose layout the text does not show, for a spec that names where
// it found a value.
func Paths(v any, fn func(path, key string, x any) bool) {
	type node struct {
		path string
		v    any
	}
	join := func(path, step string) string {
		if path == "" {
			return step
		}
		return path + "." + step
	}
	queue := []node{{"", v}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		switch x := cur.v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if p := join(cur.path, k); fn(p, k, x[k]) {
					queue = append(queue, node{p, x[k]})
				}
			}
		case []any:
			for i, e := range x {
				if p := join(cur.path, strconv.Itoa(i)); fn(p, "", e) {
					queue = append(queue, node{p, e})
				}
			}
		}
	}
}

func isLink(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ---- declared pointers ----

// Pointer returns the value at the JSON pointer ptr (RFC 6901) of doc.
func Pointer(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("%q is not a JSON pointer (it starts with /)", ptr)
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("%s: no %q: %w", ptr, tok, ErrNotFound)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("%s: no element %q: %w", ptr, tok, ErrNotFound)
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("%s: %q is below a value that is not an object or array: %w", ptr, tok, ErrNotFound)
		}
	}
	return cur, nil
}

// IntAt returns the whole number at the JSON pointer ptr of doc.
func IntAt(doc any, ptr string) (int64, error) {
	v, err := Pointer(doc, ptr)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return i, nil
		}
	case float64:
		if n == float64(int64(n)) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("%s is %v, not a whole number", ptr, v)
}

// RunStatuses are the statuses of a workflow run (States and transitions > Workflow run status).
var RunStatuses = []string{"queued", "running", "completed", "partial", "failed", "canceled"}

// RunStatus reads the status of the workflow run in a run read (its record, the object carrying
// workflow_run_id: run records are not shown): the record's status when it is a run status, else
// the one string among the record's own fields whose value is a run status. ok is false when
// there is none or several.
func RunStatus(doc any) (string, bool) {
	rec, err := Holding(doc, "workflow_run_id")
	if err != nil {
		return "", false
	}
	isStatus := func(v any) bool {
		s, _ := v.(string)
		for _, st := range RunStatuses {
			if s == st {
				return true
			}
		}
		return false
	}
	if isStatus(rec["status"]) {
		return rec["status"].(string), true
	}
	found := ""
	for _, k := range sortedKeys(rec) {
		if isStatus(rec[k]) {
			if found != "" {
				return "", false
			}
			found = rec[k].(string)
		}
	}
	return found, found != ""
}

// RunID returns the workflow run an invoke answered: the wfr_ id of its Location header (the text
// says an invoke names the run there), else the one wfr_ id of its body.
func RunID(location string, doc any) (string, bool) {
	if found := IDs(location[strings.LastIndex(location, "/")+1:], "wfr_"); len(found) == 1 {
		return found[0], true
	}
	if found := IDs(doc, "wfr_"); len(found) == 1 {
		return found[0], true
	}
	return "", false
}
