package specs

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// catalogueSpecs registers the specs of the actor and voice catalogue.
func catalogueSpecs(f *framework.Framework) {
	actorSpecs(f)
	voiceSpecs(f)
	castSearchSpecs(f)
	castByPlanSpecs(f)
}

// actorSpecs registers the specs of actors.
func actorSpecs(f *framework.Framework) {
	Describe("actors: list and detail", func() {
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

// voiceSpecs registers the specs of voices.
func voiceSpecs(f *framework.Framework) {
	Describe("voices: list and detail", func() {
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
			expectDefaultAndClamp(ctx, s.Client(), "/voices", "voices")
		})
	})

}

// castSearchSpecs registers the specs of the voice and actor filters and searches.
func castSearchSpecs(f *framework.Framework) {
	Describe("actors and voices: filters and search", func() {
		f.Rule("VOICE-007").It("language is an exact, case-sensitive tag: a shorter prefix or another case of a tag keeps only voices with exactly that tag", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := walk(ctx, c, "/voices", "voices", 50, 100)
			byTag := map[string]int{}
			for _, row := range all {
				if l, ok := row["language"].(string); ok && l != "" {
					byTag[l]++
				}
			}
			probes := map[string]bool{}
			for tag := range byTag {
				if r := []rune(tag); len(r) > 1 {
					probes[string(r[:len(r)-1])] = true
				}
				if up := strings.ToUpper(tag); up != tag {
					probes[up] = true
				}
			}
			if len(probes) == 0 {
				Skip("unsupported: the target lists no voice with a language tag of two or more characters")
			}
			for probe := range probes {
				rows, _ := walk(ctx, c, "/voices?language="+urlQuery(probe), "voices", 50, 100)
				Expect(rows).To(HaveLen(byTag[probe]), "language="+probe+" keeps only the voices tagged exactly "+probe)
				for _, row := range rows {
					Expect(row["language"]).To(Equal(probe))
				}
			}
		})

		f.Rule("VOICE-006").It("search matches only the name: a voice's tag or language that no name contains finds nothing", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := walk(ctx, c, "/voices", "voices", 50, 100)
			var names, tags, langs []string
			for _, row := range all {
				n, _ := row["name"].(string)
				names = append(names, n)
				if l, ok := row["language"].(string); ok {
					langs = append(langs, l)
				}
				if ts, ok := row["tags"].([]any); ok {
					for _, t := range ts {
						if str, ok := t.(string); ok {
							tags = append(tags, str)
						}
					}
				}
			}
			checked := 0
			for _, list := range [][]string{tags, langs} {
				slices.Sort(list)
				term := notIn(slices.Compact(list), names)
				if term == "" {
					continue
				}
				rows, _ := walk(ctx, c, "/voices?search="+urlQuery(term), "voices", 50, 100)
				Expect(rows).To(BeEmpty(), "search="+term+" names a tag or language, not a name: it matches nothing")
				checked++
			}
			if checked == 0 {
				Skip("unsupported: every voice tag and language also appears in a voice name")
			}
		})

		f.Rule("ACTOR-007").It("actor search matches only name and description: a tag that neither contains finds nothing", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := walk(ctx, c, "/actors", "actors", 48, 100)
			var texts, tags []string
			for _, row := range all {
				n, _ := row["name"].(string)
				d, _ := row["description"].(string)
				texts = append(texts, n, d)
				if ts, ok := row["tags"].([]any); ok {
					for _, t := range ts {
						if str, ok := t.(string); ok {
							tags = append(tags, str)
						}
					}
				}
			}
			slices.Sort(tags)
			term := notIn(slices.Compact(tags), texts)
			if term == "" {
				Skip("unsupported: every actor tag also appears in an actor name or description")
			}
			rows, _ := walk(ctx, c, "/actors?search="+urlQuery(term), "actors", 48, 100)
			Expect(rows).To(BeEmpty(), "search="+term+" is a tag, in no name or description: it matches nothing")
		})
	})

}

// castByPlanSpecs registers the specs of the actor cast by plan.
func castByPlanSpecs(f *framework.Framework) {
	Describe("actors: cast by plan", func() {
		f.Rule("ACTOR-014").It("a business workspace lists at least the actors a pro workspace lists", func(ctx context.Context, s *framework.Spec) {
			list := func(plan string) []string {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: plan})
				c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
				rows, _ := walk(ctx, c, "/actors", "actors", 48, 40)
				return ids(rows, "actor_id")
			}
			pro, business := list("pro"), list("business")
			if len(pro) == 0 {
				Skip("unsupported: a pro workspace lists no actor")
			}
			Expect(business).To(ContainElements(pro), "every actor a pro workspace sees, a business workspace sees")
			Expect(len(business)).To(BeNumerically(">=", len(pro)))
		})
	})

}
