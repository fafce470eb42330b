package catalogue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Config keys the interface text does not name, read from the target's catalogue.
//
// The text names some config keys (count, voiceId, voice_audio, template_id, aspect_ratio as the
// key actor_ultra does not have, source_video, start_frame, reference_images and the { assetId,
// alias, role } of a file object); the specs send those as named. It names no key for a
// capability's free text: "submit tts with the script and voice_id", "actor_ultra with the same
// script". A capability detail gives "the JSON Schema (config_schema) a config must satisfy and
// the smallest valid config (example_config)", and "example_config values (the example always
// validates)": the specs build every config from those and find the key of the free text in the
// schema (textKeyOf), never assuming the reference's "script" or "prompt".

// configShape is what the suite reads of a capability to build its configs.
type configShape struct {
	id      string
	schema  map[string]any // config_schema
	example map[string]any // example_config
	textKey string         // the key of the free text; "" when textKeyOf found none
	why     string         // why textKey is "" (names the capability)
}

// shapeOf reads capability id's detail once per run (Client.RunMemo: a config shape is the same
// for every workspace) and returns its config shape. A capability whose detail does not read 200
// is a state the target lacks (the spec skips with the reason; it fails against the reference).
func shapeOf(ctx context.Context, c *framework.Client, id string) configShape {
	GinkgoHelper()
	return c.RunMemo("config shape "+id, func() any {
		r := c.Get(ctx, "/capabilities/"+id)
		if r.Status != http.StatusOK {
			c.Lacks("capability %s's detail answers %d: its config_schema and example_config, which give its config keys, "+
				"cannot be read", id, r.Status)
		}
		return shapeFromDetail(View(r))
	}).(configShape)
}

// shapeFromDetail is the config shape of a capability detail answer.
func shapeFromDetail(d *framework.Response) configShape {
	GinkgoHelper()
	cs := configShape{id: d.String("capability_id"), schema: answer.ObjectAt(d, "config_schema"),
		example: answer.ObjectAt(d, "example_config")}
	var err error
	cs.textKey, err = textKeyOf(cs.schema, cs.example)
	if err != nil {
		cs.why = fmt.Sprintf("capability %s: %v", cs.id, err)
	}
	return cs
}

// textKeyOf finds the key of a config's free text (the script a tts or actor capability speaks,
// the prompt of a model) in its config_schema. The rule: a property of config_schema.properties
//   - whose type is "string",
//   - with no enum, const, pattern or format (those are choices, ids, dates or addresses, not free
//     text),
//   - whose name is not an id (its last word, split at non-letters and camelCase humps, is not
//     "id"),
//   - that is not deprecated (an old name is optional anyway),
//   - and that a config must carry: listed in config_schema.required, or in the required list of
//     a branch of its top-level oneOf or anyOf (actor_ultra takes a script or a recording).
//
// One such property is the key. Among several, the one example_config holds as a string, if
// exactly one does. When none is required (a schema may require nothing at the top, its text
// letting a script or a recording drive it), the key is the one property meeting the first four
// conditions that example_config holds as a string, if exactly one does. Otherwise: an error
// saying so, never a guess.
func textKeyOf(schema, example map[string]any) (string, error) {
	required := map[string]bool{}
	addRequired := func(s map[string]any) {
		list, _ := s["required"].([]any)
		for _, v := range list {
			if name, ok := v.(string); ok {
				required[name] = true
			}
		}
	}
	addRequired(schema)
	for _, kw := range []string{"oneOf", "anyOf"} {
		branches, _ := schema[kw].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				addRequired(bm)
			}
		}
	}
	props, _ := schema["properties"].(map[string]any)
	var found, plain []string // required free-text properties; free-text properties
	for name, v := range props {
		p, _ := v.(map[string]any)
		if p == nil || p["type"] != "string" || p["deprecated"] == true {
			continue
		}
		if slices.ContainsFunc([]string{"enum", "const", "pattern", "format"}, func(k string) bool { _, has := p[k]; return has }) {
			continue
		}
		if words := keyWords(name); len(words) > 0 && words[len(words)-1] == "id" {
			continue
		}
		plain = append(plain, name)
		if required[name] {
			found = append(found, name)
		}
	}
	sort.Strings(found)
	sort.Strings(plain)
	heldOf := func(names []string) []string {
		var held []string
		for _, name := range names {
			if _, ok := example[name].(string); ok {
				held = append(held, name)
			}
		}
		return held
	}
	if len(found) > 1 {
		held := heldOf(found)
		if len(held) != 1 {
			return "", fmt.Errorf("config_schema has several required free-text properties (%s) and example_config holds %d "+
				"of them: which one is the script or prompt is ambiguous", strings.Join(found, ", "), len(held))
		}
		return held[0], nil
	}
	if len(found) == 1 {
		return found[0], nil
	}
	held := heldOf(plain)
	switch {
	case len(held) == 1:
		return held[0], nil
	case len(held) > 1:
		return "", fmt.Errorf("config_schema has no required free-text property and example_config holds several (%s): "+
			"which one is the script or prompt is ambiguous", strings.Join(held, ", "))
	}
	return "", errors.New("config_schema has no required free-text property (a string with no enum, const, pattern or format, " +
		"not an id) and example_config holds none: no key for a script or prompt")
}

// ScriptKey is the config key of capability id's script, read from its schema (textKeyOf). When
// the schema gives none unambiguously, the target lacks what the spec needs: the spec skips with
// the reason naming the capability (and fails against the reference mock, which has one).
func ScriptKey(ctx context.Context, c *framework.Client, id string) string {
	GinkgoHelper()
	cs := shapeOf(ctx, c, id)
	if cs.textKey == "" {
		c.Lacks("the key of the script in a config is unknown: %s", cs.why)
	}
	return cs.textKey
}

// WithChanges is a copy of base with changes applied: a nil value removes the key.
func WithChanges(base, changes map[string]any) map[string]any {
	cfg := Clone(base)
	for k, v := range changes {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	return cfg
}

// ExampleWith is capability id's example_config (the smallest valid config) with changes (a nil
// value removes the key).
func ExampleWith(ctx context.Context, c *framework.Client, id string, changes map[string]any) map[string]any {
	GinkgoHelper()
	return WithChanges(shapeOf(ctx, c, id).example, changes)
}

// ScriptConfig is a config of capability id speaking script under its script key: its
// example_config with the script set. When example_config does not hold the script (it takes
// another branch of a oneOf, say a recording), the config is the script alone with the keys the
// schema requires of every config.
func ScriptConfig(ctx context.Context, c *framework.Client, id, script string) map[string]any {
	GinkgoHelper()
	key := ScriptKey(ctx, c, id)
	cs := shapeOf(ctx, c, id)
	if _, held := cs.example[key]; held {
		return WithChanges(cs.example, map[string]any{key: script})
	}
	cfg := map[string]any{key: script}
	list, _ := cs.schema["required"].([]any)
	for _, v := range list {
		if name, ok := v.(string); ok && name != key {
			if ev, has := cs.example[name]; has {
				cfg[name] = ev
			}
		}
	}
	return Clone(cfg)
}

// TTSConfig is a tts config speaking a short, unique script.
func TTSConfig(ctx context.Context, c *framework.Client) map[string]any {
	GinkgoHelper()
	return ScriptConfig(ctx, c, "tts", "Fresh coffee, every morning. Batch "+framework.RandomHex(6)+".")
}

// TextKey is the key of d's free text (textKeyOf on its detail), "" when there is none.
func TextKey(d *framework.Response) string {
	GinkgoHelper()
	k, _ := textKeyOf(answer.ObjectAt(d, "config_schema"), answer.ObjectAt(d, "example_config"))
	return k
}

// keyWords splits a key into lowercase words at non-letters, digits and camelCase humps.
func keyWords(k string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range k {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		case unicode.IsLetter(r):
			cur = append(cur, r)
			prevLower = true
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}
