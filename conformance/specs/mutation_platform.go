package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// Specs added by the mutation pass over the platform and catalogue areas: each closes a gap a
// plausible wrong server slipped through (the key-check order for an expired key, a bucket wait
// that does not slide, the hold pad of several takes, the list rules every paged list shares, the
// voice filters, the preset total and the inlined templates).

// expectWait checks a bucket refusal and that its wait is want seconds (one second less is
// accepted: a service clock that ticks between the calls rounds the wait down by a fraction).
func expectWait(r *framework.Response, want int64) {
	GinkgoHelper()
	wait := expectBucketRefusal(r)
	Expect(wait).To(And(BeNumerically(">=", want-1), BeNumerically("<=", want)),
		fmt.Sprintf("retry_after_seconds is the seconds until the oldest call leaves the window: %d", want)+r.Describe())
}

// countCaps returns the details of the available capabilities whose config_schema has a count and
// whose example_config names no upload, in catalogue order.
func countCaps(ctx context.Context, c *framework.Client) []*framework.Response {
	GinkgoHelper()
	var out []*framework.Response
	for _, d := range availableDetails(ctx, c, 40) {
		props, _ := objectAt(d, "config_schema")["properties"].(map[string]any)
		if _, has := props["count"]; !has || namesUpload(objectAt(d, "example_config")) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// notIn returns the first of candidates that no text contains (case-insensitively), or "";
// candidates without % or _ come first, so the term means the same to any search.
func notIn(candidates []string, texts []string) string {
	plain := func(s string) bool { return !strings.ContainsAny(s, "%_") }
	ordered := slices.Clone(candidates)
	slices.SortStableFunc(ordered, func(a, b string) int {
		switch {
		case plain(a) && !plain(b):
			return -1
		case !plain(a) && plain(b):
			return 1
		}
		return 0
	})
	for _, cand := range ordered {
		l := strings.ToLower(cand)
		if l == "" {
			continue
		}
		found := false
		for _, t := range texts {
			if strings.Contains(strings.ToLower(t), l) {
				found = true
				break
			}
		}
		if !found {
			return cand
		}
	}
	return ""
}

func mutationPlatformSpecs(f *framework.Framework) {
	Describe("key checks before the workspace check", func() {
		f.Rule(rules("AUTH-024", "AUTH-005", "ERR-021")...).It("an expired key of a deleted workspace answers 401, not 410", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			soon := serviceNow(ctx, s).Add(time.Minute)
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}, ExpiresAt: &soon})
			c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
			s.Advance(ctx, 61)
			ws.Delete(ctx)
			c.Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
			c.WithScheme(framework.APIKeyHdr).Get(ctx, "/credits/balance").ExpectError(http.StatusUnauthorized, "not_authorized")
		})
	})

	Describe("the bucket window slides", func() {
		f.Rule(rules("RATE-013", "RATE-014", "RATE-001")...).Needs(framework.Control).It("the wait counts from the oldest call in the window, and only the calls that left it free room", func(ctx context.Context, s *framework.Spec) {
			ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
			c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
			fill(ctx, c, readCall, 60)
			s.Advance(ctx, 20)
			fill(ctx, c, readCall, 60)
			// The oldest 60 calls are 20 s old: they leave the window in 40 s.
			expectWait(readCall.do(ctx, c), 40)
			s.Advance(ctx, 40)
			// The first 60 left; the 60 made 40 s ago are still in the window (a refused call may or
			// may not count, so one fewer pass is accepted).
			passed := 0
			var refusal *framework.Response
			for i := 0; i < 61; i++ {
				r := readCall.do(ctx, c)
				if r.Status != http.StatusOK {
					refusal = r
					break
				}
				passed++
			}
			Expect(passed).To(BeElementOf(59, 60), "after the oldest calls left, only their room is free, not a fresh window of 120")
			Expect(refusal).NotTo(BeNil(), "the window still holds the later calls: the bucket fills again")
			expectWait(refusal, 20)
		})
	})

	Describe("the hold pad of several takes", func() {
		f.Rule("EST-003").It("with config.count N, max_credits_needed is N times the one-take value ceil(price x 1.1)", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, d := range countCaps(ctx, c) {
				id := d.String("capability_id")
				cfg := cheapConfig(d)
				row := asObject(d, d.Doc(), "the answer")
				n := min(maxVariants(row), 4)
				if n < 2 {
					continue
				}
				cfg["count"] = 1
				one := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg})
				if one.Status == http.StatusConflict {
					one.ExpectError(http.StatusConflict, "not_priced")
					continue
				}
				one.ExpectOK(http.StatusOK)
				price, ok := framework.AsInt(one.Field("credits"))
				Expect(ok).To(BeTrue(), "credits is a whole number"+one.Describe())
				take := one.Int("max_credits_needed")
				Expect(take).To(Equal(ceilPad(price)), id+": one take holds ceil(price x 1.1)"+one.Describe())
				for k := int64(2); k <= n; k++ {
					cfg["count"] = k
					r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg}).ExpectOK(http.StatusOK)
					Expect(r.Int("max_credits_needed")).To(Equal(k*take),
						fmt.Sprintf("%s with count %d: every take is padded and rounded alone, %d x %d", id, k, k, take)+r.Describe())
				}
				checked++
			}
			if checked == 0 {
				Skip("unsupported: no available capability prices a count of 2 or more without an upload")
			}
		})
	})

	Describe("limits every paged list shares", func() {
		f.Rule("CAP-008", "PRESET-007", "VOICE-008", "ACTOR-009").It("a limit that is not a positive whole number counts as omitted on presets, voices and actors too", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, l := range []struct{ path, field, id string }{
				{"/presets", "presets", "capability_id"},
				{"/voices", "voices", "voice_id"},
				{"/actors", "actors", "actor_id"},
			} {
				def := getPage(ctx, c, l.path, l.field)
				for _, bad := range []string{"0", "-3", "2.5", "abc"} {
					p := getPage(ctx, c, l.path, l.field, framework.Query("limit", bad))
					Expect(ids(p.rows, l.id)).To(Equal(ids(def.rows, l.id)),
						fmt.Sprintf("%s?limit=%s counts as omitted: the default page", l.path, bad)+p.r.Describe())
				}
			}
		})
	})

	Describe("voice filters", func() {
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

	Describe("the preset list", func() {
		f.Rule("PRESET-010").It("total counts every preset on pages of one, not the rows of the page", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all := presetRows(ctx, c)
			if len(all) < 2 {
				Skip("unsupported: the target lists fewer than two presets")
			}
			_, pages := walk(ctx, c, "/presets", "presets", 1, 100)
			for _, p := range pages {
				Expect(p.r.Int("total")).To(Equal(int64(len(all))), "total counts every preset, on every page"+p.r.Describe())
			}
		})

		f.Rule("PRESET-006", "PRESET-014").It("a preset row inlines min(20, templates_total) live templates, each one GET /presets/{id}/templates lists", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, row := range presetRows(ctx, c) {
				total, _ := framework.AsInt(row["templates_total"])
				if total == 0 {
					continue
				}
				id := row["capability_id"].(string)
				inline, _ := row["templates"].([]any)
				Expect(int64(len(inline))).To(Equal(min(total, 20)), id+": templates holds the first 20 live templates, or all when fewer")
				t := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				var live []string
				for i, v := range t.Array("templates") {
					live = append(live, stringField(t, asObject(t, v, fmt.Sprintf("templates[%d]", i)), "template_id", "template"))
				}
				for _, v := range inline {
					tid, _ := v.(map[string]any)["template_id"].(string)
					Expect(live).To(ContainElement(tid), id+": an inlined template is a live template of the preset"+t.Describe())
				}
				checked++
			}
			if checked == 0 {
				Skip("unsupported: the target lists no preset with a live template")
			}
		})
	})
}
