package framework

import (
	"net/url"
	"slices"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/getkin/kin-openapi/openapi3"
)

// What the interface text leaves open about a target is named in its configuration, never
// assumed (Config.KeyHeader, DescriptionPath, LivePath, ReadyPath): a spec that needs one of them
// skips with the reason when the target names none.

// The skip reasons of specs that need what the target did not name (tier profile).
const (
	NoKeyHeader   = "unsupported: the text declares an API key header without its name and the target names none (--key-header); the key is sent as Authorization: Bearer only"
	NoDescription = "unsupported: the text does not give the live REST description's path and the target names none (--description-path)"
	NoLivePath    = "unsupported: the text does not give the liveness probe's path and the target names none (--live-path)"
	NoReadyPath   = "unsupported: the text does not give the readiness probe's path and the target names none (--ready-path)"
)

// KeySchemes are the ways the run sends a key: Authorization: Bearer, and the target's key header
// when it names one.
func (s *Spec) KeySchemes() []AuthScheme {
	if h, _, _, _ := s.f.cfg.Named(); h != "" {
		return []AuthScheme{Bearer, APIKeyHdr}
	}
	return []AuthScheme{Bearer}
}

// KeyHeader is the name of the target's API key header; the spec skips when it names none.
func (s *Spec) KeyHeader() string {
	GinkgoHelper()
	h, _, _, _ := s.f.cfg.Named()
	if h == "" {
		SkipFor(NotDeclared(NoKeyHeader))
	}
	return h
}

// DescriptionPath is the path of the target's live REST description below the API root; the spec
// skips when the target names none.
func (s *Spec) DescriptionPath() string {
	GinkgoHelper()
	_, p, _, _ := s.f.cfg.Named()
	if p == "" {
		SkipFor(NotDeclared(NoDescription))
	}
	return p
}

// HasDescription reports whether the target names its live description's path.
func (s *Spec) HasDescription() bool {
	_, p, _, _ := s.f.cfg.Named()
	return p != ""
}

// LivePath and ReadyPath are the paths of the target's probes below the API root; the spec skips
// when the target names none.
func (s *Spec) LivePath() string {
	GinkgoHelper()
	_, _, p, _ := s.f.cfg.Named()
	if p == "" {
		SkipFor(NotDeclared(NoLivePath))
	}
	return p
}

// ReadyPath: see LivePath.
func (s *Spec) ReadyPath() string {
	GinkgoHelper()
	_, _, _, p := s.f.cfg.Named()
	if p == "" {
		SkipFor(NotDeclared(NoReadyPath))
	}
	return p
}

// targetPath is where the target serves the description's operation at docPath: the reference's
// choices (the live description, the probes) move to the paths the target names, and are dropped
// ("", false) when it names none.
func (f *Framework) targetPath(docPath string) (string, bool) {
	_, desc, live, ready := f.cfg.Named()
	var p string
	switch docPath {
	case ReferenceDescriptionPath:
		p = desc
	case ReferenceLivePath:
		p = live
	case ReferenceReadyPath:
		p = ready
	default:
		return docPath, true
	}
	return p, p != ""
}

// namedElsewhere reports whether p is a path the target names (its live description or a probe)
// other than the reference's, which the REST description therefore does not hold.
func (f *Framework) namedElsewhere(p string) bool {
	_, desc, live, ready := f.cfg.Named()
	for _, n := range []struct{ at, ref string }{{desc, ReferenceDescriptionPath}, {live, ReferenceLivePath}, {ready, ReferenceReadyPath}} {
		if n.at != "" && p == n.at && n.at != n.ref {
			return true
		}
	}
	return false
}

// okStated reports whether the text states ok on r's answer: the normative view requires it in the
// answer's body schema for r's operation and status.
func (f *Framework) okStated(r *Response) bool {
	if r.Exchange == nil || f.judge == nil {
		return true
	}
	u, err := url.Parse(r.Exchange.URL)
	if err != nil {
		return true
	}
	route, _, ok := f.judge.Normative().FindRoute(r.Exchange.Method, u.Path)
	if !ok {
		return false
	}
	resp := route.Operation.Responses.Status(r.Status)
	if resp == nil || resp.Value == nil {
		return false
	}
	mt := resp.Value.Content.Get("application/json")
	return mt != nil && mt.Schema != nil && requires(mt.Schema.Value, "ok", 0)
}

// requires reports whether schema s (through allOf) requires the property name.
func requires(s *openapi3.Schema, name string, depth int) bool {
	if s == nil || depth > 8 {
		return false
	}
	if slices.Contains(s.Required, name) {
		return true
	}
	for _, g := range s.AllOf {
		if g != nil && requires(g.Value, name, depth+1) {
			return true
		}
	}
	return false
}
