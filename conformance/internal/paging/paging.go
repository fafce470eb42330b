// Package paging drives the cursor-paged lists of the API for the suite's specs: it reads one
// page, walks a list from its first page to the end, and checks what the text says of every page
// (next_cursor present, null at the end, never an empty string; a page no longer than its limit; a
// limit that defaults and clamps). Where the text does not name a page's array key (Open), the
// rows are found by conformance/internal/openshape.
//
// Its functions fail the running spec (Gomega's Expect) when an answer breaks the text, as the
// suite's other helpers do; they are called from inside a spec.
package paging

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Open, as the field of a page helper (Get, Walk, ...), says the text does not name the page's
// array key: the rows are the one array beside next_cursor (or the key the target declares with
// --shape page:<path>=KEY).
const Open = ""

// Page is one page of a cursor-paged list.
type Page struct {
	R      *framework.Response // the answer the page was read from
	Rows   []map[string]any
	Cursor *string // nil when next_cursor is null
}

// RowsOf finds the rows (and the object holding them beside next_cursor) of the page answered in
// r, under field (Open: found, see openshape.PageOf).
func RowsOf(r *framework.Response, field string) openshape.Page {
	GinkgoHelper()
	declared := ""
	if field == Open {
		declared = r.DeclaredShape(openshape.PageKey(r.Path()))
	}
	p, err := openshape.PageOf(r.Doc(), field, declared)
	if err != nil {
		if field == Open && !errors.Is(err, openshape.ErrNotFound) {
			r.Lacks("%s: %v; declare it with --shape %s=KEY", r.Path(), err, openshape.PageKey(r.Path()))
		}
		Expect(err).NotTo(HaveOccurred(), "the page's rows"+r.Describe())
	}
	return p
}

// Get reads one page of a list whose rows are under field.
func Get(ctx context.Context, c *framework.Client, path, field string, opts ...framework.CallOption) Page {
	GinkgoHelper()
	return From(c.Get(ctx, path, opts...).ExpectOK(http.StatusOK), field)
}

// Omitted is Get for a query the text says counts as omitted (a bad limit, a blank cursor): the
// answer's status is first checked under the spec's step, unjudged, so that a refusal fails the
// rule that says the value is read as omitted, not only the list's answer rule.
func Omitted(ctx context.Context, c *framework.Client, path, field, what string, opts ...framework.CallOption) Page {
	GinkgoHelper()
	r := c.Get(ctx, path, append(append([]framework.CallOption(nil), opts...), framework.Unjudged())...)
	Expect(r.Status).To(Equal(http.StatusOK),
		what+": the value counts as omitted, so the answer is a page, not a refusal"+r.Describe())
	return From(r.ExpectOK(http.StatusOK), field)
}

// From reads a 200 answer of a list whose rows are under field (Open: where the text does not
// name the key, the one array beside next_cursor) as one page.
func From(r *framework.Response, field string) Page {
	GinkgoHelper()
	p := Page{R: r}
	pg := RowsOf(r, field)
	for i, v := range pg.Rows {
		row, ok := v.(map[string]any)
		Expect(ok).To(BeTrue(), fmt.Sprintf("row %d of the page is not an object", i)+r.Describe())
		p.Rows = append(p.Rows, row)
	}
	nc, present := pg.Holder[openshape.Cursor]
	Expect(present).To(BeTrue(), "the answer has no next_cursor (it must be present, null on the last page)"+r.Describe())
	if nc != nil {
		s, ok := nc.(string)
		Expect(ok).To(BeTrue(), "next_cursor is neither a string nor null"+r.Describe())
		Expect(s).NotTo(BeEmpty(), "next_cursor is an empty string; the end is null"+r.Describe())
		p.Cursor = &s
	}
	return p
}

// Walk follows next_cursor from the first page until it is null and returns every row and the
// pages. It fails the spec after maxPages pages (a cursor that never ends).
func Walk(ctx context.Context, c *framework.Client, path, field string, limit int, maxPages int) ([]map[string]any, []Page) {
	GinkgoHelper()
	return WalkUntil(ctx, c, path, field, limit, maxPages, nil)
}

// WalkUntil is Walk that stops after the first page on which enough(the pages read so far) holds
// (nil: at the end only), sending opts (a query) on every page. enough is called on every page
// read, the last one included.
func WalkUntil(ctx context.Context, c *framework.Client, path, field string, limit int, maxPages int,
	enough func(pages []Page) bool, opts ...framework.CallOption) ([]map[string]any, []Page) {
	GinkgoHelper()
	var rows []map[string]any
	var pages []Page
	cursor := ""
	for i := 0; ; i++ {
		Expect(i).To(BeNumerically("<", maxPages), fmt.Sprintf("%s: next_cursor did not end after %d pages", path, maxPages))
		page := slices.Clone(opts)
		if limit > 0 {
			page = append(page, framework.Query("limit", fmt.Sprint(limit)))
		}
		if cursor != "" {
			page = append(page, framework.Query("cursor", cursor))
		}
		p := Get(ctx, c, path, field, page...)
		pages = append(pages, p)
		rows = append(rows, p.Rows...)
		// enough sees every page, the last one too.
		if stop := enough != nil && enough(pages); stop || p.Cursor == nil {
			return rows, pages
		}
		cursor = *p.Cursor
	}
}

// WalkOnce walks a list of len(want) rows by pages of limit (0: the default of 25) and checks that
// every row of want comes exactly once, no page holding more than the limit (a page can be shorter
// than limit anywhere, not only at the end). It returns the ids in the order read, and the pages.
func WalkOnce(ctx context.Context, c *framework.Client, path, field, key string, limit int, want []string) ([]string, []Page) {
	GinkgoHelper()
	rows, pages := Walk(ctx, c, path, field, limit, 20)
	got := IDs(rows, key)
	seen := map[string]bool{}
	for _, id := range got {
		Expect(seen[id]).To(BeFalse(), fmt.Sprintf("%s, limit %d: %s read twice on the walk", path, limit, id))
		seen[id] = true
	}
	Expect(got).To(ConsistOf(want), fmt.Sprintf("%s, limit %d: the walk reads every row once", path, limit))
	size := contract.PageSizeDefault
	if limit > 0 {
		size = limit
	}
	for _, p := range pages {
		Expect(len(p.Rows)).To(BeNumerically("<=", size),
			fmt.Sprintf("%s, limit %d: a page holds at most the limit", path, limit)+p.R.Describe())
	}
	return got, pages
}

// ExpectPrefix checks that page p holds at most max rows and that they are the first rows of
// want, in order: the page a limit asks for may be shorter than it ("A page can be shorter than
// limit"), never longer nor out of order.
func ExpectPrefix(p Page, key string, want []string, max int, what string) {
	GinkgoHelper()
	got := IDs(p.Rows, key)
	Expect(len(got)).To(BeNumerically("<=", max), fmt.Sprintf("%s: at most %d rows", what, max)+p.R.Describe())
	Expect(got).To(Equal(want[:min(len(got), len(want))]), what+": the first rows, in order"+p.R.Describe())
}

// ExpectLimitReading checks a list answer to a limit the text leaves open (limit=0 where the text
// gives no lower bound, or a limit that is not a whole number): either the limit counts as omitted
// or is clamped, so the page is a prefix of the default page def, or it is refused with 400
// invalid_config. Every one of those readings passes.
func ExpectLimitReading(ctx context.Context, c *framework.Client, path, field, key, limit string, def Page) {
	GinkgoHelper()
	r := c.Get(ctx, path, LimitProbe(limit)...)
	if r.Status == http.StatusBadRequest {
		r.ExpectError(http.StatusBadRequest, "invalid_config")
		return
	}
	p := From(r.ExpectOK(http.StatusOK), field)
	got, want := IDs(p.Rows, key), IDs(def.Rows, key)
	Expect(len(got)).To(BeNumerically("<=", len(want)),
		fmt.Sprintf("%s?limit=%s: more rows than the default page", path, limit)+r.Describe())
	Expect(got).To(Equal(want[:len(got)]),
		fmt.Sprintf("%s?limit=%s: the rows are not the first rows of the default page", path, limit)+r.Describe())
}

// LimitProbe is the query limit=v for a spec that checks how a server tolerates a limit. The
// description types limit as an integer; a value that is not a whole number (2.5, abc) breaks it on
// purpose and is marked framework.Invalid (a blank value counts as omitted and breaks nothing).
func LimitProbe(v string) []framework.CallOption {
	opts := []framework.CallOption{framework.Query("limit", v)}
	if _, err := strconv.Atoi(strings.TrimSpace(v)); err != nil && strings.TrimSpace(v) != "" {
		opts = append(opts, framework.Invalid())
	}
	return opts
}

// ExpectDefaultAndClamp checks a list whose limit defaults to 25 and clamps to 50: the default
// page holds at most 25 rows, and limit=999 at most 50 (a page can be shorter than limit).
func ExpectDefaultAndClamp(ctx context.Context, c *framework.Client, path, field string) {
	GinkgoHelper()
	def := Get(ctx, c, path, field)
	Expect(len(def.Rows)).To(BeNumerically("<=", contract.PageSizeDefault), def.R.Describe())
	total := def.R.Int("total")
	big := Get(ctx, c, path, field, framework.Query("limit", "999"))
	Expect(len(big.Rows)).To(BeNumerically("<=", min(total, contract.PageSizeMax)),
		"limit 999 is clamped to 50 (a page can be shorter than limit)"+big.R.Describe())
}

// GenerationIDs reads every page of GET /generations with the query and returns the ids in order
// (an empty list, never nil, when there are none).
func GenerationIDs(ctx context.Context, c *framework.Client, query ...[2]string) []string {
	GinkgoHelper()
	out := WalkGenerations(ctx, c, contract.PageSizeMax, query, func(int) {})
	if out == nil {
		return []string{}
	}
	return out
}

// WalkGenerations follows next_cursor over GET /generations (query plus limit) from the first page
// to the end, calling between(i) after page i is read, and returns the ids in the order read. It
// fails after 40 pages.
func WalkGenerations(ctx context.Context, c *framework.Client, limit int, query [][2]string, between func(page int)) []string {
	GinkgoHelper()
	return WalkGenerationsUntil(ctx, c, limit, query, between, func([]string) bool { return false })
}

// WalkGenerationsUntil is WalkGenerations that stops after the first page on which enough(ids read
// so far) holds, for a spec that judges only its own rows of a list that may hold many more (a
// persistent workspace): it reads no more pages than those rows need.
func WalkGenerationsUntil(ctx context.Context, c *framework.Client, limit int, query [][2]string,
	between func(page int), enough func(read []string) bool) []string {
	GinkgoHelper()
	var opts []framework.CallOption
	for _, q := range query {
		opts = append(opts, framework.Query(q[0], q[1]))
	}
	var out []string
	WalkUntil(ctx, c, "/generations", Open, limit, 40, func(pages []Page) bool {
		p := pages[len(pages)-1]
		Expect(len(p.Rows)).To(BeNumerically("<=", limit), p.R.Describe())
		out = append(out, IDs(p.Rows, "generation_id")...)
		if enough(out) {
			return true
		}
		if p.Cursor != nil {
			between(len(pages) - 1)
		}
		return false
	}, opts...)
	return out
}

// Repeats returns the ids that occur more than once in list.
func Repeats(list []string) []string {
	seen := map[string]int{}
	var out []string
	for _, id := range list {
		if seen[id]++; seen[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}

// IDs returns the string field key of every row. A row that lacks the field but carries exactly one
// id of the prefix the text gives key (generation_id: gen_), wherever it sits, gives that id: a
// generation list row is "not shown beyond the generation id, ..."; "" otherwise.
func IDs(rows []map[string]any, key string) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		s, _ := r[key].(string)
		if s == "" {
			s = idByPrefix(r, key)
		}
		out = append(out, s)
	}
	return out
}

// idByPrefix is the one id of the kind of field key that row carries anywhere, "" when it has none
// or several.
func idByPrefix(row map[string]any, key string) string {
	kind, known := judge.FieldKind(key)
	if !known {
		return ""
	}
	if found := openshape.IDs(row, kind.Prefix); len(found) == 1 {
		return found[0]
	}
	return ""
}
