// Package wrongservers measures how well the conformance suite catches wrong servers. Each entry of
// its table is the reference mock behind a proxy that changes one behaviour, a mistake an
// implementer plausibly makes, with the rule ids of spec/rules.yaml it breaks. Run starts, for each
// entry, a fresh mock (the mediaspec binary, manual clock, control API on) behind that proxy, runs
// `mediaspec check` on the entry's rules as a subprocess, and calls the entry killed when one of
// its rules fails. A baseline run through the unchanged proxy must fail nothing, or the harness
// (not the suite) is wrong.
//
// The package never imports the mock: the mock is a subprocess, seen only over HTTP, like any
// server the suite checks.
package wrongservers

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Server is one wrong server: the reference mock with one behaviour changed.
type Server struct {
	// Name is short and unique: area-mistake.
	Name string
	// Rules are the ids the mistake violates; the entry is killed when the suite fails one of them.
	Rules []string
	// Mistake says in one sentence what the server does wrong.
	Mistake string
	// Legal, when set, quotes the interface text that allows the change after all: the row breaks
	// only a choice the reference made where the text is silent or says "not shown" (rules.yaml
	// basis reference), so the text, the only judge, does not refuse it. Such a row is run as a
	// legal variant on the specs of its rules' areas (LegalVariants), never as a wrong server (All
	// leaves it out). Issue #22.
	Legal string
	// API wraps the proxy between the suite and the mock (nil: unchanged).
	API Wrap
	// Hooks wraps the proxy between the mock's webhook deliveries and the suite's receiver (nil:
	// unchanged).
	Hooks Wrap

	// checkArgs are further `mediaspec check` flags the server needs (a legal variant names its
	// key header or its paths); filter, when set, is the label filter instead of the rules' one.
	checkArgs []string
	filter    string
	// shapes are --shape NAME=VALUE settings, passed when the binary's check knows --shape.
	shapes []string
	// outsider runs the check without --reference (Variant.Outsider).
	outsider bool
	// mode is the target mode: "" or "b" (control API, manual clock), "c" (keys only, real time,
	// procs processes); timeout bounds the check (0: checkTimeout).
	mode    string
	procs   int
	timeout time.Duration
	// long is mode t's second pass: the specs that wait out hours (check --long) against a mock
	// at longTimeScale.
	long bool
}

// split reports whether the check runs in several processes, each with a receiver of its own
// (mode c; modes p and t with procs above 1): deliveries reach them through the webhook proxy's
// rewrite (viaHookProxy), as no one receiver address serves them all.
func (s Server) split() bool { return s.mode == "c" || (profileMode(s.mode) && s.procs > 1) }

// Wrap changes a handler's behaviour; next is the path to the real server (or receiver).
type Wrap func(env *Env, next http.Handler) http.Handler

// Filter is the Ginkgo label filter that selects the specs of the server's rules.
func (s Server) Filter() string {
	if s.filter != "" {
		return s.filter
	}
	return strings.Join(s.Rules, " || ")
}

// Env is what a wrong server may know about its run: the API keys the mock issued (at start and
// through the control API, with their workspace and scopes) and the signing secrets of the webhook
// endpoints the suite registered (by receiver path). It is safe for concurrent use.
type Env struct {
	mu      sync.Mutex         // guards keys, order, secrets, gone, owners
	keys    map[string]keyInfo // key -> its workspace and scopes
	order   []string           // keys in the order they were issued
	secrets map[string]string  // receiver URL path -> signing secret
	gone    map[string]bool    // webhook ids deleted through the proxy
	owners  map[string]string  // pre-made object id -> its workspace (the profile's own actor, ...)
}

// own records that the pre-made object id belongs to workspace ws.
func (e *Env) own(id, ws string) {
	if id == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.owners == nil {
		e.owners = map[string]string{}
	}
	e.owners[id] = ws
}

// ownerOf is the workspace of a pre-made object (own).
func (e *Env) ownerOf(id string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ws, ok := e.owners[id]
	return ws, ok
}

type keyInfo struct {
	workspace string
	scopes    []string
}

func (e *Env) addKey(key, workspace string, scopes ...string) {
	if key == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.keys == nil {
		e.keys = map[string]keyInfo{}
	}
	if _, ok := e.keys[key]; !ok {
		e.order = append(e.order, key)
	}
	e.keys[key] = keyInfo{workspace: workspace, scopes: scopes}
}

// known reports whether the mock issued key.
func (e *Env) known(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.keys[key]
	return ok
}

// readOnly reports whether key holds the read scope only.
func (e *Env) readOnly(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	k, ok := e.keys[key]
	return ok && slices.Contains(k.scopes, "read") && !slices.Contains(k.scopes, "generate")
}

// generateKey is the first key issued with the generate scope in key's workspace, else the first
// one issued at all (the mock's main key) when key is unknown, empty, or alone in its workspace.
func (e *Env) generateKey(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ws, known := e.keys[key]
	var first string
	for _, k := range e.order {
		info := e.keys[k]
		if !slices.Contains(info.scopes, "generate") {
			continue
		}
		if known && info.workspace == ws.workspace {
			return k
		}
		if first == "" {
			first = k
		}
	}
	return first
}

// secretOf is the signing secret of the endpoint registered with rawURL.
func (e *Env) secretOf(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	return e.Secret(u.Path)
}

func (e *Env) markDeleted(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone == nil {
		e.gone = map[string]bool{}
	}
	e.gone[id] = true
}

func (e *Env) deleted(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gone[id]
}

func (e *Env) remember(rawURL, secret string) {
	u, err := url.Parse(rawURL)
	if err != nil || secret == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.secrets == nil {
		e.secrets = map[string]string{}
	}
	e.secrets[u.Path] = secret
}

// Secret is the signing secret of the endpoint registered at the receiver path, if the suite
// registered one through the proxy.
func (e *Env) Secret(path string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.secrets[path]
	return s, ok
}

// All is the table: every wrong server, sorted by name. Rows the text allows after all (Legal set)
// are left out: they run as legal variants.
func All() []Server {
	var all []Server
	for _, s := range defined() {
		if s.Legal == "" {
			all = append(all, s)
		}
	}
	return all
}

// Areas are the interface areas of the server's rules (the rule ids' prefixes: AUTH, ERR, ...), in
// the order of its rules.
func (s Server) Areas() []string {
	var areas []string
	for _, id := range s.Rules {
		if a := ruleArea(id); !slices.Contains(areas, a) {
			areas = append(areas, a)
		}
	}
	return areas
}

// ruleArea is the area of a rule id: what comes before its last dash (AUTH-001: AUTH).
func ruleArea(id string) string {
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

// tables are the written tables, one per file of this package, named by what they break; the one
// place a table is listed. A row is registered by writing it into its table (a Server literal in
// the file's list); a new table is registered here.
var tables = []struct {
	name string
	rows []Server
}{
	{"auth", authServers}, {"buckets", bucketServers}, {"catalogue", catalogueServers},
	{"checks", checkServers}, {"deliveries", deliveryServers}, {"errors", errorServers},
	{"fixed", fixedServers}, {"generations", generationServers}, {"ids", idServers},
	{"ledger", ledgerServers}, {"links", linkServers}, {"lists", listServers},
	{"once", onceServers}, {"paging", pagingServers}, {"reads", readServers},
	{"refusals", refusalServers}, {"registrations", registrationServers},
	{"signing", signingServers}, {"spending", spendingServers}, {"talking", talkingServers},
	{"uploads", uploadServers}, {"versioning", versioningServers}, {"webhooks", webhookServers},
	{"workflows", workflowServers}, {"power", powerServers},
	{"textonly", textOnlyServers}, {"textonly-b", textOnlyServersB}, {"textonly-c", textOnlyServersC},
	{"textonly-d", textOnlyServersD}, {"textonly-e", textOnlyServersE}, {"textonly-f", textOnlyServersF},
}

// defined is every row written in the tables, sorted by name, the legal ones included.
func defined() []Server {
	var all []Server
	for _, t := range tables {
		all = append(all, t.rows...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}
