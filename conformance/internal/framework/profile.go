package framework

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
)

// A target profile is the --config file read as what a server's operator declares about it: the
// keys they pre-made by role (Key, ReadKey, OtherKey, the key sets, RevokedKey, ExpiredKey,
// BudgetKey, LowBalanceKey, NoAgentAPIKey, LowerPlanKey), ids the suite cannot discover
// (RetiredCapabilityID), the limits they configured, where the server reaches the suite's receiver
// (ReceiverPublicURL), the names and shapes the text leaves open (KeyHeader, the probe and
// description paths, Shapes) and the optional test features it offers (Features). Its JSON Schema
// is spec/profile.schema.json; docs/staging.md walks an operator through one.

// Credits is a credit amount a target declares, with whether it was declared at all: 0 is a value
// the text gives a meaning to ("0 means no spend at all"), so an undeclared limit is not 0. It is
// a flag.Value and reads a YAML whole number.
type Credits struct {
	n     int64
	given bool
}

// CreditsOf is the declared amount n.
func CreditsOf(n int64) Credits { return Credits{n: n, given: true} }

// Get returns the amount and whether one was declared.
func (c Credits) Get() (int64, bool) { return c.n, c.given }

// String is the amount, "" when none was declared.
func (c *Credits) String() string {
	if c == nil || !c.given {
		return ""
	}
	return strconv.FormatInt(c.n, 10)
}

// Set reads a whole number of credits, zero or more.
func (c *Credits) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a whole number of credits (zero or more)", s)
	}
	*c = CreditsOf(n)
	return nil
}

// UnmarshalYAML reads a whole number of credits.
func (c *Credits) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		return fmt.Errorf("line %d: %q is not a whole number of credits", n.Line, n.Value)
	}
	if err := c.Set(n.Value); err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	return nil
}

// MarshalYAML writes the amount (nothing when none was declared).
func (c Credits) MarshalYAML() (any, error) {
	if !c.given {
		return nil, nil
	}
	return c.n, nil
}

// MarshalJSON writes the amount, null when none was declared: the configuration a split run sends
// each of its processes keeps a declared 0 apart from no declaration.
func (c Credits) MarshalJSON() ([]byte, error) {
	if !c.given {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatInt(c.n, 10)), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Credits) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = Credits{}
		return nil
	}
	return c.Set(string(b))
}

// Optional test features a target may offer (Config.Features).
const (
	// FeatureControl is the test-control API of spec/control.yaml; it is implied by ControlURL.
	FeatureControl = "control"
	// FeatureTestInputs is test-mode inputs (spec/testmode.yaml): the target honours the
	// Mediaspec-Test-Input header for the keys of Config.TestKeys.
	FeatureTestInputs = "test-inputs"
)

// KnownFeatures lists the features a profile may declare.
func KnownFeatures() []string { return []string{FeatureControl, FeatureTestInputs} }

// KeyList is a list of keys: --test-key (repeated or comma-separated), an environment variable
// (comma-separated) or a YAML list (or one key). Its String never shows a key.
type KeyList []string

// String says how many keys there are, never which.
func (l *KeyList) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	return fmt.Sprintf("%d keys", len(*l))
}

// Set adds the comma-separated keys of s.
func (l *KeyList) Set(s string) error {
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" && !sliceHas(*l, k) {
			*l = append(*l, k)
		}
	}
	return nil
}

// UnmarshalYAML reads a list of keys (or one key).
func (l *KeyList) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	if n.Kind == yaml.ScalarNode {
		list = []string{n.Value}
	} else if err := n.Decode(&list); err != nil {
		return fmt.Errorf("line %d: want a list of keys", n.Line)
	}
	*l = nil
	for _, k := range list {
		if err := l.Set(k); err != nil {
			return err
		}
	}
	return nil
}

// IsTestKey reports whether key is one of the profile's test keys.
func (c Config) IsTestKey(key string) bool { return key != "" && sliceHas(c.TestKeys, key) }

// FeatureList is the optional test features a target offers: --feature (repeated or
// comma-separated), MEDIASPEC_FEATURES (comma-separated) or features: in the file (a list).
type FeatureList []string

// String renders the list as the flag takes it.
func (l *FeatureList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set adds the comma-separated features of s; an unknown one is refused with the known ones.
func (l *FeatureList) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if err := checkFeature(f); err != nil {
			return err
		}
		*l = l.union(FeatureList{f})
	}
	return nil
}

// UnmarshalYAML reads a list of feature names (or one name).
func (l *FeatureList) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	if n.Kind == yaml.ScalarNode {
		list = []string{n.Value}
	} else if err := n.Decode(&list); err != nil {
		return fmt.Errorf("line %d: features: want a list of feature names", n.Line)
	}
	*l = nil
	for _, f := range list {
		if err := checkFeature(f); err != nil {
			return fmt.Errorf("line %d: features: %v", n.Line, err)
		}
		*l = l.union(FeatureList{f})
	}
	return nil
}

func (l FeatureList) union(more FeatureList) FeatureList {
	out := append(FeatureList(nil), l...)
	for _, f := range more {
		if !sliceHas(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func sliceHas(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func checkFeature(f string) error {
	if sliceHas(KnownFeatures(), f) {
		return nil
	}
	return fmt.Errorf("unknown feature %q (known: %s)", f, strings.Join(KnownFeatures(), ", "))
}

// Offers reports whether the target offers the optional test feature: declared in Features, or,
// for control, implied by ControlURL.
func (c Config) Offers(feature string) bool {
	if feature == FeatureControl && c.ControlURL != "" {
		return true
	}
	return sliceHas(c.Features, feature)
}

// roleKeys are the profile's keys by role, named by their setting.
func (c Config) roleKeys() []struct{ name, key string } {
	return []struct{ name, key string }{
		{"key", c.Key}, {"read_key", c.ReadKey}, {"other_key", c.OtherKey}, {"sibling_key", c.SiblingKey},
		{"revoked_key", c.RevokedKey}, {"expired_key", c.ExpiredKey}, {"budget_key", c.BudgetKey},
		{"low_balance_key", c.LowBalanceKey}, {"no_agent_api_key", c.NoAgentAPIKey}, {"lower_plan_key", c.LowerPlanKey},
		{"generate_only_key", c.GenerateOnlyKey}, {"deleted_workspace_key", c.DeletedWorkspaceKey}, {"allowance_used_key", c.AllowanceUsedKey},
		{"business_key", c.BusinessKey}, {"own_catalogue_key", c.OwnCatalogueKey}, {"long_lists_key", c.LongListsKey},
		{"high_limit_key", c.HighLimitKey}, {"limited_key", c.LimitedKey},
	}
}

func isFirstThree(role string) bool {
	return role == "key" || role == "read_key" || role == "other_key"
}

// checkProfile refuses a profile that cannot describe a server: one key in two roles, a budget key
// without its budget (or a budget without its key), a feature the target cannot offer as declared.
// Secrets are never part of the message.
func (c Config) checkProfile() error {
	seen := map[string]string{}
	for _, r := range c.roleKeys() {
		if r.key == "" {
			continue
		}
		if strings.TrimSpace(r.key) != r.key || strings.ContainsAny(r.key, " \t\r\n") {
			return fmt.Errorf("conformance: %s has white space in it: a key is one word", r.name)
		}
		// key, read_key and other_key against each other: Preflight says which is which.
		if other, ok := seen[r.key]; ok && !(isFirstThree(other) && isFirstThree(r.name)) {
			return fmt.Errorf("conformance: %s and %s are the same key: each role needs a key of its own", other, r.name)
		}
		seen[r.key] = r.name
	}
	if _, ok := c.BudgetKeyCredits.Get(); ok != (c.BudgetKey != "") {
		return errors.New("conformance: budget_key and budget_key_credits go together: the key with a 24-hour budget of its own, and that budget in credits")
	}
	if own := []string{c.OwnCatalogueKey, c.OwnActorID, c.OwnClonedVoiceID}; slices.Contains(own, "") && slices.ContainsFunc(own, func(v string) bool { return v != "" }) {
		return errors.New("conformance: own_catalogue_key, own_actor_id and own_cloned_voice_id go together: a key of a workspace, and an actor and a cloned voice of that workspace's own")
	}
	if c.OwnCatalogueKey == "" && (c.OwnProcessingActorID != "" || c.OwnDisabledActorID != "" || c.OwnDeactivatedVoiceID != "") {
		return errors.New("conformance: own_processing_actor_id, own_disabled_actor_id and own_deactivated_voice_id " +
			"are of own_catalogue_key's workspace: declare it with them")
	}
	_, perGen := c.LimitedPerGenerationLimit.Get()
	if _, daily := c.LimitedDailyLimit.Get(); perGen != (c.LimitedKey != "") || daily != (c.LimitedKey != "") {
		return errors.New("conformance: limited_key, limited_key_per_generation_limit and limited_key_daily_limit go together: the key, and the two limits of its workspace")
	}
	if err := c.checkVersionStates(); err != nil {
		return err
	}
	for _, f := range c.Features {
		if err := checkFeature(f); err != nil {
			return fmt.Errorf("conformance: features: %v", err)
		}
	}
	if sliceHas(c.Features, FeatureControl) && c.ControlURL == "" {
		return errors.New("conformance: features lists control without control_url: give the control API's root (control_url and control_token), which implies the feature")
	}
	if sliceHas(c.Features, FeatureTestInputs) != (len(c.TestKeys) > 0) {
		return errors.New("conformance: features test-inputs and test_keys go together: the feature, and the keys the server honours test inputs for")
	}
	for _, k := range c.TestKeys {
		if strings.ContainsAny(k, " \t\r\n") {
			return errors.New("conformance: test_keys has a key with white space in it: a key is one word")
		}
	}
	return nil
}

// ReferenceShapes are the reference mock's own answers to every open shape (openshape.Known), the
// shapes: of the profile mediaspec mock --profile-out writes.
func ReferenceShapes() ShapeList {
	out := ShapeList{}
	for _, n := range openshape.Known {
		out[n.Key] = n.Reference
	}
	return out
}

// ProfileYAML writes c as a profile: every setting that is not its zero value (an undeclared
// limit, an empty list, TimeScale and Procs at 1 are left out), in the order of Config, after the
// comment lines of header (each written as "# line"). Load reads it back as c.
func (c Config) ProfileYAML(header ...string) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		f := v.Field(i)
		if name == "" || name == "-" || f.IsZero() {
			continue
		}
		var val any = f.Interface()
		switch x := val.(type) {
		case float64:
			if name == "time_scale" && x == 1 {
				continue
			}
		case int:
			if name == "procs" && x == 1 {
				continue
			}
		case KeySetList:
			list := make([]string, len(x))
			for j, ks := range x {
				list[j] = ks.String()
			}
			val = list
		case ByteSize:
			val = x.String()
		case ShapeList:
			m := &yaml.Node{Kind: yaml.MappingNode}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: x[k]})
			}
			val = m
		case Credits:
			if _, ok := x.Get(); !ok {
				continue
			}
		}
		node := &yaml.Node{}
		if n, ok := val.(*yaml.Node); ok {
			node = n
		} else if err := node.Encode(val); err != nil {
			return nil, fmt.Errorf("conformance: profile: %s: %w", name, err)
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, node)
	}
	var buf bytes.Buffer
	for _, h := range header {
		fmt.Fprintf(&buf, "# %s\n", h)
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("conformance: profile: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// profileSettings are the settings of Config that describe the target (the profile proper), in
// the order of Config; the rest say how to run (budget, reports, procs, ...) or are the target's
// address and first key.
var profileSettings = []string{
	"read_key", "other_key", "sibling_key", "retired_capability_id", "key_header", "description_path", "live_path",
	"ready_path", "shapes", "receiver_url", "files_url", "revoked_key", "expired_key", "budget_key", "budget_key_credits",
	"low_balance_key", "no_agent_api_key", "lower_plan_key", "generate_only_key", "deleted_workspace_key", "allowance_used_key",
	"business_key", "own_catalogue_key", "own_actor_id", "own_cloned_voice_id",
	"withheld_capability_id", "internal_preset_id", "own_processing_actor_id", "own_disabled_actor_id", "own_deactivated_voice_id",
	"renamed_field_capability_id", "renamed_field_old_name", "renamed_field_new_name", "renamed_field_stops_in",
	"ended_field_capability_id", "ended_field_old_name", "ended_field_new_name", "ended_field_stopped_in",
	"removed_enum_capability_id", "removed_enum_field", "removed_enum_value", "saved_workflow_ids", "long_lists_key",
	"high_limit_key", "limited_key", "limited_key_per_generation_limit", "limited_key_daily_limit",
	"workspace_per_generation_limit", "workspace_daily_limit", "features", "test_keys",
	"refused_prompt", "flagged_upload",
}

// Declared lists the profile settings c declares beyond the base URL and a key (by their names in
// the file), in the order of Config: empty for a keys-only run. A headline naming the run's
// profile (issue 36: "judged N of M text rules at profile P") reads it.
func (c Config) Declared() []string {
	v := reflect.ValueOf(c)
	t := v.Type()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if sliceHas(profileSettings, name) && !v.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}
