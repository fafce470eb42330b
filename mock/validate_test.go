package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With --validate-responses the mock logs an answer that drifts from the REST description and
// stays quiet on answers that match.
func TestValidateResponsesLogsDrift(t *testing.T) {
	real, err := spec.OpenAPIJSON(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A description that demands a field the balance answer does not carry.
	doc, err := spec.LoadOpenAPI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bal := doc.Components.Schemas["CreditBalanceResponse"]
	if bal == nil || bal.Value == nil {
		t.Fatal("CreditBalanceResponse schema missing")
	}
	bal.Value.Required = append(bal.Value.Required, "field_the_mock_never_sends")
	// The description's own example would now fail to load; drop it so the drift reaches run time.
	bal.Value.Example = nil
	if mt := doc.Paths.Value("/credits/balance").Get.Responses.Status(200).Value.Content.Get("application/json"); mt != nil {
		mt.Example, mt.Examples = nil, nil
	}
	drifted, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		doc     []byte
		wantLog bool
	}{{"matching description", real, false}, {"drifted description", drifted, true}} {
		t.Run(c.name, func(t *testing.T) {
			var logs syncBuffer
			e := newEnv(t, func(cfg *Config) {
				cfg.OpenAPIJSON = c.doc
				cfg.ValidateResponses = true
				cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				cfg.LogRequests = true
			})
			info := e.s.Info()
			r := e.call("GET", "/api/v1/credits/balance", "", bearer(info.GenerateKey))
			if r.code != 200 {
				t.Fatalf("balance answered %d: %s", r.code, r.raw)
			}
			e.call("GET", "/api/v1/credits/balance", "") // a documented 401
			e.call("GET", "/api/v1/no-such-route", "")   // an undocumented path answers the envelope
			// The request line names the key through the validation's recorder.
			if !strings.Contains(logs.String(), "path=/api/v1/credits/balance status=200") || !strings.Contains(logs.String(), "key_id=key_") {
				t.Errorf("no request line with the key id:\n%s", logs.String())
			}
			logged := strings.Contains(logs.String(), "answer does not match the REST description")
			if logged != c.wantLog {
				t.Errorf("violation logged = %v, want %v; logs:\n%s", logged, c.wantLog, logs.String())
			}
			if c.wantLog && !strings.Contains(logs.String(), "field_the_mock_never_sends") {
				t.Errorf("the log does not name the missing field:\n%s", logs.String())
			}
		})
	}
}

// endless is a request body that never ends and counts what was read of it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A body without a key is never read, with or without --validate-responses; with a key it is read
// only up to the body limit.
func TestBodiesReadBoundedAfterTheKey(t *testing.T) {
	for _, validate := range []bool{false, true} {
		e := newEnv(t, func(c *Config) {
			c.ValidateResponses = validate
			if validate {
				doc, err := spec.OpenAPIJSON(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				c.OpenAPIJSON = doc
			}
		})
		for _, path := range []string{"/api/v1/generations", "/api/v1/estimates", "/api/v1/uploads", "/api/v1/webhooks",
			"/api/v1/workflows/templates/x/invoke", "/api/v1/uploads/from-url"} {
			body := &endless{}
			req := httptest.NewRequest("POST", path, body)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			e.s.ServeHTTP(rec, req)
			if rec.Code != 401 || body.n != 0 {
				t.Fatalf("validate %v, POST %s without a key: %d, %d bytes read", validate, path, rec.Code, body.n)
			}
			body = &endless{}
			req = httptest.NewRequest("POST", path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.s.Info().GenerateKey)
			rec = httptest.NewRecorder()
			e.s.ServeHTTP(rec, req)
			if rec.Code < 400 || body.n > 2<<20 {
				t.Fatalf("validate %v, POST %s with a key: %d, %d bytes read", validate, path, rec.Code, body.n)
			}
		}
	}
}
