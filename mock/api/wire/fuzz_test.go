package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mediaspec/mediaspec/mock/apierr"
)

// FuzzDecodeStrictBytes: any body decodes or is refused with an *apierr.Error (400
// invalid_config), never a panic; an accepted body is valid JSON with no key given twice.
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
		err := DecodeStrictBytes(data, &b)
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
