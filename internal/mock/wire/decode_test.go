package wire

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

func field(t *testing.T, err error) (apierr.Code, string) {
	t.Helper()
	e, ok := err.(*apierr.Error)
	if !ok {
		t.Fatalf("error %v (%T) is not an *apierr.Error", err, err)
	}
	return e.Code, e.Field
}

func TestDecodeStrict(t *testing.T) {
	type inner struct {
		AspectRatio string `json:"aspect_ratio"`
	}
	type body struct {
		CapabilityID string         `json:"capability_id"`
		MaxCredits   int64          `json:"max_credits"`
		Config       inner          `json:"config"`
		Opt          Optional[int]  `json:"opt"`
		Free         map[string]any `json:"free"`
	}
	for _, c := range []struct {
		in, field string
		ok        bool
	}{
		{`{"capability_id":"tts","max_credits":5,"config":{"aspect_ratio":"9:16"},"free":{"x":1}}`, "", true},
		{`  {"opt":null}  `, "", true},
		{`{"max_credits":"5"}`, "max_credits", false},
		{`{"max_credits":1.5}`, "max_credits", false},
		{`{"config":{"aspect_ratio":5}}`, "config.aspect_ratio", false},
		{`{"config":{"nope":1}}`, "nope", false},
		{`{"maxCredits":1}`, "maxCredits", false},
		{`{"opt":"x"}`, "opt", false},
		{`{"a":1,}`, "", false},
		{`{}{}`, "", false},
		{`{} trailing`, "", false},
		{`[]`, "", false},
		{`42`, "", false},
		{`nul`, "", false},
		{`   `, "", false},
	} {
		var b body
		err := DecodeStrictBytes([]byte(c.in), &b)
		if c.ok {
			if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("%q accepted", c.in)
		}
		code, f := field(t, err)
		if code != apierr.CodeInvalidConfig || f != c.field {
			t.Fatalf("%q: %s field %q, want invalid_config field %q (%v)", c.in, code, f, c.field, err)
		}
	}
	var b body
	if err := DecodeStrictBytes([]byte(`{"opt":3}`), &b); err != nil || !b.Opt.Set || b.Opt.Null || *b.Opt.Ptr() != 3 {
		t.Fatalf("optional value: %+v %v", b.Opt, err)
	}
	b = body{}
	_ = DecodeStrictBytes([]byte(`{"opt":null}`), &b)
	if !b.Opt.Set || !b.Opt.Null || b.Opt.Ptr() != nil {
		t.Fatalf("optional null: %+v", b.Opt)
	}
}

func TestDecodeStrictLimits(t *testing.T) {
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"a":"`+strings.Repeat("x", 100)+`"}`))
	var m map[string]any
	if code, _ := field(t, DecodeStrict(req, &m, 50)); code != apierr.CodeInvalidConfig {
		t.Fatal(code)
	}
	req = httptest.NewRequest("POST", "/", nil)
	req.Body = nil
	if code, _ := field(t, DecodeStrict(req, &m, 0)); code != apierr.CodeInvalidConfig {
		t.Fatal(code)
	}
	req = httptest.NewRequest("POST", "/", strings.NewReader(`{"a":1}`))
	if err := DecodeStrict(req, &m, 0); err != nil || m["a"] != float64(1) {
		t.Fatalf("%v %v", err, m)
	}
}

func TestQueryHelpers(t *testing.T) {
	q := url.Values{"limit": {" 30 "}, "big": {"500"}, "neg": {"-1"}, "zero": {"0"}, "word": {"ten"}, "blank": {"  "},
		"status": {"queued"}, "badstatus": {"done"}, "cursor": {"  abc "}}
	for name, want := range map[string]int{"limit": 30, "big": 50, "neg": 25, "zero": 25, "word": 25, "blank": 25, "missing": 25} {
		if got := QueryLimit(q, name, 25, 50); got != want {
			t.Errorf("limit %s = %d, want %d", name, got, want)
		}
	}
	for name, want := range map[string]int{"limit": 30, "big": 50, "neg": 1, "zero": 1, "word": 25, "blank": 25, "missing": 25} {
		if got := QueryLimitClamped(q, name, 25, 50); got != want {
			t.Errorf("clamped limit %s = %d, want %d", name, got, want)
		}
	}
	if v, ok := QueryString(q, "cursor"); !ok || v != "abc" {
		t.Fatalf("cursor %q", v)
	}
	if _, ok := QueryString(q, "blank"); ok {
		t.Fatal("blank counted as given")
	}
	if v, ok, err := QueryEnum(q, "status", "queued", "failed"); err != nil || !ok || v != "queued" {
		t.Fatal("enum")
	}
	if _, _, err := QueryEnum(q, "badstatus", "queued"); err == nil {
		t.Fatal("bad enum accepted")
	} else if _, f := field(t, err); f != "badstatus" {
		t.Fatalf("field %q", f)
	}
	if _, ok, err := QueryEnum(q, "blank", "queued"); ok || err != nil {
		t.Fatal("blank enum")
	}
	times := url.Values{
		"date": {"2026-02-03"}, "zulu": {"2026-02-03T04:05:06Z"}, "offset": {"2026-02-03T04:05:06+02:00"},
		"zoneless": {"2026-02-03T04:05:06"}, "junk": {"yesterday"}, "blank": {""},
	}
	if tm, ok, err := QueryTime(times, "date"); err != nil || !ok || !tm.Equal(time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("date %v %v", tm, err)
	}
	if tm, _, _ := QueryTime(times, "offset"); !tm.Equal(time.Date(2026, 2, 3, 2, 5, 6, 0, time.UTC)) || tm.Location() != time.UTC {
		t.Fatalf("offset %v", tm)
	}
	if _, ok, err := QueryTime(times, "zulu"); err != nil || !ok {
		t.Fatal("zulu")
	}
	for _, name := range []string{"zoneless", "junk"} {
		_, _, err := QueryTime(times, name)
		if err == nil {
			t.Fatalf("%s accepted", name)
		}
		if _, f := field(t, err); f != name {
			t.Fatalf("%s: field %q", name, f)
		}
	}
	if _, ok, err := QueryTime(times, "blank"); ok || err != nil {
		t.Fatal("blank time")
	}
}

func TestWriteJSONUnencodable(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := WriteJSON(rec, 200, map[string]any{"f": func() {}}); apierr.CodeOf(err) != apierr.CodeInternalError || rec.Body.Len() != 0 {
		t.Fatalf("%v %q", err, rec.Body.String())
	}
}

// Issue 24 item 5: a body without Content-Type is read as JSON; a blank Content-Type and two
// Content-Type headers are refused like any other type.
func TestReadBodyContentTypeHeader(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
		ok     bool
	}{
		{"missing", nil, true},
		{"json", []string{"application/json"}, true},
		{"json utf-8", []string{"application/json; charset=UTF-8"}, true},
		{"empty", []string{""}, false},
		{"blank", []string{"  "}, false},
		{"twice", []string{"application/json", "application/json"}, false},
		{"text", []string{"text/plain"}, false},
	} {
		r := httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":1}`))
		for _, v := range c.values {
			r.Header.Add("Content-Type", v)
		}
		_, err := ReadBody(r, 0)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && apierr.CodeOf(err) != apierr.CodeInvalidConfig {
			t.Errorf("%s: %v is not invalid_config", c.name, err)
		}
	}
}
