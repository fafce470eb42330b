package spec

import "github.com/mediaspec/mediaspec/spec/errtable"

// ErrorCode is one row of the interface spec's error table: the machine code, the HTTP status it is
// answered with, and whether the call may be retried (at most twice).
type ErrorCode = errtable.Row

// ErrorCodes is the interface spec's error table, in its order, generated from the REST
// description's x-error-table (package errtable). The description's error code enum must list
// exactly these codes (a test holds it to that), and services answer each with exactly this status
// and retryable verdict.
var ErrorCodes = errtable.Rows

// LookupErrorCode returns the error table row for code.
func LookupErrorCode(code string) (ErrorCode, bool) { return errtable.Lookup(code) }
