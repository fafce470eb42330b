package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Categories are the capability categories in the order the capability list sorts them.
var Categories = []string{"avatar", "video", "image", "preset", "tool"}

// Rows walks GET /capabilities with limit 50 and returns every row.
func Rows(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	return c.Memo("catalogue", func() any {
		rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
		return rows
	}).([]map[string]any)
}

// Detail reads GET /capabilities/{id} and requires 200; without control the answer is read once
// per run and key (Client.Memo), since the catalogue does not change during a run.
func Detail(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	return c.Memo("detail "+id, func() any {
		return ReadDetail(ctx, c, id)
	}).(*framework.Response).Copy()
}

// ReadDetail reads capability id's detail afresh (GET /capabilities/{id}, 200; View): for a spec
// that judges the answer itself or reads it again after a change, where Detail would answer the
// read remembered for the key.
func ReadDetail(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	return View(c.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK))
}

// PricedExample returns the detail of the first available capability whose example_config (naming
// no upload) the target prices with 200; an example it refuses is CAP-023's failure, reported by
// the spec pricing every example, not the calling spec's. It skips the spec when there is none (a
// failure against the reference mock: Client.Lacks).
func PricedExample(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, d := range AvailableDetails(ctx, c, 25) {
		config := answer.ObjectAt(d, "example_config")
		if NamesUpload(config) {
			continue
		}
		if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": config}).Status == http.StatusOK {
			return d
		}
	}
	c.Lacks("no available capability's example_config (without an upload) is priced with 200")
	return nil
}

// NotLiveConfig returns the config to send for capability id, which will not run (coming_soon,
// not offered): its detail's example_config when the detail answers one (valid: "the example
// always validates"), and valid true; else {} and valid false. The submit check order puts config
// validity before capability availability (Errors), and estimates check the config as on submit,
// so only a config known to be valid decides availability: with {} a 400 invalid_config may come
// first.
func NotLiveConfig(ctx context.Context, c *framework.Client, id string) (config map[string]any, valid bool) {
	GinkgoHelper()
	r := c.Get(ctx, "/capabilities/"+id)
	if r.Status == http.StatusOK {
		if ex, ok := View(r).Field("example_config").(map[string]any); ok && !NamesUpload(ex) {
			return ex, true
		}
	}
	return map[string]any{}, false
}

// ExpectNotLive checks r, the refusal of an estimate or submit naming capability id of status st
// with config (valid: NotLiveConfig): 404 capability_unavailable with capability_status st, or,
// for a config not known valid, 400 invalid_config (config validity is checked first).
func ExpectNotLive(r *framework.Response, st string, valid bool) {
	GinkgoHelper()
	if !valid && r.Status == http.StatusBadRequest {
		r.ExpectError(http.StatusBadRequest, "invalid_config")
		return
	}
	r.ExpectError(http.StatusNotFound, "capability_unavailable")
	Expect(r.String("error.capability_status")).To(Equal(st), r.Describe())
}

// WithStatus returns the first row with the status, or nil.
func WithStatus(rows []map[string]any, status string) map[string]any {
	for _, r := range rows {
		if r["status"] == status {
			return r
		}
	}
	return nil
}

// AvailableDetails reads the detail of up to n available capabilities, in catalogue order, skipping
// the spec when the target lists none.
func AvailableDetails(ctx context.Context, c *framework.Client, n int) []*framework.Response {
	GinkgoHelper()
	var out []*framework.Response
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		id, _ := row["capability_id"].(string)
		out = append(out, Detail(ctx, c, id))
		if len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		c.Lacks("the target lists no available capability")
	}
	return out
}

// CheckRow checks the fields of a list row or a detail answer the text lists
// (capability_id, output_kind, status, category; required_plan with requires_plan). "Other fields
// of the capability list row and detail: not shown": the reference's name, description,
// max_variants and pricing_unit are checked only when sent.
func CheckRow(r *framework.Response, row map[string]any, what string) {
	GinkgoHelper()
	answer.String(r, row, "capability_id", what)
	if _, has := row["name"]; has {
		answer.String(r, row, "name", what)
	}
	if _, has := row["description"]; has {
		answer.NullableString(r, row, "description", what)
	}
	Expect(answer.String(r, row, "category", what)).To(answer.OneOf(Categories...), what+r.Describe())
	Expect(answer.String(r, row, "output_kind", what)).To(answer.OneOf("image", "video", "audio", "text"), what+r.Describe())
	status := answer.String(r, row, "status", what)
	Expect(status).To(answer.OneOf("available", "requires_plan", "coming_soon", "retired", "unknown"), what+r.Describe())
	if status == "requires_plan" {
		Expect(answer.String(r, row, "required_plan", what)).NotTo(BeEmpty(), what+r.Describe())
	}
	answer.NoLinks(row, what)
}

// FindDetail reads the detail of the first available capability whose list row pred accepts,
// skipping the spec when there is none.
func FindDetail(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	return c.Memo("find "+what, func() any { return findDetailOf(ctx, c, what, pred) }).(*framework.Response).Copy()
}

func findDetailOf(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		return Detail(ctx, c, row["capability_id"].(string))
	}
	c.Lacks("the target lists no available %s", what)
	return nil
}

// Ceiling is a capability's ceiling of takes from its detail: the maximum of its config_schema's
// count ("count above the ceiling is refused"); 1 when the schema has no count (it makes one
// result); 4, the most variants a submit takes, when count has no maximum.
func Ceiling(d *framework.Response) int64 {
	GinkgoHelper()
	props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
	count, has := props["count"].(map[string]any)
	if !has {
		return 1
	}
	if n, ok := framework.AsInt(count["maximum"]); ok {
		return n
	}
	return 4
}

// Cheapest reads the details of the available capabilities whose list row pred accepts and
// returns the one whose CheapConfig holds the least (configs naming uploads are passed over),
// skipping the spec when there is none.
// A detail predicate (at most one) further picks among the details.
func Cheapest(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool,
	dpred ...func(d *framework.Response) bool) *framework.Response {
	GinkgoHelper()
	return c.Memo("cheapest "+what, func() any { return cheapestOf(ctx, c, what, pred, dpred...) }).(*framework.Response).Copy()
}

func cheapestOf(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool,
	dpred ...func(d *framework.Response) bool) *framework.Response {
	GinkgoHelper()
	var best *framework.Response
	var bestNeed int64
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		d := Detail(ctx, c, row["capability_id"].(string))
		if len(dpred) > 0 && !dpred[0](d) {
			continue
		}
		cfg := CheapConfig(d)
		if NamesUpload(cfg) {
			continue
		}
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
		if r.Status != http.StatusOK {
			continue
		}
		if need := r.Int("max_credits_needed"); best == nil || need < bestNeed {
			best, bestNeed = d, need
		}
	}
	if best == nil {
		c.Lacks("the target lists no available %s that can be priced without an upload", what)
	}
	return best
}

// ImageModel is the cheapest available image model that makes several takes in one generation.
func ImageModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return Cheapest(ctx, c, "image model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "image" && row["output_kind"] == "image"
	}, severalTakes)
}

// VideoModel is the cheapest available video model that fans variants out.
func VideoModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return Cheapest(ctx, c, "video model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "video" && row["output_kind"] == "video"
	}, severalTakes)
}

// severalTakes reports whether a capability's ceiling allows two or more takes.
func severalTakes(d *framework.Response) bool {
	GinkgoHelper()
	return Ceiling(d) > 1
}

// TextCapability is an available capability whose output is text.
func TextCapability(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return FindDetail(ctx, c, "text capability", func(row map[string]any) bool { return row["output_kind"] == "text" })
}

// CheapConfig is the capability's example_config with a duration set to its schema minimum (the
// Cheapest take of a time-priced model), and a fresh marker in its free text (its prompt or
// script, textKeyOf) so that two specs never send identical requests.
func CheapConfig(d *framework.Response) map[string]any {
	GinkgoHelper()
	cfg := Clone(answer.ObjectAt(d, "example_config"))
	props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
	if p, ok := props["duration"].(map[string]any); ok && p["type"] == "integer" {
		if m, ok := framework.AsInt(p["minimum"]); ok {
			cfg["duration"] = m
		}
	}
	if k := TextKey(d); k != "" {
		if v, ok := cfg[k].(string); ok {
			marked := v + " Take " + framework.RandomHex(6) + "."
			if mx, bounded := framework.AsInt(props[k].(map[string]any)["maxLength"]); !bounded || int64(len(marked)) <= mx {
				cfg[k] = marked
			}
		}
	}
	return cfg
}

// FirstVoice returns the id of the first listed voice.
func FirstVoice(ctx context.Context, c *framework.Client) string {
	GinkgoHelper()
	p := paging.Get(ctx, c, "/voices", "voices")
	if len(p.Rows) == 0 {
		c.Lacks("the target lists no voice")
	}
	return p.Rows[0]["voice_id"].(string)
}

// OverCapConfig finds an available video model config whose hold is above 600 credits (the
// default per-generation cap): one integer setting (its duration, in the reference; the text
// names no key) at its schema maximum, count aside. It skips the spec when none is.
func OverCapConfig(ctx context.Context, c *framework.Client) (string, map[string]any, int64) {
	GinkgoHelper()
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" || row["category"] != "video" {
			continue
		}
		d := Detail(ctx, c, row["capability_id"].(string))
		props := answer.SchemaProps(d)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p, _ := props[name].(map[string]any)
			hi, ok := framework.AsInt(p["maximum"])
			if p["type"] != "integer" || !ok || name == "count" {
				continue
			}
			cfg := CheapConfig(d)
			cfg[name] = hi
			if NamesUpload(cfg) {
				break
			}
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
			if r.Status == http.StatusOK && r.Int("max_credits_needed") > 600 {
				return d.String("capability_id"), cfg, r.Int("max_credits_needed")
			}
		}
	}
	c.Lacks("no available video model's config (an integer setting at its maximum) holds more than 600 credits")
	return "", nil, 0
}

// VariantCeiling is the largest variants a capability allows: the smaller of its ceiling and 4.
func VariantCeiling(d *framework.Response) int64 { return min(Ceiling(d), 4) }

// ListSettings returns, sorted, the config properties shaped as a list setting that runs once per
// value (Submit rule 4 names no key; the reference's is languages): an array of strings from an
// enum of two or more values, that may hold two or more.
func ListSettings(props map[string]any) []string {
	var out []string
	for name, v := range props {
		p, _ := v.(map[string]any)
		items, _ := p["items"].(map[string]any)
		enum, _ := items["enum"].([]any)
		if p["type"] != "array" || items["type"] != "string" || len(enum) < 2 {
			continue
		}
		if mx, ok := framework.AsInt(p["maxItems"]); ok && mx < 2 {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// EnumOf is the string enum of a list setting's items.
func EnumOf(props map[string]any, name string) []string {
	items, _ := props[name].(map[string]any)["items"].(map[string]any)
	enum, _ := items["enum"].([]any)
	var out []string
	for _, e := range enum {
		if str, ok := e.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

// FileCap is an available capability whose example_config names an upload as a plain id array.
type FileCap struct {
	Detail *framework.Response // the detail
	Row    map[string]any      // the list row
	ID     string
	Field  string // the config field holding the id array
	Kind   string // image, video or audio, read from the field name ("" when it names none)
}

// fileKind guesses the kind of file a config field takes from its name.
func fileKind(field string) string {
	for _, k := range []string{"audio", "video", "image"} {
		if strings.Contains(field, k) {
			return k
		}
	}
	return ""
}

// PlainFileCaps reads the details of the available capabilities and returns those whose
// example_config holds a plain array of upload ids, in catalogue order.
func PlainFileCaps(ctx context.Context, c *framework.Client) []FileCap {
	GinkgoHelper()
	var out []FileCap
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		id, _ := row["capability_id"].(string)
		d := Detail(ctx, c, id)
		keys := make([]string, 0)
		ex := answer.ObjectAt(d, "example_config")
		for k := range ex {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			arr, ok := ex[k].([]any)
			if !ok || len(arr) == 0 {
				continue
			}
			if str, ok := arr[0].(string); ok && IsUploadID(str) {
				out = append(out, FileCap{Detail: d, Row: row, ID: id, Field: k, Kind: fileKind(k)})
				break
			}
		}
	}
	return out
}

// Deprecated is a property schema marked deprecated: true, at its path, with whether its parent
// lists it in required.
type Deprecated struct {
	Path     string
	Schema   map[string]any
	Required bool
}

// DeprecatedProps returns every property schema marked deprecated: true in schema, at any depth.
func DeprecatedProps(schema map[string]any, path string) []Deprecated {
	var out []Deprecated
	var req []any
	req, _ = schema["required"].([]any)
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if ps["deprecated"] == true {
				out = append(out, Deprecated{Path: path + "." + name, Schema: ps, Required: slices.Contains(req, any(name))})
			}
			out = append(out, DeprecatedProps(ps, path+"."+name)...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		out = append(out, DeprecatedProps(items, path+"[]")...)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if list, ok := schema[k].([]any); ok {
			for i, e := range list {
				if m, ok := e.(map[string]any); ok {
					out = append(out, DeprecatedProps(m, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
				}
			}
		}
	}
	return out
}

// SlugPattern is the form of an unprefixed slug id (a preset's or a template's).
var SlugPattern = `^[a-z0-9][a-z0-9_-]*$`

// snakeCase is the form of a tag.
const snakeCase = `^[a-z0-9]+(_[a-z0-9]+)*$`

// CheckTags checks a row's tags: an array of snake_case strings.
func CheckTags(r *framework.Response, row map[string]any, what string) {
	GinkgoHelper()
	for _, t := range answer.Strings(r, row, "tags", what) {
		Expect(t).To(MatchRegexp(snakeCase), what+": tags are snake_case"+r.Describe())
	}
}

// CheckTemplate checks a template object of a GET /presets/{id}/templates answer.
func CheckTemplate(r *framework.Response, t map[string]any) {
	GinkgoHelper()
	Expect(answer.String(r, t, "template_id", "template")).To(MatchRegexp(judge.IDPattern("captpl_")), r.Describe())
	answer.String(r, t, "name", "template")
	answer.NullableString(r, t, "description", "template")
	answer.NullableString(r, t, "category", "template")
	Expect(answer.String(r, t, "preview_url", "template")).NotTo(BeEmpty(), r.Describe())
	Expect(answer.String(r, t, "preview_kind", "template")).To(answer.OneOf("video", "image"), r.Describe())
}

// RowOf is the row of rows whose field key is id, nil when none is.
func RowOf(rows []map[string]any, key, id string) map[string]any {
	for _, r := range rows {
		if r[key] == id {
			return r
		}
	}
	return nil
}

// InListOrder sorts capability ids as the interface orders the capability list: category
// (avatar, video, image, preset, tool), then capability_id.
func InListOrder(caps map[string]string) []string {
	out := slices.Collect(maps.Keys(caps))
	slices.SortFunc(out, func(a, b string) int {
		if ra, rb := slices.Index(Categories, caps[a]), slices.Index(Categories, caps[b]); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return out
}

// PrefixedID is the form of the service's prefixed ids (Id prefixes: "prefix, then 32 lowercase hex
// characters"): a slug of that form looks like an id but is not the unprefixed slug the text names.
var PrefixedID = `^[a-z]+_[0-9a-f]{32}$`

// Clone deep-copies a JSON object.
func Clone(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// View reads a capability answer (GET /capabilities/{id}) wherever its layout puts the
// capability's fields, config_schema and example_config ("the body field layout of the capability
// answer: not shown"), and returns it as one object in the text's names.
func View(r *framework.Response) *framework.Response {
	GinkgoHelper()
	d, err := openshape.DetailOf(r.Doc())
	Expect(err).NotTo(HaveOccurred(), "the capability answer carries capability_id and its config schema "+
		"(GET /capabilities/{id}: the capability with its config schema and the smallest valid config)"+r.Describe())
	return r.View(d.View(r.Doc()))
}

// NamesUpload reports whether a config (or a value in one) names an upload, anywhere in it: such
// a config can only be priced once the named file exists in the caller's workspace.
func NamesUpload(v any) bool {
	named := false
	MapUploads(v, func(id string) string {
		named = true
		return id
	})
	return named
}

// IsUploadID reports whether s is an upload id as a config names one: an asset id of the text's
// form, ^ast_[0-9a-f]{32}$ (ID-004). Any other string is a plain value, "ast_" at its start or not:
// the example always validates, and a malformed id in config is refused, never taken for one.
func IsUploadID(s string) bool { return judge.IsID("ast_", s) }

// MapUploads returns v with every upload id in it (IsUploadID: a plain id, in an array or a file
// object's assetId alike) replaced by f's answer. Objects and arrays are copied as it walks them,
// so v is left as it was; any other value is returned as it is.
func MapUploads(v any, f func(id string) string) any {
	switch x := v.(type) {
	case string:
		if IsUploadID(x) {
			return f(x)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = MapUploads(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MapUploads(e, f)
		}
		return out
	}
	return v
}
