package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mediaspec/mediaspec/internal/jsoncount"
)

// What the suite reads from its target is capped: the target is a server nobody here controls,
// often run in a shared CI runner, and an answer that never ends, a compression bomb or a header
// block of megabytes must fail the call that met it, naming what was too large, never grow the
// run's memory. docs/check.md lists the caps.
const (
	// DefaultMaxAnswerBytes caps the body of one answer that is not a JSON document: a file the
	// suite downloads from a link (Config.MaxAnswerBytes, --max-answer-bytes). The largest file the
	// reference mock renders is a 15-minute WAV of 14.4 MB; the suite's own outputs are far smaller.
	DefaultMaxAnswerBytes ByteSize = 32 << 20
	// DefaultMaxJSONBytes caps the body of an answer the suite decodes (a JSON or other structured
	// document, or one without a Content-Type) (Config.MaxJSONBytes, --max-json-bytes). Decoded JSON
	// takes up to 50 times its size in memory, so this cap is lower than the file cap; the largest
	// JSON answer of the reference mock, its live REST description, is under 300 KB.
	DefaultMaxJSONBytes ByteSize = 4 << 20
	// BytesPerJSONValue sets how many values (objects, arrays, members and items) a JSON answer
	// may hold: one per that many bytes of the JSON cap (209,715 for the default 4 MiB). A decoded
	// value takes up to about 250 bytes, so a document of nothing but tiny objects would take 50
	// times its size; the reference mock's answers hold one value per 17 to 37 bytes.
	BytesPerJSONValue = 20
	// MaxAnswerHeaderBytes caps the header block of one answer (http.Transport's
	// MaxResponseHeaderBytes; Go's own default is 10 MB).
	MaxAnswerHeaderBytes = 64 << 10
	// MaxRequestHeaderBytes caps the header block of a request the suite's webhook receiver reads
	// (http.Server's MaxHeaderBytes; Go's own default is 1 MB).
	MaxRequestHeaderBytes = 64 << 10
	// receiverReadTimeout bounds how long the suite's webhook receiver reads one delivery.
	receiverReadTimeout = 30 * time.Second
	// maxClockAnswer caps GET /_control/v1/clock's answer (a small object).
	maxClockAnswer = 64 << 10
)

// ByteSize is a size in bytes, written as a whole number of bytes or with a unit: 4MiB, 512KiB,
// 1GiB (KB, MB and GB are read as their binary counterparts). It is a flag.Value and reads from
// YAML and the environment in the same forms.
type ByteSize int64

// String renders the size with the largest binary unit that divides it ("32MiB", "1500").
func (b ByteSize) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(b) >= u.n && int64(b)%u.n == 0 {
			return strconv.FormatInt(int64(b)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// Set parses a size (flag.Value).
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// UnmarshalYAML reads a size from a YAML number or string.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	return b.Set(n.Value)
}

// ParseByteSize reads "33554432", "32MiB", "32MB", "512 KiB"; it refuses negative sizes.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToLower(strings.TrimSpace(t[len(num):]))
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || mult == 0 || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with KiB, MiB or GiB)", s)
	}
	return ByteSize(n * mult), nil
}

// maxAnswer is the cap for a body of the given Content-Type.
func (f *Framework) maxAnswer(contentType string) (limit int64, flag string) {
	if structured(contentType) {
		return int64(orDefault(f.cfg.MaxJSONBytes, DefaultMaxJSONBytes)), "max-json-bytes"
	}
	return int64(orDefault(f.cfg.MaxAnswerBytes, DefaultMaxAnswerBytes)), "max-answer-bytes"
}

func orDefault(v, def ByteSize) ByteSize {
	if v <= 0 {
		return def
	}
	return v
}

// structured reports whether a body of this Content-Type is decoded (JSON, YAML, XML, a form) or
// may be: one without a Content-Type is judged and decoded as JSON.
func structured(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(contentType)
	}
	if strings.TrimSpace(mt) == "" {
		return true
	}
	for _, s := range []string{"json", "yaml", "xml", "form"} {
		if strings.Contains(mt, s) {
			return true
		}
	}
	return false
}

// OverCapError is an answer larger than the suite reads: its body or its header block.
type OverCapError struct {
	What  string // "the answer body" or "the header block of the answer"
	Call  string // "GET http://host/api/v1/capabilities" (redacted)
	Limit int64  // the cap, in bytes (or in JSON values when Values is set)
	Flag  string // the flag that raises the cap, or ""
	// Announced is the Content-Length the answer announced (0: none, or within the cap).
	Announced int64
	// Values, when set, is the most JSON values the cap allows, and the body held more.
	Values int64
}

// Error names what was over which cap, on which call.
func (e *OverCapError) Error() string {
	s := fmt.Sprintf("%s to %s is over %s", e.What, e.Call, ByteSize(e.Limit))
	if e.Values > 0 {
		return fmt.Sprintf("%s to %s holds over %d JSON values (objects, arrays, members, items), the most the suite decodes within %s (--%s raises both; decoded JSON takes up to 50 times its size)",
			e.What, e.Call, e.Values, ByteSize(e.Limit), e.Flag)
	}
	if e.Announced > 0 {
		s = fmt.Sprintf("%s to %s is %d bytes (its Content-Length), over %s", e.What, e.Call, e.Announced, ByteSize(e.Limit))
	}
	if e.Flag != "" {
		s += fmt.Sprintf(", the cap the suite reads (--%s raises it)", e.Flag)
	} else {
		s += ", the cap the suite reads"
	}
	return s
}

// readBody reads the answer's body within the cap for its Content-Type and closes it. call names
// the call in an error ("GET http://..."). An error says what went wrong in one line: over the
// cap, shorter than announced, malformed, or not complete within the call's deadline.
func (f *Framework) readBody(ctx context.Context, res *http.Response, call string) ([]byte, error) {
	defer res.Body.Close()
	limit, flag := f.maxAnswer(res.Header.Get("Content-Type"))
	if res.ContentLength > limit {
		return nil, &OverCapError{What: "the answer body", Call: call, Limit: limit, Flag: flag, Announced: res.ContentLength}
	}
	b, over, err := readCapped(res.Body, res.ContentLength, limit)
	switch {
	case over:
		return nil, &OverCapError{What: "the answer body", Call: call, Limit: limit, Flag: flag}
	case err == nil && flag == "max-json-bytes":
		if most := limit / BytesPerJSONValue; int64(jsoncount.Values(b)) > most {
			return nil, &OverCapError{What: "the answer body", Call: call, Limit: limit, Flag: flag, Values: most}
		}
		return b, nil
	case err == nil:
		return b, nil
	case ctx.Err() != nil:
		var rt errRequestTimeout
		if cause := context.Cause(ctx); errors.As(cause, &rt) {
			// Counted: a target that drip-feeds answers stops the run as a silent one does
			// (Unresponsive), not after a timeout per spec.
			f.dripCalls.Add(1)
			e := bodyErrorf("the answer body of %s was not complete within %s (%s)", call, rt.d, rt.limit())
			e.timeout = true
			return nil, e
		}
		return nil, bodyErrorf("the answer body of %s was not complete: %v", call, context.Cause(ctx))
	case errors.Is(err, io.ErrUnexpectedEOF) && res.ContentLength > 0:
		return nil, bodyErrorf("the answer body of %s ended after %d of the %d bytes its Content-Length announced", call, len(b), res.ContentLength)
	}
	return nil, bodyErrorf("the answer body of %s could not be read: %s", call, oneLine(err.Error()))
}

// BodyError is an answer whose body could not be read whole: it ended early, it was malformed, or
// it was still arriving when the call's deadline passed.
type BodyError struct {
	Msg     string // one line, no secret
	timeout bool   // the call's deadline passed while the body was arriving
}

// Error is the message.
func (e *BodyError) Error() string { return e.Msg }

// Is makes errors.Is(err, errBodyTimeout) true of a body that was still arriving at the deadline.
func (e *BodyError) Is(target error) bool { return target == errBodyTimeout && e.timeout }

// errBodyTimeout matches (errors.Is) a BodyError of a body still arriving at the call's deadline.
var errBodyTimeout = errors.New("the answer body was not complete within the call's deadline")

func bodyErrorf(format string, args ...any) *BodyError {
	return &BodyError{Msg: fmt.Sprintf(format, args...)}
}

// answeredBadly reports whether err is about an answer that arrived (too large, or unreadable)
// rather than a target that did not answer.
func answeredBadly(err error) bool {
	var over *OverCapError
	var be *BodyError
	return errors.As(err, &over) || errors.As(err, &be)
}

// readCapped reads r up to limit bytes: over reports that r had more. announced (a Content-Length,
// -1 when unknown) sizes the buffer when it is within the limit. On an error b is what was read.
func readCapped(r io.Reader, announced, limit int64) (b []byte, over bool, err error) {
	var buf bytes.Buffer
	if announced > 0 && announced <= limit {
		buf.Grow(int(announced) + 1)
	}
	_, err = buf.ReadFrom(io.LimitReader(r, limit+1))
	if int64(buf.Len()) > limit {
		return nil, true, nil
	}
	b = buf.Bytes()
	if cap(b) > 2*len(b)+4096 {
		b = bytes.Clone(b) // keep no doubled buffer alive with a large body
	}
	return b, false, err
}

// headerOverCap turns the transport's "server response headers exceeded" error into an
// OverCapError naming the call; other errors come back unchanged.
func headerOverCap(err error, call string) error {
	if err != nil && strings.Contains(err.Error(), "server response headers exceeded") {
		return &OverCapError{What: "the header block of the answer", Call: call, Limit: MaxAnswerHeaderBytes}
	}
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// noRedirects makes a client answer a redirect as it came: the suite never follows one off the
// target (a Location may name any host).
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// newTransport is the suite's HTTP transport: Go's defaults, with the header block of an answer
// capped at MaxAnswerHeaderBytes. Bodies are capped where they are read (readBody); a gzip answer
// the transport asked for itself is decompressed as it is read, so the cap counts decompressed
// bytes.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxResponseHeaderBytes = MaxAnswerHeaderBytes
	return t
}

// httpClient is a client on the run's transport that follows no redirect.
func (f *Framework) httpClient() *http.Client {
	return &http.Client{Transport: f.base, CheckRedirect: noRedirects}
}
