package receiver

import (
	"fmt"
	"time"
)

// Behavior is the receiver's answer policy. It is called once per attempt, after the attempt was
// verified and recorded (so Attempt carries its Verdict, Path and Number), from the request's
// goroutine; it must be safe for concurrent use. The zero Response answers the default.
type Behavior func(a Attempt) Response

// Response is how the receiver answers one attempt.
type Response struct {
	// Status to answer; 0 answers a.Verdict.DefaultStatus() (204 accepted, 400 refused).
	Status int
	// Location is set as the Location header when non-empty (for redirects).
	Location string
	// Hold delays the answer by this much real time. When the request context ends (the client
	// gave up) or the receiver is closed first, nothing is answered and the attempt is Abandoned.
	Hold time.Duration
	// Release, when set, ends a Hold early once it is closed, and the answer is sent then (a test
	// that moves the sender's clock instead of waiting holds an attempt until it has moved it).
	Release <-chan struct{}
	// Drop closes the connection without any answer (the attempt is Dropped).
	Drop bool
	// Body, when set, is written as the answer's body with ContentType (default text/plain);
	// a 204 has no body whatever Body says.
	Body, ContentType string
}

func (r Response) isZero() bool { return r == Response{} }

// firstN reports whether a is among the first n attempts of its delivery id.
func firstN(a Attempt, n int) bool { return a.Number >= 1 && a.Number <= n }

// FailFirst answers status (e.g. 500, 503, 410) to the first n attempts of each delivery id, and
// the default afterwards.
func FailFirst(n int, status int) Behavior {
	return func(a Attempt) Response {
		if firstN(a, n) {
			return Response{Status: status}
		}
		return Response{}
	}
}

// TimeoutFirst holds each of the first n attempts of each delivery id for hold before answering the
// default; a sender whose timeout is shorter than hold gives up first, and the attempt is Abandoned.
func TimeoutFirst(n int, hold time.Duration) Behavior {
	return func(a Attempt) Response {
		if firstN(a, n) {
			return Response{Hold: hold}
		}
		return Response{}
	}
}

// RedirectFirst answers status (301, 302, 307 or 308) with Location: location to the first n
// attempts of each delivery id. It panics on any other status, a programming error.
func RedirectFirst(n int, status int, location string) Behavior {
	switch status {
	case 301, 302, 307, 308:
	default:
		panic(fmt.Sprintf("receiver.RedirectFirst: status %d is not 301, 302, 307 or 308", status))
	}
	return func(a Attempt) Response {
		if firstN(a, n) {
			return Response{Status: status, Location: location}
		}
		return Response{}
	}
}

// DropFirst closes the connection without an answer on the first n attempts of each delivery id.
func DropFirst(n int) Behavior {
	return func(a Attempt) Response {
		if firstN(a, n) {
			return Response{Drop: true}
		}
		return Response{}
	}
}

// Always answers status to every attempt (e.g. 500 to make every attempt of every delivery fail).
func Always(status int) Behavior {
	return func(Attempt) Response { return Response{Status: status} }
}

// ForPath applies b only to attempts sent to path (one endpoint); others get the default.
func ForPath(path string, b Behavior) Behavior {
	return func(a Attempt) Response {
		if a.Path == path && b != nil {
			return b(a)
		}
		return Response{}
	}
}

// Chain asks each behavior in turn and returns the first non-default Response.
func Chain(bs ...Behavior) Behavior {
	return func(a Attempt) Response {
		for _, b := range bs {
			if b == nil {
				continue
			}
			if r := b(a); !r.isZero() {
				return r
			}
		}
		return Response{}
	}
}

// AnswerWith answers every attempt with status, body and contentType, for a sender that must not
// read the body (a 2XX with a body saying failure is still a success).
func AnswerWith(status int, body, contentType string) Behavior {
	return func(Attempt) Response { return Response{Status: status, Body: body, ContentType: contentType} }
}
