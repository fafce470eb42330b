package wrongservers

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// TestTable: every wrong server has a unique name, a mistake, a change, and rules that exist in
// the catalogue and are observable (an unobservable rule cannot kill anything).
func TestTable(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)+$`)
	seen := map[string]bool{}
	for _, s := range All() {
		if !name.MatchString(s.Name) || seen[s.Name] {
			t.Errorf("%q: want a unique area-mistake name", s.Name)
		}
		seen[s.Name] = true
		if s.Mistake == "" || (s.API == nil && s.Hooks == nil) || len(s.Rules) == 0 {
			t.Errorf("%s: want a mistake, rules and an API or Hooks change", s.Name)
		}
		for _, id := range s.Rules {
			r, ok := cat.Get(id)
			switch {
			case !ok:
				t.Errorf("%s: rule %s is not in spec/rules.yaml", s.Name, id)
			case !r.Observable():
				t.Errorf("%s: rule %s is unobservable", s.Name, id)
			}
		}
	}
	if len(seen) < 60 {
		t.Errorf("%d wrong servers, want at least 60", len(seen))
	}
}

// buildBinary builds cmd/mediaspec into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot build the mediaspec binary")
	}
	bin := filepath.Join(t.TempDir(), "mediaspec")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/mediaspec/mediaspec/cmd/mediaspec").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSmoke is the pass in small, for make test: through the unchanged proxy the suite passes
// AUTH-001 (the baseline of one filter), and it kills the server that answers the balance without
// a key. The whole pass is make wrong-servers.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	ctx := context.Background()
	dir := t.TempDir()

	base := Check(ctx, bin, Server{Name: "baseline", Rules: []string{"AUTH-001"}}, filepath.Join(dir, "baseline"))
	if base.Err != nil || len(base.Failed) > 0 || !slices.Contains(base.Passed, "AUTH-001") {
		t.Fatalf("baseline through the unchanged proxy: verdict %s, failed %v, passed %v, err %v (%s)", base.Verdict, base.Failed, base.Passed, base.Err, base.Spec)
	}
	i := slices.IndexFunc(All(), func(s Server) bool { return s.Name == "auth-open-balance" })
	if i < 0 {
		t.Fatal("no auth-open-balance in the table")
	}
	res := Check(ctx, bin, All()[i], filepath.Join(dir, "wrong"))
	if res.Verdict != Killed || !strings.Contains(res.Spec, "401") {
		t.Fatalf("auth-open-balance: verdict %s (%v), spec %q; want KILLED by a 401 spec", res.Verdict, res.Err, res.Spec)
	}
}

// TestEveryArea: every rule area of spec/rules.yaml with an observable rule has at least one wrong
// server in the table (issue 37 item 4), so the suite's power is measured in every area. An area
// whose rules are all unobservable (the client duties the mock's audit watches) cannot kill
// anything and is exempt.
func TestEveryArea(t *testing.T) {
	cat, err := spec.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	observable := map[string]bool{}
	for _, r := range cat.Rules {
		if r.Observable() {
			observable[r.Area()] = true
		}
	}
	covered := map[string]bool{}
	for _, s := range All() {
		for _, id := range s.Rules {
			if r, ok := cat.Get(id); ok {
				covered[r.Area()] = true
			}
		}
	}
	for _, area := range cat.AreaNames() {
		if observable[area] && !covered[area] {
			t.Errorf("area %s (%s) has observable rules but no wrong server in the table", area, cat.Areas[area])
		}
	}
}
