package jobs

import (
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// The submit steps are the interface's check order (rule CHECK-001) after the HTTP adapter's rate
// limit and scope, each named once, with the provider fault last.
func TestSubmitStepsFollowTheCheckOrder(t *testing.T) {
	rules, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rules.Get("CHECK-001")
	if !ok {
		t.Fatal("no rule CHECK-001")
	}
	names := make([]string, 0, len(submitSteps))
	seen := map[string]bool{}
	for _, st := range submitSteps {
		if seen[st.name] {
			t.Errorf("step %q twice", st.name)
		}
		seen[st.name] = true
		names = append(names, st.name)
	}
	if names[len(names)-1] != "provider" {
		t.Fatalf("last step %q, want provider", names[len(names)-1])
	}
	order := "rate limit, scope, " + strings.Join(names[:len(names)-1], ", ") + ";"
	if !strings.Contains(strings.Join(strings.Fields(r.Statement), " "), order) {
		t.Errorf("CHECK-001 says %q; the steps run %q", r.Statement, order)
	}
}
