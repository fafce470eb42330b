package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mediaspec/mediaspec/internal/fuzzseed"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// validBodies are whole request bodies whose every cut is a committed seed of the targets here
// (TestSeedCorpora): keys, strings, numbers, nested objects, and arrays of strings, numbers,
// objects and arrays, so a cut lands inside each.
var validBodies = map[string]string{
	// The body of issue 24 completed: cut after `["x` it spun the walker of duplicate keys.
	"estimate": `{"capability_id":["x"],"config":{"script":"Hi there","voice_audio":["ast_0123456789abcdef0123456789abcdef"]}}`,
	"submit":   `{"capability_id":"image_fast","config":{"prompt":"a cat","n":[1,2.5e3,-3],"x":[{"y":[true,null]},[]]},"max_credits":11,"variants":2}`,
	"webhook":  `{"url":"https://example.com/hook","events":["generation.completed","batch.settled"],"description":"d\u00e9"}`,
}

// TestSeedCorpora keeps the prefix seeds of FuzzDecodeStrictBytes and FuzzCheckJSONText.
func TestSeedCorpora(t *testing.T) {
	for name, body := range validBodies {
		one := func(cut []byte) []any { return []any{cut} }
		fuzzseed.Prefixes(t, "FuzzDecodeStrictBytes", name, []byte(body), one)
		fuzzseed.Prefixes(t, "FuzzCheckJSONText", name, []byte(body), one)
	}
}

// FuzzDecodeStrictBytes: any body decodes or is refused with an *apierr.Error (400
// invalid_config) within fuzzseed.Bound, never a panic; an accepted body is valid JSON with no
// key given twice.
func FuzzDecodeStrictBytes(f *testing.F) {
	for _, s := range []string{
		`{"capability_id":"tts","config":{"script":"a"},"max_credits":5}`,
		`{"a":1,"a":2}`, `{"config":{"x":[1,{"y":2,"y":3}]}}`, "{\"x\":\"\xff\"}", `[1,2]`, `{"max_credits":2.0}`,
		`{"max_credits":1e3}`, `{} {}`, ``, `{"n":null}`, `{"unknown":true}`,
	} {
		f.Add([]byte(s))
	}
	type body struct {
		CapabilityID string         `json:"capability_id"`
		Config       map[string]any `json:"config"`
		MaxCredits   *int64         `json:"max_credits"`
		Variants     Optional[int]  `json:"variants"`
		Tags         []string       `json:"tags"`
		N            *float64       `json:"n"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b body
		var err error
		fuzzseed.Within(t, "DecodeStrictBytes", func() { err = DecodeStrictBytes(data, &b) })
		if err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig {
				t.Fatalf("refusal is not invalid_config: %v", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if err := CheckJSONText(data); err != nil {
			t.Fatalf("accepted %q that CheckJSONText refuses: %v", data, err)
		}
	})
}

// FuzzCheckJSONText: the walker of duplicate keys returns within fuzzseed.Bound on any bytes;
// it refuses only invalid UTF-8 and well-formed text with a key given twice in one object.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1,"b":2}]}`, `[[[`, `{"a":["x`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		fuzzseed.Within(t, "CheckJSONText", func() { err = CheckJSONText(data) })
		if err == nil {
			return
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig {
			t.Fatalf("refusal is not invalid_config: %v", err)
		}
		if e.Field != "" && !json.Valid(data) {
			t.Fatalf("named a duplicate key %q in malformed text %q", e.Field, data)
		}
	})
}
