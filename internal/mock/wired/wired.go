// Package wired names the services a mock.Server wires together, for the module's own tests that
// drive one of them directly on a whole mock (queue a fault, fail a job, create a workspace without
// the control API). Package mock keeps them unexported, so its users see behaviour (the HTTP
// handler, Info, Reset, the audit's verdict), not the mock's internal types; it hands them here
// through Register, and a test reaches them with Of.
package wired

import (
	"log/slog"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/api"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/control"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/workflows"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// Services are the shared services of one mock, set by mock.New and never replaced.
type Services struct {
	// Clock is the mock's only source of time.
	Clock clock.Clock
	// IDs makes every id the mock hands out (seeded: the same run gives the same ids).
	IDs *ids.Source
	// Registry holds workspaces and their keys, wallets and limits.
	Registry *workspace.Registry
	// Limiter keeps the per-key rate-limit buckets.
	Limiter *ratelimit.Limiter
	// API is the /api/v1 router.
	API *api.Router
	// Control is the control API (nil with Config.NoControl).
	Control *control.Handler
	// Catalog serves capabilities, presets, actors, voices and estimates.
	Catalog *catalog.Catalog
	// Faults is the queue of injected faults (control API /faults).
	Faults *faults.Store
	// Blob holds the bytes of outputs and uploads and serves their signed links (/files/ and
	// /upload-slots/ on the same listener).
	Blob *blob.Store
	// Assets is the asset registry uploads and outputs share (GET /assets).
	Assets *assets.Registry
	// Uploads reserves, finalizes and imports uploads; it is the catalogue's AssetLookup.
	Uploads *uploads.Service
	// Webhooks holds webhook endpoints and sends their signed deliveries; Webhooks.Emit(workspaceID,
	// eventType, data) fans an event out to the workspace's subscribed endpoints.
	Webhooks *webhook.Service
	// Hosts is the resolver of every outbound call (webhook and from-url hosts): the control API's
	// overrides (PUT /_control/v1/resolver/{host}) in front of the system resolver.
	Hosts *netguard.Hosts
	// Jobs is the generations engine (POST /generations, reads, batches; control
	// cancel/fail/recover); its OnEvent feeds Webhooks.
	Jobs *jobs.Store
	// Workflows runs workflow templates and saved workflows (invokes, runs, control save/cancel);
	// its steps are Jobs generations and its events go to Webhooks.
	Workflows *workflows.Engine
	// Audit records the client's breaches of its duties (nil unless Config.Audit).
	Audit *audit.Auditor
	// Logger is the mock's logger (the request log and what the services report).
	Logger *slog.Logger
}

// of is package mock's accessor, set once by Register when package mock initializes.
var of func(server any) *Services

// Register is called by package mock, once as it initializes, with the function that returns a
// *mock.Server's services.
func Register(f func(server any) *Services) { of = f }

// Of returns the services of server, a *mock.Server (it panics on anything else).
func Of(server any) *Services { return of(server) }
