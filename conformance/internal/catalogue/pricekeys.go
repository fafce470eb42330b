package catalogue

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// priceWords are the words that name a price or a charge in a schema key; priceWordsX adds those
// that name one only in an x- extension keyword (a property named "amount" or "rate" is ordinary).
var (
	priceWords = []string{"price", "prices", "priced", "pricing", "credit", "credits", "cost", "costs", "fee", "fees", "billing",
		"billed", "charge", "charges", "charged"}
	priceWordsX = []string{"amount", "rate", "usd", "cents", "spend", "tariff"}
)

// amountText is a string that states an amount: a number, with or without a currency sign or a
// credits or currency unit ("12", "$0.50", "3 credits", "0.2 USD").
var amountText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*[$€£]?\s*[0-9]+([.,][0-9]+)?\s*(credits?|usd|eur|gbp|cents?)?\s*$`)
})

// pricedText is a string that states an amount of credits or money somewhere in it ("8 credits
// per image", "from $0.40"): a price whatever the key that holds it.
var pricedText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[$€£]\s*[0-9]|\b[0-9]+([.,][0-9]+)?\s*(credits?|usd|eur|gbp|cents?)\b`)
})

// PriceKeys walks a config schema and returns the path of every key (a keyword, an x- extension
// keyword or a property name, at any depth) that carries a price (Capability: the schema "carries
// no price"): its words name a price and it holds an amount. A word alone is not a price: a
// property charge_level with an enum of strings, or cost_profile, a quality against speed knob,
// is an ordinary setting. An amount is a number or a string stating one; under a keyword, any
// amount inside its value (billing: {cost: 7}); for a property, a number its schema fixes (const,
// default, enum or examples), for the property's own schema is the shape of an input, not a price.
// A keyword whose value is text stating an amount of credits or money carries a price whatever its
// name. Values that are data or prose (enum, const, default, examples, description, title) are not
// walked.
func PriceKeys(v any, path string) []string {
	return priceKeysIn(v, path, false)
}

// priceKeysIn is PriceKeys for v, a map whose keys are property names when names is set (the
// value of properties, patternProperties, $defs or definitions), else keywords.
func priceKeysIn(v any, path string, names bool) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			p := path + "." + k
			words := keyWords(k)
			hit := slices.ContainsFunc(words, func(w string) bool { return slices.Contains(priceWords, w) })
			if !names && strings.HasPrefix(strings.ToLower(k), "x-") {
				hit = hit || slices.ContainsFunc(words, func(w string) bool { return slices.Contains(priceWordsX, w) })
			}
			text, _ := sub.(string)
			data := slices.Contains([]string{"enum", "const", "default", "examples", "example", "description", "title"}, k)
			if hit && (names && fixesAmount(sub) || !names && holdsAmount(sub)) || !names && !data && pricedText().MatchString(text) {
				out = append(out, p)
			}
			if names {
				out = append(out, priceKeysIn(sub, p, false)...)
				continue
			}
			switch {
			case data:
				continue
			case slices.Contains([]string{"properties", "patternProperties", "$defs", "definitions"}, k):
				out = append(out, priceKeysIn(sub, p, true)...)
				continue
			}
			out = append(out, priceKeysIn(sub, p, false)...)
		}
	case []any:
		for i, sub := range t {
			out = append(out, priceKeysIn(sub, fmt.Sprintf("%s[%d]", path, i), false)...)
		}
	}
	sort.Strings(out)
	return out
}

// holdsAmount reports whether v is an amount or holds one at any depth.
func holdsAmount(v any) bool {
	switch t := v.(type) {
	case json.Number, float64, int, int64:
		return true
	case string:
		return amountText().MatchString(t)
	case map[string]any:
		for _, sub := range t {
			if holdsAmount(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range t {
			if holdsAmount(sub) {
				return true
			}
		}
	}
	return false
}

// fixesAmount reports whether v, a property's schema, fixes an amount: its const, default, enum or
// examples hold one.
func fixesAmount(v any) bool {
	m, _ := v.(map[string]any)
	for _, k := range []string{"const", "default", "enum", "examples", "example"} {
		if sub, ok := m[k]; ok && holdsAmount(sub) {
			return true
		}
	}
	return false
}
