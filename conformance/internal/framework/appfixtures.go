package framework

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	yaml "go.yaml.in/yaml/v3"
)

// Fixtures the operator makes in their app for the workflow and long-list specs (T1): a saved
// workflow per key set (saved_workflow_ids) and a workspace with long lists of its own
// (long_lists_key, a key role: roles.go).

// IDList is a list of ids: a flag given repeated or comma-separated, an environment variable
// (comma-separated) or a YAML list (or one id). Ids are no secret: String shows them.
type IDList []string

// String is the ids, comma-separated.
func (l *IDList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set adds the comma-separated ids of s, in order.
func (l *IDList) Set(s string) error {
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			*l = append(*l, id)
		}
	}
	return nil
}

// UnmarshalYAML reads a list of ids (or one id).
func (l *IDList) UnmarshalYAML(n *yaml.Node) error {
	var list []string
	if n.Kind == yaml.ScalarNode {
		list = []string{n.Value}
	} else if err := n.Decode(&list); err != nil {
		return fmt.Errorf("line %d: want a list of ids", n.Line)
	}
	*l = nil
	for _, id := range list {
		if err := l.Set(id); err != nil {
			return err
		}
	}
	return nil
}

// SavedWorkflowID is the profile's saved workflow of the run's key set (saved_workflow_ids: one per
// key set, the first Key's; a process of a split run is given its own set's): a saved workflow of
// Key's workspace taking no inputs, which the operator made in their app (the public API makes
// none). It skips the spec, naming the setting, when the profile declares none.
func (s *Spec) SavedWorkflowID() string {
	GinkgoHelper()
	if len(s.f.cfg.SavedWorkflowIDs) == 0 {
		SkipFor(NotDeclared("unsupported: needs a saved workflow of the key's workspace, which only the control API or the operator's app makes: " +
			"set saved_workflow_ids in the profile (one per key set, each taking no inputs, of two or more steps)"))
	}
	return s.f.cfg.SavedWorkflowIDs[0]
}
