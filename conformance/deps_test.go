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
	Imports      []string
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
	cmd := exec.Command(goBin, "list", "-e", "-json=ImportPath,Imports,Deps,TestImports,XTestImports", pattern)
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

// What a Go user may import is the public surface: the mock embedded in tests (mock, mock/clock),
// the receiver, the contract loaders and judge (spec), the catalogue (fixtures), running the suite
// (conformance), report and proxy. The rest is under internal/: the mock's concerns
// (internal/mock/...), check-receiver's engine, report's test helpers and the in-process suite
// harness the module's own tests share (internal/conformancetest), the hostile peer the tests of
// every tool meet (internal/hostile) and the JSON value count the tools cap reads with
// (internal/jsoncount).
//
// The module's layering as data (DESIGN.md, STYLE.md 16). An area is a path prefix of the module
// (the longest one that matches names a package's area); it may import its own packages and those
// of the areas listed, nothing else of the module. cmd/ may import anything.
var areas = map[string][]string{
	"report":                   {},
	"spec/errtable":            {},
	"spec":                     {"spec/errtable", "internal/jsoncount"},
	"fixtures":                 {},
	"internal/fuzzseed":        {},
	"internal/jsoncount":       {},
	"internal/hostile":         {},
	"internal/reporttest":      {"report"},
	"internal/receivercheck":   {"receiver", "report"},
	"receiver":                 {"report"},
	"conformance":              {"receiver", "report", "spec", "fixtures/media", "internal/jsoncount"},
	"internal/conformancetest": {"conformance", "mock", "mock/clock", "spec"},
	"proxy":                    {"mock", "internal/mock/audit", "internal/mock/blob", "mock/clock", "receiver", "report", "spec"},
	"cmd":                      {""},
}

// mockLevels layer the mock's packages: a package imports only packages of a lower level (so
// concerns point down: leaves, then stores, then admission and the engines, then the two HTTP
// adapters, then the wiring). Package mock itself is the wiring, above all of them.
var mockLevels = map[string]int{
	"internal/mock/apierr": 0, "internal/clock": 0, "internal/mock/ids": 0, "internal/mock/media": 0, "internal/mock/netguard": 0, "internal/mock/paging": 0,
	"internal/mock/render": 0, "internal/mock/reqlog": 0,
	"internal/mock/wire": 1, "internal/mock/ratelimit": 1, "internal/mock/retention": 1, "internal/mock/ledger": 1, "internal/mock/faults": 1, "internal/mock/audit": 1,
	"internal/mock/workspace": 2, "internal/mock/blob": 2, "internal/mock/webhook": 2, "internal/mock/assets": 2, "internal/mock/catalog": 2,
	"internal/mock/admission": 3, "internal/mock/uploads": 3,
	"internal/mock/catalog/catalogtest": 3, // the tests' catalogue, above the catalog it builds
	"internal/mock/jobs":                4,
	"internal/mock/workflows":           5,
	"internal/mock/api":                 6, "internal/mock/control": 6,
	"mock/clock":          7, // the clock's public face: aliases of internal/clock for users of package mock
	"internal/mock/wired": 7, // the services the wiring hands the module's own tests
	"mock":                8,
}

// mockOutside are the packages of the module outside mock/ a mock package may import: the
// catalogue data where prices, plans and outputs are read, the error table, and (the wiring
// alone, which can validate its own answers) the contract loader.
var mockOutside = map[string][]string{
	"internal/mock/apierr":              {"spec/errtable"},
	"internal/mock/catalog":             {"fixtures", "fixtures/media"},
	"internal/mock/catalog/catalogtest": {"fixtures"},
	"internal/mock/admission":           {"fixtures"},
	"internal/mock/jobs":                {"fixtures"},
	"internal/mock/workflows":           {"fixtures"},
	"internal/mock/api":                 {"fixtures"},
	"internal/mock/control":             {"fixtures"},
	"mock":                              {"fixtures", "spec"},
}

// areaOf is the longest prefix of areas (or, under mock/, of mockLevels) that holds pkg.
func areaOf(pkg string, table map[string]int, names map[string][]string) string {
	best := ""
	for a := range names {
		if under(pkg, a) && len(a) > len(best) {
			best = a
		}
	}
	for a := range table {
		if under(pkg, a) && len(a) > len(best) {
			best = a
		}
	}
	return best
}

// allowedEdge reports whether module package from (module-relative) may import to, and why not.
func allowedEdge(from, to string) (bool, string) {
	fa, ta := areaOf(from, mockLevels, areas), areaOf(to, mockLevels, areas)
	if fa == "" {
		return false, from + " is in no area of the fence: add it to areas or mockLevels"
	}
	if ta == "" {
		return false, to + " is in no area of the fence: add it to areas or mockLevels"
	}
	if fl, ok := mockLevels[fa]; ok {
		if tl, ok := mockLevels[ta]; ok {
			if tl < fl {
				return true, ""
			}
			return false, "mock layering: " + fa + " (level " + itoa(fl) + ") may import only lower levels; " + ta + " is level " + itoa(tl)
		}
		for _, o := range mockOutside[fa] {
			if to == o {
				return true, ""
			}
		}
		return false, fa + " may import outside mock/ only " + strings.Join(mockOutside[fa], ", ")
	}
	if fa == ta {
		return true, ""
	}
	for _, a := range areas[fa] {
		if a == "" || to == a || (ta == a && a != "mock") {
			return true, ""
		}
	}
	return false, fa + " may import only " + strings.Join(areas[fa], ", ")
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestImportFences holds the layering: every import of a module package by a module package
// (tests excluded: a test may import what it tests with) is an allowed edge of the tables above.
// Besides, neither the mock nor the receiver nor report (tests included) imports Ginkgo or
// Gomega, nor does the proxy (its tests run the suite through it); the mock's concern packages link no OpenAPI library (only the wiring reads the REST
// description); the wrong-server tables (non-test) link neither Ginkgo nor the suite's
// framework; and report links no kin-openapi.
func TestImportFences(t *testing.T) {
	all := goList(t, "./...")
	if len(all) == 0 {
		t.Fatal("go list found no package")
	}
	for _, p := range all {
		from := strings.TrimPrefix(p.ImportPath, module+"/")
		for _, imp := range p.Imports {
			if !under(imp, module) {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			if ok, why := allowedEdge(from, to); !ok {
				t.Errorf("%s imports %s: %s", from, to, why)
			}
		}
	}
	ginkgo := func(d string) bool {
		return under(d, "github.com/onsi/ginkgo/v2") || under(d, "github.com/onsi/gomega")
	}
	for _, p := range all {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if under(rel, "proxy") {
			for _, d := range p.Deps {
				if ginkgo(d) {
					t.Errorf("%s links %s: the proxy judges with spec, never the suite's Ginkgo", rel, d)
				}
			}
			continue
		}
		if !under(rel, "mock") && !under(rel, "internal/mock") && !under(rel, "receiver") && !under(rel, "report") {
			continue
		}
		deps := append(append(append([]string(nil), p.Deps...), p.TestImports...), p.XTestImports...)
		for _, d := range deps {
			if ginkgo(d) {
				t.Errorf("%s imports %s: the mock, the receiver and report never use Ginkgo or Gomega (tests included)", rel, d)
			}
		}
		if under(rel, "internal/mock") || under(rel, "mock") && rel != "mock" {
			for _, d := range p.Deps {
				if under(d, "github.com/getkin/kin-openapi") || d == module+"/spec" {
					t.Errorf("%s links %s: only the wiring (package mock) reads the REST description", rel, d)
				}
			}
		}
		if under(rel, "report") || rel == "internal/reporttest" {
			for _, d := range p.Deps {
				if under(d, "github.com/getkin/kin-openapi") {
					t.Errorf("%s links %s: report sits below everything", rel, d)
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
}

// The fence refuses the edges the tree used to have and keeps the ones it needs.
func TestFenceEdges(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		// Refused: the old edges.
		{"internal/mock/assets", "internal/mock/catalog", false},
		{"internal/mock/catalog", "mock/api/wire", false},
		{"internal/mock/blob", "mock/api/wire", false},
		{"internal/mock/workspace", "fixtures", false},
		{"receiver", "conformance/framework", false},
		{"internal/receivercheck", "conformance/report", false},
		{"conformance/specs", "internal/mock/jobs", false},
		{"conformance", "mock", false},
		{"internal/mock/jobs", "internal/mock/api", false},
		{"internal/mock/catalog", "spec", false},
		{"report", "spec", false},
		{"spec", "mock", false},
		{"proxy", "internal/mock/jobs", false},
		{"conformance", "internal/conformancetest", false},
		{"internal/mock/catalog", "internal/mock/catalog/catalogtest", false},
		// Kept.
		{"internal/mock/jobs", "internal/mock/admission", true},
		{"internal/mock/catalog", "internal/mock/wire", true},
		{"internal/mock/api", "internal/mock/wire", true},
		{"mock", "spec", true},
		{"internal/receivercheck", "report", true},
		{"conformance/specs", "receiver", true},
		{"proxy", "internal/mock/audit", true},
		{"cmd/mediaspec", "conformance", true},
		{"internal/conformancetest", "mock", true},
		{"internal/conformancetest", "conformance", true},
		{"internal/mock/catalog/catalogtest", "internal/mock/catalog", true},
	} {
		if ok, why := allowedEdge(c.from, c.to); ok != c.ok {
			t.Errorf("%s -> %s: allowed %v (%s), want %v", c.from, c.to, ok, why, c.ok)
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
