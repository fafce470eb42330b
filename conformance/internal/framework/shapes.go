package framework

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
)

// ShapeList is what a target declares of the shapes the text leaves open (openshape.Known, and
// page:<path> for a page's array key): --shape NAME=VALUE (repeated), MEDIASPEC_SHAPES
// (NAME=VALUE pairs separated by commas) or the shapes: map of the --config file. Each setting
// adds to or replaces the ones before it.
type ShapeList map[string]string

// String renders the list as the flag takes it.
func (l *ShapeList) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(*l))
	for k := range *l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + (*l)[k]
	}
	return strings.Join(parts, ",")
}

// Set adds NAME=VALUE pairs, separated by commas; an unknown name is refused with the known ones.
func (l *ShapeList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return fmt.Errorf("shape %q: want NAME=VALUE", part)
		}
		if err := openshape.CheckKey(k); err != nil {
			return err
		}
		if *l == nil {
			*l = ShapeList{}
		}
		(*l)[k] = v
	}
	return nil
}

// checkShapes refuses a shapes: map of the config file naming an unknown shape.
func (c Config) checkShapes() error {
	for k, v := range c.Shapes {
		if err := openshape.CheckKey(k); err != nil {
			return fmt.Errorf("conformance: shapes: %v", err)
		}
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("conformance: shapes: %s has no value", k)
		}
	}
	return nil
}

// Shape returns what the target declared for the open shape key, else the reference mock's own
// choice when the target is the reference (Config.Reference), else "" and false.
func (c Config) Shape(key string) (string, bool) {
	return openshape.Shapes(c.Shapes).Get(key, c.Reference)
}

// Shape returns the value of the open shape key for this run's target (Config.Shape); without one
// the spec skips, naming the setting that would run it (it fails against the reference mock, which
// declares every shape).
func (s *Spec) Shape(key string) string {
	GinkgoHelper()
	return s.f.shape(key)
}

// Shape is Spec.Shape for a helper that holds a client of the spec.
func (c *Client) Shape(key string) string {
	GinkgoHelper()
	return c.f.shape(key)
}

func (f *Framework) shape(key string) string {
	GinkgoHelper()
	v, ok := f.cfg.Shape(key)
	if !ok {
		f.lacks(openshape.Undeclared(key))
	}
	return v
}

// DeclaredShape returns what the target declared for key alone (no reference default), "" when
// nothing.
func (c *Client) DeclaredShape(key string) string {
	return c.f.cfg.Shapes[key]
}

// View returns a copy of r that reads doc instead of its body (Field, Lookup, Int, ...), with the
// same status, headers and exchange: how the open-shapes layer hands a spec an answer laid out in
// the text's names (a capability detail read wherever its schema sits). Describe still shows the
// answer as it came.
func (r *Response) View(doc any) *Response {
	return &Response{Status: r.Status, Header: r.Header, Body: r.Body, Exchange: r.Exchange, doc: doc, parsed: true, viewed: true, f: r.f}
}

// shapeNames lists the shape names for --help.
func shapeNames() string {
	names := make([]string, 0, len(openshape.Known)+1)
	for _, n := range openshape.Known {
		names = append(names, n.Key)
	}
	return strings.Join(append(names, "page:<path>"), ", ")
}

// ShapeIf returns the value of the open shape key for this run's target (Config.Shape), and
// whether there is one; it never skips.
func (c *Client) ShapeIf(key string) (string, bool) { return c.f.cfg.Shape(key) }

// DeclaredShape returns what the target declared for key alone (no reference default), "" when
// nothing, for the run that made the call.
func (r *Response) DeclaredShape(key string) string {
	if r.f == nil {
		return ""
	}
	return r.f.cfg.Shapes[key]
}

// Lacks says the target lacks a state the spec needs (Spec.Lacks) for a helper that holds only an
// answer.
func (r *Response) Lacks(format string, args ...any) {
	GinkgoHelper()
	if r.f == nil {
		Fail(fmt.Sprintf(format, args...))
	}
	r.f.lacks(fmt.Sprintf(format, args...))
}

// Path is the path of the request that r answers, below the API root ("/capabilities").
func (r *Response) Path() string {
	if r.Exchange == nil {
		return ""
	}
	u, err := url.Parse(r.Exchange.URL)
	if err != nil {
		return r.Exchange.URL
	}
	if r.f != nil && r.f.apiRoot != nil {
		if p, ok := strings.CutPrefix(u.Path, r.f.apiRoot.Path); ok {
			return p
		}
	}
	return u.Path
}

// referenceAbsent skips the spec when a field it asked for is missing and the field is one the
// reference chose where the text shows no shape (openshape.ReferenceNames): its absence breaks
// nothing the text states, wherever in a spec the read happens. Under --strict (our own mock) it
// does nothing, and the read fails as any other.
func (f *Framework) referenceAbsent(path string) {
	GinkgoHelper()
	if f == nil || f.cfg.Strict || f.refNames == nil {
		return
	}
	names := f.refNames()
	for _, part := range strings.Split(path, ".") {
		if names[part] {
			SkipFor(StrictOnlySkip(fmt.Sprintf("reference choice: the answer has no %q, a field the reference chose where the text shows no shape (%s); its absence breaks no rule of the text (a failure only with --strict)", path, part)))
		}
	}
}

// deepCopyJSON copies a decoded JSON document (maps, slices and scalars), so that a caller changing
// its copy changes nothing else.
func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopyJSON(e)
		}
		return a
	}
	return v
}
