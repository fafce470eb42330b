// Package wire is the HTTP wire format the mock's HTTP adapters share (the /api/v1 router in
// mock/api, the test-control API in mock/control, the signed links of mock/blob and the previews of mock/catalog): the one
// error renderer (Write), JSON answers (WriteJSON), strict JSON decoding and query helpers.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// HandlerFunc is a handler of the mock's HTTP adapters: it writes a success
// answer itself (WriteJSON) or returns an error for Write to render. It must
// not write anything before returning an error.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// MaxBodyBytes is the default body ceiling for DecodeStrict (1 MiB).
const MaxBodyBytes int64 = 1 << 20

// DecodeStrict reads r's body (ReadBody) as one JSON object into dst (a
// pointer to a struct, or to a map). It refuses, each with 400
// invalid_config and a message a person can act on: everything ReadBody
// refuses, an empty body, and everything DecodeStrictBytes refuses. It never
// answers 500 for anything the client sent.
func DecodeStrict(r *http.Request, dst any, maxBytes int64) error {
	data, err := ReadBody(r, maxBytes)
	if err != nil {
		return err
	}
	return DecodeStrictBytes(data, dst)
}

// ReadBody reads the body of a JSON operation: at most maxBytes (<= 0 means
// MaxBodyBytes; a longer body is refused, never truncated). A body that is
// not blank must be sent as JSON: a Content-Type other than application/json
// (a charset parameter other than utf-8 included), a blank one and two are
// refused; a missing Content-Type is read as JSON. Every refusal is 400 invalid_config. Call it
// after the key checks, so a request without a key is never read.
func ReadBody(r *http.Request, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = MaxBodyBytes
	}
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if err != nil {
		return nil, apierr.InvalidConfig("", "The request body could not be read.")
	}
	if int64(len(data)) > maxBytes {
		return nil, apierr.InvalidConfig("", fmt.Sprintf("The request body is larger than %d bytes.", maxBytes))
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := checkJSONMediaType(r.Header.Values("Content-Type")); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// checkJSONMediaType accepts a body sent without Content-Type (the interface has one body media
// type, JSON, so a missing header can only mean it) and one Content-Type of application/json
// (UTF-8). It refuses a blank Content-Type (a header with no media type is malformed) and a
// Content-Type given twice, as it refuses every other type. spec/rules.yaml VER-005 records it.
func checkJSONMediaType(values []string) error {
	switch {
	case len(values) == 0:
		return nil
	case len(values) > 1:
		return apierr.InvalidConfig("", "The request has more than one Content-Type header; send one, Content-Type: application/json.")
	case strings.TrimSpace(values[0]) == "":
		return apierr.InvalidConfig("", "The request body was sent with an empty Content-Type; send it as JSON with Content-Type: application/json.")
	}
	ct := values[0]
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		cs, ok := params["charset"]
		if !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	return apierr.InvalidConfig("", fmt.Sprintf("The request body was sent as %q; send it as JSON with Content-Type: application/json (UTF-8).", ct))
}

// DecodeStrictBytes is DecodeStrict on bytes already read. It refuses
// malformed JSON, invalid UTF-8, a body that is not an object, trailing data
// after the object, a key given twice in one object (Field names it), an
// unknown key (Field names the key, with its parent path when nested), and a
// value of the wrong type (Field names the path; a whole number must be
// written without a fraction or exponent).
func DecodeStrictBytes(data []byte, dst any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return apierr.InvalidConfig("", "The request body is empty; send a JSON object.")
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return apierr.InvalidConfig("", "The request body is not valid JSON.")
		}
		return apierr.InvalidConfig("", "The request body must be a JSON object.")
	}
	if err := CheckJSONText(trimmed); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if rest := bytes.TrimSpace(trimmed[dec.InputOffset():]); len(rest) > 0 {
		return apierr.InvalidConfig("", "The request body has data after the JSON object; send exactly one object.")
	}
	return nil
}

// CheckJSONText refuses what encoding/json lets through silently: invalid
// UTF-8 (json replaces it) and a key given twice in one object (json keeps
// the last). Field names a duplicated key by its path. Malformed JSON is left
// to the decoder that follows: it is not walked at all, so the walk only ever
// sees complete, well-formed text no deeper than encoding/json's nesting
// limit (10000), and ends within one pass over data.
func CheckJSONText(data []byte) error {
	if !utf8.Valid(data) {
		return apierr.InvalidConfig("", "The request body is not valid UTF-8; send JSON text in UTF-8.")
	}
	if !json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dup, _ := duplicateKey(dec, ""); dup != "" {
		return apierr.InvalidConfig(dup, fmt.Sprintf("The key %q appears twice in one object; send each key once.", dup))
	}
	return nil
}

// duplicateKey walks one JSON value and returns the path of the first key
// repeated within an object, or "". ok is false when the text ended or broke
// before the value did: the walk then stops at once. Every turn of its loops
// consumes at least one token or stops (a loop on dec.More alone never ends
// on text cut inside an array: More peeks, the failed Token consumes nothing,
// and More says true again; issue 24).
func duplicateKey(dec *json.Decoder, path string) (dup string, ok bool) {
	t, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch t {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", false
			}
			k, _ := kt.(string)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if seen[k] {
				return p, true
			}
			seen[k] = true
			if d, ok := duplicateKey(dec, p); d != "" || !ok {
				return d, ok
			}
		}
		if _, err := dec.Token(); err != nil {
			return "", false
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if d, ok := duplicateKey(dec, fmt.Sprintf("%s[%d]", path, i)); d != "" || !ok {
				return d, ok
			}
		}
		if _, err := dec.Token(); err != nil {
			return "", false
		}
	}
	return "", true
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &syn):
		return apierr.InvalidConfig("", fmt.Sprintf("The request body is not valid JSON (at byte %d).", syn.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apierr.InvalidConfig("", "The request body is not valid JSON (it ends early).")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return apierr.InvalidConfig("", "The request body has a value of the wrong type: expected "+jsonKind(typ.Type)+".")
		}
		return apierr.InvalidConfig(field, fmt.Sprintf("%s must be %s, not %s.", field, jsonKind(typ.Type), typ.Value))
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return apierr.InvalidConfig(name, fmt.Sprintf("Unknown key %q in the request body; send only the documented keys.", name))
	}
	return apierr.InvalidConfig("", "The request body could not be read: "+msg)
}

// jsonKind names a Go type as the JSON a client should send.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another type"
}

// Optional is a body field that distinguishes absent (Set false), null
// (Set true, Null true) and a value. Use it for PATCH fields where null
// means "back to the default".
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		o.Null = true
		return nil
	}
	if err := json.Unmarshal(b, &o.Value); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return &json.UnmarshalTypeError{Value: typ.Value, Type: reflect.TypeFor[T](), Offset: typ.Offset}
		}
		return err
	}
	return nil
}

// Ptr returns nil when absent or null, else a pointer to the value.
func (o Optional[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}

// QueryString returns the trimmed value of name; blank counts as omitted.
func QueryString(q url.Values, name string) (string, bool) {
	v := strings.TrimSpace(q.Get(name))
	return v, v != ""
}

// QueryLimit reads a page size: omitted, blank or not a positive whole
// number gives def; a value above max is clamped to max.
func QueryLimit(q url.Values, name string, def, max int) int {
	v, ok := QueryString(q, name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return def
	}
	return min(n, max)
}

// QueryLimitClamped reads a page size of a list whose text says "clamped 1
// to most" (presets, actors, voices): omitted or blank gives def; a whole
// number is clamped into 1..most, so 0 and negatives give 1; a value that is
// not a whole number gives def (the text is silent; spec/rules.yaml
// PRESET-007 records the reading).
func QueryLimitClamped(q url.Values, name string, def, most int) int {
	v, ok := QueryString(q, name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return min(max(n, 1), most)
}

// QueryEnum reads name and checks it against allowed; blank counts as
// omitted; another value is 400 invalid_config naming the field.
func QueryEnum(q url.Values, name string, allowed ...string) (string, bool, error) {
	v, ok := QueryString(q, name)
	if !ok {
		return "", false, nil
	}
	if !slices.Contains(allowed, v) {
		return "", false, apierr.InvalidConfig(name, fmt.Sprintf("%s must be one of %s.", name, strings.Join(allowed, ", ")))
	}
	return v, true, nil
}

// QueryTime reads a time filter: blank counts as omitted; a date
// (2006-01-02) is midnight UTC; a date-time needs a zone (Z or ±hh:mm). A
// zoneless or unreadable value is 400 invalid_config naming the field.
func QueryTime(q url.Values, name string) (time.Time, bool, error) {
	v, ok := QueryString(q, name)
	if !ok {
		return time.Time{}, false, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.UTC(), true, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), true, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
		if _, err := time.Parse(layout, v); err == nil {
			return time.Time{}, false, apierr.InvalidConfig(name, name+" has no time zone; add Z or an offset such as +02:00, or send a date.")
		}
	}
	return time.Time{}, false, apierr.InvalidConfig(name, name+" must be a date (2006-01-02) or a date-time with a zone (2006-01-02T15:04:05Z).")
}

// WriteJSON writes v as a JSON answer with status, Content-Type
// application/json and Cache-Control no-store. It encodes before writing,
// so an unencodable v returns an internal error with nothing written; write
// errors (the client went away) are not reported.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	buf := answerBufs.Get().(*bytes.Buffer)
	defer putAnswerBuf(buf)
	// Encode writes what json.Marshal makes plus the newline, into a reused buffer.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return apierr.Internal(err, "The service failed to encode its answer.")
	}
	WriteEncoded(w, status, buf.Bytes())
	return nil
}

// WriteEncoded writes body, JSON already encoded, as an answer with status and the headers of
// WriteJSON. Write errors (the client went away) are not reported.
func WriteEncoded(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// The answer headers' values, shared by every answer (Header.Set made a slice per header per
// answer). Nothing writes into a header's value slice in place, and an Add to one copies it.
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// answerBufs are WriteJSON's encoding buffers; one grown past maxPooledAnswer (a long list) is
// left to the collector rather than kept.
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 64 << 10

func putAnswerBuf(b *bytes.Buffer) {
	if b.Cap() > maxPooledAnswer {
		return
	}
	b.Reset()
	answerBufs.Put(b)
}
