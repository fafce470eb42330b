package mock_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The concern packages under mock/ link no OpenAPI library: only the wiring (package mock, which
// can validate its own answers) reads the REST description.
func TestConcernPackagesLinkNoOpenAPILibrary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot read the import graph")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", "./ledger", "./apierr", "./jobs", "./api", "./control", "./blob").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "kin-openapi") || p == "github.com/mediaspec/mediaspec/spec" {
			t.Errorf("a concern package links %s", p)
		}
	}
}
