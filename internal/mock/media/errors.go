package media

import (
	"errors"
	"fmt"
)

// Code names why an inspection refused the bytes. The values are stable:
// they are the `reason` strings of fixtures/media/manifest.yaml and may be
// shown to callers in an invalid_config message.
type Code string

// Codes.
const (
	// CodeEmpty: there are no bytes.
	CodeEmpty Code = "empty"
	// CodeNotAccepted: the declared type, or with no declaration the
	// sniffed type, is not an accepted upload type (a web page, a PDF...).
	CodeNotAccepted Code = "not_accepted"
	// CodeSignatureMismatch: the real file signature (or the decoded image
	// format) is not the declared type.
	CodeSignatureMismatch Code = "signature_mismatch"
	// CodePixelBounds: an image side is over MaxImageSide or the image has
	// more than MaxImagePixels pixels.
	CodePixelBounds Code = "pixel_bounds"
	// CodeTruncated: the file ends before its headers or data do.
	CodeTruncated Code = "truncated"
	// CodeCorrupt: the headers or data are malformed in another way.
	CodeCorrupt Code = "corrupt"
)

// Error is the one error type of the package. Match it with errors.Is
// against the Err* values (which compare by Code only) or errors.As to read
// the detail.
type Error struct {
	Code Code
	// Detail says what was found, e.g. "declared image/jpeg, bytes are
	// image/png" or "16385x10 px".
	Detail string
	// Err is the underlying decoder error, if any.
	Err error
}

var _ error = (*Error)(nil)

// Error renders "media: <code>: <detail>: <cause>".
func (e *Error) Error() string {
	s := "media: " + string(e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying decoder error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is. Never modify them.
var (
	ErrEmpty             = &Error{Code: CodeEmpty}
	ErrNotAccepted       = &Error{Code: CodeNotAccepted}
	ErrSignatureMismatch = &Error{Code: CodeSignatureMismatch}
	ErrPixelBounds       = &Error{Code: CodePixelBounds}
	ErrTruncated         = &Error{Code: CodeTruncated}
	ErrCorrupt           = &Error{Code: CodeCorrupt}
)

func newErr(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...), Err: err}
}

// CodeOf returns the Code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
