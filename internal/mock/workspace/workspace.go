// Package workspace holds the mock's tenants: one aggregate per workspace
// (plan, wallet, API keys) behind its own mutex, and the Registry that finds
// workspaces by id and keys by their hashed secret.
//
// Locking: Registry.mu guards the registry's maps only; Workspace.mu guards
// everything inside a workspace, including its keys and its ledger.Wallet.
// Never take Registry.mu while holding a Workspace.mu.
package workspace

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/ledger"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Plan is a workspace's plan: which one it is on. What a plan unlocks is the catalogue's
// (fixtures.Plan.Covers: capabilities and actors name the plan they need); the adapters convert a
// workspace's plan to the catalogue's vocabulary where a check reads it.
type Plan string

// Plans. Free lacks the agent API; business unlocks requires_plan capabilities.
const (
	PlanFree     Plan = "free"
	PlanPro      Plan = "pro"
	PlanBusiness Plan = "business"
)

// Valid reports whether p is one of the plans.
func (p Plan) Valid() bool { return p == PlanFree || p == PlanPro || p == PlanBusiness }

// Scope is an API key scope.
type Scope string

// Scopes.
const (
	ScopeRead     Scope = "read"
	ScopeGenerate Scope = "generate"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeRead || s == ScopeGenerate }

// Prefixes and formats.
const (
	WorkspacePrefix = "ws_"
	KeyIDPrefix     = "key_"
	KeyPrefix       = "sk_live_"
	// KeySecretLen is the number of base62 characters after KeyPrefix.
	KeySecretLen = 40
)

// Patterns of the ids and secrets this package makes or accepts.
var (
	KeyPattern         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sk_live_[A-Za-z0-9]{32,64}$`) })
	KeyIDPattern       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(judge.IDPattern("key_")) })
	WorkspaceIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ws_[0-9a-f]{32}$`) })
)

// wellFormedKey reports whether secret matches KeyPattern, without the regexp engine (every keyed
// request asks).
func wellFormedKey(secret string) bool {
	rest, ok := strings.CutPrefix(secret, KeyPrefix)
	if !ok || len(rest) < 32 || len(rest) > 64 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// KeyInfo is a snapshot of a key record (never the secret). Its Scopes and Buckets may be shared
// with the record and with other snapshots: read them, never write them.
type KeyInfo struct {
	KeyID       string
	WorkspaceID string
	Name        string
	Scopes      []Scope
	Revoked     bool
	ExpiresAt   *time.Time
	// BudgetCredits is the rolling 24 h budget; nil means no limit.
	BudgetCredits *int64
	// RequestAllowance is how many requests the key may make in total; nil
	// means unlimited. RequestsUsed counts requests that passed the
	// allowance check.
	RequestAllowance *int64
	RequestsUsed     int64
	// Buckets are per-key bucket limits overriding ratelimit.DefaultLimits.
	Buckets   map[ratelimit.Bucket]int
	CreatedAt time.Time
}

// HasScope reports whether the key may call a route needing s: a read route
// accepts a key holding read or generate; generate needs generate.
func (k KeyInfo) HasScope(s Scope) bool {
	if s == ScopeRead {
		return len(k.Scopes) > 0
	}
	return slices.Contains(k.Scopes, s)
}

// clone is a snapshot of a key record. Scopes and Buckets are shared with the record, which
// replaces them and never changes them in place (every keyed request takes a snapshot): a holder
// of a KeyInfo reads them and never writes them.
func (k KeyInfo) clone() KeyInfo {
	if k.ExpiresAt != nil {
		t := *k.ExpiresAt
		k.ExpiresAt = &t
	}
	if k.BudgetCredits != nil {
		v := *k.BudgetCredits
		k.BudgetCredits = &v
	}
	if k.RequestAllowance != nil {
		v := *k.RequestAllowance
		k.RequestAllowance = &v
	}
	return k
}

type keyRecord struct {
	info KeyInfo
	hash [sha256.Size]byte
}

// Workspace is one tenant. Its exported methods lock mu themselves except
// where stated; Lock/Unlock exist for compound operations (a hold plus the
// job that owns it) made by later packages.
type Workspace struct {
	id        string    // immutable
	createdAt time.Time // immutable

	mu      sync.Mutex // guards name, plan, deleted, wallet, keys
	name    string
	plan    Plan
	deleted bool
	wallet  *ledger.Wallet
	keys    map[string]*keyRecord // by key id
}

// ID returns the workspace id (ws_ + 32 hex).
func (w *Workspace) ID() string { return w.id }

// Lock takes the workspace mutex.
func (w *Workspace) Lock() { w.mu.Lock() }

// Unlock releases the workspace mutex.
func (w *Workspace) Unlock() { w.mu.Unlock() }

// Wallet returns the workspace's wallet. The caller must hold the lock for
// as long as it uses the wallet.
func (w *Workspace) Wallet() *ledger.Wallet { return w.wallet }

// Info is a snapshot of a workspace.
type Info struct {
	ID                  string
	Name                string
	Plan                Plan
	Deleted             bool
	CreatedAt           time.Time
	AvailableCredits    int64
	HeldCredits         int64
	Limits              ledger.Limits // nil fields: default
	LowBalanceThreshold int64
}

// Snapshot returns the workspace's current state.
func (w *Workspace) Snapshot() Info {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.infoLocked()
}

func (w *Workspace) infoLocked() Info {
	l := w.wallet.Limits
	if l.PerGeneration != nil {
		v := *l.PerGeneration
		l.PerGeneration = &v
	}
	if l.Daily != nil {
		v := *l.Daily
		l.Daily = &v
	}
	return Info{
		ID: w.id, Name: w.name, Plan: w.plan, Deleted: w.deleted, CreatedAt: w.createdAt,
		AvailableCredits: w.wallet.Available(), HeldCredits: w.wallet.Held(),
		Limits: l, LowBalanceThreshold: w.wallet.LowThreshold,
	}
}

// Balance returns the workspace state and the spend status of keyID with
// budget keyBudget (nil: no key budget), read under one lock.
func (w *Workspace) Balance(keyID string, keyBudget *int64) (Info, ledger.SpendStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.infoLocked(), w.wallet.Status(keyID, keyBudget)
}

// Update is a partial change of a workspace; nil fields are left alone.
type Update struct {
	Name *string
	Plan *Plan
	// SetPerGeneration/SetDaily: when true, the matching Limits field
	// replaces the limit (nil restores the default).
	SetPerGeneration bool
	SetDaily         bool
	Limits           ledger.Limits
	LowThreshold     *int64
}

// Apply changes the workspace and returns the new state. A deleted
// workspace answers not_found.
func (w *Workspace) Apply(u Update) (Info, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted {
		return Info{}, apierr.NotFound("The workspace was deleted.")
	}
	if u.Name != nil {
		w.name = *u.Name
	}
	if u.Plan != nil {
		w.plan = *u.Plan
	}
	if u.SetPerGeneration {
		w.wallet.Limits.PerGeneration = u.Limits.PerGeneration
	}
	if u.SetDaily {
		w.wallet.Limits.Daily = u.Limits.Daily
	}
	if u.LowThreshold != nil {
		w.wallet.LowThreshold = *u.LowThreshold
	}
	return w.infoLocked(), nil
}

// AdjustCredits adds delta to the available credits (negative drains; it
// cannot go below zero: invalid_config naming field "delta").
func (w *Workspace) AdjustCredits(delta int64) (Info, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted {
		return Info{}, apierr.NotFound("The workspace was deleted.")
	}
	if err := w.wallet.Adjust(delta); err != nil {
		return Info{}, apierr.InvalidConfig("delta", fmt.Sprintf("Available credits are %d; a change of %d would take them below 0.", w.wallet.Available(), delta))
	}
	return w.infoLocked(), nil
}

// SetCredits makes the available credits exactly n (n >= 0, else
// invalid_config naming "set").
func (w *Workspace) SetCredits(n int64) (Info, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted {
		return Info{}, apierr.NotFound("The workspace was deleted.")
	}
	if err := w.wallet.Set(n); err != nil {
		return Info{}, apierr.InvalidConfig("set", "Available credits cannot be set below 0.")
	}
	return w.infoLocked(), nil
}

// Key returns a snapshot of the key record keyID of this workspace.
func (w *Workspace) Key(keyID string) (KeyInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.keys[keyID]
	if !ok {
		return KeyInfo{}, false
	}
	return k.info.clone(), true
}

// KeyUpdate is a partial change of a key; Set* flags say which fields to
// replace (a nil value then clears the limit).
type KeyUpdate struct {
	SetBudget        bool
	BudgetCredits    *int64
	SetAllowance     bool
	RequestAllowance *int64
	// Buckets, when non-nil, are merged into the key's overrides; a negative
	// value removes that bucket's override.
	Buckets      map[ratelimit.Bucket]int
	SetExpiresAt bool
	ExpiresAt    *time.Time
	Revoke       bool
}

// UpdateKey changes a key and returns its new state; unknown keys answer
// not_found. Setting a new allowance also resets RequestsUsed to 0.
func (w *Workspace) UpdateKey(keyID string, u KeyUpdate) (KeyInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.keys[keyID]
	if !ok {
		return KeyInfo{}, apierr.NotFound("No key " + keyID + ".")
	}
	if u.SetBudget {
		k.info.BudgetCredits = u.BudgetCredits
	}
	if u.SetAllowance {
		k.info.RequestAllowance = u.RequestAllowance
		k.info.RequestsUsed = 0
	}
	if len(u.Buckets) > 0 {
		// A new map, never a change in place: snapshots share the record's (KeyInfo.clone).
		buckets := maps.Clone(k.info.Buckets)
		for b, n := range u.Buckets {
			if n < 0 {
				delete(buckets, b)
				continue
			}
			if buckets == nil {
				buckets = map[ratelimit.Bucket]int{}
			}
			buckets[b] = n
		}
		k.info.Buckets = buckets
	}
	if u.SetExpiresAt {
		k.info.ExpiresAt = u.ExpiresAt
	}
	if u.Revoke {
		k.info.Revoked = true
	}
	return k.info.clone(), nil
}

// ConsumeRequest counts one request against keyID's allowance. When the
// allowance is used up it answers 429 quota_exceeded and counts nothing.
func (w *Workspace) ConsumeRequest(keyID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.keys[keyID]
	if !ok {
		return apierr.NotAuthorized("The API key is not valid.")
	}
	return k.consumeLocked()
}

// consumeLocked counts one request against the key's allowance, or refuses it when the allowance
// is spent. The caller holds the owning workspace's lock.
func (k *keyRecord) consumeLocked() error {
	if a := k.info.RequestAllowance; a != nil && k.info.RequestsUsed >= *a {
		return apierr.QuotaExceeded(fmt.Sprintf("This key has used its request allowance of %d requests. Use another key or ask for a larger allowance.", *a))
	}
	k.info.RequestsUsed++
	return nil
}

// Registry finds workspaces and keys. It is safe for concurrent use.
type Registry struct {
	clock clock.Clock
	ids   *ids.Source

	// OnLow, when set before workspaces are created, receives each
	// workspace's low-balance crossings (ledger.Wallet.OnLow). It runs with
	// that workspace's lock held.
	OnLow func(workspaceID string, low ledger.Low)

	mu     sync.RWMutex // guards byID, byHash, keyWS
	byID   map[string]*Workspace
	byHash map[[sha256.Size]byte]*Workspace // key hash -> owner
	keyWS  map[string]*Workspace            // key id -> owner
}

// NewRegistry returns an empty registry drawing ids and secrets from src.
func NewRegistry(c clock.Clock, src *ids.Source) *Registry {
	r := &Registry{clock: c, ids: src}
	r.Reset()
	return r
}

// Reset forgets every workspace and key.
func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID = map[string]*Workspace{}
	r.byHash = map[[sha256.Size]byte]*Workspace{}
	r.keyWS = map[string]*Workspace{}
}

// CreateParams describes a new workspace. Zero Plan means pro.
type CreateParams struct {
	Name         string
	Plan         Plan
	Balance      int64
	Limits       ledger.Limits
	LowThreshold int64
}

// Create makes a workspace. An empty name becomes "Workspace <id suffix>".
func (r *Registry) Create(p CreateParams) *Workspace {
	if p.Plan == "" {
		p.Plan = PlanPro
	}
	id := r.ids.ID(WorkspacePrefix)
	if p.Name == "" {
		p.Name = "Workspace " + id[len(id)-6:]
	}
	w := &Workspace{
		id: id, createdAt: r.clock.Now(), name: p.Name, plan: p.Plan,
		wallet: ledger.New(r.clock, p.Balance), keys: map[string]*keyRecord{},
	}
	w.wallet.Limits = p.Limits
	w.wallet.LowThreshold = p.LowThreshold
	if onLow := r.OnLow; onLow != nil {
		w.wallet.OnLow = func(l ledger.Low) { onLow(id, l) }
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = w
	return w
}

// Get returns the workspace id, deleted or not.
func (r *Registry) Get(id string) (*Workspace, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	w, ok := r.byID[id]
	return w, ok
}

// Delete marks the workspace deleted: its keys then answer 410
// workspace_unavailable. Deleting twice answers not_found.
func (r *Registry) Delete(id string) error {
	w, ok := r.Get(id)
	if !ok {
		return apierr.NotFound("No workspace " + id + ".")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted {
		return apierr.NotFound("The workspace " + id + " is already deleted.")
	}
	w.deleted = true
	return nil
}

// KeyParams describes a new key. Scopes must be non-empty and valid.
type KeyParams struct {
	Name             string
	Scopes           []Scope
	BudgetCredits    *int64
	RequestAllowance *int64
	Buckets          map[ratelimit.Bucket]int
	ExpiresAt        *time.Time
}

// CreateKey makes a key in workspace w and returns its record and its
// secret (sk_live_ + 40 base62 characters). Only the SHA-256 of the secret
// is kept.
func (r *Registry) CreateKey(w *Workspace, p KeyParams) (KeyInfo, string, error) {
	if len(p.Scopes) == 0 {
		return KeyInfo{}, "", apierr.InvalidConfig("scopes", "A key needs at least one scope (read, generate).")
	}
	for _, s := range p.Scopes {
		if !s.Valid() {
			return KeyInfo{}, "", apierr.InvalidConfig("scopes", fmt.Sprintf("Unknown scope %q; use read or generate.", s))
		}
	}
	for b := range p.Buckets {
		if !b.Valid() {
			return KeyInfo{}, "", apierr.InvalidConfig("buckets", fmt.Sprintf("Unknown bucket %q.", b))
		}
	}
	keyID := r.ids.ID(KeyIDPrefix)
	secret := KeyPrefix + r.ids.Base62(KeySecretLen)
	scopes := slices.Clone(p.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	rec := &keyRecord{
		info: KeyInfo{
			KeyID: keyID, WorkspaceID: w.id, Name: p.Name, Scopes: scopes,
			ExpiresAt: p.ExpiresAt, BudgetCredits: p.BudgetCredits, RequestAllowance: p.RequestAllowance,
			Buckets: maps.Clone(p.Buckets), CreatedAt: r.clock.Now(),
		},
		hash: sha256.Sum256([]byte(secret)),
	}
	w.mu.Lock()
	if w.deleted {
		w.mu.Unlock()
		return KeyInfo{}, "", apierr.NotFound("The workspace was deleted.")
	}
	w.keys[keyID] = rec
	info := rec.info.clone()
	w.mu.Unlock()

	r.mu.Lock()
	r.byHash[rec.hash] = w
	r.keyWS[keyID] = w
	r.mu.Unlock()
	return info, secret, nil
}

// KeyIDs returns the id of every key, in no order.
func (r *Registry) KeyIDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.keyWS))
	for id := range r.keyWS {
		out = append(out, id)
	}
	return out
}

// KeyOwner returns the workspace holding keyID.
func (r *Registry) KeyOwner(keyID string) (*Workspace, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	w, ok := r.keyWS[keyID]
	return w, ok
}

// Authenticate resolves a presented secret. Answers, in order: 401
// not_authorized when the secret is malformed, unknown, revoked or expired
// (on the service clock); 410 workspace_unavailable when the key's workspace
// was deleted. On success it returns the workspace, a snapshot of the key
// and the workspace's plan.
func (r *Registry) Authenticate(secret string) (*Workspace, KeyInfo, Plan, error) {
	a, err := r.admit(secret, false)
	return a.Workspace, a.Key, a.Plan, err
}

// Admission is what Admit found: the key's workspace, a snapshot of the key, the workspace's plan
// and its available credits, all read under one hold of the workspace lock.
type Admission struct {
	Workspace *Workspace
	Key       KeyInfo
	Plan      Plan
	Available int64
}

// Admit is Authenticate followed, unless the workspace is on the free plan (which the agent API
// refuses before counting), by ConsumeRequest, with the available credits read too, all under one
// hold of the workspace lock: a keyed request takes it once for its admission. An error of
// Authenticate comes with a zero Admission; a spent request allowance comes with the Admission
// filled in (so the caller can name the key) and the quota_exceeded error.
func (r *Registry) Admit(secret string) (Admission, error) { return r.admit(secret, true) }

func (r *Registry) admit(secret string, consume bool) (Admission, error) {
	if !wellFormedKey(secret) {
		return Admission{}, apierr.NotAuthorized("The API key is malformed; keys look like sk_live_ followed by letters and digits.")
	}
	h := sha256.Sum256([]byte(secret))
	r.mu.RLock()
	w, ok := r.byHash[h]
	r.mu.RUnlock()
	unknown := func() error { return apierr.NotAuthorized("The API key is not valid.") }
	if !ok {
		return Admission{}, unknown()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var rec *keyRecord
	for _, k := range w.keys {
		if subtle.ConstantTimeCompare(k.hash[:], h[:]) == 1 {
			rec = k
			break
		}
	}
	if rec == nil {
		return Admission{}, unknown()
	}
	if rec.info.Revoked {
		return Admission{}, apierr.NotAuthorized("The API key was revoked.")
	}
	if rec.info.ExpiresAt != nil && !r.clock.Now().Before(*rec.info.ExpiresAt) {
		return Admission{}, apierr.NotAuthorized("The API key has expired.")
	}
	if w.deleted {
		return Admission{}, apierr.WorkspaceUnavailable("The workspace this key belongs to was deleted.")
	}
	a := Admission{Workspace: w, Key: rec.info.clone(), Plan: w.plan, Available: w.wallet.Available()}
	if !consume || w.plan == PlanFree {
		return a, nil
	}
	return a, rec.consumeLocked()
}
