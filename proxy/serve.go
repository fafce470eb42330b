package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Serve serves h on ln with the mock's limits (mock.DefaultLimits: header, read, write and idle
// timeouts, a longer deadline for an upload PUT, the header size cap) until ctx ends, then shuts
// down within the mock's grace. It returns nil after a shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	lim := mock.DefaultLimits
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hs := &http.Server{
		Handler:           uploadDeadlines(h, lim.UploadTimeout),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.ShutdownGrace)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			_ = hs.Close()
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// uploadDeadlines gives a PUT to an upload link (a large file) the mock's upload deadline in
// place of the server's read and write timeouts.
func uploadDeadlines(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, judge.UploadPath) {
			rc := http.NewResponseController(w)
			until := time.Now().Add(d)
			_ = rc.SetReadDeadline(until)
			_ = rc.SetWriteDeadline(until)
		}
		next.ServeHTTP(w, r)
	})
}
