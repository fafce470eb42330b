// Package errtable is the interface spec's error table as Go data, generated from the REST
// description (spec/openapi.yaml, components.schemas.ErrorCode.x-error-table) so that the
// packages that answer with it (the mock's coded error) need neither the description nor the
// OpenAPI library. A test in ./gen holds the generated file to the description.
package errtable

//go:generate go run ./gen ../openapi.yaml table_gen.go

// Row is one row of the error table: the machine code, the HTTP status it is answered with, and
// whether the call may be retried (at most twice).
type Row struct {
	Code      string // the machine code, e.g. not_authorized
	Status    int    // the HTTP status it is answered with
	Retryable bool   // the call may be retried (at most twice)
}

// Lookup returns the row of code.
func Lookup(code string) (Row, bool) {
	for _, r := range Rows {
		if r.Code == code {
			return r, true
		}
	}
	return Row{}, false
}
