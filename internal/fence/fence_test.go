package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mediaspec/mediaspec"

// layers are the module's packages from the bottom up, each listed once (a path names the package
// and, unless a longer path is listed, the packages under it). Every import of a module package
// by a module package (tests aside: a test may import what it tests with) goes to a lower layer.
// Packages of one layer do not import each other. cmd/ is the top: it may import anything below.
var layers = [][]string{
	// 0: the contract's figures and its judges that read no description (the id table, the one
	// Finding type), below everything.
	{"internal/contract", "spec/judge"},
	// 1: leaves: results, the receiver, the catalogue data, the clock, the tools' small helpers and
	// the mock's leaf concerns.
	{"report", "receiver", "fixtures/media", "spec/errtable", "spec/clients",
		"internal/clock", "internal/jsoncount", "internal/fuzzseed", "internal/hostile", "internal/benchtable",
		"internal/httpbench", "internal/reporttest", "internal/soak",
		"internal/mock/assets", "internal/mock/ids", "internal/mock/media", "internal/mock/netguard",
		"internal/mock/paging", "internal/mock/render", "internal/mock/reqlog"},
	// 2: the contract loaders and judges (the client audit of mock --audit and the proxy); what
	// stands on one leaf.
	{"spec", "spec/diff", "spec/judge/audit", "fixtures", "internal/receivercheck", "internal/mock/apierr",
		"internal/mock/ratelimit", "internal/mock/retention"},
	// 3: the mock's stores and senders; the suite's open-shape reader; the wrong-server tables.
	{"internal/mock/wire", "internal/mock/ledger", "internal/mock/faults", "internal/mock/webhook",
		"conformance/internal/openshape", "conformance/wrongservers"},
	{"internal/mock/blob", "internal/mock/catalog", "internal/mock/workspace", "conformance/internal/framework",
		"conformance/wrongservers/cmd"},
	// 5: the suite's drivers and readers, one area each, on the framework.
	{"conformance/internal/answer", "conformance/internal/buckets", "conformance/internal/paging",
		"conformance/internal/refusal", "conformance/internal/drivertest"},
	// 6: the drivers that stand on other drivers (the catalogue reads its lists through paging and
	// its answers through answer).
	{"conformance/internal/catalogue"},
	// 7: the upload flow, which builds its configs on the catalogue's.
	{"conformance/internal/uploads"},
	{"internal/mock/admission", "internal/mock/catalog/catalogtest", "internal/mock/uploads", "conformance/internal/specs"},
	{"internal/mock/jobs", "conformance"},
	{"internal/mock/workflows"},
	// 11: the mock's two HTTP adapters.
	{"internal/mock/api", "internal/mock/control"},
	// 12: the public face of the clock (above every concern: none of them imports it) and what the
	// wiring hands the module's own tests.
	{"mock/clock", "internal/mock/wired"},
	// 13: the mock's wiring.
	{"mock"},
	// 14: what runs the mock: the proxy and the module's in-process suite harness.
	{"proxy", "internal/conformancetest"},
	{"cmd"},
}

// towers are the module's two stacks, which never import each other whatever their layers: the
// mock and the suite see each other over HTTP only (DESIGN.md: the suite is black-box). Only the
// bridges stand on both (they run one against the other).
var towers = map[string][]string{
	"mock":  {"mock", "internal/mock"},
	"suite": {"conformance"},
}

// bridges are the packages that may stand on both towers.
var bridges = []string{"cmd", "internal/conformancetest"}

// private are the trees only their own tower imports (Go's internal rule lets the whole module in
// to internal/mock, and the compiler itself keeps conformance/internal to the suite): the mock's
// concerns are reached through package mock, the suite's through package conformance.
var private = map[string]string{"internal/mock": "mock", "conformance/internal": "suite"}

// exceptions are edges the rules above refuse that the tree has on purpose, each with why. The
// test reports each one it meets and fails on one it no longer meets (drop it then).
var exceptions = map[[2]string]string{}

type listedPackage struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// goList runs go list -deps=false -json on pattern from the module root.
func goList(t *testing.T, pattern string) []listedPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot read the import graph")
	}
	cmd := exec.Command(goBin, "list", "-e", "-json=ImportPath,Imports,Deps,TestImports,XTestImports", pattern)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
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

// place is the longest listed path that holds pkg (module-relative) and its layer; "" and -1 when
// no layer lists it.
func place(pkg string) (string, int) {
	best, layer := "", -1
	for i, l := range layers {
		for _, p := range l {
			if under(pkg, p) && len(p) > len(best) {
				best, layer = p, i
			}
		}
	}
	return best, layer
}

// towerOf is the tower that holds pkg, "" for none.
func towerOf(pkg string) string {
	for name, roots := range towers {
		for _, r := range roots {
			if under(pkg, r) {
				return name
			}
		}
	}
	return ""
}

// edgeProblem says why module package from may not import to ("" when it may), exceptions aside.
func edgeProblem(from, to string) string {
	fp, fl := place(from)
	tp, tl := place(to)
	switch {
	case fl < 0:
		return from + " is in no layer: list it in layers"
	case tl < 0:
		return to + " is in no layer: list it in layers"
	case fp == tp:
		return "" // a listed path's own packages
	case tl >= fl:
		return fmt.Sprintf("%s (layer %d) imports %s (layer %d): every edge points down", fp, fl, tp, tl)
	}
	ft, tt := towerOf(from), towerOf(to)
	if ft != "" && tt != "" && ft != tt && !slices.Contains(bridges, fp) {
		return fmt.Sprintf("the %s tower (%s) imports the %s tower (%s): they see each other over HTTP only", ft, fp, tt, tp)
	}
	for root, tower := range private {
		if under(to, root) && ft != tower {
			return fmt.Sprintf("%s is private to the %s tower: %s reaches it through package %s", root, tower, fp, tower)
		}
	}
	return ""
}

// TestFence holds the layering over the real import graph: every edge of a module package to a
// module package (tests aside) points down the layers and stays in its tower, but for the named
// exceptions, which the test reports. Besides, what a package links: neither the mock nor the
// receiver nor report (tests included) links Ginkgo or Gomega, nor does the proxy (its tests run
// the suite through it); below the mock's wiring nothing links the REST description's library or
// spec; the wrong-server tables (non-test) link neither Ginkgo nor the suite's framework; report
// links no kin-openapi.
func TestFence(t *testing.T) {
	all := goList(t, "./...")
	if len(all) < 30 {
		t.Fatalf("go list found %d packages: the graph reads wrong", len(all))
	}
	met := map[[2]string]bool{}
	for _, p := range all {
		from := strings.TrimPrefix(p.ImportPath, module+"/")
		for _, imp := range p.Imports {
			if !under(imp, module) {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			why := edgeProblem(from, to)
			if why == "" {
				continue
			}
			if ex, ok := exceptions[[2]string{from, to}]; ok {
				met[[2]string{from, to}] = true
				t.Logf("exception: %s imports %s (%s): %s", from, to, why, ex)
				continue
			}
			t.Errorf("%s imports %s: %s", from, to, why)
		}
	}
	for e := range exceptions {
		if !met[e] {
			t.Errorf("exception %s -> %s is no longer met: drop it from exceptions", e[0], e[1])
		}
	}
	ginkgo := func(d string) bool {
		return under(d, "github.com/onsi/ginkgo/v2") || under(d, "github.com/onsi/gomega")
	}
	for _, p := range all {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		withTests := append(append(slices.Clone(p.Deps), p.TestImports...), p.XTestImports...)
		switch {
		case under(rel, "proxy"):
			for _, d := range p.Deps {
				if ginkgo(d) {
					t.Errorf("%s links %s: the proxy judges with spec, never the suite's Ginkgo", rel, d)
				}
			}
		case under(rel, "mock") || under(rel, "internal/mock") || under(rel, "receiver") || under(rel, "report"):
			for _, d := range withTests {
				if ginkgo(d) {
					t.Errorf("%s imports %s: the mock, the receiver and report never use Ginkgo or Gomega (tests included)", rel, d)
				}
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
		if under(rel, "conformance/wrongservers") {
			for _, d := range p.Deps {
				if ginkgo(d) || under(d, module+"/conformance/internal/framework") {
					t.Errorf("%s depends on %s: the wrong-server tables read check's report through report, never the suite's framework", rel, d)
				}
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
		// Refused: the old edges, and any edge up or across towers.
		{"internal/mock/assets", "internal/mock/catalog", false},
		{"internal/mock/catalog", "mock/api/wire", false},
		{"internal/mock/blob", "mock/api/wire", false},
		{"internal/mock/jobs", "mock/clock", false},
		{"cmd/mediaspec", "internal/mock/reqlog", false},
		{"cmd/mediaspec", "conformance/internal/framework", false},
		{"internal/conformancetest", "internal/mock/jobs", false},
		{"receiver", "conformance/internal/framework", false},
		{"internal/receivercheck", "conformance/report", false},
		{"conformance/internal/specs", "internal/mock/jobs", false},
		{"conformance", "mock", false},
		{"mock", "conformance/internal/framework", false},
		{"internal/mock/jobs", "internal/mock/api", false},
		{"report", "spec", false},
		{"spec", "mock", false},
		{"proxy", "internal/mock/jobs", false},
		{"proxy", "internal/mock/audit", false},
		{"proxy", "internal/mock/blob", false},
		{"conformance", "internal/conformancetest", false},
		{"internal/mock/catalog", "internal/mock/catalog/catalogtest", false},
		{"internal/mock/api", "internal/mock/control", false},
		// Kept.
		{"internal/mock/jobs", "internal/mock/admission", true},
		{"internal/mock/jobs", "internal/clock", true},
		{"internal/mock/api", "internal/contract", true},
		{"internal/mock/catalog", "internal/mock/wire", true},
		{"mock", "spec", true},
		{"mock", "mock/clock", true},
		{"internal/receivercheck", "report", true},
		{"conformance/internal/specs", "receiver", true},
		{"cmd/mediaspec", "conformance", true},
		{"cmd/mediaspec", "mock", true},
		{"proxy", "mock", true},
		{"proxy", "mock/clock", true},
		{"proxy", "spec/judge/audit", true},
		{"internal/mock/control", "spec/judge/audit", true},
		{"internal/mock/blob", "spec/judge", true},
		{"report", "spec/judge", true},
		{"internal/conformancetest", "mock", true},
		{"internal/conformancetest", "conformance", true},
		{"internal/mock/catalog/catalogtest", "internal/mock/catalog", true},
	} {
		if why := edgeProblem(c.from, c.to); (why == "") != c.ok {
			t.Errorf("%s -> %s: problem %q, want allowed %v", c.from, c.to, why, c.ok)
		}
	}
}

func TestUnderIsPathAware(t *testing.T) {
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{module + "/mock", module + "/mock", true},
		{module + "/mock/api", module + "/mock", true},
		{module + "/mockery", module + "/mock", false},
		{"github.com/onsi/gomega/types", "github.com/onsi/gomega", true},
	} {
		if got := under(c.path, c.root); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.path, c.root, got, c.want)
		}
	}
}
