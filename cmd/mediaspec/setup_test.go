package main

import (
	"net"
	"os"
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
	config := filepath.Join(t.TempDir(), "check.yaml")
	if err := os.WriteFile(config, []byte("base_url: http://127.0.0.1:1\nbogus: 1\nbudget: abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--base-url", "localhost:8080"}, `base URL "localhost:8080" is not an http(s) URL`},
		{[]string{"check", "--base-url", "http://127.0.0.1:1", "--key", "k", "--control-url", "127.0.0.1:1"}, "control URL"},
		{[]string{"check", "--budget", "-5"}, "--budget -5: want zero or more credits"},
		{[]string{"check", "--time-scale", "0"}, "--time-scale 0: want above zero"},
		{[]string{"check", "--procs", "99"}, "--procs 99"},
		{[]string{"check", "--image", "mediaspec:none", "--image-pull", "never"}, "no engine answers"},
		{[]string{"check", "--json-report", filepath.Join(t.TempDir(), "no", "r.json")}, "cannot be written"},
		{[]string{"check", "--config", config}, "line 2: unknown setting bogus; line 3: budget: `abc` is not a whole number"},
		{[]string{"mock", "--addr", addr}, "the address is in use"},
		{[]string{"mock", "--catalog", filepath.Join(t.TempDir(), "none")}, "--catalog"},
		{[]string{"mock", "--spec", filepath.Join(t.TempDir(), "none.yaml")}, "--spec"},
		{[]string{"receive", "--secret", secret, "--addr", addr}, "the address is in use"},
		{[]string{"proxy", "--upstream", "http://127.0.0.1:1/api/v1", "--listen", addr}, "in use"},
		{[]string{"proxy", "--upstream", "localhost:8080"}, "not an http(s) URL"},
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
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "framework.") {
			t.Errorf("%v: error %q, want one line containing %q", tc.args, msg, tc.want)
		}
		if out != "" || errOut != "" {
			t.Errorf("%v: printed before its setup error:\nstdout: %s\nstderr: %s", tc.args, out, errOut)
		}
	}
}

// A malformed --secret is said once: no "receiver:" prefix inside the command's own message, and one
// "want" (issue 26: "… want at least 16 (want whsec_ …)", "receiver check setup: --secret: receiver: …").
func TestSecretProblemsAreSaidOnce(t *testing.T) {
	for _, args := range [][]string{
		{"receive", "--secret", "whsec_YWJj"},
		{"receive", "--secret", "abc"},
		{"receive", "--secret", "whsec_"},
		{"check-receiver", "--url", "http://127.0.0.1:1/hooks", "--secret", "whsec_!!!"},
	} {
		_, _, err := run(t, args...)
		if err == nil {
			t.Errorf("%v: accepted", args)
			continue
		}
		msg := err.Error()
		if strings.Count(msg, "want ") > 1 || strings.Contains(msg, "receiver: ") || exitCode(err) != 2 {
			t.Errorf("%v: exit %d, %q", args, exitCode(err), msg)
		}
	}
}
