package spec_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mediaspec/mediaspec/spec"
)

// The rule catalogue is embedded: every rule has a stable id, a level and the section of the
// interface text it comes from.
func ExampleLoadRules() {
	rules, err := spec.LoadRules()
	if err != nil {
		panic(err)
	}
	r, ok := rules.Get("CHECK-001")
	fmt.Println(ok, r.Level, r.Section, r.Area())
	// Output: true MUST Errors CHECK
}

// A Validator's transport checks every exchange against the REST description as it happens: here
// a server answers the balance read with a status the description does not list, and the
// violation names the call and the status.
func ExampleValidator_Transport() {
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprint(w, `{"error":{"code":"teapot","message":"short and stout"}}`)
	}))
	defer srv.Close()

	client := &http.Client{Transport: v.Transport(http.DefaultTransport, func(vi spec.Violation) {
		fmt.Println(vi.Kind, vi.Method, vi.Path, vi.Status)
	})}
	resp, err := client.Get(srv.URL + spec.BasePath + "/credits/balance")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("the caller still gets the answer:", resp.StatusCode)
	// Output:
	// response GET /api/v1/credits/balance 418
	// the caller still gets the answer: 418
}
