package framework

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// The call a failure judged is the one its message shows or names, made or recalled before the
// failure, whatever came after; a failure that names none has no judged call, and its last call is
// the last one made before it.
func TestJudgedCallIsTheOneTheFailureNames(t *testing.T) {
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	call := func(path string, status int, body string) *Exchange {
		return &Exchange{Method: "GET", URL: "http://127.0.0.1:1/api/v1" + path, Status: status, ResponseBody: body}
	}
	judged := call("/generations/gen_1", 404, `{"error":{"code":"not_found"}}`)
	list := call("/generations", 200, `{"ok":true,"items":[]}`)
	percent := call("/estimates", 200, `{"ok":true,"discount":"100%"}`)
	again := call("/estimates", 200, `{"ok":true,"discount":"0"}`) // the same call, a later answer
	memo := call("/capabilities/tts", 200, `{"ok":true}`)
	after := call("/generations/gen_1/wait", 200, `{"ok":true}`)
	tr := &Transcript{
		exchanges: []*Exchange{judged, list, percent, again, after},
		at:        []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second), base.Add(2500 * time.Millisecond), base.Add(10 * time.Second)},
		recalled:  []timedExchange{{memo, base.Add(3 * time.Second)}},
	}
	failedAt := base.Add(5 * time.Second)
	// A described assertion as Gomega words it: the description goes through fmt.Sprintf.
	gomegaMessage := func(desc string) string {
		var msg string
		g := gomega.NewGomega(func(m string, _ ...int) { msg = m })
		g.Expect(1).To(gomega.Equal(2), desc)
		return msg
	}
	tests := []struct {
		name, msg string
		want      *Exchange
	}{
		{"shown, then another call", gomegaMessage("want HTTP 200" + (&Response{Exchange: judged}).Describe()), judged},
		{"shown with a % in its body", gomegaMessage("want no discount" + (&Response{Exchange: percent}).Describe()), percent},
		{"named by its request line only: the latest such", "no answer to GET http://127.0.0.1:1/api/v1/estimates: timeout", again},
		{"named by its request line only", "no answer to GET http://127.0.0.1:1/api/v1/generations/gen_1: timeout", judged},
		{"a path that another's extends", "no answer to GET http://127.0.0.1:1/api/v1/generations: timeout", list},
		{"two shown: the one shown first", "the list lacks the generation" + list.String() + judged.String(), list},
		{"a memoized answer recalled", "want a name" + memo.String(), memo},
		{"a call after the failure", "the wait broke" + after.String(), nil},
		{"no call named", "the balance moved", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, last := tr.judged(tc.msg, failedAt)
			if got != tc.want {
				t.Errorf("judged %v, want %v", name(got), name(tc.want))
			}
			if last != again {
				t.Errorf("last call %v, want the last made before the failure", name(last))
			}
		})
	}
	if got, last := (&Transcript{}).judged("the setup failed", failedAt); got != nil || last != nil {
		t.Errorf("no call made: judged %v, last %v", name(got), name(last))
	}
}

func name(e *Exchange) string {
	if e == nil {
		return "none"
	}
	return e.Method + " " + e.URL + " " + e.ResponseBody
}
