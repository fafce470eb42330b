package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mediaspec/mediaspec/spec/judge"
)

// Timing thresholds of the detectors (service time).
const (
	// PollWindow and PollReads: reading one still-running generation more than PollReads times
	// within PollWindow is a read loop (a wait call holds about 18 s, so a client that waits reads
	// a running job at most once or twice).
	PollWindow = 60 * time.Second
	PollReads  = 3
	// RewordWindow and RewordOverlap: the next submit of a capability within RewordWindow after its
	// moderation_blocked, whose config text differs but shares at least RewordOverlap of its words
	// (Jaccard) with the refused text, is a rewording.
	RewordWindow  = time.Hour
	RewordOverlap = 0.5
	// RunPollGap: two reads of one unfinished workflow run closer than this break "poll about every
	// 30 seconds" (half of it, for "about").
	RunPollGap = 15 * time.Second
)

// detector describes one kind of finding: the rule it is traced to, its level (as in
// spec/rules.yaml), and the one-line summary printed at shutdown.
type detector struct {
	rule, level, summary string
}

// Detectors lists every kind of finding, one per rule. A test keeps it equal to the rules of
// spec/rules.yaml that carry an `audit` field, levels included.
var Detectors = []detector{
	{"CLIENT-001", "MUST", "a request refused with a non-retryable code was sent again unchanged"},
	{"ERR-006", "MUST", "a call refused as retryable was tried more than two more times"},
	{"CLIENT-002", "MUST", "a call was sent again before its retry_after_seconds / Retry-After had passed"},
	{"CLIENT-003", "SHOULD", "a running generation was followed by reading it in a loop instead of GET /generations/{id}/wait"},
	{"CLIENT-004", "MUST", "a submit was sent again while the key's job named by submission_in_flight still ran"},
	{"ID-015", "MUST", "an id was passed back altered (case, spaces, prefix) or read out of a link"},
	{"CLIENT-005", "MUST", "a submit's max_credits was not the max_credits_needed of the estimate of the same config"},
	{"CLIENT-006", "MUST", "a submit followed estimate_changed without a new estimate"},
	{"CLIENT-007", "MUST", "a cursor was sent that the service never handed out as next_cursor"},
	{"SUBMIT-026", "MUST", "a submit was sent again unchanged after its accepted answer, with no read, wait or list in between"},
	{"LINK-008", "MUST", "an expired file link was used instead of reading the generation again for a fresh one"},
	{"WF-028", "MUST", "an unfinished workflow run was read much more often than about every 30 seconds"},
	{"CORE-014", "MUST", "a key was used from a browser (the request carried an Origin header)"},
	{"PRESET-026", "MUST", "a template_id was sent that no answer handed out (read it from the lists each time)"},
	{"CLIENT-008", "MUST", "a text refused with moderation_blocked was reworded and submitted again"},
}

func detectorByRule(rule string) detector {
	for _, d := range Detectors {
		if d.rule == rule {
			return d
		}
	}
	return detector{}
}

func levelOf(rule string) string { return detectorByRule(rule).level }

// stateCodes are non-retryable refusals that depend on state the client does not send (balance,
// rolling spend windows, the request allowance): repeating the same request after a top-up or a
// window's turn is legitimate, so CLIENT-001 does not count them.
var stateCodes = map[string]bool{"insufficient_credits": true, "spend_limit_exceeded": true, "quota_exceeded": true}

// repeatable reports whether the text declares a call safe to repeat: finalize ("Finalize is safe
// to repeat; a scanned file answers from its stored status").
func repeatable(route string) bool {
	return strings.HasPrefix(route, "POST "+judge.APIBase+"/uploads/") && strings.HasSuffix(route, "/finalize")
}

// Exchange is one request and its answer as the auditor sees it.
type Exchange struct {
	// KeyID and WorkspaceID name the caller (empty without a valid key).
	KeyID, WorkspaceID string
	Method, Path       string    // Path is decoded (URL.Path)
	RawQuery           string    // the query as sent, undecoded
	Origin             string    // the request's Origin header
	Body               []byte    // the request body (JSON under /api/v1), possibly cut by the caller (the mock keeps 64 KiB)
	Status             int       // the answer's status
	RetryAfter         string    // the answer's Retry-After header
	Answer             []byte    // the answer body, possibly cut by the caller (the mock keeps 512 KiB)
	Start, End         time.Time // when the request came and the answer went
	// Decoded says that BodyJSON and AnswerJSON hold Body and Answer already decoded, numbers as
	// json.Number (nil for one that is not a JSON value), so Observe does not decode them again:
	// `mediaspec proxy` decodes each exchange once for all its judges. Observe never modifies them.
	Decoded              bool
	BodyJSON, AnswerJSON any
}

// call is what a key's window keeps of one call.
type call struct {
	at         time.Time
	route      string // method and path
	sig        string // route, canonical query and a hash of the canonical body
	code       string // error code of a refusal
	retryable  bool
	retryUntil time.Time // zero unless the answer named a wait
}

type keyState struct {
	used            uint64
	window          []call
	genReads        *boundedMap[[]time.Time] // generation id -> recent reads while running
	runReads        *boundedMap[time.Time]   // run id -> last read while unfinished
	estimates       []estimate               // most recent last
	estimateChanged map[string]bool          // capability id -> refused estimate_changed since the last estimate
	inflight        *inflight
	submits         *boundedMap[*submitted] // body signature -> last accepted submit
	submittedIDs    map[string]string       // generation or batch id -> body signature
	blocked         map[string]blockedText  // capability id -> its last moderation_blocked submit
}

type blockedText struct {
	text string
	at   time.Time
}

type estimate struct {
	sig    string
	needed int64
}

type inflight struct{ gen string }

type submitted struct {
	ids  []string
	read bool
}

type idSeen struct {
	id           string
	field, inURL bool
}

type scopeState struct {
	used    uint64
	ids     *boundedMap[idSeen] // full id -> where it was seen
	hexes   *boundedMap[string] // 32-hex part -> an id carrying it
	cursors *boundedMap[bool]
}

var (
	hexTail = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9a-f]{32}$`) })
)

// isID reports whether s is an id of the one table (package judge) in its exact form.
func isID(s string) bool { _, ok := judge.IsAnyID(s); return ok }

// Observe audits one exchange: it records the findings the exchange shows, then remembers what the
// answer handed out (ids, cursors, estimates, links).
func (a *Auditor) Observe(ex Exchange) {
	isFile := strings.HasPrefix(ex.Path, judge.FilesPath)
	isAPI := strings.HasPrefix(ex.Path, judge.APIBase+"/") && !strings.HasPrefix(ex.Path, judge.APIBase+"/health/")
	if !isFile && !isAPI {
		return
	}
	var ans, req any // a file link's answer teaches nothing: not decoded
	switch {
	case isFile:
	case ex.Decoded:
		ans, req = ex.AnswerJSON, ex.BodyJSON
	default:
		ans, req = judge.DecodeJSON(ex.Answer), judge.DecodeJSON(ex.Body)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if isFile {
		a.checkLink(ex)
		return
	}
	line := ex.Method + " " + ex.Path
	if ex.RawQuery != "" {
		line += "?" + ex.RawQuery
	}
	body, _ := req.(map[string]any)
	seg := strings.Split(strings.Trim(strings.TrimPrefix(ex.Path, judge.APIBase), "/"), "/")
	c := call{at: ex.Start, route: ex.Method + " " + ex.Path}
	c.sig = c.route + "?" + canonicalQuery(ex.RawQuery) + "\n" + hashBody(ex.Body, req)
	if e, ok := errorOf(ans); ok {
		c.code, _ = e["code"].(string)
		c.retryable, _ = e["retryable"].(bool)
		secs := max(number(e["retry_after_seconds"]), headerSeconds(ex.RetryAfter))
		if secs > 0 {
			c.retryUntil = ex.End.Add(time.Duration(secs) * time.Second)
		}
	}
	k := a.key(ex.KeyID)
	var sc *scopeState
	if ex.WorkspaceID != "" {
		sc = a.scope(ex.WorkspaceID)
	}
	at := ex.Start

	if ex.Origin != "" && ex.KeyID != "" {
		a.record("CORE-014", ex.KeyID, line, "Call the API from your server only: this request carried an Origin header, as a browser sends, and a key in a browser is a leaked key.", at)
	}
	a.checkWindow(k, c, ex.KeyID, line)
	if sc != nil {
		a.checkIDs(sc, ex, seg, req, line)
		a.checkCursor(sc, ex, line)
	}
	if sc != nil && ex.Method == "POST" && len(seg) == 1 && (seg[0] == "generations" || seg[0] == "estimates") && body != nil {
		cfg, _ := body["config"].(map[string]any)
		if tpl, ok := cfg["template_id"].(string); ok && tpl != "" {
			_, known := sc.ids.get(tpl)
			_, altered := sc.hexes.get(hexTail().FindString(strings.ToLower(strings.TrimSpace(tpl))))
			if !known && !altered {
				a.record("PRESET-026", ex.KeyID, line, "Read template ids from GET /presets or GET /presets/{id}/templates each time: "+tpl+" was never handed out here.", at)
			}
		}
	}
	switch {
	case ex.Method == "POST" && len(seg) == 1 && seg[0] == "generations" && body != nil:
		a.checkSubmit(k, ex, body, c, ans, line)
	case ex.Method == "POST" && len(seg) == 1 && seg[0] == "estimates" && body != nil && ex.Status == 200:
		if m, ok := ans.(map[string]any); ok {
			if needed, ok := m["max_credits_needed"].(json.Number); ok {
				if n, err := needed.Int64(); err == nil {
					cap, _ := body["capability_id"].(string)
					k.estimates = append(k.estimates, estimate{sig: estimateSig(body, false), needed: n})
					if len(k.estimates) > MaxEstimates {
						k.estimates = k.estimates[1:]
					}
					delete(k.estimateChanged, cap)
				}
			}
		}
	case ex.Method == "GET":
		a.checkReads(k, ex, seg, ans, line)
	}

	k.window = append(k.window, c)
	if len(k.window) > WindowSize {
		k.window = k.window[1:]
	}
	if ex.Status < 400 {
		a.learn(sc, ex.KeyID, ans)
	}
}

// checkWindow looks back over the key's recent calls: a call before an earlier answer's wait
// (CLIENT-002), a non-retryable refusal repeated unchanged (CLIENT-001), a retryable one tried
// more than two more times (ERR-006).
func (a *Auditor) checkWindow(k *keyState, c call, keyID, line string) {
	for i := len(k.window) - 1; i >= 0; i-- {
		p := k.window[i]
		if p.route != c.route {
			continue
		}
		if !p.retryUntil.IsZero() && c.at.Before(p.retryUntil) {
			a.record("CLIENT-002", keyID, line, fmt.Sprintf("Wait the retry_after_seconds (or Retry-After) of the answer before calling again: this call came %s early.",
				p.retryUntil.Sub(c.at).Round(time.Second)), c.at)
		}
		break
	}
	tries := 0 // earlier identical calls refused as retryable, most recent first, unbroken
	for i := len(k.window) - 1; i >= 0; i-- {
		p := k.window[i]
		if p.sig != c.sig {
			continue
		}
		if tries == 0 && p.code != "" && !p.retryable && !stateCodes[p.code] && !repeatable(c.route) {
			a.record("CLIENT-001", keyID, line, "This exact request was refused with "+p.code+" (retryable false): change the request instead of sending it again.", c.at)
			return
		}
		if p.code == "" || !p.retryable {
			break
		}
		tries++
	}
	if tries >= 3 {
		a.record("ERR-006", keyID, line, fmt.Sprintf("A retryable refusal allows at most two more tries of the same call: this is try %d after the first refusal; back off and report the failure.", tries), c.at)
	}
}

// checkIDs finds ids passed back altered (not in the exact form handed out, but naming an id this
// workspace was handed) or read out of a link (an id this workspace saw only inside a URL).
func (a *Auditor) checkIDs(sc *scopeState, ex Exchange, seg []string, req any, line string) {
	var tokens []string
	if len(seg) > 1 {
		tokens = append(tokens, seg[1:]...)
	}
	walkStrings(req, func(s string) { tokens = append(tokens, s) })
	for _, t := range tokens {
		if isID(t) {
			if seen, ok := sc.ids.get(t); ok && seen.inURL && !seen.field {
				a.record("ID-015", ex.KeyID, line, "Never read an id out of a link: "+t+" appeared only inside a URL; use the id fields of the answer.", ex.Start)
			}
			continue
		}
		low := strings.ToLower(strings.TrimSpace(t))
		h := hexTail().FindString(low)
		if h == "" || len(low) > 40 {
			continue
		}
		if id, ok := sc.hexes.get(h); ok {
			a.record("ID-015", ex.KeyID, line, fmt.Sprintf("Pass ids back exactly as given: %q was sent for %s (no lowercasing, uppercasing, trimming or re-prefixing).", t, id), ex.Start)
		}
	}
}

// checkCursor finds a cursor the service never handed this workspace.
func (a *Auditor) checkCursor(sc *scopeState, ex Exchange, line string) {
	if ex.Method != "GET" || ex.RawQuery == "" {
		return
	}
	q, err := url.ParseQuery(ex.RawQuery)
	if err != nil {
		return
	}
	cur := strings.TrimSpace(q.Get("cursor"))
	if cur == "" {
		return
	}
	if _, ok := sc.cursors.get(cur); !ok {
		a.record("CLIENT-007", ex.KeyID, line, "Send back next_cursor exactly as the previous page gave it: cursors are opaque, never built or edited.", ex.Start)
	}
}

// checkSubmit audits POST /generations.
func (a *Auditor) checkSubmit(k *keyState, ex Exchange, body map[string]any, c call, ans any, line string) {
	cap, _ := body["capability_id"].(string)
	if k.estimateChanged[cap] {
		a.record("CLIENT-006", ex.KeyID, line, "After estimate_changed, call POST /estimates again and submit with the new max_credits_needed.", ex.Start)
	}
	if mc, ok := body["max_credits"].(json.Number); ok {
		if n, err := mc.Int64(); err == nil {
			sig := estimateSig(body, true)
			for i := len(k.estimates) - 1; i >= 0; i-- {
				e := k.estimates[i]
				if e.sig != sig {
					continue
				}
				switch {
				case n > e.needed:
					a.record("CLIENT-005", ex.KeyID, line, fmt.Sprintf("Send the estimate's max_credits_needed (%d) as max_credits without padding it again (sent %d).", e.needed, n), ex.Start)
				case n < e.needed:
					a.record("CLIENT-005", ex.KeyID, line, fmt.Sprintf("Send the estimate's max_credits_needed (%d) as max_credits (sent %d, below the hold).", e.needed, n), ex.Start)
				}
				break
			}
		}
	}
	text := configText(body["config"])
	if b, ok := k.blocked[cap]; ok {
		if ex.Start.Sub(b.at) < RewordWindow && text != b.text && overlap(text, b.text) >= RewordOverlap {
			a.record("CLIENT-008", ex.KeyID, line, "A text refused with moderation_blocked must not be reworded to get past the check: drop it or change what it asks for.", ex.Start)
		}
		delete(k.blocked, cap)
	}
	sig := hashBody(ex.Body, body)
	if prev, ok := k.submits.get(sig); ok && !prev.read && ex.Status != 401 {
		a.record("SUBMIT-026", ex.KeyID, line, "This submit was accepted before and its generation was never read, waited on or listed: if the answer was lost, list generations before resubmitting.", ex.Start)
	}
	m, _ := ans.(map[string]any)
	switch {
	case ex.Status == 201:
		k.inflight = nil
		var ids []string
		if list, ok := m["generation_ids"].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					ids = append(ids, s)
				}
			}
		}
		if bg, ok := m["batch_group_id"].(string); ok {
			ids = append(ids, bg)
		}
		k.submits.put(sig, &submitted{ids: ids})
		if k.submittedIDs == nil || len(k.submittedIDs) > 4*MaxEstimates {
			k.submittedIDs = map[string]string{}
		}
		for _, id := range ids {
			k.submittedIDs[id] = sig
		}
	case c.code == "submission_in_flight":
		e, _ := errorOf(ans)
		fl, _ := e["in_flight"].(map[string]any)
		gen, _ := fl["generation_id"].(string)
		if gen != "" {
			// The same job still holds the slot: the client submitted again (the same body or
			// another) without waiting until it ended.
			if k.inflight != nil && k.inflight.gen == gen {
				a.record("CLIENT-004", ex.KeyID, line, "After submission_in_flight, wait on in_flight.generation_id ("+gen+") until it ends before submitting another request from this key.", ex.Start)
			}
			k.inflight = &inflight{gen: gen}
		}
	case c.code == "estimate_changed":
		k.estimateChanged[cap] = true
	case c.code == "moderation_blocked":
		if k.blocked == nil {
			k.blocked = map[string]blockedText{}
		}
		k.blocked[cap] = blockedText{text: text, at: ex.Start}
	}
}

// configText is the words of a config's strings (ids left out), lower-cased, space-separated, in
// the order a walk of the config meets them.
func configText(cfg any) string {
	var words []string
	walk(cfg, true, func(s string) {
		if isID(s) {
			return
		}
		words = append(words, strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})...)
	})
	return strings.Join(words, " ")
}

// overlap is the Jaccard index of the word sets of two configText results.
func overlap(a, b string) float64 {
	sa, sb := map[string]bool{}, map[string]bool{}
	for _, w := range strings.Fields(a) {
		sa[w] = true
	}
	for _, w := range strings.Fields(b) {
		sb[w] = true
	}
	inter := 0
	for w := range sa {
		if sb[w] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// checkReads audits reads: polling a running generation (CLIENT-003), a workflow run
// (WF-028), and marks accepted submits as followed (SUBMIT-026).
func (a *Auditor) checkReads(k *keyState, ex Exchange, seg []string, ans any, line string) {
	switch {
	case len(seg) == 1 && seg[0] == "generations":
		for _, sig := range k.submits.order {
			if s, ok := k.submits.get(sig); ok {
				s.read = true
			}
		}
		return
	case len(seg) >= 2 && (seg[0] == "generations" || seg[0] == "batches"):
		if sig, ok := k.submittedIDs[seg[1]]; ok {
			if s, ok := k.submits.get(sig); ok {
				s.read = true
			}
		}
	}
	if ex.Status != 200 || len(seg) != 2 {
		return
	}
	m, _ := ans.(map[string]any)
	switch seg[0] {
	case "generations":
		g, _ := m["generation"].(map[string]any)
		st, _ := g["status"].(string)
		if st != "queued" && st != "rendering" && st != "post_processing" {
			return
		}
		reads, _ := k.genReads.get(seg[1])
		kept := reads[:0]
		for _, t := range reads {
			if ex.Start.Sub(t) < PollWindow {
				kept = append(kept, t)
			}
		}
		if len(kept) >= PollReads {
			a.record("CLIENT-003", ex.KeyID, line, fmt.Sprintf("Follow a running generation with GET /generations/{id}/wait (it blocks until the job ends or about 18 s pass): this is read %d of it within %s.", len(kept)+1, PollWindow), ex.Start)
		}
		kept = append(kept, ex.Start)
		if len(kept) > PollReads+1 {
			kept = kept[1:]
		}
		k.genReads.put(seg[1], kept)
	case "workflow-runs":
		running, ok := m["still_running"].(bool)
		if !ok {
			st, _ := m["status"].(string)
			if r, isMap := m["run"].(map[string]any); isMap {
				st, _ = r["status"].(string)
				running, ok = r["still_running"].(bool)
			}
			if !ok {
				running = st == "queued" || st == "running"
			}
		}
		if !running {
			k.runReads.del(seg[1])
			return
		}
		if last, ok := k.runReads.get(seg[1]); ok && ex.Start.Sub(last) < RunPollGap {
			a.record("WF-028", ex.KeyID, line, fmt.Sprintf("Poll a workflow run about every 30 seconds (this read came %s after the last), or subscribe to workflow_run.* webhooks.", ex.Start.Sub(last).Round(time.Second)), ex.Start)
		}
		k.runReads.put(seg[1], ex.Start)
	}
}

// checkLink audits a file link: one used after it expired means the client kept the link.
func (a *Auditor) checkLink(ex Exchange) {
	if ex.Status < 400 {
		return
	}
	q, err := url.ParseQuery(ex.RawQuery)
	if err != nil {
		return
	}
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || ex.Start.Before(time.Unix(exp, 0)) {
		return
	}
	owner, _ := a.links.get(ex.Path)
	a.record("LINK-008", owner, ex.Method+" "+ex.Path, "Keep the asset_id, not the link: this link had expired; read the generation (or GET /assets/{id}/download) again for a fresh one.", ex.Start)
}

// learn remembers what an answer handed out: ids (as fields or inside links), next_cursor, and
// which key got each file link.
func (a *Auditor) learn(sc *scopeState, keyID string, ans any) {
	if m, ok := ans.(map[string]any); ok && sc != nil {
		if nc, ok := m["next_cursor"].(string); ok && nc != "" {
			sc.cursors.put(nc, true)
		}
	}
	walkStrings(ans, func(s string) {
		if isID(s) {
			if sc != nil {
				sc.ids.put(s, idSeen{id: s, field: true})
				sc.hexes.put(s[len(s)-32:], s)
			}
			return
		}
		if !strings.Contains(s, "://") && !strings.HasPrefix(s, "/") {
			return
		}
		if u, err := url.Parse(s); err == nil && strings.HasPrefix(u.Path, judge.FilesPath) {
			a.links.put(u.Path, keyID)
		}
		if sc == nil {
			return
		}
		for _, id := range judge.IDsInText().FindAllString(s, -1) {
			seen, ok := sc.ids.get(id)
			if !ok {
				seen = idSeen{id: id}
				sc.hexes.put(id[len(id)-32:], id)
			}
			seen.inURL = true
			sc.ids.put(id, seen)
		}
	})
}

func errorOf(ans any) (map[string]any, bool) {
	m, _ := ans.(map[string]any)
	e, ok := m["error"].(map[string]any)
	return e, ok
}

func number(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	f, err := n.Float64()
	if err != nil || f <= 0 || f > math.MaxInt32 {
		return 0
	}
	return int64(math.Ceil(f))
}

func headerSeconds(h string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func canonicalQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	return q.Encode() // sorted by key
}

// hashBody hashes the canonical JSON of a body (key order and spacing do not matter), or its bytes.
func hashBody(raw []byte, parsed any) string {
	b := raw
	if parsed != nil {
		if c, err := json.Marshal(parsed); err == nil {
			b = c
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// estimateSig names what an estimate priced: the capability, the config (with count set to
// variants on a submit, as the text asks the estimate to be made) and the resource fields.
func estimateSig(body map[string]any, submit bool) string {
	cfg, _ := body["config"].(map[string]any)
	c := make(map[string]any, len(cfg)+1)
	for k, v := range cfg {
		c[k] = v
	}
	if v, ok := body["variants"]; ok && submit && v != nil {
		c["count"] = v
	}
	sig := map[string]any{"capability_id": body["capability_id"], "config": c}
	for _, f := range []string{"actor_id", "actor_image_asset_id", "voice_id", "approved_voice_generation_id"} {
		if v, ok := body[f]; ok && v != nil {
			sig[f] = v
		}
	}
	return hashBody(nil, sig)
}

// walkStrings calls f on every string in v, in no fixed order.
func walkStrings(v any, f func(string)) { walk(v, false, f) }

// walk calls f on every string in v; sorted visits object keys in order (configText compares
// walks), which costs a sort per object.
func walk(v any, sorted bool, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		if !sorted {
			for _, e := range x {
				walk(e, false, f)
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walk(x[k], true, f)
		}
	case []any:
		for _, e := range x {
			walk(e, sorted, f)
		}
	}
}
