package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// Every setup error a new user meets is one line, exit 2, and the only thing the command prints: no
// "checking …" line before it, no start information of a server that then fails to listen.
func TestSetupErrorsAreOneLineExitTwo(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	// No Docker engine: the client is pointed at a socket nothing listens on.
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-engine.sock"))
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := gone.Addr().String() // nothing listens there once closed
	gone.Close()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--base-url", "localhost:8080"}, `base URL "localhost:8080" is not an http(s) URL`},
		{[]string{"check", "--base-url", "http://127.0.0.1:1", "--key", "k", "--control-url", "127.0.0.1:1"}, "control URL"},
		{[]string{"check", "--budget", "-5"}, "budget must be zero or more"},
		{[]string{"check", "--time-scale", "0"}, "time scale"},
		{[]string{"check", "--procs", "99"}, "--procs 99"},
		{[]string{"check", "--image", "mediaspec:none", "--image-pull", "never"}, "no engine answers"},
		{[]string{"check", "--json-report", filepath.Join(t.TempDir(), "no", "r.json")}, "cannot be written"},
		{[]string{"mock", "--addr", addr}, "the address is in use"},
		{[]string{"mock", "--catalog", filepath.Join(t.TempDir(), "none")}, "--catalog"},
		{[]string{"mock", "--spec", filepath.Join(t.TempDir(), "none.yaml")}, "--spec"},
		{[]string{"receive", "--secret", secret, "--addr", addr}, "the address is in use"},
		{[]string{"check-receiver", "--url", "http://" + closed + "/hooks", "--secret", secret, "--timeout", "1s"}, "cannot reach http://" + closed},
		{[]string{"check-receiver", "--url", "ftp://example.test/hooks", "--secret", secret}, "ftp://"},
	} {
		out, errOut, err := run(t, tc.args...)
		if err == nil {
			t.Errorf("%v: accepted", tc.args)
			continue
		}
		if code := exitCode(err); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%v)", tc.args, code, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q, want one line containing %q", tc.args, msg, tc.want)
		}
		if out != "" || errOut != "" {
			t.Errorf("%v: printed before its setup error:\nstdout: %s\nstderr: %s", tc.args, out, errOut)
		}
	}
}
