package mock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"

	"github.com/mediaspec/mediaspec/spec"
)

// validator checks /api/v1 answers against the REST description (Config.ValidateResponses) and
// logs every violation at error level; answers pass through unchanged. It is the same validator the
// conformance suite uses (package spec), so the mock and the suite cannot disagree on what matches.
type validator struct {
	v      *spec.Validator
	logger *slog.Logger
}

func newValidator(doc []byte, logger *slog.Logger) (*validator, error) {
	if len(doc) == 0 {
		return nil, errors.New("mock: ValidateResponses needs the REST description (Config.OpenAPIJSON)")
	}
	d, err := spec.LoadDocument(context.Background(), doc)
	if err != nil {
		return nil, fmt.Errorf("mock: REST description: %w", err)
	}
	v, err := spec.NewValidator(d)
	if err != nil {
		return nil, fmt.Errorf("mock: REST description: %w", err)
	}
	return &validator{v: v, logger: logger}, nil
}

// wrap checks the answers next gives. Requests are not judged (a client's bad request is the
// client's, and its documented refusal is what gets checked), so the request body is never read
// here: the handler reads it, bounded and only after the key check, as without the flag.
// validatedWriter is where a validated answer is written first: the recorder, and through
// Unwrap the writer it is copied to (the request log's, which takes the key id, and the
// connection's deadlines).
type validatedWriter struct {
	*httptest.ResponseRecorder
	outer http.ResponseWriter
}

func (v validatedWriter) Unwrap() http.ResponseWriter { return v.outer }

func (v *validator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !v.v.Covers(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(validatedWriter{rec, w}, r)
		res := rec.Result()
		if err := v.v.ValidateResponse(r.Context(), r, res.StatusCode, res.Header, rec.Body.Bytes()); err != nil {
			var vi spec.Violation
			if !errors.As(err, &vi) {
				vi = spec.Violation{Kind: "response", Method: r.Method, Path: r.URL.Path, Status: res.StatusCode, Err: err}
			}
			v.logger.Error("answer does not match the REST description", "method", vi.Method, "path", vi.Path, "status", vi.Status, "err", vi.Err)
		}
		maps.Copy(w.Header(), res.Header)
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(rec.Body.Bytes())
	})
}
