package framework

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxBodyInTranscript is how much of a body a transcript keeps; the rest is elided.
const maxBodyInTranscript = 4096

// Exchange is one HTTP call as a transcript shows it. Every field is already redacted.
type Exchange struct {
	Method         string      `json:"method"`                    // GET, POST, ...
	URL            string      `json:"url"`                       // the full URL
	RequestHeader  http.Header `json:"request_header,omitempty"`  // as sent
	RequestBody    string      `json:"request_body,omitempty"`    // as sent, clipped
	Status         int         `json:"status"`                    // the HTTP status; 0 when no answer came
	ResponseHeader http.Header `json:"response_header,omitempty"` // as answered
	ResponseBody   string      `json:"response_body,omitempty"`   // as answered, clipped
	// Err is the transport error when no response arrived (Status 0), or why the body of one that
	// did was not read (over the cap, malformed, cut short).
	Err string `json:"error,omitempty"`
	// Violations are the ways the exchange broke the REST description.
	Violations []string `json:"violations,omitempty"`
	// Advisories are the ways the answer differs from the reference's own choices where the
	// interface text allows it: never failures.
	Advisories []string `json:"advisories,omitempty"`
	// Invalid marks a request the spec sent deliberately against the description.
	Invalid bool `json:"deliberately_invalid,omitempty"`
}

// newExchange redacts a call into an Exchange.
func newExchange(red *Redactor, method, url string, reqH http.Header, reqBody []byte, status int, resH http.Header, resBody []byte) *Exchange {
	return &Exchange{
		Method:         method,
		URL:            red.String(url),
		RequestHeader:  red.Header(reqH),
		RequestBody:    clipBody(red, reqBody),
		Status:         status,
		ResponseHeader: red.Header(resH),
		ResponseBody:   clipBody(red, resBody),
	}
}

// clipBody is a body as a transcript keeps it: redacted and clipped like clip, without copying
// or redacting more of a large body than the transcript keeps (a secret is at most redactMargin
// bytes long, so one that straddles the cut is still redacted).
func clipBody(red *Redactor, b []byte) string {
	const redactMargin = 1024
	if !utf8.Valid(b) {
		return fmt.Sprintf("(%d bytes of binary data)", len(b))
	}
	if len(b) <= maxBodyInTranscript+redactMargin {
		return clip(red.String(string(b)))
	}
	head, rest := b[:maxBodyInTranscript+redactMargin], len(b)-maxBodyInTranscript-redactMargin
	s := red.String(strings.ToValidUTF8(string(head), ""))
	cut := min(len(s), maxBodyInTranscript)
	return strings.ToValidUTF8(s[:cut], "") + fmt.Sprintf("\n... (%d more bytes)", len(s)-cut+rest)
}

func clip(s string) string {
	if !utf8.ValidString(s) {
		return fmt.Sprintf("(%d bytes of binary data)", len(s))
	}
	if len(s) <= maxBodyInTranscript {
		return s
	}
	return strings.ToValidUTF8(s[:maxBodyInTranscript], "") + fmt.Sprintf("\n... (%d more bytes)", len(s)-maxBodyInTranscript)
}

// violationText is a description violation without the schema and value dumps the validator
// appends: the first paragraph says what broke, the dumps are pages of the description itself.
func violationText(s string) string {
	for _, cut := range []string{"\nSchema:", "\nValue:"} {
		if i := strings.Index(s, cut); i >= 0 {
			s = s[:i]
		}
	}
	return strings.TrimSpace(s)
}

// String renders the exchange the way curl -v does: > for the request, < for the response.
func (e *Exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", e.Method, e.URL)
	if e.Invalid {
		b.WriteString("> (deliberately invalid request)\n")
	}
	writeHeader(&b, "> ", e.RequestHeader)
	if e.RequestBody != "" {
		b.WriteString(">\n")
		for _, line := range strings.Split(e.RequestBody, "\n") {
			b.WriteString("> " + line + "\n")
		}
	}
	if e.Err != "" && e.Status == 0 {
		fmt.Fprintf(&b, "< (no response: %s)\n", e.Err)
	} else {
		fmt.Fprintf(&b, "< %d %s\n", e.Status, http.StatusText(e.Status))
		writeHeader(&b, "< ", e.ResponseHeader)
		if e.Err != "" {
			fmt.Fprintf(&b, "< (body not read: %s)\n", e.Err)
		}
		if e.ResponseBody != "" {
			b.WriteString("<\n")
			for _, line := range strings.Split(e.ResponseBody, "\n") {
				b.WriteString("< " + line + "\n")
			}
		}
	}
	for _, v := range e.Violations {
		b.WriteString("! " + v + "\n")
	}
	for _, a := range e.Advisories {
		b.WriteString("? advisory: " + a + "\n")
	}
	return b.String()
}

// Short renders the exchange as the console shows a failure: the request line and body, the
// status and body, the violations, each body cut to maxBody bytes, and no headers.
func (e *Exchange) Short(maxBody int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", e.Method, e.URL)
	cut := func(prefix, body string) {
		if body == "" {
			return
		}
		if len(body) > maxBody {
			body = body[:maxBody] + fmt.Sprintf(" ... (%d more bytes in the report)", len(body)-maxBody)
		}
		for _, line := range strings.Split(body, "\n") {
			b.WriteString(prefix + line + "\n")
		}
	}
	cut("> ", e.RequestBody)
	if e.Err != "" && e.Status == 0 {
		fmt.Fprintf(&b, "< (no response: %s)\n", e.Err)
	} else {
		fmt.Fprintf(&b, "< %d %s\n", e.Status, http.StatusText(e.Status))
		if e.Err != "" {
			fmt.Fprintf(&b, "< (body not read: %s)\n", e.Err)
		}
		cut("< ", e.ResponseBody)
	}
	for _, v := range e.Violations {
		b.WriteString("! " + firstLine(v) + "\n")
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func writeHeader(b *strings.Builder, prefix string, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, k, v)
		}
	}
}

// Transcript collects the exchanges of one spec. It is safe for concurrent use.
type Transcript struct {
	mu        sync.Mutex // guards exchanges, at, recalled
	exchanges []*Exchange
	at        []time.Time // when each exchange was added
	// recalled are answers of earlier specs the spec was handed again (Client.Memo): not its
	// calls, but an assertion of the spec may judge them.
	recalled []timedExchange
}

type timedExchange struct {
	ex *Exchange
	at time.Time
}

// Add appends an exchange.
func (t *Transcript) Add(e *Exchange) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.exchanges = append(t.exchanges, e)
	t.at = append(t.at, time.Now())
}

// recall notes that the spec was handed an answer an earlier call made (a memoized one).
func (t *Transcript) recall(e *Exchange) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recalled = append(t.recalled, timedExchange{e, time.Now()})
}

// Reset forgets every exchange.
func (t *Transcript) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.exchanges, t.at, t.recalled = nil, nil, nil
}

// Exchanges returns the exchanges so far, oldest first.
func (t *Transcript) Exchanges() []*Exchange {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Exchange(nil), t.exchanges...)
}

// judged returns the call whose answer a failure judged: of the exchanges added or recalled by
// failedAt, the one the failure message shows (Response.Describe), else the one whose request line
// ("GET http://...") it names; when it names several, the one it names first, and of equal ones
// the latest. It is nil when the message names none of them (a failure about state, a setup
// failure). last is the last exchange added by failedAt: calls made after the failure (an
// AfterEach's, waiting for the spec's jobs to end) are neither.
func (t *Transcript) judged(msg string, failedAt time.Time) (judged, last *Exchange) {
	t.mu.Lock()
	var before []timedExchange
	for i, e := range t.exchanges {
		if !t.at[i].After(failedAt) {
			before = append(before, timedExchange{e, t.at[i]})
			last = e
		}
	}
	for _, r := range t.recalled {
		if !r.at.After(failedAt) {
			before = append(before, r)
		}
	}
	t.mu.Unlock()
	sort.SliceStable(before, func(i, j int) bool { return before[i].at.Before(before[j].at) })
	for _, show := range []func(*Exchange) string{(*Exchange).String, requestLine} {
		pos := -1
		for _, c := range before {
			if i := namedAt(msg, show(c.ex)); i >= 0 && (pos < 0 || i <= pos) {
				judged, pos = c.ex, i
			}
		}
		if judged != nil {
			return judged, last
		}
	}
	return nil, last
}

// requestLine is how a message names a call without showing it: "GET http://host/api/v1/x".
func requestLine(e *Exchange) string { return e.Method + " " + e.URL }

// noArgs formats a message as Gomega does an assertion's description given as one string: through
// fmt.Sprintf, so a % in a body or URL it shows comes out changed ("%!F(MISSING)").
var noArgs []any

// namedAt is where msg shows text, as it is or as Gomega formats a description, ending where a URL
// cannot go on (so /generations is not found in /generations/gen_1); -1 when it does not.
func namedAt(msg, text string) int {
	for _, form := range []string{text, fmt.Sprintf(text, noArgs...)} {
		for from := 0; ; {
			i := strings.Index(msg[from:], form)
			if i < 0 {
				break
			}
			end := from + i + len(form)
			if end == len(msg) || !urlChar(msg[end]) || strings.HasSuffix(form, "\n") {
				return from + i
			}
			from += i + 1
		}
	}
	return -1
}

func urlChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("/?#&=%.-_~+", b) >= 0
}

// String renders every exchange, numbered.
func (t *Transcript) String() string {
	ex := t.Exchanges()
	var b strings.Builder
	for i, e := range ex {
		fmt.Fprintf(&b, "--- call %d of %d ---\n%s", i+1, len(ex), e.String())
	}
	return b.String()
}
