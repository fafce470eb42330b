package paging

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// list serves GET /api/v1/things as pages of limit rows (default 25, clamped to 50) under
// "things", the cursor being the index of the next row; wrong, when set, spoils the answer.
type list struct {
	rows  []string
	wrong func(body map[string]any, start, end int)
}

func (l *list) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limit := 25
	if v := r.URL.Query().Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	limit = min(limit, 50)
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	end := min(start+limit, len(l.rows))
	var rows []any
	for _, id := range l.rows[start:end] {
		rows = append(rows, map[string]any{"thing_id": id})
	}
	body := map[string]any{"ok": true, "things": rows, "next_cursor": nil, "total": len(l.rows)}
	if end < len(l.rows) {
		body["next_cursor"] = strconv.Itoa(end)
	}
	if l.wrong != nil {
		l.wrong(body, start, end)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// served is the list the test server answers with now; client calls it.
var (
	served atomic.Pointer[list]
	client *framework.Client
)

// TestMain starts one test server on 127.0.0.1:0 (it answers with served) and one framework over
// it: loading the descriptions once keeps the tests quick.
func TestMain(m *testing.M) {
	var stop func()
	client, stop = drivertest.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Load().ServeHTTP(w, r)
	}))
	code := m.Run()
	stop()
	os.Exit(code)
}

// serve makes the test server answer with l and returns a client of it.
func serve(t *testing.T, l *list) *framework.Client {
	t.Helper()
	served.Store(l)
	return client
}

func things(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("thing-%02d", i)
	}
	return out
}

func TestWalkReadsEveryPage(t *testing.T) {
	want := things(7)
	c := serve(t, &list{rows: want})
	var got []string
	var pages []Page
	if msg := drivertest.FailureOf(t, func() {
		got, pages = WalkOnce(context.Background(), c, "/things", "things", "thing_id", 3, want)
	}); msg != "" {
		t.Fatalf("a right list failed the walk: %s", msg)
	}
	if !slices.Equal(got, want) || len(pages) != 3 {
		t.Errorf("walk read %v in %d pages, want %v in 3", got, len(pages), want)
	}
	if pages[2].Cursor != nil || pages[0].Cursor == nil || *pages[0].Cursor != "3" {
		t.Errorf("cursors: first %v, last %v; want 3 then nil", pages[0].Cursor, pages[2].Cursor)
	}
	// Open finds the one array beside next_cursor.
	if msg := drivertest.FailureOf(t, func() {
		if p := Get(context.Background(), c, "/things", Open); len(p.Rows) != 7 {
			t.Errorf("the open page has %d rows, want 7", len(p.Rows))
		}
	}); msg != "" {
		t.Fatalf("an open page failed: %s", msg)
	}
}

// Each wrong list fails the walk with the text's reason.
func TestWalkFailsWrongPages(t *testing.T) {
	want := things(7)
	tests := []struct {
		name, says string
		wrong      func(body map[string]any, start, end int)
	}{
		{"no next_cursor", "has no next_cursor", func(b map[string]any, _, _ int) { delete(b, "next_cursor") }},
		{"empty cursor at the end", "empty string", func(b map[string]any, _, end int) {
			if end == 7 {
				b["next_cursor"] = ""
			}
		}},
		{"cursor a number", "neither a string nor null", func(b map[string]any, _, _ int) { b["next_cursor"] = 3 }},
		{"a row twice", "read twice", func(b map[string]any, start, _ int) {
			if start > 0 {
				rows := b["things"].([]any)
				b["things"] = append(rows[:len(rows)-1], map[string]any{"thing_id": "thing-00"})
			}
		}},
		{"a row lost", "every row once", func(b map[string]any, start, _ int) {
			if start == 3 {
				b["things"] = b["things"].([]any)[1:]
			}
		}},
		{"a page over the limit", "at most the limit", func(b map[string]any, start, _ int) {
			if start == 0 {
				b["things"] = append(b["things"].([]any), map[string]any{"thing_id": "thing-03"})
				b["next_cursor"] = "4"
			}
		}},
		{"a row not an object", "not an object", func(b map[string]any, _, _ int) { b["things"] = []any{"thing-00"} }},
		{"a cursor that never ends", "did not end after 20 pages", func(b map[string]any, _, _ int) { b["next_cursor"] = "0" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &list{rows: want, wrong: tc.wrong})
			msg := drivertest.FailureOf(t, func() { WalkOnce(context.Background(), c, "/things", "things", "thing_id", 3, want) })
			if !strings.Contains(msg, tc.says) {
				t.Errorf("walk of a list with %s: failure %q, want one saying %q", tc.name, msg, tc.says)
			}
		})
	}
}

func TestDefaultAndClamp(t *testing.T) {
	c := serve(t, &list{rows: things(60)})
	if msg := drivertest.FailureOf(t, func() { ExpectDefaultAndClamp(context.Background(), c, "/things", "things") }); msg != "" {
		t.Fatalf("a list that defaults to 25 and clamps to 50 failed: %s", msg)
	}
	unclamped := &list{rows: things(60), wrong: func(b map[string]any, start, end int) {
		if end-start == 50 {
			b["things"] = append(b["things"].([]any), map[string]any{"thing_id": "thing-50"})
		}
	}}
	c = serve(t, unclamped)
	msg := drivertest.FailureOf(t, func() { ExpectDefaultAndClamp(context.Background(), c, "/things", "things") })
	if !strings.Contains(msg, "clamped to 50") {
		t.Errorf("a page of 51 rows at limit 999: failure %q, want the clamp's", msg)
	}
}

func TestExpectPrefix(t *testing.T) {
	var answer *framework.Response
	c := serve(t, &list{rows: things(1)})
	if msg := drivertest.FailureOf(t, func() { answer = Get(context.Background(), c, "/things", "things").R }); msg != "" {
		t.Fatal(msg)
	}
	rows := func(ids ...string) Page {
		p := Page{R: answer}
		for _, id := range ids {
			p.Rows = append(p.Rows, map[string]any{"thing_id": id})
		}
		return p
	}
	want := []string{"a", "b", "c"}
	if msg := drivertest.FailureOf(t, func() { ExpectPrefix(rows("a", "b"), "thing_id", want, 2, "limit 2") }); msg != "" {
		t.Errorf("a shorter prefix failed: %s", msg)
	}
	msg := drivertest.FailureOf(t, func() { ExpectPrefix(rows("b", "a"), "thing_id", want, 2, "limit 2") })
	if !strings.Contains(msg, "in order") {
		t.Errorf("rows out of order: failure %q", msg)
	}
	msg = drivertest.FailureOf(t, func() { ExpectPrefix(rows("a", "b", "c"), "thing_id", want, 2, "limit 2") })
	if !strings.Contains(msg, "at most 2") {
		t.Errorf("a page over its limit: failure %q", msg)
	}
}

func TestIDsByPrefix(t *testing.T) {
	id := "gen_0123456789abcdef0123456789abcdef"
	rows := []map[string]any{
		{"generation_id": "gen_named"},
		{"job": map[string]any{"id": id}},
		{"a": id, "b": "gen_fedcba9876543210fedcba9876543210"},
	}
	if got := IDs(rows, "generation_id"); !slices.Equal(got, []string{"gen_named", id, ""}) {
		t.Errorf("IDs = %q", got)
	}
	if got := Repeats([]string{"a", "b", "a", "c", "a", "b"}); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Repeats = %q", got)
	}
}

// WalkUntil stops after the first page on which enough holds, and sends its query on every page.
func TestWalkUntilStops(t *testing.T) {
	c := serve(t, &list{rows: things(10)})
	var rows []map[string]any
	var pages []Page
	if msg := drivertest.FailureOf(t, func() {
		rows, pages = WalkUntil(context.Background(), c, "/things", "things", 3, 20, func(pages []Page) bool {
			return len(pages) == 2
		}, framework.Query("mine", "1"))
	}); msg != "" {
		t.Fatal(msg)
	}
	if len(pages) != 2 || len(rows) != 6 {
		t.Fatalf("WalkUntil read %d rows in %d pages, want 6 in 2", len(rows), len(pages))
	}
	for i, p := range pages {
		if !strings.Contains(p.R.Exchange.URL, "mine=1") {
			t.Errorf("page %d was read without the query: %s", i, p.R.Exchange.URL)
		}
	}
}

// enough sees the last page too: a walk that never has enough still reads every row through it.
func TestWalkUntilSeesTheLastPage(t *testing.T) {
	c := serve(t, &list{rows: things(7)})
	seen := 0
	if msg := drivertest.FailureOf(t, func() {
		WalkUntil(context.Background(), c, "/things", "things", 3, 20, func(pages []Page) bool {
			seen += len(pages[len(pages)-1].Rows)
			return false
		})
	}); msg != "" {
		t.Fatal(msg)
	}
	if seen != 7 {
		t.Errorf("enough saw %d rows of 7", seen)
	}
}
