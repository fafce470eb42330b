package control

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

var (
	docValidatorOnce sync.Once
	docValidator     *spec.Validator
	docValidatorErr  error
)

// CheckAgainstDocument fails t unless an exchange with the control API matches spec/control.yaml:
// the route is documented, the request is valid when it was answered with success, and the answer
// (status included) is documented. It is for this package's tests and its external test package.
func CheckAgainstDocument(t testing.TB, method, path, body string, header map[string][]string, rec *httptest.ResponseRecorder) {
	t.Helper()
	docValidatorOnce.Do(func() {
		doc, err := spec.LoadControl(context.Background())
		if err != nil {
			docValidatorErr = err
			return
		}
		docValidator, docValidatorErr = spec.NewValidator(doc, spec.WithBasePath(BasePath))
	})
	if docValidatorErr != nil {
		t.Fatalf("control.yaml: %v", docValidatorErr)
	}
	req := httptest.NewRequest(method, BasePath+path, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	if _, _, ok := docValidator.FindRoute(method, req.URL.Path); !ok {
		t.Fatalf("%s %s: no route in control.yaml", method, path)
	}
	if rec.Code < 400 {
		if err := docValidator.ValidateRequest(context.Background(), req, []byte(body)); err != nil {
			t.Fatalf("%s %s: request does not match control.yaml: %v", method, path, err)
		}
	}
	if err := docValidator.ValidateResponse(context.Background(), req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
		t.Fatalf("%s %s -> %d %s: answer does not match control.yaml: %v", method, path, rec.Code, rec.Body.String(), err)
	}
}
