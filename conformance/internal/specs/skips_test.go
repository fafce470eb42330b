package specs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ginkgoPath is the import path whose Skip a spec may not call bare.
const ginkgoPath = "github.com/onsi/ginkgo/v2"

// bareSkips lists Ginkgo Skip calls in src (a spec file) as "line<TAB>call as written": a spec
// skips through framework.SkipFor with a typed reason, so the reports can tell unsupported,
// disabled, undecidable and strict-only apart without reading the text.
func bareSkips(t *testing.T, fset *token.FileSet, name string, src []byte) [][2]string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	dot, alias := false, ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == ginkgoPath {
			switch {
			case imp.Name == nil:
				alias = "ginkgo"
			case imp.Name.Name == ".":
				dot = true
			default:
				alias = imp.Name.Name
			}
		}
	}
	var out [][2]string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		bare := false
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			bare = dot && fn.Name == "Skip"
		case *ast.SelectorExpr:
			x, ok := fn.X.(*ast.Ident)
			bare = ok && alias != "" && x.Name == alias && fn.Sel.Name == "Skip"
		}
		if bare {
			var b bytes.Buffer
			if err := printer.Fprint(&b, fset, call); err != nil {
				t.Fatal(err)
			}
			out = append(out, [2]string{strconv.Itoa(fset.Position(call.Pos()).Line), b.String()})
		}
		return true
	})
	return out
}

// TestNoBareSkip forbids Ginkgo's Skip in the spec files: a spec skips only with
// framework.SkipFor and a typed reason, which the reports type by kind, need and tier. A bare Skip
// fails, naming file:line.
func TestNoBareSkip(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range bareSkips(t, fset, name, src) {
			t.Errorf("%s:%s: %s: a spec skips with framework.SkipFor and a typed reason "+
				"(framework.Unsupported, NotDeclared, LacksState, Undecidable, ...), never a bare Skip", name, s[0], s[1])
		}
	}
}

// The detector sees Skip however Ginkgo is imported, and leaves framework.SkipFor alone.
func TestBareSkipsCatches(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; import . "github.com/onsi/ginkgo/v2"; func f() { Skip("no") }`, 1},
		{`package p; import "github.com/onsi/ginkgo/v2"; func f() { ginkgo.Skip("no") }`, 1},
		{`package p; import g "github.com/onsi/ginkgo/v2"; func f() { g.Skip("no"); g.Skip(why) }`, 2},
		{`package p; import . "github.com/onsi/ginkgo/v2"; func f() { framework.SkipFor(r); By("x") }`, 0},
		{`package p; func f() { Skip("a local Skip, not Ginkgo's") }`, 0},
	} {
		got := bareSkips(t, token.NewFileSet(), "x.go", []byte(c.src))
		if len(got) != c.want {
			t.Errorf("%s: found %d bare skips %v, want %d", c.src, len(got), got, c.want)
		}
	}
}
