package framework

import (
	"strconv"

	"github.com/mediaspec/mediaspec/internal/contract"
	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Roles of the target profile: keys the operator pre-made for what the suite makes through the
// control API when it has one (docs/staging.md). Each is a Need of the profile tier, met by the
// control API (the spec then makes its own such key, and judges more) or by the profile's
// setting; a spec that needs one the run lacks skips, naming the setting.
const (
	RevokedKey    Need = "revoked-key"      // revoked_key: a key that was revoked
	ExpiredKey    Need = "expired-key"      // expired_key: a key that has expired
	BudgetKey     Need = "budget-key"       // budget_key (+ budget_key_credits): a key with a 24-hour budget
	LowBalanceKey Need = "low-balance-key"  // low_balance_key: a key of a workspace too poor to submit
	NoAgentAPIKey Need = "no-agent-api-key" // no_agent_api_key: a key whose plan lacks the agent API

	// The key roles of the auth specs (T1): a key of one scope, of a deleted workspace, of a used
	// request allowance.
	GenerateOnlyKey     Need = "generate-only-key"     // generate_only_key: a key holding only the generate scope
	DeletedWorkspaceKey Need = "deleted-workspace-key" // deleted_workspace_key: a key of a workspace that was deleted
	AllowanceUsedKey    Need = "allowance-used-key"    // allowance_used_key: a key that used its request allowance

	// The key role of the catalogue specs (T4).
	BusinessKey Need = "business-key" // business_key: a key of a workspace on the business plan

	// The key role of the key-slot specs (T2): one per key set (KeySet.SiblingKey), so the
	// processes of a split run never share it.
	SiblingKey Need = "sibling-key" // sibling_key: a second read+generate key of key's workspace

	// The key role of the long-list specs (T1, appfixtures.go).
	LongListsKey Need = "long-lists-key" // long_lists_key: a read key of a workspace with more than 50 presets and voices
	// The key roles of the limit specs (T2): a key of a workspace whose limits the operator raised
	// above the holds the suite asks for, and one whose limits they set under any video hold.
	HighLimitKey Need = "high-limit-key" // high_limit_key: a key of a workspace with limits of HighLimitCredits or more
	LimitedKey   Need = "limited-key"    // limited_key (+ its two limits): a key of a workspace with tiny limits
)

// HighLimitCredits is the least per-generation and daily limit (and balance) of high_limit_key's
// workspace: above the hold of a 75-second actor_ultra recording at the catalogue's 10 credits a
// second, padded.
const HighLimitCredits = 2000

// RoleNeeds are the needs of the profile's key roles, in label order.
var RoleNeeds = []Need{AllowanceUsedKey, BudgetKey, BusinessKey, DeletedWorkspaceKey, ExpiredKey, GenerateOnlyKey, LowBalanceKey, NoAgentAPIKey, RevokedKey,
	SiblingKey, LongListsKey, HighLimitKey, LimitedKey}

// role is what the suite says and reads of one key role.
type role struct {
	setting, flag, what string
	key                 func(Config) string
}

var roles = map[Need]role{
	RevokedKey:    {"revoked_key", "--revoked-key", "a revoked key", func(c Config) string { return c.RevokedKey }},
	ExpiredKey:    {"expired_key", "--expired-key", "an expired key", func(c Config) string { return c.ExpiredKey }},
	BudgetKey:     {"budget_key", "--budget-key", "a key with a 24-hour budget of its own", func(c Config) string { return c.BudgetKey }},
	LowBalanceKey: {"low_balance_key", "--low-balance-key", "a key of a workspace whose balance is too low to submit", func(c Config) string { return c.LowBalanceKey }},
	BusinessKey:   {"business_key", "--business-key", "a key of a workspace on the business plan", func(c Config) string { return c.BusinessKey }},
	NoAgentAPIKey: {"no_agent_api_key", "--no-agent-api-key", "a key of a workspace whose plan lacks the agent API", func(c Config) string { return c.NoAgentAPIKey }},
	GenerateOnlyKey: {"generate_only_key", "--generate-only-key", "a key holding only the generate scope, of a workspace with credits",
		func(c Config) string { return c.GenerateOnlyKey }},
	DeletedWorkspaceKey: {"deleted_workspace_key", "--deleted-workspace-key", "a key of a workspace that was deleted",
		func(c Config) string { return c.DeletedWorkspaceKey }},
	AllowanceUsedKey: {"allowance_used_key", "--allowance-used-key", "a key that used its whole request allowance",
		func(c Config) string { return c.AllowanceUsedKey }},
	SiblingKey: {"sibling_key", "--sibling-key; the fourth key of each key set", "a second read+generate key of the main key's workspace",
		func(c Config) string { return c.SiblingKey }},
	LongListsKey: {"long_lists_key", "--long-lists-key", "a key of a workspace whose own presets (copies) and cloned voices make lists of more than 50 rows",
		func(c Config) string { return c.LongListsKey }},
	HighLimitKey: {"high_limit_key", "--high-limit-key", "a read+generate key of a workspace whose per-generation and daily limits " +
		"and balance are " + strconv.Itoa(HighLimitCredits) + " credits or more", func(c Config) string { return c.HighLimitKey }},
	LimitedKey: {"limited_key", "--limited-key, with limited_key_per_generation_limit and limited_key_daily_limit",
		"a read+generate key of a workspace whose per-generation and daily limits are set under any video hold",
		func(c Config) string { return c.LimitedKey }},
}

// Roles are the key roles c declares.
func (c Config) Roles() map[Need]bool {
	out := map[Need]bool{}
	for n, r := range roles {
		if r.key(c) != "" {
			out[n] = true
		}
	}
	return out
}

// roleLack is Capabilities.Lack's reason for a role need: role is false when n is no role, lacks
// true when neither the control API nor the profile's key meets it.
func (c Capabilities) roleLack(n Need) (r SkipReason, role, lacks bool) {
	ro, ok := roles[n]
	if !ok {
		return SkipReason{}, false, false
	}
	if c.Control || c.Roles[n] {
		return SkipReason{}, true, false
	}
	return NotDeclared("unsupported: needs " + ro.what + ": set " + ro.setting + " in the profile (" + ro.flag + "), or give the control API to make one"), true, true
}

// RoleKey returns a client with the profile's key of role n (a Need of RoleNeeds), skipping the
// spec, naming the setting, when the profile declares none. A spec calls it on its path without
// the control API; with control it makes such a key itself.
func (s *Spec) RoleKey(n Need) *Client {
	GinkgoHelper()
	r, ok := roles[n]
	if !ok {
		Fail("conformance: " + string(n) + " is not a key role")
	}
	key := r.key(s.f.cfg)
	if key == "" {
		SkipFor(NotDeclared("unsupported: needs " + r.what + ": set " + r.setting + " in the profile (" + r.flag + ")"))
	}
	c := s.f.client(key)
	c.shared = true
	return c
}

// HasRoleKey reports whether the profile declares a key of role n (a Need of RoleNeeds): a spec
// with another way to judge its rule takes that one when it does not.
func (s *Spec) HasRoleKey(n Need) bool {
	r, ok := roles[n]
	return ok && r.key(s.f.cfg) != ""
}

// BudgetKeyCredits is the 24-hour budget the profile declares for its budget key
// (budget_key_credits; a profile declares both or neither).
func (s *Spec) BudgetKeyCredits() int64 {
	n, _ := s.f.cfg.BudgetKeyCredits.Get()
	return n
}

// WorkspaceLimits are the spend limits of the main key's workspace: the profile's
// workspace_per_generation_limit and workspace_daily_limit, each the text's default (600, 2000
// credits) where it declares none.
func (s *Spec) WorkspaceLimits() (perGeneration, daily int64) {
	perGeneration, daily = contract.PerGenerationCap, contract.DailyBudget
	if n, ok := s.f.cfg.PerGenerationLimit.Get(); ok {
		perGeneration = n
	}
	if n, ok := s.f.cfg.DailyLimit.Get(); ok {
		daily = n
	}
	return perGeneration, daily
}

// LimitedKeyLimits are the per-generation and daily limits the profile declares for limited_key's
// workspace (limited_key_per_generation_limit, limited_key_daily_limit; declared with the key).
func (s *Spec) LimitedKeyLimits() (perGeneration, daily int64) {
	perGeneration, _ = s.f.cfg.LimitedPerGenerationLimit.Get()
	daily, _ = s.f.cfg.LimitedDailyLimit.Get()
	return perGeneration, daily
}
