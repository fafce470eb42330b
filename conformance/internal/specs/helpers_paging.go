package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Paged list helpers: one page, a walk over pages, and the list filters.

// page is one page of a cursor-paged list.
type page struct {
	r      *framework.Response
	rows   []map[string]any
	cursor *string // nil when next_cursor is null
}

// getPage reads one page of a list whose rows are under field.
func getPage(ctx context.Context, c *framework.Client, path, field string, opts ...framework.CallOption) page {
	GinkgoHelper()
	return pageFrom(c.Get(ctx, path, opts...).ExpectOK(http.StatusOK), field)
}

// omittedPage is getPage for a query the text says counts as omitted (a bad limit, a blank
// cursor): the answer's status is first checked under the spec's step, unjudged, so that a refusal
// fails the rule that says the value is read as omitted, not only the list's answer rule.
func omittedPage(ctx context.Context, c *framework.Client, path, field, what string, opts ...framework.CallOption) page {
	GinkgoHelper()
	r := c.Get(ctx, path, append(append([]framework.CallOption(nil), opts...), framework.Unjudged())...)
	Expect(r.Status).To(Equal(http.StatusOK), what+": the value counts as omitted, so the answer is a page, not a refusal"+r.Describe())
	return pageFrom(r.ExpectOK(http.StatusOK), field)
}

// pageFrom reads a 200 answer of a list whose rows are under field (openPage: where the text does
// not name the key, the one array beside next_cursor) as one page.
func pageFrom(r *framework.Response, field string) page {
	GinkgoHelper()
	p := page{r: r}
	pg := pageRows(r, field)
	for i, v := range pg.Rows {
		p.rows = append(p.rows, asObject(r, v, fmt.Sprintf("row %d of the page", i)))
	}
	nc, present := pg.Holder["next_cursor"]
	Expect(present).To(BeTrue(), "the answer has no next_cursor (it must be present, null on the last page)"+r.Describe())
	if nc != nil {
		s, ok := nc.(string)
		Expect(ok).To(BeTrue(), "next_cursor is neither a string nor null"+r.Describe())
		Expect(s).NotTo(BeEmpty(), "next_cursor is an empty string; the end is null"+r.Describe())
		p.cursor = &s
	}
	return p
}

// walk follows next_cursor from the first page until it is null and returns every row and the
// pages. It fails the spec after maxPages pages (a cursor that never ends).
func walk(ctx context.Context, c *framework.Client, path, field string, limit int, maxPages int) ([]map[string]any, []page) {
	GinkgoHelper()
	var rows []map[string]any
	var pages []page
	cursor := ""
	for i := 0; ; i++ {
		Expect(i).To(BeNumerically("<", maxPages), fmt.Sprintf("%s: next_cursor did not end after %d pages", path, maxPages))
		opts := []framework.CallOption{}
		if limit > 0 {
			opts = append(opts, framework.Query("limit", fmt.Sprint(limit)))
		}
		if cursor != "" {
			opts = append(opts, framework.Query("cursor", cursor))
		}
		p := getPage(ctx, c, path, field, opts...)
		pages = append(pages, p)
		rows = append(rows, p.rows...)
		if p.cursor == nil {
			return rows, pages
		}
		cursor = *p.cursor
	}
}

// walkOnce walks a list of len(want) rows by pages of limit (0: the default of 25) and checks that
// every row of want comes exactly once, no page holding more than the limit (a page can be shorter
// than limit anywhere, not only at the end). It returns the ids in the order read, and the pages.
func walkOnce(ctx context.Context, c *framework.Client, path, field, key string, limit int, want []string) ([]string, []page) {
	GinkgoHelper()
	rows, pages := walk(ctx, c, path, field, limit, 20)
	got := ids(rows, key)
	seen := map[string]bool{}
	for _, id := range got {
		Expect(seen[id]).To(BeFalse(), fmt.Sprintf("%s, limit %d: %s read twice on the walk", path, limit, id))
		seen[id] = true
	}
	Expect(got).To(ConsistOf(want), fmt.Sprintf("%s, limit %d: the walk reads every row once", path, limit))
	size := 25
	if limit > 0 {
		size = limit
	}
	for _, p := range pages {
		Expect(len(p.rows)).To(BeNumerically("<=", size), fmt.Sprintf("%s, limit %d: a page holds at most the limit", path, limit)+p.r.Describe())
	}
	return got, pages
}

// expectPrefixPage checks that page p holds at most max rows and that they are the first rows of
// want, in order: the page a limit asks for may be shorter than it ("A page can be shorter than
// limit"), never longer nor out of order.
func expectPrefixPage(p page, key string, want []string, max int, what string) {
	GinkgoHelper()
	got := ids(p.rows, key)
	Expect(len(got)).To(BeNumerically("<=", max), fmt.Sprintf("%s: at most %d rows", what, max)+p.r.Describe())
	Expect(got).To(Equal(want[:min(len(got), len(want))]), what+": the first rows, in order"+p.r.Describe())
}

// expectLimitReading checks a list answer to a limit the text leaves open (limit=0 where the text
// gives no lower bound, or a limit that is not a whole number): either the limit counts as omitted
// or is clamped, so the page is a prefix of the default page def, or it is refused with 400
// invalid_config. Every one of those readings passes.
func expectLimitReading(ctx context.Context, c *framework.Client, path, field, key, limit string, def page) {
	GinkgoHelper()
	r := c.Get(ctx, path, limitProbe(limit)...)
	if r.Status == http.StatusBadRequest {
		r.ExpectError(http.StatusBadRequest, "invalid_config")
		return
	}
	p := pageFrom(r.ExpectOK(http.StatusOK), field)
	got, want := ids(p.rows, key), ids(def.rows, key)
	Expect(len(got)).To(BeNumerically("<=", len(want)), fmt.Sprintf("%s?limit=%s: more rows than the default page", path, limit)+r.Describe())
	Expect(got).To(Equal(want[:len(got)]), fmt.Sprintf("%s?limit=%s: the rows are not the first rows of the default page", path, limit)+r.Describe())
}

// listIDs reads every page of GET /generations with the query and returns the ids in order.
func listIDs(ctx context.Context, c *framework.Client, query ...[2]string) []string {
	GinkgoHelper()
	return orEmpty(walkWhile(ctx, c, 50, query, func(int) {}))
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

// limitProbe is the query limit=v for a spec that checks how a server tolerates a limit. The
// description types limit as an integer; a value that is not a whole number (2.5, abc) breaks it on
// purpose and is marked framework.Invalid (a blank value counts as omitted and breaks nothing).
func limitProbe(v string) []framework.CallOption {
	opts := []framework.CallOption{framework.Query("limit", v)}
	if _, err := strconv.Atoi(strings.TrimSpace(v)); err != nil && strings.TrimSpace(v) != "" {
		opts = append(opts, framework.Invalid())
	}
	return opts
}

// expectDefaultAndClamp checks a list whose limit defaults to 25 and clamps to 50: the default page
// holds at most 25 rows, and limit=999 at most 50 (a page can be shorter than limit).
func expectDefaultAndClamp(ctx context.Context, c *framework.Client, path, field string) {
	GinkgoHelper()
	def := getPage(ctx, c, path, field)
	Expect(len(def.rows)).To(BeNumerically("<=", 25), def.r.Describe())
	total := def.r.Int("total")
	big := getPage(ctx, c, path, field, framework.Query("limit", "999"))
	Expect(len(big.rows)).To(BeNumerically("<=", min(total, 50)), "limit 999 is clamped to 50 (a page can be shorter than limit)"+big.r.Describe())
}

// rowMaker makes generation-list rows in a spender's workspace: cheap tts jobs, each canceled
// through control right after its submit (a canceled job is a failed row and costs nothing).
type rowMaker struct {
	s     *framework.Spec
	sp    spender
	voice string
	need  int64
}

// newRowMaker estimates the tts job once (every script has the same length, so the same price).
func newRowMaker(ctx context.Context, s *framework.Spec, sp spender) *rowMaker {
	GinkgoHelper()
	voice := firstVoice(ctx, sp.c)
	_, need := estimateOf(ctx, sp.c, "tts", ttsConfig(ctx, sp.c), map[string]any{"voice_id": voice})
	return &rowMaker{s: s, sp: sp, voice: voice, need: need}
}

// make makes n rows, moving the service clock 3 s before each (the agent_submit bucket refills 20 a
// minute, and every row gets its own created_at and updated_at), and returns their ids oldest first.
func (m *rowMaker) make(ctx context.Context, n int) []string {
	GinkgoHelper()
	var out []string
	for range n {
		m.s.Advance(ctx, 3)
		r := m.sp.c.Post(ctx, "/generations", submitBody("tts", ttsConfig(ctx, m.sp.c), m.need, map[string]any{"voice_id": m.voice})).ExpectOK(http.StatusCreated)
		id := r.String("generation_id")
		m.s.JobHook(ctx, id, "cancel", nil)
		out = append(out, id)
	}
	return out
}

// walkWhile follows next_cursor over GET /generations (query plus limit) from the first page to the
// end, calling between(i) after page i is read, and returns the ids in the order read. It fails
// after 40 pages.
func walkWhile(ctx context.Context, c *framework.Client, limit int, query [][2]string, between func(page int)) []string {
	GinkgoHelper()
	var out []string
	cursor := ""
	for i := 0; i < 40; i++ {
		opts := []framework.CallOption{framework.Query("limit", strconv.Itoa(limit))}
		for _, q := range query {
			opts = append(opts, framework.Query(q[0], q[1]))
		}
		if cursor != "" {
			opts = append(opts, framework.Query("cursor", cursor))
		}
		p := getPage(ctx, c, "/generations", openPage, opts...)
		Expect(len(p.rows)).To(BeNumerically("<=", limit), p.r.Describe())
		out = append(out, ids(p.rows, "generation_id")...)
		if p.cursor == nil {
			return out
		}
		cursor = *p.cursor
		between(i)
	}
	Fail("GET /generations: next_cursor did not end after 40 pages")
	return nil
}

// repeats returns the ids that occur more than once in list.
func repeats(list []string) []string {
	seen := map[string]int{}
	var out []string
	for _, id := range list {
		if seen[id]++; seen[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}
