// Package clients_test proves the REST description usable the way client authors use it: it
// generates a Go client with oapi-codegen and TypeScript types with openapi-typescript (both pinned),
// compiles each unmodified together with a short program (testdata/goflow, testdata/tsflow) and runs
// that program against the in-process mock: balance, voices, estimate, submit, wait, the
// generation.completed delivery decoded and dispatched through the generated event union, and an
// error answer decoded through the generated types.
//
// The Go program is built in a temporary copy of its own module (testdata/goflow/go.mod pins the
// generated code's runtime), so the project's go.mod does not gain the generated client's
// dependencies. The TypeScript tools are pinned in package.json and package-lock.json beside this
// file; the TypeScript half skips with the reason when node or npm is missing.
package clients_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
)

// OapiCodegen is the pinned generator, run through `go run` so that no tool is installed.
const OapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// startMock serves the mock on 127.0.0.1:0 with a fast clock (renders finish in milliseconds of
// wall time, so the flow's wait loop ends without anyone sleeping) and returns its API root and a
// generate key.
func startMock(t *testing.T) (base, key string) {
	t.Helper()
	srv, err := mock.New(mock.Config{
		Seed:                  17,
		TimeScale:             1000,
		NoControl:             true,
		AllowLoopbackWebhooks: true,
		ValidateResponses:     true,
		Logger:                discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	srv.SetPublicURL(ts.URL)
	info := srv.Info()
	return info.BaseURL, info.GenerateKey
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openapiPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs a command in dir and returns its combined output; it fails the test when the command
// fails.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s (%s)", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// copyDir copies the regular files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGeneratedGoClientRunsTheFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generated-client check builds a client module")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: the generated Go client cannot be built")
	}
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "goflow"), dir)
	// The nested module stands alone: no workspace, no flags meant for the project's module.
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly"}
	run(t, ctx, dir, env, goBin, "run", OapiCodegen, "-generate", "types,client", "-package", "mediaspec",
		"-o", filepath.Join("mediaspec", "mediaspec.gen.go"), openapiPath(t))
	run(t, ctx, dir, env, goBin, "build", "-o", "goflow", ".")

	base, key := startMock(t)
	out := run(t, ctx, dir, nil, filepath.Join(dir, "goflow"), base, key)
	t.Log(out)
	if !strings.Contains(out, "go flow: ok") {
		t.Fatalf("the Go flow did not finish:\n%s", out)
	}
}

func TestGeneratedTypeScriptTypesRunTheFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generated-client check installs the TypeScript tools")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skip("node and npm are needed for the TypeScript half (.ci/run has them); Go half still runs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(here, "node_modules", ".bin", "tsc")); err != nil {
		run(t, ctx, here, nil, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	}
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "tsflow"), dir)
	if err := os.Symlink(filepath.Join(here, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(here, "node_modules", ".bin")
	run(t, ctx, dir, nil, filepath.Join(bin, "openapi-typescript"), openapiPath(t), "-o", "schema.d.ts")
	run(t, ctx, dir, nil, filepath.Join(bin, "tsc"), "-p", ".")

	base, key := startMock(t)
	out := run(t, ctx, dir, nil, node, filepath.Join("out", "flow.js"), base, key)
	t.Log(out)
	if !strings.Contains(out, "ts flow: ok") {
		t.Fatalf("the TypeScript flow did not finish:\n%s", out)
	}
}
