package catalog

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Removed enum values (interface Versioning 5: "a removed field or enum value ... happens only
// when a provider forces it ... and the refusal is invalid_config naming the field"). Control
// removes one value of a top-level config property's enum: the capability's config_schema stops
// listing it and an estimate or submit sending it is refused with invalid_config naming
// config.<field>, never mapped to another value. Reset restores every value.

// RemoveEnumValue removes value from the enum of capability id's config property field. Refusals:
// 404 not_found (unknown capability); 400 invalid_config naming field (no such property, or one
// without an enum of strings) or value (not in the enum, the property's default, the value
// example_config uses, or the last value left).
func (c *Catalog) RemoveEnumValue(id, field, value string) error {
	cp, ok := c.Fixtures().Capability(id)
	if !ok {
		return apierr.NotFound("No capability " + quote(id) + ".")
	}
	props, _ := cp.ConfigSchema["properties"].(map[string]any)
	p, _ := props[field].(map[string]any)
	enum, _ := p["enum"].([]any)
	if len(enum) == 0 {
		return apierr.InvalidConfig("field", fmt.Sprintf("%s has no config property %s with an enum.", id, quote(field)))
	}
	if !slices.Contains(enum, any(value)) {
		return apierr.InvalidConfig("value", fmt.Sprintf("%s is not a value of %s.%s.", quote(value), id, field))
	}
	if p["default"] == value || cp.ExampleConfig[field] == value {
		return apierr.InvalidConfig("value", fmt.Sprintf("%s is the default or the example_config value of %s.%s; remove another.", quote(value), id, field))
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	gone := c.st.removed[id][field]
	if slices.Contains(gone, value) {
		return nil
	}
	if len(gone)+1 >= len(enum) {
		return apierr.InvalidConfig("value", fmt.Sprintf("%s is the last value of %s.%s.", quote(value), id, field))
	}
	if c.st.removed == nil {
		c.st.removed = map[string]map[string][]string{}
	}
	if c.st.removed[id] == nil {
		c.st.removed[id] = map[string][]string{}
	}
	c.st.removed[id][field] = append(slices.Clone(gone), value)
	return nil
}

// RestoreEnumValue puts a removed value back (404 not_found when it was not removed).
func (c *Catalog) RestoreEnumValue(id, field, value string) error {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	gone := c.st.removed[id][field]
	i := slices.Index(gone, value)
	if i < 0 {
		return apierr.NotFound(fmt.Sprintf("No removed value %s of %s.%s.", quote(value), id, field))
	}
	c.st.removed[id][field] = slices.Delete(slices.Clone(gone), i, i+1)
	return nil
}

// checkRemovedValues refuses a config sending a removed enum value of capability id.
func (c *Catalog) checkRemovedValues(id string, config map[string]any) error {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	for field, gone := range c.st.removed[id] {
		if v, ok := config[field].(string); ok && slices.Contains(gone, v) {
			return apierr.InvalidConfig("config."+field, fmt.Sprintf("%s is no longer a value of %s; read config_schema for the values accepted now.", quote(v), field))
		}
	}
	return nil
}

// schemaWithoutValues copies schema with the removed values left out of their properties' enums.
func schemaWithoutValues(schema map[string]any, removed map[string][]string) map[string]any {
	out := maps.Clone(schema)
	props, _ := schema["properties"].(map[string]any)
	props = maps.Clone(props)
	for field, gone := range removed {
		p, _ := props[field].(map[string]any)
		if p == nil || len(gone) == 0 {
			continue
		}
		p = maps.Clone(p)
		enum, _ := p["enum"].([]any)
		p["enum"] = slices.DeleteFunc(slices.Clone(enum), func(v any) bool { s, _ := v.(string); return slices.Contains(gone, s) })
		props[field] = p
	}
	out["properties"] = props
	return out
}
