package refusal

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

var (
	body   atomic.Pointer[string] // what the test server answers now, with 400
	client *framework.Client
)

// TestMain starts one test server on 127.0.0.1:0 (it answers body) and one framework over it.
func TestMain(m *testing.M) {
	var stop func()
	client, stop = drivertest.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(*body.Load()))
	}))
	code := m.Run()
	stop()
	os.Exit(code)
}

// refused serves a refusal whose error object is e and reads it.
func refused(t *testing.T, e string) *framework.Response {
	t.Helper()
	b := `{"error":` + e + `}`
	body.Store(&b)
	var r *framework.Response
	if msg := drivertest.FailureOf(t, func() { r = client.Post(context.Background(), "/generations", map[string]any{}) }); msg != "" {
		t.Fatal(msg)
	}
	return r
}

// The field at fault counts wherever the error object names it, in any form, as a whole word.
func TestExpectField(t *testing.T) {
	for _, e := range []string{
		`{"code":"invalid_config","field":"config.aspect_ratio"}`,
		`{"code":"invalid_config","message":"aspect_ratio must be one of 1:1, 16:9"}`,
		`{"code":"invalid_config","details":[{"pointer":"/config/aspect_ratio"}]}`,
		`{"code":"invalid_config","details":{"aspect_ratio":"unknown key"}}`,
	} {
		if msg := drivertest.FailureOf(t, func() { ExpectField(refused(t, e), "config.aspect_ratio") }); msg != "" {
			t.Errorf("%s: %s", e, msg)
		}
	}
	for _, e := range []string{
		`{"code":"invalid_config","message":"the config is invalid"}`,
		`{"code":"invalid_config","field":"config.aspect_ratios"}`,
		`{"code":"invalid_config","aspect_ratio":"the error object's own key is no word"}`,
	} {
		msg := drivertest.FailureOf(t, func() { ExpectField(refused(t, e), "config.aspect_ratio") })
		if !strings.Contains(msg, "names the field at fault (config.aspect_ratio)") {
			t.Errorf("%s: failure %q, want the field's", e, msg)
		}
	}
	msg := drivertest.FailureOf(t, func() { ExpectField(refused(t, `"invalid_config"`), "config.aspect_ratio") })
	if !strings.Contains(msg, `"error" is not an object`) {
		t.Errorf("an error that is a string: failure %q", msg)
	}
}

func TestExpectAssetIDsIfNamed(t *testing.T) {
	const id, other = "ast_0123456789abcdef0123456789abcdef", "ast_fedcba9876543210fedcba9876543210"
	for e, says := range map[string]string{
		`{"code":"input_not_ready","message":"an upload is not ready"}`: "",
		`{"code":"input_not_ready","asset_ids":["` + id + `"]}`:         "",
		`{"code":"input_not_ready","asset_ids":["` + other + `"]}`:      "include the upload not ready",
	} {
		msg := drivertest.FailureOf(t, func() { ExpectAssetIDsIfNamed(refused(t, e), id) })
		if (says == "" && msg != "") || !strings.Contains(msg, says) {
			t.Errorf("%s: failure %q, want %q", e, msg, says)
		}
	}
	msg := drivertest.FailureOf(t, func() { ExpectAssetIDs(refused(t, `{"code":"input_not_ready"}`), id) })
	if !strings.Contains(msg, "names the upload "+id) {
		t.Errorf("a refusal naming no upload: failure %q", msg)
	}
}
