package proxy

import (
	"net/http"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/wrongservers"
)

// The mirror of the wrong-server sample: each legal variant (the mock behind a proxy that answers
// in another form the interface text allows), and all of them combined, behind mediaspec proxy: an
// ordinary session gives no failing finding on the server's side. Advisories (a departure from
// the reference's own choices) may come; they never fail anything.
func TestLegalVariantsBehindTheProxy(t *testing.T) {
	vs, err := wrongservers.LegalVariants()
	if err != nil {
		t.Fatal(err)
	}
	vs = append(vs, wrongservers.Combined(vs))
	for _, v := range vs {
		if v.API == nil {
			continue
		}
		if v.Outsider {
			// This test's client walks the mock's own layout (its page keys and record names);
			// a server laid out otherwise is driven by the suite's open-shapes layer, in make
			// legal-scrambled, not by this walk.
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			tg := startTarget(t, func(next http.Handler) http.Handler { return v.API(&wrongservers.Env{}, next) })
			c := tg.client(t, tg.info.GenerateKey)
			walkAPI(t, tg, c, false)
			ledgerWalk(t, tg, c)
			ledgerWalk(t, tg, budgetKey(t, tg))
			bucketWalk(t, tg)
			c.do("GET", "/generations/gen_0123456789abcdef0123456789abcdef", nil)                                 // not_found
			c.do("POST", "/estimates", map[string]any{"capability_id": "tts", "config": map[string]any{"zz": 1}}) // invalid_config
			(&client{t: t, base: tg.through}).do("GET", "/credits/balance", nil)                                  // not_authorized
			for _, f := range tg.findings(t) {
				if f.Side == SideServer && !f.Advisory {
					t.Errorf("%s (%s): %s %s %s: %s", v.Name, v.Change, f.Level, f.RuleID, f.Request, f.Advice)
				}
			}
		})
	}
}
