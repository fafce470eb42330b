package codestyle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// maxContainer is the container ceiling of issue 38 (item 5): no Ginkgo container's function
// literal over about 150 lines, so one behaviour's specs and their setup read on a screen or two.
const maxContainer = 150

// specsDir is the package (module-relative) whose containers keep to maxContainer.
const specsDir = "conformance/internal/specs"

// oversized are the containers of specsDir over maxContainer when the ceiling came, each with its
// length then (the function literal's lines). The list only shrinks: a container split below the
// ceiling leaves it in the same commit, and one that grows fails TestContainerCeiling, as does an
// entry that matches no container over the ceiling any more.
var oversized = []struct {
	file, text string
	lines      int
}{
	{"lists.go", "filters and order", 214},
	{"lists.go", "lists: generation list", 437},
	{"talking.go", "talking actor: approved tts and actor_ultra", 236},
	{"talking.go", "the tts then actor_ultra flow", 206},
}

// container is one Ginkgo container call found in a file.
type container struct {
	file, text string
	line       int // the line of the call
	lines      int // the lines its function literal spans
}

// containerCalls are the Ginkgo calls that open a container (their focused and pending forms too).
var containerCalls = map[string]bool{
	"Describe": true, "Context": true, "When": true,
	"FDescribe": true, "FContext": true, "FWhen": true,
	"PDescribe": true, "PContext": true, "PWhen": true,
	"XDescribe": true, "XContext": true, "XWhen": true,
}

// containers lists every container call of f, nested ones too: its text (the first argument as
// written when it is not a plain string) and the lines of its last function-literal argument.
func containers(fset *token.FileSet, f *ast.File) []container {
	var out []container
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		name, ok := call.Fun.(*ast.Ident)
		if !ok || !containerCalls[name.Name] {
			return true
		}
		var body *ast.FuncLit
		for _, a := range call.Args {
			if lit, ok := a.(*ast.FuncLit); ok {
				body = lit
			}
		}
		if body == nil {
			return true
		}
		text := "(not a plain string)"
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				text = s
			}
		}
		p := fset.Position(call.Pos())
		out = append(out, container{
			file:  filepath.Base(p.Filename),
			text:  text,
			line:  p.Line,
			lines: fset.Position(body.End()).Line - fset.Position(body.Pos()).Line + 1,
		})
		return true
	})
	return out
}

// TestContainerCeiling keeps every container of the specs within maxContainer lines, but for the
// listed ones, which may not grow.
func TestContainerCeiling(t *testing.T) {
	fset, byDir := sourceFiles(t, func(dir string) bool { return dir == specsDir })
	if len(byDir[specsDir]) == 0 {
		t.Fatalf("no Go file read under %s", specsDir)
	}
	type key struct{ file, text string }
	allowed := map[key]int{}
	for _, o := range oversized {
		k := key{o.file, o.text}
		if _, dup := allowed[k]; dup {
			t.Errorf("oversized lists %s %q twice", o.file, o.text)
		}
		allowed[k] = o.lines
	}
	seen := map[key]bool{}
	for _, f := range byDir[specsDir] {
		for _, c := range containers(fset, f) {
			if c.lines <= maxContainer {
				continue
			}
			k := key{c.file, c.text}
			was, listed := allowed[k]
			switch {
			case !listed:
				t.Errorf("%s/%s:%d: container %q is %d lines, over the ceiling of %d: split it",
					specsDir, c.file, c.line, c.text, c.lines, maxContainer)
			case c.lines > was:
				t.Errorf("%s/%s:%d: container %q grew from %d to %d lines: split it below %d",
					specsDir, c.file, c.line, c.text, was, c.lines, maxContainer)
			}
			seen[k] = true
		}
	}
	for _, o := range oversized {
		if !seen[key{o.file, o.text}] {
			t.Errorf("oversized lists %s %q, no longer a container over %d lines there: drop the entry",
				o.file, o.text, maxContainer)
		}
	}
}

// TestContainersFinds pins what containers reads: nested containers, decorators before the body,
// the body's lines and a text that is not a plain string.
func TestContainersFinds(t *testing.T) {
	src := `package p

var _ = Describe("outer", func() {
	Context("inner", Ordered, func() {
		It("x", func() {})
	})
	When(name+" y", func() {})
	By("not a container", func() {})
})
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "dir/a.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := containers(fset, f)
	want := []container{
		{"a.go", "outer", 3, 7},
		{"a.go", "inner", 4, 3},
		{"a.go", "(not a plain string)", 7, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("containers = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("containers[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
