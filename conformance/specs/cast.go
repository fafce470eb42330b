package specs

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

var snakeCase = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

func checkTags(r *framework.Response, row map[string]any, what string) {
	GinkgoHelper()
	for _, t := range stringList(r, row, "tags", what) {
		Expect(t).To(MatchRegexp(snakeCase.String()), what+": tags are snake_case"+r.Describe())
	}
}

func actors(f *framework.Framework) {
	Describe("actors", func() {
		f.Rule("ACTOR-001", "ACTOR-002", "ACTOR-003", "ACTOR-004", "ACTOR-005", "ACTOR-006", "ACTOR-011", "ID-005", "CORE-013").It("lists actors with the documented fields, own actors first, no total and no links", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := walk(ctx, c, "/actors", "actors", 48, 100)
			if len(rows) == 0 {
				Skip("unsupported: the target lists no actor")
			}
			Expect(pages[0].r.Doc()).NotTo(HaveKey("total"), "the actor list has no total"+pages[0].r.Describe())
			seenPlatform := false
			for _, p := range pages {
				for i, row := range p.rows {
					what := fmt.Sprintf("actors[%d]", i)
					Expect(stringField(p.r, row, "actor_id", what)).To(MatchRegexp(`^act_[0-9a-f]{32}$`), p.r.Describe())
					stringField(p.r, row, "name", what)
					nullableString(p.r, row, "description", what)
					if g, null := nullableString(p.r, row, "gender", what); !null {
						Expect(g).To(oneOf("female", "male", "nonbinary"), p.r.Describe())
					}
					if a, null := nullableString(p.r, row, "age_band", what); !null {
						Expect(a).To(oneOf("kid", "young_adult", "adult", "senior"), p.r.Describe())
					}
					checkTags(p.r, row, what)
					if v, null := nullableString(p.r, row, "default_voice_id", what); !null {
						Expect(v).To(MatchRegexp(`^voc_[0-9a-f]{32}$`), p.r.Describe())
					}
					nullableString(p.r, row, "default_voice_name", what)
					platform, ok := row["is_platform"].(bool)
					Expect(ok).To(BeTrue(), what+".is_platform is a boolean"+p.r.Describe())
					if platform {
						seenPlatform = true
					} else {
						Expect(seenPlatform).To(BeFalse(), "the workspace's own actors come before the platform cast"+p.r.Describe())
					}
					for _, link := range []string{"url", "preview_url", "image_url", "video_url", "download_url"} {
						Expect(row).NotTo(HaveKey(link), what+": no preview is returned"+p.r.Describe())
					}
				}
			}
		})

		f.Rule("ACTOR-009", "ACTOR-010").It("clamps limit (a page holds at most 48) and restarts on a bad cursor", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			def := getPage(ctx, c, "/actors", "actors")
			Expect(len(def.rows)).To(BeNumerically("<=", 25), def.r.Describe())
			big := getPage(ctx, c, "/actors", "actors", framework.Query("limit", "50"))
			Expect(len(big.rows)).To(BeNumerically("<=", 48), "a page holds at most 48 actors"+big.r.Describe())
			huge := getPage(ctx, c, "/actors", "actors", framework.Query("limit", "1000"))
			Expect(len(huge.rows)).To(BeNumerically("<=", 48), huge.r.Describe())
			Expect(ids(huge.rows, "actor_id")).To(Equal(ids(big.rows, "actor_id")), "limit 1000 is clamped like limit 50"+huge.r.Describe())
			bad := getPage(ctx, c, "/actors", "actors", framework.Query("cursor", "!!not-a-cursor!!"))
			Expect(ids(bad.rows, "actor_id")).To(Equal(ids(def.rows, "actor_id")), "a bad cursor restarts from the top"+bad.r.Describe())
		})

		f.Rule("ACTOR-007", "ACTOR-008").It("search matches name or description case-insensitively and treats % and _ literally", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := walk(ctx, c, "/actors", "actors", 48, 100)
			if len(all) == 0 {
				Skip("unsupported: the target lists no actor")
			}
			name, _ := all[0]["name"].(string)
			term := strings.ToUpper(name)
			if r := []rune(term); len(r) > 4 {
				term = string(r[1:4])
			}
			found, _ := walk(ctx, c, "/actors?search="+urlQuery(term), "actors", 48, 100)
			Expect(ids(found, "actor_id")).To(ContainElement(all[0]["actor_id"]), "a case-insensitive search finds the actor named "+name)
			for _, row := range found {
				n, _ := row["name"].(string)
				d, _ := row["description"].(string)
				Expect(strings.Contains(strings.ToLower(n+"\n"+d), strings.ToLower(term))).To(BeTrue(), "search matched an actor whose name and description lack "+term)
			}
			for _, wild := range []string{"%", "_"} {
				rows, _ := walk(ctx, c, "/actors?search="+urlQuery(wild), "actors", 48, 100)
				for _, row := range rows {
					n, _ := row["name"].(string)
					d, _ := row["description"].(string)
					Expect(n+d).To(ContainSubstring(wild), "%s is literal, not a wildcard", wild)
				}
			}
		})
	})
}

// urlQuery escapes a query value for a path string.
func urlQuery(s string) string { return url.QueryEscape(s) }

func voices(f *framework.Framework) {
	Describe("voices", func() {
		f.Rule("VOICE-001", "VOICE-002", "VOICE-003", "VOICE-004", "VOICE-005", "VOICE-009", "VOICE-010", "VOICE-011", "ID-005", "CORE-013").It("lists voices with the documented fields, sorted by name, total before paging", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := walk(ctx, c, "/voices", "voices", 10, 200)
			if len(rows) == 0 {
				Skip("unsupported: the target lists no voice")
			}
			for _, p := range pages {
				Expect(p.r.Int("total")).To(Equal(int64(len(rows))), "total counts every match, on every page"+p.r.Describe())
				for i, row := range p.rows {
					what := fmt.Sprintf("voices[%d]", i)
					Expect(stringField(p.r, row, "voice_id", what)).To(MatchRegexp(`^voc_[0-9a-f]{32}$`), p.r.Describe())
					stringField(p.r, row, "name", what)
					lang, langNull := nullableString(p.r, row, "language", what)
					gender, genderNull := nullableString(p.r, row, "gender", what)
					if !genderNull {
						Expect(gender).To(oneOf("female", "male", "nonbinary"), p.r.Describe())
					}
					checkTags(p.r, row, what)
					cloned, ok := row["is_cloned"].(bool)
					Expect(ok).To(BeTrue(), p.r.Describe())
					_, ok = row["is_premium"].(bool)
					Expect(ok).To(BeTrue(), p.r.Describe())
					_, ok = row["is_platform"].(bool)
					Expect(ok).To(BeTrue(), p.r.Describe())
					if cloned {
						Expect(langNull && genderNull).To(BeTrue(), what+": a cloned voice has no language and no gender"+p.r.Describe())
					} else if !langNull {
						Expect(lang).NotTo(BeEmpty(), p.r.Describe())
					}
					for _, link := range []string{"url", "preview_url", "audio_url", "sample_url"} {
						Expect(row).NotTo(HaveKey(link), what+": no preview audio is returned"+p.r.Describe())
					}
				}
			}
			names := make([]string, 0, len(rows))
			for _, r := range rows {
				n, _ := r["name"].(string)
				names = append(names, n)
			}
			folded := sort.SliceIsSorted(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
			Expect(sort.StringsAreSorted(names) || folded).To(BeTrue(), fmt.Sprintf("voices are sorted by name across pages: %v", names))
			seen := map[string]bool{}
			for _, id := range ids(rows, "voice_id") {
				Expect(seen[id]).To(BeFalse(), "voice "+id+" repeated across pages")
				seen[id] = true
			}
		})

		f.Rule("VOICE-006", "VOICE-007", "VOICE-010").It("search matches the name only, case-insensitively, and language filters exactly", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := walk(ctx, c, "/voices", "voices", 50, 100)
			if len(all) == 0 {
				Skip("unsupported: the target lists no voice")
			}
			name, _ := all[0]["name"].(string)
			term := strings.ToUpper(name)
			if r := []rune(term); len(r) > 3 {
				term = string(r[:3])
			}
			found, pages := walk(ctx, c, "/voices?search="+urlQuery(term), "voices", 50, 100)
			Expect(ids(found, "voice_id")).To(ContainElement(all[0]["voice_id"]))
			Expect(pages[0].r.Int("total")).To(Equal(int64(len(found))), pages[0].r.Describe())
			for _, row := range found {
				n, _ := row["name"].(string)
				Expect(strings.ToLower(n)).To(ContainSubstring(strings.ToLower(term)), "search matches the name only")
			}
			var lang string
			for _, row := range all {
				if l, ok := row["language"].(string); ok && l != "" {
					lang = l
					break
				}
			}
			if lang == "" {
				return
			}
			want := 0
			for _, row := range all {
				if row["language"] == lang {
					want++
				}
			}
			byLang, lp := walk(ctx, c, "/voices?language="+urlQuery(lang), "voices", 50, 100)
			Expect(byLang).To(HaveLen(want), "language keeps exactly the voices with that tag"+lp[0].r.Describe())
			for _, row := range byLang {
				Expect(row["language"]).To(Equal(lang))
			}
			upper := getPage(ctx, c, "/voices", "voices", framework.Query("language", strings.ToUpper(lang)+"-ZZ"))
			Expect(upper.rows).To(BeEmpty(), "language is an exact tag match"+upper.r.Describe())
		})

		f.Rule("VOICE-008").It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			def := getPage(ctx, c, "/voices", "voices")
			Expect(len(def.rows)).To(BeNumerically("<=", 25), def.r.Describe())
			total := def.r.Int("total")
			if total > 25 {
				Expect(def.rows).To(HaveLen(25), def.r.Describe())
			}
			big := getPage(ctx, c, "/voices", "voices", framework.Query("limit", "999"))
			Expect(len(big.rows)).To(Equal(int(min(total, 50))), "limit 999 is clamped to 50"+big.r.Describe())
		})
	})
}

func presets(f *framework.Framework) {
	Describe("presets", func() {
		f.Rule("PRESET-001", "PRESET-002", "PRESET-003", "PRESET-004", "PRESET-005", "PRESET-006", "PRESET-008", "PRESET-010", "PRESET-011", "ID-010").It("lists presets with their first templates, total and cursor", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := walk(ctx, c, "/presets", "presets", 5, 100)
			if len(rows) == 0 {
				Skip("unsupported: the target lists no preset")
			}
			for _, p := range pages {
				Expect(p.r.Int("total")).To(Equal(int64(len(rows))), "total counts the presets across all pages"+p.r.Describe())
				if p.cursor != nil {
					Expect(*p.cursor).To(Equal(p.rows[len(p.rows)-1]["capability_id"]), "next_cursor is the last row's capability_id"+p.r.Describe())
				}
				for i, row := range p.rows {
					what := fmt.Sprintf("presets[%d]", i)
					Expect(stringField(p.r, row, "capability_id", what)).To(HavePrefix("preset_"), p.r.Describe())
					stringField(p.r, row, "name", what)
					Expect(stringField(p.r, row, "output_kind", what)).To(oneOf("image", "video", "audio", "text"), p.r.Describe())
					status := stringField(p.r, row, "status", what)
					Expect(status).To(oneOf("available", "requires_plan", "coming_soon"), p.r.Describe())
					if status == "requires_plan" {
						stringField(p.r, row, "required_plan", what)
					} else {
						Expect(row).NotTo(HaveKey("required_plan"), p.r.Describe())
					}
					if d, has := row["description"]; has {
						Expect(d).To(And(BeAssignableToTypeOf(""), Not(BeEmpty())), what+": description is omitted when empty"+p.r.Describe())
					}
					_, ok := row["requires_template"].(bool)
					Expect(ok).To(BeTrue(), p.r.Describe())
					Expect(stringField(p.r, row, "next_action", what)).NotTo(BeEmpty(), p.r.Describe())
					tpls, ok := row["templates"].([]any)
					Expect(ok).To(BeTrue(), what+".templates is an array"+p.r.Describe())
					Expect(len(tpls)).To(BeNumerically("<=", 20), p.r.Describe())
					Expect(intField(p.r, row, "templates_total", what)).To(BeNumerically(">=", len(tpls)), p.r.Describe())
					for j, t := range tpls {
						checkTemplate(p.r, asObject(p.r, t, fmt.Sprintf("%s.templates[%d]", what, j)))
					}
				}
			}
		})

		f.Rule("PRESET-013", "PRESET-014").It("GET /presets/{id}/templates answers every live template", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, _ := walk(ctx, c, "/presets", "presets", 50, 100)
			if len(rows) == 0 {
				Skip("unsupported: the target lists no preset")
			}
			for _, row := range rows[:min(len(rows), 10)] {
				id := row["capability_id"].(string)
				r := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				Expect(r.String("capability_id")).To(Equal(id), r.Describe())
				r.String("name")
				Expect(r.String("status")).To(Equal(row["status"]), r.Describe())
				Expect(r.Bool("requires_template")).To(Equal(row["requires_template"]), r.Describe())
				Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
				tpls := r.Array("templates")
				total, _ := framework.AsInt(row["templates_total"])
				Expect(int64(len(tpls))).To(Equal(total), "every live template: as many as templates_total"+r.Describe())
				for i, t := range tpls {
					checkTemplate(r, asObject(r, t, fmt.Sprintf("templates[%d]", i)))
				}
				if row["status"] == "requires_plan" {
					Expect(r.String("required_plan")).To(Equal(row["required_plan"]), r.Describe())
				} else {
					Expect(r.Doc()).NotTo(HaveKey("required_plan"), r.Describe())
				}
			}
		})

		f.Rule(rules("PRESET-015", "ERR-029")...).It("a non-preset or misspelt id on GET /presets/{id}/templates answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			c.Get(ctx, "/presets/preset_no_such_"+randomHex(6)+"/templates").ExpectError(http.StatusNotFound, "not_found")
			for _, row := range catalogue(ctx, c) {
				if id, _ := row["capability_id"].(string); !strings.HasPrefix(id, "preset_") {
					c.Get(ctx, "/presets/"+id+"/templates").ExpectError(http.StatusNotFound, "not_found")
					break
				}
			}
		})

		f.Rule("PRESET-007").It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			def := getPage(ctx, c, "/presets", "presets")
			Expect(len(def.rows)).To(BeNumerically("<=", 25), def.r.Describe())
			total := def.r.Int("total")
			big := getPage(ctx, c, "/presets", "presets", framework.Query("limit", "999"))
			Expect(len(big.rows)).To(Equal(int(min(total, 50))), "limit 999 is clamped to 50"+big.r.Describe())
		})
	})
}

func checkTemplate(r *framework.Response, t map[string]any) {
	GinkgoHelper()
	Expect(stringField(r, t, "template_id", "template")).To(MatchRegexp(`^captpl_[0-9a-f]{32}$`), r.Describe())
	stringField(r, t, "name", "template")
	nullableString(r, t, "description", "template")
	nullableString(r, t, "category", "template")
	Expect(stringField(r, t, "preview_url", "template")).NotTo(BeEmpty(), r.Describe())
	Expect(stringField(r, t, "preview_kind", "template")).To(oneOf("video", "image"), r.Describe())
}
