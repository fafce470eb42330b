// Package mock wires the stateful mock of the media generation service: a
// Config becomes a *Server, an http.Handler serving /api/v1 (package api)
// and, unless disabled, the test-control API under /_control/v1 (package
// control) on the same listener.
//
// At start (and on POST /_control/v1/reset) the server builds its start
// state from its seed: a default workspace (plan pro, Config.Balance
// credits) with one generate+read key and one read-only key. Because every
// id and secret comes from one seeded stream (package ids) that reset
// restarts, the printed keys stay valid across resets and two servers with
// the same seed hand out the same ids.
package mock

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/admission"
	"github.com/mediaspec/mediaspec/internal/mock/api"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/control"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// MaxKeySets is the most key sets the start state may hold (Config.KeySets).
const MaxKeySets = 64

// DefaultUploadBytesLimit is Config.UploadBytesLimit's default (1 GiB).
const DefaultUploadBytesLimit = uploads.DefaultPendingBytes

// MinRetain is the shortest Config.Retain: the longest time after a record ends during which the
// interface sends a client back to it. That is the last retry of a webhook delivery about it
// (webhook.DefaultSchedule in all, about 14.5 hours after the event: a receiver is told to read
// the resource before acting), plus that attempt's timeout, plus the lifetime of the output link
// the read hands out: 14h45m10s.
var MinRetain = func() time.Duration {
	d := webhook.DefaultAttemptTimeout + jobs.LinkTTL
	for _, w := range webhook.DefaultSchedule {
		d += w
	}
	return d
}()

// DefaultBalance is the default workspace's starting balance.
const DefaultBalance int64 = 10000

// Config configures a Server. Zero values mean the documented defaults.
type Config struct {
	// Addr is the listen address (default "127.0.0.1:8080"); Serve uses the
	// listener it is given instead.
	Addr string
	// PublicURL is the scheme and host written into links and printed
	// (default: derived from the listener, http://<addr>).
	PublicURL string
	// Seed fixes ids, keys, rendered bytes and fault decisions. 0 picks a
	// random seed, reported in StartInfo.
	Seed uint64
	// TimeScale runs service time this many times faster than wall time
	// (default 1, at most clock.MaxScale). Ignored when Clock is set.
	TimeScale float64
	// ControlToken protects /_control/v1 (default: random, printed).
	ControlToken string
	// NoControl turns the control API off (its paths then answer 404).
	NoControl bool
	// Balance is the default workspace's starting balance (default 10000;
	// negative means 0).
	Balance int64
	// KeySets is how many key sets the start state holds (default 1): each is a
	// workspace with a read+generate key and a read-only key, plus a second
	// workspace with its own key, as the printed keys are. The first set is the
	// printed keys; every set is listed in StartInfo.KeySets, so a keys-only
	// run split over processes (mediaspec check --procs) gives each its own.
	KeySets int
	// TestInputs honours test inputs (spec/testmode.yaml: the Mediaspec-Test-Input request
	// header) for the test keys: every key of the start state (the printed keys and every key
	// set). Keys made later, through the control API, are not test keys.
	TestInputs bool `yaml:"test_inputs"`
	// RoleKeys adds the keys a target profile declares by role to the start state (RoleKeys; the
	// profile mediaspec mock --profile-out writes): a revoked key, an expired key, a key with a
	// 24-hour budget of RoleBudgetCredits, a key of a workspace with RoleLowBalance credits and a
	// key of a free-plan workspace, each made after the key sets (so ids of a start state without
	// them do not move), listed in StartInfo.Roles.
	RoleKeys bool
	// ValidateResponses checks every /api/v1 answer against the REST
	// description (OpenAPIJSON) and logs each violation at error level.
	ValidateResponses bool
	// LogRequests logs one line per request at info level (mock/reqlog): method, path, status,
	// duration, key id and the error code of a refusal. mediaspec mock turns it on unless --quiet.
	LogRequests bool `yaml:"log_requests"`
	// AllowLoopbackWebhooks also admits webhook URLs on http(s)://127.0.0.1:* and
	// http(s)://localhost:*, so local receivers work; no other private address is admitted.
	AllowLoopbackWebhooks bool
	// AllowLoopbackFetch lets POST /uploads/from-url fetch from loopback addresses (127.0.0.0/8,
	// ::1, localhost) so local file servers work; no other private address is ever admitted.
	AllowLoopbackFetch bool
	// Audit turns on the client audit (package audit): every /api/v1 call and file link is checked
	// against the client duties of the interface, and the findings are served at
	// GET /_control/v1/audit. Off by default.
	Audit bool
	// LogFormat is "text" (default) or "json"; used when Logger is nil.
	LogFormat string
	// Limits are the server's timeouts, connection cap and shutdown grace (zero fields: the
	// defaults of DefaultLimits).
	Limits Limits
	// UploadBytesLimit bounds the bytes of all pending uploads together (reserved in the last 15
	// minutes and not finalized, plus from-url imports being fetched); a reservation past it is
	// refused with 429 quota_exceeded (0: DefaultUploadBytesLimit, 1 GiB). Uploaded bytes are
	// kept in spool files under the system's temporary directory, not in memory
	// (docs/mock-limits.md).
	UploadBytesLimit int64 `yaml:"upload_bytes_limit"`
	// Retain forgets what ended this long ago on the service clock: finished generations with
	// their batches and output asset records, ended workflow runs, finished webhook deliveries,
	// finalized uploads nothing used for that long.
	// Workspaces, keys, balances, the ledger and anything still running are never forgotten.
	// 0 (the default) keeps everything until reset; otherwise at least MinRetain.
	Retain time.Duration `yaml:"retain"`

	// Clock is the injected clock (nil: a scaled real clock at TimeScale).
	Clock clock.Clock
	// Logger receives the server's logs (nil: stderr in LogFormat).
	Logger *slog.Logger
	// OpenAPIJSON is the REST description served at GET /api/v1/openapi.json
	// and used by ValidateResponses (nil: the embedded spec/openapi.yaml).
	OpenAPIJSON []byte
	// Fixtures is the capability catalogue served (nil: the embedded one, fixtures.Shared,
	// read once per process when a request first needs it; Serve warms it once it listens).
	Fixtures *fixtures.Catalog
}

// StartInfo is what `mediaspec mock` prints at start.
type StartInfo struct {
	// BaseURL is the REST API's root (the public URL with /api/v1).
	BaseURL string `json:"base_url"`
	// GenerateKey is a read+generate key of the default workspace.
	GenerateKey string `json:"generate_key"`
	// ReadKey is a read-only key of the same workspace.
	ReadKey string `json:"read_key"`
	// OtherKey is a read+generate key of a second workspace, for isolation checks
	// (`mediaspec check --other-key`).
	OtherKey string `json:"other_key"`
	// ControlURL is the control API's root ("" with NoControl).
	ControlURL string `json:"control_url,omitempty"`
	// ControlToken is the control API's bearer token ("" with NoControl).
	ControlToken string `json:"control_token,omitempty"`
	// Balance is the credits each start workspace holds (Config.Balance).
	Balance int64 `json:"balance"`
	// DefaultWorkspaceID is the workspace of GenerateKey and ReadKey.
	DefaultWorkspaceID string `json:"default_workspace_id"`
	// Seed is printed as a JSON string: seeds above 2^53 do not survive a JSON number in JavaScript
	// or jq.
	Seed uint64 `json:"seed,string"`
	// TimeScale is how many times faster than wall time service time runs (1: real time).
	TimeScale float64 `json:"time_scale"`
	// KeySets are every key set of the start state (Config.KeySets), the printed keys first; listed
	// only when there are several.
	KeySets []KeySet `json:"key_sets,omitempty"`
	// Roles are the pre-made keys by role (Config.RoleKeys); nil without them.
	Roles *RoleKeys `json:"role_keys,omitempty"`
}

// The role fixtures' fixed values (Config.RoleKeys).
const (
	// RoleBudgetCredits is the 24-hour budget of the budget key: 0, "no spend at all", so any
	// submit of that key is refused naming api_key_budget.
	RoleBudgetCredits int64 = 0
	// RoleLowBalance is the balance of the low-balance key's workspace: below any submit's hold.
	RoleLowBalance int64 = 1
)

// RoleKeys are the keys of the start state by role, the roles a target profile declares
// (docs/staging.md): each of a workspace of its own but the revoked and expired keys, which share
// one, so that nothing a spec does with one moves another's balance or windows.
type RoleKeys struct {
	// Revoked is a read+generate key that was revoked.
	Revoked string `json:"revoked_key"`
	// Expired is a read+generate key that expired a minute before the start.
	Expired string `json:"expired_key"`
	// Budget is a read+generate key with a rolling 24-hour budget of BudgetCredits.
	Budget string `json:"budget_key"`
	// BudgetCredits is Budget's 24-hour budget (RoleBudgetCredits).
	BudgetCredits int64 `json:"budget_key_credits"`
	// LowBalance is a read+generate key of a workspace holding RoleLowBalance credits.
	LowBalance string `json:"low_balance_key"`
	// NoAgentAPI is a read+generate key of a free-plan workspace, whose plan lacks the agent API.
	NoAgentAPI string `json:"no_agent_api_key"`
	// GenerateOnly is a key holding only the generate scope, of a workspace of its own with the
	// start balance.
	GenerateOnly string `json:"generate_only_key"`
	// DeletedWorkspace is a read+generate key of a workspace that was deleted at the start.
	DeletedWorkspace string `json:"deleted_workspace_key"`
	// AllowanceUsed is a read+generate key whose request allowance (0 requests) is used.
	AllowanceUsed string `json:"allowance_used_key"`
	// Business is a read+generate key of a business-plan workspace, which every requires_plan
	// capability and preset of the catalogue is available to.
	Business string `json:"business_key"`
	// OwnCatalogue is a read+generate key of a workspace of its own holding OwnActor, a ready
	// actor made without tags, and OwnClonedVoice, an active cloned voice: that workspace's own.
	OwnCatalogue   string `json:"own_catalogue_key"`
	OwnActor       string `json:"own_actor_id"`
	OwnClonedVoice string `json:"own_cloned_voice_id"`
	// Siblings are a second read+generate key of each key set's first workspace, in the order of
	// the key sets (the profile's sibling_key, the fourth key of each set): made last, so the
	// keys and ids made before them are those of a start state without roles.
	Siblings []string `json:"sibling_keys"`
	// OwnProcessingActor and OwnDisabledActor are actors of OwnCatalogue's workspace still
	// processing and disabled, OwnDeactivatedVoice a voice cloned there and deactivated: hidden
	// states of that workspace's own (none is listed).
	OwnProcessingActor  string `json:"own_processing_actor_id"`
	OwnDisabledActor    string `json:"own_disabled_actor_id"`
	OwnDeactivatedVoice string `json:"own_deactivated_voice_id"`
	// Renamed and Ended are renamed config fields, the old name of Renamed still accepted and
	// Ended's window over; RemovedEnum an enum value removed (bootVersionRoles). Nil when the
	// catalogue lacks their capabilities.
	Renamed     *RenamedField `json:"renamed_field,omitempty"`
	Ended       *RenamedField `json:"ended_field,omitempty"`
	RemovedEnum *RemovedEnum  `json:"removed_enum,omitempty"`
	// LongLists is a read-only key of a workspace of its own whose preset list (LongListCopies
	// coming-soon copies of listed presets), voice list (LongListVoices cloned voices) and asset
	// list (LongListAssets uploaded images) hold more than 50 rows: the long lists an operator
	// makes in their app. Its own workspace keeps
	// the key sets' catalogue as it starts.
	LongLists string `json:"long_lists_key"`
	// SavedWorkflows are a saved workflow of each key set's first workspace, in the order of the
	// key sets (the profile's saved_workflow_ids): taking no inputs, of two tts steps, the second
	// after the first with a longer script, as an operator saves one in their app.
	SavedWorkflows []string `json:"saved_workflow_ids"`
	// HighLimit is a read+generate key of a workspace whose limits and balance are RoleHighLimit;
	// Limited one of a workspace whose limits are LimitedPerGeneration and LimitedDaily
	// (bootLimitRoles).
	HighLimit            string `json:"high_limit_key"`
	Limited              string `json:"limited_key"`
	LimitedPerGeneration int64  `json:"limited_key_per_generation_limit"`
	LimitedDaily         int64  `json:"limited_key_daily_limit"`
}

// The long lists of RoleKeys.LongLists: with the start catalogue's 5 presets and 35 voices, more
// than 50 of each.
const (
	LongListCopies = 50
	LongListVoices = 20
)

// RoleComingSoonPreset is the id of the coming_soon preset the start state lists to the workspace
// of every key set (Config.RoleKeys): a copy of an available preset (the control API's
// CopyCapability), which a keys-only check finds listed and cannot run.
const RoleComingSoonPreset = "preset_coming_soon_demo"

// KeySet is one set of keys of the start state: a read+generate key and a read-only key of one
// workspace and a read+generate key of a second workspace, the three keys of mediaspec check
// (--key, --read-key, --other-key; --key-set takes them comma-separated).
type KeySet struct {
	// GenerateKey is the read+generate key (--key).
	GenerateKey string `json:"generate_key"`
	// ReadKey is the read-only key of the same workspace (--read-key).
	ReadKey string `json:"read_key"`
	// OtherKey is the read+generate key of the second workspace (--other-key).
	OtherKey string `json:"other_key"`
}

// String is the set as mediaspec check --key-set takes it: KEY,READ_KEY,OTHER_KEY.
func (k KeySet) String() string { return k.GenerateKey + "," + k.ReadKey + "," + k.OtherKey }

// Format writes the start banner, one "name: value" per line.
func (i StartInfo) Format(w io.Writer) error {
	lines := []string{
		"base url:       " + i.BaseURL,
		"generate key:   " + i.GenerateKey,
		"read key:       " + i.ReadKey,
		"other key:      " + i.OtherKey + " (second workspace)",
		fmt.Sprintf("balance:        %d credits", i.Balance),
		"workspace:      " + i.DefaultWorkspaceID,
		fmt.Sprintf("seed:           %d", i.Seed),
		fmt.Sprintf("time scale:     %g", i.TimeScale),
	}
	for n, set := range i.KeySets {
		if n > 0 {
			lines = append(lines, fmt.Sprintf("key set %-7s %s", fmt.Sprintf("%d:", n+1), set))
		}
	}
	if i.ControlURL != "" {
		lines = append(lines, "control url:    "+i.ControlURL, "control token:  "+i.ControlToken)
	} else {
		lines = append(lines, "control api:    disabled")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// Server is the mock: an http.Handler serving the REST API under /api/v1, the control API under
// /_control/v1 (unless Config.NoControl) and the signed file and upload links, all on one
// listener. Make one with New, serve it with Serve (or as a handler), and Close it. Its methods
// are safe for concurrent use.
type Server struct {
	// svc are the services New wires together (internal/mock/wired hands them to the module's own
	// tests); set by New and never replaced.
	svc wired.Services

	cfg     Config
	seed    uint64
	token   string
	mux     *http.ServeMux
	handler http.Handler

	// drain is done once Serve starts to shut down: parked waits answer at once.
	drain     context.Context
	drainNow  context.CancelFunc
	closeOnce sync.Once

	mu        sync.Mutex // guards publicURL, start, resetHooks
	publicURL string
	start     bootState
	// resetHooks run after the start state is rebuilt (later packages clear
	// their own state there).
	resetHooks []func()
}

type bootState struct {
	workspaceID string
	generateKey string
	readKey     string
	otherKey    string          // a read+generate key of a second workspace
	keySets     []KeySet        // every key set, the keys above first
	keySetWS    []string        // the workspace of each key set's generate and read keys
	testKeys    map[string]bool // key ids of the test keys (Config.TestInputs), nil when off
	roles       *RoleKeys       // the role fixtures (Config.RoleKeys), nil when off
	ownCatalog  string          // the workspace of roles.OwnCatalogue
	longLists   string          // the workspace of roles.LongLists
}

// settled is a Config checked and completed: the defaults filled in, and what New makes of it
// before it builds anything (the logger, the clock, the seed, the control token, the REST
// description's source).
type settled struct {
	cfg     Config
	logger  *slog.Logger
	clk     clock.Clock
	seed    uint64
	token   string
	openAPI func() ([]byte, error)
}

// settle checks cfg and fills in its defaults.
func settle(cfg Config) (settled, error) {
	if cfg.TimeScale < 0 || math.IsNaN(cfg.TimeScale) || cfg.TimeScale > clock.MaxScale {
		return settled{}, fmt.Errorf("mock: time scale %g: want a number above 0 and at most %d", cfg.TimeScale, clock.MaxScale)
	}
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 1
	}
	if cfg.KeySets < 0 || cfg.KeySets > MaxKeySets {
		return settled{}, fmt.Errorf("mock: %d key sets: want 1 to %d", cfg.KeySets, MaxKeySets)
	}
	if cfg.Retain < 0 || (cfg.Retain > 0 && cfg.Retain < MinRetain) {
		return settled{}, fmt.Errorf("mock: retain %s: want 0 (keep until reset) or at least %s", cfg.Retain, MinRetain)
	}
	if cfg.UploadBytesLimit < 0 {
		return settled{}, fmt.Errorf("mock: upload bytes limit %d: want 0 (the default) or more", cfg.UploadBytesLimit)
	}
	if cfg.Balance == 0 {
		cfg.Balance = DefaultBalance
	}
	cfg.Balance = max(cfg.Balance, 0)
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	logger := cfg.Logger
	if logger == nil {
		switch cfg.LogFormat {
		case "", "text":
			logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		case "json":
			logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
		default:
			return settled{}, fmt.Errorf("mock: log format %q: want text or json", cfg.LogFormat)
		}
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.NewScaled(time.Now(), cfg.TimeScale)
	}
	seed := cfg.Seed
	if seed == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return settled{}, fmt.Errorf("mock: seed: %w", err)
		}
		seed = binary.BigEndian.Uint64(b[:]) | 1
	}
	token := cfg.ControlToken
	if token == "" && !cfg.NoControl {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return settled{}, fmt.Errorf("mock: control token: %w", err)
		}
		token = "ctl_" + hex.EncodeToString(b)
	}
	// The embedded description's JSON is built on first use (spec.OpenAPIJSON builds it once per
	// process): GET /openapi.json or ValidateResponses, not every start.
	openAPI := func() ([]byte, error) { return cfg.OpenAPIJSON, nil }
	if cfg.OpenAPIJSON == nil {
		openAPI = func() ([]byte, error) { return spec.OpenAPIJSON(context.Background()) }
	}
	cfg.Limits = cfg.Limits.withDefaults()
	return settled{cfg: cfg, logger: logger, clk: clk, seed: seed, token: token, openAPI: openAPI}, nil
}

// New builds a server and its start state from cfg (a zero field takes the default its comment
// gives). It does not listen: serve it with Serve, or as
// an http.Handler, and Close it when done. It fails on a Config out of bounds.
func New(cfg Config) (*Server, error) {
	st, err := settle(cfg)
	if err != nil {
		return nil, err
	}
	s := newServer(st)
	s.wireAPI(st)
	s.wireStores(st)
	s.wireReadiness()
	s.wireWebhooks(st)
	s.wireAudit(st)
	s.wireRoutes(st)
	if err := s.wireHandler(st); err != nil {
		return nil, err
	}
	s.boot()
	s.bootCatalogRoles()
	s.bootVersionRoles()
	s.bootSavedWorkflows()
	return s, nil
}

// newServer makes the server of st with the services every concern stands on: the clock, ids,
// the workspace registry, the buckets, faults and the host resolver.
func newServer(st settled) *Server {
	cfg, logger, clk, seed, token := st.cfg, st.logger, st.clk, st.seed, st.token
	src := ids.New(seed)
	drain, drainNow := context.WithCancel(context.Background())
	s := &Server{
		drain:    drain,
		drainNow: drainNow,
		svc: wired.Services{
			Clock:    clk,
			IDs:      src,
			Registry: workspace.NewRegistry(clk, src),
			Limiter:  ratelimit.New(clk, nil),
			Logger:   logger,
		},
		cfg:   cfg,
		seed:  seed,
		token: token,
		mux:   http.NewServeMux(),
	}
	s.svc.Faults = faults.New(clk, src, faults.PricingUnavailable, faults.ProviderUnavailable, faults.InternalError)
	s.svc.Hosts = netguard.NewHosts(nil)
	s.OnReset(s.svc.Hosts.Reset)
	return s
}

// wireAPI makes the public API's router over the base services and registers its base routes.
func (s *Server) wireAPI(st settled) {
	cfg, logger, clk := st.cfg, st.logger, st.clk
	drain := s.drain
	deps := api.Deps{Clock: clk, Registry: s.svc.Registry, Limiter: s.svc.Limiter, Logger: logger, Faults: s.svc.Faults,
		Drain: drain, WaitBudget: cfg.Limits.WaitBudget()}
	if cfg.TestInputs {
		deps.TestKey = s.isTestKey
	}
	s.svc.API = api.NewRouter(deps)
	s.svc.API.RegisterBase(st.openAPI)
}

// wireStores makes the concerns that hold state (links, assets, uploads, the catalogue, jobs,
// workflows) in the order they look each other up, registers their routes and their resets.
func (s *Server) wireStores(st settled) {
	cfg, logger, clk, seed, src := st.cfg, st.logger, st.clk, st.seed, s.svc.IDs
	// Links are signed with a key derived from the seed, so a seeded run hands out the same links.
	linkKey := sha256.Sum256(fmt.Appendf(nil, "mediaspec links %d", seed))
	s.svc.Blob = blob.New(clk, linkKey[:], s.PublicURL)
	s.svc.Assets = assets.NewRegistry()
	s.OnReset(func() { s.svc.Blob.Reset(); s.svc.Assets.Reset() })
	// Uploads come before the catalogue: estimates and submits look uploads up through it.
	s.svc.Uploads = uploads.New(uploads.Deps{Clock: clk, IDs: src, Blob: s.svc.Blob, Assets: s.svc.Assets, Faults: s.svc.Faults,
		Logger: logger, AllowLoopbackFetch: cfg.AllowLoopbackFetch, Resolver: s.svc.Hosts, PendingBytesLimit: cfg.UploadBytesLimit,
		Retain: cfg.Retain})
	s.OnReset(s.svc.Uploads.Reset)
	s.svc.API.RegisterUploads(s.svc.Uploads)
	s.svc.API.RegisterAssets(s.svc.Assets, s.svc.Blob)
	s.svc.Catalog = catalog.New(catalog.Deps{Fixtures: cfg.Fixtures, DefaultWorkspaceID: s.DefaultWorkspaceID,
		IDs: src, APIVersion: spec.Version,
		// Template previews are served by the mock itself (PreviewPath), so preview_url can be fetched.
		PreviewBase: s.PublicURL,
		// Uploads first, then generated outputs: a workflow step names an earlier step's output.
		Assets: assetLookup{Uploads: s.svc.Uploads, Assets: s.svc.Assets}})
	s.svc.API.RegisterCatalog(admission.Deps{Catalog: s.svc.Catalog, Faults: s.svc.Faults})
	s.OnReset(s.svc.Catalog.Reset)
	s.OnReset(s.bootCatalogRoles) // after the catalog's reset, which forgets what bootCatalogRoles made
	s.OnReset(s.bootVersionRoles) // likewise
	s.svc.Jobs = jobs.New(jobs.Deps{Clock: clk, IDs: src, Registry: s.svc.Registry, Catalog: s.svc.Catalog, Faults: s.svc.Faults,
		Blob: s.svc.Blob, Assets: s.svc.Assets, Seed: seed, Retain: cfg.Retain, Logger: logger})
	s.svc.Catalog.UseVoiceGenerations(s.svc.Jobs)  // approved_voice_generation_id names a tts generation
	s.svc.Uploads.UseRetire(s.svc.Jobs.RetireFile) // a forgotten upload's bytes outlive the links handed out
	s.OnReset(s.svc.Jobs.Reset)
	s.svc.API.RegisterGenerations(s.svc.Jobs)
	s.svc.Workflows = workflows.New(workflows.Deps{Clock: clk, IDs: src, Registry: s.svc.Registry, Catalog: s.svc.Catalog,
		Jobs: s.svc.Jobs, Faults: s.svc.Faults, Retain: cfg.Retain, Logger: logger})
	s.OnReset(s.svc.Workflows.Reset)
	s.OnReset(s.bootSavedWorkflows) // after the engine's reset, which forgets what bootSavedWorkflows made
	s.svc.API.RegisterWorkflows(s.svc.Workflows)
	s.OnReset(func() { s.svc.Faults.Clear() })
}

// wireReadiness adds the readiness checks: the start state is there, and no not_ready fault is
// queued.
func (s *Server) wireReadiness() {
	s.svc.API.ReadyCheck("state", func() error {
		s.mu.Lock()
		id := s.start.workspaceID
		s.mu.Unlock()
		if _, ok := s.svc.Registry.Get(id); !ok {
			return errors.New("start state missing")
		}
		return nil
	})
	// A queued not_ready fault fails the "faults" check of its next count readiness probes.
	s.svc.Faults.Enable(faults.NotReady)
	s.svc.API.ReadyCheck("faults", func() error {
		if _, ok := s.svc.Faults.Take(faults.NotReady, ""); ok {
			return errors.New("a not_ready fault is queued")
		}
		return nil
	})
}

// wireWebhooks makes the webhook sender and connects what emits events to it: jobs, workflows and
// every wallet's low-balance hook.
func (s *Server) wireWebhooks(st settled) {
	cfg, logger, clk, src := st.cfg, st.logger, st.clk, s.svc.IDs
	// Webhooks: endpoints, signed deliveries, and credits.low from every wallet's low-balance hook
	// (set before boot creates the first workspace).
	// A running clock (real or scaled) stamps deliveries with the wall clock, which is what
	// receivers check webhook-timestamp against; a manual clock stamps its own time, which a
	// test's receiver reads through the control API (GET /clock answers time_scale 0).
	var stamp func() time.Time
	if clk.Scale() > 0 {
		stamp = time.Now
	}
	// A queued delivery_fail fault fails the next attempt of its workspace on the service side.
	s.svc.Faults.Enable(faults.DeliveryFail)
	s.svc.Webhooks = webhook.New(webhook.Config{Clock: clk, IDs: src, Logger: logger, AllowLoopback: cfg.AllowLoopbackWebhooks,
		Stamp: stamp, Retain: cfg.Retain,
		Resolver: s.svc.Hosts, ServiceFault: func(workspaceID string) bool {
			_, ok := s.svc.Faults.TakeFor(faults.DeliveryFail, workspaceID, "")
			return ok
		}})
	s.svc.Registry.OnLow = func(workspaceID string, l ledger.Low) {
		low := webhook.CreditsLowData{AvailableCredits: l.AvailableCredits, ThresholdCredits: l.ThresholdCredits}
		s.svc.Webhooks.Emit(workspaceID, webhook.EventCreditsLow, low)
	}
	s.svc.API.RegisterWebhooks(s.svc.Webhooks)
	s.svc.Jobs.OnEvent(s.svc.Webhooks.Emit)
	s.svc.Workflows.OnEvent(s.svc.Webhooks.Emit)
	s.OnReset(s.svc.Webhooks.Reset)
}

// wireAudit makes the client audit when the configuration asks for it.
func (s *Server) wireAudit(st settled) {
	cfg, clk := st.cfg, st.clk
	if cfg.Audit {
		s.svc.Audit = audit.New(audit.Config{Clock: clk})
		s.OnReset(s.svc.Audit.Forget)
	}
}

// wireRoutes mounts the API, the files, the previews and (unless NoControl) the control API, and
// answers 404 in the envelope everywhere else.
func (s *Server) wireRoutes(st settled) {
	cfg, logger, clk, token := st.cfg, st.logger, st.clk, st.token
	s.mux.Handle(api.BasePath+"/", s.svc.API)
	s.mux.Handle(blob.FilesPath, s.svc.Blob.Handler())
	s.mux.Handle(blob.UploadPath, s.svc.Blob.Handler())
	s.mux.Handle(catalog.PreviewPath, s.svc.Catalog.PreviewHandler())
	if !cfg.NoControl {
		s.svc.Control = control.New(control.Deps{
			Clock: clk, Registry: s.svc.Registry, Limiter: s.svc.Limiter, Token: token,
			DefaultWorkspaceID: s.DefaultWorkspaceID, Reset: s.Reset, Faults: s.svc.Faults, Logger: logger,
		})
		s.svc.Control.RegisterWebhooks(s.svc.Webhooks)
		s.svc.Control.RegisterResolver(s.svc.Hosts)
		s.svc.Control.RegisterJobs(s.svc.Jobs)
		s.svc.Control.RegisterWorkflows(s.svc.Workflows)
		s.svc.Control.RegisterCatalog(s.svc.Catalog)
		s.svc.Control.RegisterAudit(s.svc.Audit)
		s.mux.Handle(control.BasePath+"/", s.svc.Control)
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		wire.Write(w, r, apierr.NotFound("No route "+r.Method+" "+r.URL.Path+"; the API lives under "+api.BasePath+"/."))
	}
	s.mux.HandleFunc("/", notFound)
	// Exact roots: answer 404 instead of ServeMux's redirect to the slash form.
	s.mux.HandleFunc(api.BasePath, notFound)
	s.mux.HandleFunc(control.BasePath, notFound)
}

// wireHandler wraps the routes in the middlewares the configuration asks for: answer validation,
// the audit, the request log.
func (s *Server) wireHandler(st settled) error {
	cfg, logger, clk, openAPI := st.cfg, st.logger, st.clk, st.openAPI
	s.handler = http.HandlerFunc(s.route)
	if cfg.ValidateResponses {
		doc, err := openAPI()
		if err != nil {
			return fmt.Errorf("mock: REST description: %w", err)
		}
		v, err := newValidator(doc, logger)
		if err != nil {
			return err
		}
		s.handler = v.wrap(s.mux)
	}
	if s.svc.Audit != nil {
		s.handler = auditMiddleware(s.svc.Audit, clk, s.auditCaller, s.handler)
	}
	if cfg.LogRequests {
		s.handler = reqlog.Middleware(logger, s.handler)
	}
	return nil
}

// auditCaller names the key a request presents, for the audit, without counting the request.
func (s *Server) auditCaller(r *http.Request) (keyID, workspaceID string) {
	secret, err := api.PresentedKey(r)
	if err != nil {
		return "", ""
	}
	ws, key, _, err := s.svc.Registry.Authenticate(secret)
	if err != nil {
		return "", ""
	}
	return key.KeyID, ws.ID()
}

// boot (re)builds the start state from the seed: the default workspace and its keys, then the
// further key sets (Config.KeySets), each made the same way after them.
func (s *Server) boot() {
	s.svc.IDs.Reseed(s.seed)
	s.svc.Registry.Reset()
	s.svc.Limiter.Reset()
	n := max(s.cfg.KeySets, 1)
	var st bootState
	for i := range n {
		name := ""
		if i > 0 {
			name = fmt.Sprintf(" %d", i+1)
		}
		ws := s.svc.Registry.Create(workspace.CreateParams{Name: "Default workspace" + name, Plan: workspace.PlanPro, Balance: s.cfg.Balance})
		_, gen, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{Name: "generate key" + name,
			Scopes: []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}})
		if err != nil {
			panic("mock: default generate key: " + err.Error()) // fixed valid params: cannot fail
		}
		_, read, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{Name: "read key" + name, Scopes: []workspace.Scope{workspace.ScopeRead}})
		if err != nil {
			panic("mock: default read key: " + err.Error())
		}
		other := s.svc.Registry.Create(workspace.CreateParams{Name: "Other workspace" + name, Plan: workspace.PlanPro, Balance: s.cfg.Balance})
		_, otherKey, err := s.svc.Registry.CreateKey(other, workspace.KeyParams{Name: "other key" + name,
			Scopes: []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}})
		if err != nil {
			panic("mock: second workspace key: " + err.Error())
		}
		if i == 0 {
			st = bootState{workspaceID: ws.ID(), generateKey: gen, readKey: read, otherKey: otherKey}
		}
		st.keySets = append(st.keySets, KeySet{GenerateKey: gen, ReadKey: read, OtherKey: otherKey})
		st.keySetWS = append(st.keySetWS, ws.ID())
	}
	if s.cfg.TestInputs {
		// Every key made so far, and only those, is a test key (the start state's keys).
		st.testKeys = map[string]bool{}
		for _, id := range s.svc.Registry.KeyIDs() {
			st.testKeys[id] = true
		}
	}
	if s.cfg.RoleKeys {
		st.roles, st.ownCatalog = s.bootRoles()
		longLists := s.svc.Registry.Create(workspace.CreateParams{Name: "Long lists workspace", Plan: workspace.PlanPro, Balance: s.cfg.Balance})
		var err error
		if _, st.roles.LongLists, err = s.svc.Registry.CreateKey(longLists, workspace.KeyParams{Name: "long lists key",
			Scopes: []workspace.Scope{workspace.ScopeRead}}); err != nil {
			panic("mock: long lists key: " + err.Error()) // fixed valid params: cannot fail
		}
		st.longLists = longLists.ID()
		for i, id := range st.keySetWS {
			ws, _ := s.svc.Registry.Get(id) // made above
			name := ""
			if i > 0 {
				name = fmt.Sprintf(" %d", i+1)
			}
			_, sib, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{Name: "sibling key" + name,
				Scopes: []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}})
			if err != nil {
				panic("mock: sibling key: " + err.Error())
			}
			st.roles.Siblings = append(st.roles.Siblings, sib)
		}
	}
	s.mu.Lock()
	s.start = st
	s.mu.Unlock()
}

// isTestKey reports whether keyID is a test key of the start state (Config.TestInputs).
func (s *Server) isTestKey(keyID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start.testKeys[keyID]
}

// bootRoles makes the role fixtures (Config.RoleKeys) and returns their keys, and the workspace of
// the own-catalogue key (bootCatalogRoles makes its actor and voice).
func (s *Server) bootRoles() (*RoleKeys, string) {
	rw := []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate}
	key := func(ws *workspace.Workspace, p workspace.KeyParams) (workspace.KeyInfo, string) {
		if len(p.Scopes) == 0 {
			p.Scopes = rw
		}
		info, secret, err := s.svc.Registry.CreateKey(ws, p)
		if err != nil {
			panic("mock: role key " + p.Name + ": " + err.Error()) // fixed valid params: cannot fail
		}
		return info, secret
	}
	r := &RoleKeys{BudgetCredits: RoleBudgetCredits}
	keys := s.svc.Registry.Create(workspace.CreateParams{Name: "Role keys workspace", Plan: workspace.PlanPro, Balance: s.cfg.Balance})
	revoked, secret := key(keys, workspace.KeyParams{Name: "revoked key"})
	if _, err := keys.UpdateKey(revoked.KeyID, workspace.KeyUpdate{Revoke: true}); err != nil {
		panic("mock: revoke the role key: " + err.Error())
	}
	r.Revoked = secret
	gone := s.svc.Clock.Now().Add(-time.Minute)
	_, r.Expired = key(keys, workspace.KeyParams{Name: "expired key", ExpiresAt: &gone})
	budget := RoleBudgetCredits
	create := func(name string, plan workspace.Plan, balance int64) *workspace.Workspace {
		return s.svc.Registry.Create(workspace.CreateParams{Name: name, Plan: plan, Balance: balance})
	}
	_, r.Budget = key(create("Budget key workspace", workspace.PlanPro, s.cfg.Balance),
		workspace.KeyParams{Name: "budget key", BudgetCredits: &budget})
	_, r.LowBalance = key(create("Low balance workspace", workspace.PlanPro, RoleLowBalance),
		workspace.KeyParams{Name: "low balance key"})
	_, r.NoAgentAPI = key(create("Free plan workspace", workspace.PlanFree, s.cfg.Balance),
		workspace.KeyParams{Name: "no agent API key"})
	_, r.GenerateOnly = key(create("Generate-only key workspace", workspace.PlanPro, s.cfg.Balance),
		workspace.KeyParams{Name: "generate-only key", Scopes: []workspace.Scope{workspace.ScopeGenerate}})
	deleted := s.svc.Registry.Create(workspace.CreateParams{Name: "Deleted workspace", Plan: workspace.PlanPro, Balance: s.cfg.Balance})
	_, r.DeletedWorkspace = key(deleted, workspace.KeyParams{Name: "key of a deleted workspace"})
	if err := s.svc.Registry.Delete(deleted.ID()); err != nil {
		panic("mock: delete the role workspace: " + err.Error())
	}
	none := int64(0)
	_, r.AllowanceUsed = key(keys, workspace.KeyParams{Name: "allowance used key", RequestAllowance: &none})
	_, r.Business = key(create("Business plan workspace", workspace.PlanBusiness, s.cfg.Balance),
		workspace.KeyParams{Name: "business key"})
	own := s.svc.Registry.Create(workspace.CreateParams{Name: "Own catalogue workspace", Plan: workspace.PlanPro, Balance: s.cfg.Balance})
	_, r.OwnCatalogue = key(own, workspace.KeyParams{Name: "own catalogue key"})
	s.bootLimitRoles(r)
	return r, own.ID()
}

// bootCatalogRoles makes the role fixtures of the catalogue (Config.RoleKeys), an actor and a
// cloned voice of the own-catalogue workspace, once the catalogue holds its start state, and adds
// their ids to the role keys.
func (s *Server) bootCatalogRoles() {
	s.mu.Lock()
	r, ws := s.start.roles, s.start.ownCatalog
	s.mu.Unlock()
	if r == nil {
		return
	}
	a, err := s.svc.Catalog.AddActor(catalog.ActorParams{WorkspaceID: ws, Name: "Own catalogue presenter", CreatedAt: s.svc.Clock.Now()})
	if err != nil {
		panic("mock: the own-catalogue actor: " + err.Error()) // fixed valid params: cannot fail
	}
	v, err := s.svc.Catalog.CloneVoice(ws, catalog.VoiceParams{Name: "Own catalogue cloned voice", Active: true})
	if err != nil {
		panic("mock: the own-catalogue cloned voice: " + err.Error())
	}
	processing, err := s.svc.Catalog.AddActor(catalog.ActorParams{WorkspaceID: ws, Name: "Own catalogue presenter in processing",
		State: "processing", CreatedAt: s.svc.Clock.Now()})
	if err != nil {
		panic("mock: the own-catalogue processing actor: " + err.Error())
	}
	disabled, err := s.svc.Catalog.AddActor(catalog.ActorParams{WorkspaceID: ws, Name: "Own catalogue presenter disabled",
		State: "disabled", CreatedAt: s.svc.Clock.Now()})
	if err != nil {
		panic("mock: the own-catalogue disabled actor: " + err.Error())
	}
	off, err := s.svc.Catalog.CloneVoice(ws, catalog.VoiceParams{Name: "Own catalogue deactivated voice", Active: false})
	if err != nil {
		panic("mock: the own-catalogue deactivated voice: " + err.Error())
	}
	s.mu.Lock()
	s.start.roles.OwnActor, s.start.roles.OwnClonedVoice = a.ID, v.ID
	s.start.roles.OwnProcessingActor, s.start.roles.OwnDisabledActor, s.start.roles.OwnDeactivatedVoice = processing.ID, disabled.ID, off.ID
	keySetWS, longLists := slices.Clone(s.start.keySetWS), s.start.longLists
	s.mu.Unlock()
	for _, w := range keySetWS {
		if _, err := s.svc.Catalog.CopyCapability(w, comingSoonSource, RoleComingSoonPreset); err != nil {
			panic("mock: the coming_soon preset: " + err.Error())
		}
	}
	s.bootLongLists(longLists)
}

// bootLongLists fills the long-lists workspace (RoleKeys.LongLists): LongListCopies copies of the
// listed presets, in turn, LongListVoices cloned voices and LongListAssets uploaded images.
func (s *Server) bootLongLists(ws string) {
	s.bootLongListAssets(ws)
	var presets []string
	for _, c := range s.svc.Catalog.Fixtures().Capabilities {
		if c.IsPreset() && c.Listed() {
			presets = append(presets, c.ID)
		}
	}
	if len(presets) == 0 {
		return
	}
	for i := range LongListCopies {
		if _, err := s.svc.Catalog.CopyCapability(ws, presets[i%len(presets)], fmt.Sprintf("preset_long_list_%02d", i+1)); err != nil {
			panic("mock: a long-list preset copy: " + err.Error()) // fixed valid params: cannot fail
		}
	}
	for i := range LongListVoices {
		voice := catalog.VoiceParams{Name: fmt.Sprintf("Long list cloned voice %02d", i+1), Active: true}
		if _, err := s.svc.Catalog.CloneVoice(ws, voice); err != nil {
			panic("mock: a long-list cloned voice: " + err.Error())
		}
	}
}

// bootSavedWorkflows saves a workflow in each key set's first workspace (RoleKeys.SavedWorkflows),
// once the workflow engine holds its start state: two tts steps of the catalogue's example
// script, the second after the first with a longer one (so the two prices differ).
func (s *Server) bootSavedWorkflows() {
	s.mu.Lock()
	r, keySetWS := s.start.roles, slices.Clone(s.start.keySetWS)
	s.mu.Unlock()
	if r == nil {
		return
	}
	tts, ok := s.svc.Catalog.Fixtures().Capability("tts")
	if !ok {
		return
	}
	voice := ""
	for _, v := range s.svc.Catalog.Fixtures().Voices {
		if v.Active && v.WorkspaceID == nil {
			voice = v.ID
			break
		}
	}
	script, _ := tts.ExampleConfig["script"].(string)
	node := func(id, text string, deps ...string) fixtures.WorkflowNode {
		cfg := map[string]fixtures.Binding{}
		for k, v := range tts.ExampleConfig {
			cfg[k] = fixtures.Binding{Value: v}
		}
		cfg["script"] = fixtures.Binding{Value: text}
		n := fixtures.WorkflowNode{ID: id, Label: id, CapabilityID: tts.ID, DependsOn: append([]string{}, deps...), Config: cfg}
		if voice != "" {
			n.Body = map[string]fixtures.Binding{"voice_id": {Value: voice}}
		}
		return n
	}
	var ids []string
	for i, ws := range keySetWS {
		saved, err := s.svc.Workflows.Save(ws, workflows.SaveParams{
			Name: fmt.Sprintf("Saved workflow %d", i+1),
			Nodes: []fixtures.WorkflowNode{node("voice", script),
				node("voice_two", script+" And a second, longer line for a second price.", "voice")},
			InputsSchema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
		})
		if err != nil {
			panic("mock: a saved workflow: " + err.Error()) // fixed valid params: cannot fail
		}
		ids = append(ids, saved.WorkflowID)
	}
	s.mu.Lock()
	s.start.roles.SavedWorkflows = ids
	s.mu.Unlock()
}

// comingSoonSource is the available preset RoleComingSoonPreset copies.
const comingSoonSource = "preset_ugc_screenshot"

// Reset restores the start state: every workspace, key and bucket is
// forgotten, and the default workspace and the printed keys are made again
// (identical, from the same seed). The clock is not moved back. Reset hooks
// run afterwards.
func (s *Server) Reset() {
	s.boot()
	s.mu.Lock()
	hooks := append([]func(){}, s.resetHooks...)
	s.mu.Unlock()
	for _, h := range hooks {
		h()
	}
}

// OnReset registers f to run after every Reset (for state kept outside the
// registry, such as jobs or webhooks).
func (s *Server) OnReset(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetHooks = append(s.resetHooks, f)
}

// DefaultWorkspaceID returns the default workspace's id.
func (s *Server) DefaultWorkspaceID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start.workspaceID
}

// route hands a request under /api/v1/ with a clean path straight to the API router, which is
// where the top-level mux sends it (one route match fewer on every API call). A path that is not
// in clean form (a `.` or `..` segment, a doubled slash) or a CONNECT is answered 404 not_found in
// the envelope here: the mux would answer it with a redirect in HTML, an answer outside the
// envelope and the REST description (issue 24). Everything else goes through the mux.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if r.Method == http.MethodConnect || !strings.HasPrefix(p, "/") || !cleanPath(p) {
		wire.Write(w, r, apierr.NotFound("No route "+r.Method+" "+r.URL.EscapedPath()+
			"; paths are served only in clean form (no . or .. segment, no doubled slash) under "+api.BasePath+"/."))
		return
	}
	if r.URL.RawPath == "" && strings.HasPrefix(p, api.BasePath+"/") {
		s.svc.API.ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// cleanPath reports whether http.ServeMux would serve p as it is (no redirect to a cleaned path).
func cleanPath(p string) bool {
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		return len(p) == len(np)+1 && strings.HasPrefix(p, np)
	}
	return np == p
}

// ServeHTTP serves /api/v1, /_control/v1 (unless disabled) and a 404
// not_found envelope for everything else. No answer carries CORS headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// SetPublicURL sets the scheme and host printed and written into links
// (e.g. an httptest server's URL). Config.PublicURL, when set, wins.
func (s *Server) SetPublicURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.PublicURL == "" {
		s.publicURL = strings.TrimRight(u, "/")
	}
}

// PublicURL returns the scheme and host of the service.
func (s *Server) PublicURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publicURLLocked()
}

func (s *Server) publicURLLocked() string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	if s.publicURL != "" {
		return s.publicURL
	}
	addr := s.cfg.Addr
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	return "http://" + addr
}

// Info returns what `mediaspec mock` prints.
func (s *Server) Info() StartInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := s.publicURLLocked()
	i := StartInfo{
		BaseURL: base + api.BasePath, GenerateKey: s.start.generateKey, ReadKey: s.start.readKey, OtherKey: s.start.otherKey,
		Balance: s.cfg.Balance, DefaultWorkspaceID: s.start.workspaceID, Seed: s.seed,
		TimeScale: s.svc.Clock.Scale(),
	}
	if len(s.start.keySets) > 1 {
		i.KeySets = append([]KeySet(nil), s.start.keySets...)
	}
	if r := s.start.roles; r != nil {
		c := *r
		c.Siblings = append([]string(nil), r.Siblings...)
		i.Roles = &c
	}
	if !s.cfg.NoControl {
		i.ControlURL = base + control.BasePath
		i.ControlToken = s.token
	}
	return i
}

// Close stops everything the server runs besides answering: the webhook workers (attempts in
// flight are cancelled, pending retries dropped) and the clock's scheduler (every pending timer of
// jobs, workflows, links and uploads is dropped unfired; an injected clock is stopped too). Parked
// waits answer at once. Close does not close listeners (Serve does, when its context ends); it is
// safe to call more than once, and the server must not serve afterwards.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.drainNow()
		s.svc.Webhooks.Close()
		s.svc.Clock.Stop()
		s.svc.Blob.Close()
	})
}

// Serve answers on ln until ctx is done, then drains: it stops accepting, answers every parked
// wait at once (200, still_running true), lets requests in flight finish within
// Limits.ShutdownGrace and then closes what is left. Timeouts and the connection cap come from
// Config.Limits. Without Config.PublicURL the public URL becomes http://<ln addr>. It returns nil
// after a shutdown caused by ctx (also when the grace ran out: that is logged). Serve does not
// call Close.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.SetPublicURL("http://" + ln.Addr().String())
	lim := s.cfg.Limits
	hs := &http.Server{
		Handler:           s.limitIO(s.boundHandlers(s)),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		// OPTIONS * goes to the handler (404 not_found in the envelope), not to net/http's empty 200.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(s.svc.Logger.Handler(), slog.LevelWarn),
		// The bound closes a cut handler's connection: it finds it here.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
	capped := limitListener(ln, lim.MaxConns, lim.MaxHeaderBytes)
	hs.ConnState = capped.ConnState
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(capped) }()
	if s.cfg.Fixtures == nil {
		// Read the embedded catalogue while the first requests come in (the probes do not need
		// it); a request that needs it first waits for this read rather than starting its own.
		go func() { _, _ = fixtures.Shared() }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		s.drainNow()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.ShutdownGrace)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			s.svc.Logger.Warn("mock: shutdown grace ran out; closing the connections still open", "grace", lim.ShutdownGrace.String(), "err", err)
			_ = hs.Close()
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
