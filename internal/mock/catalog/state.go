package catalog

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Catalogue state the control API changes (package control, spec/control.yaml tag catalogue): a
// capability's published price withdrawn, deprecated config aliases, templates withdrawn or added,
// voices deactivated or cloned, actors processing, disabled or added. The fixtures stay read-only;
// these overrides sit on top of them until Reset.

// Alias is a deprecated config property name installed on a capability (interface Versioning 6):
// Name is the old name, Field the property it was renamed to, StopsIn the version that stops
// accepting Name (a name renamed in 1.2.0 is accepted in 1.2.x; 1.3.0 stops).
type Alias struct {
	Name    string
	Field   string
	StopsIn string
}

// state holds the overrides. mu guards every field; the *fixtures values it holds are its own
// (made through control), never the fixtures' own, and are not changed once stored except under mu.
type state struct {
	mu       sync.RWMutex
	unpriced map[string]bool             // capability id -> no published price
	withheld map[string]bool             // capability id -> not offered to agents
	aliases  map[string]map[string]Alias // capability id -> alias name -> alias

	templates overlay[fixtures.Template, bool] // templates added; live set per id
	voices    overlay[fixtures.Voice, bool]    // voices cloned; active set per id
	actors    overlay[fixtures.Actor, string]  // actors added; state set per id

	copies  map[string][]*fixtures.Capability // workspace id -> capability copies, in list order (copies.go)
	removed map[string]map[string][]string    // capability id -> config property -> enum values removed (enums.go)
}

func (s *state) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unpriced, s.withheld, s.aliases = nil, nil, nil
	s.templates, s.voices, s.actors = s.templates.empty(), s.voices.empty(), s.actors.empty()
	s.copies, s.removed = nil, nil
}

// overlay is one kind of catalogue item (templates, voices, actors) as control changes it on top
// of the fixtures: the items made through control, and one field of any item set per id. The
// fixtures' items are never changed: an item whose field is set is served as a copy carrying it.
// state.mu guards it.
type overlay[T any, V comparable] struct {
	base  func(id string) (*T, bool) // the fixtures' lookup
	id    func(*T) string
	field func(*T) *V // the field control sets
	added []*T        // made through control, in creation order
	set   map[string]V
}

// empty is o without anything made or set through control.
func (o overlay[T, V]) empty() overlay[T, V] {
	o.added, o.set = nil, nil
	return o
}

// get returns item id (the fixtures' or made through control) as served now.
func (o *overlay[T, V]) get(id string) (*T, bool) {
	t, ok := o.base(id)
	if !ok {
		i := slices.IndexFunc(o.added, func(x *T) bool { return o.id(x) == id })
		if i < 0 {
			return nil, false
		}
		t = o.added[i]
	}
	if v, set := o.set[id]; set && v != *o.field(t) {
		cp := *t
		*o.field(&cp) = v
		t = &cp
	}
	return t, true
}

// all returns every item as served now: the fixtures' (fixtures, in their order), then the ones
// made through control.
func (o *overlay[T, V]) all(fixtures []*T) []*T {
	out := make([]*T, 0, len(fixtures)+len(o.added))
	for _, list := range [][]*T{fixtures, o.added} {
		for _, t := range list {
			v, _ := o.get(o.id(t))
			out = append(out, v)
		}
	}
	return out
}

// put sets item id's field to v: 404 not_found (message notFound) when there is no such item. It
// returns the item as served after the change.
func (o *overlay[T, V]) put(id string, v V, notFound string) (*T, error) {
	if _, ok := o.get(id); !ok {
		return nil, apierr.NotFound(notFound)
	}
	if o.set == nil {
		o.set = map[string]V{}
	}
	o.set[id] = v
	t, _ := o.get(id)
	return t, nil
}

// newState is the state of a catalogue over fx (called when an entry is first looked up):
// nothing changed yet.
func newState(fx func() *fixtures.Catalog) state {
	return state{
		templates: overlay[fixtures.Template, bool]{base: func(id string) (*fixtures.Template, bool) { return fx().Template(id) },
			id: func(t *fixtures.Template) string { return t.ID }, field: func(t *fixtures.Template) *bool { return &t.Live }},
		voices: overlay[fixtures.Voice, bool]{base: func(id string) (*fixtures.Voice, bool) { return fx().Voice(id) },
			id: func(v *fixtures.Voice) string { return v.ID }, field: func(v *fixtures.Voice) *bool { return &v.Active }},
		actors: overlay[fixtures.Actor, string]{base: func(id string) (*fixtures.Actor, bool) { return fx().Actor(id) },
			id: func(a *fixtures.Actor) string { return a.ID }, field: func(a *fixtures.Actor) *string { return &a.State }},
	}
}

// Reset drops every change made through control: the catalogue is the fixtures again.
func (c *Catalog) Reset() { c.st.reset() }

func (c *Catalog) newID(prefix string) string {
	if c.d.IDs != nil {
		return c.d.IDs.ID(prefix)
	}
	return prefix + fmt.Sprintf("%032x", time.Now().UnixNano())
}

// apiVersion is the version aliases are judged against.
func (c *Catalog) apiVersion() string { return c.d.APIVersion }

// NextMinor returns the version after v's minor series ("1.2.0" -> "1.3.0"): where a name renamed
// in v stops being accepted.
func NextMinor(v string) string {
	p := strings.Split(v, ".")
	maj, _ := strconv.Atoi(p[0])
	minor := 0
	if len(p) > 1 {
		minor, _ = strconv.Atoi(p[1])
	}
	return fmt.Sprintf("%d.%d.0", maj, minor+1)
}

// AliasAccepted reports whether a is still accepted by this service version.
func (c *Catalog) AliasAccepted(a Alias) bool {
	return c.apiVersion() == "" || contract.CompareVersions(c.apiVersion(), a.StopsIn) < 0
}

// activeAliases returns cp's accepted aliases sorted by name; mu held (read).
func (c *Catalog) activeAliasesLocked(id string) []Alias {
	var out []Alias
	for _, a := range c.st.aliases[id] {
		if c.AliasAccepted(a) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y Alias) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// view returns cp as the catalogue now serves it: the fixtures' capability, or a copy carrying the
// overrides (no published price; a config_schema listing the accepted deprecated aliases).
func (c *Catalog) view(cp *fixtures.Capability) *fixtures.Capability {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	unpriced, withheld := c.st.unpriced[cp.ID], c.st.withheld[cp.ID]
	aliases := c.activeAliasesLocked(cp.ID)
	removed := c.st.removed[cp.ID]
	if !unpriced && !withheld && len(aliases) == 0 && len(removed) == 0 {
		return cp
	}
	v := *cp
	if withheld {
		v.OfferedToAgents = false
	}
	if unpriced {
		v.Pricing.NotPriced = true
	}
	if len(aliases) > 0 {
		v.ConfigSchema = schemaWithAliases(cp.ConfigSchema, aliases)
	}
	if len(removed) > 0 {
		v.ConfigSchema = schemaWithoutValues(v.ConfigSchema, removed)
	}
	return &v
}

// schemaWithAliases copies schema with each alias listed as an optional property: the renamed
// field's schema without its default, marked deprecated, its description naming the new field and
// the version that stops accepting the old name (Versioning 6).
func schemaWithAliases(schema map[string]any, aliases []Alias) map[string]any {
	out := maps.Clone(schema)
	props, _ := schema["properties"].(map[string]any)
	props = maps.Clone(props)
	for _, a := range aliases {
		p, _ := props[a.Field].(map[string]any)
		p = maps.Clone(p)
		if p == nil {
			p = map[string]any{}
		}
		delete(p, "default")
		p["deprecated"] = true
		p["description"] = fmt.Sprintf("Deprecated: renamed to %s. Send %s instead; %s stops accepting %s.", a.Field, a.Field, a.StopsIn, a.Name)
		props[a.Name] = p
	}
	out["properties"] = props
	return out
}

// Normalize renames the accepted deprecated aliases of cp in config to their new names (a copy;
// config itself is not changed), so that pricing, validation and deduplication see the new name. A
// config sending an old name and its new name together is 400 invalid_config naming both.
func (c *Catalog) Normalize(cp *fixtures.Capability, config map[string]any) (map[string]any, error) {
	c.st.mu.RLock()
	aliases := c.activeAliasesLocked(cp.ID)
	c.st.mu.RUnlock()
	out, copied := config, false
	for _, a := range aliases {
		v, has := config[a.Name]
		if !has {
			continue
		}
		if _, both := config[a.Field]; both {
			return config, apierr.InvalidConfigFields([]string{"config." + a.Name, "config." + a.Field},
				fmt.Sprintf("config.%s is the deprecated name of config.%s; send one of them, not both.", a.Name, a.Field))
		}
		if !copied {
			out, copied = maps.Clone(config), true
		}
		delete(out, a.Name)
		out[a.Field] = v
	}
	return out, nil
}

// SetPriced publishes (priced true) or withdraws (false) capability id's price. A capability the
// fixtures leave unpriced has no price model to publish: 400 invalid_config naming priced.
func (c *Catalog) SetPriced(id string, priced bool) error {
	cp, ok := c.Fixtures().Capability(id)
	if !ok {
		return apierr.NotFound("No capability " + quote(id) + ".")
	}
	if priced && cp.Pricing.NotPriced {
		return apierr.InvalidConfig("priced", "Capability "+id+" has no price model the mock could publish; it stays unpriced.")
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if priced {
		delete(c.st.unpriced, id)
		return nil
	}
	if c.st.unpriced == nil {
		c.st.unpriced = map[string]bool{}
	}
	c.st.unpriced[id] = true
	return nil
}

// SetOffered withholds capability id from agents (offered false: it leaves the lists, and reading,
// estimating or running it answers 404 capability_unavailable with capability_status unknown) or
// offers it again (true; a capability the fixtures withhold stays withheld).
func (c *Catalog) SetOffered(id string, offered bool) error {
	if _, ok := c.Fixtures().Capability(id); !ok {
		return apierr.NotFound("No capability " + quote(id) + ".")
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if offered {
		delete(c.st.withheld, id)
		return nil
	}
	if c.st.withheld == nil {
		c.st.withheld = map[string]bool{}
	}
	c.st.withheld[id] = true
	return nil
}

// Offered reports whether capability id is offered to agents now.
func (c *Catalog) Offered(id string) bool {
	cp, ok := c.Fixtures().Capability(id)
	return ok && c.view(cp).OfferedToAgents
}

// listed filters the fixtures' listed capabilities by what control withheld.
func (c *Catalog) listed(cps []*fixtures.Capability) []*fixtures.Capability {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	if len(c.st.withheld) == 0 {
		return cps
	}
	var out []*fixtures.Capability
	for _, cp := range cps {
		if !c.st.withheld[cp.ID] {
			out = append(out, cp)
		}
	}
	return out
}

// Priced reports whether capability id has a published price now.
func (c *Catalog) Priced(id string) bool {
	cp, ok := c.Fixtures().Capability(id)
	return ok && !c.view(cp).Pricing.NotPriced
}

// Aliases lists capability id's installed aliases (accepted or not), sorted by name.
func (c *Catalog) Aliases(id string) []Alias {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	out := slices.Collect(maps.Values(c.st.aliases[id]))
	slices.SortFunc(out, func(x, y Alias) int { return strings.Compare(x.Name, y.Name) })
	return out
}

var aliasNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`) })
var versionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}$`) })

// SetAlias installs (or replaces) alias a.Name on capability id for the property a.Field; an
// empty a.StopsIn means the minor version after this one (a rename made now). Refusals (400
// invalid_config naming the body field): a name that is not a property name or is already a
// property; a field that is not an optional property of the schema. 404 not_found for an unknown
// capability.
func (c *Catalog) SetAlias(id string, a Alias) (Alias, error) {
	cp, ok := c.Fixtures().Capability(id)
	if !ok {
		return Alias{}, apierr.NotFound("No capability " + quote(id) + ".")
	}
	props, _ := cp.ConfigSchema["properties"].(map[string]any)
	required, _ := cp.ConfigSchema["required"].([]any)
	switch {
	case !aliasNameRe().MatchString(a.Name):
		return Alias{}, apierr.InvalidConfig("alias", "The alias must be a property name: a letter, then letters, digits or _ (at most 64).")
	case props[a.Name] != nil:
		return Alias{}, apierr.InvalidConfig("alias", a.Name+" is already a property of "+id+"'s config_schema.")
	case a.Field == "":
		return Alias{}, apierr.InvalidConfig("field", "field is required: the property the alias was renamed to.")
	case props[a.Field] == nil:
		return Alias{}, apierr.InvalidConfig("field", a.Field+" is not a property of "+id+"'s config_schema.")
	case slices.Contains(required, any(a.Field)):
		return Alias{}, apierr.InvalidConfig("field", a.Field+" is required by "+id+"; the mock installs aliases on optional properties only.")
	case a.StopsIn != "" && !versionRe().MatchString(a.StopsIn):
		return Alias{}, apierr.InvalidConfig("stops_in", "stops_in must be a version MAJOR.MINOR.PATCH, such as 1.3.0.")
	}
	if a.StopsIn == "" {
		a.StopsIn = NextMinor(c.apiVersion())
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for _, other := range c.st.aliases[id] {
		if other.Name != a.Name && other.Field == a.Field {
			return Alias{}, apierr.InvalidConfig("field", a.Field+" already has the alias "+other.Name+".")
		}
	}
	if c.st.aliases == nil {
		c.st.aliases = map[string]map[string]Alias{}
	}
	if c.st.aliases[id] == nil {
		c.st.aliases[id] = map[string]Alias{}
	}
	c.st.aliases[id][a.Name] = a
	return a, nil
}

// RemoveAlias removes alias name from capability id: 404 not_found when there is none.
func (c *Catalog) RemoveAlias(id, name string) error {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if _, ok := c.st.aliases[id][name]; !ok {
		return apierr.NotFound("Capability " + quote(id) + " has no alias " + quote(name) + ".")
	}
	delete(c.st.aliases[id], name)
	return nil
}

// Template returns the template with this id (fixtures or made through control, live or
// withdrawn) as served now.
func (c *Catalog) Template(id string) (*fixtures.Template, bool) {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	return c.templateLocked(id)
}

func (c *Catalog) templateLocked(id string) (*fixtures.Template, bool) { return c.st.templates.get(id) }

// liveTemplatesOf returns preset id's live templates in gallery order (gallery_order, then id);
// its length is the preset's templates_total.
func (c *Catalog) liveTemplatesOf(id string) []*fixtures.Template {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	return c.liveTemplatesLocked(id)
}

// liveTemplatesLocked is liveTemplatesOf with c.st.mu held.
func (c *Catalog) liveTemplatesLocked(id string) []*fixtures.Template {
	var out []*fixtures.Template
	add := func(tid string) {
		if t, ok := c.templateLocked(tid); ok && t.Live {
			out = append(out, t)
		}
	}
	for _, t := range c.Fixtures().TemplatesOf(id) {
		add(t.ID)
	}
	for _, t := range c.st.templates.added {
		if t.CapabilityID == id {
			add(t.ID)
		}
	}
	slices.SortFunc(out, func(x, y *fixtures.Template) int {
		if x.GalleryOrder != y.GalleryOrder {
			return x.GalleryOrder - y.GalleryOrder
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// SetTemplateLive withdraws (false) or restores (true) template id: 404 not_found when unknown.
func (c *Catalog) SetTemplateLive(id string, live bool) (*fixtures.Template, error) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return c.st.templates.put(id, live, "No template "+quote(id)+".")
}

// WithdrawTemplates withdraws every live template of preset id at once (templates_total becomes
// 0) and returns them as they were, in gallery order: 404 not_found for an id that is not a
// preset of the catalogue. PATCH /templates/{id} or reset restores them.
func (c *Catalog) WithdrawTemplates(id string) ([]*fixtures.Template, error) {
	if cp, ok := c.Fixtures().Capability(id); !ok || !cp.IsPreset() {
		return nil, apierr.NotFound("No preset " + quote(id) + ".")
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	live := c.liveTemplatesLocked(id)
	for _, t := range live {
		if _, err := c.st.templates.put(t.ID, false, "No template "+quote(t.ID)+"."); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// TemplateParams are the fields of a template made through control.
type TemplateParams struct {
	Name         string
	Description  *string
	Category     *string
	PreviewKind  string // video or image
	GalleryOrder int
}

// AddTemplate adds a live template to preset id: 404 not_found for an id that is not a listed
// preset; 400 invalid_config naming the field for a bad name or preview_kind.
func (c *Catalog) AddTemplate(id string, p TemplateParams) (*fixtures.Template, error) {
	cp, ok := c.Fixtures().Capability(id)
	if !ok || !cp.IsPreset() {
		return nil, apierr.NotFound("No preset " + quote(id) + ".")
	}
	if len(p.Name) < 1 || len(p.Name) > 200 {
		return nil, apierr.InvalidConfig("name", "name is required: 1 to 200 characters.")
	}
	if p.PreviewKind == "" {
		p.PreviewKind = "image"
	}
	if p.PreviewKind != "image" && p.PreviewKind != "video" {
		return nil, apierr.InvalidConfig("preview_kind", "preview_kind must be image or video.")
	}
	t := &fixtures.Template{
		ID: c.newID("captpl_"), CapabilityID: id, Name: p.Name, Description: p.Description, Category: p.Category,
		PreviewKind: p.PreviewKind, Live: true, GalleryOrder: p.GalleryOrder,
	}
	ext := ".png"
	if p.PreviewKind == "video" {
		ext = ".mp4"
	}
	t.PreviewURL = fixturesPreviewBase + id + "/" + t.ID + ext
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	c.st.templates.added = append(c.st.templates.added, t)
	return t, nil
}

// addedTemplateAt returns the template made through control whose preview is at rest (the part of
// its link after the previews base).
func (c *Catalog) addedTemplateAt(rest string) *fixtures.Template {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	for _, t := range c.st.templates.added {
		if t.PreviewURL == fixturesPreviewBase+rest {
			return t
		}
	}
	return nil
}

// Voice returns the voice with this id (fixtures or cloned through control, active or not) as
// served now.
func (c *Catalog) Voice(id string) (*fixtures.Voice, bool) {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	return c.voiceLocked(id)
}

func (c *Catalog) voiceLocked(id string) (*fixtures.Voice, bool) { return c.st.voices.get(id) }

// allVoicesLocked returns every voice as served now: the fixtures', then the cloned ones.
func (c *Catalog) allVoicesLocked() []*fixtures.Voice { return c.st.voices.all(c.Fixtures().Voices) }

// SetVoiceActive activates or deactivates voice id: 404 not_found when unknown.
func (c *Catalog) SetVoiceActive(id string, active bool) (*fixtures.Voice, error) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return c.st.voices.put(id, active, "No voice "+quote(id)+".")
}

// VoiceParams are the fields of a voice cloned through control.
type VoiceParams struct {
	Name      string
	Tags      []string
	IsPremium bool
	Active    bool
}

var snakeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) })

func checkTags(tags []string) error {
	for i, t := range tags {
		if !snakeRe().MatchString(t) {
			return apierr.InvalidConfig(fmt.Sprintf("tags[%d]", i), "Tags are snake_case.")
		}
	}
	return nil
}

// CloneVoice adds a cloned voice of workspaceID (no language, no gender, as cloned voices have
// none): 400 invalid_config naming the field for a bad name or tag.
func (c *Catalog) CloneVoice(workspaceID string, p VoiceParams) (*fixtures.Voice, error) {
	if len(p.Name) < 1 || len(p.Name) > 200 {
		return nil, apierr.InvalidConfig("name", "name is required: 1 to 200 characters.")
	}
	if err := checkTags(p.Tags); err != nil {
		return nil, err
	}
	ws := workspaceID
	vc := &fixtures.Voice{
		ID: c.newID("voc_"), Name: p.Name, Tags: append([]string{}, p.Tags...), IsCloned: true,
		IsPremium: p.IsPremium, Active: p.Active, WorkspaceID: &ws,
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	c.st.voices.added = append(c.st.voices.added, vc)
	return vc, nil
}

// Actor returns the actor with this id (fixtures or made through control, in any state) as served
// now.
func (c *Catalog) Actor(id string) (*fixtures.Actor, bool) {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	return c.actorLocked(id)
}

func (c *Catalog) actorLocked(id string) (*fixtures.Actor, bool) { return c.st.actors.get(id) }

// allActorsLocked returns every actor as served now: the fixtures', then the ones made through
// control.
func (c *Catalog) allActorsLocked() []*fixtures.Actor { return c.st.actors.all(c.Fixtures().Actors) }

func validActorState(s string) bool {
	return s == fixtures.ActorReady || s == fixtures.ActorProcessing || s == fixtures.ActorDisabled
}

// SetActorState moves actor id to ready, processing or disabled: 404 not_found when unknown, 400
// invalid_config naming state for another value.
func (c *Catalog) SetActorState(id, st string) (*fixtures.Actor, error) {
	if !validActorState(st) {
		return nil, apierr.InvalidConfig("state", "state must be ready, processing or disabled.")
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return c.st.actors.put(id, st, "No actor "+quote(id)+".")
}

// ActorParams are the fields of an actor made through control. WorkspaceID set makes the
// workspace's own actor; empty makes a cast actor (CoreCast, MinPlan).
type ActorParams struct {
	WorkspaceID    string
	Name           string
	Description    *string
	Gender         *string
	AgeBand        *string
	Tags           []string
	DefaultVoiceID *string
	State          string
	CreatedAt      time.Time
	CoreCast       bool
	MinPlan        *fixtures.Plan
}

// AddActor adds an actor: 400 invalid_config naming the field for a bad name, gender, age band,
// tag, state, plan or default voice (a voice that does not exist).
func (c *Catalog) AddActor(p ActorParams) (*fixtures.Actor, error) {
	switch {
	case len(p.Name) < 1 || len(p.Name) > 200:
		return nil, apierr.InvalidConfig("name", "name is required: 1 to 200 characters.")
	case p.Gender != nil && !slices.Contains([]string{"female", "male", "nonbinary"}, *p.Gender):
		return nil, apierr.InvalidConfig("gender", "gender must be female, male, nonbinary or null.")
	case p.AgeBand != nil && !slices.Contains([]string{"kid", "young_adult", "adult", "senior"}, *p.AgeBand):
		return nil, apierr.InvalidConfig("age_band", "age_band must be kid, young_adult, adult, senior or null.")
	case p.State != "" && !validActorState(p.State):
		return nil, apierr.InvalidConfig("state", "state must be ready, processing or disabled.")
	case p.MinPlan != nil && !p.MinPlan.Valid():
		return nil, apierr.InvalidConfig("min_plan", "min_plan must be free, pro or business.")
	case p.WorkspaceID != "" && (p.CoreCast || p.MinPlan != nil):
		return nil, apierr.InvalidConfig("core_cast", "core_cast and min_plan are for cast actors, not a workspace's own.")
	}
	if err := checkTags(p.Tags); err != nil {
		return nil, err
	}
	if p.DefaultVoiceID != nil {
		if _, ok := c.Voice(*p.DefaultVoiceID); !ok {
			return nil, apierr.InvalidConfig("default_voice_id", "default_voice_id names no voice.")
		}
	}
	if p.State == "" {
		p.State = fixtures.ActorReady
	}
	a := &fixtures.Actor{
		ID: c.newID("act_"), Name: p.Name, Description: p.Description, Gender: p.Gender, AgeBand: p.AgeBand,
		Tags: append([]string{}, p.Tags...), DefaultVoiceID: p.DefaultVoiceID, IsPlatform: p.WorkspaceID == "",
		CoreCast: p.CoreCast, MinPlan: p.MinPlan, State: p.State, CreatedAt: p.CreatedAt.UTC(),
	}
	if p.WorkspaceID != "" {
		ws := p.WorkspaceID
		a.WorkspaceID = &ws
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	c.st.actors.added = append(c.st.actors.added, a)
	return a, nil
}
