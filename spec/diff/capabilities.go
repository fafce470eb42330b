package diff

import (
	"fmt"
	"sort"
)

// Capability is the part of a capability the versioning rules cover.
type Capability struct {
	ID           string         `json:"capability_id"` // the capability id
	Category     string         `json:"category"`      // its catalogue category (never changes)
	OutputKind   string         `json:"output_kind"`   // image, video, audio or text (never changes)
	Status       string         `json:"status"`        // available, coming_soon, requires_plan, retired, ...
	ConfigSchema map[string]any `json:"config_schema"` // the JSON Schema of its config
}

// Catalogue is a set of capabilities, keyed by id, with the contract version it belongs to.
type Catalogue struct {
	Name    string // where the catalogue was read from
	Version string // the contract version it belongs to
	// Capabilities lists every capability the side knows, retired ones included (status retired).
	Capabilities map[string]Capability
	// Retired answers whether a capability missing from Capabilities is retired rather than
	// deleted (a server omits retired capabilities from its list). Nil means "not retired".
	Retired func(id string) (bool, error)
}

// ParseCatalogue reads a capability catalogue file (YAML or JSON): an object with a capabilities
// list (the fixtures catalogue, or a GET /capabilities page with each config_schema filled in) and
// an optional version, or a bare list. A row's id is capability_id (or id); rows with
// offered_to_agents: false are left out.
func ParseCatalogue(name string, data []byte) (*Catalogue, error) {
	doc, err := decodeAny(data)
	if err != nil {
		return nil, compareErrorf("%s: %w", name, err)
	}
	v, root := doc, asMap(doc)
	if root != nil {
		v = root["capabilities"]
	}
	rows, ok := v.([]any)
	if !ok {
		return nil, compareErrorf("%s: no capabilities list", name)
	}
	cat := &Catalogue{Name: name, Capabilities: map[string]Capability{}}
	if v := root["version"]; v != nil {
		cat.Version = fmt.Sprint(v)
	}
	for i, r := range rows {
		m := asMap(r)
		// The fixtures catalogue holds capabilities the agent API never shows; they are not contract.
		if m["offered_to_agents"] == false {
			continue
		}
		id := str(first(m["capability_id"], m["id"]))
		if id == "" {
			return nil, compareErrorf("%s: capability %d has no capability_id", name, i)
		}
		cat.Capabilities[id] = Capability{ID: id, Category: str(m["category"]), OutputKind: str(m["output_kind"]),
			Status: str(m["status"]), ConfigSchema: asMap(m["config_schema"])}
	}
	return cat, nil
}

func first(vs ...any) any {
	for _, v := range vs {
		if v != nil && v != "" {
			return v
		}
	}
	return nil
}

// Capabilities compares two capability catalogues by the versioning rules: a removed capability is
// retired, never deleted; output_kind and category never change; config schemas change only as the
// rules allow.
func Capabilities(old, new *Catalogue) (*Report, error) {
	c := &collector{}
	newV, newOK := parseVersion(new.Version)
	walk := &schemaWalk{c: c, full: true, newVersion: newV, newVersionOK: newOK}
	ids := make([]string, 0, len(old.Capabilities))
	for id := range old.Capabilities {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		o := old.Capabilities[id]
		p := "capabilities." + id
		n, ok := new.Capabilities[id]
		if !ok {
			if o.Status == "retired" {
				continue
			}
			retired := false
			if new.Retired != nil {
				var err error
				if retired, err = new.Retired(id); err != nil {
					return nil, compareErrorf("%s: %w", new.Name, err)
				}
			}
			if retired {
				c.add(RuleRetired, Compatible, "capability-retired", p,
					"capability %s retired (left the list; requests get capability_unavailable, retired)", id)
			} else {
				c.add(RuleNotDeleted, Breaking, "capability-deleted", p, "capability %s deleted: a removed capability is retired, never deleted", id)
			}
			continue
		}
		if o.Status == "retired" {
			if n.Status != "retired" {
				c.add(RuleAdditive, Compatible, "capability-unretired", p, "capability %s is back, status %s", id, n.Status)
			}
			continue
		}
		if n.Status != o.Status {
			if n.Status == "retired" {
				c.add(RuleRetired, Compatible, "capability-retired", p+".status", "capability %s retired (status %s -> retired)", id, o.Status)
				continue
			}
			c.add(RuleContract, Note, "status-changed", p+".status", "status of capability %s changed, %s -> %s", id, o.Status, n.Status)
		}
		if n.OutputKind != o.OutputKind {
			c.add(RuleContract, Breaking, "output-kind-changed", p+".output_kind",
				"output_kind of capability %s changed, %s -> %s", id, o.OutputKind, n.OutputKind)
		}
		if n.Category != o.Category {
			c.add(RuleContract, Breaking, "category-changed", p+".category",
				"category of capability %s changed, %s -> %s", id, o.Category, n.Category)
		}
		walk.compare(p+".config", o.ConfigSchema, n.ConfigSchema)
	}
	added := []string{}
	for id, n := range new.Capabilities {
		if _, ok := old.Capabilities[id]; !ok && n.Status != "retired" {
			added = append(added, id)
		}
	}
	sort.Strings(added)
	for _, id := range added {
		c.add(RuleAdditive, Compatible, "capability-added", "capabilities."+id, "new capability %s", id)
	}
	return c.finish("capabilities", Side{Name: old.Name, Version: old.Version}, Side{Name: new.Name, Version: new.Version})
}
