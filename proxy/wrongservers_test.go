package proxy

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/wrongservers"
)

// wrongSample are entries of the wrong-server table whose mistake an ordinary session shows (a
// catalogue walk, an estimate, a submit, reads, a wait, lists, a refusal or two); the proxy must
// name one of the entry's rules on the server side (as an advisory where the rule's reading is
// the reference's own choice, as CORE-002's is). The whole table is the suite's measure (make
// wrong-servers); this sample keeps the proxy honest in make test.
var wrongSample = []string{
	"err-not-found-403", "err-invalid-config-422", "err-unauthorized-403", "err-no-ok-false", "err-no-credits-charged",
	"core-error-flattened", "core-cacheable-errors", "core-cors", "core-no-ok", "core-timestamp-no-zone",
	"submit-no-location", "submit-cacheable", "gen-charged-zero-while-running", "gen-no-link-lifetime",
	"id-uppercase-hex", "list-end-empty-cursor",
}

func TestWrongServersBehindTheProxy(t *testing.T) {
	all := wrongservers.All()
	for _, name := range wrongSample {
		i := slices.IndexFunc(all, func(s wrongservers.Server) bool { return s.Name == name })
		if i < 0 {
			t.Errorf("%s is not in the wrong-server table", name)
			continue
		}
		srv := all[i]
		t.Run(name, func(t *testing.T) {
			tg := startTarget(t, func(next http.Handler) http.Handler { return srv.API(&wrongservers.Env{}, next) })
			c := tg.client(t, tg.info.GenerateKey)
			walkAPI(t, tg, c, false)
			c.do("GET", "/generations/gen_0123456789abcdef0123456789abcdef", nil)                                 // not_found
			c.do("POST", "/estimates", map[string]any{"capability_id": "tts", "config": map[string]any{"zz": 1}}) // invalid_config
			(&client{t: t, base: tg.through}).do("GET", "/credits/balance", nil)                                  // not_authorized
			var got []string
			for _, f := range tg.findings(t) {
				if f.Side == SideServer {
					got = append(got, f.RuleID)
				}
			}
			if !slices.ContainsFunc(srv.Rules, func(r string) bool { return slices.Contains(got, r) }) {
				t.Errorf("%s (%s): no server finding names %v; got %v (all: %+v)", name, srv.Mistake, srv.Rules, got, tg.findings(t))
			}
		})
	}
}
