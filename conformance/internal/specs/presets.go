package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// presetSpecs registers the specs of presets and their templates.
func presetSpecs(f *framework.Framework) {
	presetListSpecs(f)
	presetAvailabilitySpecs(f)
	presetTotalSpecs(f)
	longPresetListSpecs(f)
	presetTemplateSpecs(f)
	presetSubmitSpecs(f)
	presetStateSpecs(f)
}

// presetListSpecs registers the specs of the preset list and detail.
func presetListSpecs(f *framework.Framework) {
	Describe("presets: list and detail", func() {
		f.Rule("PRESET-001", "PRESET-002", "PRESET-003", "PRESET-004", "PRESET-005", "PRESET-006", "PRESET-008", "PRESET-010", "PRESET-011", "ID-010", "CORE-013").It("lists presets with their first templates, total and cursor", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := paging.Walk(ctx, c, "/presets", "presets", 5, 100)
			if len(rows) == 0 {
				s.Lacks("the target lists no preset")
			}
			for _, p := range pages {
				s.Step("PRESET-010")
				Expect(p.R.Int("total")).To(Equal(int64(len(rows))), "total counts the presets across all pages"+p.R.Describe())
				if p.Cursor != nil {
					s.Step("PRESET-008")
					Expect(*p.Cursor).To(Equal(p.Rows[len(p.Rows)-1]["capability_id"]), "next_cursor is the last row's capability_id"+p.R.Describe())
				}
				for i, row := range p.Rows {
					what := fmt.Sprintf("presets[%d]", i)
					s.Step("PRESET-002", "PRESET-003")
					Expect(answer.String(p.R, row, "capability_id", what)).To(HavePrefix("preset_"), p.R.Describe())
					s.Step("PRESET-002")
					answer.String(p.R, row, "name", what)
					Expect(answer.String(p.R, row, "output_kind", what)).To(answer.OneOf("image", "video", "audio", "text"), p.R.Describe())
					s.Step("PRESET-002", "PRESET-004")
					status := answer.String(p.R, row, "status", what)
					Expect(status).To(answer.OneOf("available", "requires_plan", "coming_soon"), p.R.Describe())
					s.Step("PRESET-005")
					if status == "requires_plan" {
						answer.String(p.R, row, "required_plan", what)
					} else {
						Expect(row).NotTo(HaveKey("required_plan"), p.R.Describe())
					}
					s.Step("PRESET-002")
					if d, has := row["description"]; has {
						Expect(d).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())), what+": description is omitted when empty"+p.R.Describe())
					}
					_, ok := row["requires_template"].(bool)
					Expect(ok).To(BeTrue(), p.R.Describe())
					Expect(answer.String(p.R, row, "next_action", what)).NotTo(BeEmpty(), p.R.Describe())
					tpls, ok := row["templates"].([]any)
					Expect(ok).To(BeTrue(), what+".templates is an array"+p.R.Describe())
					s.Step("PRESET-006")
					Expect(len(tpls)).To(BeNumerically("<=", 20), p.R.Describe())
					Expect(answer.Int(p.R, row, "templates_total", what)).To(BeNumerically(">=", len(tpls)), p.R.Describe())
					s.Step("PRESET-011", "ID-010")
					for j, t := range tpls {
						catalogue.CheckTemplate(p.R, answer.AsObject(p.R, t, fmt.Sprintf("%s.templates[%d]", what, j)))
					}
					s.Step("CORE-013")
					answer.NoLinks(row, what+" (a template's preview_url is the only link)", "preview_url")
				}
			}
		})

		f.Rule("PRESET-013", "PRESET-014", "PRESET-011").It("GET /presets/{id}/templates answers every live template", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, _ := paging.Walk(ctx, c, "/presets", "presets", 50, 100)
			if len(rows) == 0 {
				s.Lacks("the target lists no preset")
			}
			for _, row := range rows[:min(len(rows), 10)] {
				id := row["capability_id"].(string)
				// The answer's shape is the route's (PRESET-013) and its templates' (PRESET-011): a
				// template the description refuses fails both.
				s.Step("PRESET-013", "PRESET-011")
				r := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				s.Step("PRESET-013")
				Expect(r.String("capability_id")).To(Equal(id), r.Describe())
				r.String("name")
				Expect(r.String("status")).To(Equal(row["status"]), r.Describe())
				Expect(r.Bool("requires_template")).To(Equal(row["requires_template"]), r.Describe())
				Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
				tpls := r.Array("templates")
				total, _ := framework.AsInt(row["templates_total"])
				s.Step("PRESET-014")
				Expect(int64(len(tpls))).To(Equal(total), "every live template: as many as templates_total"+r.Describe())
				s.Step("PRESET-011")
				for i, t := range tpls {
					catalogue.CheckTemplate(r, answer.AsObject(r, t, fmt.Sprintf("templates[%d]", i)))
				}
				s.Step("PRESET-013")
				answer.NoLinks(r.Doc(), "GET /presets/"+id+"/templates (a template's preview_url is the only link)", "preview_url")
				if row["status"] == "requires_plan" {
					Expect(r.String("required_plan")).To(Equal(row["required_plan"]), r.Describe())
				} else {
					Expect(r.Doc()).NotTo(HaveKey("required_plan"), r.Describe())
				}
			}
		})

		f.Rule(rules("PRESET-015", "ERR-029")...).It("a non-preset or misspelt id on GET /presets/{id}/templates answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			c.Get(ctx, "/presets/preset_no_such_"+framework.RandomHex(6)+"/templates").ExpectError(http.StatusNotFound, "not_found")
			for _, row := range catalogue.Rows(ctx, c) {
				if id, _ := row["capability_id"].(string); !strings.HasPrefix(id, "preset_") {
					c.Get(ctx, "/presets/"+id+"/templates").ExpectError(http.StatusNotFound, "not_found")
					break
				}
			}
		})
	})
}

// presetAvailabilitySpecs registers the specs of presets an agent cannot use: an internal preset's
// templates, a coming_soon preset, and the list's limit.
func presetAvailabilitySpecs(f *framework.Framework) {
	Describe("presets: list and detail", func() {
		f.Rule(rules("PRESET-016", "ERR-029")...).Needs(framework.Profile).It("an internal preset (withheld from agents) answers 404 not_found on GET /presets/{id}/templates", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			var id string
			if s.HasControl() {
				// With control the spec sees the preset's templates served first (it judges more).
				for _, row := range catalogue.PresetRows(ctx, c) {
					if row["status"] == "available" {
						id, _ = row["capability_id"].(string) // the last available one: the template specs pick the first
					}
				}
				if id == "" {
					s.Lacks("the target lists no available preset")
				}
				c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				hookDone(s, s.Control().SetOffered(ctx, id, false))
				DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetOffered(ctx, id, true) })
			} else {
				id = s.InternalPresetID()
			}
			Expect(paging.IDs(catalogue.PresetRows(ctx, c), "capability_id")).NotTo(ContainElement(id), "an internal preset is not listed")
			// "A non-preset id, a typo, or a retired or internal preset gives 404 not_found."
			c.Get(ctx, "/presets/"+id+"/templates").ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("CAP-027", "PRESET-004", "ERR-016")...).It("a coming_soon preset is listed but cannot run: estimate and submit answer 404 capability_unavailable coming_soon, even with a template of an available preset", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			var ws *framework.TestWorkspace
			if s.HasControl() {
				ws = s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
			}
			d, tpls := catalogue.TemplatePreset(ctx, c, 1)
			src := d.String("capability_id")
			cfg := uploads.ReadyConfig(ctx, s, c, answer.ObjectAt(d, "example_config"))
			cfg["template_id"] = tpls[0]
			_, need := estimateOf(ctx, c, src, cfg, nil)
			var soon string
			if ws != nil {
				// With control: a copy of the preset, coming_soon in the spec's workspace.
				soon = "preset_" + framework.RandomHex(10)
				hookDone(s, s.Control().CopyCapability(ctx, ws.ID, src, soon))
			} else {
				// Without: a coming_soon preset the target lists (its schema is not readable).
				for _, r := range catalogue.PresetRows(ctx, c) {
					if r["status"] == "coming_soon" {
						soon, _ = r["capability_id"].(string)
						break
					}
				}
				if soon == "" {
					framework.SkipFor(framework.Unsupported(framework.Control, "needs a coming_soon preset: the target lists none to this key, and only the control API (or the operator's catalogue) makes one"))
				}
			}
			// "only available can run": a coming_soon preset, whatever template it is sent with.
			s.Step("PRESET-004")
			row := catalogue.RowOf(catalogue.PresetRows(ctx, c), "capability_id", soon)
			Expect(row).NotTo(BeNil(), "the coming_soon preset "+soon+" is listed")
			Expect(row["status"]).To(Equal("coming_soon"), soon+" reads coming_soon")
			s.Step(rules("CAP-027", "ERR-016")...)
			// Without control the preset's schema is not readable: it is sent another preset's config
			// and template, which a correct server may refuse first (configFirst).
			decided := true
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": soon, "config": cfg})
			if expectUnavailable(r, ws == nil, true) {
				Expect(r.String("error.capability_status")).To(Equal("coming_soon"), r.Describe())
			} else {
				decided = false
			}
			r = refuseBy(ctx, c, submitBody(soon, cfg, need, nil), func(r *framework.Response) {
				GinkgoHelper()
				if !expectUnavailable(r, ws == nil, true) {
					decided = false
				}
			})
			if r.Status == http.StatusNotFound && r.String("error.code") == "capability_unavailable" {
				Expect(r.String("error.capability_status")).To(Equal("coming_soon"), r.Describe())
			}
			if !decided {
				framework.SkipFor(framework.Undecidable("the coming_soon preset " + soon + " was answered 400 invalid_config or 404 not_found, not capability_unavailable: " + configFirst))
			}
		})

		f.Rule("PRESET-007").It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			paging.ExpectDefaultAndClamp(ctx, s.Client(), "/presets", "presets")
		})
	})
}

// presetTotalSpecs registers the specs of the preset total and inlined templates.
func presetTotalSpecs(f *framework.Framework) {
	Describe("presets: list total and inlined templates", func() {
		f.Rule("PRESET-010").It("total counts every preset on pages of one, not the rows of the page", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all := catalogue.PresetRows(ctx, c)
			if len(all) < 2 {
				s.Lacks("the target lists fewer than two presets")
			}
			_, pages := paging.Walk(ctx, c, "/presets", "presets", 1, 100)
			for _, p := range pages {
				Expect(p.R.Int("total")).To(Equal(int64(len(all))), "total counts every preset, on every page"+p.R.Describe())
			}
		})

		f.Rule("PRESET-006", "PRESET-014").It("a preset row inlines min(20, templates_total) live templates, each one GET /presets/{id}/templates lists", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, row := range catalogue.PresetRows(ctx, c) {
				total, _ := framework.AsInt(row["templates_total"])
				if total == 0 {
					continue
				}
				id := row["capability_id"].(string)
				inline, _ := row["templates"].([]any)
				s.Step("PRESET-006")
				Expect(int64(len(inline))).To(Equal(min(total, 20)), id+": templates holds the first 20 live templates, or all when fewer")
				s.Step("PRESET-014", "PRESET-006")
				t := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				live := catalogue.TemplateIDs(t)
				var inlined []string
				for _, v := range inline {
					tid, _ := v.(map[string]any)["template_id"].(string)
					inlined = append(inlined, tid)
				}
				Expect(inlined).To(Equal(live[:min(len(live), 20)]), id+": templates are the first 20 live templates in gallery order, as GET /presets/{id}/templates lists them"+t.Describe())
				checked++
			}
			if checked == 0 {
				s.Lacks("the target lists no preset with a live template")
			}
		})
	})
}

// longPresetListSpecs registers the specs of a preset list of more than 50 rows, made through
// control.
func longPresetListSpecs(f *framework.Framework) {
	Describe("presets: a list of more than 50 rows", func() {
		// "Clamped 1 to 50" is read as written (PRESET-007): a whole number below 1 answers one
		// row; a limit that is not a whole number counts as omitted or is refused.
		f.Rule("PRESET-007", "PRESET-008", "PRESET-009", "PRESET-010", "CORE-012").Needs(framework.LongListsKey).It("pages hold 25 by default, 50 at most and 1 at least, total counts every preset, and the cursor walks every preset once in id order", func(ctx context.Context, s *framework.Spec) {
			c, _, want := longCatalogue(ctx, s)
			slices.Sort(want)
			longListHolds(s, len(want), "presets", shortProfileList)
			s.Step("PRESET-007")
			def := paging.Get(ctx, c, "/presets", "presets")
			paging.ExpectPrefix(def, "capability_id", want, 25, fmt.Sprintf("the default page of %d presets (by capability_id)", len(want)))
			for _, n := range []string{"50", "51", "1000"} {
				p := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", n))
				paging.ExpectPrefix(p, "capability_id", want, 50, fmt.Sprintf("limit=%s on %d presets, clamped to 50", n, len(want)))
			}
			for _, low := range []string{"0", "-1"} {
				p := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", low))
				paging.ExpectPrefix(p, "capability_id", want, 1, fmt.Sprintf("limit=%s is clamped to 1", low))
			}
			for _, odd := range []string{"1.5", "abc"} {
				paging.ExpectLimitReading(ctx, c, "/presets", "presets", "capability_id", odd, def)
			}
			for _, limit := range []int{0, 50} {
				s.Step("CORE-012", "PRESET-009")
				got, pages := paging.WalkOnce(ctx, c, "/presets", "presets", "capability_id", limit, want)
				s.Step("PRESET-009")
				Expect(got).To(Equal(want), fmt.Sprintf("limit %d: presets in capability_id order across pages", limit))
				for _, p := range pages {
					s.Step("PRESET-010")
					Expect(p.R.Int("total")).To(Equal(int64(len(want))), "total counts every preset the workspace sees, on every page"+p.R.Describe())
					if p.Cursor != nil {
						s.Step("PRESET-008")
						Expect(*p.Cursor).To(Equal(p.Rows[len(p.Rows)-1]["capability_id"]), "next_cursor is the last row's capability_id"+p.R.Describe())
					}
				}
			}
		})
	})
}

// presetTemplateSpecs registers the specs of presets and their templates.
func presetTemplateSpecs(f *framework.Framework) {
	Describe("presets: order, templates and preset submits", func() {
		f.Rule("PRESET-009").It("presets are ordered by capability_id as in the capability list and paged by the last row's id", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all := catalogue.PresetRows(ctx, c)
			if len(all) < 2 {
				s.Lacks("the target lists fewer than two presets")
			}
			got := paging.IDs(all, "capability_id")
			Expect(sort.StringsAreSorted(got)).To(BeTrue(), fmt.Sprintf("presets are ordered by capability_id: %v", got))
			small, pages := paging.Walk(ctx, c, "/presets", "presets", 1, 100)
			Expect(paging.IDs(small, "capability_id")).To(Equal(got), "pages of one list the same presets in the same order")
			for _, p := range pages {
				if p.Cursor != nil {
					Expect(*p.Cursor).To(Equal(p.Rows[len(p.Rows)-1]["capability_id"]), "next_cursor is the last row's capability_id"+p.R.Describe())
				}
			}
			first := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", "1"))
			Expect(first.Cursor).NotTo(BeNil(), first.R.Describe())
			bare := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", *first.Cursor))
			padded := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", " "+*first.Cursor+"  "))
			Expect(paging.IDs(padded.Rows, "capability_id")).To(Equal(paging.IDs(bare.Rows, "capability_id")), "the cursor is trimmed"+padded.R.Describe())
			for _, cur := range []string{"", "  ", "preset_no_such_" + framework.RandomHex(6)} {
				p := paging.Get(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", cur))
				Expect(paging.IDs(p.Rows, "capability_id")).To(Equal(paging.IDs(first.Rows, "capability_id")), fmt.Sprintf("cursor %q restarts from the first page", cur)+p.R.Describe())
			}
			var listed []string
			for _, row := range catalogue.Rows(ctx, c) {
				if id, _ := row["capability_id"].(string); row["category"] == "preset" && slices.Contains(got, id) {
					listed = append(listed, id)
				}
			}
			var inList []string
			for _, id := range got {
				if slices.Contains(listed, id) {
					inList = append(inList, id)
				}
			}
			Expect(inList).To(Equal(listed), "presets come in the capability list's order")
		})

		f.Rule("PRESET-012").It("a template's preview_url is the same on two reads, unsigned, and fetched without a key", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			links := map[string]string{}
			for _, row := range catalogue.PresetRows(ctx, c) {
				for _, t := range row["templates"].([]any) {
					tm := t.(map[string]any)
					links[tm["template_id"].(string)] = tm["preview_url"].(string)
				}
			}
			if len(links) == 0 {
				s.Lacks("the target lists no preset template")
			}
			for _, row := range catalogue.PresetRows(ctx, c) {
				id := row["capability_id"].(string)
				r := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				for i, t := range r.Array("templates") {
					tm := answer.AsObject(r, t, fmt.Sprintf("templates[%d]", i))
					tid := answer.String(r, tm, "template_id", "template")
					if before, ok := links[tid]; ok {
						Expect(tm["preview_url"]).To(Equal(before), "preview_url of "+tid+" is the same on every read"+r.Describe())
					}
				}
			}
			fetched := 0
			for tid, link := range links {
				if fetched == 2 {
					break
				}
				u, err := url.Parse(link)
				Expect(err).NotTo(HaveOccurred(), "preview_url of "+tid+" is a URL")
				Expect(u.IsAbs()).To(BeTrue(), "preview_url of "+tid+" is absolute")
				for name := range u.Query() {
					l := strings.ToLower(name)
					Expect(strings.Contains(l, "sig") || strings.Contains(l, "expire") || strings.Contains(l, "token") || strings.HasPrefix(l, "x-amz-")).
						To(BeFalse(), "preview_url of "+tid+" is not signed or expiring, but carries "+name)
				}
				res := s.Link(ctx, http.MethodGet, link)
				if res.Status >= 300 && res.Status < 400 && res.Header.Get("Location") != "" {
					next, err := u.Parse(res.Header.Get("Location"))
					Expect(err).NotTo(HaveOccurred(), res.Describe())
					res = s.Link(ctx, http.MethodGet, next.String())
				}
				Expect(res.Status).To(Equal(http.StatusOK), "a public preview is fetched without a key"+res.Describe())
				Expect(res.Body).NotTo(BeEmpty(), res.Describe())
				fetched++
			}
		})

		f.Rule(rules("PRESET-018", "ERR-024")...).Needs(framework.Uploads).It("a preset submit without config.template_id when the preset requires one answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			sp, id, _, cfg, need := presetSubmit(ctx, s)
			delete(cfg, "template_id")
			refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config")
		})
	})
}

// presetSubmitSpecs registers the specs of preset submits and estimates: a template that is not the
// preset's, a higher plan, two templates' prices, a required template_id, and no create endpoint.
func presetSubmitSpecs(f *framework.Framework) {
	Describe("presets: order, templates and preset submits", func() {
		f.Rule(rules("PRESET-019", "ERR-029")...).Needs(framework.Uploads).It("a preset submit with a template_id that is not a template of the preset answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			sp, id, _, cfg, need := presetSubmit(ctx, s)
			strangers := []string{"captpl_" + framework.RandomHex(32)}
			for _, row := range catalogue.PresetRows(ctx, sp.c) {
				if row["capability_id"] == id {
					continue
				}
				for _, t := range row["templates"].([]any) {
					strangers = append(strangers, t.(map[string]any)["template_id"].(string))
					break
				}
			}
			for _, tpl := range strangers {
				cfg["template_id"] = tpl
				refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusNotFound, "not_found")
			}
		})

		f.Rule(rules("PRESET-021", "ERR-017")...).It("a preset submit on a preset that needs a higher plan answers 403 required_plan naming it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			var row map[string]any
			for _, p := range catalogue.PresetRows(ctx, sp.c) {
				if p["status"] == "requires_plan" {
					row = p
					break
				}
			}
			if row == nil {
				s.Lacks("the target lists no preset that needs a higher plan than the run's workspace")
			}
			id := row["capability_id"].(string)
			plan, _ := row["required_plan"].(string)
			cfg := map[string]any{}
			need := int64(500)
			var hc *framework.Client // a key of a workspace on the plan the preset needs
			switch {
			case s.HasControl():
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: plan})
				hc, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
			case plan == "business" && s.HasRoleKey(framework.BusinessKey):
				hc = s.RoleKey(framework.BusinessKey)
			}
			if hc != nil {
				// Read the schema and the price where the plan allows them.
				d := catalogue.ReadDetail(ctx, hc, id)
				cfg = answer.ObjectAt(d, "example_config")
				if t := row["templates"].([]any); len(t) > 0 {
					cfg["template_id"] = t[0].(map[string]any)["template_id"]
				}
				_, need = estimateOf(ctx, hc, id, uploads.ReadyConfig(ctx, s, hc, cfg), nil)
				cfg = uploads.ReadyConfig(ctx, s, sp.c, cfg)
			}
			if hc == nil {
				// The schema cannot be read on this plan, and config validity comes before the
				// plan in the submit check order: a config the plan's schema would refuse tells
				// nothing about the plan.
				if t, _ := row["templates"].([]any); len(t) > 0 {
					cfg["template_id"] = t[0].(map[string]any)["template_id"]
				}
				probe := sp.c.Post(ctx, "/generations", submitBody(id, cfg, need, nil))
				if probe.Status == http.StatusBadRequest {
					why := "needs the control API to read " + id + "'s config schema on a " + plan + " workspace"
					because := ": without a valid config the submit is refused for config validity, which the check order puts before the plan"
					if plan == "business" {
						framework.SkipFor(framework.NotDeclared("unsupported: " + why +
							", or set business_key in the profile (a key of a business workspace)" + because))
					}
					framework.SkipFor(framework.Unsupported(framework.Control, why+because))
				}
			}
			r := refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusForbidden, "required_plan")
			Expect(r.String("error.required_plan")).To(Equal(plan), "the refusal names the plan the preset row names"+r.Describe())
		})

		f.Rule("PRESET-022", "PRESET-025").Needs(framework.Uploads).It("a preset is estimated like any capability, and two templates of it cost the same", func(ctx context.Context, s *framework.Spec) {
			c := uploads.Client(ctx, s, 10)
			d, tpls := catalogue.TemplatePreset(ctx, c, 2)
			id := d.String("capability_id")
			cfg := uploads.ReadyConfig(ctx, s, c, answer.ObjectAt(d, "example_config"))
			var answers []*framework.Response
			for _, tpl := range tpls[:2] {
				cfg["template_id"] = tpl
				s.Step("PRESET-022")
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg}).ExpectOK(http.StatusOK)
				Expect(r.String("capability_id")).To(Equal(id), r.Describe())
				answers = append(answers, r)
			}
			a, b := answers[0], answers[1]
			s.Step("PRESET-025")
			Expect(b.Field("credits")).To(Equal(a.Field("credits")), "no per-template price: the same credits"+b.Describe())
			Expect(b.Int("max_credits_needed")).To(Equal(a.Int("max_credits_needed")), b.Describe())
		})

		f.Rule("PRESET-023").It("a preset that requires a template lists template_id in its config_schema's required", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, row := range catalogue.PresetRows(ctx, c) {
				if row["status"] != "available" || row["requires_template"] != true {
					continue
				}
				d := catalogue.Detail(ctx, c, row["capability_id"].(string))
				req, _ := answer.ObjectAt(d, "config_schema")["required"].([]any)
				Expect(req).To(ContainElement("template_id"), "requires_template true: template_id is required"+d.Describe())
				checked++
			}
			if checked == 0 {
				s.Lacks("the target lists no available preset that requires a template")
			}
		})

		f.Rule("PRESET-024").It("no endpoint creates presets or templates", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Post(ctx, "/presets", map[string]any{"name": "mine"}, framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), r.Describe())
			id := "preset_conformance"
			if rows := catalogue.PresetRows(ctx, c); len(rows) > 0 {
				id = rows[0]["capability_id"].(string)
			}
			r = c.Post(ctx, "/presets/"+id+"/templates", map[string]any{"name": "mine"}, framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), r.Describe())
		})
	})
}

// presetStateSpecs registers the specs of templates added or withdrawn through control.
func presetStateSpecs(f *framework.Framework) {
	Describe("presets: templates added or withdrawn through control", func() {
		f.Rule("PRESET-006", "PRESET-014").ControlBecause("templates are added and withdrawn during the run, in the catalogue, not through the API").It("templates come in gallery order whatever order they were added in, and a preset row inlines the first 20 of them", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d, before := catalogue.TemplatePreset(ctx, c, 1)
			id := d.String("capability_id")
			// Added out of order, before every existing template in the gallery.
			orders := []int{-1000001, -1000003, -1000002}
			added := map[int]string{}
			for _, o := range orders {
				tid, err := s.Control().AddTemplate(ctx, id, fmt.Sprintf("Conformance %d", o), o)
				hookDone(s, err)
				added[o] = tid
				DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetTemplateLive(ctx, tid, false) })
			}
			want := append([]string{added[-1000003], added[-1000002], added[-1000001]}, before...)
			s.Step("PRESET-014")
			t := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
			got := catalogue.TemplateIDs(t)
			Expect(got).To(Equal(want), "every live template in gallery order: the three added (lowest gallery place first), then the ones before"+t.Describe())
			s.Step("PRESET-006")
			rows, _ := paging.Walk(ctx, c, "/presets", "presets", 50, 20)
			var row map[string]any
			for _, r := range rows {
				if r["capability_id"] == id {
					row = r
				}
			}
			Expect(row).NotTo(BeNil(), id+" is listed")
			total, _ := framework.AsInt(row["templates_total"])
			Expect(total).To(Equal(int64(len(want))), id+": templates_total counts the added templates")
			var inlined []string
			for _, v := range row["templates"].([]any) {
				inlined = append(inlined, v.(map[string]any)["template_id"].(string))
			}
			Expect(inlined).To(Equal(want[:min(len(want), 20)]), id+": templates holds the first 20 live templates in gallery order")
		})

		f.Rule(rules("PRESET-020", "ERR-016")...).Needs(framework.Uploads).ControlBecause("a template is withdrawn after the spec listed it, in the catalogue, not through the API").It("a template withdrawn since it was listed leaves the lists, and a submit naming it answers 404 capability_unavailable", func(ctx context.Context, s *framework.Spec) {
			sp, id, tpls, cfg, need := presetSubmit(ctx, s)
			hookDone(s, s.Control().SetTemplateLive(ctx, tpls[0], false))
			DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetTemplateLive(ctx, tpls[0], true) })
			t := sp.c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
			live := catalogue.TemplateIDs(t)
			Expect(live).NotTo(ContainElement(tpls[0]), "a withdrawn template is not a live template"+t.Describe())
			Expect(live).To(HaveLen(len(tpls)-1), t.Describe())
			r := refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusNotFound, "capability_unavailable")
			Expect(r.Doc()).To(HaveKey("error"), r.Describe())
		})

		f.Rule(rules("PRESET-017", "PRESET-006")...).Needs(framework.Uploads).It("a preset that requires a template and has none live cannot run: a submit naming a real template is refused and holds nothing", func(ctx context.Context, s *framework.Spec) {
			var (
				sp   spender
				id   string
				cfg  map[string]any
				need int64
				sent []string // real template ids to send: the preset's own (withdrawn), then a stranger's
			)
			if s.HasControl() {
				// A preset with live templates, estimated first, then every template withdrawn.
				var tpls []string
				sp, id, tpls, cfg, need = presetSubmit(ctx, s)
				withdrawAllTemplates(ctx, s, id)
				sent = append(sent, tpls[0])
			} else {
				sp = newSpender(ctx, s)
				for _, row := range catalogue.PresetRows(ctx, sp.c) {
					if n, _ := framework.AsInt(row["templates_total"]); row["status"] == "available" && row["requires_template"] == true && n == 0 {
						id, _ = row["capability_id"].(string)
						break
					}
				}
				if id == "" {
					framework.SkipFor(framework.Unsupported(framework.Control, "the target lists no available preset that requires a template and has templates_total 0, and without the control API none can be made"))
				}
				cfg = uploads.ReadyConfig(ctx, s, sp.c, answer.ObjectAt(catalogue.Detail(ctx, sp.c, id), "example_config"))
				est := sp.c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg})
				if est.Status != http.StatusOK {
					framework.SkipFor(framework.LacksState("the estimate of " + id + "'s example_config is refused, so no max_credits is known to cover its price, and a submit's refusal could be for max_credits"))
				}
				need = est.Int("max_credits_needed")
				if t, ok := cfg["template_id"].(string); ok {
					sent = append(sent, t)
				}
			}
			// A live template of another preset: a real id, listed now, not withdrawn.
			for _, row := range catalogue.PresetRows(ctx, sp.c) {
				if t, _ := row["templates"].([]any); row["capability_id"] != id && len(t) > 0 {
					if tid, ok := t[0].(map[string]any)["template_id"].(string); ok {
						sent = append(sent, tid)
					}
					break
				}
			}
			s.Step("PRESET-006")
			var row map[string]any
			for _, r := range catalogue.PresetRows(ctx, sp.c) {
				if r["capability_id"] == id {
					row = r
				}
			}
			Expect(row).NotTo(BeNil(), id+" is still listed with every template withdrawn")
			n, _ := framework.AsInt(row["templates_total"])
			Expect(row["requires_template"] == true && n == 0).To(BeTrue(), fmt.Sprintf("%s: requires_template true and, every template withdrawn, templates_total 0; got %v and %v", id, row["requires_template"], row["templates_total"]))
			// "requires_template true with templates_total 0 means the preset cannot run now": the
			// text names no code for it, so any documented refusal will do.
			s.Step("PRESET-017")
			for _, tid := range sent {
				cfg["template_id"] = tid
				refuseAny(ctx, sp.c, submitBody(id, cfg, need, nil), id+" has templates_total 0 and cannot run now, whatever real template ("+tid+") the submit names")
			}
		})
	})
}

// withdrawAllTemplates withdraws every live template of preset id through control (DELETE
// /presets/{id}/templates), skipping the spec when the control API does not offer it, and
// restores them (PATCH /templates/{id}) when the spec ends.
func withdrawAllTemplates(ctx context.Context, s *framework.Spec, id string) {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodDelete, "/presets/"+id+"/templates", nil)
	if err == nil && r.Status != http.StatusOK {
		err = &framework.HookError{Op: "DELETE /presets/{id}/templates", Status: r.Status, Detail: r.Exchange.String()}
	}
	hookDone(s, err)
	var doc struct {
		Withdrawn []string `json:"withdrawn"`
	}
	Expect(json.Unmarshal(r.Body, &doc)).To(Succeed(), r.Describe())
	DeferCleanup(func(ctx SpecContext) {
		for _, t := range doc.Withdrawn {
			_ = s.Control().SetTemplateLive(ctx, t, true)
		}
	})
}
