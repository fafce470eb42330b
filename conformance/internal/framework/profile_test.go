package framework

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/spec"
)

// profileSchema is spec/profile.schema.json decoded.
func profileSchema(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(spec.ProfileSchemaJSON(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The schema and Config agree: every yaml key of Config is a property of the schema and every
// property a yaml key; every field has a flag and an environment variable.
func TestProfileSchemaMatchesConfig(t *testing.T) {
	props := profileSchema(t)["properties"].(map[string]any)
	var inSchema, inConfig []string
	for k := range props {
		inSchema = append(inSchema, k)
	}
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		f := ct.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		inConfig = append(inConfig, name)
		if flagNames[f.Name] == "" || f.Tag.Get("env") == "" {
			t.Errorf("Config.%s has no flag or no environment variable", f.Name)
		}
	}
	sort.Strings(inSchema)
	sort.Strings(inConfig)
	if !reflect.DeepEqual(inSchema, inConfig) {
		t.Errorf("spec/profile.schema.json and Config disagree:\nschema: %v\nConfig: %v", inSchema, inConfig)
	}

	shapes := props["shapes"].(map[string]any)["propertyNames"].(map[string]any)["anyOf"].([]any)
	var names []string
	for _, n := range shapes[0].(map[string]any)["enum"].([]any) {
		names = append(names, n.(string))
	}
	var known []string
	for _, n := range openshape.Known {
		known = append(known, n.Key)
	}
	if !reflect.DeepEqual(names, known) {
		t.Errorf("the schema's shape names %v, want openshape.Known's %v", names, known)
	}
	var feats []string
	for _, f := range profileSchema(t)["$defs"].(map[string]any)["feature"].(map[string]any)["enum"].([]any) {
		feats = append(feats, f.(string))
	}
	if !reflect.DeepEqual(feats, KnownFeatures()) {
		t.Errorf("the schema's features %v, want KnownFeatures %v", feats, KnownFeatures())
	}
}

// yamlBlocks are the ```yaml blocks of a Markdown page.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// The example profiles (testdata and docs/staging.md) fit the schema, load and validate.
func TestExampleProfilesValidate(t *testing.T) {
	files, err := filepath.Glob("testdata/profiles/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples[f] = string(b)
	}
	for i, b := range yamlBlocks(t, "../../../docs/staging.md") {
		examples["docs/staging.md yaml block "+string(rune('1'+i))] = b
	}
	if len(examples) < 3 {
		t.Fatalf("only %d example profiles", len(examples))
	}
	for name, text := range examples {
		if err := spec.ValidateProfile([]byte(text)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		cfg := Config{TimeScale: 1, Procs: 1}
		if err := ParseConfigYAML([]byte(text), &cfg); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A bad profile is refused by the schema and by Load or Validate, in one line that names the
// setting (and the line, where the file has one).
func TestBadProfiles(t *testing.T) {
	base := "base_url: http://h\nkey: sk_live_a\n"
	// schemaTakes: what the schema cannot say (one key in two roles) only Validate refuses.
	tests := []struct {
		text, want  string
		schemaTakes bool
	}{
		{base + "revoked_kee: sk_live_b\n", "line 3: unknown setting revoked_kee", false},
		{base + "workspace_daily_limit: lots\n", "line 3: workspace_daily_limit:", false},
		{base + "workspace_daily_limit: -1\n", "line 3: workspace_daily_limit:", false},
		{base + "budget_key_credits: 1.5\n", "line 3: budget_key_credits:", false},
		{base + "budget: lots\n", "line 3: budget:", false},
		{base + "features: [control, card_numbers]\n", `line 3: features: unknown feature "card_numbers"`, false},
		{base + "features: [control]\n", "features lists control without control_url", false},
		{base + "features: [test-inputs]\n", "features test-inputs and test_keys go together", true},
		{base + "test_keys: [sk_live_a]\n", "features test-inputs and test_keys go together", false},
		{base + "budget_key: sk_live_b\n", "budget_key and budget_key_credits go together", false},
		{base + "budget_key_credits: 10\n", "budget_key and budget_key_credits go together", false},
		{base + "expired_key: sk_live_a\n", "key and expired_key are the same key", true},
		{base + "own_disabled_actor_id: act_x\n", "are of own_catalogue_key's workspace: declare it with them", false},
		{base + "own_deactivated_voice_id: voc_x\n", "are of own_catalogue_key's workspace: declare it with them", false},
		{base + "shapes:\n  balance.avail: /x\n", `unknown shape "balance.avail"`, false},
		{base + "limited_key: sk_live_b\n", "limited_key, limited_key_per_generation_limit and limited_key_daily_limit go together", false},
		{base + "limited_key: sk_live_b\nlimited_key_per_generation_limit: 5\n", "limited_key, limited_key_per_generation_limit and limited_key_daily_limit go together", false},
		{base + "limited_key_per_generation_limit: 5\nlimited_key_daily_limit: 7\n", "limited_key, limited_key_per_generation_limit and limited_key_daily_limit go together", false},
		{base + "renamed_field_capability_id: cap_x\nrenamed_field_old_name: style\nrenamed_field_new_name: look\n", "renamed_field_capability_id, renamed_field_old_name, renamed_field_new_name and renamed_field_stops_in go together", false},
		{base + "renamed_field_stops_in: 1.3.0\n", "renamed_field_capability_id, renamed_field_old_name, renamed_field_new_name and renamed_field_stops_in go together", false},
		{base + "renamed_field_capability_id: cap_x\nrenamed_field_old_name: style\nrenamed_field_new_name: look\nrenamed_field_stops_in: \"1.3\"\n", "renamed_field_capability_id, renamed_field_old_name, renamed_field_new_name and renamed_field_stops_in: the version is MAJOR.MINOR.PATCH", false},
		{base + "ended_field_capability_id: cap_x\nended_field_old_name: style\nended_field_new_name: look\n", "ended_field_capability_id, ended_field_old_name, ended_field_new_name and ended_field_stopped_in go together", false},
		{base + "ended_field_capability_id: cap_x\nended_field_old_name: style\nended_field_new_name: look\nended_field_stopped_in: v1.2.0\n", "ended_field_capability_id, ended_field_old_name, ended_field_new_name and ended_field_stopped_in: the version is MAJOR.MINOR.PATCH", false},
		{base + "removed_enum_value: draft\n", "removed_enum_capability_id, removed_enum_field and removed_enum_value go together", false},
		{base + "removed_enum_capability_id: cap_x\nremoved_enum_field: style\n", "removed_enum_capability_id, removed_enum_field and removed_enum_value go together", false},
		{base + "saved_workflow_ids:\n  first: wf_a\n", "line 4: saved_workflow_ids.first: want a list of ids", false},
	}
	for _, tc := range tests {
		if err := spec.ValidateProfile([]byte(tc.text)); (err == nil) != tc.schemaTakes {
			t.Errorf("the schema on %q: %v", tc.text, err)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(file, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(nil, func(k string) string { return map[string]string{"MEDIASPEC_CONFIG": file}[k] })
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil {
			t.Errorf("Load and Validate take %q", tc.text)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "sk_live_") {
			t.Errorf("%q: error %q, want one line with %q and no key", tc.text, msg, tc.want)
		}
	}
}

// ProfileYAML writes what Load reads back, and what it writes fits the schema.
func TestProfileYAMLRoundTrip(t *testing.T) {
	in := Config{
		BaseURL: "http://127.0.0.1:1/api/v1", Key: "sk_live_k", ReadKey: "sk_live_r", OtherKey: "sk_live_o",
		KeySetList:          KeySetList{{Key: "sk_live_k", ReadKey: "sk_live_r", OtherKey: "sk_live_o"}, {Key: "sk_live_k2", ReadKey: "sk_live_r2", OtherKey: "sk_live_o2"}},
		RetiredCapabilityID: "actor_classic", KeyHeader: "X-API-Key", DescriptionPath: "/openapi.json",
		LivePath: "/health/live", ReadyPath: "/health/ready", Shapes: ReferenceShapes(),
		RevokedKey: "sk_live_rev", BudgetKey: "sk_live_b", BudgetKeyCredits: CreditsOf(0), DailyLimit: CreditsOf(2500),
		TimeScale: 1, Procs: 1,
	}
	out, err := in.ProfileYAML("a profile", "of a test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "# a profile\n# of a test\n") || strings.Contains(string(out), "time_scale") ||
		strings.Contains(string(out), "workspace_per_generation_limit") {
		t.Errorf("profile:\n%s", out)
	}
	if err := spec.ValidateProfile(out); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
	back := Config{TimeScale: 1, Procs: 1}
	if err := ParseConfigYAML(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, back) {
		t.Errorf("read back\n%+v\nwant\n%+v\nfrom\n%s", back, in, out)
	}
	if err := back.Validate(); err != nil {
		t.Error(err)
	}
}

// The profile's settings come from the environment and flags too; --feature adds to the file's.
func TestProfileFromEnvAndFlags(t *testing.T) {
	env := map[string]string{"MEDIASPEC_EXPIRED_KEY": "sk_live_e", "MEDIASPEC_WORKSPACE_DAILY_LIMIT": "0",
		"MEDIASPEC_FEATURES": "control"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fl := RegisterFlags(fs)
	if err := fs.Parse([]string{"--budget-key", "sk_live_b", "--budget-key-credits", "40", "--low-balance-key", "sk_live_l"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(fl, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := cfg.DailyLimit.Get(); !ok || n != 0 {
		t.Errorf("daily limit %d %t, want a declared 0", n, ok)
	}
	if n, ok := cfg.BudgetKeyCredits.Get(); !ok || n != 40 || cfg.BudgetKey != "sk_live_b" || cfg.ExpiredKey != "sk_live_e" || cfg.LowBalanceKey != "sk_live_l" {
		t.Errorf("profile keys not loaded: %+v", cfg)
	}
	if _, ok := cfg.PerGenerationLimit.Get(); ok {
		t.Error("an undeclared limit reads as declared")
	}
	if !cfg.Offers(FeatureControl) {
		t.Error("control not offered")
	}
	if (Config{ControlURL: "http://h"}).Offers(FeatureControl) != true || (Config{}).Offers(FeatureControl) {
		t.Error("control is implied by the control URL and only by it (or the list)")
	}
}

// Declared names the profile settings a configuration declares, and only those: run settings and
// the first key are not a profile; every name is a setting of Config.
func TestDeclared(t *testing.T) {
	if d := (Config{BaseURL: "http://h", Key: "sk_live_k", Budget: 5, Procs: 2}).Declared(); len(d) != 0 {
		t.Errorf("keys only declares %v", d)
	}
	c := Config{Key: "sk_live_k", ReadKey: "sk_live_r", Shapes: ReferenceShapes(), DailyLimit: CreditsOf(0), Features: FeatureList{FeatureControl}}
	if d := c.Declared(); !reflect.DeepEqual(d, []string{"read_key", "shapes", "workspace_daily_limit", "features"}) {
		t.Errorf("declared %v", d)
	}
	props := profileSchema(t)["properties"].(map[string]any)
	for _, s := range profileSettings {
		if props[s] == nil {
			t.Errorf("profile setting %s is not in the schema", s)
		}
	}
}

// A split run sends each process its configuration as JSON: a declared 0 stays declared (the
// budget key's budget of 0 was lost, and every process refused the profile), an undeclared amount
// stays undeclared.
func TestCreditsSurviveJSON(t *testing.T) {
	type holder struct{ A, B, C Credits }
	in := holder{A: CreditsOf(0), B: CreditsOf(300)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out holder
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("%s read back as %+v, want %+v", b, out, in)
	}
}

// saved_workflow_ids is one IDList from every source: a YAML list or one id, a flag given repeated
// or comma-separated, the environment comma-separated; empty parts and spaces are dropped.
func TestIDList(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, env string
		flags           []string
		want            IDList
	}{
		{"a YAML list", "saved_workflow_ids: [wf_a, wf_b]\n", "", nil, IDList{"wf_a", "wf_b"}},
		{"one YAML id", "saved_workflow_ids: wf_a\n", "", nil, IDList{"wf_a"}},
		{"a YAML id comma-separated", "saved_workflow_ids: 'wf_a, wf_b'\n", "", nil, IDList{"wf_a", "wf_b"}},
		{"flags repeated and comma-separated", "", "", []string{"--saved-workflow-id", "wf_a", "--saved-workflow-id", "wf_b,,wf_c"},
			IDList{"wf_a", "wf_b", "wf_c"}},
		{"the environment", "", " wf_a ,wf_b,", nil, IDList{"wf_a", "wf_b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(file, []byte("base_url: http://h\nkey: sk_live_a\n"+tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"MEDIASPEC_CONFIG": file, "MEDIASPEC_SAVED_WORKFLOW_IDS": tc.env}
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fl := RegisterFlags(fs)
			if err := fs.Parse(tc.flags); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(fl, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.SavedWorkflowIDs, tc.want) || cfg.SavedWorkflowIDs.String() != strings.Join(tc.want, ",") {
				t.Errorf("saved_workflow_ids = %q (%s), want %q", cfg.SavedWorkflowIDs, cfg.SavedWorkflowIDs.String(), tc.want)
			}
		})
	}
}
