package proxy

import (
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// The rules one answer shows on its own, beyond its shape. Each check follows what the interface
// text states and nothing more; where the text leaves a choice open, nothing is flagged.

// codeRule is the rule of each error code's row of the errors table (ERR-021 .. ERR-042 follow
// the table's order).
func codeRule(code string) (spec.ErrorCode, string, bool) {
	for i, row := range spec.ErrorCodes {
		if row.Code == code {
			return row, fmt.Sprintf("ERR-%03d", 21+i), true
		}
	}
	return spec.ErrorCode{}, "", false
}

// running are the generation statuses whose job still runs.
var running = map[string]bool{"queued": true, "rendering": true, "post_processing": true}

// checkAnswer runs the single-answer rules.
func (p *Proxy) checkAnswer(c *call) {
	ex := c.ex
	health := strings.HasPrefix(c.apiPath, "/health/")
	for name := range ex.respHeader {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			p.find(c, SideServer, "CORE-004", false, "The answer carries the CORS header "+name+": the API sends no CORS headers.")
			break
		}
	}
	if ex.key != "" && len(ex.key) >= 12 && (strings.Contains(string(ex.answer), ex.key) || headerHolds(ex.respHeader, ex.key)) {
		p.find(c, SideServer, "AUTH-011", false, "The answer contains the caller's API key: the API never returns a key.")
	}
	if c.answer == nil || health {
		return
	}
	if ex.status >= 400 {
		p.checkError(c)
		return
	}
	if c.route == "GET /openapi.json" {
		return // the live description is a document about resources, not one of them
	}
	if ex.status >= 200 && ex.status < 300 && c.obj != nil {
		if ok, isBool := c.obj["ok"].(bool); !isBool || !ok {
			p.find(c, SideServer, "CORE-002", false, "A success answer must carry ok: true.")
		}
	}
	p.checkIDs(c)
	p.checkTimestamps(c)
	p.checkLinks(c)
	switch c.route {
	case "POST /uploads":
		if v, ok := c.obj["upload_expires_in_seconds"]; ok && ex.status == http.StatusCreated && fmt.Sprint(v) != seconds(contract.PutLifetime) {
			p.find(c, SideServer, "UPLOAD-002", false, fmt.Sprintf("upload_expires_in_seconds is %v: the signed PUT lasts %s seconds.", v, seconds(contract.PutLifetime)))
		}
	case "GET /credits/balance":
		p.checkBalance(c)
	case "POST /generations":
		p.checkSubmit(c)
	case "GET /generations/{id}", "GET /generations/{id}/wait":
		p.checkGeneration(c)
	case "GET /batches/{id}":
		p.checkBatch(c)
	case "GET /workflow-runs/{id}":
		if run, ok := c.obj["run"].(map[string]any); ok {
			st, _ := run["status"].(string)
			if sr, ok := run["still_running"].(bool); ok && st != "" {
				want := st == "queued" || st == "running"
				if (st == "queued" || st == "running" || st == "completed" || st == "partial" || st == "failed" || st == "canceled") && sr != want {
					p.find(c, SideServer, "WF-013", false, fmt.Sprintf("The run reads status %s with still_running %v: still_running is false on every finished status and true on queued and running.", st, sr))
				}
			}
		}
	}
	if nc, ok := c.obj["next_cursor"].(string); ok && nc == "" {
		p.find(c, SideServer, "CORE-012", false, "next_cursor is an empty string: only next_cursor null ends a list, and a blank cursor sent back counts as omitted (the first page again).")
	}
}

func headerHolds(h http.Header, s string) bool {
	for _, vals := range h {
		for _, v := range vals {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// checkError judges a failure answer by the errors table.
func (p *Proxy) checkError(c *call) {
	ex := c.ex
	if cc := strings.ToLower(ex.respHeader.Get("Cache-Control")); strings.Contains(cc, "public") || maxAgeAbove0(cc) {
		p.find(c, SideServer, "CORE-018", false, "A failure answer is marked cacheable (Cache-Control: "+ex.respHeader.Get("Cache-Control")+").")
	}
	if c.obj == nil {
		p.find(c, SideServer, "CORE-003", false, "A failure answer must be a JSON object {\"error\": {...}}.")
		return
	}
	// A key beside error is a response field the versioning rules let a service add (CORE-003).
	e, ok := c.obj["error"].(map[string]any)
	if !ok {
		p.find(c, SideServer, "CORE-003", false, "A failure answer's error key must hold an object.")
		return
	}
	if okv, isBool := e["ok"].(bool); !isBool || okv {
		p.find(c, SideServer, "ERR-001", false, "error.ok must be false.")
	}
	if msg, _ := e["message"].(string); strings.TrimSpace(msg) == "" {
		p.find(c, SideServer, "ERR-003", false, "error.message must be a non-empty sentence.")
	} else if strings.ContainsAny(msg, "\r\n") {
		p.find(c, SideServer, "ERR-046", false, "error.message is one safe sentence: it carries a line break.")
	}
	if _, present := e["credits_charged"]; !present {
		p.find(c, SideServer, "ERR-007", false, "error.credits_charged must be present on every failure.")
	}
	retryable, isBool := e["retryable"].(bool)
	code, _ := e["code"].(string)
	row, rule, known := codeRule(code)
	if known {
		switch {
		case ex.status != row.Status:
			p.find(c, SideServer, rule, false, fmt.Sprintf("error.code %s is answered with HTTP %d, not %d.", code, row.Status, ex.status))
		case !isBool || retryable != row.Retryable:
			p.find(c, SideServer, rule, false, fmt.Sprintf("error.code %s has retryable %v, not %v.", code, row.Retryable, e["retryable"]))
		}
	}
	if !isBool {
		p.find(c, SideServer, "ERR-005", false, "error.retryable must be a boolean.")
	}
	secs, hasSecs := e["retry_after_seconds"]
	var n int64 = -1
	if hasSecs && secs != nil {
		num, isNum := secs.(json.Number)
		v, err := num.Int64()
		if !isNum || err != nil || v < 0 {
			p.find(c, SideServer, "ERR-008", false, fmt.Sprintf("error.retry_after_seconds must be a non-negative integer (got %v).", secs))
		} else {
			n = v
		}
	}
	header := ex.respHeader.Get("Retry-After")
	if n >= 0 && header != "" {
		h, err := strconv.ParseInt(strings.TrimSpace(header), 10, 64)
		rule := "ERR-009"
		if code == "submission_in_flight" {
			rule = "ERR-010"
		}
		if (code == "rate_limited" || code == "submission_in_flight") && (err != nil || h != n) {
			p.find(c, SideServer, rule, false, fmt.Sprintf("Retry-After %q and error.retry_after_seconds %d must be the same integer number of seconds.", header, n))
		}
	}
	if code == "rate_limited" && n >= 0 && header == "" {
		p.find(c, SideServer, "ERR-009", false, fmt.Sprintf("A 429 rate_limited answer with retry_after_seconds %d must carry a Retry-After header with the same number.", n))
	}
	if code == "rate_limited" && n >= 0 && (n < 1 || n > 60) && p.bucketed(c) {
		p.find(c, SideServer, "RATE-013", false, fmt.Sprintf("retry_after_seconds %d on a bucket refusal must be from 1 to 60 (the buckets are per minute).", n))
	}
	if code == "submission_in_flight" && ex.status == http.StatusConflict {
		if fl, ok := e["in_flight"].(map[string]any); ok {
			if st, _ := fl["status"].(string); st != "" && !running[st] {
				p.find(c, SideServer, "ERR-015", false, "in_flight.status "+st+" is not a still-running status.")
			}
		}
	}
	if ex.status == http.StatusPaymentRequired {
		p.checkSpendRefusal(c, code, e)
	}
	if code == "max_credits_exceeded" {
		if lim, ok := e["limit"].(map[string]any); !ok || lim["bound_by"] != "max_credits" {
			p.find(c, SideServer, "ERR-025", false, "max_credits_exceeded carries error.limit with bound_by max_credits.")
		}
	}
}

// bucketed reports whether a rate_limited answer is a bucket refusal of a route whose bucket the
// text gives per minute (every keyed route but finalize, whose 429 may also be "another finalize
// runs", held up to 2 minutes).
func (p *Proxy) bucketed(c *call) bool {
	return c.route != "" && c.route != "POST /uploads/{assetId}/finalize"
}

func maxAgeAbove0(cc string) bool {
	for _, part := range strings.Split(cc, ",") {
		part = strings.TrimSpace(part)
		for _, k := range []string{"max-age=", "s-maxage="} {
			if v, ok := strings.CutPrefix(part, k); ok {
				if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil && n > 0 {
					return true
				}
			}
		}
	}
	return false
}

// checkIDs walks the answer for id fields and checks their form (ID-001 .. ID-010), and that a
// read by id answers with the id it was asked for (ID-014).
func (p *Proxy) checkIDs(c *call) {
	seen := map[string]bool{}
	var walk func(v any, field string)
	walk = func(v any, field string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, k)
			}
		case []any:
			for _, e := range x {
				walk(e, field)
			}
		case string:
			k, ok := judge.FieldKind(field)
			if !ok || k.Rule == "" || k.Is(x) || seen[k.Rule] {
				return
			}
			seen[k.Rule] = true
			p.find(c, SideServer, k.Rule, false, fmt.Sprintf("%s %q is not in its documented form %s.", field, x, k.Pattern()))
		}
	}
	walk(c.obj, "")
	id := c.params["id"]
	var got any
	switch c.route {
	case "GET /generations/{id}", "GET /generations/{id}/wait":
		g, _ := c.obj["generation"].(map[string]any)
		got = g["generation_id"]
	case "GET /batches/{id}":
		got = c.obj["batch_group_id"]
	case "GET /workflow-runs/{id}":
		r, _ := c.obj["run"].(map[string]any)
		got = r["workflow_run_id"]
	default:
		return
	}
	if s, ok := got.(string); ok && id != "" && s != id {
		p.find(c, SideServer, "ID-014", false, fmt.Sprintf("The read of %s answers with id %s: a resource read by id answers with the identical id string.", id, s))
	}
}

// checkTimestamps: every timestamp in an answer (a field named *_at holding a string) is an RFC
// 3339 date-time with a zone (CORE-017).
func (p *Proxy) checkTimestamps(c *call) {
	var bad string
	var walk func(v any, field string)
	walk = func(v any, field string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, k)
			}
		case []any:
			for _, e := range x {
				walk(e, field)
			}
		case string:
			if bad == "" && strings.HasSuffix(field, "_at") {
				if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
					bad = field + " " + strconv.Quote(x)
				}
			}
		}
	}
	walk(c.obj, "")
	if bad != "" {
		p.find(c, SideServer, "CORE-017", false, "Every timestamp is an RFC 3339 date-time with a zone: "+bad+".")
	}
}

// checkLinks: output_urls_expire_in_seconds is 600 whenever an answer carries it (LINK-001), and
// present on a generation read or wait whenever some output has a link (GEN-024).
func (p *Proxy) checkLinks(c *call) {
	if v, ok := c.obj["output_urls_expire_in_seconds"]; ok {
		if n, isNum := v.(json.Number); !isNum || n.String() != seconds(contract.OutputLinkLifetime) {
			p.find(c, SideServer, "LINK-001", false, fmt.Sprintf("output_urls_expire_in_seconds is %v: output links last %s seconds.", v, seconds(contract.OutputLinkLifetime)))
		}
	}
}

// checkGeneration judges a generation read or wait answer.
func (p *Proxy) checkGeneration(c *call) {
	g, ok := c.obj["generation"].(map[string]any)
	if !ok {
		return
	}
	st, _ := g["status"].(string)
	hasLink := false
	if outs, ok := g["outputs"].([]any); ok {
		for _, o := range outs {
			if om, ok := o.(map[string]any); ok {
				if u, ok := om["url"].(string); ok && u != "" {
					hasLink = true
					if st != "completed" {
						p.find(c, SideServer, "GEN-012", false, "An output has a url while the generation reads "+st+": url is null until completed and settled.")
					}
				}
			}
		}
	}
	if _, present := c.obj["output_urls_expire_in_seconds"]; hasLink && !present {
		p.find(c, SideServer, "GEN-024", false, "An output has a link but the answer has no output_urls_expire_in_seconds ("+seconds(contract.OutputLinkLifetime)+").")
	}
	if e, present := g["error"]; present && e != nil && st != "failed" && st != "" {
		p.find(c, SideServer, "GEN-010", false, "error is set while the generation reads "+st+": it is set only when status is failed.")
	}
	if cr, ok := g["credits"].(map[string]any); ok {
		terminal, _ := cr["terminal"].(bool)
		charged, hasCharged := cr["credits_charged"]
		if !terminal && hasCharged && charged != nil {
			p.find(c, SideServer, "GEN-015", false, fmt.Sprintf("credits_charged is %v while terminal is false: it is null until terminal is true.", charged))
		}
		if terminal {
			ch, okc := number(charged)
			held, okh := number(cr["credits_held"])
			if okc && okh && ch > held {
				p.find(c, SideServer, "CORE-020", false, fmt.Sprintf("credits_charged %v is more than the hold %v: the real cost is never more than the hold.", ch, held))
			}
			if okc && st == "failed" && ch != 0 {
				p.find(c, SideServer, "CORE-021", false, fmt.Sprintf("A failed generation has credits_charged %v: a failed job costs nothing.", ch))
			}
		}
	}
	if c.route != "GET /generations/{id}/wait" {
		return
	}
	sr, ok := c.obj["still_running"].(bool)
	if ok && st != "" && (running[st] || st == "completed" || st == "failed") && sr != running[st] {
		p.find(c, SideServer, "GEN-005", false, fmt.Sprintf("The wait answers still_running %v with status %s: still_running is true exactly while the status is queued, rendering or post_processing.", sr, st))
	}
	if sr {
		if ra, ok := number(c.obj["retry_after_seconds"]); ok && ra != 0 {
			p.find(c, SideServer, "GEN-029", false, fmt.Sprintf("retry_after_seconds is %v while the job runs: it is 0 (call again at once).", ra))
		}
		if w, ok := number(c.obj["waited_seconds"]); ok && w > WaitBound.Seconds() {
			p.find(c, SideServer, "GEN-027", false, fmt.Sprintf("The wait held %v seconds (waited_seconds) and answered still running: it blocks about %s seconds, up to %s.", w, seconds(contract.WaitBudget), seconds(contract.WaitCeiling)))
		}
	}
}

// WaitBound is the longest a wait may hold by the text ("about 18 seconds"; "the reference table
// says up to 20"), plus one second for rounding to whole seconds.
const WaitBound = contract.WaitCeiling + time.Second

// seconds is d in whole seconds, as the answers write it.
func seconds(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }

// checkSubmit judges an accepted submit: Location, Cache-Control, the credits at submit, the hold
// within max_credits.
func (p *Proxy) checkSubmit(c *call) {
	ex := c.ex
	if ex.status != http.StatusCreated {
		return
	}
	gen, _ := c.obj["generation_id"].(string)
	if loc := ex.respHeader.Get("Location"); loc == "" || (gen != "" && !strings.HasSuffix(loc, "/generations/"+gen)) {
		p.find(c, SideServer, "SUBMIT-001", false, fmt.Sprintf("An accepted submit answers with a Location header naming the generation's path (got %q).", loc))
	}
	if cc := ex.respHeader.Get("Cache-Control"); !strings.Contains(strings.ToLower(cc), "no-store") {
		p.find(c, SideServer, "SUBMIT-002", false, fmt.Sprintf("An accepted submit answers with Cache-Control: no-store (got %q).", cc))
	}
	cr, _ := c.obj["credits"].(map[string]any)
	if cr != nil {
		if v, present := cr["credits_charged"]; present && v != nil {
			p.find(c, SideServer, "SUBMIT-006", false, fmt.Sprintf("At submit credits_charged is null, not %v.", v))
		}
		if t, ok := cr["terminal"].(bool); ok && t {
			p.find(c, SideServer, "SUBMIT-006", false, "At submit terminal is false.")
		}
		if s, ok := cr["settlement"].(string); ok && s != "open" {
			p.find(c, SideServer, "SUBMIT-006", false, "At submit settlement is open, not "+s+".")
		}
		held, okh := number(cr["credits_held"])
		max, okm := number(c.body["max_credits"])
		if okh && okm && held > max {
			p.find(c, SideServer, "SUBMIT-007", false, fmt.Sprintf("The submit holds %v credits, above its max_credits %v: max_credits is a hard cap, refused rather than trimmed.", held, max))
		}
	}
	if _, bg := c.obj["batch_group_id"]; !bg {
		if ids, ok := c.obj["generation_ids"].([]any); ok && (len(ids) != 1 || ids[0] != gen) && c.body["variants"] == nil {
			p.find(c, SideServer, "SUBMIT-004", false, "Without variants or fan-out, generation_ids is [generation_id].")
		}
	}
}

// checkBatch judges a batch read: the status derived from its siblings and the finished count.
func (p *Proxy) checkBatch(c *call) {
	gens, ok := c.obj["generations"].([]any)
	st, _ := c.obj["status"].(string)
	if !ok || len(gens) == 0 || st == "" {
		return
	}
	var done, completed, failed int
	for _, g := range gens {
		gm, _ := g.(map[string]any)
		switch gm["status"] {
		case "completed":
			done++
			completed++
		case "failed":
			done++
			failed++
		}
	}
	if v, ok := number(c.obj["variants"]); ok && int(v) != len(gens) {
		return // a partial list of siblings: nothing to derive from
	}
	want := "running"
	switch {
	case done < len(gens):
	case failed == 0:
		want = "completed"
	case completed == 0:
		want = "failed"
	default:
		want = "partial"
	}
	if st != want {
		rule := map[string]string{"running": "BATCH-002", "completed": "BATCH-003", "failed": "BATCH-004", "partial": "BATCH-005"}[want]
		p.find(c, SideServer, rule, false, fmt.Sprintf("The batch reads %s while its siblings say %s (%d of %d finished, %d failed).", st, want, done, len(gens), failed))
	}
	if vf, ok := number(c.obj["variants_finished"]); ok && int(vf) != done {
		p.find(c, SideServer, "BATCH-007", false, fmt.Sprintf("variants_finished is %v while %d siblings completed or failed.", vf, done))
	}
}

// number reads a JSON number (json.Number) as a float.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
