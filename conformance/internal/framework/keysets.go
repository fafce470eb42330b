package framework

import (
	"errors"
	"fmt"
	"os"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// KeySet is the keys one process of a split run (mediaspec check --procs) uses: a read+generate
// key, a read-only key of the same workspace, a read+generate key of a second workspace and,
// optionally, a second read+generate key of the first key's workspace (the profile's sibling
// key). Two sets never share a key, so specs in different processes never share a workspace
// (balances, buckets, jobs in flight).
type KeySet struct {
	Key, ReadKey, OtherKey string // read+generate, read-only, second workspace's
	SiblingKey             string // a second read+generate key of Key's workspace ("": none)
}

// ParseKeySet reads KEY[,READ_KEY[,OTHER_KEY[,SIBLING_KEY]]].
func ParseKeySet(s string) (KeySet, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	if len(parts) > 4 || strings.TrimSpace(parts[0]) == "" {
		return KeySet{}, errors.New("a key set is KEY,READ_KEY,OTHER_KEY[,SIBLING_KEY] (all but the first may be left out)")
	}
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	return KeySet{Key: strings.TrimSpace(parts[0]), ReadKey: strings.TrimSpace(parts[1]), OtherKey: strings.TrimSpace(parts[2]),
		SiblingKey: strings.TrimSpace(parts[3])}, nil
}

// String is the set as ParseKeySet reads it, never with trailing empty keys.
func (ks KeySet) String() string {
	return strings.TrimRight(ks.Key+","+ks.ReadKey+","+ks.OtherKey+","+ks.SiblingKey, ",")
}

// KeySetList is the key sets given with --key-set (repeated), MEDIASPEC_KEY_SETS (sets separated
// by white space) or key_sets in the YAML file (a list). It is a flag.Value.
type KeySetList []KeySet

// String names how many sets there are, never a key.
func (l *KeySetList) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	return fmt.Sprintf("%d key sets", len(*l))
}

// Set adds the sets in s (white space separates sets).
func (l *KeySetList) Set(s string) error {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return errors.New("an empty key set")
	}
	for _, f := range fields {
		ks, err := ParseKeySet(f)
		if err != nil {
			return err
		}
		*l = append(*l, ks)
	}
	return nil
}

// UnmarshalYAML takes a list of KEY,READ_KEY,OTHER_KEY strings (or one string of them).
func (l *KeySetList) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	if n.Kind == yaml.ScalarNode {
		list = []string{n.Value}
	} else if err := n.Decode(&list); err != nil {
		return fmt.Errorf("key_sets: want a list of KEY,READ_KEY,OTHER_KEY: %w", err)
	}
	*l = nil
	for _, s := range list {
		if err := l.Set(s); err != nil {
			return fmt.Errorf("key_sets: %w", err)
		}
	}
	return nil
}

// loadKeysFile adds the sets of KeysFile to KeySetList, and makes the first set the run's keys when
// no --key is given.
func (c *Config) loadKeysFile() error {
	if c.KeysFile != "" {
		data, err := os.ReadFile(c.KeysFile)
		if err != nil {
			return fmt.Errorf("conformance: --keys-file %s: %w", c.KeysFile, unwrapPath(err))
		}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !strings.Contains(line, ",") {
				line = strings.Join(strings.Fields(line), ",")
			}
			ks, err := ParseKeySet(line)
			if err != nil {
				return fmt.Errorf("conformance: --keys-file line %d: %w", i+1, err)
			}
			c.KeySetList = append(c.KeySetList, ks)
		}
	}
	if c.Key == "" && c.ReadKey == "" && c.OtherKey == "" && len(c.KeySetList) > 0 {
		first := c.KeySetList[0]
		c.Key, c.ReadKey, c.OtherKey, c.SiblingKey = first.Key, first.ReadKey, first.OtherKey, first.SiblingKey
	}
	return nil
}

// KeySets are every key set of the configuration, in order: the keys of --key, --read-key and
// --other-key, then those of --key-set and of --keys-file (Load reads the file). A set given twice
// counts once; two sets that share a key are refused, so no key is ever shared between processes.
func (c Config) KeySets() ([]KeySet, error) {
	var all []KeySet
	if c.Key != "" {
		all = append(all, KeySet{Key: c.Key, ReadKey: c.ReadKey, OtherKey: c.OtherKey, SiblingKey: c.SiblingKey})
	}
	all = append(all, c.KeySetList...)
	var out []KeySet
	owner := map[string]int{}
next:
	for _, ks := range all {
		for _, seen := range out {
			if seen == ks {
				continue next
			}
		}
		n := len(out) + 1
		for _, k := range []string{ks.Key, ks.ReadKey, ks.OtherKey, ks.SiblingKey} {
			if k == "" {
				continue
			}
			if m, ok := owner[k]; ok {
				if m == n {
					return nil, setupErr("key set %d uses one key twice: each of its keys must be different", n)
				}
				return nil, setupErr("key sets %d and %d share a key: every process of the run needs keys of its own", m, n)
			}
			owner[k] = n
		}
		out = append(out, ks)
	}
	return out, nil
}

// ShardKeySets checks that a run split over procs processes has what each needs and returns the
// key set of each: every process needs a set of its own (--key, --key-set, --keys-file), each with
// the same kinds of keys as the first. A split run is keys only: with the control API the
// processes would share the target's one clock and catalogue.
func (c Config) ShardKeySets(procs int) ([]*KeySet, error) {
	if c.ControlURL != "" {
		return nil, setupErr("--procs %d with the control API: specs move the target's one clock and change its one catalogue (prices, templates, what is offered), which every process would share, so one process's spec would fail another's; run with the control API in one process, or keys only over several", procs)
	}
	sets, err := c.KeySets()
	if err != nil {
		return nil, err
	}
	out := make([]*KeySet, procs)
	if len(sets) == 0 && c.OtherKey == "" && c.ReadKey == "" {
		return nil, setupErr("--procs %d needs %d key sets (--key-set KEY,READ_KEY,OTHER_KEY, repeated, or --keys-file)", procs, procs)
	}
	if len(sets) < procs {
		return nil, setupErr("--procs %d needs %d key sets, one per process, and %d given: add --key-set KEY,READ_KEY,OTHER_KEY (or lines of --keys-file) until there are %d; processes never share a key", procs, procs, len(sets), procs)
	}
	first := sets[0]
	for i := range procs {
		ks := sets[i]
		if (ks.ReadKey == "") != (first.ReadKey == "") || (ks.OtherKey == "") != (first.OtherKey == "") || (ks.SiblingKey == "") != (first.SiblingKey == "") {
			return nil, setupErr("key set %d has not the same keys as key set 1 (a read key: %t vs %t; an other key: %t vs %t; a sibling key: %t vs %t): give every set the same kinds of keys",
				i+1, ks.ReadKey != "", first.ReadKey != "", ks.OtherKey != "", first.OtherKey != "", ks.SiblingKey != "", first.SiblingKey != "")
		}
		out[i] = &ks
	}
	return out, nil
}
