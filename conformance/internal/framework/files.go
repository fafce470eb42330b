package framework

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
)

// ServeFiles serves h for the rest of the spec on the run's file server address (files_listen,
// default a loopback port, 127.0.0.1:0) and returns the base URL the target fetches it at: the
// declared files_url, else the listener's own ("http://127.0.0.1:<port>"), e.g. to give the target
// links for from-url. On a loopback address only a target on the same machine can reach it, and a
// target that refuses private addresses refuses it: specs skip with the reason then, naming
// files_url. One spec serves one file server at a time (a fixed files_listen is one port).
func (s *Spec) ServeFiles(h http.Handler) string {
	GinkgoHelper()
	listen := s.f.cfg.FilesListen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	Expect(err).NotTo(HaveOccurred(), "listen on "+listen+" for the file server (files_listen)")
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	DeferCleanup(func(ctx SpecContext) {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			_ = srv.Close()
		}
	})
	if pub := strings.TrimRight(s.f.cfg.FilesPublicURL, "/"); pub != "" {
		return pub
	}
	return "http://" + ln.Addr().String()
}

// FilesPublic reports whether the run names an address at which the target fetches the suite's
// files (files_url): a server that refuses loopback links can import them from there.
func (s *Spec) FilesPublic() bool { return s.f.cfg.FilesPublicURL != "" }

// Link calls an absolute link the service handed out (a signed upload or file link, served
// outside the API root) with no key. The exchange is recorded in the transcript but not checked
// against the REST description, which does not describe links. A transport error fails the spec.
func (s *Spec) Link(ctx context.Context, method, link string, opts ...CallOption) *Response {
	GinkgoHelper()
	u, err := url.Parse(link)
	Expect(err).NotTo(HaveOccurred(), "the service handed out a link that does not parse: "+s.f.redactor.String(link))
	Expect(u.IsAbs()).To(BeTrue(), "the service handed out a link that is not absolute: "+s.f.redactor.String(link))
	res, err := s.f.exchange(ctx, nil, method, u, "", NoAuth, opts)
	Expect(err).NotTo(HaveOccurred())
	return res
}
