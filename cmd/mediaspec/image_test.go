package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/mediaspec/mediaspec/conformance"
)

func parseImageFlags(t *testing.T, args ...string) *imageFlags {
	t.Helper()
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := registerImageFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return f
}

func fixedPort(p int) func() (int, error) { return func() (int, error) { return p, nil } }

var mediaspecLabels = map[string]string{mediaspecImageLabel: "mediaspec"}

// The mediaspec image runs the mock as the embedded run does: on the picked loopback port, with a
// control token, a manual clock and loopback webhooks; --image-env overrides a default.
func TestPlanRunsTheMockImageLikeTheEmbeddedRun(t *testing.T) {
	f := parseImageFlags(t, "--image", "mediaspec:dev", "--image-env", "MEDIASPEC_MOCK_SEED=9", "--image-env", "EXTRA=1")
	p, err := planContainer(f, mediaspecLabels, fixedPort(41234))
	if err != nil {
		t.Fatal(err)
	}
	if p.repository != "mediaspec" || p.tag != "dev" || !p.mediaspec || p.port != 41234 {
		t.Errorf("plan %+v", p)
	}
	if !slices.Equal(p.cmd, []string{"mock"}) {
		t.Errorf("cmd %q, want [mock] (settings come from the environment)", p.cmd)
	}
	if p.controlToken == "" {
		t.Fatal("no control token for the mediaspec image")
	}
	for _, want := range []string{
		"MEDIASPEC_MOCK_ADDR=127.0.0.1:41234", "MEDIASPEC_MOCK_CONTROL_TOKEN=" + p.controlToken,
		"MEDIASPEC_MOCK_CLOCK=manual", "MEDIASPEC_MOCK_ALLOW_LOOPBACK_WEBHOOKS=true",
		"MEDIASPEC_MOCK_SEED=9", "EXTRA=1",
	} {
		if !slices.Contains(p.env, want) {
			t.Errorf("env %q lacks %q", p.env, want)
		}
	}
	if slices.Contains(p.env, "MEDIASPEC_MOCK_SEED=1") {
		t.Errorf("--image-env did not override the default seed: %q", p.env)
	}
}

// Another image keeps its own command unless --image-cmd gives one; {port} asks for a free port
// and {control_token} for the token given.
func TestPlanSubstitutesThePortAndToken(t *testing.T) {
	f := parseImageFlags(t, "--image", "registry.local:5000/team/api", "--image-cmd", `["serve", "--listen", "127.0.0.1:{port}"]`,
		"--image-env", "CONTROL_TOKEN={control_token}", "--image-control-token", "tok")
	p, err := planContainer(f, nil, fixedPort(40001))
	if err != nil {
		t.Fatal(err)
	}
	if p.repository != "registry.local:5000/team/api" || p.tag != "latest" || p.mediaspec {
		t.Errorf("plan %+v", p)
	}
	if !slices.Equal(p.cmd, []string{"serve", "--listen", "127.0.0.1:40001"}) || !slices.Equal(p.env, []string{"CONTROL_TOKEN=tok"}) {
		t.Errorf("cmd %q env %q", p.cmd, p.env)
	}

	// Without {port}, the server listens on --image-port (default 8080) and nothing is picked.
	f = parseImageFlags(t, "--image", "api:1")
	p, err = planContainer(f, nil, func() (int, error) { return 0, errors.New("not asked") })
	if err != nil || p.port != 8080 || p.cmd != nil || p.controlToken != "" {
		t.Errorf("plan %+v, %v", p, err)
	}
	// A port given with --image-port is used for {port} too.
	f = parseImageFlags(t, "--image", "api:1", "--image-port", "9000", "--image-cmd", "serve --port {port}")
	p, err = planContainer(f, nil, func() (int, error) { return 0, errors.New("not asked") })
	if err != nil || p.port != 9000 || !slices.Equal(p.cmd, []string{"serve", "--port", "9000"}) {
		t.Errorf("plan %+v, %v", p, err)
	}
}

func TestImageFlagsRefuseBadValues(t *testing.T) {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerImageFlags(fs)
	for _, args := range [][]string{
		{"--image-env", "NOEQUALS"}, {"--image-env", "=v"}, {"--image-port", "0"}, {"--image-port", "x"},
	} {
		if err := fs.Parse(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	for _, ref := range []string{"api@sha256:abc", "api:", ":tag", "a b"} {
		if _, _, err := splitImage(ref); err == nil {
			t.Errorf("image %q accepted", ref)
		}
	}
	// These are refused before any engine is asked.
	for _, args := range [][]string{
		{"check", "--image", "api:1", "--base-url", "http://127.0.0.1:1"},
		{"check", "--image", "api:1", "--image-pull", "sometimes"},
		{"check", "--image", "api:1", "--image-base-path", "api"},
		{"check", "--image", "api:1", "--image-cmd", "[not json"},
	} {
		_, _, err := run(t, args...)
		var ue usageError
		if !errors.As(err, &ue) || ue.msg == "" {
			t.Errorf("%v: err = %v, want a usage error with a message", args, err)
		}
	}
}

// The log goes where --image-logs says, else beside the first report, else to a new temporary file.
func TestContainerLogPath(t *testing.T) {
	if p, err := containerLogPath("x.log", conformance.Config{JSONReport: "r/a.json"}); err != nil || p != "x.log" {
		t.Errorf("with --image-logs: %q, %v", p, err)
	}
	if p, err := containerLogPath("", conformance.Config{HTMLReport: filepath.Join("out", "r.html")}); err != nil || p != filepath.Join("out", "container.log") {
		t.Errorf("beside the report: %q, %v", p, err)
	}
	p, err := containerLogPath("", conformance.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	if _, err := os.Stat(p); err != nil || !strings.HasPrefix(filepath.Base(p), "mediaspec-container-") {
		t.Errorf("temporary file %q: %v", p, err)
	}
}

// loadedConfig is the suite configuration check starts from when nothing is configured.
func loadedConfig(t *testing.T) conformance.Config {
	t.Helper()
	cfg, err := conformance.Load(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// dockerPool connects to the engine, or skips the test saying why.
func dockerPool(t *testing.T) *dockertest.Pool {
	t.Helper()
	pool, err := dockertest.NewPool("")
	if err == nil {
		err = pool.Client.Ping()
	}
	if err != nil {
		t.Skipf("no Docker engine answers (%v): start one (dockerd --bridge=none --iptables=false --ip6tables=false) to run this test; .ci/run does", err)
	}
	return pool
}

// buildTestImage builds the repository's Dockerfile around a freshly built static binary and tags
// it with a name of its own, removed when the test ends.
func buildTestImage(t *testing.T, pool *dockertest.Pool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, "bin", "mediaspec"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ca, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt") // the image only carries it; empty builds too
	if err := os.WriteFile(filepath.Join(dir, "bin", "ca-certificates.crt"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty /tmp for the mock's upload spool files, as `make image` lays it out.
	tmp := filepath.Join(dir, "bin", "rootfs", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	// The context holds only what the Dockerfile copies, so .dockerignore is not needed here.
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		t.Fatal(err)
	}
	tag := "mediaspec-test:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	var out bytes.Buffer
	if err := pool.Client.BuildImage(dc.BuildImageOptions{Name: tag, ContextDir: dir, OutputStream: &out, RmTmpContainer: true}); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out.String())
	}
	t.Cleanup(func() { _ = pool.Client.RemoveImageExtended(tag, dc.RemoveImageOptions{Force: true}) })
	return tag
}

// containersNamed lists the containers (running or not) whose name starts with name.
func containersNamed(t *testing.T, pool *dockertest.Pool, name string) []dc.APIContainers {
	t.Helper()
	cs, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"name": {name}}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// The image builds under 32 MB; check --image's container serves the mock on a loopback port with
// control, and stopping removes it and keeps its log; a container that never gets ready, or a
// start interrupted by Ctrl-C, is removed too, and its last log lines are shown.
func TestImageContainerLifecycle(t *testing.T) {
	pool := dockerPool(t)
	tag := buildTestImage(t, pool)
	img, err := pool.Client.InspectImage(tag)
	if err != nil {
		t.Fatal(err)
	}
	if img.Size > 32_000_000 {
		t.Errorf("image is %d bytes, want at most 32 MB", img.Size)
	}
	if img.Config.User != "65534:65534" || !slices.Equal(img.Config.Entrypoint, []string{"/mediaspec"}) {
		t.Errorf("user %q entrypoint %q", img.Config.User, img.Config.Entrypoint)
	}

	t.Run("ready", func(t *testing.T) {
		f := parseImageFlags(t, "--image", tag, "--image-pull", "never", "--image-logs", filepath.Join(t.TempDir(), "c.log"))
		var name string
		f.started = func(n string) { name = n }
		cfg := loadedConfig(t)
		var out, errOut bytes.Buffer
		stop, err := startImage(context.Background(), f, &cfg, &out, &errOut)
		if err != nil {
			t.Fatalf("start: %v\n%s", err, errOut.String())
		}
		if !strings.HasPrefix(cfg.BaseURL, "http://127.0.0.1:") || cfg.ControlToken == "" || !cfg.Slow || cfg.Budget == 0 {
			t.Errorf("config %+v", cfg)
		}
		req, _ := http.NewRequest(http.MethodGet, cfg.ControlURL+"/clock", nil)
		req.Header.Set("Authorization", "Bearer "+cfg.ControlToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("control API with the token: %d", resp.StatusCode)
		}
		stop()
		if cs := containersNamed(t, pool, name); len(cs) != 0 {
			t.Errorf("container %s left behind", name)
		}
		logs, err := os.ReadFile(f.logs)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(logs), "mediaspec mock is serving") || strings.Contains(string(logs), cfg.ControlToken) {
			t.Errorf("log (should show the start, token redacted):\n%s", logs)
		}
	})

	t.Run("never ready", func(t *testing.T) {
		f := parseImageFlags(t, "--image", tag, "--image-base-path", "/nowhere", "--image-ready-timeout", "3s",
			"--image-logs", filepath.Join(t.TempDir(), "c.log"))
		var name string
		f.started = func(n string) { name = n }
		cfg := loadedConfig(t)
		var errOut bytes.Buffer
		_, err := startImage(context.Background(), f, &cfg, io.Discard, &errOut)
		if err == nil || !strings.Contains(err.Error(), "did not answer 200 within 3s") {
			t.Errorf("err = %v", err)
		}
		if !strings.Contains(errOut.String(), "last log lines") || !strings.Contains(errOut.String(), "mediaspec mock is serving") {
			t.Errorf("stderr does not show the container's last log lines:\n%s", errOut.String())
		}
		if cs := containersNamed(t, pool, name); name == "" || len(cs) != 0 {
			t.Errorf("container %q left behind", name)
		}
	})

	t.Run("exits", func(t *testing.T) {
		f := parseImageFlags(t, "--image", tag, "--image-cmd", "version", "--image-logs", filepath.Join(t.TempDir(), "c.log"))
		var name string
		f.started = func(n string) { name = n }
		cfg := loadedConfig(t)
		_, err := startImage(context.Background(), f, &cfg, io.Discard, io.Discard)
		// version exits at once; the run has no key and no control, so the configuration is refused
		// before a container starts.
		var ue usageError
		if !errors.As(err, &ue) || name != "" {
			t.Errorf("err = %v, container %q", err, name)
		}
		f = parseImageFlags(t, "--image", tag, "--image-cmd", "version", "--image-control-token", "t", "--image-logs", filepath.Join(t.TempDir(), "c.log"))
		f.started = func(n string) { name = n }
		cfg = loadedConfig(t)
		_, err = startImage(context.Background(), f, &cfg, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "stopped") {
			t.Errorf("err = %v", err)
		}
		if cs := containersNamed(t, pool, name); name == "" || len(cs) != 0 {
			t.Errorf("container %q left behind", name)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := parseImageFlags(t, "--image", tag, "--image-base-path", "/nowhere", "--image-logs", filepath.Join(t.TempDir(), "c.log"))
		var name string
		f.started = func(n string) { name = n; cancel() }
		cfg := loadedConfig(t)
		_, err := startImage(ctx, f, &cfg, io.Discard, io.Discard)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the interruption", err)
		}
		if cs := containersNamed(t, pool, name); name == "" || len(cs) != 0 {
			t.Errorf("container %q left behind", name)
		}
	})
}
