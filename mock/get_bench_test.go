package mock

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// idleConn is the connection of a bounded request in the benchmark: it is never used (nothing is
// cut).
type idleConn struct{ net.Conn }

// discardWriter is a reusable http.ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkServeGetGeneration measures the mock's own work for GET /api/v1/generations/{id} (key
// check, bucket, read, links, encoding) without the network: what the side-by-side run
// (BenchmarkHTTPGetGeneration) adds over a bare handler, quiet (the Config default) and with the
// request log of `mediaspec mock`, and logged through the handler chain Serve puts in front
// (limitIO, boundHandlers, on a connection as Serve's handlers are). Run with -cpuprofile/-memprofile.
func BenchmarkServeGetGeneration(b *testing.B) {
	for _, tc := range []struct {
		name            string
		logged, bounded bool
	}{{"quiet", false, false}, {"logged", true, false}, {"bounded", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s, key, genID := hotGeneration(b, tc.logged)
			s.SetPublicURL("http://127.0.0.1:1")
			var h http.Handler = s
			if tc.bounded {
				h = s.limitIO(s.boundHandlers(s))
			}
			req := httptest.NewRequest("GET", "/api/v1/generations/"+genID, nil)
			if tc.bounded {
				// As Serve's ConnContext does: the bound finds the request's connection (the handler
				// then writes net/http's header map directly).
				req = req.WithContext(context.WithValue(req.Context(), connKey{}, net.Conn(idleConn{})))
			}
			req.Header.Set("Authorization", "Bearer "+key)
			b.ReportAllocs()
			cpu0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				w := &discardWriter{h: http.Header{}}
				for pb.Next() {
					clear(w.h)
					h.ServeHTTP(w, req)
				}
			})
			// CPU time, unlike ns/op, barely moves when other processes share the machine.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
