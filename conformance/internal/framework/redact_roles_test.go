package framework

import (
	"context"
	"strings"
	"testing"
)

// Every key role of the profile is hidden in what the run prints, whatever the key looks like: a
// key of a shape the built-in patterns do not know is hidden because the profile names it.
func TestEveryRoleKeyIsRedacted(t *testing.T) {
	cfg := Config{BaseURL: "http://127.0.0.1:1/api/v1", TimeScale: 1, Procs: 1, ControlToken: "ctl-odd-shape-0"}
	set := map[string]string{}
	for _, r := range cfg.roleKeys() {
		set[r.name] = "odd-" + strings.ReplaceAll(r.name, "_", "-") + "-7f3a"
	}
	cfg.Key, cfg.ReadKey, cfg.OtherKey, cfg.SiblingKey = set["key"], set["read_key"], set["other_key"], set["sibling_key"]
	cfg.RevokedKey, cfg.ExpiredKey, cfg.BudgetKey = set["revoked_key"], set["expired_key"], set["budget_key"]
	cfg.LowBalanceKey, cfg.NoAgentAPIKey, cfg.LowerPlanKey = set["low_balance_key"], set["no_agent_api_key"], set["lower_plan_key"]
	cfg.GenerateOnlyKey, cfg.DeletedWorkspaceKey = set["generate_only_key"], set["deleted_workspace_key"]
	cfg.AllowanceUsedKey, cfg.BusinessKey, cfg.OwnCatalogueKey = set["allowance_used_key"], set["business_key"], set["own_catalogue_key"]
	cfg.LongListsKey, cfg.HighLimitKey, cfg.LimitedKey = set["long_lists_key"], set["high_limit_key"], set["limited_key"]
	cfg.BudgetKeyCredits, cfg.LimitedPerGenerationLimit, cfg.LimitedDailyLimit = CreditsOf(100), CreditsOf(2), CreditsOf(3)
	cfg.OwnActorID, cfg.OwnClonedVoiceID = "act_"+strings.Repeat("a", 32), "voc_"+strings.Repeat("b", 32)
	f, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cfg.roleKeys() {
		if r.key == "" {
			t.Fatalf("the test sets no key for the role %s: add it", r.name)
		}
		if got := f.Redactor().String("sent " + r.key); strings.Contains(got, r.key) {
			t.Errorf("%s is printed as is: %q", r.name, got)
		}
	}
	if got := f.Redactor().String(cfg.ControlToken); strings.Contains(got, cfg.ControlToken) {
		t.Errorf("the control token is printed as is: %q", got)
	}
}
