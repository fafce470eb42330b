package catalogue

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTextKeyOf(t *testing.T) {
	cases := []struct {
		name, schema, example string
		want                  string // "" when textKeyOf must refuse to pick
		errHas                string
	}{
		{name: "tts", want: "script",
			schema: `{"type":"object","required":["script"],"properties":{"script":{"type":"string","maxLength":5000},` +
				`"voiceId":{"type":"string","pattern":"^voc_[0-9a-f]{32}$"},"speed":{"type":"number"}}}`,
			example: `{"script":"Hello."}`},
		{name: "renamed", want: "text",
			schema:  `{"type":"object","required":["text"],"properties":{"text":{"type":"string"},"voiceId":{"type":"string","pattern":"^voc_"}}}`,
			example: `{"text":"Hello."}`},
		{name: "required in a oneOf branch (actor_ultra)", want: "script",
			schema: `{"type":"object","oneOf":[{"required":["script"]},{"required":["voice_audio"]}],` +
				`"properties":{"script":{"type":"string"},"voice_audio":{"type":"array","items":{"type":"string"}},` +
				`"expression":{"type":"string","enum":["calm"]}}}`,
			example: `{"voice_audio":["ast_00000000000000000000000000000000"]}`},
		{name: "ids, enums, formats and optional strings are not free text", want: "prompt",
			schema: `{"type":"object","required":["template_id","prompt","style","when","voiceId"],` +
				`"properties":{"template_id":{"type":"string"},"voiceId":{"type":"string"},"prompt":{"type":"string"},` +
				`"style":{"type":"string","enum":["a"]},"when":{"type":"string","format":"date-time"},"negative_prompt":{"type":"string"}}}`,
			example: `{"prompt":"x"}`},
		{name: "deprecated old name", want: "text",
			schema: `{"type":"object","required":["text","script"],"properties":{"text":{"type":"string"},"script":{"type":"string",` +
				`"deprecated":true}}}`,
			example: `{"text":"x"}`},
		{name: "two, the example holds one", want: "product",
			schema:  `{"type":"object","required":["product","audience"],"properties":{"product":{"type":"string"},"audience":{"type":"string"}}}`,
			example: `{"product":"x","audience":5}`},
		{name: "two, ambiguous", errHas: "ambiguous",
			schema:  `{"type":"object","required":["product","audience"],"properties":{"product":{"type":"string"},"audience":{"type":"string"}}}`,
			example: `{"product":"x","audience":"y"}`},
		{name: "none", errHas: "no required free-text property",
			schema:  `{"type":"object","required":["mood"],"properties":{"mood":{"type":"string","enum":["upbeat"]},"script":{"type":"string"}}}`,
			example: `{"mood":"upbeat"}`},
		{name: "nothing required, the example holds the script (an outside actor_ultra)", want: "script",
			schema: `{"type":"object","properties":{"script":{"type":"string"},"voice_audio":{"type":"string"},` +
				`"voiceId":{"type":"string"},"expression":{"type":"string","enum":["calm"]},"mode":{"type":"string","const":"x"}}}`,
			example: `{"script":"Hello there.","voiceId":"voc_1","expression":"calm","mode":"x"}`},
		{name: "nothing required, the example holds two free texts", errHas: "ambiguous",
			schema:  `{"type":"object","properties":{"script":{"type":"string"},"caption":{"type":"string"}}}`,
			example: `{"script":"a","caption":"b"}`},
		{name: "nothing required, the example holds only a deprecated or patterned string", errHas: "example_config holds none",
			schema: `{"type":"object","properties":{"text":{"type":"string","deprecated":true},"ref":{"type":"string",` +
				`"pattern":"^ast_"},"script":{"type":"string"}}}`,
			example: `{"text":"a","ref":"ast_1"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var schema, example map[string]any
			if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.example), &example); err != nil {
				t.Fatal(err)
			}
			got, err := textKeyOf(schema, example)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || got != "" {
					t.Fatalf("textKeyOf = %q, %v; want an error saying %q", got, err, tc.errHas)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("textKeyOf = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestWithChanges(t *testing.T) {
	base := map[string]any{"script": "a", "speed": 1}
	got := WithChanges(base, map[string]any{"script": "b", "speed": nil, "voiceId": "voc_x"})
	if got["script"] != "b" || got["voiceId"] != "voc_x" {
		t.Fatalf("withChanges = %v", got)
	}
	if _, has := got["speed"]; has {
		t.Fatalf("a nil change removes the key: %v", got)
	}
	if base["script"] != "a" || base["speed"] != 1 {
		t.Fatalf("the base changed: %v", base)
	}
}
