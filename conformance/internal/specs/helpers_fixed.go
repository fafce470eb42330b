package specs

import (
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
	"github.com/mediaspec/mediaspec/receiver"
)

// Fixed values (issue 37 item 1): a field whose value the interface text fixes for a kind of record
// in a state is read on every route and event that shows that record, for the caller's own objects
// as for the service's. Each table below names such fields; expectFixed checks a row against one.

// fixed is one field and the value the text fixes for it.
type fixed struct {
	field string
	want  any // the JSON value: a bool, a string, nil, a whole number (int), or absent
	why   string
}

// ruledFixed is a fixed value with the rule a failure of it is charged to (Response.Charge).
type ruledFixed struct {
	rule string
	fixed
}

// absentField as a fixed value: the text says the record does not carry the field.
type absentField struct{}

// absent is the fixed value of a field the record must not carry.
var absent = absentField{}

// The actor rows of GET /actors: "is_platform: true for a service cast actor, false for the
// workspace's own" (Actor table).
var (
	ownActorFixed  = []fixed{{"is_platform", false, "is_platform is false for the workspace's own actor"}}
	castActorFixed = []fixed{{"is_platform", true, "is_platform is true for a service cast actor"}}
)

// A new endpoint (Webhook endpoint table; States and transitions: an endpoint starts active), read
// on the registration answer and on its GET /webhooks row alike.
var newEndpointFixed = []fixed{
	{"status", "active", "a new endpoint is active"},
	{"consecutive_failures", 0, "a new endpoint has no exhausted deliveries"},
}

// expectFixed checks that row (what, read from r) carries each field of values with its fixed value.
func expectFixed(r *framework.Response, row map[string]any, what string, values []fixed) {
	GinkgoHelper()
	expectFixedIn(row, what, r.Describe(), values)
}

// expectFixedIn is expectFixed for a record not read from an answer (an event's data); shown ends
// each failure message (the answer or the raw event). A field may be a dotted path into nested
// objects (credits.terminal).
func expectFixedIn(row map[string]any, what, shown string, values []fixed) {
	GinkgoHelper()
	for _, v := range values {
		obj, key := row, v.field
		for {
			head, rest, nested := strings.Cut(key, ".")
			if !nested {
				break
			}
			inner, ok := obj[head].(map[string]any)
			Expect(ok).To(BeTrue(), fmt.Sprintf("%s.%s is an object (%s)%s", what, head, v.why, shown))
			obj, key = inner, rest
		}
		if v.want == absent {
			Expect(obj).NotTo(HaveKey(key), fmt.Sprintf("%s carries %s: %s%s", what, v.field, v.why, shown))
			continue
		}
		if v.want == present {
			Expect(obj).To(HaveKey(key), fmt.Sprintf("%s has %s (%s)%s", what, v.field, v.why, shown))
			continue
		}
		Expect(obj).To(HaveKey(key), fmt.Sprintf("%s has %s (%s)%s", what, v.field, v.why, shown))
		got := obj[key]
		msg := fmt.Sprintf("%s.%s is %v: %s%s", what, v.field, got, v.why, shown)
		switch want := v.want.(type) {
		case nil:
			Expect(got).To(BeNil(), msg)
		case int:
			n, whole := framework.AsInt(got)
			Expect(whole && n == int64(want)).To(BeTrue(), msg)
		default:
			Expect(got).To(Equal(want), msg)
		}
	}
}

// actorRowsFixed checks the fixed values of the listed rows among own (the workspace's own actors)
// and cast (service cast actors) on every page of a walk of GET /actors.
func actorRowsFixed(pages []paging.Page, own, cast []string) {
	GinkgoHelper()
	for _, p := range pages {
		for i, row := range p.Rows {
			id, _ := row["actor_id"].(string)
			what := fmt.Sprintf("actors[%d] (%s)", i, id)
			switch {
			case slices.Contains(own, id):
				expectFixed(p.R, row, what, ownActorFixed)
			case slices.Contains(cast, id):
				expectFixed(p.R, row, what, castActorFixed)
			}
		}
	}
}

// rowsOf joins the rows of pages, in order.
func rowsOf(pages []paging.Page) []map[string]any {
	var out []map[string]any
	for _, p := range pages {
		out = append(out, p.Rows...)
	}
	return out
}

// The credits of every accepted submit answer (Submit answer table: "at submit credits_charged is
// null, settlement is open, terminal false"), whatever was submitted: one generation, a fanned-out
// batch, a talking actor.
var submitCreditsFixed = []fixed{
	{"credits_charged", nil, "credits_charged is null at submit"},
	{"settlement", "open", "settlement is open at submit"},
	{"terminal", false, "terminal is false at submit (the answer comes at acceptance)"},
}

// expectSubmitFixed checks the fixed values of an accepted submit answer, and its header the text
// fixes for every accepted submit ("Answer 201 with headers Location ... and Cache-Control:
// no-store"), charged to SUBMIT-002: a batch or talking-actor submit as a single one.
func expectSubmitFixed(r *framework.Response) {
	GinkgoHelper()
	expectFixed(r, answer.ObjectAt(r, "credits"), "credits", submitCreditsFixed)
	r.Charge([]string{"SUBMIT-002"}, func() {
		Expect(r.Header.Values("Cache-Control")).To(ContainElement(ContainSubstring("no-store")),
			"every accepted submit answers Cache-Control: no-store"+r.Describe())
	})
}

// The data of generation events (Event payloads: "error ({ code, message } on generation.failed,
// else null)"; generation.completed is sent once the charge was captured, generation.failed once
// the hold was released, and a failed job costs nothing), for every generation the event is about:
// a single job, a batch sibling, a workflow step.
var (
	completedEventFixed = []fixed{
		{"status", "completed", "generation.completed carries status completed"},
		{"error", nil, "error is null on generation.completed"},
		{"credits.terminal", true, "generation.completed is sent once the charge is final"},
		{"credits.settlement", "captured", "generation.completed is sent when the charge was captured"},
		{"credits.wallet_balance", absent, "event credits carry no wallet balance"},
	}
	failedEventFixed = []fixed{
		{"status", "failed", "generation.failed carries status failed"},
		{"credits.terminal", true, "generation.failed is sent once the hold was released"},
		{"credits.credits_charged", 0, "a failed job costs nothing"},
		{"credits.wallet_balance", absent, "event credits carry no wallet balance"},
	}
	// batch.settled data: "wallet_balance ... absent in batch and event payloads".
	settledEventFixed = []fixed{{"credits.wallet_balance", absent, "batch.settled credits carry no wallet balance"}}
)

// expectEventFixed checks the fixed values of a generation event's data by its type.
func expectEventFixed(ev receiver.Event, data map[string]any) {
	GinkgoHelper()
	shown := ": " + string(ev.Raw)
	switch ev.Type {
	case "generation.completed":
		expectFixedIn(data, "data", shown, completedEventFixed)
	case "generation.failed":
		expectFixedIn(data, "data", shown, failedEventFixed)
	}
}

// expectSettledFixed checks the fixed values of a batch.settled event: its own credits, and each
// entry of generations[], which has the generation event's shape (without disclosure), so the
// values a generation event fixes for its status. s charges the entries to EVT-028 and the rest to
// EVT-023.
func expectSettledFixed(s *framework.Spec, ev receiver.Event, data map[string]any) {
	GinkgoHelper()
	shown := ": " + string(ev.Raw)
	s.Step("EVT-023")
	expectFixedIn(data, "data", shown, settledEventFixed)
	s.Step("EVT-028")
	gens, _ := data["generations"].([]any)
	for i, g := range gens {
		entry, ok := g.(map[string]any)
		Expect(ok).To(BeTrue(), fmt.Sprintf("data.generations[%d] is an object%s", i, shown))
		what := fmt.Sprintf("data.generations[%d]", i)
		switch entry["status"] {
		case "completed":
			expectFixedIn(entry, what, shown, completedEventFixed)
		case "failed":
			expectFixedIn(entry, what, shown, failedEventFixed)
		}
	}
}

// The generation record's fixed values by status (Generation table: "error: set only when status
// is failed", { code, message }; "url: null until completed and settled"; "credits_charged: null
// until terminal is true"; a failed job costs nothing), read on every generation read the specs
// make (readGen): a single job, a batch sibling, a workflow step, a tts, the caller's jobs all.
// The statuses the text gives a meaning to; a failed job's settlement is not fixed (values seen
// open and captured: a server may say released).
var (
	failedReadFixed    = []fixed{{"error.code", present, "a failed generation carries error { code, message }"}, {"error.message", present, "a failed generation carries error { code, message }"}}
	completedReadFixed = []fixed{{"error", nil, "error is set only when status is failed"}}
	// runningReadFixed are a running job's fixed values, each with the rule that fixes it.
	runningReadFixed = []ruledFixed{
		{"GEN-010", fixed{"error", nil, "error is set only when status is failed"}},
		{"GEN-015", fixed{"credits.credits_charged", nil, "credits_charged is null until terminal (the job runs)"}},
		{"GEN-022", fixed{"completed_at", nil, "completed_at is null while the job runs"}},
		{"GEN-019", fixed{"credits_left", absent, "credits_left appears once the charge is final (the job runs)"}},
	}
)

// presentField as a fixed value: the record carries the field, whatever its value (null included).
type presentField struct{}

// present is the fixed value of a field the record must carry.
var present = presentField{}

// expectGenerationFixed checks the generation at path of r (a read or a wait answer) against the
// fixed values of its status, and that no output has a link before the job completed, and that a
// failed job that is terminal charged nothing.
func expectGenerationFixed(r *framework.Response, path string) {
	GinkgoHelper()
	g, ok := r.Field(path).(map[string]any)
	if !ok {
		return // the shape's own checks report it
	}
	what := path
	// Each value is charged to the rule that fixes it, whatever step the spec was in when it read
	// the record: a failed job charged its hold fails CORE-021, not the rule the spec was after.
	switch st, _ := g["status"].(string); st {
	case "failed":
		r.Charge([]string{"GEN-010"}, func() { expectFixed(r, g, what, failedReadFixed) })
		if c, _ := g["credits"].(map[string]any); c != nil && c["terminal"] == true {
			r.Charge([]string{"CORE-021"}, func() {
				expectFixed(r, g, what, []fixed{{"credits.credits_charged", 0, "a failed job costs nothing"}})
			})
		}
	case "completed":
		r.Charge([]string{"GEN-010"}, func() { expectFixed(r, g, what, completedReadFixed) })
	case "queued", "rendering", "post_processing":
		for _, v := range runningReadFixed {
			r.Charge([]string{v.rule}, func() { expectFixed(r, g, what, []fixed{v.fixed}) })
		}
	default:
		return
	}
	if g["status"] != "completed" {
		outs, _ := g["outputs"].([]any)
		r.Charge([]string{"GEN-012"}, func() {
			for i, o := range outs {
				if out, ok := o.(map[string]any); ok {
					expectFixedIn(out, fmt.Sprintf("%s.outputs[%d]", what, i), r.Describe(), []fixed{{"url", nil, "an output's url is null until the generation is completed"}})
				}
			}
		})
	}
}

// expectWaitFixed checks a 200 answer of GET /generations/{id}/wait as every generation read is
// checked (expectGenerationFixed on its generation), and its still_running against the status of
// the generation inside: true while queued, rendering or post_processing, false once completed or
// failed (GEN-005). The framework runs it on every wait answer of the run (SetWaitCheck), the
// waits of Finish included, so a wait that reports a record the read would not fails there.
func expectWaitFixed(r *framework.Response) {
	GinkgoHelper()
	expectGenerationFixed(r, "generation")
	g, ok := r.Field("generation").(map[string]any)
	doc, isObj := r.Doc().(map[string]any)
	if !ok || !isObj {
		return
	}
	var want bool
	switch g["status"] {
	case "queued", "rendering", "post_processing":
		want = true
	case "completed", "failed":
	default:
		return
	}
	r.Charge([]string{"GEN-005"}, func() {
		expectFixed(r, doc, "the wait answer", []fixed{{"still_running", want,
			fmt.Sprintf("still_running is %v while the generation is %v", want, g["status"])}})
	})
}
