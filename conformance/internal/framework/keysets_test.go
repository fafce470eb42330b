package framework

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Key sets come from --key (the first), repeated --key-set, MEDIASPEC_KEY_SETS, key_sets in the
// YAML file and --keys-file; --procs N then needs N of them, none sharing a key.
func TestKeySetFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(file, []byte("# key sets\nk4,r4,o4\n\nk5 r5 o5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fl := RegisterFlags(fs)
	if err := fs.Parse([]string{"--base-url", "http://h", "--key", "k1", "--read-key", "r1", "--other-key", "o1",
		"--key-set", "k2,r2,o2", "--key-set", "k3,r3,o3", "--keys-file", file, "--procs", "5"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(fl, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sets, err := cfg.ShardKeySets(cfg.Procs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sets {
		got = append(got, s.Key+","+s.ReadKey+","+s.OtherKey)
	}
	if strings.Join(got, " ") != "k1,r1,o1 k2,r2,o2 k3,r3,o3 k4,r4,o4 k5,r5,o5" {
		t.Errorf("key sets %v", got)
	}
	if _, err := cfg.ShardKeySets(6); !isSetup(err) || !strings.Contains(err.Error(), "--procs 6 needs 6 key sets") {
		t.Errorf("6 processes with 5 key sets: %v", err)
	}

	// The environment and the YAML file; with no --key the first set is the run's keys.
	yml := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(yml, []byte("base_url: http://h\nkey_sets: [\"a1,b1,c1\", \"a2,b2,c2\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(nil, func(k string) string {
		return map[string]string{"MEDIASPEC_CONFIG": yml, "MEDIASPEC_PROCS": "2"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Key != "a1" || cfg.ReadKey != "b1" || cfg.OtherKey != "c1" || cfg.Procs != 2 {
		t.Errorf("the first key set is not the run's keys: %+v", cfg)
	}
	if sets, err := cfg.ShardKeySets(2); err != nil || len(sets) != 2 || sets[1].Key != "a2" {
		t.Errorf("YAML key sets: %v %v", sets, err)
	}
	cfg, err = Load(nil, func(k string) string {
		return map[string]string{"MEDIASPEC_BASE_URL": "http://h", "MEDIASPEC_KEY_SETS": "a1,b1,c1 a2,b2,c2\na3,b3,c3"}[k]
	})
	if err != nil || len(cfg.KeySetList) != 3 {
		t.Fatalf("MEDIASPEC_KEY_SETS: %+v %v", cfg.KeySetList, err)
	}

	// With the control API the processes would share the target's clock and catalogue: refused.
	ctl := Config{BaseURL: "http://h", ControlURL: "http://h", ControlToken: "t"}
	if _, err := ctl.ShardKeySets(4); !isSetup(err) || !strings.Contains(err.Error(), "--procs 4 with the control API") {
		t.Errorf("control without keys: %v", err)
	}
}

func TestKeySetsRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no keys, no control", Config{BaseURL: "http://h"}, "needs 2 key sets"},
		{"one key only", Config{Key: "k1"}, "--procs 2 needs 2 key sets, one per process, and 1 given"},
		{"shared key", Config{Key: "k1", ReadKey: "r1", KeySetList: KeySetList{{Key: "k2", ReadKey: "r1"}}}, "key sets 1 and 2 share a key"},
		{"key twice in a set", Config{Key: "k1", ReadKey: "k1"}, "uses one key twice"},
		{"sets unlike", Config{Key: "k1", ReadKey: "r1", OtherKey: "o1", KeySetList: KeySetList{{Key: "k2"}}}, "has not the same keys as key set 1"},
		{"sibling in one set only", Config{Key: "k1", SiblingKey: "s1", KeySetList: KeySetList{{Key: "k2"}}}, "a sibling key: false vs true"},
		{"sibling shared", Config{Key: "k1", SiblingKey: "s1", KeySetList: KeySetList{{Key: "k2", SiblingKey: "s1"}}}, "key sets 1 and 2 share a key"},
		{"keys with control", Config{ControlURL: "http://h", ControlToken: "t", Key: "k1", KeySetList: KeySetList{{Key: "k2"}}}, "--procs 2 with the control API"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.ShardKeySets(2)
			if !isSetup(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a setup error with %q", err, tc.want)
			}
		})
	}
	var l KeySetList
	if err := l.Set("a,b,c,d"); err != nil || l[0] != (KeySet{Key: "a", ReadKey: "b", OtherKey: "c", SiblingKey: "d"}) || l[0].String() != "a,b,c,d" {
		t.Errorf("key set with a sibling key: %v %+v", err, l)
	}
	l = nil
	for _, bad := range []string{"", "a,b,c,d,e", ",r,o"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("key set %q accepted", bad)
		}
	}
	if (Config{BaseURL: "http://h", Key: "k", Procs: MaxProcs + 1}).Validate() == nil {
		t.Error("too many processes accepted")
	}
	if _, err := Load(nil, func(k string) string { return map[string]string{"MEDIASPEC_KEYS_FILE": "/no/such/file"}[k] }); err == nil {
		t.Error("a missing keys file accepted")
	}
}

func isSetup(err error) bool {
	var se *SetupError
	return errors.As(err, &se)
}

// A shared budget asks its owner for credits and returns them there.
func TestBudgetShare(t *testing.T) {
	owner := NewBudget(10)
	b := NewBudget(0)
	b.Share(owner.Take, owner.Give)
	if err := b.Take(7); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(4); err == nil || !strings.Contains(err.Error(), "3 of 10 left") {
		t.Errorf("over the shared budget: %v", err)
	}
	b.Give(2)
	if owner.Spent() != 5 || b.Spent() != 5 {
		t.Errorf("spent: owner %d, shared %d; want 5 and 5", owner.Spent(), b.Spent())
	}
}
