package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/spec"
)

// writeVariant writes the embedded REST description with each old -> new replacement made (each
// must match exactly once) and returns the file's path.
func writeVariant(t *testing.T, name string, replacements ...string) string {
	t.Helper()
	doc := string(spec.OpenAPIYAML())
	for i := 0; i+1 < len(replacements); i += 2 {
		if n := strings.Count(doc, replacements[i]); n != 1 {
			t.Fatalf("%s: %q occurs %d times in openapi.yaml", name, replacements[i], n)
		}
		doc = strings.Replace(doc, replacements[i], replacements[i+1], 1)
	}
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// lineWith is the line of the embedded REST description that starts with prefix and is followed by
// next ("" when there is none), so an edit can take the line along whether or not it is there.
func lineWith(t *testing.T, prefix, next string) string {
	t.Helper()
	doc := string(spec.OpenAPIYAML())
	for rest := doc; ; {
		i := strings.Index(rest, "\n"+prefix)
		if i < 0 {
			return ""
		}
		line, after, _ := strings.Cut(rest[i+1:], "\n")
		if strings.HasPrefix("\n"+after, next) {
			return line + "\n"
		}
		rest = rest[i+1:]
	}
}

// exitStatus is the status the process exits with after Run returns err.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

// TestDiffOnTheContract runs diff on the contract itself and on edited copies of it: the cases
// issue 15 names.
func TestDiffOnTheContract(t *testing.T) {
	same := writeVariant(t, "same")
	for _, tc := range []struct {
		name  string
		edits []string
		want  int
		names []string // what the output must name
	}{
		{name: "same document", want: 0},
		// Annotations and prose are not the contract (interface Versioning 3): make contract-check
		// must pass while x-provenance and descriptions change.
		{name: "annotations and descriptions", want: 0, edits: []string{
			"\n    CapabilityListResponse:\n",
			"\n    CapabilityListResponse:\n      x-note: an annotation added\n",
			"        A capability list row.\n",
			"        A capability list row, reworded.\n"}},
		// The anchors are the schema names around CapabilityRow's last property, not the property's
		// own lines, which carry annotations (x-provenance) that change without changing the contract.
		{name: "additive change", want: 0, edits: []string{
			"\n    CapabilityListResponse:",
			"\n        docs_url:\n          type: string\n    CapabilityListResponse:"}},
		{name: "removed response field", want: 1, names: []string{"VER-016", "response-required-property-removed", "pricing_unit"}, edits: []string{
			"      required: [capability_id, name, description, category, output_kind, status, max_variants, pricing_unit]\n",
			"      required: [capability_id, name, description, category, output_kind, status, max_variants]\n",
			"        pricing_unit:\n          $ref: '#/components/schemas/PricingUnit'\n" + lineWith(t, "          x-provenance: \"reference: other fields of the capability list row", "\n    CapabilityListResponse:") + "    CapabilityListResponse:",
			"    CapabilityListResponse:"}},
		{name: "renamed error code", want: 1, names: []string{"VER-016", "error-code-renamed", "quota_exceeded", "quota_exhausted"}, edits: []string{
			"        - quota_exceeded\n", "        - quota_exhausted\n",
			"        quota_exceeded: {status: 429, retryable: false}\n", "        quota_exhausted: {status: 429, retryable: false}\n"}},
		{name: "narrowed bound", want: 1, names: []string{"VER-021", "request-property-max-decreased", "variants", "VER-025"}, edits: []string{
			"          minimum: 1\n          maximum: 4\n          description: |\n            Several takes",
			"          minimum: 1\n          maximum: 3\n          description: |\n            Several takes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newDoc := writeVariant(t, "new", tc.edits...)
			out, _, err := run(t, "diff", same, newDoc)
			if got := exitStatus(err); got != tc.want {
				t.Fatalf("exit %d, want %d (err %v)\n%s", got, tc.want, err, out)
			}
			for _, n := range tc.names {
				if !strings.Contains(out, n) {
					t.Errorf("output does not name %q:\n%s", n, out)
				}
			}
			out, _, err = run(t, "diff", "--format", "json", same, newDoc)
			var r struct {
				Breaking bool `json:"breaking"`
				Findings []struct {
					Rule, Verdict, Change, Path, Message string
				} `json:"findings"`
			}
			if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
				t.Fatalf("--format json is not JSON: %v\n%s", jerr, out)
			}
			if r.Breaking != (tc.want == 1) || exitStatus(err) != tc.want {
				t.Errorf("json: breaking %v, exit %d, want exit %d", r.Breaking, exitStatus(err), tc.want)
			}
			out, _, _ = run(t, "diff", "--format", "markdown", same, newDoc)
			if !strings.HasPrefix(out, "### ") {
				t.Errorf("markdown does not start with a heading:\n%s", out)
			}
		})
	}
}

func TestDiffCommandLine(t *testing.T) {
	same := writeVariant(t, "same")
	for _, args := range [][]string{
		{"diff"}, {"diff", same}, {"diff", same, same, same}, {"diff", "--format", "xml", same, same},
	} {
		if _, _, err := run(t, args...); exitStatus(err) != 2 {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
	// Could not compare: exit 2.
	if _, _, err := run(t, "diff", same, filepath.Join(t.TempDir(), "missing.yaml")); exitStatus(err) != 2 {
		t.Errorf("missing file: err %v, want exit 2", err)
	}
	// Flags after the sides.
	if _, _, err := run(t, "diff", same, same, "--format", "json"); err != nil {
		t.Errorf("flags after the sides: %v", err)
	}
}

// startMock serves the mock on a loopback port until the test ends and returns its API root and
// read key.
func startMock(t *testing.T) (baseURL, key string) {
	t.Helper()
	info := serveMock(t, mock.Config{Seed: 1, Clock: clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return info.BaseURL, info.ReadKey
}

// serveMock serves a mock made with cfg on a loopback port until the test ends and returns what it
// prints at start.
func serveMock(t *testing.T, cfg mock.Config) mock.StartInfo {
	t.Helper()
	srv, err := mock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.SetPublicURL("http://" + ln.Addr().String())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Info()
}

// TestDiffAgainstARunningMock compares the live description and capability catalogue of a running
// mock with the embedded ones: the same contract.
func TestDiffAgainstARunningMock(t *testing.T) {
	base, key := startMock(t)
	same := writeVariant(t, "same")
	out, _, err := run(t, "diff", "--key", key, base+"/openapi.json", same)
	if err != nil {
		t.Errorf("live description against openapi.yaml: %v\n%s", err, out)
	}
	// Without the key the server refuses: could not compare.
	if _, _, err := run(t, "diff", base+"/openapi.json", same); exitStatus(err) != 2 {
		t.Errorf("no key: err %v, want exit 2", err)
	}
	out, _, err = run(t, "diff", "--capabilities", "--key", key, "../../fixtures/catalog/capabilities.yaml", base)
	if err != nil {
		t.Errorf("fixtures catalogue against the mock's: %v\n%s", err, out)
	}
	out, _, err = run(t, "diff", "--capabilities", "--key", key, base, base)
	if err != nil {
		t.Errorf("the mock against itself: %v\n%s", err, out)
	}
}

// TestDiffCapabilitiesTellsRetiredFromDeleted compares an older catalogue, in which the mock's retired
// actor_classic was still available and which had one more capability, with the running mock: the
// mock answers actor_classic as retired, and the other one is gone.
func TestDiffCapabilitiesTellsRetiredFromDeleted(t *testing.T) {
	base, key := startMock(t)
	data, err := os.ReadFile("../../fixtures/catalog/capabilities.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), "    description: The first talking actor model; retired.\n    category: avatar\n    output_kind: video\n    status: retired\n",
		"    description: The first talking actor model; retired.\n    category: avatar\n    output_kind: video\n    status: available\n", 1)
	if doc == string(data) {
		t.Fatal("actor_classic is no longer retired in the fixtures catalogue")
	}
	retired := filepath.Join(t.TempDir(), "retired.yaml")
	if err := os.WriteFile(retired, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "diff", "--capabilities", "--verbose", "--key", key, retired, base)
	if err != nil || !strings.Contains(out, "VER-010 capability-retired: capabilities.actor_classic") {
		t.Errorf("retired capability: err %v\n%s", err, out)
	}
	deleted := filepath.Join(t.TempDir(), "deleted.yaml")
	doc = strings.Replace(doc, "capabilities:\n", "capabilities:\n  - capability_id: ghost_model\n    category: image\n    output_kind: image\n    status: available\n", 1)
	if err := os.WriteFile(deleted, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "diff", "--capabilities", "--key", key, deleted, base)
	if exitStatus(err) != 1 || !strings.Contains(out, "VER-023 capability-deleted: capabilities.ghost_model") {
		t.Errorf("deleted capability: exit %d\n%s", exitStatus(err), out)
	}
}

// --exceptions lets a recorded breaking change through as a note with its reason; an exception that
// matches no finding fails, and an entry without a reason is refused (exit 2).
func TestDiffExceptions(t *testing.T) {
	same := writeVariant(t, "same")
	renamed := writeVariant(t, "renamed",
		"        - quota_exceeded\n", "        - quota_exhausted\n",
		"        quota_exceeded: {status: 429, retryable: false}\n", "        quota_exhausted: {status: 429, retryable: false}\n")
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	recorded := file("recorded.yaml", "exceptions:\n  - rule: VER-016\n    change: error-code-renamed\n    path: error.code\n    reason: the old name was never released\n")
	out, _, err := run(t, "diff", "--exceptions", recorded, same, renamed)
	if exitStatus(err) != 0 || !strings.Contains(out, "recorded exception: the old name was never released") {
		t.Errorf("a recorded exception: exit %d (%v)\n%s", exitStatus(err), err, out)
	}
	if _, _, err := run(t, "diff", "--exceptions", recorded, same, same); exitStatus(err) != 1 || !strings.Contains(err.Error(), "matches no finding") {
		t.Errorf("an exception no finding matches: exit %d (%v)", exitStatus(err), err)
	}
	if _, _, err := run(t, "diff", same, renamed); exitStatus(err) != 1 {
		t.Errorf("without the exceptions: exit %d, want 1", exitStatus(err))
	}
	noReason := file("noreason.yaml", "exceptions:\n  - rule: VER-016\n    change: error-code-renamed\n")
	if _, _, err := run(t, "diff", "--exceptions", noReason, same, renamed); exitStatus(err) != 2 {
		t.Errorf("an entry without a reason: exit %d (%v), want 2", exitStatus(err), err)
	}
	empty := file("empty.yaml", "exceptions: []\n")
	if _, _, err := run(t, "diff", "--exceptions", empty, same, same); exitStatus(err) != 0 {
		t.Errorf("no exceptions, no change: exit %d (%v)", exitStatus(err), err)
	}
	// A wrong key is named, with the file's line and the keys an entry has, never a Go type.
	typo := file("typo.yaml", "exceptions:\n  - rule: VER-016\n    chnage: error-code-renamed\n    reason: r\n")
	_, _, err = run(t, "diff", "--exceptions", typo, same, renamed)
	if exitStatus(err) != 2 || err == nil || !strings.HasSuffix(err.Error(), "typo.yaml:3: entry 1: unknown key \"chnage\" (an entry has rule, change, path, reason)") ||
		strings.Contains(err.Error(), "main.") {
		t.Errorf("a misspelt key: exit %d (%v)", exitStatus(err), err)
	}
	top := file("top.yaml", "exception:\n  - rule: VER-016\n")
	if _, _, err := run(t, "diff", "--exceptions", top, same, same); exitStatus(err) != 2 || !strings.Contains(err.Error(), "top.yaml:1: unknown key \"exception\"") {
		t.Errorf("a misspelt top key: exit %d (%v)", exitStatus(err), err)
	}
}
