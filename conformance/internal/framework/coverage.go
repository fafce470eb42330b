package framework

import "net/url"

// APIRoot returns a copy of the run's versioned API root (it ends in /api/v1), e.g. to call a
// path beside it with Spec.Link.
func (s *Spec) APIRoot() *url.URL {
	u := *s.f.apiRoot
	return &u
}

// RetiredCapabilityID is the configured id of a capability the target has retired ("" when the
// configuration names none: retired ids are not listed, so the suite cannot discover one).
func (s *Spec) RetiredCapabilityID() string { return s.f.cfg.RetiredCapabilityID }
