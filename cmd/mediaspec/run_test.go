package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"nope"}, {"rules", "--level", "OUGHT"}, {"rules", "--area", "NOPE"}, {"rules", "--need", "magic"},
		{"rules", "--format", "xml"}, {"spec", "--format", "xml"}, {"rules", "extra"}, {"rules", "--unobservable", "--observable"},
		{"spec", "--no-such-flag"},
	} {
		_, _, err := run(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

func TestHelpListsOnlyWorkingCommands(t *testing.T) {
	out, _, err := run(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	for name := range commands() {
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("help does not list %s", name)
		}
	}
}

func TestSpecPrintsTheEmbeddedDocuments(t *testing.T) {
	out, _, err := run(t, "spec")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(spec.OpenAPIYAML()) {
		t.Error("spec does not print openapi.yaml as written")
	}
	out, _, err = run(t, "spec", "--control")
	if err != nil || out != string(spec.ControlYAML()) {
		t.Errorf("spec --control: %v", err)
	}
	out, _, err = run(t, "spec", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Info.Version != spec.Version {
		t.Errorf("spec --format json: version %q, err %v", doc.Info.Version, err)
	}
}

func TestRulesFilters(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "rules")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "\n") || !strings.Contains(out, "rules\n") {
		t.Errorf("no count line in %q", out[len(out)-40:])
	}
	lines := strings.Count(out, "\n") - 1
	if lines != len(cat.Rules) {
		t.Errorf("rules printed %d lines, catalogue has %d rules", lines, len(cat.Rules))
	}
	first := cat.Rules[0]
	out, _, err = run(t, "rules", "--area", strings.ToLower(first.Area()), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rules []spec.Rule
	if err := json.Unmarshal([]byte(out), &rules); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("--area returned nothing")
	}
	for _, r := range rules {
		if r.Area() != first.Area() {
			t.Errorf("--area %s returned %s", first.Area(), r.ID)
		}
	}
	out, _, err = run(t, "rules", "--id", strings.ToLower(first.ID))
	if err != nil || !strings.Contains(out, first.Statement[:min(20, len(first.Statement))]) {
		t.Errorf("--id %s: %v\n%s", first.ID, err, out)
	}
	if _, _, err := run(t, "rules", "--id", "NOPE-999"); err == nil {
		t.Error("--id of a missing rule succeeded")
	}
	out, _, err = run(t, "rules", "--unobservable", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	rules = nil
	_ = json.Unmarshal([]byte(out), &rules)
	if len(rules) == 0 {
		t.Error("no unobservable rules listed")
	}
	for _, r := range rules {
		if r.Unobservable == "" {
			t.Errorf("--unobservable listed observable %s", r.ID)
		}
	}
	out, _, err = run(t, "rules", "--areas")
	if err != nil || !strings.Contains(out, "total") {
		t.Errorf("--areas: %v %q", err, out)
	}
}

// The conventions a person expects of a command line: --version, -h that succeeds and prints to
// stdout, a bad flag reported once (by main, from the error) and every flag's environment name.
func TestCommandLineConventions(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		out, _, err := run(t, args...)
		if err != nil || !strings.HasPrefix(out, "mediaspec ") || !strings.Contains(out, "(contract ") {
			t.Errorf("%v: %q, %v", args, out, err)
		}
	}
	for name := range commands() {
		out, errOut, err := run(t, name, "--help")
		if err != nil || !strings.Contains(out, "usage: mediaspec "+name) || errOut != "" {
			t.Errorf("%s --help: err %v, stdout %.60q, stderr %.60q", name, err, out, errOut)
		}
	}
	_, errOut, err := run(t, "check", "--no-such-flag")
	var ue usageError
	if !errors.As(err, &ue) || errOut != "" || !strings.Contains(ue.msg, "-no-such-flag") {
		t.Errorf("a bad flag: err %v, stderr %q: want one usage error and nothing printed", err, errOut)
	}
	for name, envs := range map[string][]string{
		"check":   {"MEDIASPEC_BASE_URL", "MEDIASPEC_KEY", "MEDIASPEC_CONFIG", "MEDIASPEC_REQUEST_TIMEOUT", "MEDIASPEC_TIMEOUT"},
		"mock":    {"MEDIASPEC_MOCK_ADDR", "MEDIASPEC_MOCK_SEED"},
		"receive": {"MEDIASPEC_"},
	} {
		out, _, _ := run(t, name, "-h")
		for _, env := range envs {
			if !strings.Contains(out, "[$"+env) {
				t.Errorf("%s -h does not name $%s", name, env)
			}
		}
	}
}

// A build without -ldflags says the release of its source tree, never "dev": a copy or submission
// of the repository may carry no git tag.
func TestVersionIsTheRelease(t *testing.T) {
	if version != "" {
		t.Skip("built with -ldflags -X main.version")
	}
	if got := Version(); got != release || !releaseVersion().MatchString(got) {
		t.Errorf("Version() = %q, want the release %q (vX.Y.Z)", got, release)
	}
	out, _, err := run(t, "--version")
	if err != nil || !strings.HasPrefix(out, "mediaspec "+release+" (") {
		t.Errorf("--version: %q, %v", out, err)
	}
}
