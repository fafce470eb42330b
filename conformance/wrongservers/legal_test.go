package wrongservers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestFlipTailsIsItsOwnInverse(t *testing.T) {
	in := `{"generation_id":"gen_0123456789abcdef0123456789abcdef","url":"/files/ast_ffffffffffffffffffffffffffffffff?sig=x","key":"sk_live_abc","wfr":"wfr_00000000000000000000000000000000"}`
	out := string(flipTails([]byte(in)))
	if out == in {
		t.Fatal("flipTails changed nothing")
	}
	for _, id := range idPattern().FindAllString(out, -1) {
		if strings.Contains(in, id) {
			t.Errorf("%s kept its tail", id)
		}
	}
	if !strings.Contains(out, `"sk_live_abc"`) {
		t.Error("a key is not an id of the table and must stay as it is")
	}
	if back := string(flipTails([]byte(out))); back != in {
		t.Errorf("flipTails twice = %s, want the input back", back)
	}
}

func TestEncodeOrderedReversesKeys(t *testing.T) {
	v, _ := decodeAny([]byte(`{"a":1,"b":{"y":[1,2.5],"x":null},"c":"s"}`))
	got := string(encodeOrdered(v, false))
	if want := `{"c":"s","b":{"y":[1,2.5],"x":null},"a":1}`; got != want {
		t.Errorf("encodeOrdered = %s, want %s", got, want)
	}
	pretty := encodeOrdered(v, true)
	var back any
	if err := json.Unmarshal(pretty, &back); err != nil || !strings.Contains(string(pretty), "\n  ") {
		t.Errorf("indented encoding %q: %v", pretty, err)
	}
}

func TestShapeKeepsOnlyListedKeys(t *testing.T) {
	d := map[string]any{"ok": true, "extra": 1, "webhooks": []any{map[string]any{"webhook_id": "wh_x", "secret_hint": "x"}}}
	shape{"ok": nil, "webhooks": endpointShown}.keep(d)
	if _, has := d["extra"]; has {
		t.Error("extra kept")
	}
	row := d["webhooks"].([]any)[0].(map[string]any)
	if _, has := row["secret_hint"]; has || row["webhook_id"] != "wh_x" {
		t.Errorf("row = %v", row)
	}
}

// A list of 7 rows read by pages of 3 through splitPages visits every row once, in order, on
// pages no longer than the limit, and ends with next_cursor null.
func TestSplitPagesKeepsCursorsCoherent(t *testing.T) {
	all := []string{"voc_1", "voc_2", "voc_3", "voc_4", "voc_5", "voc_6", "voc_7"}
	mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		end := min(off+limit, len(all))
		var rows []any
		for _, id := range all[off:end] {
			rows = append(rows, map[string]any{"voice_id": id})
		}
		var next any
		if end < len(all) {
			next = strconv.Itoa(end)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "voices": rows, "total": len(all), "next_cursor": next})
	})
	h := splitPages()(&Env{}, trailingEmptyPage()(&Env{}, mock))
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatal("the cursor never ended")
		}
		q := url.Values{"limit": {"3"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, apiPrefix+"/voices?"+q.Encode(), nil))
		var d struct {
			Voices []struct {
				ID string `json:"voice_id"`
			} `json:"voices"`
			Next *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Voices) > 3 {
			t.Errorf("page %d holds %d rows, over the limit", page, len(d.Voices))
		}
		for _, v := range d.Voices {
			got = append(got, v.ID)
		}
		if d.Next == nil {
			break
		}
		cursor = *d.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(all) {
		t.Errorf("the walk read %v, want %v", got, all)
	}
}

func TestFractionalCreditsKeepTheHold(t *testing.T) {
	for _, p := range []int{1, 3, 9, 10, 20, 55, 100, 599} {
		mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"ok":true,"credits":%d,"max_credits_needed":%d}`, p, (p*11+9)/10)
		})
		rec := httptest.NewRecorder()
		fractionalCredits()(&Env{}, mock).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, apiPrefix+"/estimates", nil))
		var d struct {
			Credits float64 `json:"credits"`
			Need    int     `json:"max_credits_needed"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Credits == float64(p) {
			t.Errorf("price %d stayed whole", p)
		}
		if hold := int((d.Credits*1.1 - 1e-6) + 0.999999); hold != d.Need {
			t.Errorf("price %d became %v: ceil(x 1.1) = %d, the hold says %d", p, d.Credits, hold, d.Need)
		}
	}
}

func TestLegalTable(t *testing.T) {
	vs, err := LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 25 {
		t.Errorf("%d legal variants, want at least 25", len(vs))
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.Name] || v.Name == "" || v.Change == "" || v.Allows == "" {
			t.Errorf("variant %q: a unique name, what changes and what allows it", v.Name)
		}
		seen[v.Name] = true
		if v.API == nil && v.Hooks == nil && len(v.Args) == 0 {
			t.Errorf("variant %s changes nothing", v.Name)
		}
	}
	c := Combined(vs)
	if c.API == nil || c.Hooks == nil {
		t.Error("the combination lacks the API or hook wraps")
	}
}

// A blocked spec fails a legal run, and a whole-suite run's rules judged are given as a share of
// the plain mock's in the same mode.
func TestLegalTableCountsBlockedAndJudgedShare(t *testing.T) {
	rs := []LegalResult{
		{Variant: Variant{Name: "v"}, Whole: true, Mode: "c", Passed: 3, Blocked: 1, Judged: []string{"A-1", "B-2"}, Fully: 1, PlainJudged: 4, PlainFully: 3,
			Failures: []string{"[blocked] x (f.go:1): stopped"}},
		{Variant: Variant{Name: "plain-mock"}, Whole: true, Mode: "c", Passed: 5, Judged: []string{"A-1", "B-2", "C-3", "D-4"}},
	}
	if rs[0].OK() || !rs[1].OK() {
		t.Errorf("OK() = %v, %v; want a run with a blocked spec not OK, the plain one OK", rs[0].OK(), rs[1].OK())
	}
	var b strings.Builder
	WriteLegalTable(&b, rs)
	if !strings.Contains(b.String(), "2 of 4 (50.0%), fully 1 of 3") || !strings.Contains(b.String(), "1 blocked") {
		t.Errorf("the table does not give the blocked spec and the judged share:\n%s", b.String())
	}
}

// A pass made of skips does not count: a run under the floor of the plain mock's judged rules is
// named, a run over it and a run with no plain mock to compare with are not.
func TestBelowShare(t *testing.T) {
	judged := func(n int) []string { return make([]string, n) }
	results := []LegalResult{
		{Variant: Variant{Name: "thin"}, Judged: judged(80), PlainJudged: 100},
		{Variant: Variant{Name: "fine"}, Judged: judged(95), PlainJudged: 100},
		{Variant: Variant{Name: "alone"}, Judged: judged(10)},
	}
	got := belowShare(results, 90)
	if len(got) != 1 || !strings.Contains(got[0], "thin judged 80 of 100") {
		t.Fatalf("belowShare = %q, want the thin run alone", got)
	}
	if belowShare(results, 0) != nil {
		t.Fatal("a floor of 0 named a run")
	}
}
