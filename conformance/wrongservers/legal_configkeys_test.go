package wrongservers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The renamed key shows in the detail (schema, required, oneOf, example) and in refusals, and
// reaches the mock under its own name; the mock's own name sent by a client is an unknown key.
func TestRenameConfigKey(t *testing.T) {
	var seen map[string]any // the last request body the mock read
	mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"ok":true,"capability_id":"actor_ultra","config_schema":{"type":"object",`+
				`"oneOf":[{"required":["script"]},{"required":["voice_audio"]}],"required":["script"],`+
				`"properties":{"script":{"type":"string","description":"the script"},"voice_audio":{"type":"array"}}},`+
				`"example_config":{"script":"Hello."}}`)
			return
		}
		seen, _ = decodeObject(requestBody(r))
		cfg := obj(seen, "config")
		for k := range cfg {
			if k != "script" {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"error":{"code":"invalid_config","message":"config.`+k+`: unknown key \"`+k+`\" is not allowed","field":"config.`+k+`"}}`)
				return
			}
		}
		if _, ok := cfg["script"].(string); !ok {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"invalid_config","message":"config.script: got number, want string","field":"config.script"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	h := renameConfigKey("script", "text")(&Env{}, mock)
	call := func(method, path, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, apiPrefix+path, strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}

	_, detail := call(http.MethodGet, "/capabilities/actor_ultra", "")
	var d struct {
		Schema struct {
			OneOf      []map[string][]string `json:"oneOf"`
			Required   []string              `json:"required"`
			Properties map[string]any        `json:"properties"`
		} `json:"config_schema"`
		Example map[string]any `json:"example_config"`
	}
	if err := json.Unmarshal([]byte(detail), &d); err != nil {
		t.Fatal(err)
	}
	if _, has := d.Schema.Properties["text"]; !has || d.Schema.Properties["script"] != nil {
		t.Errorf("properties = %v, want text and no script", d.Schema.Properties)
	}
	if d.Schema.Required[0] != "text" || d.Schema.OneOf[0]["required"][0] != "text" || d.Example["text"] != "Hello." || d.Example["script"] != nil {
		t.Errorf("detail = %s", detail)
	}
	if !strings.Contains(detail, `"description":"the script"`) {
		t.Errorf("descriptions are words, not keys: %s", detail)
	}

	if code, _ := call(http.MethodPost, "/estimates", `{"capability_id":"tts","config":{"text":"Hi."}}`); code != http.StatusOK || obj(seen, "config")["script"] != "Hi." {
		t.Errorf("text reaches the mock as script: %d, the mock saw %v", code, seen)
	}
	code, body := call(http.MethodPost, "/generations", `{"capability_id":"tts","config":{"text":5}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"field":"config.text"`) || !strings.Contains(body, `config.text: got number`) {
		t.Errorf("a refusal names text: %d %s", code, body)
	}
	code, body = call(http.MethodPost, "/estimates", `{"capability_id":"tts","config":{"text":"Hi.","script":"Hi."}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `"field":"config.script"`) || !strings.Contains(body, `unknown key \"script\"`) {
		t.Errorf("script is an unknown key of the variant, named as sent: %d %s", code, body)
	}
	if code, _ := call(http.MethodPost, "/workflows/templates/ugc_ad/invoke", `{"inputs":{"text":"Hi."},"config":{"text":"Hi."}}`); code != http.StatusOK || obj(seen, "inputs")["script"] != "Hi." {
		t.Errorf("an invoke's inputs map back: %d, the mock saw %v", code, seen)
	}
}
