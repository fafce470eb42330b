package framework

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive
)

// ServeFiles serves h on a loopback listener (127.0.0.1:0) for the rest of the spec and returns
// its base URL ("http://127.0.0.1:<port>"), e.g. to give the target links for from-url. Only a
// target on the same machine can reach it, and a target that refuses private addresses refuses
// it: specs skip with the reason then.
func (s *Spec) ServeFiles(h http.Handler) string {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred(), "listen on a loopback port for the file server")
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	DeferCleanup(func(ctx SpecContext) {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			_ = srv.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

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
