package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

func TestPresentedKey(t *testing.T) {
	for _, c := range []struct {
		headers [][2]string
		want    string
	}{
		{[][2]string{{"Authorization", "Bearer k1"}}, "k1"},
		{[][2]string{{"Authorization", "bearer   k1 "}}, "k1"},
		{[][2]string{{"X-API-Key", "k2"}}, "k2"},
		{[][2]string{{"Authorization", "Bearer k1"}, {"X-API-Key", "k1"}}, "k1"},
		{[][2]string{{"Authorization", "Bearer k1"}, {"X-API-Key", "k2"}}, ""},
		{[][2]string{{"Authorization", "Token k1"}}, ""},
		{[][2]string{{"Authorization", "Bearer"}}, ""},
		{[][2]string{{"X-API-Key", " "}}, ""},
		{[][2]string{{"X-API-Key", "a"}, {"X-API-Key", "a"}}, ""},
		{nil, ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, h := range c.headers {
			r.Header.Add(h[0], h[1])
		}
		got, err := PresentedKey(r)
		if c.want == "" {
			if err == nil || apierr.CodeOf(err) != apierr.CodeNotAuthorized {
				t.Fatalf("%v: %q %v", c.headers, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Fatalf("%v: %q %v", c.headers, got, err)
		}
	}
}

func TestOpenAPIHandlerWithoutDocument(t *testing.T) {
	rec := httptest.NewRecorder()
	err := OpenAPIHandler(nil)(rec, httptest.NewRequest("GET", "/", nil))
	if apierr.CodeOf(err) != apierr.CodeInternalError || rec.Body.Len() != 0 {
		t.Fatalf("%v %q", err, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	if err := OpenAPIHandler([]byte(`{"openapi":"3.0.3"}`))(rec, httptest.NewRequest("GET", "/", nil)); err != nil || rec.Code != http.StatusOK ||
		rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%v %d %v", err, rec.Code, rec.Header())
	}
}
