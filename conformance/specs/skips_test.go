package specs

import (
	"bufio"
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

// allowedBareSkips reads testdata/bare-skips.txt: the sites there when the rule came, as
// "file<TAB>call" keys (lines shift as others edit a file; the call does not).
func allowedBareSkips(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "bare-skips.txt"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, "\t") {
			t.Fatalf("testdata/bare-skips.txt: %q is not file<TAB>call", line)
		}
		allowed[line] = true
	}
	return allowed
}

// TestNoBareSkip forbids Ginkgo's Skip in the spec files: a spec skips only with
// framework.SkipFor and a typed reason. The sites that were there when the rule came are listed
// in testdata/bare-skips.txt and pass for now; a new one fails, naming file:line, and so does a
// listed one that is gone (drop it from the list).
func TestNoBareSkip(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := allowedBareSkips(t)
	met := map[string]bool{}
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
			key := name + "\t" + s[1]
			if allowed[key] {
				met[key] = true
				t.Logf("%s:%s: %s (listed: still to become framework.SkipFor)", name, s[0], s[1])
				continue
			}
			t.Errorf("%s:%s: %s: a spec skips with framework.SkipFor and a typed reason "+
				"(framework.Unsupported, NotDeclared, LacksState, Undecidable, ...), never a bare Skip", name, s[0], s[1])
		}
	}
	for key := range allowed {
		if !met[key] {
			t.Errorf("testdata/bare-skips.txt lists %q, which is no longer in the spec files: drop the line",
				strings.Replace(key, "\t", ": ", 1))
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
