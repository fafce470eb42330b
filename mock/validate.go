package mock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/mediaspec/mediaspec/mock/api"
)

// validator checks /api/v1 answers against the REST description
// (Config.ValidateResponses) and logs every violation.
type validator struct {
	router routers.Router
	logger *slog.Logger
}

func newValidator(doc []byte, logger *slog.Logger) (*validator, error) {
	if len(doc) == 0 {
		return nil, errors.New("mock: ValidateResponses needs the REST description (Config.OpenAPIJSON)")
	}
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("mock: load REST description: %w", err)
	}
	if err := d.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("mock: REST description invalid: %w", err)
	}
	r, err := legacy.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("mock: route REST description: %w", err)
	}
	return &validator{router: r, logger: logger}, nil
}

// recorder buffers an answer so it can be validated before it is sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (v *validator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, api.BasePath+"/") {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if err := v.check(r, rec); err != nil {
			v.logger.Error("answer does not match the REST description", "method", r.Method, "path", r.URL.Path, "status", rec.status, "err", err)
		}
		for k, vals := range rec.header {
			w.Header()[k] = vals
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

func (v *validator) check(r *http.Request, rec *recorder) error {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		// Unrouted paths answer 404 not_found; there is no operation to
		// check them against.
		if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
			return nil
		}
		return err
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: rec.status,
		Header: rec.header,
		Body:   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	return openapi3filter.ValidateResponse(context.WithoutCancel(r.Context()), in)
}
