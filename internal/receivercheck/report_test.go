package receivercheck

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/report"
)

// The JUnit report has one class, a case per rule named "RULE: …" within 120 characters, failures
// and skips with the verdict's reason and the rule's deliveries as output; the JSON report holds
// every verdict and delivery.
func TestReports(t *testing.T) {
	res := check(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(401) }), DefaultTimeout)
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, res); err != nil {
		t.Fatal(err)
	}
	var doc report.JUnit
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, junit.String())
	}
	p, f, s := res.Counts()
	if len(doc.Suites) != 1 || doc.Tests != p+f+s || doc.Failures != f || doc.Skipped != s || len(doc.Suites[0].Cases) != len(rules) {
		t.Fatalf("tallies: %+v", doc)
	}
	for i, c := range doc.Suites[0].Cases {
		v := res.Verdicts[i]
		if c.Classname != "mediaspec.receiver" || !strings.HasPrefix(c.Name, v.Rule+": ") || utf8.RuneCountInString(c.Name) > 120 {
			t.Errorf("case %q in class %q", c.Name, c.Classname)
		}
		if (v.State == Fail) != (c.Failure != nil) || (v.State == Skip) != (c.Skipped != nil) {
			t.Errorf("%s: verdict %s, case %+v", v.Rule, v.State, c)
		}
		if !strings.Contains(c.Out, "answered 401") {
			t.Errorf("%s: the deliveries are not in the output: %q", v.Rule, c.Out)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, "http://127.0.0.1/hooks", res); err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Verdicts) != len(res.Verdicts) || len(rep.Cases) != len(res.Cases) || rep.Cases[0].Status != 401 {
		t.Fatalf("JSON report: %+v", rep)
	}
}
