package codestyle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the module root, seen from this package's directory.
const root = "../.."

// sourceFiles parses every non-test Go file of the module whose directory passes keep, by
// directory (module-relative, slash-separated). testdata, hidden directories and node_modules are
// never read.
func sourceFiles(t *testing.T, keep func(dir string) bool) (*token.FileSet, map[string][]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	byDir := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if !keep(dir) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		byDir[dir] = append(byDir[dir], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, byDir
}

// public says whether dir holds a package another module may import: not under an internal/
// directory. (Package main is told apart by its files.)
func public(dir string) bool {
	return dir != "internal" && !strings.HasPrefix(dir, "internal/") && !strings.Contains(dir, "/internal/") &&
		!strings.HasSuffix(dir, "/internal")
}

// undocumented lists, as "file:line: what", every exported name of f that go doc would show bare:
// a func, a method of an exported type, a type, a const or var (a comment on its block counts, as
// go doc shows it), an exported field of a struct and a method of an interface (a line comment
// counts). Names inside function bodies are not API and are not read.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	miss := func(n ast.Node, what string) {
		p := fset.Position(n.Pos())
		out = append(out, p.Filename+":"+strconv.Itoa(p.Line)+": "+what)
	}
	has := func(groups ...*ast.CommentGroup) bool {
		for _, g := range groups {
			if g != nil && strings.TrimSpace(g.Text()) != "" {
				return true
			}
		}
		return false
	}
	// members checks the fields and interface methods of typ, a member of owner whose doc
	// comment is doc.
	var members func(owner string, typ ast.Expr, doc *ast.CommentGroup)
	members = func(owner string, typ ast.Expr, doc *ast.CommentGroup) {
		switch x := typ.(type) {
		case *ast.StructType:
			for i, fld := range x.Fields.List {
				for _, name := range fieldNames(fld) {
					if ast.IsExported(name) && !has(fld.Doc, fld.Comment) && !namedAbove(x.Fields.List[:i], name, doc) {
						miss(fld, "field "+owner+"."+name)
					}
				}
				if len(fld.Names) > 0 && ast.IsExported(fld.Names[0].Name) {
					members(owner+"."+fld.Names[0].Name, fld.Type, fld.Doc)
				}
			}
		case *ast.InterfaceType:
			for _, m := range x.Methods.List {
				for _, name := range m.Names {
					if ast.IsExported(name.Name) && !has(m.Doc, m.Comment) {
						miss(m, "method "+owner+"."+name.Name)
					}
				}
			}
		case *ast.StarExpr:
			members(owner, x.X, doc)
		case *ast.ArrayType:
			members(owner, x.Elt, doc)
		case *ast.MapType:
			members(owner, x.Value, doc)
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || has(d.Doc) {
				continue
			}
			if d.Recv == nil {
				miss(d, "func "+d.Name.Name)
			} else if recv := recvName(d.Recv); ast.IsExported(recv) {
				miss(d, "method "+recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid()
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if !has(s.Doc, s.Comment) && (grouped || !has(d.Doc)) {
						miss(s, "type "+s.Name.Name)
					}
					tdoc := s.Doc
					if tdoc == nil && !grouped {
						tdoc = d.Doc
					}
					members(s.Name.Name, s.Type, tdoc)
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() && !has(s.Doc, s.Comment, d.Doc) {
							miss(name, strings.ToLower(d.Tok.String())+" "+name.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// namedAbove says whether the doc comment go doc shows just above a bare field names it: that of
// the nearest commented field before it, with only bare fields between ("Width and Height in
// pixels" over Width covers Height), or, when no field before it has a comment, the struct's own
// doc (typeDoc: "a stretch ... between From and To" over struct{ From, To time.Time }).
func namedAbove(before []*ast.Field, name string, typeDoc *ast.CommentGroup) bool {
	names := func(groups ...*ast.CommentGroup) bool {
		var text strings.Builder
		for _, g := range groups {
			if g != nil {
				text.WriteString(g.Text() + " ")
			}
		}
		return slices.Contains(strings.FieldsFunc(text.String(), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
		}), name)
	}
	for i := len(before) - 1; i >= 0; i-- {
		if f := before[i]; f.Doc != nil || f.Comment != nil {
			return names(f.Doc, f.Comment)
		}
	}
	return names(typeDoc)
}

// fieldNames are the names a field declares; an embedded field is named by its type.
func fieldNames(f *ast.Field) []string {
	if len(f.Names) == 0 {
		t := f.Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		switch x := t.(type) {
		case *ast.Ident:
			return []string{x.Name}
		case *ast.SelectorExpr:
			return []string{x.Sel.Name}
		}
		return nil
	}
	var out []string
	for _, n := range f.Names {
		out = append(out, n.Name)
	}
	return out
}

// recvName is the name of a method's receiver type, type parameters and pointer aside.
func recvName(l *ast.FieldList) string {
	t := l.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestExportedNamesHaveDocComments holds STYLE.md's doc-comment rule over every package another
// module may import (internal/ trees and package main aside, since nobody imports them): every
// exported func, method of an exported type, type, const, var, struct field and interface method
// has a doc comment or a line comment, so go doc never shows one bare.
func TestExportedNamesHaveDocComments(t *testing.T) {
	fset, byDir := sourceFiles(t, public)
	if len(byDir) < 10 {
		t.Fatalf("read %d package directories: the walk reads wrong", len(byDir))
	}
	var missing []string
	for _, files := range byDir {
		for _, f := range files {
			if f.Name.Name == "main" {
				continue
			}
			missing = append(missing, undocumented(fset, f)...)
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s has no doc comment", m)
	}
	if len(missing) > 0 {
		t.Logf("%d exported names without a doc comment", len(missing))
	}
}

// The detector itself: each kind of bare exported name is found, and each way of documenting one
// is taken, so the module-wide test above cannot pass by finding nothing.
func TestUndocumentedFinds(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"func F() {}", 1},
		{"// F does.\nfunc F() {}", 0},
		{"func f() {}", 0},
		{"type T struct{ A int }", 2},
		{"// T is.\ntype T struct {\n\tA int // A is.\n}", 0},
		{"// T is.\ntype T struct {\n\t// Width and Height in pixels.\n\tWidth int\n\tHeight int\n}", 0},
		{"// T is.\ntype T struct {\n\t// Width in pixels.\n\tWidth int\n\tDepth int\n}", 1},
		{"// I is.\ntype I interface{ M() }", 1},
		{"// The limits.\nconst (\n\tA = 1\n\tB = 2\n)", 0},
		{"var V = 1", 1},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package p\n\n"+c.src+"\n", parser.ParseComments)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if got := undocumented(fset, f); len(got) != c.want {
			t.Errorf("%q: found %v, want %d", c.src, got, c.want)
		}
	}
}
