package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Violation is one way an exchange broke the REST description: a request the description does not
// allow, or a response with an undocumented status, header, field or type.
type Violation struct {
	Kind   string // "request" or "response"
	Method string // the request's method
	Path   string // the URL path as sent
	Status int    // the response status; 0 for request violations
	Err    error  // what broke: a kin-openapi request or response error
}

// Error says which request or answer broke the description, and how.
func (v Violation) Error() string {
	var fe FieldErrors
	if errors.As(v.Err, &fe) && len(fe) > 1 {
		return v.head() + " does not match the OpenAPI description:\n  - " + strings.ReplaceAll(fe.Error(), "\n", "\n  - ")
	}
	return fmt.Sprintf("%s does not match the OpenAPI description: %v", v.head(), v.Err)
}

// Unwrap is the validator's error (FieldErrors when fields were judged apart).
func (v Violation) Unwrap() error { return v.Err }

var _ error = Violation{}

// Validator checks HTTP exchanges against an OpenAPI document. It is safe for concurrent use.
//
// Paths are matched below a base path (BasePath by default, WithBasePath for a service mounted
// elsewhere); traffic outside it (file links, the control API) is not checked. Responses are held to
// the documented statuses (an undocumented status is a violation), headers and body schemas; a
// response to a path the description does not have must still be a valid error envelope.
type Validator struct {
	doc      *openapi3.T
	basePath string
	routes   []*compiledRoute
	errorRef *openapi3.SchemaRef
	// anyStatus lets an answer use a status its operation does not list (the normative view: the
	// reference's list of statuses is its own choice, the text gives each code its status).
	anyStatus bool
}

type compiledRoute struct {
	template string
	segments []string // "{name}" for a parameter
	literals int
	item     *openapi3.PathItem
}

// ValidatorOption configures a Validator.
type ValidatorOption func(*Validator)

// WithBasePath sets the URL path below which the document's paths live (for a service whose
// versioned root is, say, /edge/api/v1). Trailing slashes are ignored.
func WithBasePath(p string) ValidatorOption {
	return func(v *Validator) { v.basePath = strings.TrimRight(p, "/") }
}

// NewValidator prepares a Validator for doc, which must already be loaded and validated.
func NewValidator(doc *openapi3.T, opts ...ValidatorOption) (*Validator, error) {
	v := &Validator{doc: doc, basePath: BasePath}
	for _, o := range opts {
		o(v)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, errors.New("spec: document has no paths")
	}
	for tmpl, item := range doc.Paths.Map() {
		segs := splitPath(tmpl)
		r := &compiledRoute{template: tmpl, segments: segs, item: item}
		for _, s := range segs {
			if !isParam(s) {
				r.literals++
			}
		}
		v.routes = append(v.routes, r)
	}
	// More literal segments first, so /uploads/from-url wins over /uploads/{assetId}.
	sort.Slice(v.routes, func(i, j int) bool {
		if v.routes[i].literals != v.routes[j].literals {
			return v.routes[i].literals > v.routes[j].literals
		}
		return v.routes[i].template < v.routes[j].template
	})
	if doc.Components != nil {
		v.errorRef = doc.Components.Schemas["Error"]
	}
	return v, nil
}

// NewEmbeddedValidator loads the embedded REST description and returns its Validator.
func NewEmbeddedValidator(ctx context.Context, opts ...ValidatorOption) (*Validator, error) {
	doc, err := LoadOpenAPI(ctx)
	if err != nil {
		return nil, err
	}
	return NewValidator(doc, opts...)
}

// Document returns the document the Validator checks against. Callers must not modify it.
func (v *Validator) Document() *openapi3.T { return v.doc }

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func isParam(s string) bool { return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") }

// Covers reports whether urlPath lies below the Validator's base path.
func (v *Validator) Covers(urlPath string) bool {
	_, ok := v.relative(urlPath)
	return ok
}

func (v *Validator) relative(urlPath string) (string, bool) {
	if urlPath == v.basePath {
		return "/", true
	}
	if !strings.HasPrefix(urlPath, v.basePath+"/") {
		return "", false
	}
	return strings.TrimPrefix(urlPath, v.basePath), true
}

// FindRoute returns the documented route for a method and URL path, with its path parameters. ok is
// false when the path is outside the base path, undocumented, or has no such method.
func (v *Validator) FindRoute(method, urlPath string) (route *routers.Route, params map[string]string, ok bool) {
	rel, inside := v.relative(urlPath)
	if !inside {
		return nil, nil, false
	}
	segs := splitPath(rel)
	for _, r := range v.routes {
		if len(r.segments) != len(segs) {
			continue
		}
		p := map[string]string{}
		match := true
		for i, s := range r.segments {
			if isParam(s) {
				if segs[i] == "" {
					match = false
					break
				}
				p[strings.Trim(s, "{}")] = segs[i]
			} else if s != segs[i] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		op := r.item.GetOperation(strings.ToUpper(method))
		if op == nil {
			return nil, nil, false
		}
		return &routers.Route{Spec: v.doc, Path: r.template, PathItem: r.item, Method: strings.ToUpper(method), Operation: op}, p, true
	}
	return nil, nil, false
}

func (v *Validator) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		// Keys are checked by the service, not by the validator: a call without a key is a valid
		// exchange whose documented answer is 401.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
	}
}

// ValidateRequest checks a request (whose body, if any, is body) against the description. A
// request outside the base path is not checked and returns nil.
func (v *Validator) ValidateRequest(ctx context.Context, r *http.Request, body []byte) error {
	if !v.Covers(r.URL.Path) {
		return nil
	}
	route, params, ok := v.FindRoute(r.Method, r.URL.Path)
	if !ok {
		return Violation{Kind: "request", Method: r.Method, Path: r.URL.Path, Err: errors.New("no documented operation for this method and path")}
	}
	return v.validateRequestOn(ctx, r, body, route, params)
}

// validateRequestOn is ValidateRequest once the request's route was found.
func (v *Validator) validateRequestOn(ctx context.Context, r *http.Request, body []byte, route *routers.Route,
	params map[string]string) error {
	in := v.requestInput(r, body, route, params)
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return Violation{Kind: "request", Method: r.Method, Path: r.URL.Path, Err: err}
	}
	return nil
}

func (v *Validator) requestInput(r *http.Request, body []byte, route *routers.Route,
	params map[string]string) *openapi3filter.RequestValidationInput {
	clone := r.Clone(context.Background())
	clone.URL.RawQuery = withoutBlankValues(r.URL.Query()).Encode()
	clone.Body = io.NopCloser(bytes.NewReader(body))
	clone.ContentLength = int64(len(body))
	return &openapi3filter.RequestValidationInput{Request: clone, PathParams: params, Route: route, Options: v.options()}
}

// withoutBlankValues drops every query parameter whose values are all blank (empty or white
// space). The description says a blank query value counts as omitted, while its parameters are
// typed (an integer `limit`, enum filters) so that generated clients get types; a plain request
// validator would refuse `?limit=` as not an integer.
func withoutBlankValues(q url.Values) url.Values {
	for k, vals := range q {
		blank := true
		for _, s := range vals {
			if strings.TrimSpace(s) != "" {
				blank = false
			}
		}
		if blank {
			delete(q, k)
		}
	}
	return q
}

// ValidateResponse checks the response (status, header, body) to request r. A request outside the
// base path is not checked. For a path or method the description does not document, the response
// must be an error (4XX or 5XX) in the error envelope.
func (v *Validator) ValidateResponse(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) error {
	if !v.Covers(r.URL.Path) {
		return nil
	}
	fail := func(err error) error {
		return Violation{Kind: "response", Method: r.Method, Path: r.URL.Path, Status: status, Err: err}
	}
	route, params, ok := v.FindRoute(r.Method, r.URL.Path)
	if !ok {
		if status < 400 {
			return fail(errors.New("a success answer to an undocumented method and path"))
		}
		return v.checkErrorEnvelope(ctx, header, body, fail)
	}
	// The description gives most operations a `default` answer (the error envelope) so that a
	// generated client still decodes a status it does not know; a service's answer must still use a
	// status the operation lists.
	if !v.anyStatus && route.Operation.Responses.Status(status) == nil {
		return fail(fmt.Errorf("status %d is not one this operation documents (only its default entry would cover it)", status))
	}
	// Every documented header and the body are checked apart, so that the violation names every
	// missing or invalid field at once (FieldErrors), not only the first.
	if err := v.answerProblems(ctx, r, route, params, status, header, body); err != nil {
		return fail(err)
	}
	return nil
}

func (v *Validator) checkErrorEnvelope(ctx context.Context, header http.Header, body []byte, fail func(error) error) error {
	if v.errorRef == nil || v.errorRef.Value == nil {
		return fail(errors.New("the document has no Error schema to check an undocumented path's answer against"))
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fail(fmt.Errorf("error answer has Content-Type %q, want application/json", ct))
	}
	var decoded any
	if err := jsonUnmarshalNumber(body, &decoded); err != nil {
		return fail(fmt.Errorf("error answer is not JSON: %w", err))
	}
	if err := v.errorRef.Value.VisitJSON(decoded, openapi3.MultiErrors(), openapi3.VisitAsResponse()); err != nil {
		fe := fieldErrors(err)
		for i := range fe {
			fe[i].Problem += " (the error envelope)"
		}
		return fail(fe)
	}
	return nil
}

// Middleware wraps a handler so that every exchange under the base path is checked; each
// violation is passed to report (requests first, then the response). The handler's response is
// buffered and then written unchanged. report must be safe for concurrent use.
func (v *Validator) Middleware(next http.Handler, report func(Violation)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !v.Covers(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := v.ValidateRequest(r.Context(), r, body); err != nil {
			report(asViolation(err))
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		res := rec.Result()
		if err := v.ValidateResponse(r.Context(), r, res.StatusCode, res.Header, rec.Body.Bytes()); err != nil {
			report(asViolation(err))
		}
		for k, vals := range res.Header {
			w.Header()[k] = vals
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// Transport wraps an http.RoundTripper so that every exchange under the base path is checked; each
// violation is passed to report. Bodies are read in full and handed on unchanged. base nil means
// http.DefaultTransport. report must be safe for concurrent use.
func (v *Validator) Transport(base http.RoundTripper, report func(Violation)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if !v.Covers(r.URL.Path) {
			return base.RoundTrip(r)
		}
		var body []byte
		if r.Body != nil {
			b, err := io.ReadAll(r.Body)
			_ = r.Body.Close()
			if err != nil {
				return nil, err
			}
			body = b
			r = r.Clone(r.Context())
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		if err := v.ValidateRequest(r.Context(), r, body); err != nil {
			report(asViolation(err))
		}
		res, err := base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		respBody, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			return nil, err
		}
		res.Body = io.NopCloser(bytes.NewReader(respBody))
		if err := v.ValidateResponse(r.Context(), r, res.StatusCode, res.Header, respBody); err != nil {
			report(asViolation(err))
		}
		return res, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func asViolation(err error) Violation {
	var v Violation
	if errors.As(err, &v) {
		return v
	}
	return Violation{Kind: "response", Err: err}
}
