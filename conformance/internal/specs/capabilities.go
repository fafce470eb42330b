package specs

import (
	"context"
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
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// capabilitySpecs registers the specs of the capability list and detail, retired capabilities and catalogue ids.
func capabilitySpecs(f *framework.Framework) {
	capabilityListSpecs(f)
	longCapabilityListSpecs(f)
	capabilityDetailSpecs(f)
	retiredCapabilitySpecs(f)
	withheldCapabilitySpecs(f)
	catalogueIDSpecs(f)
}

// capabilityListSpecs registers the specs of the capability list.
func capabilityListSpecs(f *framework.Framework) {
	Describe("capabilities: list", func() {
		f.Rule("CAP-001", "CAP-002", "CAP-003", "CAP-004", "CAP-005", "CAP-014", "CORE-013").It("answers rows with the documented fields and values, no retired row and no link", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
			if len(rows) == 0 {
				s.Lacks("the target lists no capability")
			}
			i := 0
			for _, p := range pages {
				for _, row := range p.Rows {
					s.Step("CAP-002", "CAP-003", "CAP-004", "CAP-005", "CORE-013")
					catalogue.CheckRow(p.R, row, fmt.Sprintf("capabilities row %d", i))
					s.Step("CAP-014")
					Expect(row["status"]).NotTo(Equal("retired"), "retired capabilities are not listed"+p.R.Describe())
					i++
				}
			}
		})

		f.Rule("CAP-006", "CAP-007", "CAP-008").It("pages hold 25 by default, clamp limit to 50, and treat a limit that is not a positive whole number as omitted", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all := catalogue.Rows(ctx, c)
			def := paging.Get(ctx, c, "/capabilities", paging.Open)
			s.Step("CAP-006")
			Expect(len(def.Rows)).To(BeNumerically("<=", 25), def.R.Describe())
			// A page can be shorter than limit, never longer: a small limit is held to.
			small := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", "3"))
			paging.ExpectPrefix(small, "capability_id", paging.IDs(all, "capability_id"), 3, "limit=3")
			big := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", "500"))
			s.Step("CAP-007")
			Expect(len(big.Rows)).To(BeNumerically("<=", 50), "limit is clamped to 50"+big.R.Describe())
			s.Step("CAP-008")
			for _, bad := range []string{"0", "-3", "2.5", "abc", ""} {
				p := paging.Omitted(ctx, c, "/capabilities", paging.Open, fmt.Sprintf("limit=%q", bad), paging.LimitProbe(bad)...)
				paging.ExpectPrefix(p, "capability_id", paging.IDs(all, "capability_id"), 25, fmt.Sprintf("limit=%q counts as omitted: the default page", bad))
			}
		})

		f.Rule("CAP-009", "CAP-013", "CAP-017", "CORE-012").It("next_cursor walks every row once in category then id order and ends with null", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := paging.Walk(ctx, c, "/capabilities", paging.Open, 7, 200)
			// The order first: a page sorted otherwise also moves its last row, the cursor's anchor.
			s.Step("CAP-013")
			for i := 1; i < len(rows); i++ {
				a, b := rows[i-1], rows[i]
				ca, cb := slices.Index(catalogue.Categories, a["category"].(string)), slices.Index(catalogue.Categories, b["category"].(string))
				ia, ib := a["capability_id"].(string), b["capability_id"].(string)
				Expect(ca < cb || (ca == cb && ia < ib)).To(BeTrue(), fmt.Sprintf("order: %s (%s) before %s (%s)", ia, a["category"], ib, b["category"]))
			}
			seen := map[string]bool{}
			for _, p := range pages {
				if p.Cursor != nil {
					s.Step("CAP-017", "CORE-012")
					Expect(p.Rows).NotTo(BeEmpty(), "a page with a next_cursor has rows"+p.R.Describe())
					last, _ := p.Rows[len(p.Rows)-1]["capability_id"].(string)
					Expect(*p.Cursor).To(Equal(last), "next_cursor is the last row's capability_id"+p.R.Describe())
				}
				s.Step("CAP-009")
				for _, row := range p.Rows {
					id, _ := row["capability_id"].(string)
					Expect(seen[id]).To(BeFalse(), "row "+id+" repeated across pages"+p.R.Describe())
					seen[id] = true
				}
			}
			s.Step("CAP-009", "CORE-012")
			Expect(paging.IDs(rows, "capability_id")).To(Equal(paging.IDs(catalogue.Rows(ctx, c), "capability_id")), "pages of 7 and pages of 50 list the same rows")
		})

		f.Rule("CAP-010", "CAP-011", "CAP-012").It("trims the cursor, reads a blank cursor as omitted and restarts on a cursor naming nothing", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			first := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", "3"))
			if first.Cursor == nil {
				s.Lacks("the target lists at most 3 capabilities, one page")
			}
			bare := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", "3"), framework.Query("cursor", *first.Cursor))
			padded := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", "3"), framework.Query("cursor", "  "+*first.Cursor+" "))
			s.Step("CAP-010")
			Expect(paging.IDs(padded.Rows, "capability_id")).To(Equal(paging.IDs(bare.Rows, "capability_id")), "a padded cursor is trimmed"+padded.R.Describe())
			for _, cur := range []string{"", "   ", "no_such_capability_" + framework.RandomHex(8)} {
				if strings.TrimSpace(cur) == "" {
					s.Step("CAP-011")
				} else {
					s.Step("CAP-012")
				}
				p := paging.Omitted(ctx, c, "/capabilities", paging.Open, fmt.Sprintf("cursor %q", cur), framework.Query("limit", "3"), framework.Query("cursor", cur))
				Expect(paging.IDs(p.Rows, "capability_id")).To(Equal(paging.IDs(first.Rows, "capability_id")), fmt.Sprintf("cursor %q restarts from the first page", cur)+p.R.Describe())
			}
		})
	})

}

// longCapabilityListSpecs registers the specs of a capability list of more than 50 rows: made
// through control, or the target's own as it is.
func longCapabilityListSpecs(f *framework.Framework) {
	Describe("capabilities: a list of more than 50 rows", func() {
		f.Rule("CAP-006", "CAP-007", "CAP-008", "CAP-009", "CAP-013", "CORE-012").Needs(framework.LongListsKey).It("pages hold 25 by default and 50 at most, a limit that is not a positive whole number counts as omitted, and the cursor walks every row once in category then id order", func(ctx context.Context, s *framework.Spec) {
			c, caps, _ := longCatalogue(ctx, s)
			want := catalogue.InListOrder(caps)
			longListHolds(s, len(want), "capability rows", shortProfileList)
			s.Step("CAP-006")
			def := paging.Get(ctx, c, "/capabilities", paging.Open)
			paging.ExpectPrefix(def, "capability_id", want, 25, fmt.Sprintf("the default page of a list of %d (category then id order)", len(want)))
			s.Step("CAP-007")
			for _, n := range []string{"50", "51", "1000"} {
				p := paging.Get(ctx, c, "/capabilities", paging.Open, framework.Query("limit", n))
				paging.ExpectPrefix(p, "capability_id", want, 50, fmt.Sprintf("limit=%s on a list of %d, clamped to 50", n, len(want)))
			}
			s.Step("CAP-008")
			for _, bad := range []string{"0", "-1", "1.5", "abc"} {
				p := paging.Get(ctx, c, "/capabilities", paging.Open, paging.LimitProbe(bad)...)
				paging.ExpectPrefix(p, "capability_id", want, 25, fmt.Sprintf("limit=%q counts as omitted: the default page", bad))
			}
			for _, limit := range []int{0, 50} {
				s.Step("CAP-009", "CORE-012")
				got, _ := paging.WalkOnce(ctx, c, "/capabilities", paging.Open, "capability_id", limit, want)
				s.Step("CAP-013")
				Expect(got).To(Equal(want), fmt.Sprintf("limit %d: rows in category then capability_id order across pages", limit))
			}
		})
	})
}

// capabilityDetailSpecs registers the specs of the capability detail.
func capabilityDetailSpecs(f *framework.Framework) {
	Describe("capabilities: detail", func() {
		f.Rule("CAP-019", "CAP-020", "CAP-021", "CAP-022", "CAP-024", "VER-013").It("answers each listed capability with a strict, price-free config_schema and an example_config that validates", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows := catalogue.Rows(ctx, c)
			checked := 0
			for _, row := range rows {
				id, _ := row["capability_id"].(string)
				st := row["status"]
				if st != "available" && st != "unknown" {
					continue
				}
				if checked == 40 {
					break // stays inside one key's read bucket with the list pages
				}
				checked++
				s.Step("CAP-019")
				r := catalogue.ReadDetail(ctx, c, id)
				// The schema rules first, judged on the schema wherever the answer holds it (the
				// detail's layout is not shown): a detail whose own fields break CAP-019 still has
				// its schema judged (issue 37).
				schema := answer.ObjectAt(r, "config_schema")
				s.Step("CAP-020")
				Expect(schema["additionalProperties"]).To(Equal(false), id+": config_schema is strict"+r.Describe())
				props, _ := schema["properties"].(map[string]any)
				s.Step("CAP-024")
				for _, res := range []string{"actor_id", "actor_image_asset_id", "voice_id", "approved_voice_generation_id"} {
					Expect(props).NotTo(HaveKey(res), id+": "+res+" goes on the submit body, never in config"+r.Describe())
				}
				s.Step("CAP-021")
				Expect(catalogue.PriceKeys(schema, "config_schema")).To(BeEmpty(), id+": config_schema carries no price (Capability: \"it carries no price\"), under any name, nesting or x- keyword"+r.Describe())
				s.Step("CAP-019")
				example := answer.ObjectAt(r, "example_config")
				s.Step("CAP-022", "VER-013")
				comp := jsonschema.NewCompiler()
				Expect(comp.AddResource("config_schema.json", schema)).To(Succeed(), id+r.Describe())
				sch, err := comp.Compile("config_schema.json")
				Expect(err).NotTo(HaveOccurred(), id+": config_schema is not a JSON Schema"+r.Describe())
				Expect(sch.Validate(example)).To(Succeed(), id+": example_config does not validate against config_schema"+r.Describe())
				s.Step("CAP-019")
				Expect(r.String("capability_id")).To(Equal(id), "the detail names the capability asked for"+r.Describe())
				catalogue.CheckRow(r, answer.AsObject(r, r.Doc(), "the answer"), id)
				if _, has := r.Lookup("next_action"); has { // the detail's layout is not shown
					Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
				}
			}
			if checked == 0 {
				s.Lacks("the target lists no available capability")
			}
		})

		f.Rule(rules("CAP-025", "ERR-016", "ERR-028")...).It("an unknown capability id answers 404 capability_unavailable with capability_status unknown", func(ctx context.Context, s *framework.Spec) {
			r := s.Client().Get(ctx, "/capabilities/no_such_capability_"+framework.RandomHex(8)).ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
		})

		f.Rule(rules("CAP-027", "CAP-016", "ERR-016")...).It("a coming_soon capability is listed and its detail answers 404 capability_unavailable coming_soon", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			row := catalogue.WithStatus(catalogue.Rows(ctx, c), "coming_soon")
			if row == nil {
				s.Lacks("the target lists no coming_soon capability")
			}
			s.Step(rules("CAP-027", "ERR-016")...)
			r := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("coming_soon"), r.Describe())
		})

		f.Rule(rules("CAP-028", "CAP-016", "ERR-017")...).It("a requires_plan capability is listed and its detail answers 403 required_plan naming the plan", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			row := catalogue.WithStatus(catalogue.Rows(ctx, c), "requires_plan")
			if row == nil {
				s.Lacks("the target lists no requires_plan capability for the run's workspace")
			}
			s.Step(rules("CAP-028", "ERR-017")...)
			r := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectError(http.StatusForbidden, "required_plan")
			Expect(r.String("error.capability_status")).To(Equal("requires_plan"), r.Describe())
			Expect(r.String("error.required_plan")).To(Equal(row["required_plan"]), "the refusal names the plan the row names"+r.Describe())
		})

		f.Rule(rules("CAP-029", "CAP-016")...).It("a capability listed as unknown answers its detail 200 but the estimate refuses it with capability_unavailable unknown", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			row := catalogue.WithStatus(catalogue.Rows(ctx, c), "unknown")
			if row == nil {
				s.Lacks("the target lists no capability with status unknown")
			}
			s.Step(rules("CAP-029")...)
			id := row["capability_id"].(string)
			d := c.Get(ctx, "/capabilities/"+id)
			// The text lists unknown among the detail's capability_unavailable causes as well as
			// among the listed statuses: that a listed unknown capability's detail answers 200 is
			// the reference's reading (CAP-029), judged with --strict.
			s.ReferenceOnly("CAP-029", "a capability listed as unknown answers its detail 200", func() {
				d.ExpectOK(http.StatusOK)
				Expect(d.String("status")).To(Equal("unknown"), d.Describe())
			})
			if d.Status != http.StatusOK {
				s.Lacks("the detail of the capability listed as unknown does not answer 200, so the suite has no valid config to estimate it with")
			}
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": answer.ObjectAt(catalogue.View(d), "example_config")}).
				ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
		})

		f.Rule("CAP-030").It("a business workspace reads a requires_plan capability as available", func(ctx context.Context, s *framework.Spec) {
			var business []string
			for _, row := range catalogue.Rows(ctx, s.Client()) {
				if row["status"] == "requires_plan" && row["required_plan"] == "business" {
					business = append(business, row["capability_id"].(string))
				}
			}
			if len(business) == 0 {
				s.Lacks("the target lists no capability requiring the business plan")
			}
			c := businessClient(ctx, s)
			for _, id := range business[:min(len(business), 10)] {
				r := catalogue.ReadDetail(ctx, c, id)
				Expect(r.String("status")).To(Equal("available"),
					id+" requires the business plan: a business workspace reads it available"+r.Describe())
				Expect(r.Doc()).NotTo(HaveKey("required_plan"), r.Describe())
			}
		})
	})

}

// withheldCapabilitySpecs registers the specs of a capability withheld from agents: withheld
// through control from a capability the spec saw listed, or the profile's withheld_capability_id,
// which the operator withheld in their catalogue.
func withheldCapabilitySpecs(f *framework.Framework) {
	Describe("capabilities: withheld from agents", func() {
		f.Rule(rules("CAP-015", "ERR-016")...).Needs(framework.Profile).It("a capability withheld from agents leaves the list, and reading, estimating or running it answers 404 capability_unavailable", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			var id string
			cfg, need := map[string]any{}, int64(100)
			if s.HasControl() {
				// With control the spec sees the capability listed and runnable first (it judges more).
				d := catalogue.Cheapest(ctx, c, "capability", func(map[string]any) bool { return true })
				id = d.String("capability_id")
				cfg = catalogue.CheapConfig(d)
				_, need = estimateOf(ctx, c, id, cfg, nil)
				hookDone(s, s.Control().SetOffered(ctx, id, false))
				DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetOffered(ctx, id, true) })
			} else {
				// Its schema is not readable: an empty config, as for a retired id (VER-010).
				id = s.WithheldCapabilityID()
			}
			rows, _ := paging.Walk(ctx, c, "/capabilities", paging.Open, 50, 100)
			Expect(paging.IDs(rows, "capability_id")).NotTo(ContainElement(id), "a capability not offered to agents is not listed")
			// Without control the config is empty, which a correct server may refuse first
			// (configFirst): the read is judged, an estimate or submit refused so is undecided.
			open := !s.HasControl()
			decided := true
			read := c.Get(ctx, "/capabilities/"+id).ExpectError(http.StatusNotFound, "capability_unavailable")
			est := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg})
			decided = expectUnavailable(est, open, false) && decided
			sub := refuseBy(ctx, c, submitBody(id, cfg, need, nil), func(r *framework.Response) {
				GinkgoHelper()
				decided = expectUnavailable(r, open, false) && decided
			})
			for _, r := range []*framework.Response{read, est, sub} {
				if r.Status == http.StatusNotFound {
					Expect(r.String("error.capability_status")).NotTo(BeEmpty(), "the refusal carries capability_status"+r.Describe())
				}
			}
			if !decided {
				framework.SkipFor(framework.Undecidable("the withheld capability " + id + " was answered 400 invalid_config, not capability_unavailable: " + configFirst))
			}
		})
	})
}

// retiredCapabilitySpecs registers the specs of retired capabilities.
func retiredCapabilitySpecs(f *framework.Framework) {
	Describe("capabilities: retired capabilities", func() {
		retired := func(s *framework.Spec) string {
			id := s.RetiredCapabilityID()
			if id == "" {
				s.Lacks("retired capabilities are not listed, so the suite cannot find one; set retired_capability_id (--retired-capability-id) to a capability the target retired")
			}
			return id
		}
		f.Rule(rules("CAP-026", "ERR-016")...).It("a retired capability id answers 404 capability_unavailable with capability_status retired", func(ctx context.Context, s *framework.Spec) {
			id := retired(s)
			r := s.Client().Get(ctx, "/capabilities/"+id).ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
		})

		f.Rule(rules("VER-010", "ERR-016")...).It("a retired capability is not listed and estimate and submit answer 404 capability_unavailable retired", func(ctx context.Context, s *framework.Spec) {
			id := retired(s)
			c := s.Client()
			Expect(paging.IDs(catalogue.Rows(ctx, c), "capability_id")).NotTo(ContainElement(id), "a retired capability leaves the list")
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": map[string]any{}}).
				ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
			r = refuse(ctx, c, submitBody(id, map[string]any{}, 100, nil), http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
		})
	})

}

// catalogueIDSpecs registers the specs of catalogue and config ids.
func catalogueIDSpecs(f *framework.Framework) {
	Describe("capabilities: catalogue and config ids", func() {
		f.Rule("ID-012").It("capability ids, workflow template keys and node ids are unprefixed slugs", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, id := range paging.IDs(catalogue.Rows(ctx, c), "capability_id") {
				Expect(id).To(MatchRegexp(catalogue.SlugPattern), "capability id "+id+" is a slug")
				Expect(id).NotTo(MatchRegexp(catalogue.PrefixedID), "capability id "+id+" is unprefixed (Id prefixes: \"Unprefixed ids: capability id (a slug ...)\"), not a prefix and 32 hex characters")
			}
			r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
			keyField, declared := c.ShapeIf("workflow.template_key") // the template record is not shown
			for i, t := range openRows(r) {
				tm := answer.AsObject(r, t, fmt.Sprintf("templates[%d]", i))
				if k, ok := tm[keyField].(string); declared && ok {
					Expect(k).To(MatchRegexp(catalogue.SlugPattern), r.Describe())
				}
				nodes, _ := tm["nodes"].([]any)
				for j, n := range nodes {
					nm := answer.AsObject(r, n, fmt.Sprintf("templates[%d].nodes[%d]", i, j))
					Expect(answer.String(r, nm, "node_id", "node")).To(MatchRegexp(catalogue.SlugPattern), r.Describe())
					Expect(answer.String(r, nm, "capability_id", "node")).To(MatchRegexp(catalogue.SlugPattern), r.Describe())
				}
			}
		})

		f.Rule(rules("ID-013", "ERR-024")...).It("a malformed asset id inside config answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			bad := []string{"ast_" + strings.ToUpper(framework.RandomHex(32)), "ast_" + framework.RandomHex(31), "AST_" + framework.RandomHex(32), "asset_" + framework.RandomHex(32), "gen_" + framework.RandomHex(32), "ast_" + framework.RandomHex(32) + " "}
			checked := 0
			if caps := catalogue.PlainFileCaps(ctx, c); len(caps) > 0 {
				fc := caps[0]
				for _, id := range bad {
					r := c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.ID, "config": uploads.WithAsset(answer.ObjectAt(fc.Detail, "example_config"), id)}).
						ExpectError(http.StatusBadRequest, "invalid_config")
					if fld, has := r.Lookup("error.field"); has {
						Expect(fld).To(HavePrefix("config."), r.Describe())
					}
				}
				checked++
			}
			// A file object's assetId, as image and video models take them.
			for _, d := range catalogue.AvailableDetails(ctx, c, 30) {
				ex := answer.ObjectAt(d, "example_config")
				hasObject := false
				for _, v := range ex {
					if arr, ok := v.([]any); ok && len(arr) > 0 {
						if m, ok := arr[0].(map[string]any); ok && m["assetId"] != nil {
							hasObject = true
						}
					}
				}
				if !hasObject {
					continue
				}
				for _, id := range bad[:3] {
					c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": uploads.WithAsset(ex, id)}).
						ExpectError(http.StatusBadRequest, "invalid_config")
				}
				checked++
				break
			}
			if checked == 0 {
				s.Lacks("no available capability's example_config names an upload")
			}
		})
	})

}
