package main

import (
	"encoding/xml"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/report"
)

// check-receiver passes against the project's own receiver, `mediaspec receive`.
func TestCheckReceiverPassesMediaspecReceive(t *testing.T) {
	first, printed, stop := startReceive(t, "--secret", receiveSecret)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, printed) }() // receive prints a line per attempt
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(first)
	if url == "" {
		t.Fatalf("start line %q", first)
	}
	dir := t.TempDir()
	junit := filepath.Join(dir, "receiver.xml")
	out, _, err := run(t, "check-receiver", "--url", url+"webhooks", "--secret", receiveSecret,
		"--junit-report", junit, "--json-report", filepath.Join(dir, "receiver.json"))
	if err != nil {
		t.Fatalf("check-receiver against mediaspec receive: %v\n%s", err, out)
	}
	b, err := os.ReadFile(junit)
	var doc report.JUnit
	if err == nil {
		err = xml.Unmarshal(b, &doc)
	}
	if err != nil || doc.Name != nil || doc.Time != nil || doc.Tests != 7 || doc.Failures != 0 || len(doc.Suites) != 1 ||
		len(doc.Suites[0].Cases) != 7 || !strings.Contains(string(b), `<testcase classname="mediaspec.receiver" name="RECV-001: `) {
		t.Errorf("JUnit report: %v\n%s", err, b)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := lines[len(lines)-2]; got != "rules: 7 passed, 0 failed, 0 skipped" {
		t.Errorf("rule line %q\n%s", got, out)
	}
	if got := lines[len(lines)-1]; !regexp.MustCompile(`^\d+ passed, 0 failed$`).MatchString(got) {
		t.Errorf("last line %q", got)
	}
}

// A receiver that answers 200 to everything fails, naming the signature rule; exit status 1.
func TestCheckReceiverFailsAnAcceptAllServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	out, _, err := run(t, "check-receiver", "--url", srv.URL+"/hooks", "--secret", receiveSecret)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v (exit %d), want exit 1\n%s", err, exitCode(err), out)
	}
	for _, want := range []string{"fail RECV-001", "fail RECV-002", "pass RECV-005", "rules: 5 passed, 2 failed, 0 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if !strings.Contains(out, "signed with another secret: answered 200") {
		t.Errorf("the RECV-001 reason does not name the bad signature\n%s", out)
	}
}

// A bad URL, a malformed secret and an unreachable receiver are setup errors: exit 2.
func TestCheckReceiverSetupErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hooks"
	_ = ln.Close()
	for _, args := range [][]string{
		{"--url", "ftp://127.0.0.1/hooks", "--secret", receiveSecret},
		{"--url", "127.0.0.1:1/hooks", "--secret", receiveSecret},
		{"--url", closed, "--secret", "whsec_short"},
		{"--url", closed, "--secret", "nope"},
		{"--url", closed, "--secret", receiveSecret},
		{"--secret", receiveSecret},
		{"--url", closed, "--secret", receiveSecret, "--junit-report", filepath.Join(t.TempDir(), "missing", "r.xml")},
	} {
		out, _, err := run(t, append([]string{"check-receiver"}, args...)...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want exit 2\n%s", args, err, exitCode(err), out)
		}
	}
}
