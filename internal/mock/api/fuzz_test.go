package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mediaspec/mediaspec/internal/fuzzseed"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// requestBodies are a valid body of each JSON operation of /api/v1; every cut of each is a
// committed seed of FuzzRequestBodies (TestSeedCorpora).
var requestBodies = map[string]string{
	"estimate": `{"capability_id":"actor_ultra","config":{"script":"Hi","voice_audio":["ast_0123456789abcdef0123456789abcdef"]},"actor_id":"act_1"}`,
	"submit":   `{"capability_id":"image_fast","config":{"prompt":"a cat","sizes":[1,2]},"max_credits":11,"variants":2}`,
	"invoke":   `{"inputs":{"images":["ast_1"],"n":1.5},"max_credits":30}`,
	"reserve":  `{"filename":"cat.png","content_type":"image/png","size_bytes":67,"checksum_sha256":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}`,
	"fromurl":  `{"url":"https://example.com/a.png","filename":"a.png","content_type":"image/png"}`,
	"webhook":  `{"url":"https://example.com/hook","events":["generation.completed","batch.settled"],"description":"d"}`,
}

func TestSeedCorpora(t *testing.T) {
	for name, body := range requestBodies {
		fuzzseed.Prefixes(t, "FuzzRequestBodies", name, []byte(body), func(cut []byte) []any { return []any{cut} })
	}
}

// FuzzRequestBodies runs every decoder of a JSON request body of /api/v1 on the same bytes: each
// returns within fuzzseed.Bound, never panics, and refuses only with 400 invalid_config.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{`{}`, `{"capability_id":["x`, `{"a":1,"a":2}`, `[]`, `{"inputs":{},"max_credits":1}`} {
		f.Add([]byte(s))
	}
	req := func(data []byte) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/x", bytes.NewReader(data))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	decoders := []struct {
		name string
		run  func(*http.Request) error
	}{
		{"DecodeEstimateRequest", func(r *http.Request) error { _, err := DecodeEstimateRequest(r); return err }},
		{"DecodeSubmit", func(r *http.Request) error { _, err := DecodeSubmit(r); return err }},
		{"DecodeInvoke", func(r *http.Request) error { _, _, err := DecodeInvoke(r); return err }},
		{"reserve body", func(r *http.Request) error { var b uploads.ReserveRequest; return wire.DecodeStrict(r, &b, 0) }},
		{"from-url body", func(r *http.Request) error { var b uploads.FromURLRequest; return wire.DecodeStrict(r, &b, 0) }},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range decoders {
			var err error
			fuzzseed.Within(t, d.name, func() { err = d.run(req(data)) })
			if err == nil {
				continue
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.CodeInvalidConfig {
				t.Fatalf("%s refused %q with %v, want invalid_config", d.name, data, err)
			}
		}
	})
}
