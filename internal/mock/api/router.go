// Package api is the mock's HTTP layer for /api/v1: the Router that wires
// handlers with their scope and buckets, the key check in the documented
// order, and the handlers. Its subpackage wire holds what the mock's HTTP
// adapters share: the one error renderer, strict JSON decoding and query
// helpers.
//
// Handlers have the signature wire.HandlerFunc: they write a success answer
// with wire.WriteJSON, or return an error that wire.Write renders (anything
// that is not an *apierr.Error becomes 500 internal_error). No answer under
// /api/v1 carries CORS headers.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// BasePath is the versioned API root every Router pattern is relative to.
const BasePath = "/api/v1"

// Deps are what the Router needs from the server.
type Deps struct {
	Clock    clock.Clock
	Registry *workspace.Registry
	Limiter  *ratelimit.Limiter
	Logger   *slog.Logger
	// Faults, when set, is consulted for a queued internal_error fault after the key checks of
	// every keyed call.
	Faults *faults.Store
	// Drain, when set, is done once the server starts to shut down: parked waits answer at once.
	Drain context.Context
	// WaitBudget, when above 0, is the most wall time a wait stays parked before it answers
	// still_running (so its answer is written before the server's write timeout).
	WaitBudget time.Duration
	// TestKey, when set (test inputs are on, spec/testmode.yaml), reports whether a key is a test
	// key: only a test key's requests have their TestInputHeader honoured. Needs Faults.
	TestKey func(keyID string) bool
}

// Router serves /api/v1. Register every route before serving; Handle and
// HandlePublic are not safe to call concurrently with ServeHTTP.
type Router struct {
	deps Deps
	mux  *http.ServeMux

	readyMu sync.Mutex // guards ready
	ready   []readyCheck
}

type readyCheck struct {
	name string
	fn   func() error
}

const fallbackPattern = BasePath + "/"

// NewRouter returns a router with no routes but the 404 fallback.
func NewRouter(d Deps) *Router {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &Router{deps: d, mux: http.NewServeMux()}
	rt.mux.Handle(fallbackPattern, rt.wrap(rt.notFound))
	return rt
}

// Handle registers a keyed route. pattern is "METHOD /path" relative to
// BasePath (e.g. "GET /generations/{id}"). Every call runs the key check in
// the documented order: 401 not_authorized, 410 workspace_unavailable, 403
// required_plan (free plan), 429 quota_exceeded (request allowance), 429
// rate_limited (bucket plus extra buckets, counted together), 403
// insufficient_scope; then h runs with the caller in its context (Caller).
func (rt *Router) Handle(pattern string, scope workspace.Scope, bucket ratelimit.Bucket, h wire.HandlerFunc, extra ...ratelimit.Bucket) {
	buckets := append([]ratelimit.Bucket{bucket}, extra...)
	rt.mux.Handle(rt.full(pattern), rt.wrap(func(w http.ResponseWriter, r *http.Request) error {
		c, err := rt.authorize(w, r, scope, buckets)
		if err != nil {
			return err
		}
		// The caller goes into the request's slot when it has one (served by mock.Serve): a copy
		// of the request to carry it cost every keyed call an allocation of the whole request.
		ctx := r.Context()
		if slot := wire.SlotOf(ctx); slot != nil {
			slot.Caller = c
		} else {
			ctx = context.WithValue(ctx, callerKey{}, c)
		}
		if c.TestInput != "" {
			defer rt.deps.Faults.EndRequest(c.TestInput)
			ctx = faults.WithRequest(ctx, c.TestInput)
		}
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		return h(w, r)
	}))
}

// HandlePublic registers a route that needs no key (the health probes).
func (rt *Router) HandlePublic(pattern string, h wire.HandlerFunc) {
	rt.mux.Handle(rt.full(pattern), rt.wrap(h))
}

func (rt *Router) full(pattern string) string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || !strings.HasPrefix(path, "/") {
		panic("api: pattern must be \"METHOD /path\": " + pattern)
	}
	return method + " " + BasePath + path
}

// wrap turns a wire.HandlerFunc into an http.Handler that renders its error. The logger Write
// reports an unexpected error with joins the request's context only then: a request that
// succeeds pays for no copy of itself.
func (rt *Router) wrap(h wire.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			wire.Write(w, r.WithContext(wire.WithLogger(r.Context(), rt.deps.Logger)), err)
		}
	})
}

// ServeHTTP dispatches requests under BasePath.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// notFound answers every unrouted request under /api/v1 with 404 not_found.
//
// A path that exists under another method also answers 404 not_found (not
// 405): 405 is not in the interface's error table, so a strict client
// validating statuses against the REST description would see an
// undocumented status; the message names the methods the path answers.
func (rt *Router) notFound(_ http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := rt.mux.Handler(probe); p != fallbackPattern && p != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		return apierr.NotFound("No route " + r.Method + " " + r.URL.Path + "; this path answers " + strings.Join(allowed, ", ") + ".")
	}
	return apierr.NotFound("No route " + r.Method + " " + r.URL.Path + ". See GET " + BasePath + "/openapi.json for the routes.")
}

// CallerInfo is the authenticated caller of a keyed route.
type CallerInfo struct {
	Workspace *workspace.Workspace
	// Key is a snapshot of the key record taken at authentication.
	Key  workspace.KeyInfo
	Plan workspace.Plan
	// Available is the workspace's available credits read at authentication, under the same lock:
	// what an answer that does not move credits reports.
	Available int64
	// TestInput is the request's test input (faults.Fault.Request), "" for none: the faults it
	// forces are taken by the events of this request alone.
	TestInput string
}

type callerKey struct{}

// Caller returns the caller of a keyed route, or nil outside one: the one in the request's
// wire.Slot, else the one WithCaller put on ctx.
func Caller(ctx context.Context) *CallerInfo {
	if slot := wire.SlotOf(ctx); slot != nil && slot.Caller != nil {
		c, _ := slot.Caller.(*CallerInfo)
		return c
	}
	c, _ := ctx.Value(callerKey{}).(*CallerInfo)
	return c
}

// WithCaller returns ctx carrying c (for tests of handlers).
func WithCaller(ctx context.Context, c *CallerInfo) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// PresentedKey extracts the key from `Authorization: Bearer <key>` or
// `X-API-Key: <key>`. Missing, a non-bearer Authorization, an empty token,
// repeated headers, or both headers with different keys: 401 not_authorized.
func PresentedKey(r *http.Request) (string, error) {
	authz := r.Header.Values("Authorization")
	xkey := r.Header.Values("X-API-Key")
	if len(authz) > 1 || len(xkey) > 1 {
		return "", apierr.NotAuthorized("Send the API key once, in Authorization: Bearer <key> or in X-API-Key.")
	}
	var bearer, header string
	if len(authz) == 1 {
		scheme, tok, ok := strings.Cut(strings.TrimSpace(authz[0]), " ")
		tok = strings.TrimSpace(tok)
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return "", apierr.NotAuthorized("The Authorization header must be 'Bearer <API key>'.")
		}
		bearer = tok
	}
	if len(xkey) == 1 {
		header = strings.TrimSpace(xkey[0])
		if header == "" {
			return "", apierr.NotAuthorized("The X-API-Key header is empty.")
		}
	}
	switch {
	case bearer != "" && header != "" && bearer != header:
		return "", apierr.NotAuthorized("Authorization and X-API-Key carry different keys; send one key.")
	case bearer != "":
		return bearer, nil
	case header != "":
		return header, nil
	}
	return "", apierr.NotAuthorized("An API key is required: send Authorization: Bearer <key> or X-API-Key: <key>.")
}

// authorize runs the key check in the documented order.
func (rt *Router) authorize(w http.ResponseWriter, r *http.Request, scope workspace.Scope, buckets []ratelimit.Bucket) (*CallerInfo, error) {
	secret, err := PresentedKey(r)
	if err != nil {
		return nil, err
	}
	// One hold of the workspace lock authenticates, counts the request and reads the balance.
	adm, err := rt.deps.Registry.Admit(secret)
	if adm.Workspace == nil {
		return nil, err
	}
	ws, key, plan := adm.Workspace, adm.Key, adm.Plan
	reqlog.SetKeyID(w, key.KeyID)
	if plan == workspace.PlanFree {
		return nil, apierr.RequiredPlan(string(workspace.PlanPro), "", "The free plan does not include the agent API; the pro plan does.")
	}
	if err != nil { // the request allowance is spent
		return nil, err
	}
	if ok, wait := rt.deps.Limiter.AllowKey(key.KeyID, key.Buckets, buckets...); !ok {
		secs := ratelimit.RetryAfterSeconds(wait)
		names := make([]string, len(buckets))
		for i, b := range buckets {
			names[i] = string(b)
		}
		return nil, apierr.RateLimited(secs, "This key is over its "+strings.Join(names, "/")+" rate limit; retry after the number of seconds in retry_after_seconds.")
	}
	if !key.HasScope(scope) {
		return nil, apierr.InsufficientScope("This route needs a key with the " + string(scope) + " scope; this key has " + scopeList(key.Scopes) + ".")
	}
	ti, err := rt.testInput(r, ws.ID(), key.KeyID)
	if err != nil {
		return nil, err
	}
	if rt.deps.Faults != nil {
		if _, ok := rt.deps.Faults.TakeIn(faults.InternalError, ti, ws.ID(), ""); ok {
			rt.deps.Faults.EndRequest(ti)
			return nil, apierr.Internal(nil, "The service failed on its side; this is not a problem with your balance, key or request. Nothing was charged; try again.")
		}
	}
	return &CallerInfo{Workspace: ws, Key: key, Plan: plan, Available: adm.Available, TestInput: ti}, nil
}

func scopeList(s []workspace.Scope) string {
	names := make([]string, len(s))
	for i, x := range s {
		names[i] = string(x)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// ReadyCheck adds a named readiness check to GET /health/ready; fn returning
// an error marks it "failing".
func (rt *Router) ReadyCheck(name string, fn func() error) {
	rt.readyMu.Lock()
	defer rt.readyMu.Unlock()
	rt.ready = append(rt.ready, readyCheck{name, fn})
}
