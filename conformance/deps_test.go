package conformance_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mediaspec/mediaspec"

type listedPackage struct {
	ImportPath   string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// goList runs go list -json on pattern from the module root; a pattern that matches no package
// gives none.
func goList(t *testing.T, pattern string) []listedPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot read the import graph")
	}
	cmd := exec.Command(goBin, "list", "-e", "-json=ImportPath,Deps,TestImports,XTestImports", pattern)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "matched no packages") {
			return nil
		}
		t.Fatalf("go list %s: %v\n%s", pattern, err, out)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// TestImportFences holds the dependency fences of DESIGN.md: the suite (its non-test packages)
// never depends on the mock or on the receiver's internals; neither the mock nor the receiver nor
// check-receiver (tests included) imports Ginkgo or Gomega, nor do the wrong-server tables (their
// non-test packages: they run the check command and read its report); and report, the results
// model and writers below everything, links no Ginkgo, no kin-openapi and no other package of the
// module.
func TestImportFences(t *testing.T) {
	suite := goList(t, "./conformance/...")
	if len(suite) == 0 {
		t.Fatal("go list found no conformance package")
	}
	for _, p := range suite {
		for _, d := range p.Deps {
			if under(d, module+"/mock") || under(d, module+"/receiver/internal") {
				t.Errorf("%s depends on %s: the suite is black-box and must not link an implementation", p.ImportPath, d)
			}
		}
	}
	ginkgo := func(d string) bool {
		return under(d, "github.com/onsi/ginkgo/v2") || under(d, "github.com/onsi/gomega")
	}
	for _, pattern := range []string{"./mock/...", "./receiver/...", "./report/..."} {
		for _, p := range goList(t, pattern) {
			all := append(append(append([]string(nil), p.Deps...), p.TestImports...), p.XTestImports...)
			for _, d := range all {
				if ginkgo(d) {
					t.Errorf("%s imports %s: the mock, the receiver and the report package never use Ginkgo or Gomega", p.ImportPath, d)
				}
			}
		}
	}
	for _, p := range goList(t, "./conformance/wrongservers/...") {
		for _, d := range p.Deps {
			if ginkgo(d) || under(d, module+"/conformance/framework") {
				t.Errorf("%s depends on %s: the wrong-server tables read check's report through report, never the suite's framework", p.ImportPath, d)
			}
		}
	}
	reports := goList(t, "./report/...")
	if len(reports) == 0 {
		t.Fatal("go list found no report package")
	}
	for _, p := range reports {
		for _, d := range p.Deps {
			if under(d, "github.com/getkin/kin-openapi") || (under(d, module) && !under(d, module+"/report")) {
				t.Errorf("%s depends on %s: report sits below everything and links neither the contract loader nor kin-openapi", p.ImportPath, d)
			}
		}
	}
}

func TestUnderIsPathAware(t *testing.T) {
	cases := []struct {
		path, root string
		want       bool
	}{
		{module + "/mock", module + "/mock", true},
		{module + "/mock/api", module + "/mock", true},
		{module + "/mockery", module + "/mock", false},
		{"github.com/onsi/gomega/types", "github.com/onsi/gomega", true},
	}
	for _, c := range cases {
		if got := under(c.path, c.root); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}
