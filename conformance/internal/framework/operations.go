package framework

import (
	"net/http"
	"sort"
	"strings"
)

// Operation is one operation of the REST description the run checks against.
type Operation struct {
	Method string // GET, POST, DELETE, ...
	Path   string // the path template below the API root, e.g. "/generations/{id}"
	// DocPath is the operation's path in the REST description; it differs from Path where the
	// description holds the reference's choice of a path the text does not give (the live
	// description, the probes) and the target names another (Config.Named).
	DocPath string
	ID      string // operationId
	// Scope is the operation's x-scope ("read" or "generate"); "" on a public operation.
	Scope string
	// Public is true when the operation declares no security (security: []): it takes no key.
	Public bool
}

// String is "METHOD /path".
func (o Operation) String() string { return o.Method + " " + o.Path }

// Params are the names of the path template's parameters, in order.
func (o Operation) Params() []string {
	var out []string
	for _, seg := range strings.Split(o.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}

// Operations lists every operation of the REST description the run validates traffic against
// (spec/openapi.yaml), sorted by path then method, with its x-scope and whether it is public. It
// is read from the document, so a new operation joins every spec that walks the list. The paths
// the text does not give (the live description, the probes) are the ones the target names, and
// their operations are left out when it names none.
func (s *Spec) Operations() []Operation {
	doc := s.f.validator.Document()
	var out []Operation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		at, named := s.f.targetPath(path)
		if !named {
			continue
		}
		for method, op := range item.Operations() {
			o := Operation{Method: strings.ToUpper(method), Path: at, DocPath: path, ID: op.OperationID}
			o.Scope, _ = op.Extensions["x-scope"].(string)
			o.Public = op.Security != nil && len(*op.Security) == 0
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return methodRank(out[i].Method) < methodRank(out[j].Method)
	})
	return out
}

func methodRank(m string) int {
	for i, x := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == x {
			return i
		}
	}
	return 9
}
