package mock

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// net/http answers a request it cannot read (a header block over MaxHeaderBytes, a path with a
// bad escape, a control byte in a header, an unreadable Content-Length, an unknown
// Transfer-Encoding, a missing Host, an HTTP version it does not speak) itself, before any
// handler runs, in text/plain, by writing one canned answer straight to the connection
// (net/http's conn.serve). The connection the mock serves on (capConn) recognises those writes
// and puts the envelope in their place: 400 invalid_config, naming the reason, with
// Connection: close (net/http closes the connection after them). The same holds for the empty
// 417 net/http answers to an Expect header other than 100-continue. 400 is the status the error
// table gives a request the service refuses to read; 431, 501 and 505 are not in the interface
// text. docs/mock-limits.md documents the answers.

// cannedHeaders is what net/http writes between the status line and the text of a canned answer.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// envelopeForCanned returns the envelope answer that replaces p, when p is one whole canned
// answer of net/http: "HTTP/1.1 " + X + cannedHeaders + X, or the 501 with its fixed text, or an
// empty 417. Anything else (every answer a handler writes: those carry a Date header and their
// headers in sorted order) is not replaced.
func envelopeForCanned(p []byte, maxHeaderBytes int) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		rest, ok = bytes.CutPrefix(p, []byte("HTTP/1.0 "))
		if !ok {
			return nil, false
		}
	}
	if bytes.HasPrefix(rest, []byte("417 Expectation Failed\r\n")) && bytes.HasSuffix(rest, []byte("\r\n\r\n")) &&
		bytes.Contains(rest, []byte("\r\nContent-Length: 0\r\n")) {
		return envelopeAnswer("The Expect header can only be 100-continue; send the request without it."), true
	}
	status, text, ok := bytes.Cut(rest, []byte(cannedHeaders))
	if !ok || len(status) < 4 || bytes.ContainsAny(status, "\r\n") {
		return nil, false
	}
	switch {
	case bytes.Equal(status, text) && string(status) == "431 Request Header Fields Too Large":
		return envelopeAnswer(fmt.Sprintf("The request line and headers are larger than the service reads (about %d bytes); "+
			"send shorter headers.", maxHeaderBytes)), true
	case string(status) == "501 Not Implemented" && string(text) == "Unsupported transfer encoding":
		return envelopeAnswer("The request uses a Transfer-Encoding the service does not read; " +
			"send the body with Content-Length or chunked."), true
	case bytes.Equal(status, text) && string(status) == "400 Bad Request":
		return envelopeAnswer("The request is not well-formed HTTP/1.1: its request line, path or a header could not be read " +
			"(a bad percent-escape, a control character, an unreadable Content-Length?)."), true
	case bytes.Equal(status, text):
		// A statusError of net/http: "NNN Reason: detail".
		if _, detail, ok := bytes.Cut(status, []byte(": ")); ok {
			return envelopeAnswer("The request is not well-formed HTTP/1.1: " + string(detail) + "."), true
		}
	}
	return nil, false
}

// envelopeAnswer is a whole HTTP/1.1 answer: 400 invalid_config with message, closing the
// connection.
func envelopeAnswer(message string) []byte {
	return rawAnswer(apierr.InvalidConfig("", message), false)
}

// rawAnswer is e as a whole HTTP/1.1 answer in the envelope, closing the connection; with head,
// without its body (the answer to a HEAD).
func rawAnswer(e *apierr.Error, head bool) []byte {
	status, body := wire.Encode(e)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	b.WriteString("Content-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	if !head {
		b.Write(body)
	}
	return b.Bytes()
}
