package admission

import (
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// order is one of the three check orders as data: its steps' names, rules and flags.
type order struct {
	name  string
	steps []stepInfo
}

type stepInfo struct {
	name         string
	rules        []string
	adapter, own bool
	check        bool
}

func info[C any](o []Step[C]) []stepInfo {
	var out []stepInfo
	for _, s := range o {
		out = append(out, stepInfo{s.Name, s.Rules, s.Adapter, s.Own, s.Check != nil})
	}
	return out
}

func orders() []order {
	return []order{
		{"estimate", info(estimateOrder)},
		{"submit", info(submitOrder)},
		{"invoke", info(invokeOrder)},
	}
}

// Every step of the three orders is named once, runs a check unless the HTTP adapter runs it, and
// names only rules of spec/rules.yaml; a step the interface places names at least one rule.
func TestOrdersNameRulesOfTheCatalogue(t *testing.T) {
	rules, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders() {
		seen := map[string]bool{}
		for _, st := range o.steps {
			if seen[st.name] {
				t.Errorf("%s: step %q twice", o.name, st.name)
			}
			seen[st.name] = true
			if st.check == st.adapter {
				t.Errorf("%s: step %q: a check runs here exactly when the adapter does not run it", o.name, st.name)
			}
			if !st.own && len(st.rules) == 0 {
				t.Errorf("%s: step %q names no rule", o.name, st.name)
			}
			for _, id := range st.rules {
				if _, ok := rules.Get(id); !ok {
					t.Errorf("%s: step %q names %s, not a rule of spec/rules.yaml", o.name, st.name, id)
				}
			}
		}
	}
}

// The submit order is the interface's check order (rule CHECK-001), the adapter's rate limit and
// scope first, then the mock's own steps after it; and every CHECK rule that places two steps is
// named by a step of it.
func TestSubmitOrderIsTheCheckOrder(t *testing.T) {
	rules, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rules.Get("CHECK-001")
	if !ok {
		t.Fatal("no rule CHECK-001")
	}
	var names []string
	named := map[string]bool{}
	ownSeen := false
	for _, st := range info(submitOrder) {
		for _, id := range st.rules {
			named[id] = true
		}
		if st.own {
			ownSeen = true
			continue
		}
		if ownSeen {
			t.Errorf("step %q of the text comes after one of the mock's own steps", st.name)
		}
		names = append(names, st.name)
	}
	order := "The submit checks run in the order " + strings.Join(names, ", ") + ";"
	if !strings.Contains(strings.Join(strings.Fields(r.Statement), " "), order) {
		t.Errorf("CHECK-001 says %q; the steps run %q", r.Statement, order)
	}
	for _, id := range []string{"CHECK-002", "CHECK-003", "CHECK-007", "CHECK-008", "CHECK-009", "CHECK-010", "CHECK-011",
		"CHECK-012", "CHECK-013", "CHECK-014", "CHECK-015", "CHECK-016", "CHECK-017"} {
		if !named[id] {
			t.Errorf("%s places two submit steps; no step names it", id)
		}
	}
}

// The estimate runs no content check and the invoke holds nothing: their orders have no
// moderation fault step and no in-flight step. The three orders share the step names of the
// checks they have in common, in the same relative order.
func TestOrdersAgree(t *testing.T) {
	pos := func(o []stepInfo, name string) int {
		for i, st := range o {
			if st.name == name {
				return i
			}
		}
		return -1
	}
	est, sub, inv := info(estimateOrder), info(submitOrder), info(invokeOrder)
	for _, name := range []string{"moderation", "in-flight", "blocked request", "estimate change"} {
		if pos(est, name) >= 0 || pos(inv, name) >= 0 {
			t.Errorf("step %q belongs to the submit alone", name)
		}
	}
	shared := []string{"config validity", "upload readiness and ownership", "not priced", "pricing"}
	for i := 1; i < len(shared); i++ {
		a, b := shared[i-1], shared[i]
		if pos(est, a) > pos(est, b) || pos(sub, a) > pos(sub, b) {
			t.Errorf("%q and %q run in a different order in the estimate and the submit", a, b)
		}
	}
	if pos(inv, "max_credits") > pos(inv, "spend caps, credits") || pos(sub, "max_credits") > pos(sub, "spend caps, credits") {
		t.Error("max_credits comes before the spend caps and credits in the submit and the invoke")
	}
}
