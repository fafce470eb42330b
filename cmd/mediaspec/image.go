package main

// mediaspec check --image: start the server under test from a Docker image with dockertest, wait
// until it is ready, point the suite at it, and remove the container whatever happens.
//
// Containers run with host networking: the engines this is made for have no bridge
// (dockerd --bridge=none), and a server that delivers webhooks must reach the suite's receiver on
// this machine's loopback. So no port is published: the server listens on a loopback port of the
// host itself, which mediaspec picks when the command or environment asks for it with {port}.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/mediaspec/mediaspec/conformance"
)

// mediaspecImageLabel marks the mediaspec image (the Dockerfile sets it): check --image runs the mock
// in it with a control token and the embedded run's settings.
const mediaspecImageLabel = "org.opencontainers.image.title"

// containerLabel marks every container check --image starts.
const containerLabel = "io.mediaspec.check"

// logTailLines is how many of the container's last log lines are shown when it never gets ready.
const logTailLines = 30

// imageFlags are check's --image-* flags.
type imageFlags struct {
	image        string
	env          envFlag
	port         portFlag
	cmd          string
	basePath     string
	pull         string
	logs         string
	controlToken string
	readyTimeout time.Duration

	// started, when set, is called with the container's name once it runs (tests cancel there).
	started func(name string)
}

// registerImageFlags defines the --image-* flags on check's flag set.
func registerImageFlags(fs *flag.FlagSet) *imageFlags {
	f := &imageFlags{port: portFlag{port: 8080}}
	fs.StringVar(&f.image, "image", "", "start the server under test from this Docker image (name:tag) and check it; the container is removed afterwards")
	fs.Var(&f.env, "image-env", "K=V environment variable for the container (repeatable; in the environment variable, one K=V per line); {port} and {control_token} are replaced")
	fs.Var(&f.port, "image-port", "port the server in the container listens on (host networking: a port of this machine's loopback); default 8080, or a free port when {port} is used")
	fs.StringVar(&f.cmd, "image-cmd", "", "command (arguments after the entrypoint) for the container, space-separated or a JSON array; {port} and {control_token} are replaced (default: the image's)")
	fs.StringVar(&f.basePath, "image-base-path", "/api/v1", "path of the versioned API root on the server in the container")
	fs.StringVar(&f.pull, "image-pull", "missing", "pull the image: missing (only when not present), always, or never")
	fs.StringVar(&f.logs, "image-logs", "", "write the container's log here (default: container.log beside the first report, else a temporary file; the path is printed)")
	fs.StringVar(&f.controlToken, "image-control-token", "", "control token the server in the container accepts; the run then has control (default for the mediaspec image: a random one)")
	fs.DurationVar(&f.readyTimeout, "image-ready-timeout", time.Minute, "how long to wait for GET <base path>/health/ready to answer 200")
	return f
}

// envFlag collects repeated K=V values.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }

func (e *envFlag) Set(v string) error {
	for _, line := range strings.Split(strings.TrimSpace(v), "\n") {
		if k, _, ok := strings.Cut(line, "="); !ok || k == "" {
			return fmt.Errorf("%q is not K=V", line)
		}
		*e = append(*e, line)
	}
	return nil
}

// portFlag is a TCP port that remembers whether it was given.
type portFlag struct {
	port int
	set  bool
}

func (p *portFlag) String() string { return strconv.Itoa(p.port) }

func (p *portFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q is not a port (1-65535)", v)
	}
	p.port, p.set = n, true
	return nil
}

// containerPlan is what check --image starts: the image, its command and environment, the loopback
// port the server listens on and the control token it accepts ("" for none).
type containerPlan struct {
	repository, tag string
	cmd             []string // nil: the image's own
	env             []string
	port            int
	controlToken    string
	mediaspec       bool // the mediaspec image: the mock runs with the embedded run's settings
}

// planContainer works out the container to start from the flags and the image's labels. freePort
// picks a free loopback port; it is called only when the plan needs one.
func planContainer(f *imageFlags, labels map[string]string, freePort func() (int, error)) (containerPlan, error) {
	p := containerPlan{mediaspec: labels[mediaspecImageLabel] == "mediaspec", controlToken: f.controlToken}
	var err error
	if p.repository, p.tag, err = splitImage(f.image); err != nil {
		return p, err
	}
	if p.cmd, err = splitCmd(f.cmd); err != nil {
		return p, err
	}
	env := []string(f.env)
	if p.mediaspec && p.cmd == nil {
		// The image's CMD pins --addr 0.0.0.0:8080; run the mock with settings from the environment
		// (it reads MEDIASPEC_MOCK_* for every flag) instead, as the embedded run does: loopback, a
		// control token, a clock that moves only when a spec advances it, loopback webhooks and fetches.
		p.cmd = []string{"mock"}
		env = append([]string{
			"MEDIASPEC_MOCK_ADDR=127.0.0.1:{port}",
			"MEDIASPEC_MOCK_CONTROL_TOKEN={control_token}",
			"MEDIASPEC_MOCK_CLOCK=manual",
			"MEDIASPEC_MOCK_SEED=1",
			"MEDIASPEC_MOCK_ALLOW_LOOPBACK_WEBHOOKS=true",
			"MEDIASPEC_MOCK_ALLOW_LOOPBACK_FETCH=true",
		}, env...)
		if p.controlToken == "" {
			p.controlToken = rand.Text()
		}
	}
	p.env = mergeEnv(env)
	p.port = f.port.port
	usesPort := strings.Contains(strings.Join(p.cmd, " ")+" "+strings.Join(p.env, " "), "{port}")
	if usesPort && !f.port.set {
		if p.port, err = freePort(); err != nil {
			return p, err
		}
	}
	r := strings.NewReplacer("{port}", strconv.Itoa(p.port), "{control_token}", p.controlToken)
	for i := range p.cmd {
		p.cmd[i] = r.Replace(p.cmd[i])
	}
	for i := range p.env {
		p.env[i] = r.Replace(p.env[i])
	}
	return p, nil
}

// splitImage splits name[:tag] into repository and tag (default latest); a registry host's port is
// not a tag.
func splitImage(ref string) (repository, tag string, err error) {
	if strings.Contains(ref, "@") {
		return "", "", usageError{msg: fmt.Sprintf("--image %q: give a tag, not a digest", ref)}
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repository, tag = ref[:i], ref[i+1:]
	} else {
		repository, tag = ref, "latest"
	}
	if repository == "" || tag == "" || strings.ContainsAny(ref, " \t") {
		return "", "", usageError{msg: fmt.Sprintf("--image %q is not an image name[:tag]", ref)}
	}
	return repository, tag, nil
}

// splitCmd reads --image-cmd: a JSON array of strings, or words separated by spaces; nil for "".
func splitCmd(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if strings.HasPrefix(strings.TrimSpace(s), "[") {
		var cmd []string
		if err := json.Unmarshal([]byte(s), &cmd); err != nil {
			return nil, usageError{msg: fmt.Sprintf("--image-cmd: not a JSON array of strings: %v", err)}
		}
		return cmd, nil
	}
	return strings.Fields(s), nil
}

// mergeEnv keeps the last value of each variable, in the order the names first appear.
func mergeEnv(env []string) []string {
	at := map[string]int{}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// freeLoopbackPort asks the kernel for a free port on 127.0.0.1 and releases it for the container.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startImage starts the server under test from f.image, waits until it is ready and points cfg at
// it. The returned stop saves the container's log and removes the container; call it in every case
// once startImage succeeded (startImage itself removes the container when it fails).
func startImage(ctx context.Context, f *imageFlags, cfg *conformance.Config, stdout, stderr io.Writer) (stop func(), err error) {
	if cfg.BaseURL != "" {
		return nil, usageError{msg: "--image and --base-url exclude each other: the image's container is the server under test"}
	}
	switch f.pull {
	case "missing", "always", "never":
	default:
		return nil, usageError{msg: fmt.Sprintf("--image-pull %q: want missing, always or never", f.pull)}
	}
	if f.readyTimeout <= 0 {
		return nil, usageError{msg: "--image-ready-timeout must be above 0"}
	}
	if !strings.HasPrefix(f.basePath, "/") {
		return nil, usageError{msg: fmt.Sprintf("--image-base-path %q must start with /", f.basePath)}
	}
	if _, _, err := splitImage(f.image); err != nil {
		return nil, err
	}
	if _, err := splitCmd(f.cmd); err != nil {
		return nil, err
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("docker: no engine answers (%w); start one, e.g. dockerd --bridge=none --iptables=false --ip6tables=false", err)
	}
	img, err := ensureImage(ctx, pool, f.image, f.pull, stderr)
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if img.Config != nil {
		labels = img.Config.Labels
	}
	plan, err := planContainer(f, labels, freeLoopbackPort)
	if err != nil {
		return nil, err
	}
	origin := "http://127.0.0.1:" + strconv.Itoa(plan.port)
	cfg.BaseURL = origin + strings.TrimRight(f.basePath, "/")
	if plan.controlToken != "" {
		cfg.ControlURL, cfg.ControlToken = origin+"/_control/v1", plan.controlToken
	}
	if plan.mediaspec {
		useMockTargetDefaults(cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{msg: err.Error()}
	}
	logPath, err := containerLogPath(f.logs, *cfg)
	if err != nil {
		return nil, err
	}
	var red conformance.Redactor
	red.Add(plan.controlToken, cfg.Key, cfg.ReadKey, cfg.OtherKey)

	name := "mediaspec-check-" + strings.ToLower(rand.Text()[:12])
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Name:       name,
		Repository: plan.repository,
		Tag:        plan.tag,
		Cmd:        plan.cmd,
		Env:        plan.env,
		Labels:     map[string]string{containerLabel: "1"},
	}, func(hc *dc.HostConfig) {
		hc.NetworkMode = "host"
		hc.PublishAllPorts = false
		hc.RestartPolicy = dc.NeverRestart()
	})
	if err != nil {
		// A container may exist even when starting it failed.
		_ = pool.RemoveContainerByName(name)
		return nil, fmt.Errorf("docker: start %s: %w", f.image, err)
	}
	stop = func() {
		saveContainerLog(pool, res, logPath, &red, stderr)
		if err := pool.Purge(res); err != nil {
			fmt.Fprintf(stderr, "mediaspec: remove container %s: %v\n", name, err)
		}
	}
	if f.started != nil {
		f.started(name)
	}
	if err := waitReady(ctx, pool, res, cfg.BaseURL+"/health/ready", f.readyTimeout); err != nil {
		fmt.Fprintf(stderr, "mediaspec: the container's last log lines:\n%s", indent(red.String(containerLogs(pool, res, strconv.Itoa(logTailLines)))))
		stop()
		return nil, err
	}
	fmt.Fprintf(stdout, "checking image %s (container %s, host network) at %s\n", f.image, name, cfg.BaseURL)
	return stop, nil
}

// useMockTargetDefaults sets what a run against the mediaspec mock needs that a real service's
// configuration would say: slow specs on, the catalogue's retired capability, a budget (the mock's
// credits are free), and that it is the reference (a state the suite cannot find there fails).
func useMockTargetDefaults(cfg *conformance.Config) {
	cfg.Slow = true
	cfg.Reference = true
	if cfg.RetiredCapabilityID == "" {
		cfg.RetiredCapabilityID = embeddedRetiredCapability
	}
	if cfg.Budget == 0 {
		cfg.Budget = embeddedBudget
	}
}

// ensureImage makes sure the image is present, pulling it as --image-pull says, and returns it.
func ensureImage(ctx context.Context, pool *dockertest.Pool, ref, pull string, stderr io.Writer) (*dc.Image, error) {
	img, err := pool.Client.InspectImage(ref)
	switch {
	case err != nil && !errors.Is(err, dc.ErrNoSuchImage):
		return nil, fmt.Errorf("docker: inspect %s: %w", ref, err)
	case err != nil && pull == "never":
		return nil, fmt.Errorf("docker: image %s is not present and --image-pull is never (build it, e.g. make image)", ref)
	case err == nil && pull != "always":
		return img, nil
	}
	repository, tag, _ := splitImage(ref)
	fmt.Fprintf(stderr, "mediaspec: pulling %s\n", ref)
	if err := pool.Client.PullImage(dc.PullImageOptions{Repository: repository, Tag: tag, Context: ctx, OutputStream: io.Discard}, dc.AuthConfiguration{}); err != nil {
		return nil, fmt.Errorf("docker: pull %s: %w", ref, err)
	}
	if img, err = pool.Client.InspectImage(ref); err != nil {
		return nil, fmt.Errorf("docker: inspect %s: %w", ref, err)
	}
	return img, nil
}

// waitReady polls readyURL with the pool's backoff until it answers 200, the container stops, ctx
// ends, or timeout passes.
func waitReady(ctx context.Context, pool *dockertest.Pool, res *dockertest.Resource, readyURL string, timeout time.Duration) error {
	// The image is a server nobody here controls: its probe answer's header block is capped, at
	// most 64 KiB of its body is read, and a redirect is an answer, not followed.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxResponseHeaderBytes: conformance.MaxAnswerHeaderBytes},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	deadline := time.Now().Add(timeout)
	var final, last error // final stops the retries; last is the latest probe's failure
	pool.MaxWait = timeout
	err := pool.Retry(func() error {
		if err := ctx.Err(); err != nil {
			final = fmt.Errorf("interrupted while waiting for %s to get ready: %w", readyURL, err)
			return nil
		}
		if c, err := pool.Client.InspectContainer(res.Container.ID); err == nil && !c.State.Running {
			final = fmt.Errorf("the container stopped before %s answered (exit code %d)", readyURL, c.State.ExitCode)
			return nil
		}
		if time.Now().After(deadline) {
			final = fmt.Errorf("%s did not answer 200 within %s: %v", readyURL, timeout, last)
			return nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, nil)
		if err != nil {
			final = err
			return nil
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("status %d", resp.StatusCode)
			return last
		}
		return nil
	})
	if final != nil {
		return final
	}
	if err != nil {
		return fmt.Errorf("%s did not answer 200 within %s: %v", readyURL, timeout, last)
	}
	return nil
}

// containerLogs returns the container's stdout and stderr interleaved, the last tail lines ("all"
// for every line).
func containerLogs(pool *dockertest.Pool, res *dockertest.Resource, tail string) string {
	var buf bytes.Buffer // the client demultiplexes both streams in one goroutine
	if err := pool.Client.Logs(dc.LogsOptions{
		Container: res.Container.ID, OutputStream: &buf, ErrorStream: &buf,
		Stdout: true, Stderr: true, Tail: tail,
	}); err != nil {
		fmt.Fprintf(&buf, "(the container's log could not be read: %v)\n", err)
	}
	return buf.String()
}

// containerLogPath is where the container's log goes: --image-logs, else container.log beside the
// first report asked for, else a new temporary file.
func containerLogPath(flagValue string, cfg conformance.Config) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	for _, p := range []string{cfg.JSONReport, cfg.HTMLReport, cfg.JUnitReport} {
		if p != "" {
			return filepath.Join(filepath.Dir(p), "container.log"), nil
		}
	}
	fh, err := os.CreateTemp("", "mediaspec-container-*.log")
	if err != nil {
		return "", fmt.Errorf("container log: %w", err)
	}
	return fh.Name(), fh.Close()
}

// saveContainerLog writes the container's whole log, secrets redacted, to path and says where.
func saveContainerLog(pool *dockertest.Pool, res *dockertest.Resource, path string, red *conformance.Redactor, stderr io.Writer) {
	logs := red.String(containerLogs(pool, res, "all"))
	if err := os.WriteFile(path, []byte(logs), 0o644); err != nil {
		fmt.Fprintf(stderr, "mediaspec: container log: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "mediaspec: the container's log is in %s\n", path)
}

// indent prefixes every line of s with two spaces and ends it with a newline.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (empty)\n"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
