// Package drivertest is what the tests of the suite's drivers by area (paging, answer, buckets,
// refusal, catalogue, uploads) share: a test server on 127.0.0.1:0 with a framework client over it that judges
// nothing on its own, and the message of the assertion a driver failed.
package drivertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/onsi/gomega"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Key is the key the client sends; the test server takes any.
const Key = "sk_live_test"

// Serve starts h on a test server bound to 127.0.0.1:0 and returns a framework client of its
// /api/v1 (framework.UnjudgedClient: only the driver under test judges the answers) and the
// server's close. It panics on a setup error: it is called from TestMain.
func Serve(h http.Handler) (*framework.Client, func()) {
	fresh, stop := serveFresh(h)
	return fresh(), stop
}

// ServeSwitched starts a test server as Serve does, for tests that change what it answers:
// serve(h) makes it answer with h from then on and returns a client that sends a key of its own,
// so a driver that remembers answers per key (Client.Memo) reads afresh.
func ServeSwitched() (serve func(h http.Handler) *framework.Client, stop func()) {
	var cur atomic.Pointer[http.Handler]
	fresh, stop := serveFresh(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*cur.Load()).ServeHTTP(w, r)
	}))
	return func(h http.Handler) *framework.Client {
		cur.Store(&h)
		return fresh()
	}, stop
}

// RunSwitched is a TestMain over one ServeSwitched server: it sets *serve, runs m's tests, stops
// the server and exits with their code.
func RunSwitched(m *testing.M, serve *func(h http.Handler) *framework.Client) {
	var stop func()
	*serve, stop = ServeSwitched()
	code := m.Run()
	stop()
	os.Exit(code)
}

// serveFresh is Serve with a maker of clients, each sending a key of its own.
func serveFresh(h http.Handler) (fresh func() *framework.Client, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	cfg := framework.Config{BaseURL: srv.URL + "/api/v1", Key: Key, TimeScale: 1, Procs: 1}
	f, err := framework.New(context.Background(), cfg)
	if err != nil {
		srv.Close()
		panic(err)
	}
	var n atomic.Int64
	return func() *framework.Client {
		if i := n.Add(1); i > 1 {
			return f.UnjudgedClient(fmt.Sprintf("%s_%d", Key, i))
		}
		return f.UnjudgedClient(Key)
	}, srv.Close
}

// failure is what the fail handler panics with, as Ginkgo's does inside a spec.
type failure string

// FailureOf runs f and returns the message of the first assertion it failed, "" when none.
func FailureOf(t *testing.T, f func()) (msg string) {
	t.Helper()
	gomega.RegisterFailHandler(func(message string, _ ...int) { panic(failure(message)) })
	defer func() {
		if r := recover(); r != nil {
			m, ok := r.(failure)
			if !ok {
				panic(r)
			}
			msg = string(m)
		}
	}()
	f()
	return ""
}
