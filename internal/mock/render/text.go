package render

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Wording of text answers. Each line template takes one keyword.
var (
	hookTemplates = [...]string{
		"Stop scrolling: %s just changed everything.",
		"Nobody told me %s could be this easy.",
		"Three seconds to see why everyone talks about %s.",
		"I tried %s for a week. Here is what happened.",
		"The %s hack I wish I knew sooner.",
		"POV: you finally found the right %s.",
		"Is %s worth it? Honest answer in 15 seconds.",
		"Before you buy anything else, look at %s.",
	}
	sceneTemplates = [...]string{
		"Close-up on %s in everyday use, natural light.",
		"Quick cuts: morning routine, %s saves the day.",
		"Side-by-side: life before and after %s.",
		"A friend asks about %s; a smile says it all.",
		"Slow pan across %s, the details in focus.",
	}
	ctaTemplates = [...]string{
		"Try %s today. Link below.",
		"Get your %s now while it lasts.",
		"Tap to see %s in action.",
		"Make %s part of your day. Order now.",
	}
)

// isFiller reports whether w is a frequent prompt word that makes a poor
// subject.
func isFiller(w string) bool {
	switch w {
	case "about", "aimed", "also", "advert", "best", "from", "have", "into", "just", "long",
		"make", "minute", "minutes", "more", "most", "only", "over", "second", "seconds",
		"short", "some", "than", "that", "their", "them", "then", "there", "these", "they",
		"this", "very", "video", "what", "when", "which", "while", "with", "your", "yours":
		return true
	}
	return false
}

// keywords returns up to n distinct lower-case words of at least four
// letters or digits from s that are not filler words, in order of
// appearance; "your product" when s has none.
func keywords(s string, n int) []string {
	var out []string
	seen := map[string]bool{} // membership only; never iterated
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w := strings.ToLower(f)
		if len([]rune(w)) < 4 || seen[w] || isFiller(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		out = []string{"your product"}
	}
	return out
}

// line fills a random template of templates with a random keyword.
func line(r *rand.ChaCha8, templates []string, words []string) string {
	return fmt.Sprintf(templates[intn(r, len(templates))], words[intn(r, len(words))])
}

// renderText makes a text answer from the prompt in req.Text.
//
// Without JSON the answer is a short ad script in plain text (a topic line,
// a hook, three scenes and a call to action). With JSON it is the object
// {"hooks": [string, ...]} with Count hooks (DefaultListItems when 0,
// clamped to MaxListItems), compactly encoded; Text and Bytes then carry
// the same JSON document as Result.
func renderText(req Request) (Output, error) {
	r := stream(req)
	words := keywords(req.Text, 8)
	if req.JSON {
		n := req.Count
		if n <= 0 {
			n = DefaultListItems
		}
		n = min(n, MaxListItems)
		// Consecutive templates from a random start: no two of the first
		// len(hookTemplates) hooks share a template.
		hooks := make([]string, n)
		start := intn(r, len(hookTemplates))
		for i := range hooks {
			tpl := hookTemplates[(start+i)%len(hookTemplates)]
			hooks[i] = fmt.Sprintf(tpl, words[intn(r, len(words))])
		}
		doc, err := json.Marshal(struct {
			Hooks []string `json:"hooks"`
		}{hooks})
		if err != nil {
			return Output{}, fmt.Errorf("render: encode json: %w", err)
		}
		return Output{
			ContentType: ContentTypeJSON,
			FileName:    FileName(req.CapabilityID, req.Index, "json"),
			Bytes:       doc,
			Text:        string(doc),
			Result:      json.RawMessage(doc),
		}, nil
	}
	var b strings.Builder
	topic := []rune(strings.Join(strings.Fields(req.Text), " "))
	if len(topic) > 80 {
		topic = append(topic[:77], '.', '.', '.')
	}
	fmt.Fprintf(&b, "Ad script — %s\n\n", string(topic))
	fmt.Fprintf(&b, "HOOK: %s\n", line(r, hookTemplates[:], words))
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, "SCENE %d: %s\n", i, line(r, sceneTemplates[:], words))
	}
	fmt.Fprintf(&b, "CTA: %s\n", line(r, ctaTemplates[:], words))
	text := b.String()
	return Output{
		ContentType: ContentTypeText,
		FileName:    FileName(req.CapabilityID, req.Index, "txt"),
		Bytes:       []byte(text),
		Text:        text,
	}, nil
}
