package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
)

// listSpecs registers the specs of the generation list and the limits every paged list shares.
func listSpecs(f *framework.Framework) {
	generationListSpecs(f)
	pagedListSpecs(f)
}

// generationListSpecs registers the specs of the generation list.
func generationListSpecs(f *framework.Framework) {
	Describe("lists: generation list", func() {
		f.Rule(rules("GEN-037", "GEN-044", "GEN-047", "GEN-048", "GEN-049", "GEN-046", "ERR-020", "ERR-024")...).It("refuses zoneless times and invalid enums naming the field; blank values, bad limits and unreadable cursors count as omitted", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			s.Step("GEN-037", "GEN-046")
			first := paging.Get(ctx, c, "/generations", paging.Open)
			Expect(len(first.Rows)).To(BeNumerically("<=", 25), first.R.Describe())
			base := paging.IDs(first.Rows, "generation_id")
			s.Step("GEN-044", "ERR-020", "ERR-024")
			for _, field := range []string{"created_before", "updated_since"} {
				for _, bad := range []string{"2026-01-05T09:00:00", "2026-01-05 09:00", "yesterday"} {
					r := c.Get(ctx, "/generations", framework.Query(field, bad)).ExpectError(http.StatusBadRequest, "invalid_config")
					refusal.ExpectField(r, field)
				}
				for _, good := range []string{"2026-01-05T09:00:00Z", "2026-01-05T11:00:00+02:00", "2026-01-05"} {
					c.Get(ctx, "/generations", framework.Query(field, good)).ExpectOK(http.StatusOK)
				}
			}
			s.Step("GEN-049", "ERR-020", "ERR-024")
			for _, field := range []string{"status", "source"} {
				refusal.ExpectField(c.Get(ctx, "/generations", framework.Query(field, "bogus"), framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config"), field)
			}
			refusal.ExpectField(c.Get(ctx, "/generations", framework.Query("status", "canceled"), framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config"), "status")
			s.Step("GEN-048")
			for _, blank := range []string{"status", "source", "capability_id", "created_before", "updated_since", "cursor"} {
				p := paging.Get(ctx, c, "/generations", paging.Open, framework.Query(blank, ""))
				Expect(paging.IDs(p.Rows, "generation_id")).To(Equal(base), blank+"= counts as omitted"+p.R.Describe())
			}
			s.Step("GEN-046")
			for _, lim := range []string{"0", "-1", "abc"} {
				paging.ExpectLimitReading(ctx, c, "/generations", paging.Open, "generation_id", lim, first)
			}
			s.Step("GEN-047")
			p := paging.Get(ctx, c, "/generations", paging.Open, framework.Query("cursor", "!!not-a-cursor!!"))
			Expect(paging.IDs(p.Rows, "generation_id")).To(Equal(base), "an unreadable cursor restarts from the first page"+p.R.Describe())
			s.Step("GEN-046")
			big := paging.Get(ctx, c, "/generations", paging.Open, framework.Query("limit", "500"))
			Expect(len(big.Rows)).To(BeNumerically("<=", 50), "limit is clamped to 50"+big.R.Describe())
		})

		f.Rule("GEN-052", "GEN-040").Needs(framework.Spends).It("a job is listed from its submit on, while it still runs", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			j := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), map[string]any{"voice_id": catalogue.FirstVoice(ctx, sp.c)})
			// A REST submit is a deliverable: "Only deliverables" are listed, running or not.
			s.Step("GEN-052")
			p := paging.Get(ctx, sp.c, "/generations", paging.Open, framework.Query("limit", "50"))
			Expect(paging.IDs(p.Rows, "generation_id")).To(ContainElement(j.id),
				"the job "+j.id+" just submitted is on the first page of GET /generations (newest first)"+p.R.Describe())
			// A row's shape is not shown beyond its id, cost, time and output ids: the status the
			// filter is asked for is the read's.
			st := readGen(ctx, sp.c, j.id).String("generation.status")
			if !slices.Contains(runningStatuses, st) {
				return // it finished before the list: listed, but not seen running
			}
			s.Step("GEN-040")
			f := paging.Get(ctx, sp.c, "/generations", paging.Open, framework.Query("limit", "50"), framework.Query("status", st))
			if runningNow(ctx, sp.c, j.id) && readGen(ctx, sp.c, j.id).String("generation.status") == st {
				Expect(paging.IDs(f.Rows, "generation_id")).To(ContainElement(j.id), "status="+st+" lists the job that still reads "+st+f.R.Describe())
			}
		})

		// With the control API the three rows are made in a fresh workspace, whose list is exactly
		// them; without it they are made with the run's key, in a workspace other specs made rows in
		// before, and each list is judged on the rows of the three it holds, in its order (a filter
		// that keeps a row it should drop, or drops one it should keep, or an order that is not the
		// text's, still shows there). The failed row needs a render failure the run can cause (the
		// control API's fault): without one, the failed-row checks are left out and the rest judged.
		Describe("filters and order", Ordered, func() {
			var sp spender
			var a, b, fl *framework.Response // reads of: a completed tts, a completed image, a failed image (nil without control)
			f.BeforeAll([]framework.Need{framework.Spends}, func(ctx context.Context, s *framework.Spec) {
				sp = newSpender(ctx, s)
				pause := func() {
					if s.HasControl() {
						s.Advance(ctx, 3)
						return
					}
					// Distinct created_at seconds on a running clock: the order below is by them.
					select {
					case <-ctx.Done():
					case <-time.After(time.Duration(float64(1100*time.Millisecond) / max(s.TimeScale(), 1))):
					}
				}
				if s.HasControl() {
					// The three must fall on one UTC day (the date specs below count on it), and the
					// steps take a little over an hour of service time (a render_fail fault first moves
					// the clock an hour): start at least three hours before midnight.
					now := s.ClockNow(ctx)
					if midnight := now.Truncate(24 * time.Hour).Add(24 * time.Hour); midnight.Sub(now) < 3*time.Hour {
						s.Advance(ctx, midnight.Sub(now).Seconds()+60)
					}
				}
				d := catalogue.ImageModel(ctx, sp.c)
				ja := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), map[string]any{"voice_id": catalogue.FirstVoice(ctx, sp.c)})
				s.Finish(ctx, sp.c, ja.id)
				pause()
				jb := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
				s.Finish(ctx, sp.c, jb.id)
				a, b = readGen(ctx, sp.c, ja.id), readGen(ctx, sp.c, jb.id)
				if s.HasControl() {
					pause()
					s.QueueFault(ctx, "render_fail", d.String("capability_id"), 1, "")
					jf := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
					s.Finish(ctx, sp.c, jf.id)
					fl = readGen(ctx, sp.c, jf.id)
				}
			})
			id := func(r *framework.Response) string { return r.String("generation.generation_id") }
			// mine is the ids of the rows made above among rs, in rs's order (fl is nil without control).
			mine := func(rs ...*framework.Response) []string {
				out := []string{}
				for _, r := range rs {
					if r != nil {
						out = append(out, id(r))
					}
				}
				return out
			}
			// list lists the workspace's rows under the filters q: all of them in the fresh workspace of
			// a run with control, else those of the rows made above, in the list's order.
			list := func(ctx context.Context, q ...[2]string) []string {
				got := paging.GenerationIDs(ctx, sp.c, q...)
				if sp.ws != nil {
					return got
				}
				own := mine(a, b, fl)
				return orEmpty(slices.DeleteFunc(got, func(g string) bool { return !slices.Contains(own, g) }))
			}

			f.Rule("GEN-038", "GEN-039", "GEN-054", "GEN-042", "GEN-052", "CORE-013", "CORE-012", "ID-002").Needs(framework.Spends).It("lists rows newest first with the documented fields, no link, paged by cursor", func(ctx context.Context, s *framework.Spec) {
				Expect(b).NotTo(BeNil(), "the setup did not make its generations")
				s.Step("GEN-039")
				Expect(list(ctx)).To(Equal(mine(fl, b, a)), "newest first by created_at")
				s.Step("GEN-038")
				p := paging.Get(ctx, sp.c, "/generations", paging.Open)
				reads := map[string]*framework.Response{id(a): a, id(b): b}
				if fl != nil {
					reads[id(fl)] = fl
				}
				for _, row := range p.Rows {
					s.Step("GEN-038")
					gid := answer.String(p.R, row, "generation_id", "row")
					s.Step("ID-002")
					Expect(gid).To(MatchRegexp(genIDPattern), p.R.Describe())
					g := reads[gid]
					if g == nil {
						continue // a row of another spec (without control): its read is not at hand
					}
					s.Step("GEN-038")
					// "Row shape: not shown beyond the generation id, what it cost, when it was made and
					// the asset ids of outputs": only generation_id is named; the reference's other
					// fields are checked where the row carries them, and the three the text names
					// by meaning are required under whatever names the row gives them.
					s.Step("CORE-013")
					answer.NoLinks(row, "generations["+gid+"]")
					if v, has := row["source"]; has && v != nil {
						s.Step("GEN-042")
						Expect(v).To(Equal("api"), p.R.Describe())
					}
					if v, has := row["purpose"]; has {
						s.Step("GEN-052")
						Expect(v).To(Or(BeNil(), Equal("deliverable")), "only deliverables are listed"+p.R.Describe())
					}
					if v, has := row["status"]; has {
						s.Step("GEN-038")
						Expect(v).To(Equal(g.String("generation.status")), p.R.Describe())
					}
					// What the row cost, when it was made and its outputs' asset ids, whatever their names.
					expectRowCarries(s, p, row, g)
				}
				s.Step("CORE-012")
				var paged []string
				cursor := ""
				newest := mine(fl, b, a)
				for i := 0; i < 10 && (sp.ws != nil || len(paged) < len(newest)); i++ {
					opts := []framework.CallOption{framework.Query("limit", "1")}
					if cursor != "" {
						opts = append(opts, framework.Query("cursor", cursor))
					}
					pg := paging.Get(ctx, sp.c, "/generations", paging.Open, opts...)
					Expect(len(pg.Rows)).To(BeNumerically("<=", 1), pg.R.Describe())
					paged = append(paged, paging.IDs(pg.Rows, "generation_id")...)
					if pg.Cursor == nil {
						break
					}
					cursor = *pg.Cursor
				}
				// Without control the walk stops after the rows made last, the newest.
				Expect(paged).To(Equal(newest), "limit=1 pages visit every row once, newest first")
			})

			f.Rule("GEN-040", "GEN-041", "GEN-042", "GEN-050").Needs(framework.Spends).It("filters by status, capability_id and source, combined", func(ctx context.Context, s *framework.Spec) {
				Expect(b).NotTo(BeNil(), "the setup did not make its generations")
				s.Step("GEN-040")
				Expect(list(ctx, [2]string{"status", "completed"})).To(Equal(mine(b, a)))
				Expect(list(ctx, [2]string{"status", "failed"})).To(Equal(mine(fl)))
				Expect(list(ctx, [2]string{"status", "queued"})).To(BeEmpty())
				s.Step("GEN-041")
				Expect(list(ctx, [2]string{"capability_id", "tts"})).To(Equal(mine(a)))
				// "capability_id filters rows to that capability": a value that is only a prefix of a
				// listed job's capability id, or its id in another case, names another capability and
				// keeps none of them (a server matching prefixes or case-insensitively keeps them).
				bCap := b.String("generation.capability_id")
				for _, v := range []string{bCap[:len(bCap)-1], "tt", strings.ToUpper(bCap)} {
					r := sp.c.Get(ctx, "/generations", framework.Query("capability_id", v), framework.Query("limit", "50"))
					if r.Status != http.StatusOK {
						r.ExpectError(http.StatusBadRequest, "invalid_config") // an open choice: no such capability refused as an invalid filter value
						continue
					}
					for _, row := range paging.From(r, paging.Open).Rows {
						Expect(row["capability_id"]).To(Equal(v), "capability_id="+v+" keeps only rows of exactly that capability"+r.Describe())
					}
				}
				s.Step("GEN-042")
				Expect(list(ctx, [2]string{"source", "api"})).To(Equal(mine(fl, b, a)))
				Expect(list(ctx, [2]string{"source", "ui"})).To(BeEmpty())
				s.Step("GEN-050")
				Expect(list(ctx, [2]string{"status", "completed"}, [2]string{"capability_id", b.String("generation.capability_id")})).To(Equal(mine(b)))
				Expect(list(ctx, [2]string{"status", "failed"}, [2]string{"capability_id", "tts"})).To(BeEmpty())
			})

			f.Rule("GEN-043", "GEN-045", "GEN-044").Needs(framework.Spends).It("created_before is strictly before (a date is midnight UTC); updated_since is strictly after, oldest first", func(ctx context.Context, s *framework.Spec) {
				Expect(b).NotTo(BeNil(), "the setup did not make its generations")
				bCreated := answer.Time(b, "generation.created_at")
				day := answer.Time(a, "generation.created_at").UTC()
				last := bCreated
				if fl != nil {
					last = answer.Time(fl, "generation.created_at")
				}
				if last.UTC().Format(time.DateOnly) != day.Format(time.DateOnly) {
					framework.SkipFor(framework.Undecidable("the rows were made on both sides of midnight UTC on the target's running clock; the date cut needs them on one day"))
				}
				s.Step("GEN-043", "GEN-044")
				Expect(list(ctx, [2]string{"created_before", b.String("generation.created_at")})).To(Equal(mine(a)), "strictly before B's created_at")
				Expect(list(ctx, [2]string{"created_before", day.Format("2006-01-02")})).To(BeEmpty(), "a date is midnight UTC of that day")
				Expect(list(ctx, [2]string{"created_before", day.AddDate(0, 0, 1).Format("2006-01-02")})).To(Equal(mine(fl, b, a)))
				zoned := bCreated.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)
				Expect(list(ctx, [2]string{"created_before", zoned})).To(Equal(mine(a)), "an offset time names the same instant")

				s.Step("GEN-045")
				if _, has := a.Lookup("generation.updated_at"); !has {
					// The reads do not show updated_at (the Generation table does not list it): a
					// time before every row keeps all three, one after every row none.
					early := answer.Time(a, "generation.created_at").Add(-time.Minute).UTC().Format(time.RFC3339)
					Expect(list(ctx, [2]string{"updated_since", early})).To(ConsistOf(mine(a, b, fl)), "updated_since before every row keeps them all")
					late := s.ClockNow(ctx).Add(time.Hour).UTC().Format(time.RFC3339)
					Expect(list(ctx, [2]string{"updated_since", late})).To(BeEmpty(), "updated_since after every update keeps none")
					return
				}
				since := a.String("generation.updated_at")
				got := list(ctx, [2]string{"updated_since", since})
				type upd struct {
					id string
					at time.Time
				}
				var want []upd
				for _, r := range []*framework.Response{a, b, fl} {
					if r == nil {
						continue
					}
					if at := answer.Time(r, "generation.updated_at"); at.After(answer.Time(a, "generation.updated_at")) {
						want = append(want, upd{id(r), at})
					}
				}
				sort.SliceStable(want, func(i, j int) bool { return want[i].at.Before(want[j].at) })
				var wantIDs []string
				for _, w := range want {
					wantIDs = append(wantIDs, w.id)
				}
				Expect(got).To(Equal(orEmpty(wantIDs)), "updated_since keeps rows updated strictly after, oldest first")
				Expect(got).NotTo(ContainElement(id(a)), "strictly after: the row updated at the instant is not kept")
			})

			f.Rule("GEN-053").Needs(framework.Spends, framework.SecondWorkspace).It("another workspace does not list them", func(ctx context.Context, s *framework.Spec) {
				Expect(b).NotTo(BeNil(), "the setup did not make its generations")
				rows, _ := paging.Walk(ctx, s.OtherClient(), "/generations", paging.Open, 50, 40)
				for _, own := range mine(a, b, fl) {
					Expect(paging.IDs(rows, "generation_id")).NotTo(ContainElement(own))
				}
			})
		})

		Describe("a list longer than 50 rows", Ordered, func() {
			// 52 rows: more than a default page (25) and more than the clamp (50), so both show.
			const made = 52
			var sp spender
			var rm *rowMaker
			var rows []string // newest first
			// Without control the rows are made in the run's main workspace, which no other spec
			// writes meanwhile (a process runs one spec at a time with a key set of its own), after
			// whatever rows earlier specs and earlier runs left there, any number on a persistent
			// workspace, some perhaps forgotten by the target's retention mid-spec. The specs judge
			// only their own rows there: made last, they are the first of a newest-first walk, read
			// only that far, and an updated_since walk starts just before the first of them. With
			// control the fresh workspace holds only the spec's rows and the walks read it all. Slow:
			// each job is waited to its end, minutes of the target's clock for the 52.
			since := time.Time{}.Add(time.Hour).Format(time.RFC3339) // updated_since before every own row
			f.BeforeAll([]framework.Need{framework.Spends, framework.Slow}, func(ctx context.Context, s *framework.Spec) {
				sp = newSpender(ctx, s)
				rm = newRowMaker(ctx, s, sp)
				rows = rm.make(ctx, made)
				if sp.ws == nil {
					first := answer.Time(readGen(ctx, sp.c, rows[0]), "generation.created_at")
					since = first.Add(-time.Second).UTC().Format(time.RFC3339)
				}
				slices.Reverse(rows)
			})
			// own is when a newest-first walk has read the spec's rows: with control never (the walk
			// reads the whole fresh workspace), else once made ids other than skip have been read.
			own := func(skip []string) func([]string) bool {
				return func(read []string) bool {
					if sp.ws != nil {
						return false
					}
					n := 0
					for _, id := range read {
						if !slices.Contains(skip, id) {
							n++
						}
					}
					return n >= made
				}
			}
			// expectOwnFirst checks the rows a newest-first walk read that were there when it began
			// (old): with control exactly the spec's rows, else the spec's rows first, in order.
			expectOwnFirst := func(old []string, msg string) {
				GinkgoHelper()
				if sp.ws != nil {
					Expect(old).To(Equal(rows), msg)
					return
				}
				Expect(len(old)).To(BeNumerically(">=", made), msg+": the walk ended before the spec's rows")
				Expect(old[:made]).To(Equal(rows), msg+": the spec's rows, made after every other row, come first")
			}

			f.Rule("GEN-046", "CORE-012", "GEN-039").Needs(framework.Spends, framework.Slow).It("holds 25 rows on the default page and 50 under limit 500 or 51, and a walk visits all 52 newest first", func(ctx context.Context, s *framework.Spec) {
				Expect(rows).To(HaveLen(made), "the setup did not make its rows")
				s.Step("GEN-046")
				def := paging.Get(ctx, sp.c, "/generations", paging.Open)
				paging.ExpectPrefix(def, "generation_id", rows, 25, "limit defaults to 25: the default page holds at most the 25 newest of 52 rows")
				Expect(def.Cursor).NotTo(BeNil(), "27 rows follow the default page"+def.R.Describe())
				for _, lim := range []string{"500", "51", "50"} {
					p := paging.Get(ctx, sp.c, "/generations", paging.Open, framework.Query("limit", lim))
					paging.ExpectPrefix(p, "generation_id", rows, 50, "limit "+lim+" is clamped to 50: at most the 50 newest of 52 rows")
					Expect(p.Cursor).NotTo(BeNil(), "rows follow a page of at most 50"+p.R.Describe())
				}
				s.Step("CORE-012", "GEN-039")
				walked := paging.WalkGenerationsUntil(ctx, sp.c, 25, nil, func(int) {}, own(nil))
				Expect(paging.Repeats(walked)).To(BeEmpty(), "following next_cursor visits every row once")
				expectOwnFirst(walked, "following next_cursor visits every row once, newest first")
			})

			f.Rule("CORE-012", "GEN-039", "GEN-045").Needs(framework.Spends, framework.Slow).It("rows created during a walk make no row skipped or repeated, newest first or oldest first by updated_at", func(ctx context.Context, s *framework.Spec) {
				Expect(rows).To(HaveLen(made), "the setup did not make its rows")
				s.Step("CORE-012", "GEN-039")
				// Newest first: new rows sort before the cursor; the walk sees each older row once.
				var added []string
				got := paging.WalkGenerationsUntil(ctx, sp.c, 10, nil, func(page int) {
					if page < 3 {
						added = append(added, rm.make(ctx, 2)...)
					}
				}, func(read []string) bool { return own(added)(read) })
				Expect(paging.Repeats(got)).To(BeEmpty(), "rows created during the walk repeated rows already read")
				var old []string
				for _, id := range got {
					if !slices.Contains(added, id) {
						old = append(old, id)
					}
				}
				expectOwnFirst(old, "every row that was there when the walk began is read once, in order, whatever was created meanwhile")
				slices.Reverse(added)
				all := append(slices.Clone(added), rows...) // newest first
				s.Step("CORE-012", "GEN-045")
				// Oldest first by updated_at: rows created during the walk sort after every row read so
				// far, so a cursor that continues after the last row read reaches them before the end.
				oldest := slices.Clone(all)
				slices.Reverse(oldest)
				var late []string
				got = paging.WalkGenerations(ctx, sp.c, 10, [][2]string{{"updated_since", since}}, func(page int) {
					if page < 3 {
						late = append(late, rm.make(ctx, 2)...)
					}
				})
				Expect(paging.Repeats(got)).To(BeEmpty(), "rows created during the walk repeated rows already read")
				want := append(slices.Clone(oldest), late...)
				if sp.ws == nil {
					// Other rows updated since (a job an earlier spec left running) are not the spec's.
					got = slices.DeleteFunc(got, func(id string) bool { return !slices.Contains(want, id) })
				}
				Expect(got).To(Equal(want), "oldest first by updated_at: every row once, and the rows created during the walk at its end")
			})

			f.Rule("CORE-012", "GEN-045").Needs(framework.Spends, framework.Slow, framework.Profile, framework.RealTime).WaitsOut(walkRecoverAfter+recoverSlack+recoverRender).It("a row updated during a walk by updated_at skips no other row: the walk goes on after the row's old place and meets it again at the end", func(ctx context.Context, s *framework.Spec) {

				updatedDuringWalk(ctx, s, sp, rm, rows, made)
			})
		})

		f.Rule("CORE-012").Needs(framework.Spends).ControlBecause(becauseTiedJobs).It("jobs made at the same instant are each listed once when paged one, two or three at a time: the cursor does not skip ties", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			rm := newRowMaker(ctx, s, sp)
			older := rm.make(ctx, 1)
			tied := rm.makeTied(ctx, 4)
			newer := rm.make(ctx, 1)
			// "Newest first" leaves the order of equal times open; following next_cursor must still
			// visit each row once (General 8), so a keyset on created_at alone that skips the rows
			// sharing the last row's time loses them.
			for _, limit := range []int{1, 2, 3} {
				got := paging.WalkGenerations(ctx, sp.c, limit, nil, func(int) {})
				Expect(paging.Repeats(got)).To(BeEmpty(), fmt.Sprintf("paged %d at a time, no row is listed twice", limit))
				Expect(got).To(HaveLen(6), fmt.Sprintf("paged %d at a time, the walk lists the 6 jobs of the workspace (4 of them made at one instant): %v", limit, got))
				Expect(got[0]).To(Equal(newer[0]), "the newest job comes first")
				Expect(got[1:5]).To(ConsistOf(tied), fmt.Sprintf("paged %d at a time, the 4 jobs made at one instant each come once, between the newer and the older job", limit))
				Expect(got[5]).To(Equal(older[0]), "the oldest job comes last")
			}
		})

		f.Rule("GEN-043").Needs(framework.Spends, framework.Slow).ControlBecause(becauseMidnightJump).It("created_before with a date cuts at midnight UTC: a job two minutes before it is kept, one two minutes after is not", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			voice := catalogue.FirstVoice(ctx, sp.c)
			now := s.ClockNow(ctx)
			midnight := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
			s.Advance(ctx, midnight.Add(-2*time.Minute).Sub(now).Seconds())
			before := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), map[string]any{"voice_id": voice})
			s.Finish(ctx, sp.c, before.id)
			if gap := midnight.Add(2 * time.Minute).Sub(s.ClockNow(ctx)); gap > 0 {
				s.Advance(ctx, gap.Seconds())
			}
			after := submit(ctx, s, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), map[string]any{"voice_id": voice})
			s.Finish(ctx, sp.c, after.id)
			day := midnight.Format("2006-01-02")
			Expect(paging.GenerationIDs(ctx, sp.c, [2]string{"created_before", day})).To(Equal([]string{before.id}),
				fmt.Sprintf("created_before=%s keeps what was made before %s midnight UTC and nothing after", day, day))
			next := midnight.AddDate(0, 0, 1).Format("2006-01-02")
			Expect(paging.GenerationIDs(ctx, sp.c, [2]string{"created_before", next})).To(Equal([]string{after.id, before.id}), "created_before the next day keeps both, newest first")
		})

	})

}

// pagedListSpecs registers the specs of the lists whose limit the text says is "clamped 1 to 50".
func pagedListSpecs(f *framework.Framework) {
	Describe("lists: limit clamped 1 to 50 on presets, voices and actors", func() {
		f.Rule("PRESET-007", "VOICE-008", "ACTOR-009").It("limit 0 or below is clamped to 1 (not the default page); a limit that is not a whole number counts as omitted or is refused", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, l := range []struct{ path, field, id string }{
				{"/presets", "presets", "capability_id"},
				{"/voices", "voices", "voice_id"},
				{"/actors", "actors", "actor_id"},
			} {
				def := paging.Get(ctx, c, l.path, l.field)
				want := paging.IDs(def.Rows, l.id)
				Expect(len(want)).To(BeNumerically(">", 1), l.path+": the default page needs two rows to tell a clamp to 1 from the default"+def.R.Describe())
				for _, low := range []string{"0", "-3"} {
					p := paging.Get(ctx, c, l.path, l.field, paging.LimitProbe(low)...)
					got := paging.IDs(p.Rows, l.id)
					Expect(len(got)).To(BeNumerically("<=", 1),
						fmt.Sprintf("%s?limit=%s is clamped to 1 (\"clamped 1 to 50\"), not read as omitted", l.path, low)+p.R.Describe())
					Expect(got).To(Equal(want[:len(got)]), fmt.Sprintf("%s?limit=%s: the row is the first of the list", l.path, low)+p.R.Describe())
				}
				for _, odd := range []string{"2.5", "abc"} {
					paging.ExpectLimitReading(ctx, c, l.path, l.field, l.id, odd, def)
				}
			}
		})

		// Only the presets' text says the last page's next_cursor is null; elsewhere only null means
		// the end, and a cursor to an empty last page is allowed (What the service does 8).
		f.Rule("PRESET-008").It("the presets page holding the last row answers next_cursor null, not a cursor to an empty page", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, l := range []struct{ path, field, rule string }{
				{"/presets", "presets", "PRESET-008"},
			} {
				s.Step(l.rule)
				rows, pages := paging.Walk(ctx, c, l.path, l.field, 5, 100)
				if len(rows) == 0 {
					s.Lacks("%s lists nothing", l.path)
				}
				total, seen := pages[0].R.Int("total"), 0
				for _, p := range pages {
					seen += len(p.Rows)
					if int64(seen) == total {
						Expect(p.Cursor).To(BeNil(), fmt.Sprintf("%s: the page that ends the list (%d of %d rows) has next_cursor null", l.path, seen, total)+p.R.Describe())
						break
					}
				}
			}
		})
	})
}

// Why these specs stay at the control tier (Decl.ControlBecause): an operation only the app or
// control can do.
const (
	becauseTiedJobs     = "it makes jobs at one instant on a stopped clock: on a running one each gets its own created_at"
	becauseMidnightJump = "it moves the target's clock to two minutes before and after midnight UTC: in real time that is " +
		"up to a day"
)

// updatedDuringWalk judges a walk by updated_at during which one row is updated (CORE-012,
// GEN-045): every other row is read once, in order, and the updated one again last. The update is
// a video of the spec's own finishing its render when the run can force nothing, else the app's
// recover of a written-off row (a test input), else control's recover hook; rows are the made
// rows of the long-list container, newest first.
func updatedDuringWalk(ctx context.Context, s *framework.Spec, sp spender, rm *rowMaker, rows []string, made int) {
	Expect(rows).To(HaveLen(made), "the setup did not make its rows")
	since := time.Time{}.Add(time.Hour).Format(time.RFC3339)
	var before []string
	var moved string
	var recover func(page int)
	var read []string // what the walk has read so far
	limit := 10
	natural := !s.CanForce()
	if natural {
		// No act to force: the update is a video of the spec's own finishing its render
		// during the walk, read once at its old place first.
		moved, before, since = runningRow(ctx, s, sp, rm)
		limit = 1
		ended := false
		recover = func(int) {
			if !ended && slices.Contains(read, moved) {
				ended = true
				awaitEnded(ctx, s, sp.c, moved)
			}
		}
	} else if ti, forced := s.AppAct(sp.c, framework.Outcome{Kind: "recover", Seconds: int(walkRecoverAfter.Seconds())}); forced {
		moved, before, since = writtenOffRow(ctx, s, sp, rm, ti)
		limit = 1
		recovered := false
		recover = func(int) {
			if !recovered && slices.Contains(read, moved) { // read once: the app recovers it now, after every row
				recovered = true
				awaitRecovered(ctx, s, sp.c, moved)
			}
		}
	} else {
		before = paging.GenerationIDs(ctx, sp.c, [2]string{"updated_since", since})
		recover = func(page int) {
			if page == 1 {
				// The last row read, a canceled job, is recovered: it is updated now, after every row.
				moved = before[19]
				s.Advance(ctx, 3)
				s.JobHook(ctx, moved, "recover", nil)
			}
		}
	}
	got := paging.WalkGenerationsUntil(ctx, sp.c, limit, [][2]string{{"updated_since", since}}, recover,
		func(r []string) bool { read = r; return false })
	if sp.ws == nil {
		// Other rows updated since (a job an earlier spec left running) are not the spec's.
		got = slices.DeleteFunc(got, func(id string) bool { return !slices.Contains(before, id) })
	}
	if natural && slices.Index(got, moved) == len(got)-1 {
		framework.SkipFor(framework.Undecidable("the video " + moved + " ended its render before the walk read it at its old place: no update happened during the walk"))
	}
	s.Step("CORE-012", "GEN-045")
	var rest []string
	for _, id := range got {
		if id != moved {
			rest = append(rest, id)
		}
	}
	want := slices.DeleteFunc(slices.Clone(before), func(id string) bool { return id == moved })
	Expect(rest).To(Equal(want), "every row not updated during the walk is read once, in order: the walk goes on from the cursor's place, not from the moved row's new place")
	Expect(got[len(got)-1]).To(Equal(moved), "the row updated during the walk is read again last, at its new updated_at")
}
