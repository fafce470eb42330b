package main

import (
	"context"
	"encoding/json"
	"flag"
	"github.com/mediaspec/mediaspec/conformance"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec"
	yaml "go.yaml.in/yaml/v3"
)

// mock --profile-out writes the profile of the mock's pre-made fixtures before its start line; the
// framework loads it as a keys-plus-profile target (no control API, not --reference), and a small
// run of the specs that need the profile's declarations (the key header, the probe and
// description paths) passes on it alone.
func TestMockProfileOut(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	line, done := startMockCommand(ctx, t, "--no-control", "--json", "--quiet", "--seed", "3", "--key-sets", "2", "--profile-out", profile)
	t.Cleanup(func() { cancel(); <-done })
	var info mock.StartInfo
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("start line %q: %v", line, err)
	}

	data, err := os.ReadFile(profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.ValidateProfile(data); err != nil {
		t.Errorf("%v\n%s", err, data)
	}
	if st, err := os.Stat(profile); err == nil && st.Mode().Perm()&0o077 != 0 {
		t.Errorf("the profile holds keys and is %v", st.Mode().Perm())
	}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fl := conformance.RegisterFlags(fs)
	if err := fs.Parse([]string{"--config", profile}); err != nil {
		t.Fatal(err)
	}
	cfg, err := conformance.Load(fl, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != info.BaseURL || cfg.Key != info.GenerateKey || cfg.ReadKey != info.ReadKey || cfg.OtherKey != info.OtherKey {
		t.Errorf("the profile's target and keys are not the start line's:\n%s", data)
	}
	sets, err := cfg.ShardKeySets(2)
	if err != nil || sets[1].Key != info.KeySets[1].GenerateKey {
		t.Errorf("key sets for --procs 2: %v, %v", sets, err)
	}
	if cfg.ControlURL != "" || cfg.ControlToken != "" || cfg.Reference || cfg.Strict || cfg.Budget != 0 || cfg.ReceiverListen != "" || cfg.ReceiverPublicURL != "" {
		t.Errorf("the profile declares more than the fixtures:\n%s", data)
	}
	header, description, live, ready := cfg.Named()
	if cfg.RetiredCapabilityID != "actor_classic" || header != "X-API-Key" || description != "/openapi.json" || live != "/health/live" || ready != "/health/ready" {
		t.Errorf("named: %q %q %q %q %q", cfg.RetiredCapabilityID, header, description, live, ready)
	}
	r := info.Roles
	if r == nil {
		t.Fatalf("the start line lists no role keys: %s", line)
	}
	budget, ok := cfg.BudgetKeyCredits.Get()
	if cfg.RevokedKey != r.Revoked || cfg.ExpiredKey != r.Expired || cfg.BudgetKey != r.Budget || !ok || budget != r.BudgetCredits ||
		cfg.LowBalanceKey != r.LowBalance || cfg.NoAgentAPIKey != r.NoAgentAPI || r.Revoked == "" || r.NoAgentAPI == "" ||
		cfg.GenerateOnlyKey != r.GenerateOnly || cfg.DeletedWorkspaceKey != r.DeletedWorkspace || cfg.AllowanceUsedKey != r.AllowanceUsed || r.AllowanceUsed == "" {
		t.Errorf("the profile's role keys are not the start line's:\n%s", data)
	}
	if !reflect.DeepEqual(cfg.Shapes, conformance.ReferenceShapes()) {
		t.Errorf("shapes %v, want every reference shape", cfg.Shapes)
	}

	if testing.Short() {
		return
	}
	out, code := checkInHelper(t, "--config", profile, "--label-filter", "HEALTH-001 || AUTH-006 || VER-001")
	if code != 0 || !strings.Contains(out, "mode: out of process, keys + profile") || !regexp.MustCompile(`(?m)^[1-9]\d* passed, 0 failed, 0 skipped`).MatchString(out) {
		t.Errorf("check --config %s: exit %d, want every selected spec passed:\n%s", profile, code, out)
	}
}

// A bad profile stops check before anything runs: one line naming the setting and its line, exit 2.
func TestCheckRefusesABadProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("base_url: http://127.0.0.1:1/api/v1\nkey: sk_live_x\nworkspace_daily_limit: lots\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := checkInHelper(t, "--config", bad)
	m := regexp.MustCompile(`(?m)^ERROR: (.*)$`).FindStringSubmatch(out)
	if code != 2 || m == nil || !strings.Contains(m[1], "line 3: workspace_daily_limit:") || !strings.Contains(m[1], bad) {
		t.Errorf("exit %d, want 2 and one line naming line 3's setting and the file:\n%s", code, out)
	}
}

// TestMockProfileOutTimeScale: a mock whose clock runs scaled declares its time scale, so the
// suite's waits and windows follow it; a real-time mock declares none (the default, 1).
func TestMockProfileOutTimeScale(t *testing.T) {
	for _, tc := range []struct {
		scale string
		want  float64
	}{{"10", 10}, {"1", 0}} {
		profile := filepath.Join(t.TempDir(), "profile.yaml")
		ctx, cancel := context.WithCancel(context.Background())
		_, done := startMockCommand(ctx, t, "--no-control", "--json", "--quiet", "--time-scale", tc.scale, "--profile-out", profile)
		data, err := os.ReadFile(profile)
		cancel()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			TimeScale float64 `yaml:"time_scale"`
		}
		if err := yaml.Unmarshal(data, &p); err != nil || p.TimeScale != tc.want {
			t.Errorf("--time-scale %s: the profile declares time_scale %v (%v), want %v:\n%s", tc.scale, p.TimeScale, err, tc.want, data)
		}
	}
}
