package catalogue

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestPriceKeys: a key carries a price when its words name one and it holds an amount; a price
// word in an ordinary setting's name is not a price (CAP-021: the schema "carries no price").
func TestPriceKeys(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         []string
	}{
		{"x- keyword with a unit price", `{"type":"object","x-credits-per-unit":12}`, []string{"$.x-credits-per-unit"}},
		{"price nested in a property", `{"properties":{"prompt":{"type":"string","unitPrice":3}}}`, []string{"$.properties.prompt.unitPrice"}},
		{"billing object", `{"billing":{"unit":"request","cost":7}}`, []string{"$.billing", "$.billing.cost"}},
		{"price as text", `{"x-fee":"$0.50"}`, []string{"$.x-fee"}},
		{"x- amount word", `{"x-amount":"3 credits"}`, []string{"$.x-amount"}},
		{"property fixing a price", `{"properties":{"credits":{"type":"integer","const":12}}}`, []string{"$.properties.credits"}},
		{"price tiers", `{"x-pricing":[{"up_to":10,"credits":1}]}`, []string{"$.x-pricing", "$.x-pricing[0].credits"}},
		{"a price as text under a neutral name", `{"x-hint":"8 credits per image"}`, []string{"$.x-hint"}},
		{"a price as text in a property", `{"properties":{"size":{"type":"string",` +
			`"x-note":"from $0.40"}}}`, []string{"$.properties.size.x-note"}},
		{"prose mentioning credits", `{"description":"Costs 8 credits per image.","properties":{"n":{"type":"integer",` +
			`"title":"2 credits each"}}}`, nil},
		{"charge_level, an enum of strings", `{"properties":{"charge_level":{"type":"string","enum":["low","standard","high"],` +
			`"default":"standard"}}}`, nil},
		{"cost_profile, a quality knob", `{"properties":{"cost_profile":{"type":"string",` +
			`"description":"Quality against speed; costs 5 credits less when fast.","enum":["fast","quality"]}}}`, nil},
		{"a numeric input named for credits", `{"properties":{"credits_cap":{"type":"integer","minimum":1}}}`, nil},
		{"a pricing unit without an amount", `{"x-pricing-unit":"second"}`, nil},
		{"an ordinary property named amount", `{"properties":{"amount":{"type":"integer","default":2}}}`, nil},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.schema), &v); err != nil {
			t.Fatal(err)
		}
		if got := PriceKeys(v, "$"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: priceKeys = %v, want %v", tc.name, got, tc.want)
		}
	}
}
