package render

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTextAnswer(t *testing.T) {
	o, err := Render(Request{Seed: 2, Kind: KindText, Text: "A 30 second ad for an insulated coffee bottle aimed at commuters.", CapabilityID: "ad_script_writer"})
	if err != nil {
		t.Fatal(err)
	}
	if o.ContentType != ContentTypeText || o.FileName != "ad_script_writer_0.txt" || o.Result != nil {
		t.Fatalf("output fields: %q %q result %s", o.ContentType, o.FileName, o.Result)
	}
	if string(o.Bytes) != o.Text || o.Width != 0 || o.DurationMS != 0 {
		t.Fatal("bytes and text differ, or media fields set")
	}
	for _, want := range []string{"HOOK: ", "SCENE 1: ", "SCENE 3: ", "CTA: "} {
		if !strings.Contains(o.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, o.Text)
		}
	}
	words := keywords("A 30 second ad for an insulated coffee bottle aimed at commuters.", 8)
	found := false
	for _, w := range words {
		found = found || strings.Contains(o.Text[strings.Index(o.Text, "HOOK"):], w)
	}
	if !found {
		t.Errorf("script uses none of the prompt's words %v:\n%s", words, o.Text)
	}
}

func TestJSONAnswer(t *testing.T) {
	for _, c := range []struct{ count, want int }{{0, DefaultListItems}, {3, 3}, {10, 10}, {1000, MaxListItems}} {
		o, err := Render(Request{Seed: 2, Kind: KindText, JSON: true, Count: c.count, Text: "Insulated coffee bottle", CapabilityID: "hook_ideas"})
		if err != nil {
			t.Fatal(err)
		}
		if o.ContentType != ContentTypeJSON || o.FileName != "hook_ideas_0.json" {
			t.Fatalf("output fields: %q %q", o.ContentType, o.FileName)
		}
		if o.Text != string(o.Result) || string(o.Bytes) != o.Text {
			t.Fatal("text, bytes and result are not the same document")
		}
		var doc struct {
			Hooks []string `json:"hooks"`
		}
		dec := json.NewDecoder(strings.NewReader(o.Text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("result is not {\"hooks\": [...]}: %v", err)
		}
		if len(doc.Hooks) != c.want {
			t.Errorf("count %d: %d hooks, want %d", c.count, len(doc.Hooks), c.want)
		}
		seen := map[string]bool{}
		for i, h := range doc.Hooks {
			if h == "" {
				t.Error("empty hook")
			}
			if i < len(hookTemplates) && seen[h] {
				t.Errorf("hook %q repeated", h)
			}
			seen[h] = true
		}
	}
}

func TestKeywords(t *testing.T) {
	got := keywords("Coffee, coffee! The BEST bottle: with 12 hours hot; über-warm", 4)
	want := []string{"coffee", "bottle", "hours", "über"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keywords = %v, want %v", got, want)
	}
	if got := keywords("a b c", 3); len(got) != 1 || got[0] != "your product" {
		t.Errorf("keywords of short words = %v", got)
	}
}
