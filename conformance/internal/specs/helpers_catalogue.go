package specs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Catalogue discovery: capabilities, models, actors, voices, presets and templates the specs run
// against.

var categoryOrder = []string{"avatar", "video", "image", "preset", "tool"}

// catalogue walks GET /capabilities with limit 50 and returns every row.
func catalogue(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	return c.Memo("catalogue", func() any {
		rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
		return rows
	}).([]map[string]any)
}

// detail reads GET /capabilities/{id} and requires 200; without control the answer is read once
// per run and key (Client.Memo), since the catalogue does not change during a run.
func detail(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	return c.Memo("detail "+id, func() any {
		return capabilityView(c.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK))
	}).(*framework.Response).Copy()
}

// pricedExample returns the detail of the first available capability whose example_config (naming
// no upload) the target prices with 200; an example it refuses is CAP-023's failure, reported by
// the spec pricing every example, not the calling spec's. It skips the spec when there is none.
func pricedExample(ctx context.Context, s *framework.Spec, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, d := range availableDetails(ctx, c, 25) {
		config := answer.ObjectAt(d, "example_config")
		if namesUpload(config) {
			continue
		}
		if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": config}).Status == http.StatusOK {
			return d
		}
	}
	s.Lacks("no available capability's example_config (without an upload) is priced with 200")
	return nil
}

// notLiveConfig returns the config to send for capability id, which will not run (coming_soon,
// not offered): its detail's example_config when the detail answers one (valid: "the example
// always validates"), and valid true; else {} and valid false. The submit check order puts config
// validity before capability availability (Errors), and estimates check the config as on submit,
// so only a config known to be valid decides availability: with {} a 400 invalid_config may come
// first.
func notLiveConfig(ctx context.Context, c *framework.Client, id string) (config map[string]any, valid bool) {
	GinkgoHelper()
	r := c.Get(ctx, "/capabilities/"+id)
	if r.Status == http.StatusOK {
		if ex, ok := capabilityView(r).Field("example_config").(map[string]any); ok && !namesUpload(ex) {
			return ex, true
		}
	}
	return map[string]any{}, false
}

// expectNotLive checks r, the refusal of an estimate or submit naming capability id of status st
// with config (valid: notLiveConfig): 404 capability_unavailable with capability_status st, or,
// for a config not known valid, 400 invalid_config (config validity is checked first).
func expectNotLive(r *framework.Response, st string, valid bool) {
	GinkgoHelper()
	if !valid && r.Status == http.StatusBadRequest {
		r.ExpectError(http.StatusBadRequest, "invalid_config")
		return
	}
	r.ExpectError(http.StatusNotFound, "capability_unavailable")
	Expect(r.String("error.capability_status")).To(Equal(st), r.Describe())
}

// withStatus returns the first row with the status, or nil.
func withStatus(rows []map[string]any, status string) map[string]any {
	for _, r := range rows {
		if r["status"] == status {
			return r
		}
	}
	return nil
}

// availableDetails reads the detail of up to n available capabilities, in catalogue order, skipping
// the spec when the target lists none.
func availableDetails(ctx context.Context, c *framework.Client, n int) []*framework.Response {
	GinkgoHelper()
	var out []*framework.Response
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		id, _ := row["capability_id"].(string)
		out = append(out, detail(ctx, c, id))
		if len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		c.Lacks("the target lists no available capability")
	}
	return out
}

// checkCapabilityRow checks the fields of a list row or a detail answer the text lists
// (capability_id, output_kind, status, category; required_plan with requires_plan). "Other fields
// of the capability list row and detail: not shown": the reference's name, description,
// max_variants and pricing_unit are checked only when sent.
func checkCapabilityRow(r *framework.Response, row map[string]any, what string) {
	GinkgoHelper()
	answer.String(r, row, "capability_id", what)
	if _, has := row["name"]; has {
		answer.String(r, row, "name", what)
	}
	if _, has := row["description"]; has {
		answer.NullableString(r, row, "description", what)
	}
	Expect(answer.String(r, row, "category", what)).To(answer.OneOf(categoryOrder...), what+r.Describe())
	Expect(answer.String(r, row, "output_kind", what)).To(answer.OneOf("image", "video", "audio", "text"), what+r.Describe())
	status := answer.String(r, row, "status", what)
	Expect(status).To(answer.OneOf("available", "requires_plan", "coming_soon", "retired", "unknown"), what+r.Describe())
	if status == "requires_plan" {
		Expect(answer.String(r, row, "required_plan", what)).NotTo(BeEmpty(), what+r.Describe())
	}
	answer.NoLinks(row, what)
}

// findDetail reads the detail of the first available capability whose list row pred accepts,
// skipping the spec when there is none.
func findDetail(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	return c.Memo("find "+what, func() any { return findDetailOf(ctx, c, what, pred) }).(*framework.Response).Copy()
}

func findDetailOf(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		return detail(ctx, c, row["capability_id"].(string))
	}
	c.Lacks("the target lists no available %s", what)
	return nil
}

// ceilingOf is a capability's ceiling of takes from its detail: the maximum of its config_schema's
// count ("count above the ceiling is refused"); 1 when the schema has no count (it makes one
// result); 4, the most variants a submit takes, when count has no maximum.
func ceilingOf(d *framework.Response) int64 {
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

// cheapest reads the details of the available capabilities whose list row pred accepts and
// returns the one whose cheapConfig holds the least (configs naming uploads are passed over),
// skipping the spec when there is none.
// A detail predicate (at most one) further picks among the details.
func cheapest(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool, dpred ...func(d *framework.Response) bool) *framework.Response {
	GinkgoHelper()
	return c.Memo("cheapest "+what, func() any { return cheapestOf(ctx, c, what, pred, dpred...) }).(*framework.Response).Copy()
}

func cheapestOf(ctx context.Context, c *framework.Client, what string, pred func(row map[string]any) bool, dpred ...func(d *framework.Response) bool) *framework.Response {
	GinkgoHelper()
	var best *framework.Response
	var bestNeed int64
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || !pred(row) {
			continue
		}
		d := detail(ctx, c, row["capability_id"].(string))
		if len(dpred) > 0 && !dpred[0](d) {
			continue
		}
		cfg := cheapConfig(d)
		if namesUpload(cfg) {
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

// imageModel is the cheapest available image model that makes several takes in one generation.
func imageModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return cheapest(ctx, c, "image model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "image" && row["output_kind"] == "image"
	}, severalTakes)
}

// videoModel is the cheapest available video model that fans variants out.
func videoModel(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return cheapest(ctx, c, "video model with max_variants above 1", func(row map[string]any) bool {
		return row["category"] == "video" && row["output_kind"] == "video"
	}, severalTakes)
}

// severalTakes reports whether a capability's ceiling allows two or more takes.
func severalTakes(d *framework.Response) bool {
	GinkgoHelper()
	return ceilingOf(d) > 1
}

// textCapability is an available capability whose output is text.
func textCapability(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	return findDetail(ctx, c, "text capability", func(row map[string]any) bool { return row["output_kind"] == "text" })
}

// referenceModel is an image model whose config takes reference_images ({assetId, alias}
// objects), with its cheapest config and hold. It skips the spec when the image model has no such
// field.
func referenceModel(ctx context.Context, c *framework.Client) (string, map[string]any, int64) {
	GinkgoHelper()
	d := imageModel(ctx, c)
	if _, ok := answer.SchemaProps(d)["reference_images"]; !ok {
		c.Lacks("the image model has no reference_images field")
	}
	cfg := cheapConfig(d)
	_, need := estimateOf(ctx, c, d.String("capability_id"), cfg, nil)
	return d.String("capability_id"), cfg, need
}

// cheapConfig is the capability's example_config with a duration set to its schema minimum (the
// cheapest take of a time-priced model), and a fresh marker in its free text (its prompt or
// script, textKeyOf) so that two specs never send identical requests.
func cheapConfig(d *framework.Response) map[string]any {
	GinkgoHelper()
	cfg := clone(answer.ObjectAt(d, "example_config"))
	props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
	if p, ok := props["duration"].(map[string]any); ok && p["type"] == "integer" {
		if m, ok := framework.AsInt(p["minimum"]); ok {
			cfg["duration"] = m
		}
	}
	if k := textKeyIn(d); k != "" {
		if v, ok := cfg[k].(string); ok {
			marked := v + " Take " + framework.RandomHex(6) + "."
			if mx, bounded := framework.AsInt(props[k].(map[string]any)["maxLength"]); !bounded || int64(len(marked)) <= mx {
				cfg[k] = marked
			}
		}
	}
	return cfg
}

// firstVoice returns the id of the first listed voice.
func firstVoice(ctx context.Context, c *framework.Client) string {
	GinkgoHelper()
	p := paging.Get(ctx, c, "/voices", "voices")
	if len(p.Rows) == 0 {
		c.Lacks("the target lists no voice")
	}
	return p.Rows[0]["voice_id"].(string)
}

// overCapConfig finds an available video model config whose hold is above 600 credits (the
// default per-generation cap): one integer setting (its duration, in the reference; the text
// names no key) at its schema maximum, count aside. It skips the spec when none is.
func overCapConfig(ctx context.Context, c *framework.Client) (string, map[string]any, int64) {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || row["category"] != "video" {
			continue
		}
		d := detail(ctx, c, row["capability_id"].(string))
		props := answer.SchemaProps(d)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p, _ := props[name].(map[string]any)
			hi, ok := framework.AsInt(p["maximum"])
			if p["type"] != "integer" || !ok || name == "count" {
				continue
			}
			cfg := cheapConfig(d)
			cfg[name] = hi
			if namesUpload(cfg) {
				break
			}
			if r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}); r.Status == http.StatusOK && r.Int("max_credits_needed") > 600 {
				return d.String("capability_id"), cfg, r.Int("max_credits_needed")
			}
		}
	}
	c.Lacks("no available video model's config (an integer setting at its maximum) holds more than 600 credits")
	return "", nil, 0
}

// variantCeiling is the largest variants a capability allows: the smaller of its ceiling and 4.
func variantCeiling(d *framework.Response) int64 { return min(ceilingOf(d), 4) }

// fanOut is a capability with a list setting, discovered by its schema's shape.
type fanOut struct {
	d      *framework.Response
	id     string
	field  string   // the list setting: an array of enum strings
	values []string // its enum values
	base   map[string]any
}

// fanOutCapability finds an available capability whose config schema has an array property of
// enum strings (a list setting such as languages), and returns its example_config with every
// upload it names replaced by a finalized sample file of the kind the field's name says (video,
// image or audio). It skips the spec when there is none.
func fanOutCapability(ctx context.Context, s *framework.Spec, c *framework.Client) fanOut {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		d := detail(ctx, c, row["capability_id"].(string))
		props := answer.SchemaProps(d)
		for _, name := range listSettings(props) {
			fo := fanOut{d: d, id: d.String("capability_id"), field: name, values: enumOf(props, name)}
			base, ok := withSampleUploads(ctx, s, c, props, answer.ObjectAt(d, "example_config"))
			if !ok {
				continue
			}
			fo.base = base
			return fo
		}
	}
	s.Lacks("the target lists no available capability with a list setting (an array of enum strings) whose uploads the suite can supply")
	return fanOut{}
}

// listSettings returns, sorted, the config properties shaped as a list setting that runs once per
// value (Submit rule 4 names no key; the reference's is languages): an array of strings from an
// enum of two or more values, that may hold two or more.
func listSettings(props map[string]any) []string {
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

// enumOf is the string enum of a list setting's items.
func enumOf(props map[string]any, name string) []string {
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

// withValues is the fan-out capability's config with the list setting set to values.
func (fo fanOut) withValues(values ...string) map[string]any {
	cfg := clone(fo.base)
	list := make([]any, len(values))
	for i, v := range values {
		list[i] = v
	}
	cfg[fo.field] = list
	return cfg
}

// fileCap is an available capability whose example_config names an upload as a plain id array.
type fileCap struct {
	d     *framework.Response // the detail
	row   map[string]any      // the list row
	id    string
	field string // the config field holding the id array
	kind  string // image, video or audio, read from the field name ("" when it names none)
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

// plainFileCaps reads the details of the available capabilities and returns those whose
// example_config holds a plain array of upload ids, in catalogue order.
func plainFileCaps(ctx context.Context, c *framework.Client) []fileCap {
	GinkgoHelper()
	var out []fileCap
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		id, _ := row["capability_id"].(string)
		d := detail(ctx, c, id)
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
			if str, ok := arr[0].(string); ok && strings.HasPrefix(str, "ast_") {
				out = append(out, fileCap{d: d, row: row, id: id, field: k, kind: fileKind(k)})
				break
			}
		}
	}
	return out
}

// deprecatedProps returns the path of every property schema marked deprecated: true in schema,
// with the schema and whether its parent lists it in required.
type deprecatedProp struct {
	path     string
	schema   map[string]any
	required bool
}

func deprecatedProps(schema map[string]any, path string) []deprecatedProp {
	var out []deprecatedProp
	var req []any
	req, _ = schema["required"].([]any)
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if ps["deprecated"] == true {
				out = append(out, deprecatedProp{path: path + "." + name, schema: ps, required: slices.Contains(req, any(name))})
			}
			out = append(out, deprecatedProps(ps, path+"."+name)...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		out = append(out, deprecatedProps(items, path+"[]")...)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if list, ok := schema[k].([]any); ok {
			for i, e := range list {
				if m, ok := e.(map[string]any); ok {
					out = append(out, deprecatedProps(m, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
				}
			}
		}
	}
	return out
}

var slugPattern = `^[a-z0-9][a-z0-9_-]*$`

const snakeCase = `^[a-z0-9]+(_[a-z0-9]+)*$`

func checkTags(r *framework.Response, row map[string]any, what string) {
	GinkgoHelper()
	for _, t := range answer.Strings(r, row, "tags", what) {
		Expect(t).To(MatchRegexp(snakeCase), what+": tags are snake_case"+r.Describe())
	}
}

func checkTemplate(r *framework.Response, t map[string]any) {
	GinkgoHelper()
	Expect(answer.String(r, t, "template_id", "template")).To(MatchRegexp(judge.IDPattern("captpl_")), r.Describe())
	answer.String(r, t, "name", "template")
	answer.NullableString(r, t, "description", "template")
	answer.NullableString(r, t, "category", "template")
	Expect(answer.String(r, t, "preview_url", "template")).NotTo(BeEmpty(), r.Describe())
	Expect(answer.String(r, t, "preview_kind", "template")).To(answer.OneOf("video", "image"), r.Describe())
}

// presetRows walks GET /presets.
func presetRows(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/presets", "presets", 50, 20)
	return rows
}

// templatePreset picks an available preset that requires a template and has at least n live
// templates, and returns its detail and its template ids; it skips the spec when none has.
func templatePreset(ctx context.Context, c *framework.Client, n int) (*framework.Response, []string) {
	GinkgoHelper()
	for _, row := range presetRows(ctx, c) {
		if row["status"] != "available" || row["requires_template"] != true {
			continue
		}
		if total, _ := framework.AsInt(row["templates_total"]); total < int64(n) {
			continue
		}
		id := row["capability_id"].(string)
		tpls := templateIDs(c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK))
		if len(tpls) >= n {
			return detail(ctx, c, id), tpls
		}
	}
	c.Lacks("the target lists no available preset requiring a template with %d live templates", n)
	return nil, nil
}

// talkingCast picks an actor with a default voice, an actor without one (nil when none is listed)
// and a second voice different from the first actor's default.
func talkingCast(ctx context.Context, c *framework.Client) (actor, voice string, noVoiceActor *string, otherVoice string) {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 10)
	for _, a := range rows {
		v, _ := a["default_voice_id"].(string)
		if v != "" && actor == "" {
			actor, voice = a["actor_id"].(string), v
		}
		if a["default_voice_id"] == nil && noVoiceActor == nil {
			id := a["actor_id"].(string)
			noVoiceActor = &id
		}
	}
	if actor == "" {
		c.Lacks("the target lists no actor with a default voice")
	}
	for _, v := range paging.Get(ctx, c, "/voices", "voices").Rows {
		if id := v["voice_id"].(string); id != voice {
			otherVoice = id
			break
		}
	}
	if otherVoice == "" {
		c.Lacks("the target lists only one voice")
	}
	return actor, voice, noVoiceActor, otherVoice
}

// voiceOf is voice when c's workspace lists it, else the first voice c lists that is not cloned
// (the caller's voice may be a cloned voice of the caller's own workspace).
func voiceOf(ctx context.Context, c *framework.Client, voice string) string {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 10)
	if rowOf(rows, "voice_id", voice) != nil {
		return voice
	}
	for _, r := range rows {
		if r["is_cloned"] == false {
			return r["voice_id"].(string)
		}
	}
	c.Lacks("the other workspace lists no voice that is not its own cloned voice")
	return ""
}

// scriptOnlyActor finds the script-only actor black-box: an available avatar capability other
// than actor_ultra whose config schema has a script (its free text, textKeyOf) and no voice
// field, and which estimates with its example_config speaking a script of its own. It skips the
// spec when the target has none.
func scriptOnlyActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := detail(ctx, c, row["capability_id"].(string))
		key := textKeyIn(d)
		if key == "" || hasVoiceField(answer.SchemaProps(d)) {
			continue
		}
		cfg := actorScript(d, scriptOf(150))
		if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}).Status == http.StatusOK {
			return d
		}
	}
	c.Lacks("the target lists no script-only actor (an available avatar capability other than actor_ultra with a script and no voice field)")
	return nil
}

// otherAudioActor finds the other audio-driven actor: an available avatar capability other than
// actor_ultra whose config schema takes a voice (voiceId or voice_audio). It skips the spec when
// the target has none.
func otherAudioActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := detail(ctx, c, row["capability_id"].(string))
		if hasVoiceField(answer.SchemaProps(d)) {
			return d
		}
	}
	c.Lacks("the target lists no audio-driven actor besides actor_ultra")
	return nil
}

// hasVoiceField reports whether a config schema takes a voice (a voice id or a recording).
func hasVoiceField(props map[string]any) bool {
	_, voiceID := props["voiceId"]
	_, audio := props["voice_audio"]
	return voiceID || audio
}

// actorScript is the script-only actor d's example_config speaking script under its script key.
func actorScript(d *framework.Response, script string) map[string]any {
	GinkgoHelper()
	return withChanges(answer.ObjectAt(d, "example_config"), map[string]any{textKeyIn(d): script})
}

// maxLength is the maxLength of a string property (fallback when it has none).
func maxLength(props map[string]any, name string, fallback int) int {
	p, _ := props[name].(map[string]any)
	if n, ok := framework.AsInt(p["maxLength"]); ok {
		return int(n)
	}
	return fallback
}

// scriptOf returns a plain script of exactly n characters (whole words, then padding), unique to
// the call.
func scriptOf(n int) string {
	words := []string{"fresh", "coffee", "every", "morning", "keeps", "you", "going", "through", "the", "long", "day"}
	var b strings.Builder
	b.WriteString("Take " + framework.RandomHex(6))
	for i := 0; b.Len() < n; i++ {
		b.WriteString(" " + words[i%len(words)])
	}
	out := []byte(b.String()[:n])
	if out[n-1] == ' ' {
		out[n-1] = '.'
	}
	return string(out)
}

// hookDone fails the spec on a refused catalogue hook; when the control API lacks the operation
// (a hook answering 404 for an id the spec read from the API itself), the target lacks the state
// the hook sets up (s.Lacks: the reference mock offers every hook).
func hookDone(s *framework.Spec, err error) {
	GinkgoHelper()
	var he *framework.HookError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		s.Lacks("the control API does not offer %s (spec/control.yaml, tag catalogue)", he.Op)
	}
	Expect(err).NotTo(HaveOccurred())
}

// aliasSetup is a deprecated config name installed through control on a capability whose optional
// count changes the price.
type aliasSetup struct {
	capID, alias, field, stopsIn string
	// config is the example_config without the field; base its estimate.
	config map[string]any
	base   *framework.Response
	// value is a value of the field that prices differently from base.
	value any
}

// with returns the config with name set to the setup's value.
func (a aliasSetup) with(names ...string) map[string]any {
	cfg := clone(a.config)
	for _, n := range names {
		cfg[n] = a.value
	}
	return cfg
}

// installAlias installs, through control, a new old name for the optional count of an available
// capability whose price count changes (removed when the spec ends); stopsIn "" lets the service
// pick the version that stops accepting it. A target with no such capability lacks the state.
func installAlias(ctx context.Context, s *framework.Spec, c *framework.Client, stopsIn string) aliasSetup {
	GinkgoHelper()
	for _, d := range countCaps(ctx, c) {
		id := d.String("capability_id")
		req, _ := answer.ObjectAt(d, "config_schema")["required"].([]any)
		if slices.Contains(req, any("count")) {
			continue
		}
		cfg := clone(answer.ObjectAt(d, "example_config"))
		delete(cfg, "count")
		base := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg})
		if base.Status != http.StatusOK {
			continue
		}
		two := clone(cfg)
		two["count"] = 2
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": two})
		if r.Status != http.StatusOK || r.Field("credits") == base.Field("credits") {
			continue
		}
		a := aliasSetup{capID: id, alias: "old_count_" + framework.RandomHex(6), field: "count", config: cfg, base: base, value: 2}
		got, err := s.Control().SetAlias(ctx, id, a.alias, a.field, stopsIn)
		hookDone(s, err)
		a.stopsIn, _ = got["stops_in"].(string)
		DeferCleanup(func(ctx SpecContext) { _ = s.Control().RemoveAlias(ctx, id, a.alias) })
		return a
	}
	s.Lacks("no available capability has an optional count that changes its price, to give a deprecated old name")
	return aliasSetup{}
}

// rowOf is the row of rows whose field key is id, nil when none is.
func rowOf(rows []map[string]any, key, id string) map[string]any {
	for _, r := range rows {
		if r[key] == id {
			return r
		}
	}
	return nil
}

// businessClient is a read+generate client of a workspace on the business plan: one of the spec's
// own through control, else the profile's business_key (skipping, naming it, when undeclared).
// The spec never spends on it.
func businessClient(ctx context.Context, s *framework.Spec) *framework.Client {
	GinkgoHelper()
	if !s.HasControl() {
		return s.RoleKey(framework.BusinessKey)
	}
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: "business"})
	c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
	return c
}

// templateIDs returns the template ids of a GET /presets/{id}/templates answer, in its order.
func templateIDs(t *framework.Response) []string {
	GinkgoHelper()
	var out []string
	for i, v := range t.Array("templates") {
		out = append(out, answer.String(t, answer.AsObject(t, v, fmt.Sprintf("templates[%d]", i)), "template_id", "template"))
	}
	return out
}

// presetSubmit readies a submit of an available preset that requires a template, with real
// uploads, in a workspace of the spec's own when the run has control: it answers the spender, the
// preset's id, its live template ids, a config naming the first template, and the max_credits
// that config needs.
func presetSubmit(ctx context.Context, s *framework.Spec) (sp spender, id string, tpls []string, cfg map[string]any, need int64) {
	GinkgoHelper()
	sp = newSpender(ctx, s)
	d, tpls := templatePreset(ctx, sp.c, 1)
	id = d.String("capability_id")
	cfg = readyConfig(ctx, s, sp.c, answer.ObjectAt(d, "example_config"))
	cfg["template_id"] = tpls[0]
	_, need = estimateOf(ctx, sp.c, id, cfg, nil)
	return sp, id, tpls, cfg, need
}

// longCatalogue is a workspace of the spec's own whose capability and preset lists hold more than
// 50 rows (lists of fewer than 25 make "default 25" and "clamped to 50" vacuous): copies, through
// control (POST /workspaces/{id}/capabilities), of listed presets and of one listed capability of
// each other category, under fresh ids that sort among the existing ones. It answers a read
// client of that workspace, every capability the suite expects its list to hold (id to category:
// the rows listed before, and the copies) and every preset id it expects the preset list to hold.
func longCatalogue(ctx context.Context, s *framework.Spec) (c *framework.Client, caps map[string]string, presets []string) {
	GinkgoHelper()
	if !s.HasControl() {
		// Without control nothing is copied: the target's own lists, read as they are (the
		// spec skips unless its list is longer than 50, moreThan50).
		c = s.Client()
		rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
		caps = map[string]string{}
		for _, row := range rows {
			id, _ := row["capability_id"].(string)
			caps[id], _ = row["category"].(string)
		}
		return c, caps, paging.IDs(presetRows(ctx, c), "capability_id")
	}
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
	rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
	presets = paging.IDs(presetRows(ctx, c), "capability_id")
	if len(presets) == 0 {
		s.Lacks("the target lists no preset to copy")
	}
	caps = map[string]string{}
	sources := map[string]string{} // category -> the first listed capability of it, presets aside
	for _, row := range rows {
		id, _ := row["capability_id"].(string)
		cat, _ := row["category"].(string)
		caps[id] = cat
		if _, has := sources[cat]; !has && cat != "preset" {
			sources[cat] = id
		}
	}
	copyAs := func(src, id, cat string) {
		hookDone(s, s.Control().CopyCapability(ctx, ws.ID, src, id))
		caps[id] = cat
	}
	for i, n := 0, len(presets); n+i < 56; i++ {
		id := "preset_" + framework.RandomHex(10)
		copyAs(presets[i%n], id, "preset")
		presets = append(presets, id)
	}
	for cat, src := range sources {
		copyAs(src, framework.RandomHex(10), cat)
	}
	return c, caps, presets
}

// moreThan50 holds the spec to a list of more than 50 rows (n of them, what they are): with control
// the spec made it so (fewer fails), without control it pages the target's own list as it is and
// skips when that holds 50 or fewer, which only control or the operator's catalogue lengthens (a
// reason of the control tier).
func moreThan50(s *framework.Spec, n int, what string) {
	GinkgoHelper()
	if s.HasControl() || n > 50 {
		Expect(n).To(BeNumerically(">", 50), "the spec made a list of more than 50 "+what)
		return
	}
	// The reason names control, the tier that makes such a list on any target: the report groups
	// the spec's rules under it.
	framework.SkipFor(framework.Unsupported(framework.Control, fmt.Sprintf("needs a list of more than 50 %s: the target lists %d to this key, and only the control API (or the operator's catalogue) makes one that long", what, n)))
}

// inListOrder sorts capability ids as the interface orders the capability list: category
// (avatar, video, image, preset, tool), then capability_id.
func inListOrder(caps map[string]string) []string {
	out := slices.Collect(maps.Keys(caps))
	slices.SortFunc(out, func(a, b string) int {
		if ra, rb := slices.Index(categoryOrder, caps[a]), slices.Index(categoryOrder, caps[b]); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return out
}

// prefixedID is the form of the service's prefixed ids (Id prefixes: "prefix, then 32 lowercase hex
// characters"): a slug of that form looks like an id but is not the unprefixed slug the text names.
var prefixedID = `^[a-z]+_[0-9a-f]{32}$`

// priceWords are the words that name a price or a charge in a schema key; priceWordsX adds those
// that name one only in an x- extension keyword (a property named "amount" or "rate" is ordinary).
var (
	priceWords  = []string{"price", "prices", "priced", "pricing", "credit", "credits", "cost", "costs", "fee", "fees", "billing", "billed", "charge", "charges", "charged"}
	priceWordsX = []string{"amount", "rate", "usd", "cents", "spend", "tariff"}
)

// amountText is a string that states an amount: a number, with or without a currency sign or a
// credits or currency unit ("12", "$0.50", "3 credits", "0.2 USD").
var amountText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*[$€£]?\s*[0-9]+([.,][0-9]+)?\s*(credits?|usd|eur|gbp|cents?)?\s*$`)
})

// pricedText is a string that states an amount of credits or money somewhere in it ("8 credits
// per image", "from $0.40"): a price whatever the key that holds it.
var pricedText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[$€£]\s*[0-9]|\b[0-9]+([.,][0-9]+)?\s*(credits?|usd|eur|gbp|cents?)\b`)
})

// priceKeys walks a config schema and returns the path of every key (a keyword, an x- extension
// keyword or a property name, at any depth) that carries a price (Capability: the schema "carries
// no price"): its words name a price and it holds an amount. A word alone is not a price: a
// property charge_level with an enum of strings, or cost_profile, a quality against speed knob,
// is an ordinary setting. An amount is a number or a string stating one; under a keyword, any
// amount inside its value (billing: {cost: 7}); for a property, a number its schema fixes (const,
// default, enum or examples), for the property's own schema is the shape of an input, not a price.
// A keyword whose value is text stating an amount of credits or money carries a price whatever its
// name. Values that are data or prose (enum, const, default, examples, description, title) are not
// walked.
func priceKeys(v any, path string) []string {
	return priceKeysIn(v, path, false)
}

// priceKeysIn is priceKeys for v, a map whose keys are property names when names is set (the
// value of properties, patternProperties, $defs or definitions), else keywords.
func priceKeysIn(v any, path string, names bool) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			p := path + "." + k
			words := keyWords(k)
			hit := slices.ContainsFunc(words, func(w string) bool { return slices.Contains(priceWords, w) })
			if !names && strings.HasPrefix(strings.ToLower(k), "x-") {
				hit = hit || slices.ContainsFunc(words, func(w string) bool { return slices.Contains(priceWordsX, w) })
			}
			text, _ := sub.(string)
			data := slices.Contains([]string{"enum", "const", "default", "examples", "example", "description", "title"}, k)
			if hit && (names && fixesAmount(sub) || !names && holdsAmount(sub)) || !names && !data && pricedText().MatchString(text) {
				out = append(out, p)
			}
			if names {
				out = append(out, priceKeysIn(sub, p, false)...)
				continue
			}
			switch {
			case data:
				continue
			case slices.Contains([]string{"properties", "patternProperties", "$defs", "definitions"}, k):
				out = append(out, priceKeysIn(sub, p, true)...)
				continue
			}
			out = append(out, priceKeysIn(sub, p, false)...)
		}
	case []any:
		for i, sub := range t {
			out = append(out, priceKeysIn(sub, fmt.Sprintf("%s[%d]", path, i), false)...)
		}
	}
	sort.Strings(out)
	return out
}

// holdsAmount reports whether v is an amount or holds one at any depth.
func holdsAmount(v any) bool {
	switch t := v.(type) {
	case json.Number, float64, int, int64:
		return true
	case string:
		return amountText().MatchString(t)
	case map[string]any:
		for _, sub := range t {
			if holdsAmount(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range t {
			if holdsAmount(sub) {
				return true
			}
		}
	}
	return false
}

// fixesAmount reports whether v, a property's schema, fixes an amount: its const, default, enum or
// examples hold one.
func fixesAmount(v any) bool {
	m, _ := v.(map[string]any)
	for _, k := range []string{"const", "default", "enum", "examples", "example"} {
		if sub, ok := m[k]; ok && holdsAmount(sub) {
			return true
		}
	}
	return false
}

// keyWords splits a key into lowercase words at non-letters, digits and camelCase humps.
func keyWords(k string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range k {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		case unicode.IsLetter(r):
			cur = append(cur, r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}

// bigHold finds a config of an available capability (no upload) whose padded hold is as large as
// the default per-generation limit allows (at most 600, at least 100), so that a spec can spend
// the default daily 2000 credits in a few jobs: each integer config property with a maximum is
// set to its maximum, or scaled down to fit. It skips the spec when no config holds 100 or more.
func bigHold(ctx context.Context, s *framework.Spec, c *framework.Client) (capID string, cfg map[string]any, hold int64) {
	GinkgoHelper()
	for _, d := range availableDetails(ctx, c, 40) {
		id := d.String("capability_id")
		ex := cheapConfig(d)
		if namesUpload(ex) || strings.HasPrefix(id, "preset_") {
			continue
		}
		props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			mx, ok := framework.AsInt(pm["maximum"])
			if pm["type"] != "integer" || !ok || mx < 2 || name == "count" {
				continue
			}
			try := clone(ex)
			try[name] = mx
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": try})
			if r.Status != http.StatusOK {
				continue
			}
			h := r.Int("max_credits_needed")
			if h > 600 {
				v := mx * 540 / h
				if lo, ok := framework.AsInt(pm["minimum"]); ok && v < lo {
					continue
				}
				try[name] = v
				if r = c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": try}); r.Status != http.StatusOK {
					continue
				}
				h = r.Int("max_credits_needed")
			}
			if h <= 600 && h > hold {
				capID, cfg, hold = id, try, h
			}
		}
	}
	if hold < 100 {
		s.Lacks("no available capability has a config (an integer setting at its maximum) holding 100 to 600 credits, to spend the default daily limit in a few jobs")
	}
	return capID, cfg, hold
}
