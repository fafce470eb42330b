package conformance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/report"
)

// failingCallHelperEnv makes the test binary run the tiny suite of TestConsoleNamesTheFailingCall
// (Ginkgo runs one spec tree per process).
const failingCallHelperEnv = "MEDIASPEC_FAILING_CALL_HELPER"

// A root cause names the call whose answer the failed assertion judged, not the spec's last call:
// a spec that reads GET /generations/{id} (judged, it fails) after making another call, and a
// spec whose failure names no call and after which an AfterEach makes a call (as the wait for a
// spec's jobs does). The second has no call line, and its transcript block says it is the last
// call before the failure, never the AfterEach's.
func TestConsoleNamesTheFailingCall(t *testing.T) {
	if os.Getenv(failingCallHelperEnv) != "" {
		failingCallHelper(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConsoleNamesTheFailingCall$")
	cmd.Env = append(os.Environ(), failingCallHelperEnv+"=1")
	out, _ := cmd.CombinedOutput()
	_, text, ok := strings.Cut(string(out), "CONSOLE-BEGIN\n")
	text, _, ok2 := strings.Cut(text, "CONSOLE-END")
	if !ok || !ok2 {
		t.Fatalf("the helper printed no console:\n%s", out)
	}
	causes := map[string]string{}
	for _, block := range strings.Split(text, "\n\n")[1:] {
		switch {
		case strings.Contains(block, "want the generation"):
			causes["judged"] = block
		case strings.Contains(block, "the balance moved"):
			causes["state"] = block
		}
	}
	judged, state := causes["judged"], causes["state"]
	if judged == "" || state == "" {
		t.Fatalf("the console lacks a cause:\n%s", text)
	}
	for _, want := range []string{"\n   call: GET /generations/{id}\n", "\n   failing call:\n     > GET http://",
		"/api/v1/generations/gen_judged\n     < 404 Not Found\n"} {
		if !strings.Contains(judged, want) {
			t.Errorf("the cause of the judged call lacks %q:\n%s", want, judged)
		}
	}
	if strings.Contains(judged, "/capabilities") {
		t.Errorf("the cause names the call made after the judged one:\n%s", judged)
	}
	if strings.Contains(state, "call: ") || strings.Contains(state, "calls (") {
		t.Errorf("a failure that names no call has a call line:\n%s", state)
	}
	if !strings.Contains(state, "\n   last call before the failure (the failure names no call):\n     > GET http://") ||
		!strings.Contains(state, "/api/v1/capabilities\n") || strings.Contains(state, "/credits/balance") {
		t.Errorf("the cause of the failure about state does not show the last call before it (and only that):\n%s", state)
	}
}

// failingCallHelper runs the two failing specs against a server answering 404 on
// /generations/gen_judged and 200 elsewhere, and prints the console's summary between markers.
func failingCallHelper(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/gen_judged") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such generation"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	f, err := framework.New(ctx, Config{BaseURL: srv.URL + "/api/v1", Key: "sk_live_test", TimeScale: 1, Procs: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.WantReceiver(false)
	gomega.RegisterFailHandler(f.Fail)
	ginkgo.Describe("root cause", func() {
		f.Rule("CORE-006").It("a judged call, then another", func(ctx context.Context, s *framework.Spec) {
			a := s.Client().Get(ctx, "/generations/gen_judged", framework.Unjudged())
			s.Client().Get(ctx, "/capabilities", framework.Unjudged())
			gomega.Expect(a.Status).To(gomega.Equal(http.StatusOK), "want the generation"+a.Describe())
		})
	})
	ginkgo.Describe("root cause after the spec", func() {
		var c *framework.Client
		ginkgo.AfterEach(func(ctx context.Context) {
			if c != nil {
				c.Get(ctx, "/credits/balance", framework.Unjudged())
			}
		})
		f.Rule("CORE-006").It("a failure about state", func(ctx context.Context, s *framework.Spec) {
			c = s.Client()
			c.Get(ctx, "/capabilities", framework.Unjudged())
			gomega.Expect(false).To(gomega.BeTrue(), "the balance moved")
		})
	})
	f.RegisterSuiteNodes(func(r types.Report) {
		res := framework.BuildResults(f.Catalogue(), r)
		res.SpecCounts, _ = report.Count(res.Specs, nil)
		var out strings.Builder
		newConsole(&out, false, nil).summary(res, "")
		os.Stdout.WriteString("CONSOLE-BEGIN\n" + out.String() + "CONSOLE-END\n")
	})
	sc, rc := ginkgo.GinkgoConfiguration()
	ginkgo.RunSpecs(t, "root cause", sc, rc)
}
