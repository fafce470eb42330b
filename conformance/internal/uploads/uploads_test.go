package uploads

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/conformance/internal/drivertest"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// desk is what the test server answers: POST /uploads with reserveStatus (the body it read kept
// in got).
type desk struct {
	reserveStatus int
	got           map[string]any
}

func (d *desk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	write := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := map[string]any{"error": map[string]any{"ok": false, "code": "invalid_config", "message": "no",
		"retryable": false, "credits_charged": 0}}
	body, _ := io.ReadAll(r.Body)
	switch p := strings.TrimPrefix(r.URL.Path, "/api/v1"); {
	case p == "/uploads":
		_ = json.Unmarshal(body, &d.got)
		write(d.reserveStatus, map[string]any{"ok": true, "asset_id": "ast_0123", "upload_url": "https://files.example.com/put"})
	default:
		write(http.StatusNotFound, refuse)
	}
}

// serveWith makes the test server answer with a handler and returns a client of a key of its own.
var serveWith func(h http.Handler) *framework.Client

// TestMain starts one test server on 127.0.0.1:0 and one framework over it.
func TestMain(m *testing.M) { drivertest.RunSwitched(m, &serveWith) }

// serve makes the test server answer with d and returns a client of a key of its own.
func serve(d *desk) *framework.Client { return serveWith(d) }

// Reserve sends the file's name, type and size and the extra fields, and fails a reservation that
// answers anything but 201.
func TestReserve(t *testing.T) {
	d := &desk{reserveStatus: http.StatusCreated}
	c := serve(d)
	if msg := drivertest.FailureOf(t, func() {
		Reserve(context.Background(), c, "a.png", "image/png", 10, "checksum_sha256", "abc")
	}); msg != "" {
		t.Fatal(msg)
	}
	want := map[string]any{"filename": "a.png", "content_type": "image/png", "size_bytes": 10.0, "checksum_sha256": "abc"}
	if !reflect.DeepEqual(d.got, want) {
		t.Errorf("the reservation sent %v, want %v", d.got, want)
	}
	for _, status := range []int{http.StatusOK, http.StatusAccepted, http.StatusBadRequest} {
		c := serve(&desk{reserveStatus: status})
		if msg := drivertest.FailureOf(t, func() { Reserve(context.Background(), c, "a.png", "image/png", 10) }); msg == "" {
			t.Errorf("a reservation answering %d passed", status)
		}
	}
}

// ExpectDuration takes null for a file of no duration and a whole number within 50 ms of the
// manifest's for one that has a duration; anything else fails.
func TestExpectDuration(t *testing.T) {
	two := int64(2000)
	image := fixtures.File{Name: "image.png"}
	audio := fixtures.File{Name: "audio.wav", DurationMS: &two}
	c := serve(&desk{reserveStatus: http.StatusCreated})
	r := c.Post(context.Background(), "/uploads", map[string]any{})
	for _, tc := range []struct {
		name   string
		f      fixtures.File
		v      any
		passes bool
	}{
		{"image, null", image, nil, true},
		{"image, a number", image, json.Number("0"), false},
		{"audio, exact", audio, json.Number("2000"), true},
		{"audio, within 50 ms", audio, json.Number("2040"), true},
		{"audio, 100 ms off", audio, json.Number("2100"), false},
		{"audio, null", audio, nil, false},
		{"audio, as text", audio, "2000", false},
	} {
		msg := drivertest.FailureOf(t, func() { ExpectDuration(r, tc.v, tc.f) })
		if (msg == "") != tc.passes {
			t.Errorf("%s: failure %q, want passing %v", tc.name, msg, tc.passes)
		}
	}
}

// WithAsset replaces every upload id, plain or in a file object, and leaves the caller's config
// as it was; WithoutUploads drops the fields that name one. Only an id of the text's form is an
// upload's ("^ast_[0-9a-f]{32}$"): a prompt starting "ast_" and a malformed id are plain values.
func TestConfigsNamingUploads(t *testing.T) {
	one, two, nine := "ast_"+strings.Repeat("1", 32), "ast_"+strings.Repeat("2", 32), "ast_"+strings.Repeat("9", 32)
	cfg := map[string]any{"prompt": "ast_ is no id here", "image_ids": []any{one, "ast_1"},
		"references": []any{map[string]any{"assetId": two, "alias": "a"}}}
	got := WithAsset(cfg, nine)
	want := map[string]any{"prompt": "ast_ is no id here", "image_ids": []any{nine, "ast_1"},
		"references": []any{map[string]any{"assetId": nine, "alias": "a"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithAsset = %v, want %v", got, want)
	}
	if cfg["image_ids"].([]any)[0] != one {
		t.Errorf("WithAsset changed the caller's config: %v", cfg)
	}
	got = WithoutUploads(map[string]any{"n": 2, "image_ids": []any{one}, "prompt": "ast_ is no id here"})
	if !reflect.DeepEqual(got, map[string]any{"n": json.Number("2"), "prompt": "ast_ is no id here"}) {
		t.Errorf("WithoutUploads = %v", got)
	}
}

// WAV is a RIFF WAVE file of 8 bytes a millisecond whose sizes add up; WithMarkerBox appends a free
// box holding the scanner marker, its size in its header.
func TestSamples(t *testing.T) {
	b := WAV(250)
	le := binary.LittleEndian
	if len(b) != 44+2000 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" || int(le.Uint32(b[4:])) != len(b)-8 ||
		int(le.Uint32(b[40:])) != 2000 {
		t.Errorf("WAV(250): %d bytes, header % x", len(b), b[:44])
	}
	var marked []byte
	if msg := drivertest.FailureOf(t, func() { marked = WithMarkerBox([]byte("\x00\x00\x00\x08ftyp")) }); msg != "" {
		t.Fatal(msg)
	}
	box := marked[8:]
	if int(binary.BigEndian.Uint32(box)) != len(box) || string(box[4:8]) != "free" || !bytes.Contains(box, []byte("MEDIASPEC-FLAG")) {
		t.Errorf("WithMarkerBox: box %q", box)
	}
}

// A file refused at finalize is charged to the rule its manifest reason breaks.
func TestRefusalRule(t *testing.T) {
	for _, tc := range []struct {
		f    fixtures.File
		want string
	}{
		{fixtures.File{Name: "wide.png", Reason: "pixel_bounds", Kind: "image"}, "UPLOAD-032"},
		{fixtures.File{Name: "tiny.png", Reason: "pixel_bounds", Kind: "image"}, "UPLOAD-033"},
		{fixtures.File{Name: "png-as.jpg", Reason: "signature_mismatch", Kind: "image", ContentType: "image/jpeg"}, "UPLOAD-031"},
		{fixtures.File{Name: "cut.png", Reason: "truncated", Kind: "image"}, "UPLOAD-031"},
		{fixtures.File{Name: "cut.mp4", Reason: "truncated", Kind: "video"}, "UPLOAD-030"},
	} {
		if got := refusalRule(tc.f); got != tc.want {
			t.Errorf("refusalRule(%s) = %s, want %s", tc.f.Name, got, tc.want)
		}
	}
}
