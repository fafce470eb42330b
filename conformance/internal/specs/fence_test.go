package specs

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/spec"
)

// The fence: no spec or driver outside the open-shapes layer (conformance/internal/openshape,
// read through helpers_shapes.go) names a choice the reference made where the text shows no
// shape. The names are derived from spec/openapi.yaml's x-provenance, so a new reference choice
// is fenced without a change here: a property name, a path or a header whose provenance is
// "reference" and that the text names nowhere else in the document.

// fenceExempt are the reference names a file may still use, each with the reason that holds for
// every server (the file's use never judges another server by that name).
var fenceExempt = map[string]map[string]string{
	"ledger.go": exemptAll(ledgerLayout, "daily_spent_credits", "daily_remaining_credits", "key_spent_credits",
		"key_budget_credits", "key_remaining_credits", "held_credits", "balance_credits"),
	"owners.go": exemptAll("the table that charges an advisory on a reference field of an answer to the rule that states "+
		"that field (framework/owners.go): it attributes differences, it reads no answer", "limit_credits", "remaining_credits", "fields"),
}

// ledgerLayout is why ledger.go may name the reference's balance fields.
const ledgerLayout = "the balance specs of LEDGER-016 and LEDGER-018 to LEDGER-021 (rules.yaml: strict-only) assert the " +
	"mock's own documented balance layout under steps of those rules alone: without --strict a failure there " +
	"is a reference-choice skip, never a failure (framework.Fail)"

func exemptAll(why string, names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[n] = why
	}
	return m
}

// referenceNames are the names the fence keeps out (openshape.ReferenceNames).
func referenceNames(t *testing.T) map[string]bool {
	t.Helper()
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names, err := openshape.ReferenceNames(v.Document(), spec.ControlYAML())
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// pathLike is a literal that can name a field: a dotted path or a JSONPath-like one, no spaces.
var pathLike = regexp.MustCompile(`^[$A-Za-z_][\w.\[\]*$/-]*$`)

// fencedFiles are the Go files of the suite's internal packages (the specs, the framework, the
// drivers) outside the open-shapes layer.
func fencedFiles(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return filepath.Base(d) == "openshape" })
	var files []string
	for _, dir := range dirs {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "helpers_shapes.go" || filepath.Base(f) == "shapes.go" {
				continue
			}
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}

// strictOnly reports a node whose assertions run only under --strict, where a reference choice
// may be named: a call of ReferenceOnly (an advisory otherwise), or a function whose body starts
// with a StrictOnly call (the spec skips otherwise).
func strictOnly(n ast.Node, cat *spec.Catalogue) bool {
	switch x := n.(type) {
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		switch sel.Sel.Name {
		case "ReferenceOnly":
			return true
		case "It": // f.Rule(ids...).It(...): a spec of strict-only rules alone is our mock's layout
			ids := ruleIDs(sel.X)
			if len(ids) == 0 {
				return false
			}
			for _, id := range ids {
				r, ok := cat.Get(id)
				if !ok || r.Basis != spec.BasisReference || r.Judged != spec.JudgedStrictOnly {
					return false
				}
			}
			return true
		}
		return false
	case *ast.FuncLit:
		if len(x.Body.List) == 0 {
			return false
		}
		es, ok := x.Body.List[0].(*ast.ExprStmt)
		if !ok {
			return false
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "StrictOnly"
	}
	return false
}

// ruleIDs returns the string literals of the f.Rule(...) call that e is, or leads to through a
// chain (f.Rule(...).Needs(...)); nil when e is no such chain.
func ruleIDs(e ast.Expr) []string {
	for {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return nil
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		if sel.Sel.Name == "Rule" {
			var ids []string
			for _, a := range call.Args {
				lit, ok := a.(*ast.BasicLit)
				if !ok {
					return nil // rules(...) or a variable: not read here
				}
				id, err := strconv.Unquote(lit.Value)
				if err != nil {
					return nil
				}
				ids = append(ids, id)
			}
			return ids
		}
		e = sel.X
	}
}

// TestFenceReferenceChoices fails when a spec or driver names, as a string literal, a property of
// an answer whose shape the text does not show (our choice): such a read must go through the
// open-shapes layer.
func TestFenceReferenceChoices(t *testing.T) {
	names := referenceNames(t)
	if len(names) < 10 {
		t.Fatalf("only %d reference names derived from the provenance: the derivation is broken", len(names))
	}
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	used := map[string]bool{}
	for _, f := range fencedFiles(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, scanFence(t, f, src, names, cat, used)...)
	}
	for file, m := range fenceExempt {
		for name := range m {
			if !used[file+" "+name] {
				problems = append(problems, fmt.Sprintf("fenceExempt lets %s name %s, which it no longer does: drop the exemption", file, name))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("%d reads of the reference's choices outside the open-shapes layer:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// scanFence returns the fence problems of one Go file's source (TestFenceReferenceChoices),
// marking in used the exemptions it relied on.
func scanFence(t *testing.T, f string, src []byte, names map[string]bool, cat *spec.Catalogue, used map[string]bool) []string {
	t.Helper()
	var problems []string
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if strictOnly(n, cat) {
			return false // asserts the reference's own choice, only under --strict
		}
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if !pathLike.MatchString(s) {
			return true // prose, not a field path
		}
		for _, part := range strings.Split(s, ".") {
			if names[part] {
				if why := fenceExempt[filepath.Base(f)][part]; why != "" {
					used[filepath.Base(f)+" "+part] = true
					continue
				}
				problems = append(problems, fmt.Sprintf("%s: %q names %s, the reference's own choice where the text shows no shape: read it through the open-shapes layer (helpers_shapes.go)", fset.Position(lit.Pos()), s, part))
			}
		}
		return true
	})
	return problems
}

// TestFenceCatches is the fence's own test: a planted read of a reference-only name is caught,
// the same name inside ReferenceOnly or a strict-only spec is not.
func TestFenceCatches(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"balance_credits": true}
	src := []byte(`package specs
func a(r R) { r.Int("balance_credits"); r.Int("limits.balance_credits") }
func b(s S, r R) { s.ReferenceOnly("LEDGER-019", "x", func() { r.Int("balance_credits") }) }
func c(f F) { f.Rule("LEDGER-019").It("x", func() { r.Int("balance_credits") }) }
func d(s S, r R) { r.Int("the balance_credits sentence") }
`)
	got := scanFence(t, "planted.go", src, names, cat, map[string]bool{})
	if len(got) != 2 || !strings.Contains(got[0], "planted.go:2") {
		t.Fatalf("the fence found %d problems, want the 2 of line 2:\n%s", len(got), strings.Join(got, "\n"))
	}
}
