package wrongservers

import (
	"net/http"
	"regexp"
)

// Legal variants of config keys: the interface text names no key for a capability's script
// ("submit tts with the script and voice_id"), so a server may call it anything its
// config_schema and example_config say.

// configKeyVariants are the legal variants of config keys (LegalVariants appends them).
func configKeyVariants() []Variant {
	return []Variant{
		{
			Name: "script-key-renamed",
			Change: "the script is config key text in every capability (tts, actor_ultra, the other actors, presets) and workflow template input: " +
				"renamed in config_schema (properties, required, oneOf branches), example_config, inputs_schema, example_inputs and refusals; " +
				"mapped back on the way in (estimates, submits, invokes, control's saved workflows and app jobs), where a config sending script sends an unknown key",
			Allows: "Capability: the detail gives the config_schema a config must satisfy and the smallest valid config; " +
				"POST /generations 6 names no config key for the script; workflow request shapes: not shown",
			API: renameConfigKey("script", "text"), Filter: "",
		},
		{
			Name: "other-config-keys",
			Change: "a model's prompt is config key idea, its duration length, and the list setting that runs once per value is locales (languages in the mock), " +
				"in every capability and workflow template input, renamed and mapped back as script-key-renamed does",
			Allows: "POST /generations 4 and 7 name a list setting and a prompt, and the estimate a duration, but no config key for them; the detail's config_schema gives the keys",
			API:    chainWraps(renameConfigKey("prompt", "idea"), renameConfigKey("duration", "length"), renameConfigKey("languages", "locales")), Filter: "",
		},
	}
}

// renameConfigKey makes to the name of the mock's config key (and workflow input) from: answers
// show to where the mock shows from, and requests reach the mock with to as from. A client sending
// from sends a key the variant's schemas do not list: it reaches the mock as an unknown key
// (hidden), and the refusal names from again.
func renameConfigKey(from, to string) Wrap {
	hidden := "legal_unlisted_" + from
	configCalls := func(r *http.Request) bool {
		return estimate(r) || submitRoute(r) || invokeRoute(r) ||
			controlRoute(http.MethodPost, "/workspaces/[^/]+/(workflows|generations)")(r)
	}
	inward := rewriteBody(configCalls, func(d map[string]any) bool {
		changed := mapConfigKey(obj(d, "config"), from, to, hidden)
		changed = mapConfigKey(obj(d, "inputs"), from, to, hidden) || changed
		for _, n := range rows(d, "nodes") {
			changed = mapConfigKey(obj(n, "config"), from, to, hidden) || changed
		}
		return changed
	})
	shown := docs(route(http.MethodGet, "/(capabilities|presets|workflows)(/.*)?"), success, func(_ *http.Request, _ *answer, d map[string]any) {
		eachObject(d, func(o map[string]any) {
			for schemaKey, exampleKey := range map[string]string{"config_schema": "example_config", "inputs_schema": "example_inputs"} {
				schema, _ := o[schemaKey].(map[string]any)
				if props, _ := schema["properties"].(map[string]any); props[from] == nil || props[to] != nil {
					continue
				}
				renameInSchema(schema, from, to)
				if ex, _ := o[exampleKey].(map[string]any); ex != nil {
					if v, has := ex[from]; has {
						delete(ex, from)
						ex[to] = v
					}
				}
			}
		})
	})
	// A refusal names to where the mock names from ("config.script: got number, want string"),
	// and from where the mock names hidden.
	word, unlisted := regexp.MustCompile(`\b`+regexp.QuoteMeta(from)+`\b`), regexp.MustCompile(regexp.QuoteMeta(hidden))
	refusals := errorsWith(configCalls, "", func(_ *http.Request, _ *answer, e map[string]any) {
		renameInStrings(e, func(s string) string { return unlisted.ReplaceAllString(word.ReplaceAllString(s, to), from) })
	})
	return chainWraps(inward, shown, refusals)
}

// invokeRoute matches both workflow invokes.
var invokeRoute = route(http.MethodPost, "/workflows/(templates/)?[^/]+/invoke")

// mapConfigKey renames m's key to to from and its key from to hidden (a key the mock does not know),
// reporting whether it changed m.
func mapConfigKey(m map[string]any, from, to, hidden string) bool {
	if m == nil {
		return false
	}
	vOld, hasOld := m[from]
	vNew, hasNew := m[to]
	if !hasOld && !hasNew {
		return false
	}
	delete(m, from)
	delete(m, to)
	if hasOld {
		m[hidden] = vOld
	}
	if hasNew {
		m[from] = vNew
	}
	return true
}

// renameInSchema renames property from to to in an object schema: in properties and in the
// required lists of the schema and of its oneOf, anyOf and allOf branches (which constrain the
// same object).
func renameInSchema(schema map[string]any, from, to string) {
	if props, ok := schema["properties"].(map[string]any); ok {
		if v, has := props[from]; has {
			delete(props, from)
			props[to] = v
		}
	}
	if req, ok := schema["required"].([]any); ok {
		for i, v := range req {
			if v == from {
				req[i] = to
			}
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		branches, _ := schema[kw].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				renameInSchema(bm, from, to)
			}
		}
	}
}

// renameInStrings replaces every string inside v (values, not keys) with edit's.
func renameInStrings(v any, edit func(string) string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok {
				x[k] = edit(s)
			} else {
				renameInStrings(c, edit)
			}
		}
	case []any:
		for i, c := range x {
			if s, ok := c.(string); ok {
				x[i] = edit(s)
			} else {
				renameInStrings(c, edit)
			}
		}
	}
}
