package wrongservers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// keySet is one KEY,READ_KEY,OTHER_KEY set of the mock's start line (mock --key-sets).
type keySet struct {
	GenerateKey string `json:"generate_key"`
	ReadKey     string `json:"read_key"`
	OtherKey    string `json:"other_key"`
}

// mockInfo is the start line `mediaspec mock --json` prints.
type mockInfo struct {
	KeySets      []keySet  `json:"key_sets"`
	BaseURL      string    `json:"base_url"`
	GenerateKey  string    `json:"generate_key"`
	ReadKey      string    `json:"read_key"`
	OtherKey     string    `json:"other_key"`
	ControlURL   string    `json:"control_url"`
	ControlToken string    `json:"control_token"`
	Workspace    string    `json:"default_workspace_id"`
	Roles        *roleKeys `json:"role_keys,omitempty"` // with mock --profile-out (modes p and t)
}

// roleKeys are the pre-made keys by role of the mock's start line (mock.RoleKeys).
type roleKeys struct {
	Revoked          string   `json:"revoked_key"`
	Expired          string   `json:"expired_key"`
	Budget           string   `json:"budget_key"`
	LowBalance       string   `json:"low_balance_key"`
	NoAgentAPI       string   `json:"no_agent_api_key"`
	GenerateOnly     string   `json:"generate_only_key"`
	DeletedWorkspace string   `json:"deleted_workspace_key"`
	AllowanceUsed    string   `json:"allowance_used_key"`
	Business         string   `json:"business_key"`
	OwnCatalogue     string   `json:"own_catalogue_key"`
	OwnActor         string   `json:"own_actor_id"`
	OwnClonedVoice   string   `json:"own_cloned_voice_id"`
	Siblings         []string `json:"sibling_keys"`
	LongLists        string   `json:"long_lists_key"`
	HighLimit        string   `json:"high_limit_key"`
	Limited          string   `json:"limited_key"`
}

// stack is one run's servers: the mock subprocess, the API proxy the suite calls (the mock's public
// URL, so its links come back through it too) and the webhook proxy the mock delivers to.
type stack struct {
	info       mockInfo
	env        *Env
	hookURL    string // where the mock delivers: the webhook proxy
	rcvListen  string // where the suite's receiver listens, behind the webhook proxy
	profile    string // the profile the mock writes in modes p and t (mock --profile-out)
	mock       *exec.Cmd
	mockExited chan error
	servers    []*http.Server
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// startStack starts the mock from bin with srv in front of it; logs go to dir.
func startStack(ctx context.Context, bin string, srv Server, dir string) (_ *stack, err error) {
	st := &stack{env: &Env{}}
	defer func() {
		if err != nil {
			st.stop()
		}
	}()
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hookLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = apiLn.Close()
		return nil, err
	}
	st.hookURL = "http://" + hookLn.Addr().String()
	mockAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if st.rcvListen, err = freeAddr(); err != nil {
		return nil, err
	}
	mockLog, err := os.Create(filepath.Join(dir, "mock.log"))
	if err != nil {
		return nil, err
	}
	st.profile = filepath.Join(dir, "profile.yaml")
	_ = os.Remove(st.profile) // a run made again writes its own
	st.mock = exec.Command(bin, mockArgs(srv, mockAddr, "http://"+apiLn.Addr().String(), st.profile)...)
	st.mock.Env = cleanEnv()
	st.mock.Stderr = mockLog
	out, err := st.mock.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := st.mock.Start(); err != nil {
		return nil, fmt.Errorf("start the mock: %w", err)
	}
	st.mockExited = make(chan error, 1)
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
		st.mockExited <- st.mock.Wait()
		_ = mockLog.Close()
	}()
	select {
	case l, ok := <-line:
		if !ok {
			return nil, fmt.Errorf("the mock stopped before it printed its start line (see %s)", mockLog.Name())
		}
		if err := json.Unmarshal([]byte(l), &st.info); err != nil {
			return nil, fmt.Errorf("the mock's start line: %w", err)
		}
	case <-time.After(30 * time.Second):
		return nil, errors.New("the mock printed no start line within 30s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	st.env.addKey(st.info.GenerateKey, st.info.Workspace, "read", "generate")
	st.env.addKey(st.info.ReadKey, st.info.Workspace, "read")
	st.env.addKey(st.info.OtherKey, "other", "read", "generate")
	if r := st.info.Roles; r != nil {
		// The pre-made keys of a profile's roles (modes p and t), each in a workspace of its own
		// but the siblings (of the main workspace) and the generate-only key (no read scope).
		for _, k := range r.Siblings {
			st.env.addKey(k, st.info.Workspace, "read", "generate")
		}
		st.env.addKey(r.GenerateOnly, "role-generate-only", "generate")
		for name, k := range map[string]string{"revoked": r.Revoked, "expired": r.Expired, "budget": r.Budget,
			"low-balance": r.LowBalance, "no-agent-api": r.NoAgentAPI, "deleted-workspace": r.DeletedWorkspace,
			"allowance-used": r.AllowanceUsed, "business": r.Business, "own-catalogue": r.OwnCatalogue,
			"long-lists": r.LongLists, "high-limit": r.HighLimit, "limited": r.Limited} {
			st.env.addKey(k, "role-"+name, "read", "generate")
		}
		// The own catalogue's pre-made actor and voice belong to that key's workspace: rows that
		// break workspace ownership (talk-foreign-*) know them without the control calls that
		// make such objects in mode b.
		st.env.own(r.OwnActor, "role-own-catalogue")
		st.env.own(r.OwnClonedVoice, "role-own-catalogue")
	}
	for i, ks := range st.info.KeySets {
		if i > 0 { // the first set is the keys above
			ws := "keyset-" + strconv.Itoa(i)
			st.env.addKey(ks.GenerateKey, ws, "read", "generate")
			st.env.addKey(ks.ReadKey, ws, "read")
			st.env.addKey(ks.OtherKey, ws+"-other", "read", "generate")
		}
	}

	quiet := log.New(io.Discard, "", 0)
	api := forward(mockAddr, quiet)
	var apiH http.Handler = capture(st.env, api)
	if srv.API != nil {
		apiH = srv.API(st.env, apiH)
	}
	var hookH http.Handler = forward(st.rcvListen, quiet)
	if srv.split() {
		// Each check process starts a receiver of its own and registers it: its URL is rewritten
		// to one through the webhook proxy, so deliveries pass the server's Hooks too.
		apiH = viaHookProxy(st.hookURL, apiH)
		hookH = forwardVia(quiet)
	}
	if srv.Hooks != nil {
		hookH = srv.Hooks(st.env, hookH)
	}
	for _, p := range []struct {
		ln net.Listener
		h  http.Handler
	}{{apiLn, apiH}, {hookLn, hookH}} {
		s := &http.Server{Handler: p.h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
		st.servers = append(st.servers, s)
		go func() { _ = s.Serve(p.ln) }()
	}
	return st, nil
}

// profileTimeScale is how many times faster than real time the mock's clock runs in modes p and
// t, as .ci/check-modes runs it (SCALE): the minutes of renders and rate windows take seconds.
const profileTimeScale = 10

// longTimeScale is the mock's clock in mode t's second pass, as .ci/check-modes runs it
// (LONG_SCALE): the specs that wait out hours of the target's clock (--long) take a minute.
const longTimeScale = 1000

// profileMode reports whether mode checks the mock as a staging server: without its control API,
// from the profile it writes (p: keys + profile; t: + test-mode inputs).
func profileMode(mode string) bool { return mode == "p" || mode == "t" }

// mockArgs are the `mediaspec mock` arguments of srv's mode: the mock listens on mockAddr and
// names publicURL (the API proxy) as its own; in modes p and t it writes its profile to profile.
func mockArgs(srv Server, mockAddr, publicURL, profile string) []string {
	args := []string{"mock", "--addr", mockAddr, "--public-url", publicURL,
		"--json", "--quiet", "--seed", "1", "--allow-loopback-webhooks", "--allow-loopback-fetch"}
	switch {
	case srv.mode == "c":
		// Keys only, real time: no control API, a key set per check process (as .ci/check-modes).
		args = append(args, "--no-control", "--key-sets", strconv.Itoa(max(srv.procs, 1)))
	case profileMode(srv.mode):
		// As .ci/check-modes p and t: no control API, a running clock, the profile of its
		// pre-made fixtures for check --config (with the test keys of --test-inputs in mode t).
		scale := profileTimeScale
		if srv.long {
			scale = longTimeScale
		}
		args = append(args, "--no-control", "--time-scale", strconv.Itoa(scale), "--profile-out", profile)
		if srv.procs > 1 {
			args = append(args, "--key-sets", strconv.Itoa(srv.procs)) // a key set per check process
		}
		if srv.mode == "t" {
			args = append(args, "--test-inputs")
		}
	default:
		args = append(args, "--clock", "manual")
	}
	return args
}

// forward is a reverse proxy to addr that keeps the Host the client sent.
func forward(addr string, errLog *log.Logger) http.Handler {
	target := &url.URL{Scheme: "http", Host: addr}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		ErrorLog: errLog,
	}
}

// keysPath is the control route that issues keys; rotatePath the one that rotates an endpoint's
// signing secret.
var (
	keysPath   = regexp.MustCompile(`^/_control/v1/workspaces/([^/]+)/keys$`)
	rotatePath = regexp.MustCompile(`^/_control/v1/webhooks/([^/]+)/rotate$`)
)

// capture remembers every key issued through the control API and the signing secret of every
// webhook endpoint registered through the proxy (and its new one when control rotates it).
func capture(env *Env, next http.Handler) http.Handler {
	var urls memo[string] // webhook id -> registered URL
	secrets := exchanges(route(http.MethodPost, "/webhooks"), func(env *Env, req map[string]any, a *answer) {
		var resp struct {
			Secret  string `json:"secret"`
			Webhook struct {
				ID string `json:"webhook_id"`
			} `json:"webhook"`
		}
		if u, ok := req["url"].(string); ok && json.Unmarshal(a.body, &resp) == nil {
			env.remember(u, resp.Secret)
			if resp.Webhook.ID != "" {
				urls.put(resp.Webhook.ID, u)
			}
		}
	})(env, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := rotatePath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost {
			a := serve(next, r)
			var resp struct {
				Secret string `json:"secret"`
			}
			if u, ok := urls.get(m[1]); ok && a.status == http.StatusOK && json.Unmarshal(a.body, &resp) == nil {
				env.remember(u, resp.Secret)
			}
			a.send(w)
			return
		}
		if m := keysPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost {
			a := serve(next, r)
			var resp struct {
				Key    string   `json:"key"`
				Scopes []string `json:"scopes"`
			}
			if a.status == http.StatusCreated && json.Unmarshal(a.body, &resp) == nil {
				env.addKey(resp.Key, m[1], resp.Scopes...)
			}
			a.send(w)
			return
		}
		secrets.ServeHTTP(w, r)
	})
}

// stop shuts the proxies and the mock down.
func (st *stack) stop() {
	for _, s := range st.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
		_ = s.Close()
	}
	if st.mock == nil || st.mock.Process == nil || st.mockExited == nil {
		return
	}
	_ = st.mock.Process.Signal(os.Interrupt)
	select {
	case <-st.mockExited:
	case <-time.After(10 * time.Second):
		_ = st.mock.Process.Kill()
		<-st.mockExited
	}
}

// cleanEnv is this process's environment without MEDIASPEC_ settings, so a caller's configuration
// never reaches the mock or the check.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MEDIASPEC_") {
			env = append(env, kv)
		}
	}
	return env
}

// keySets is the check's --keys-file: one KEY,READ_KEY,OTHER_KEY line per key set of the start
// line (the start line's keys when it has no sets).
func (st *stack) keySets() string {
	sets := st.info.KeySets
	if len(sets) == 0 {
		sets = []keySet{{st.info.GenerateKey, st.info.ReadKey, st.info.OtherKey}}
	}
	var b strings.Builder
	for _, ks := range sets {
		fmt.Fprintf(&b, "%s,%s,%s\n", ks.GenerateKey, ks.ReadKey, ks.OtherKey)
	}
	return b.String()
}

// maxHookURL is the longest webhook URL the text admits (Webhook endpoints: url, 1 to 2048).
const maxHookURL = 2048

// viaPrefix starts the path of a webhook URL rewritten through the webhook proxy:
// /via/<host:port>/<the registered path>.
const viaPrefix = "/via/"

// loopbackHook is a webhook URL on this machine's loopback, the only ones rewritten.
var loopbackHook = regexp.MustCompile(`^http://(127\.0\.0\.1|localhost):\d+(/|$)`)

// viaHookProxy rewrites a loopback URL registered with POST /webhooks into one through hookURL
// (hookURL/via/host:port/path) and every such URL in webhook answers back, so the suite sees the
// URL it registered and the mock delivers through the webhook proxy.
func viaHookProxy(hookURL string, next http.Handler) http.Handler {
	back := regexp.MustCompile(regexp.QuoteMeta(hookURL+viaPrefix) + `([^/"?]+)`)
	hooks := route("", "/webhooks(/.*)?")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hooks(r) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) {
			if d, ok := decodeObject(requestBody(r)); ok {
				if u, _ := d["url"].(string); loopbackHook.MatchString(u) {
					// A URL the rewrite would take over the text's 2048 characters stays as
					// it is: its deliveries go straight to the receiver.
					if pu, err := url.Parse(u); err == nil && len(hookURL+viaPrefix+pu.Host+pu.RequestURI()) <= maxHookURL {
						d["url"] = hookURL + viaPrefix + pu.Host + pu.RequestURI()
						if b, err := json.Marshal(d); err == nil {
							setRequestBody(r, b)
						}
					}
				}
			}
		}
		a := serve(next, r)
		a.body = back.ReplaceAll(a.body, []byte("http://$1"))
		a.send(w)
	})
}

// forwardVia forwards a delivery to /via/<host:port>/<path> on to http://host:port/path.
func forwardVia(errLog *log.Logger) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			rest := strings.TrimPrefix(pr.In.URL.Path, viaPrefix)
			host, path, _ := strings.Cut(rest, "/")
			pr.SetURL(&url.URL{Scheme: "http", Host: host})
			pr.Out.URL.Path = "/" + path
			pr.Out.URL.RawPath = ""
			pr.Out.Host = host
		},
		ErrorLog: errLog,
	}
}
