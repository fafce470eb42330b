// Package catalog serves the capability catalogue (package fixtures) the way
// the agent API shows it: capabilities, presets and templates, actors and
// voices, visible by workspace and plan and paged; the lookups a request's
// checks read (Runnable, CheckConfig, CheckResources, PlanAllows); and the
// pricing of a config (Price, Quote, NewEstimate). Which checks run, in
// which order, and what a refusal says is package admission's.
//
// Domain errors are *apierr.Error values (capability_unavailable,
// required_plan, not_found, invalid_config, input_not_ready); the HTTP layer
// (package api) renders them. A *Catalog is safe for concurrent use. What
// the control API changes on top of the fixtures (prices withdrawn,
// capabilities withheld, deprecated aliases, templates, voices and actors
// added: state.go) is guarded by its own lock and read by every answer
// after the change; the fixtures themselves are never changed. The lookups
// it is given (AssetLookup, VoiceGenerationLookup) must be safe for
// concurrent use too.
package catalog

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"slices"
	"strings"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
)

// Page sizes of the lists (interface spec "Limits").
const (
	DefaultLimit   = contract.PageSizeDefault
	MaxLimit       = contract.PageSizeMax
	MaxActorsPage  = contract.ActorsPageMax
	PresetPreviewN = 20 // templates carried on a preset row
)

// Viewer is the workspace a list or estimate is answered for.
type Viewer struct {
	WorkspaceID string
	Plan        fixtures.Plan
}

// Deps are what a Catalog serves from.
type Deps struct {
	// Fixtures is the loaded catalogue; nil: the embedded one (fixtures.Shared), read when a
	// request first needs it, so a mock answers its probes before paying for it.
	Fixtures *fixtures.Catalog
	// DefaultWorkspaceID reports the mock's default workspace: the owner of
	// what the fixtures' workspace (workspace.yaml) owns (own actors, cloned
	// voices). nil: the fixtures' workspace id itself.
	DefaultWorkspaceID func() string
	// Assets finds uploads named in a config; nil: every upload is unknown.
	Assets AssetLookup
	// VoiceGenerations finds approved tts generations; nil: every one is unknown (until
	// UseVoiceGenerations names the jobs store, which is built after the catalogue).
	VoiceGenerations VoiceGenerationLookup
	// PreviewBase, when set, reports the scheme and host the mock serves
	// template previews on (PreviewHandler at PreviewPath): every
	// preview_url then names the mock itself, so it can be fetched. nil:
	// preview_url is the fixtures' link as written (an unreachable host).
	PreviewBase func() string
	// IDs makes the ids of templates, voices and actors added through control; nil: ids from
	// the time (tests).
	IDs *ids.Source
	// APIVersion is the service version (info.version) deprecated aliases are judged against
	// (Versioning 6); "" accepts every alias.
	APIVersion string
}

// Catalog is the served catalogue.
type Catalog struct {
	d  Deps
	st state // what control changed on top of the fixtures
}

// New returns a catalog over d.
func New(d Deps) *Catalog {
	c := &Catalog{d: d}
	c.st = newState(c.Fixtures)
	return c
}

// UseVoiceGenerations sets Deps.VoiceGenerations. The jobs store answers those lookups and is
// built over the catalogue, so it is named here once it exists; call it before serving (it is not
// safe concurrently with estimates).
func (c *Catalog) UseVoiceGenerations(l VoiceGenerationLookup) { c.d.VoiceGenerations = l }

// Fixtures returns the underlying catalogue (read-only). Without Deps.Fixtures the first call
// reads the embedded one (safe concurrently: the others wait for it); it panics if that does not
// load, which the fixtures package's own tests rule out for every build.
func (c *Catalog) Fixtures() *fixtures.Catalog {
	if c.d.Fixtures != nil {
		return c.d.Fixtures
	}
	fx, err := fixtures.Shared()
	if err != nil {
		panic("catalog: the embedded catalogue: " + err.Error())
	}
	return fx
}

// owns reports whether the viewer's workspace owns something the fixtures
// assign to fixturesWorkspaceID.
func (c *Catalog) owns(v Viewer, fixturesWorkspaceID *string) bool {
	if fixturesWorkspaceID == nil {
		return false
	}
	id := *fixturesWorkspaceID
	if id == c.Fixtures().Workspace.ID && c.d.DefaultWorkspaceID != nil {
		id = c.d.DefaultWorkspaceID()
	}
	return id == v.WorkspaceID
}

// CapabilityRow is a capability list row (openapi CapabilityRow).
type CapabilityRow struct {
	CapabilityID string  `json:"capability_id"`
	Name         string  `json:"name"`
	Description  *string `json:"description"`
	Category     string  `json:"category"`
	OutputKind   string  `json:"output_kind"`
	Status       string  `json:"status"`
	RequiredPlan string  `json:"required_plan,omitempty"`
	MaxVariants  int     `json:"max_variants"`
	PricingUnit  string  `json:"pricing_unit"`
}

// StatusFor is the capability's status as the viewer sees it: a
// requires_plan capability reads available for a workspace whose plan
// covers it (rule CAP-030).
func StatusFor(cp *fixtures.Capability, v Viewer) fixtures.Status {
	if cp.Status == fixtures.StatusRequiresPlan && v.Plan.Covers(cp.RequiredPlan) {
		return fixtures.StatusAvailable
	}
	return cp.Status
}

func rowOf(cp *fixtures.Capability, v Viewer) CapabilityRow {
	st := StatusFor(cp, v)
	r := CapabilityRow{
		CapabilityID: cp.ID, Name: cp.Name, Description: cp.Description, Category: string(cp.Category),
		OutputKind: string(cp.OutputKind), Status: string(st), MaxVariants: cp.MaxVariants,
		PricingUnit: string(cp.Pricing.Unit),
	}
	if st == fixtures.StatusRequiresPlan {
		r.RequiredPlan = string(cp.RequiredPlan)
	}
	return r
}

// pageAfter returns up to limit items after the one whose key is cursor
// (from the start when cursor names none) and the next cursor ("" at the
// end).
func pageAfter[T any](items []T, key func(T) string, limit int, cursor string) ([]T, string) {
	start := 0
	if cursor != "" {
		if i := slices.IndexFunc(items, func(it T) bool { return key(it) == cursor }); i >= 0 {
			start = i + 1
		}
	}
	end := min(start+limit, len(items))
	page := items[start:end]
	next := ""
	if end < len(items) && len(page) > 0 {
		next = key(page[len(page)-1])
	}
	return page, next
}

// ClampLimit bounds a page size the HTTP layer has read (wire.QueryLimit, or
// wire.QueryLimitClamped where the text says "clamped 1 to 50"): a
// non-positive limit means DefaultLimit; above MaxLimit is clamped.
func ClampLimit(limit int) int {
	if limit <= 0 {
		return DefaultLimit
	}
	return min(limit, MaxLimit)
}

// ListCapabilities answers one page of GET /capabilities: listed
// capabilities (offered, not retired) and the viewer's copies (copies.go) in list order; cursor is the previous
// page's last capability_id (trimmed by the caller; one naming no listed
// capability restarts from the first page). next is "" on the last page.
func (c *Catalog) ListCapabilities(v Viewer, limit int, cursor string) (rows []CapabilityRow, next string) {
	all := c.withCopies(v.WorkspaceID, c.listed(c.Fixtures().ListedCapabilities()), nil)
	page, next := pageAfter(all, func(cp *fixtures.Capability) string { return cp.ID }, ClampLimit(limit), cursor)
	rows = make([]CapabilityRow, len(page))
	for i, cp := range page {
		rows[i] = rowOf(cp, v)
	}
	return rows, next
}

// CapabilityDetail is the answer of GET /capabilities/{id} without ok.
type CapabilityDetail struct {
	CapabilityRow
	ConfigSchema  map[string]any `json:"config_schema"`
	ExampleConfig map[string]any `json:"example_config"`
	NextAction    string         `json:"next_action"`
}

// readable answers the availability of capability id for reading its detail: 404
// capability_unavailable (unknown or not offered, retired, coming_soon) or 403 required_plan. A
// catalogue status unknown is readable.
func (c *Catalog) readable(id string, v Viewer) (*fixtures.Capability, error) {
	cp, err := c.offered(id)
	if err != nil {
		return nil, err
	}
	if err := PlanAllows(cp, v); err != nil {
		return nil, err
	}
	return cp, nil
}

// offered returns capability id when it is in the catalogue, offered to agents, and neither
// retired nor coming soon; otherwise 404 capability_unavailable naming its status.
func (c *Catalog) offered(id string) (*fixtures.Capability, error) {
	cp, ok := c.Fixtures().Capability(id)
	if ok {
		cp = c.view(cp)
	}
	if !ok || !cp.OfferedToAgents {
		return nil, apierr.CapabilityUnavailable(string(fixtures.StatusUnknown), "No capability "+quote(id)+" is offered; read GET /capabilities for the current ids.")
	}
	switch cp.Status {
	case fixtures.StatusRetired:
		return nil, apierr.CapabilityUnavailable(string(fixtures.StatusRetired), "Capability "+id+" is retired; pick another from GET /capabilities.")
	case fixtures.StatusComingSoon:
		return nil, apierr.CapabilityUnavailable(string(fixtures.StatusComingSoon), "Capability "+id+" is coming soon and cannot be used yet.")
	}
	return cp, nil
}

// Capability answers GET /capabilities/{id}: 404 capability_unavailable
// with capability_status unknown (not in the catalogue or not offered to
// agents), retired or coming_soon; 403 required_plan (capability_status
// requires_plan) when the viewer's plan is too low. A capability whose
// catalogue status is unknown answers its detail.
func (c *Catalog) Capability(v Viewer, id string) (CapabilityDetail, error) {
	if _, ok := c.copyOf(v.WorkspaceID, id); ok {
		return CapabilityDetail{}, apierr.CapabilityUnavailable(string(fixtures.StatusComingSoon), "Capability "+id+" is coming soon and cannot be used yet.")
	}
	cp, err := c.readable(id, v)
	if err != nil {
		return CapabilityDetail{}, err
	}
	d := CapabilityDetail{CapabilityRow: rowOf(cp, v), ConfigSchema: cp.ConfigSchema, ExampleConfig: cp.ExampleConfig}
	switch {
	case cp.Status == fixtures.StatusUnknown:
		d.NextAction = "This capability's status could not be determined, so it cannot be estimated or run now; pick another from GET /capabilities."
	case cp.IsPreset() && cp.RequiresTemplate:
		d.NextAction = "Read the templates with GET /presets/" + cp.ID + "/templates, then POST /estimates with config.template_id and submit with max_credits set to max_credits_needed."
	default:
		d.NextAction = "Build a config from config_schema (example_config is the smallest valid one), POST /estimates, then POST /generations with max_credits set to max_credits_needed."
	}
	return d, nil
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}
