package mock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

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

// wrap checks the answers next gives. Requests are not judged: a client's bad request is the
// client's, and its documented refusal is what gets checked.
func (v *validator) wrap(next http.Handler) http.Handler {
	return v.v.Middleware(next, func(vi spec.Violation) {
		if vi.Kind != "response" {
			return
		}
		v.logger.Error("answer does not match the REST description", "method", vi.Method, "path", vi.Path, "status", vi.Status, "err", vi.Err)
	})
}
