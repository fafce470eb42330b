package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A case writes name then classname, or classname then name when ClassnameFirst says so, and
// reads back the same either way; nil times and names are left out.
func TestJUnitAttributeOrder(t *testing.T) {
	doc := JUnit{Tests: 2, Suites: []Suite{{Name: "s", Tests: 2, Cases: []Case{
		{Name: "a", Classname: "s", Time: Seconds(1500 * time.Millisecond)},
		{Name: "b", Classname: "s", ClassnameFirst: true, Skipped: &Skip{Message: "why"}},
	}}}}
	var out bytes.Buffer
	if err := WriteJUnit(&out, doc); err != nil {
		t.Fatal(err)
	}
	want := xml.Header + `<testsuites tests="2" failures="0" skipped="0">
  <testsuite name="s" tests="2" failures="0" skipped="0">
    <testcase name="a" classname="s" time="1.5"></testcase>
    <testcase classname="s" name="b">
      <skipped message="why"></skipped>
    </testcase>
  </testsuite>
</testsuites>
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	var back JUnit
	if err := xml.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Suites[0].Cases; c[1].Name != "b" || c[1].Classname != "s" || *c[0].Time != 1.5 || back.Name != nil {
		t.Errorf("read back %+v", back)
	}
}

// A write that fails names the file; a file that cannot be created is an error.
func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteFile(path, func(w io.Writer) error { return WriteJSON(w, map[string]int{"a": 1}) }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("JSON %q", b)
	}
	boom := errors.New("boom")
	if err := WriteFile(path, func(io.Writer) error { return boom }); !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("err %v", err)
	}
	if err := WriteFile(filepath.Join(path, "under-a-file"), func(io.Writer) error { return nil }); err == nil {
		t.Error("a path under a file was written")
	}
}

func TestClip(t *testing.T) {
	if got := Clip("ééé", 3); got != "ééé" {
		t.Errorf("Clip kept %q", got)
	}
	if got := Clip("éééé", 3); got != "éé…" {
		t.Errorf("Clip cut to %q", got)
	}
}
