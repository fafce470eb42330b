package wrongservers

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// The scrambled variant (issue #35): the mock with every choice the reference made where the text
// shows no shape made differently, generated from the x-provenance annotations of
// spec/openapi.yaml, so a new reference choice is scrambled as soon as it is annotated:
//
//   - every response property marked reference is renamed (scrambledName), at every depth of every
//     answer and delivery: page array keys the text does not name, the fields of the balance, of
//     asset, download, from-url and workflow records, our extra fields on text-described records;
//   - every answer whose top-level layout is not shown (the response or its schema is marked
//     reference, or its `ok` is: the capability detail) and that is not a page is nested one level
//     deeper
//     ({"ok": true, "<record>_record": {...}}), `ok` kept at the top;
//   - the operations marked reference (the probes, the live description) move to other paths, the
//     probes answer text/plain, and the API key header is another one;
//   - every object of every JSON answer (errors included, beside `error` and inside it) and of
//     every delivery carries an unknown field;
//   - every RFC 3339 time is written with a +00:00 offset and microseconds.
//
// What the text names stays: `ok`, `next_cursor`, every property marked text, statuses, codes,
// ids, headers the text gives, and the requests the suite sends.

// Names the scrambled server gives what the text leaves open, and the flags its user passes.
const (
	scrambledExtraKey   = "scrambled_extra"
	scrambledKeyHeader  = "X-Scrambled-Key"
	scrambledLive       = "/sys/alive"
	scrambledReady      = "/sys/ready"
	scrambledDescribe   = "/meta/description.json"
	scrambledRecordTail = "_record"
)

// scrambledPaths moves every operation the document marks reference (a path the text never gives)
// to another path. TestScrambledMovesEveryReferenceOperation fails when a reference operation is
// missing here, so a new one cannot stay at our path unnoticed.
var scrambledPaths = map[string]string{
	"/health/live":  scrambledLive,
	"/health/ready": scrambledReady,
	"/openapi.json": scrambledDescribe,
}

// keptNames are reference-marked properties the text does name: every answer's `ok` and a page's
// `next_cursor` ("one page plus next_cursor").
var keptNames = map[string]bool{"ok": true, "next_cursor": true}

// scrambledName is the scrambled server's name for a property named k: its words in reverse order
// and a tail no name of the text has ("available_credits" -> "credits_available_x").
func scrambledName(k string) string {
	words := strings.Split(k, "_")
	slices.Reverse(words)
	return strings.Join(words, "_") + "_x"
}

// recordName is the key the scrambled server nests a not-shown record under, from the last
// literal segment of its path ("/assets/{id}" -> "asset_record").
func recordName(pathTemplate string) string {
	segs := strings.Split(strings.Trim(pathTemplate, "/"), "/")
	last := "record"
	for _, s := range slices.Backward(segs) {
		if !strings.HasPrefix(s, "{") {
			last = s
			break
		}
	}
	last = strings.ReplaceAll(last, "-", "_")
	switch {
	case strings.HasSuffix(last, "ies"):
		last = strings.TrimSuffix(last, "ies") + "y"
	case strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss"):
		last = strings.TrimSuffix(last, "s")
	}
	return last + scrambledRecordTail
}

// rfc3339 is an RFC 3339 time (seconds, optional fraction, Z or an offset).
var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

// scrambledTime writes an RFC 3339 time in UTC with microseconds and a +00:00 offset; any other
// string comes back as it is.
func scrambledTime(s string) string {
	if !rfc3339.MatchString(s) {
		return s
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// opaque reports whether a key holds opaque data (opaqueKeys), under its own name or its
// scrambled one: a schema or an example config stays as it is wherever it sits.
func opaque(k string) bool { return opaqueKeys[k] || scrambledOpaque[k] }

var scrambledOpaque = func() map[string]bool {
	m := map[string]bool{}
	for k := range opaqueKeys {
		m[scrambledName(k)] = true
	}
	return m
}()

// retime rewrites every RFC 3339 time in v (opaque subtrees left alone) and returns v.
func retime(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if !opaque(k) {
				x[k] = retime(c)
			}
		}
	case []any:
		for i, c := range x {
			x[i] = retime(c)
		}
	case string:
		return scrambledTime(x)
	}
	return v
}

// addExtra puts the unknown field into every object of v (opaque subtrees left alone, renamed or
// not).
func addExtra(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if !opaque(k) {
				addExtra(c)
			}
		}
		x[scrambledExtraKey] = "ignore me"
	case []any:
		for _, c := range x {
			addExtra(c)
		}
	}
}

// scrambler rewrites answers and deliveries by the document's provenance.
type scrambler struct{ *refDropper }

func newScrambler() (*scrambler, error) {
	d, err := newRefDropper()
	if err != nil {
		return nil, err
	}
	return &scrambler{d}, nil
}

// rename renames, in v described by s, every property s marks reference (but keptNames), after
// renaming inside it; opaque values (schemas, configs, results) keep their insides.
func rename(v any, s *openapi3.Schema) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		ps := propRefs(s)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		for _, k := range keys {
			p, listed := ps[k]
			if !listed || p.Value == nil {
				continue
			}
			c := x[k]
			if !opaqueKeys[k] {
				rename(c, p.Value)
			}
			if propProv(p).Reference() && !keptNames[k] {
				delete(x, k)
				x[scrambledName(k)] = c
			}
		}
	case []any:
		it := items(s)
		for _, c := range x {
			rename(c, it)
		}
	}
}

// isPage reports whether a response schema is a list: it has next_cursor or an array property at
// its top.
func isPage(s *openapi3.Schema) bool {
	for k, p := range propRefs(s) {
		if k == "next_cursor" || (p.Value != nil && items(p.Value) != nil) {
			return true
		}
	}
	return false
}

// answer scrambles the JSON object body d of the answer to r with status: renames by the
// response's schema, nests a not-shown record, retimes, adds the unknown field everywhere. It
// returns the body to send.
func (s *scrambler) answer(r *http.Request, status int, d map[string]any) map[string]any {
	retime(d)
	if route, _, ok := s.doc.FindRoute(r.Method, r.URL.Path); ok && !provOf(route.Operation.Extensions).Reference() {
		resp := route.Operation.Responses.Status(status)
		if resp == nil {
			resp = route.Operation.Responses.Default()
		}
		if resp != nil && resp.Value != nil {
			if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
				sch := mt.Schema.Value
				notShown := provOf(resp.Extensions).Reference() || provOf(resp.Value.Extensions).Reference() ||
					provOf(mt.Schema.Extensions).Reference() || provOf(sch.Extensions).Reference()
				if ok := propRefs(sch)["ok"]; ok != nil && propProv(ok).Reference() {
					notShown = true
				}
				rename(d, sch)
				if notShown && status < 300 && !isPage(sch) {
					d = nest(d, recordName(route.Path))
				}
			}
		}
	}
	addExtra(d)
	return d
}

// nest moves every key of d but ok one level deeper, under name.
func nest(d map[string]any, name string) map[string]any {
	inner := map[string]any{}
	out := map[string]any{}
	for k, v := range d {
		if k == "ok" {
			out[k] = v
			continue
		}
		inner[k] = v
	}
	out[name] = inner
	return out
}

// event scrambles a delivery's body: renames by its event's schema, retimes, adds the unknown field
// to the envelope and every object of its data.
func (s *scrambler) event(d map[string]any) {
	retime(d)
	t, _ := d["type"].(string)
	if sr := s.events[t]; sr != nil {
		rename(d, sr.Value)
	}
	addExtra(d)
}

// balancePointer is the JSON pointer to a balance field (named as in the mock) in the scrambled
// GET /credits/balance answer, what the scrambled server's user configures with --shape.
func balancePointer(field string) string {
	return "/" + recordName("/credits/balance") + "/" + scrambledName(field)
}

// scrambledShapes are the --shape NAME=VALUE settings the scrambled server's user passes.
func scrambledShapes() []string {
	return []string{
		"balance.available=" + balancePointer("available_credits"),
		"balance.held=" + balancePointer("held_credits"),
		"balance.total=" + balancePointer("balance_credits"),
		// The request fields the suite sends stay the mock's; the template rows' fields are
		// scrambled like every reference field of an answer.
		"invoke.inputs=inputs", "from_url.link=url",
		"workflow.template_key=" + scrambledName("template_key"),
		"workflow.example_inputs=" + scrambledName("example_inputs"),
	}
}

// scrambledArgs are the check flags the scrambled server's user passes (--shape apart: see
// Variant.Shapes).
var scrambledArgs = []string{
	"--key-header", scrambledKeyHeader,
	"--live-path", scrambledLive, "--ready-path", scrambledReady,
	"--description-path", scrambledDescribe,
}

// plainProbes answers the probes text/plain: "ok" when the mock's probe says 2xx, else "not
// ready", with the mock's status.
func plainProbes() Wrap {
	return answers(route(http.MethodGet, "/health/(live|ready)"), func(_ *Env, _ *http.Request, a *answer) {
		body := "ok"
		if a.status >= 300 {
			body = "not ready"
		}
		a.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
		a.body = []byte(body + "\n")
	})
}

// scrambleAnswers scrambles every JSON answer below /api/v1 but the live description's (its
// format fixes its keys). It goes outermost: the moves inside it change the request's path, and
// the schema is looked up by the path the mock answered.
func (s *scrambler) scrambleAnswers() Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !anyAPI(r) || r.URL.Path == apiPrefix+scrambledDescribe {
				next.ServeHTTP(w, r)
				return
			}
			a := serve(next, r)
			if d, ok := a.doc(); ok && isJSON(a.header.Get("Content-Type")) {
				a.setDoc(s.answer(r, a.status, d))
			}
			a.send(w)
		})
	}
}

// scrambledVariant is the variant; it is kept apart (its paths and key header conflict with the
// other moved-path variants) and runs the whole suite.
func scrambledVariant() (Variant, error) {
	s, err := newScrambler()
	if err != nil {
		return Variant{}, err
	}
	moves := []Wrap{s.scrambleAnswers()}
	for _, from := range slices.Sorted(maps.Keys(scrambledPaths)) {
		moves = append(moves, movePath(scrambledPaths[from], from))
	}
	moves = append(moves, plainProbes(), renameKeyHeader(scrambledKeyHeader))
	return Variant{
		Name: "scrambled",
		Change: "every reference choice made otherwise, from the provenance annotations: reference fields and page keys renamed, " +
			"not-shown records nested one level deeper, probes at /sys/alive and /sys/ready in text/plain, the description at " +
			scrambledDescribe + ", key header " + scrambledKeyHeader + ", an unknown field in every object (errors and deliveries too), " +
			"times with +00:00 and microseconds",
		Allows: "every renamed, moved or nested element's x-provenance is reference (the text says not shown or is silent); " +
			"Versioning 4: clients ignore unknown response fields; RFC 3339 allows any offset and fraction",
		API:    chainWraps(moves...),
		Hooks:  hookDocs(s.event, nil),
		Args:   scrambledArgs,
		Shapes: scrambledShapes(),
		// Checked as any outside server: without --reference, so no choice of the mock is assumed.
		Outsider: true,
		Filter:   "",
		Apart:    true,
	}, nil
}
