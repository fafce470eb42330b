package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Judge decides on HTTP exchanges with a service the way the interface text does. It holds two
// validators over one document: the reference (the document as written, our mock's own shapes)
// and the normative view (Normative: only what the text states). It is safe for concurrent use.
type Judge struct {
	reference *Validator
	normative *Validator
}

// NewJudge is NewJudgeFor over the embedded REST description.
func NewJudge(ctx context.Context, opts ...ValidatorOption) (*Judge, error) {
	doc, err := LoadOpenAPI(ctx)
	if err != nil {
		return nil, err
	}
	return NewJudgeFor(doc, opts...)
}

// NewJudgeFor prepares a Judge for doc (loaded and validated); the options apply to both
// validators. doc is not modified.
func NewJudgeFor(doc *openapi3.T, opts ...ValidatorOption) (*Judge, error) {
	norm, err := Normative(doc)
	if err != nil {
		return nil, err
	}
	j := &Judge{}
	if j.reference, err = NewValidator(doc, opts...); err != nil {
		return nil, err
	}
	if j.normative, err = NewValidator(norm, opts...); err != nil {
		return nil, err
	}
	j.normative.anyStatus = true
	return j, nil
}

// Reference returns the validator of the document as written.
func (j *Judge) Reference() *Validator { return j.reference }

// Normative returns the validator of the normative view.
func (j *Judge) Normative() *Validator { return j.normative }

// Covers reports whether urlPath lies below the base path the Judge checks.
func (j *Judge) Covers(urlPath string) bool { return j.reference.Covers(urlPath) }

// Request judges what a client sends against the reference document (requests are held to the
// reference: they are what our own suite sends). nil when the request is outside the base path or
// matches.
func (j *Judge) Request(ctx context.Context, r *http.Request, body []byte) error {
	return j.reference.ValidateRequest(ctx, r, body)
}

// RequestBody judges only a request's body against the reference: nil when the request is
// outside the base path or undocumented, when its operation declares no request body (there is
// nothing to judge, and no validation is run: the shortcut a judge of heavy traffic needs, most
// of which is reads), or when the body matches; otherwise the Violation of Request that concerns
// the body. What Request says of the rest (parameters, security) is left out.
func (j *Judge) RequestBody(ctx context.Context, r *http.Request, body []byte) error {
	route, params, ok := j.reference.FindRoute(r.Method, r.URL.Path) // not ok outside the base path
	if !ok {
		return nil
	}
	return j.RequestBodyOn(ctx, r, route, params, body)
}

// RequestBodyOn is RequestBody for a request whose route the caller already found with
// Reference().FindRoute (route and params as it returned them): the route is not looked up again.
func (j *Judge) RequestBodyOn(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string, body []byte) error {
	if route == nil || route.Operation == nil || route.Operation.RequestBody == nil {
		return nil
	}
	if err := j.reference.validateRequestOn(ctx, r, body, route, params); err != nil && BodyViolation(err) {
		return err
	}
	return nil
}

// BodyViolation reports whether a request's violation (of Request, ValidateRequest) concerns its
// body, not its parameters or security.
func BodyViolation(err error) bool {
	return strings.Contains(err.Error(), "request body")
}

// Response judges a service's answer to r. failure is non-nil when the normative view refuses the
// answer (it breaks what the interface text states); advisory is non-nil when the normative view
// accepts it but the reference document refuses it (a difference from the reference's own
// choices, never a failure). Each error is a Violation whose Err is FieldErrors, listing every
// missing or invalid field at once. An operation whose x-provenance is `reference:` is not judged
// by the normative view (the text does not state it), so its answers yield advisories only.
func (j *Judge) Response(ctx context.Context, r *http.Request, status int, header http.Header, body []byte) (failure, advisory error) {
	if route, _, ok := j.normative.FindRoute(r.Method, r.URL.Path); !ok || !referenceOperation(route.Operation) {
		failure = j.normative.ValidateResponse(ctx, r, status, header, body)
	}
	if failure != nil {
		return failure, nil
	}
	return nil, j.reference.ValidateResponse(ctx, r, status, header, body)
}

// Event judges the body of a webhook delivery of eventType the way Response judges an answer.
// An event type the document does not describe is a failure.
func (j *Judge) Event(eventType string, body []byte) (failure, advisory error) {
	check := func(v *Validator) error {
		sch := EventSchemas(v.Document())[eventType]
		if sch == nil {
			return Violation{Kind: "event", Path: eventType, Err: FieldErrors{{Problem: "the description has no event of this type"}}}
		}
		var decoded any
		if err := jsonUnmarshalNumber(body, &decoded); err != nil {
			return Violation{Kind: "event", Path: eventType, Err: FieldErrors{{Problem: "the body is not JSON: " + err.Error()}}}
		}
		if err := sch.Value.VisitJSON(decoded, openapi3.MultiErrors(), openapi3.VisitAsResponse()); err != nil {
			return Violation{Kind: "event", Path: eventType, Err: fieldErrors(err)}
		}
		return nil
	}
	if failure = check(j.normative); failure != nil {
		return failure, nil
	}
	return nil, check(j.reference)
}

func referenceOperation(op *openapi3.Operation) bool {
	p, has, err := provenanceIn(op.Extensions)
	return has && err == nil && p.Is.Reference()
}

// FieldError is one field of an answer that breaks the description.
type FieldError struct {
	// Path locates the field: a JSON path into the body ("$.generation.outputs[0].duration_ms"),
	// "header NAME", or empty for the answer as a whole.
	Path    string
	Problem string // what is wrong with it, one sentence
}

// String is the field's path and its problem.
func (e FieldError) String() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// FieldErrors lists every field of one answer that breaks the description, one per line.
type FieldErrors []FieldError

// Error is every field error, one per line.
func (fe FieldErrors) Error() string {
	lines := make([]string, len(fe))
	for i, e := range fe {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

var _ error = FieldErrors(nil)

// Lines renders a violation as one line per field: the exchange, then the field and its problem.
func (v Violation) Lines() []string {
	var fe FieldErrors
	if !errors.As(v.Err, &fe) || len(fe) == 0 {
		return []string{v.Error()}
	}
	head := v.head()
	out := make([]string, len(fe))
	for i, e := range fe {
		out[i] = head + ": " + e.String()
	}
	return out
}

func (v Violation) head() string {
	switch v.Kind {
	case "request":
		return fmt.Sprintf("request %s %s", v.Method, v.Path)
	case "event":
		return fmt.Sprintf("event %s", v.Path)
	}
	return fmt.Sprintf("response %d to %s %s", v.Status, v.Method, v.Path)
}

// fieldErrors flattens a validation error of kin-openapi (MultiError, ResponseError,
// SchemaError) into one FieldError per field, in the order found, without repeats.
func fieldErrors(err error) FieldErrors {
	var out FieldErrors
	seen := map[FieldError]bool{}
	add := func(e FieldError) {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	var walk func(err error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case openapi3.MultiError:
			for _, sub := range e {
				walk(sub)
			}
		case *openapi3filter.ResponseError:
			switch e.Err.(type) {
			case nil:
				add(FieldError{Problem: e.Reason})
			case openapi3.MultiError, *openapi3.SchemaError:
				walk(e.Err)
			default:
				add(FieldError{Problem: e.Reason + ": " + firstLineOf(e.Err.Error())})
			}
		case *openapi3.SchemaError:
			// allOf: every part must hold, so each part's fields are fields of the answer; oneOf
			// or anyOf with a single candidate (a discriminator chose it) likewise.
			var parts openapi3.MultiError
			if e.Origin != nil && errors.As(e.Origin, &parts) && (e.SchemaField == "allOf" || len(parts) == 1) {
				walk(parts)
				return
			}
			reason := e.Reason
			if reason == "" && e.Origin != nil {
				reason = firstLineOf(e.Origin.Error())
			}
			if reason == "" {
				reason = fmt.Sprintf("does not match the schema's %q", e.SchemaField)
			}
			ptr := e.JSONPointer()
			// An unexpected key is reported at its object; name the key itself.
			if m := unsupportedKey().FindStringSubmatch(reason); m != nil {
				if key, err := strconv.Unquote(m[1]); err == nil {
					ptr = append(ptr, key)
					reason = "not a property the schema allows (additionalProperties: false)"
				}
			}
			add(FieldError{Path: jsonPath(ptr), Problem: reason})
		default:
			add(FieldError{Problem: firstLineOf(err.Error())})
		}
	}
	walk(err)
	return out
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return strings.TrimSpace(l) }

var unsupportedKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^property ("(?:[^"\\]|\\.)*") is unsupported$`) })

// jsonPath renders JSON pointer tokens as a JSON path: $.a.b[0].c.
func jsonPath(tokens []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if t != "" && strings.IndexFunc(t, func(r rune) bool {
			return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) < 0 {
			b.WriteString("." + t)
			continue
		}
		b.WriteString("['" + strings.ReplaceAll(t, "'", `\'`) + "']")
	}
	return b.String()
}

// answerProblems checks an answer to a documented route piece by piece, so that one bad header
// does not hide the body and every field is named: each documented header, then the body.
func (v *Validator) answerProblems(ctx context.Context, r *http.Request, route *routers.Route, params map[string]string,
	status int, header http.Header, body []byte) error {
	respRef := route.Operation.Responses.Status(status)
	if respRef == nil || respRef.Value == nil {
		return nil
	}
	resp := respRef.Value
	check := func(part *openapi3.Response) error {
		op := *route.Operation
		op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, &openapi3.ResponseRef{Value: part}))
		rt := *route
		rt.Operation = &op
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: v.requestInput(r, nil, &rt, params),
			Status:                 status,
			Header:                 header,
			Body:                   io.NopCloser(bytes.NewReader(body)),
			Options:                v.options(),
		}
		return openapi3filter.ValidateResponse(ctx, in)
	}
	var out FieldErrors
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := check(&openapi3.Response{Description: resp.Description, Headers: openapi3.Headers{name: resp.Headers[name]}}); err != nil {
			for _, fe := range fieldErrors(err) {
				fe.Path = "header " + name
				out = append(out, fe)
			}
		}
	}
	if err := check(&openapi3.Response{Description: resp.Description, Content: resp.Content}); err != nil {
		out = append(out, fieldErrors(err)...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
