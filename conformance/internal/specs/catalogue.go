package specs

import (
	"context"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// catalogueSpecs registers the specs of the actor and voice catalogue.
func catalogueSpecs(f *framework.Framework) {
	actorSpecs(f)
	voiceSpecs(f)
	castSearchSpecs(f)
	castByPlanSpecs(f)
	castStateSpecs(f)
	hiddenCastSpecs(f)
	ownCatalogueSpecs(f)
}

// actorSpecs registers the specs of actors.
func actorSpecs(f *framework.Framework) {
	Describe("actors: list and detail", func() {
		f.Rule("ACTOR-001", "ACTOR-002", "ACTOR-003", "ACTOR-004", "ACTOR-005", "ACTOR-006", "ACTOR-011", "ID-005", "CORE-013").It("lists actors with the documented fields, own actors first, no total and no links", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
			if len(rows) == 0 {
				s.Lacks("the target lists no actor")
			}
			s.Step("ACTOR-001")
			Expect(pages[0].R.Doc()).NotTo(HaveKey("total"), "the actor list has no total"+pages[0].R.Describe())
			seenPlatform := false
			for _, p := range pages {
				for i, row := range p.Rows {
					what := fmt.Sprintf("actors[%d]", i)
					s.Step("ACTOR-002", "ID-005")
					Expect(answer.String(p.R, row, "actor_id", what)).To(MatchRegexp(judge.IDPattern("act_")), p.R.Describe())
					answer.String(p.R, row, "name", what)
					answer.NullableString(p.R, row, "description", what)
					s.Step("ACTOR-002", "ACTOR-003")
					if g, null := answer.NullableString(p.R, row, "gender", what); !null {
						Expect(g).To(answer.OneOf("female", "male", "nonbinary"), p.R.Describe())
					}
					s.Step("ACTOR-002", "ACTOR-004")
					if a, null := answer.NullableString(p.R, row, "age_band", what); !null {
						Expect(a).To(answer.OneOf("kid", "young_adult", "adult", "senior"), p.R.Describe())
					}
					s.Step("ACTOR-005")
					catalogue.CheckTags(p.R, row, what)
					s.Step("ACTOR-002", "ID-005")
					if v, null := answer.NullableString(p.R, row, "default_voice_id", what); !null {
						Expect(v).To(MatchRegexp(judge.IDPattern("voc_")), p.R.Describe())
					}
					answer.NullableString(p.R, row, "default_voice_name", what)
					platform, ok := row["is_platform"].(bool)
					Expect(ok).To(BeTrue(), what+".is_platform is a boolean"+p.R.Describe())
					s.Step("ACTOR-011")
					if platform {
						seenPlatform = true
					} else {
						Expect(seenPlatform).To(BeFalse(), "the workspace's own actors come before the platform cast"+p.R.Describe())
					}
					s.Step("ACTOR-006", "CORE-013")
					answer.NoLinks(row, what+" (no preview image or clip is returned)")
				}
			}
		})

		f.Rule("ACTOR-009", "ACTOR-010").It("clamps limit (a page holds at most 48) and restarts on a bad cursor", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			s.Step("ACTOR-009")
			def := paging.Get(ctx, c, "/actors", "actors")
			Expect(len(def.Rows)).To(BeNumerically("<=", 25), def.R.Describe())
			big := paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", "50"))
			Expect(len(big.Rows)).To(BeNumerically("<=", 48), "a page holds at most 48 actors"+big.R.Describe())
			huge := paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", "1000"))
			Expect(len(huge.Rows)).To(BeNumerically("<=", 48), huge.R.Describe())
			Expect(paging.IDs(huge.Rows, "actor_id")).To(Equal(paging.IDs(big.Rows, "actor_id")), "limit 1000 is clamped like limit 50"+huge.R.Describe())
			s.Step("ACTOR-010")
			bad := paging.Get(ctx, c, "/actors", "actors", framework.Query("cursor", "!!not-a-cursor!!"))
			Expect(paging.IDs(bad.Rows, "actor_id")).To(Equal(paging.IDs(def.Rows, "actor_id")), "a bad cursor restarts from the top"+bad.R.Describe())
		})

		f.Rule("ACTOR-015").It("an undocumented filter (gender, age_band, tags, is_platform) does not narrow the list", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			plain := paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", "48"))
			if len(plain.Rows) == 0 {
				s.Lacks("the target lists no actor")
			}
			// Filter values an actor of the first page has, so a server honouring the filter would
			// keep some rows and drop others.
			first := plain.Rows[0]
			probes := [][2]string{{"is_platform", fmt.Sprint(!(first["is_platform"] == true))}}
			for _, k := range []string{"gender", "age_band"} {
				for _, row := range plain.Rows {
					if v, ok := row[k].(string); ok && v != "" {
						probes = append(probes, [2]string{k, v})
						break
					}
				}
			}
			if tags, _ := first["tags"].([]any); len(tags) > 0 {
				probes = append(probes, [2]string{"tags", fmt.Sprint(tags[0])})
			}
			for _, q := range probes {
				r := c.Get(ctx, "/actors", framework.Query("limit", "48"), framework.Query(q[0], q[1]))
				if r.Status != http.StatusOK {
					r.ExpectError(http.StatusBadRequest, "invalid_config") // refusing an unknown parameter is an open choice
					continue
				}
				got := paging.IDs(paging.From(r, "actors").Rows, "actor_id")
				// Every actor on the unfiltered page both before and after (the cast can change
				// meanwhile) is on the filtered one.
				after := paging.IDs(paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", "48")).Rows, "actor_id")
				for _, id := range paging.IDs(plain.Rows, "actor_id") {
					if slices.Contains(after, id) {
						Expect(got).To(ContainElement(id), "GET /actors has \"no other filters\": "+q[0]+"="+q[1]+" answers the unfiltered page"+r.Describe())
					}
				}
			}
		})

		f.Rule("ACTOR-007", "ACTOR-008").It("search matches name or description case-insensitively and treats % and _ literally", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
			if len(all) == 0 {
				s.Lacks("the target lists no actor")
			}
			name, _ := all[0]["name"].(string)
			term := strings.ToUpper(name)
			if r := []rune(term); len(r) > 4 {
				term = string(r[1:4])
			}
			s.Step("ACTOR-007")
			found, _ := paging.Walk(ctx, c, "/actors?search="+urlQuery(term), "actors", 48, 100)
			Expect(paging.IDs(found, "actor_id")).To(ContainElement(all[0]["actor_id"]), "a case-insensitive search finds the actor named "+name)
			for _, row := range found {
				n, _ := row["name"].(string)
				d, _ := row["description"].(string)
				Expect(strings.Contains(strings.ToLower(n+"\n"+d), strings.ToLower(term))).To(BeTrue(), "search matched an actor whose name and description lack "+term)
			}
			// "search (name or description ...)": a word found only in an actor's description finds
			// it too (a server searching names alone passes the name probe above).
			if actor, word := descriptionOnlyWord(all); word != "" {
				found, _ := paging.Walk(ctx, c, "/actors?search="+urlQuery(strings.ToUpper(word)), "actors", 48, 100)
				Expect(paging.IDs(found, "actor_id")).To(ContainElement(actor["actor_id"]), "search "+strings.ToUpper(word)+" (a word of the description of "+fmt.Sprint(actor["actor_id"])+" and not of its name) finds it: search matches the description too")
			}
			s.Step("ACTOR-008")
			for _, wild := range []string{"%", "_"} {
				rows, _ := paging.Walk(ctx, c, "/actors?search="+urlQuery(wild), "actors", 48, 100)
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
		f.Rule("VOICE-001", "VOICE-002", "VOICE-003", "VOICE-004", "VOICE-005", "VOICE-009", "VOICE-010", "VOICE-011", "ID-005", "CORE-013", "CORE-012").It("lists voices with the documented fields, sorted by name, total before paging", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			rows, pages := paging.Walk(ctx, c, "/voices", "voices", 10, 200)
			if len(rows) == 0 {
				s.Lacks("the target lists no voice")
			}
			s.Step("CORE-012")
			big, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
			Expect(paging.IDs(rows, "voice_id")).To(ConsistOf(paging.IDs(big, "voice_id")), "a walk by pages of 10 visits every voice a walk by pages of 50 visits, each once")
			for _, p := range pages {
				s.Step("VOICE-010")
				Expect(p.R.Int("total")).To(Equal(int64(len(rows))), "total counts every match, on every page"+p.R.Describe())
				for i, row := range p.Rows {
					what := fmt.Sprintf("voices[%d]", i)
					s.Step("VOICE-002", "ID-005")
					Expect(answer.String(p.R, row, "voice_id", what)).To(MatchRegexp(judge.IDPattern("voc_")), p.R.Describe())
					s.Step("VOICE-002", "VOICE-003")
					answer.String(p.R, row, "name", what)
					lang, langNull := answer.NullableString(p.R, row, "language", what)
					gender, genderNull := answer.NullableString(p.R, row, "gender", what)
					if !genderNull {
						Expect(gender).To(answer.OneOf("female", "male", "nonbinary"), p.R.Describe())
					}
					s.Step("VOICE-004")
					catalogue.CheckTags(p.R, row, what)
					s.Step("VOICE-002", "VOICE-003")
					cloned, ok := row["is_cloned"].(bool)
					Expect(ok).To(BeTrue(), p.R.Describe())
					_, ok = row["is_premium"].(bool)
					Expect(ok).To(BeTrue(), p.R.Describe())
					_, ok = row["is_platform"].(bool)
					Expect(ok).To(BeTrue(), p.R.Describe())
					if cloned {
						Expect(langNull && genderNull).To(BeTrue(), what+": a cloned voice has no language and no gender"+p.R.Describe())
					} else if !langNull {
						Expect(lang).NotTo(BeEmpty(), p.R.Describe())
					}
					s.Step("VOICE-005", "CORE-013")
					answer.NoLinks(row, what+" (no preview audio is returned)")
				}
			}
			names := make([]string, 0, len(rows))
			for _, r := range rows {
				n, _ := r["name"].(string)
				names = append(names, n)
			}
			s.Step("VOICE-011")
			folded := sort.SliceIsSorted(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
			Expect(sort.StringsAreSorted(names) || folded).To(BeTrue(), fmt.Sprintf("voices are sorted by name across pages: %v", names))
			s.Step("VOICE-009")
			seen := map[string]bool{}
			for _, id := range paging.IDs(rows, "voice_id") {
				Expect(seen[id]).To(BeFalse(), "voice "+id+" repeated across pages")
				seen[id] = true
			}
		})

		f.Rule("VOICE-006", "VOICE-007", "VOICE-010").It("search matches the name only, case-insensitively, and language filters exactly", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
			if len(all) == 0 {
				s.Lacks("the target lists no voice")
			}
			name, _ := all[0]["name"].(string)
			term := strings.ToUpper(name)
			if r := []rune(term); len(r) > 3 {
				term = string(r[:3])
			}
			found, pages := paging.Walk(ctx, c, "/voices?search="+urlQuery(term), "voices", 50, 100)
			s.Step("VOICE-006")
			Expect(paging.IDs(found, "voice_id")).To(ContainElement(all[0]["voice_id"]))
			s.Step("VOICE-010")
			Expect(pages[0].R.Int("total")).To(Equal(int64(len(found))), pages[0].R.Describe())
			s.Step("VOICE-006")
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
			s.Step("VOICE-007")
			byLang, lp := paging.Walk(ctx, c, "/voices?language="+urlQuery(lang), "voices", 50, 100)
			Expect(byLang).To(HaveLen(want), "language keeps exactly the voices with that tag"+lp[0].R.Describe())
			for _, row := range byLang {
				Expect(row["language"]).To(Equal(lang))
			}
			upper := paging.Get(ctx, c, "/voices", "voices", framework.Query("language", strings.ToUpper(lang)+"-ZZ"))
			Expect(upper.Rows).To(BeEmpty(), "language is an exact tag match"+upper.R.Describe())
		})

		f.Rule("VOICE-008").It("limit defaults to 25 and clamps to 50", func(ctx context.Context, s *framework.Spec) {
			paging.ExpectDefaultAndClamp(ctx, s.Client(), "/voices", "voices")
		})
	})

}

// castSearchSpecs registers the specs of the voice and actor filters and searches.
func castSearchSpecs(f *framework.Framework) {
	Describe("actors and voices: filters and search", func() {
		f.Rule("VOICE-007").It("language is an exact, case-sensitive tag: a shorter prefix or another case of a tag keeps only voices with exactly that tag", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
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
				s.Lacks("the target lists no voice with a language tag of two or more characters")
			}
			for probe := range probes {
				rows, _ := paging.Walk(ctx, c, "/voices?language="+urlQuery(probe), "voices", 50, 100)
				Expect(rows).To(HaveLen(byTag[probe]), "language="+probe+" keeps only the voices tagged exactly "+probe)
				for _, row := range rows {
					Expect(row["language"]).To(Equal(probe))
				}
			}
		})

		f.Rule("VOICE-006").It("search matches only the name: a voice's tag or language that no name contains finds nothing", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
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
				rows, _ := paging.Walk(ctx, c, "/voices?search="+urlQuery(term), "voices", 50, 100)
				Expect(rows).To(BeEmpty(), "search="+term+" names a tag or language, not a name: it matches nothing")
				checked++
			}
			if checked == 0 {
				s.Lacks("every voice tag and language also appears in a voice name")
			}
		})

		f.Rule("ACTOR-007").It("actor search matches only name and description: a tag that neither contains finds nothing", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
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
				s.Lacks("every actor tag also appears in an actor name or description")
			}
			rows, _ := paging.Walk(ctx, c, "/actors?search="+urlQuery(term), "actors", 48, 100)
			Expect(rows).To(BeEmpty(), "search="+term+" is a tag, in no name or description: it matches nothing")
		})
	})

}

// castByPlanSpecs registers the specs of the actor cast by plan.
func castByPlanSpecs(f *framework.Framework) {
	Describe("actors: cast by plan", func() {
		f.Rule("ACTOR-014").Needs(framework.BusinessKey).It("a business workspace lists at least the actors a pro workspace lists", func(ctx context.Context, s *framework.Spec) {
			cast := func(c *framework.Client) []string {
				rows, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 40)
				var out []string
				for _, r := range rows {
					if r["is_platform"] != false { // a workspace's own actor is no plan's cast
						out = append(out, fmt.Sprint(r["actor_id"]))
					}
				}
				return out
			}
			var pro, business []string
			if s.HasControl() {
				list := func(plan string) []string {
					ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: plan})
					c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
					return cast(c)
				}
				pro, business = list("pro"), list("business")
			} else {
				// The profile's business_key, the plan that unlocks every requires_plan capability
				// (CAP-030), against key's workspace, on a plan below it (pro, the mock's) or on it:
				// a higher plan sees no less of the cast than any lower one.
				pro, business = cast(s.Client()), cast(s.RoleKey(framework.BusinessKey))
			}
			if len(pro) == 0 {
				s.Lacks("a pro workspace lists no actor")
			}
			Expect(business).To(ContainElements(pro), "every actor a pro workspace sees, a business workspace sees")
			Expect(len(business)).To(BeNumerically(">=", len(pro)))
		})
	})

}

// ownCatalogueSpecs registers the specs of a workspace's own actor and cloned voice: made through
// control in a workspace of the spec's own, or the profile's (own_catalogue_key, own_actor_id,
// own_cloned_voice_id), which the operator made in their app.
func ownCatalogueSpecs(f *framework.Framework) {
	Describe("actors and voices: a workspace's own", func() {
		const untagged = "an actor made without tags lists tags [], and a cloned voice is listed with no language and no gender and tags an array"
		f.Rule("ACTOR-005", "VOICE-003", "VOICE-004").It(untagged, func(ctx context.Context, s *framework.Spec) {
			var (
				c            *framework.Client
				actors       []string // made without tags: the workspace's own, and with control a cast actor
				clonedVoices string
			)
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
				tag := framework.RandomHex(6)
				cast := addActor(ctx, s, "", map[string]any{"name": "Conformance untagged cast " + tag})
				DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetActorState(ctx, cast, "disabled") })
				actors = []string{addActor(ctx, s, ws.ID, map[string]any{"name": "Conformance untagged own " + tag}), cast}
				v, err := s.Control().CloneVoice(ctx, ws.ID, "Conformance clone "+tag)
				hookDone(s, err)
				clonedVoices = v
			} else {
				var actor string
				c, actor, clonedVoices = s.OwnCatalogue()
				actors = []string{actor}
			}
			// Made without tags: an empty array, never null (a null there also breaks the REST
			// description on the list call itself).
			s.Step("ACTOR-005")
			rows, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
			for _, id := range actors {
				row := catalogue.RowOf(rows, "actor_id", id)
				Expect(row).NotTo(BeNil(), "the actor "+id+" (ready) is listed to its workspace")
				Expect(row["tags"]).To(And(BeAssignableToTypeOf([]any{}), BeEmpty()), id+": an actor made without tags lists tags [] (never null)")
			}
			s.Step("VOICE-003")
			voices, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
			row := catalogue.RowOf(voices, "voice_id", clonedVoices)
			Expect(row).NotTo(BeNil(), "the workspace's cloned voice "+clonedVoices+" (active) is listed to it")
			Expect(row["is_cloned"]).To(Equal(true), clonedVoices+" is a cloned voice: is_cloned true")
			Expect(row).To(And(HaveKeyWithValue("language", BeNil()), HaveKeyWithValue("gender", BeNil())),
				clonedVoices+": a cloned voice has no language and no gender (both null)")
			// Its tags are an array like any voice's, never null, though nobody tagged it.
			s.Step("VOICE-004")
			Expect(row["tags"]).To(BeAssignableToTypeOf([]any{}), clonedVoices+": a cloned voice's tags is an array, never null")
		})
	})
}

// castStateSpecs registers the specs of actor and voice states set up through control: actors
// processing, disabled, added with known creation times; voices deactivated or cloned.
func castStateSpecs(f *framework.Framework) {
	Describe("actors and voices: states set through control", func() {
		f.Rule("ACTOR-011", "ACTOR-012").ControlBecause("an actor row shows neither its creation time nor core-cast membership: the order is judged on actors made with both known").It("own actors, then the core cast, then the rest, newest first in each group, whatever order they were made in", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			now := s.ClockNow(ctx)
			at := func(h int) string { return now.Add(time.Duration(h) * time.Hour).UTC().Format(time.RFC3339) }
			tag := framework.RandomHex(6)
			mk := func(workspace, name string, hours int, core bool) string {
				body := map[string]any{"name": "Conformance " + name + " " + tag, "created_at": at(hours)}
				if workspace == "" {
					body["core_cast"] = core
				}
				id := addActor(ctx, s, workspace, body)
				if workspace == "" {
					DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetActorState(ctx, id, "disabled") })
				}
				return id
			}
			// Made out of order: the list must order them by group and creation time, not by
			// when they were made.
			ownOld := mk(ws.ID, "own old", -3, false)
			ownNew := mk(ws.ID, "own new", -1, false)
			ownMid := mk(ws.ID, "own mid", -2, false)
			restNewest := mk("", "rest newest", -1, false)
			coreOld := mk("", "core old", -3, true)
			restOld := mk("", "rest old", -5, false)
			coreNew := mk("", "core new", -2, true)
			want := []string{ownNew, ownMid, ownOld, coreNew, coreOld, restNewest, restOld}
			// (Made without tags, they list tags []: ACTOR-005, ownCatalogueSpecs.)
			s.Step("ACTOR-011", "ACTOR-012")
			rows, pages := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
			listed := paging.IDs(rows, "actor_id")
			var got []string
			for _, id := range listed {
				if slices.Contains(want, id) {
					got = append(got, id)
				}
			}
			Expect(got).To(Equal(want), "own actors first, then the core cast, then the rest of the cast, newest first in each group (ids in expected order: own new, mid, old; core new, old; rest newest, old)")
			s.Step("ACTOR-011")
			actorRowsFixed(pages, []string{ownNew, ownMid, ownOld}, []string{coreNew, coreOld, restNewest, restOld})
		})

		f.Rule("CORE-012", "ACTOR-012").ControlBecause("actors made at one instant are made only through control or the app, and a row does not show the instant").It("actors made at the same instant are each listed once when paged one or two at a time: the cursor does not skip ties", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			at := s.ClockNow(ctx).Add(-time.Hour).UTC().Format(time.RFC3339)
			tag := framework.RandomHex(6)
			var tied []string
			for i := range 4 {
				tied = append(tied, addActor(ctx, s, ws.ID, map[string]any{"name": fmt.Sprintf("Conformance tie %d %s", i, tag), "created_at": at}))
			}
			// "Order: workspace's own actors first ... newest first in each group" leaves the order of
			// equal times open; a keyset cursor must still visit each row once ("send next_cursor
			// back as cursor"), so a cursor keyed on the time alone, skipping its ties, loses rows.
			s.Step("CORE-012")
			for _, limit := range []int{1, 2, 3} {
				// Each walk reads every page; a minute between walks keeps them inside the key's
				// read bucket even where pages are shorter than the limit (more pages per walk).
				s.Advance(ctx, contract.BucketWindow.Seconds()+1)
				rows, _ := paging.Walk(ctx, c, "/actors", "actors", limit, 200)
				listed := paging.IDs(rows, "actor_id")
				for _, id := range tied {
					n := 0
					for _, l := range listed {
						if l == id {
							n++
						}
					}
					Expect(n).To(Equal(1), fmt.Sprintf("actor %s (one of four made at %s) is listed exactly once when paged %d at a time, not %d times", id, at, limit, n))
				}
				s.Step("ACTOR-012")
				Expect(listed[:4]).To(ConsistOf(tied), "the workspace's own actors (four, made at one instant) come first")
				s.Step("CORE-012")
			}
		})

		f.Rule("ACTOR-009").It("with more than 50 actors, a default page holds at most 25 and a page never more than 48", func(ctx context.Context, s *framework.Spec) {
			c := s.Client() // without control: the key's own list, read as it is
			if s.HasControl() {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
				c, _ = ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
				for n := len(actorIDs(ctx, c)); n <= 50; n++ {
					addActor(ctx, s, ws.ID, map[string]any{"name": fmt.Sprintf("Conformance extra %02d", n)})
				}
			}
			def := paging.Get(ctx, c, "/actors", "actors")
			// A page can be shorter than limit: only the most a page holds is checkable.
			all := actorIDs(ctx, c)
			longListHolds(s, len(all), "actors", shortTargetList)
			paging.ExpectPrefix(def, "actor_id", all, 25, "the default page of a list of more than 50")
			for _, l := range []string{"48", "50", "1000"} {
				p := paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", l))
				paging.ExpectPrefix(p, "actor_id", all, 48, "limit="+l+" on more than 50 actors: a page holds at most 48")
			}
			p := paging.Get(ctx, c, "/actors", "actors", framework.Query("limit", "30"))
			paging.ExpectPrefix(p, "actor_id", all, 30, "limit=30")
		})

		f.Rule("VOICE-011", "VOICE-008").Needs(framework.LongListsKey).It("with more than 50 voices, pages hold 25 by default and 50 at most, in name order whatever order the voices were made in", func(ctx context.Context, s *framework.Spec) {
			if !s.HasControl() {
				longVoiceListAsIs(ctx, s)
				return
			}
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			tag := framework.RandomHex(4)
			first := paging.Get(ctx, c, "/voices", "voices")
			var made []string
			for n := int(first.R.Int("total")); n <= 52 || len(made) < 3; n++ {
				// Made in descending name order; the list must sort them.
				name := fmt.Sprintf("Conformance %s %03d", tag, 999-len(made))
				id, err := s.Control().CloneVoice(ctx, ws.ID, name)
				hookDone(s, err)
				made = append(made, id)
			}
			s.Step("VOICE-008")
			def := paging.Get(ctx, c, "/voices", "voices")
			Expect(len(def.Rows)).To(BeNumerically("<=", 25), "the default page of more than 50 voices holds at most 25"+def.R.Describe())
			big := paging.Get(ctx, c, "/voices", "voices", framework.Query("limit", "999"))
			Expect(len(big.Rows)).To(BeNumerically("<=", 50), "limit 999 on more than 50 voices is clamped to 50"+big.R.Describe())
			s.Step("VOICE-011")
			rows, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
			var got []string
			for _, row := range rows {
				if id, _ := row["voice_id"].(string); slices.Contains(made, id) {
					got = append(got, id)
				}
			}
			want := slices.Clone(made)
			slices.Reverse(want)
			Expect(got).To(Equal(want), "voices made in descending name order are listed by name (ascending)")
		})
	})
}

// hiddenCastSpecs registers the specs of hidden actors and voices: states set through control in a
// workspace of the spec's own, or the profile's (own_processing_actor_id, own_disabled_actor_id,
// own_deactivated_voice_id in own_catalogue_key's workspace), which the operator made in their app.
func hiddenCastSpecs(f *framework.Framework) {
	Describe("actors and voices: hidden states", func() {
		f.Rule("ACTOR-013", "ACTOR-011").Needs(framework.Profile).It("actors still processing or disabled are hidden, and listed again once ready (the workspace's own with is_platform false)", func(ctx context.Context, s *framework.Spec) {
			if s.HasControl() {
				hiddenActorsThroughControl(ctx, s)
				return
			}
			// The profile's own actors: the ready one listed, the processing and disabled ones
			// hidden. Seeing one listed again once ready needs control.
			c, ready, processing, disabled := s.OwnHiddenActors()
			rows, pages := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
			listed := paging.IDs(rows, "actor_id")
			Expect(listed).To(ContainElement(ready), "a ready actor of the workspace's own is listed")
			s.Step("ACTOR-011")
			actorRowsFixed(pages, []string{ready}, nil)
			if f.Capabilities().SecondWorkspace {
				// A workspace lists its own actors and the cast: an actor that two workspaces
				// both list is the service's cast, is_platform true (the control path makes its
				// own; this one reads the main and the second workspace's lists).
				main, mainPages := paging.Walk(ctx, s.Client(), "/actors", "actors", 48, 100)
				other, _ := paging.Walk(ctx, s.OtherClient(), "/actors", "actors", 48, 100)
				otherIDs := paging.IDs(other, "actor_id")
				var cast []string
				for _, id := range paging.IDs(main, "actor_id") {
					if slices.Contains(otherIDs, id) {
						cast = append(cast, id)
					}
				}
				actorRowsFixed(mainPages, nil, cast)
			}
			s.Step("ACTOR-013")
			Expect(listed).NotTo(ContainElement(processing), "an actor still processing ("+processing+") is hidden")
			Expect(listed).NotTo(ContainElement(disabled), "a disabled actor ("+disabled+") is hidden")
		})

		f.Rule("VOICE-012", "VOICE-010").Needs(framework.Profile).It("a deactivated voice leaves the list and its total; a cloned voice of the workspace is listed until deactivated", func(ctx context.Context, s *framework.Spec) {
			if s.HasControl() {
				deactivatedVoicesThroughControl(ctx, s)
				return
			}
			// The profile's own cloned voices: the active one listed, the deactivated one neither
			// listed nor counted. Seeing one leave the list when deactivated needs control.
			c, active, deactivated := s.OwnDeactivatedVoice()
			rows, pages := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
			listed := paging.IDs(rows, "voice_id")
			s.Step("VOICE-012")
			Expect(listed).NotTo(ContainElement(deactivated), "a deactivated cloned voice ("+deactivated+") is not listed")
			i := slices.Index(listed, active)
			Expect(i).To(BeNumerically(">=", 0), "the workspace's active cloned voice "+active+" is listed")
			Expect(rows[i]["is_cloned"]).To(Equal(true), "a cloned voice reads is_cloned true")
			s.Step("VOICE-010", "VOICE-012")
			for _, p := range pages {
				Expect(p.R.Int("total")).To(Equal(int64(len(rows))), "total counts the voices listed, not the deactivated one"+p.R.Describe())
			}
		})
	})
}

// hiddenActorsThroughControl is ACTOR-013's spec with control: actors of the spec's own workspace
// made processing and disabled are hidden, one disabled after it was listed leaves the list, one
// that finished processing is listed, and a disabled cast actor is hidden.
func hiddenActorsThroughControl(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
	tag := framework.RandomHex(6)
	ready := addActor(ctx, s, ws.ID, map[string]any{"name": "Conformance ready " + tag})
	processing := addActor(ctx, s, ws.ID, map[string]any{"name": "Conformance processing " + tag, "state": "processing"})
	disabled := addActor(ctx, s, ws.ID, map[string]any{"name": "Conformance disabled " + tag, "state": "disabled"})
	rows, pages := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
	listed := paging.IDs(rows, "actor_id")
	Expect(listed).To(ContainElement(ready), "a ready actor of the workspace's own is listed")
	s.Step("ACTOR-011")
	actorRowsFixed(pages, []string{ready}, nil)
	s.Step("ACTOR-013")
	Expect(listed).NotTo(ContainElement(processing), "an actor still processing is hidden")
	Expect(listed).NotTo(ContainElement(disabled), "a disabled actor is hidden")
	hookDone(s, s.Control().SetActorState(ctx, ready, "disabled"))
	Expect(actorIDs(ctx, c)).NotTo(ContainElement(ready), "an actor disabled after it was listed is hidden")
	hookDone(s, s.Control().SetActorState(ctx, processing, "ready"))
	_, pages = paging.Walk(ctx, c, "/actors", "actors", 48, 100)
	Expect(paging.IDs(rowsOf(pages), "actor_id")).To(ContainElement(processing), "an actor that finished processing is listed")
	s.Step("ACTOR-011")
	actorRowsFixed(pages, []string{processing}, nil)
	s.Step("ACTOR-013")
	var cast string
	for _, id := range listed {
		if id != ready {
			cast = id
			break
		}
	}
	if cast == "" {
		s.Lacks("the target lists no cast actor to disable")
	}
	hookDone(s, s.Control().SetActorState(ctx, cast, "disabled"))
	DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetActorState(ctx, cast, "ready") })
	Expect(actorIDs(ctx, c)).NotTo(ContainElement(cast), "a disabled cast actor is hidden")
}

// deactivatedVoicesThroughControl is VOICE-012's spec with control: a listed voice deactivated
// leaves the list and its total, and a cloned voice of the spec's workspace is listed until it is
// deactivated.
func deactivatedVoicesThroughControl(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
	before, pages := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
	if len(before) == 0 {
		s.Lacks("the target lists no voice to deactivate")
	}
	total := pages[0].R.Int("total")
	voice := before[0]["voice_id"].(string)
	hookDone(s, s.Control().SetVoiceActive(ctx, voice, false))
	DeferCleanup(func(ctx SpecContext) { _ = s.Control().SetVoiceActive(ctx, voice, true) })
	after, pages := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
	s.Step("VOICE-012")
	Expect(paging.IDs(after, "voice_id")).NotTo(ContainElement(voice), "a deactivated voice is not listed")
	s.Step("VOICE-010", "VOICE-012")
	Expect(pages[0].R.Int("total")).To(Equal(total-1), "a deactivated voice is not counted in total"+pages[0].R.Describe())
	s.Step("VOICE-012")
	clone, err := s.Control().CloneVoice(ctx, ws.ID, "Conformance clone "+framework.RandomHex(6))
	hookDone(s, err)
	rows, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
	i := slices.Index(paging.IDs(rows, "voice_id"), clone)
	Expect(i).To(BeNumerically(">=", 0), "the workspace's cloned voice is listed")
	row := rows[i]
	Expect(row["is_cloned"]).To(Equal(true), "a cloned voice reads is_cloned true")
	// (No language and no gender: VOICE-003, ownCatalogueSpecs.)
	hookDone(s, s.Control().SetVoiceActive(ctx, clone, false))
	rows, _ = paging.Walk(ctx, c, "/voices", "voices", 50, 100)
	Expect(paging.IDs(rows, "voice_id")).NotTo(ContainElement(clone), "a deactivated cloned voice is not listed")
}

// longVoiceListAsIs is VOICE-008/011's spec without control: the voice list of the profile's
// long-lists workspace (long_lists_key), whose cloned voices make it more than 50 long: the
// default page holds at most 25, a page at most 50, and the voices come in name order across pages.
func longVoiceListAsIs(ctx context.Context, s *framework.Spec) {
	GinkgoHelper()
	c := s.RoleKey(framework.LongListsKey)
	first := paging.Get(ctx, c, "/voices", "voices")
	longListHolds(s, int(first.R.Int("total")), "voices", shortProfileList)
	s.Step("VOICE-008")
	Expect(len(first.Rows)).To(BeNumerically("<=", 25), "the default page of more than 50 voices holds at most 25"+first.R.Describe())
	big := paging.Get(ctx, c, "/voices", "voices", framework.Query("limit", "999"))
	Expect(len(big.Rows)).To(BeNumerically("<=", 50), "limit 999 on more than 50 voices is clamped to 50"+big.R.Describe())
	s.Step("VOICE-011")
	rows, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 100)
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		n, _ := r["name"].(string)
		names = append(names, n)
	}
	folded := sort.SliceIsSorted(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	Expect(sort.StringsAreSorted(names) || folded).To(BeTrue(), fmt.Sprintf("more than 50 voices are sorted by name across pages: %v", names))
}

// addActor adds an actor through control (workspaceID "": a cast actor) and returns its id.
func addActor(ctx context.Context, s *framework.Spec, workspaceID string, body map[string]any) string {
	GinkgoHelper()
	id, err := s.Control().AddActor(ctx, workspaceID, body)
	hookDone(s, err)
	return id
}

// actorIDs lists every actor id the client sees, in list order.
func actorIDs(ctx context.Context, c *framework.Client) []string {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 100)
	return paging.IDs(rows, "actor_id")
}

// descriptionOnlyWord picks an actor and a word of at least four letters of its description that
// no actor's name contains (case-insensitively), or "" when no actor has one.
func descriptionOnlyWord(actors []map[string]any) (map[string]any, string) {
	var names []string
	for _, a := range actors {
		n, _ := a["name"].(string)
		names = append(names, strings.ToLower(n))
	}
	for _, a := range actors {
		d, _ := a["description"].(string)
		for _, w := range strings.FieldsFunc(d, func(r rune) bool { return !unicode.IsLetter(r) }) {
			lw := strings.ToLower(w)
			if len([]rune(lw)) < 4 || slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, lw) }) {
				continue
			}
			return a, w
		}
	}
	return nil, ""
}
