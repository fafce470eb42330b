package wrongservers

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mediaspec/mediaspec/internal/contract"
)

// checkServers are mistakes in the submit check order.
var checkServers = []Server{
	{
		Name: "check-config-before-max-credits", Rules: []string{"CHECK-007", "CHECK-001"},
		Mistake: "the spend caps are checked before max_credits (a per-generation cap refusal wins over max_credits_exceeded)",
		API: errorsWith(submitRoute, "max_credits_exceeded", func(_ *http.Request, a *answer, e map[string]any) {
			if l := obj(e, "limit"); l != nil {
				if n, ok := intOf(l["required_credits"]); ok && n > contract.PerGenerationCap {
					e["code"] = "spend_limit_exceeded"
					l["bound_by"] = "org_per_generation"
					ceiling := json.Number(strconv.FormatInt(contract.PerGenerationCap, 10))
					l["limit_credits"], l["remaining_credits"] = ceiling, ceiling
					delete(l, "required_credits")
				}
			}
		}),
	},
	{
		Name: "check-body-after-scope-missing", Rules: []string{"CHECK-003", "AUTH-029"},
		Mistake: "the body is parsed before the scope check: a read-only key with malformed JSON gets 400",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, apiPrefix+"/") && env.readOnly(presented(r)) {
					b := requestBody(r)
					var v any
					if len(b) > 0 && json.Unmarshal(b, &v) != nil {
						writeError(w, http.StatusBadRequest, "invalid_config", "The body is not valid JSON.", "body")
						return
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
}
