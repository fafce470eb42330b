package specs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// Catalogue discovery: capabilities, models, actors, voices, presets and templates the specs run
// against.

// referenceModel is an image model whose config takes reference_images ({assetId, alias}
// objects), with its cheapest config and hold. It skips the spec when the image model has no such
// field.
func referenceModel(ctx context.Context, c *framework.Client) (string, map[string]any, int64) {
	GinkgoHelper()
	d := catalogue.ImageModel(ctx, c)
	if _, ok := answer.SchemaProps(d)["reference_images"]; !ok {
		c.Lacks("the image model has no reference_images field")
	}
	cfg := catalogue.CheapConfig(d)
	_, need := estimateOf(ctx, c, d.String("capability_id"), cfg, nil)
	return d.String("capability_id"), cfg, need
}

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
	for _, row := range catalogue.Rows(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		d := catalogue.Detail(ctx, c, row["capability_id"].(string))
		props := answer.SchemaProps(d)
		for _, name := range catalogue.ListSettings(props) {
			fo := fanOut{d: d, id: d.String("capability_id"), field: name, values: catalogue.EnumOf(props, name)}
			base, ok := uploads.WithSampleUploads(ctx, s, c, props, answer.ObjectAt(d, "example_config"))
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

// withValues is the fan-out capability's config with the list setting set to values.
func (fo fanOut) withValues(values ...string) map[string]any {
	cfg := catalogue.Clone(fo.base)
	list := make([]any, len(values))
	for i, v := range values {
		list[i] = v
	}
	cfg[fo.field] = list
	return cfg
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
	cfg := catalogue.Clone(a.config)
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
		cfg := catalogue.Clone(answer.ObjectAt(d, "example_config"))
		delete(cfg, "count")
		base := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg})
		if base.Status != http.StatusOK {
			continue
		}
		two := catalogue.Clone(cfg)
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

// renamedAlias is the renamed field a spec judges: an old name installed through control (the
// spec's own, removed when it ends) or, without control, the one the profile declares
// (renamed_field_*), with a value of its new name that prices differently from leaving it out.
func renamedAlias(ctx context.Context, s *framework.Spec, c *framework.Client) aliasSetup {
	GinkgoHelper()
	if s.HasControl() {
		return installAlias(ctx, s, c, "")
	}
	return declaredAlias(ctx, c, s.RenamedField(), true)
}

// declaredAlias readies a renamed field the profile declares: the capability's example_config
// without either name, its estimate, and a value of the new name read from its schema that
// estimates (and, when priced, prices differently from leaving it out). A field with no such
// value lacks the state: the old name's pricing could not be told from its being dropped.
func declaredAlias(ctx context.Context, c *framework.Client, rf framework.RenamedField, priced bool) aliasSetup {
	GinkgoHelper()
	d := catalogue.ReadDetail(ctx, c, rf.CapabilityID)
	p, ok := answer.SchemaProps(d)[rf.NewName].(map[string]any)
	if !ok {
		framework.SkipFor(framework.NotDeclared("unsupported: the declared new name " + rf.NewName + " is not a config property of " +
			rf.CapabilityID + ": declare the field's new name as its config_schema lists it"))
	}
	cfg := catalogue.Clone(answer.ObjectAt(d, "example_config"))
	delete(cfg, rf.NewName)
	delete(cfg, rf.OldName)
	base := c.Post(ctx, "/estimates", map[string]any{"capability_id": rf.CapabilityID, "config": cfg}).ExpectOK(http.StatusOK)
	for _, v := range valuesOf(p) {
		try := catalogue.Clone(cfg)
		try[rf.NewName] = v
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": rf.CapabilityID, "config": try}, framework.Unjudged())
		if r.Status == http.StatusOK && (!priced || r.Field("credits") != base.Field("credits")) {
			return aliasSetup{capID: rf.CapabilityID, alias: rf.OldName, field: rf.NewName, stopsIn: rf.StopsIn, config: cfg, base: base, value: v}
		}
	}
	framework.SkipFor(framework.LacksState("no value of " + rf.CapabilityID + "'s " + rf.NewName + " read from its schema " +
		map[bool]string{true: "prices differently from leaving it out", false: "estimates"}[priced] + ": the old name's effect cannot be seen"))
	return aliasSetup{}
}

// valuesOf are values a config property's schema admits, to try: its enum, its bounds and the
// small counts near them, or both booleans; its default last.
func valuesOf(p map[string]any) []any {
	var out []any
	add := func(v any) {
		if v != nil && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if enum, ok := p["enum"].([]any); ok {
		for _, v := range enum {
			if v != p["default"] {
				add(v)
			}
		}
		return out
	}
	switch p["type"] {
	case "boolean":
		add(true)
		add(false)
	case "integer", "number":
		lo, hasLo := framework.AsInt(p["minimum"])
		hi, hasHi := framework.AsInt(p["maximum"])
		def, hasDef := framework.AsInt(p["default"])
		for _, n := range []int64{2, 3, 1, lo + 1, hi, hi - 1, lo} {
			if (!hasLo || n >= lo) && (!hasHi || n <= hi) && (!hasDef || n != def) {
				add(n)
			}
		}
	}
	return out
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

// presetSubmit readies a submit of an available preset that requires a template, with real
// uploads, in a workspace of the spec's own when the run has control: it answers the spender, the
// preset's id, its live template ids, a config naming the first template, and the max_credits
// that config needs.
func presetSubmit(ctx context.Context, s *framework.Spec) (sp spender, id string, tpls []string, cfg map[string]any, need int64) {
	GinkgoHelper()
	sp = newSpender(ctx, s)
	d, tpls := catalogue.TemplatePreset(ctx, sp.c, 1)
	id = d.String("capability_id")
	cfg = uploads.ReadyConfig(ctx, s, sp.c, answer.ObjectAt(d, "example_config"))
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
		// Without control nothing is copied: the lists of the profile's long-lists workspace
		// (long_lists_key), whose presets the operator copied in their app, read as they are (the
		// spec skips unless its list is longer than 50: longListHolds, shortProfileList).
		c = s.RoleKey(framework.LongListsKey)
		rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
		caps = map[string]string{}
		for _, row := range rows {
			id, _ := row["capability_id"].(string)
			caps[id], _ = row["category"].(string)
		}
		return c, caps, paging.IDs(catalogue.PresetRows(ctx, c), "capability_id")
	}
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
	rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
	presets = paging.IDs(catalogue.PresetRows(ctx, c), "capability_id")
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

// longListHolds holds the spec to a list of more than 50 rows (n of them, what they are): with
// control the spec made it so, and fewer fails. Without control the list is as the target keeps it
// and fewer skips with short's reason: a short list is a state the run lacks, never a paging rule
// broken.
func longListHolds(s *framework.Spec, n int, what string, short func(what string, n int) framework.SkipReason) {
	GinkgoHelper()
	if s.HasControl() {
		Expect(n).To(BeNumerically(">", 50), "the spec made a list of more than 50 "+what)
		return
	}
	if n <= 50 {
		framework.SkipFor(short(what, n))
	}
}

// shortProfileList is why a list of the profile's long-lists workspace (long_lists_key), whose rows
// the operator made in their app, skips at 50 rows or fewer: the profile declared the workspace
// long, and a short list is the profile's mistake or a row the operator's app keeps off the list.
func shortProfileList(what string, n int) framework.SkipReason {
	return framework.LacksState(fmt.Sprintf("needs a list of more than 50 %s: long_lists_key's workspace lists %d "+
		"(declare a workspace whose list is longer than 50)", what, n))
}

// shortTargetList is why a list the target keeps to every key (no profile workspace lengthens it)
// skips at 50 rows or fewer: only control or the operator's catalogue lengthens it. The reason
// names control, the tier that makes such a list on any target: the report groups the spec's
// rules under it.
func shortTargetList(what string, n int) framework.SkipReason {
	return framework.Unsupported(framework.Control, fmt.Sprintf("needs a list of more than 50 %s: the target lists %d to this key, "+
		"and only the control API (or the operator's catalogue) makes one that long", what, n))
}

// bigHold finds a config of an available capability (no upload) whose padded hold is as large as
// the default per-generation limit allows (at most 600, at least 100), so that a spec can spend
// the default daily 2000 credits in a few jobs: each integer config property with a maximum is
// set to its maximum, or scaled down to fit. It skips the spec when no config holds 100 or more.
func bigHold(ctx context.Context, s *framework.Spec, c *framework.Client) (capID string, cfg map[string]any, hold int64) {
	GinkgoHelper()
	for _, d := range catalogue.AvailableDetails(ctx, c, 40) {
		id := d.String("capability_id")
		ex := catalogue.CheapConfig(d)
		if catalogue.NamesUpload(ex) || strings.HasPrefix(id, "preset_") {
			continue
		}
		props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			mx, ok := framework.AsInt(pm["maximum"])
			// A deprecated old name is another name of its field (of count, say): left out as count is.
			if pm["type"] != "integer" || !ok || mx < 2 || name == "count" || pm["deprecated"] == true {
				continue
			}
			try := catalogue.Clone(ex)
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
