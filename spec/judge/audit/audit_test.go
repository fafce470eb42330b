package audit_test

import (
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/mock"
)

const token = "ctl_audit_test"

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// env is a mock with the audit on, on a manual clock, called in process.
type env struct {
	t   *testing.T
	s   *mock.Server
	clk *clock.Manual
	key string // the default generate key
}

func newEnv(t *testing.T, audit bool) *env {
	t.Helper()
	clk := clock.NewManual(t0)
	s, err := mock.New(mock.Config{Seed: 11, ControlToken: token, Clock: clk, Audit: audit,
		Logger: slog.New(slog.DiscardHandler), OpenAPIJSON: []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1.2.0"},"paths":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetPublicURL("http://127.0.0.1:1")
	return &env{t: t, s: s, clk: clk, key: s.Info().GenerateKey}
}

type answer struct {
	code int
	hdr  http.Header
	body map[string]any
}

// at returns the value at path in the answer (nil when missing).
func (a answer) at(path ...string) any {
	var v any = a.body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func (a answer) str(path ...string) string {
	s, _ := a.at(path...).(string)
	return s
}

func (a answer) num(path ...string) int64 {
	f, _ := a.at(path...).(float64)
	return int64(f)
}

// do sends a request with the generate key (key "" sends none) and extra "Name: value" headers.
func (e *env) do(method, path, key, body string, headers ...string) answer {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	target := path
	if !strings.HasPrefix(path, "/files/") && !strings.HasPrefix(path, "/_control/") {
		target = "/api/v1" + path
	}
	req := httptest.NewRequest(method, target, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.s.ServeHTTP(rec, req)
	a := answer{code: rec.Code, hdr: rec.Header()}
	_ = json.Unmarshal(rec.Body.Bytes(), &a.body)
	return a
}

func (e *env) api(method, path, body string, headers ...string) answer {
	e.t.Helper()
	return e.do(method, path, e.key, body, headers...)
}

func (e *env) control(method, path, body string) answer {
	e.t.Helper()
	return e.do(method, "/_control/v1"+path, token, body)
}

type finding struct {
	RuleID  string  `json:"rule_id"`
	Level   string  `json:"level"`
	KeyID   *string `json:"key_id"`
	Request string  `json:"request"`
	Advice  string  `json:"advice"`
	Count   int     `json:"count"`
	First   string  `json:"first_seen_at"`
}

// findings reads GET /_control/v1/audit.
func (e *env) findings() []finding {
	e.t.Helper()
	a := e.control("GET", "/audit", "")
	if a.code != 200 || a.body["enabled"] != true {
		e.t.Fatalf("GET /audit: %d %v", a.code, a.body)
	}
	raw, _ := json.Marshal(a.body["findings"])
	var out []finding
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) rules() map[string]int {
	out := map[string]int{}
	for _, f := range e.findings() {
		out[f.RuleID] += f.Count
	}
	return out
}

// want fails unless the findings hold exactly the rules (with their counts) in want.
func (e *env) want(want map[string]int) {
	e.t.Helper()
	got := e.rules()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Fatalf("findings %v, want %v\n%+v", got, want, e.findings())
	}
}

const (
	ttsEstimate = `{"capability_id":"tts","config":{"script":"Hot coffee for twelve hours."}}`
	ttsSubmit   = `{"capability_id":"tts","config":{"script":"Hot coffee for twelve hours."},"max_credits":%d}`
)

// estimate estimates ttsEstimate and returns max_credits_needed.
func (e *env) estimate() int64 {
	e.t.Helper()
	a := e.api("POST", "/estimates", ttsEstimate)
	if a.code != 200 {
		e.t.Fatalf("estimate: %d %v", a.code, a.body)
	}
	return a.num("max_credits_needed")
}

// finish moves the clock past any render.
func (e *env) finish() { e.clk.Advance(5 * time.Minute) }

// The done-means: the same invalid_config estimate three times is a finding with a rule id.
func TestRepeatedInvalidEstimateIsAFinding(t *testing.T) {
	e := newEnv(t, true)
	bad := `{"capability_id":"tts","config":{"script":"hi","colour":"red"}}`
	for range 3 {
		if a := e.api("POST", "/estimates", bad); a.str("error", "code") != "invalid_config" {
			t.Fatalf("want invalid_config, got %d %v", a.code, a.body)
		}
	}
	f := e.findings()
	if len(f) != 1 {
		t.Fatalf("findings: %+v", f)
	}
	got := f[0]
	if got.RuleID != "CLIENT-001" || got.Level != "MUST" || got.Count != 2 || got.Request != "POST /api/v1/estimates" ||
		got.KeyID == nil || !strings.HasPrefix(*got.KeyID, "key_") || strings.Contains(got.Advice, e.key) || got.First != clock.Format(t0) {
		t.Errorf("finding %+v", got)
	}
	// Key order and spacing do not make a request different.
	e.api("POST", "/estimates", `{"config":{"colour":"red","script":"hi"},  "capability_id":"tts"}`)
	e.want(map[string]int{"CLIENT-001": 3})
}

// A correct client — the README's walk: read, estimate, submit with max_credits_needed, wait until
// still_running is false, download, upload, page with next_cursor — leaves no finding.
func TestCorrectClientHasNoFindings(t *testing.T) {
	e := newEnv(t, true)
	e.api("GET", "/credits/balance", "")
	e.api("GET", "/capabilities?limit=3", "")
	e.api("GET", "/capabilities/tts", "")
	// a refused estimate, then the corrected one
	e.api("POST", "/estimates", `{"capability_id":"tts","config":{"script":"hi","colour":"red"}}`)
	needed := e.estimate()
	sub := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed))
	if sub.code != 201 {
		t.Fatalf("submit: %d %v", sub.code, sub.body)
	}
	gen := sub.str("generation_id")
	e.finish() // the render's time passes first: on the manual clock nothing else moves it
	w := e.api("GET", "/generations/"+gen+"/wait", "")
	if w.body["still_running"] != false {
		t.Fatalf("wait: %v", w.body)
	}
	outs, _ := w.body["generation"].(map[string]any)["outputs"].([]any)
	if len(outs) == 0 {
		t.Fatalf("no outputs: %v", w.body)
	}
	link, _ := outs[0].(map[string]any)["url"].(string)
	u, _ := url.Parse(link)
	if a := e.do("GET", u.Path+"?"+u.RawQuery, "", ""); a.code != 200 {
		t.Fatalf("download: %d", a.code)
	}
	// the same submit again after reading the first: a second take, not a lost answer
	e.estimate()
	if a := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed)); a.code != 201 {
		t.Fatalf("second submit: %d %v", a.code, a.body)
	}
	// paging with next_cursor
	p := e.api("GET", "/voices?limit=2", "")
	for i := 0; p.str("next_cursor") != "" && i < 3; i++ {
		p = e.api("GET", "/voices?limit=2&cursor="+url.QueryEscape(p.str("next_cursor")), "")
	}
	e.api("GET", "/generations?limit=5", "")
	e.api("GET", "/webhooks", "")
	// uploads: reserve, PUT, finalize
	png := []byte("\x89PNG\r\n\x1a\n")
	res := e.api("POST", "/uploads", fmt.Sprintf(`{"filename":"a.png","content_type":"image/png","size_bytes":%d}`, len(png)))
	if res.code != 201 {
		t.Fatalf("reserve: %d %v", res.code, res.body)
	}
	e.api("POST", "/uploads/"+res.str("asset_id")+"/finalize", "")
	e.want(map[string]int{})
}

func TestRetryBudget(t *testing.T) {
	e := newEnv(t, true)
	if a := e.control("POST", "/faults", `{"kind":"pricing_unavailable","count":5}`); a.code != 201 {
		t.Fatalf("fault: %d %v", a.code, a.body)
	}
	for range 3 { // the first try and two more: allowed
		if a := e.api("POST", "/estimates", ttsEstimate); a.str("error", "code") != "pricing_unavailable" {
			t.Fatalf("want pricing_unavailable, got %v", a.body)
		}
	}
	e.want(map[string]int{})
	e.api("POST", "/estimates", ttsEstimate)
	e.want(map[string]int{"ERR-006": 1})
}

func TestRetryAfter(t *testing.T) {
	e := newEnv(t, true)
	keyID := e.keyID()
	if a := e.control("PATCH", "/keys/"+keyID, `{"buckets":{"agent_estimate":1}}`); a.code != 200 {
		t.Fatalf("patch key: %d %v", a.code, a.body)
	}
	e.estimate()
	a := e.api("POST", "/estimates", ttsEstimate)
	wait := a.num("error", "retry_after_seconds")
	if a.str("error", "code") != "rate_limited" || wait < 1 {
		t.Fatalf("want rate_limited with a wait, got %v", a.body)
	}
	e.clk.Advance(time.Duration(wait-1) * time.Second)
	e.api("POST", "/estimates", ttsEstimate) // one second early
	e.want(map[string]int{"CLIENT-002": 1})
	e.clk.Advance(time.Duration(wait) * time.Second) // the early call's own wait passes too
	if a := e.api("POST", "/estimates", ttsEstimate); a.code != 200 {
		t.Fatalf("after the wait: %d %v", a.code, a.body)
	}
	e.want(map[string]int{"CLIENT-002": 1})
}

func (e *env) keyID() string {
	e.t.Helper()
	a := e.api("GET", "/credits/balance", "")
	e.control("DELETE", "/audit", "")
	// the balance read names no key; find it through the audit of a call with an Origin header
	e.api("GET", "/credits/balance", "", "Origin: https://example.test")
	f := e.findings()
	e.control("DELETE", "/audit", "")
	if len(f) != 1 || f[0].KeyID == nil || a.code != 200 {
		e.t.Fatalf("key id: %+v", f)
	}
	return *f[0].KeyID
}

func TestBrowserOrigin(t *testing.T) {
	e := newEnv(t, true)
	e.api("GET", "/capabilities", "", "Origin: https://shop.example")
	e.do("GET", "/api/v1/health/live", "", "", "Origin: https://shop.example") // no key: not a key leak
	e.want(map[string]int{"CORE-014": 1})
}

func TestPollingInsteadOfWait(t *testing.T) {
	e := newEnv(t, true)
	gen := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, e.estimate())).str("generation_id")
	for range 3 {
		e.api("GET", "/generations/"+gen, "")
		e.clk.Advance(time.Second)
	}
	e.want(map[string]int{})
	e.api("GET", "/generations/"+gen, "")
	e.api("GET", "/generations/"+gen, "")
	e.want(map[string]int{"CLIENT-003": 2})
	// reading a finished generation as often as one likes is fine
	e.finish()
	for range 5 {
		e.api("GET", "/generations/"+gen, "")
	}
	e.want(map[string]int{"CLIENT-003": 2})
}

func TestDifferentSubmitWhileInFlight(t *testing.T) {
	e := newEnv(t, true)
	needed := e.estimate()
	if a := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed)); a.code != 201 {
		t.Fatalf("submit: %v", a.body)
	}
	other := func(s string) string {
		return fmt.Sprintf(`{"capability_id":"tts","config":{"script":%q},"max_credits":%d}`, s, needed)
	}
	if a := e.api("POST", "/generations", other("Second script.")); a.str("error", "code") != "submission_in_flight" {
		t.Fatalf("want submission_in_flight, got %v", a.body)
	}
	e.want(map[string]int{}) // a first refusal is how a client learns the slot is taken
	// The first resend at once, the same body: the job it names still runs, so the client did not
	// wait on it (issue 26: this was let through until the third submit).
	e.api("POST", "/generations", other("Second script."))
	e.want(map[string]int{"CLIENT-004": 1})
	e.api("POST", "/generations", other("Third script."))
	e.want(map[string]int{"CLIENT-004": 2})
	e.finish()
	if a := e.api("POST", "/generations", other("Third script.")); a.code != 201 {
		t.Fatalf("after the job ended: %v", a.body)
	}
	e.want(map[string]int{"CLIENT-004": 2})
}

func TestAlteredIDs(t *testing.T) {
	e := newEnv(t, true)
	gen := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, e.estimate())).str("generation_id")
	e.finish()
	e.api("GET", "/generations/"+gen+"/wait", "")
	e.want(map[string]int{})
	hexPart := strings.TrimPrefix(gen, "gen_")
	for _, bad := range []string{strings.ToUpper(gen), "gen_" + strings.ToUpper(hexPart), hexPart, "gen_" + gen, url.PathEscape(" " + gen)} {
		if a := e.api("GET", "/generations/"+bad, ""); a.code != 404 {
			t.Errorf("%s: %d", bad, a.code)
		}
	}
	// an id the workspace was never handed is the service's business, not an altered id
	e.api("GET", "/generations/GEN_0123456789ABCDEF0123456789ABCDEF", "")
	e.want(map[string]int{"ID-015": 5})
}

func TestMaxCreditsIgnoresEstimate(t *testing.T) {
	e := newEnv(t, true)
	needed := e.estimate()
	if a := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed*2)); a.code != 201 { // padded again
		t.Fatalf("submit: %v", a.body)
	}
	e.want(map[string]int{"CLIENT-005": 1})
	e.finish()
	e.api("GET", "/generations", "")
	e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed-1)) // below the hold: refused
	e.want(map[string]int{"CLIENT-005": 2})
	// a config never estimated is not judged
	e.api("POST", "/generations", `{"capability_id":"tts","config":{"script":"Other words."},"max_credits":50}`)
	e.want(map[string]int{"CLIENT-005": 2})
}

func TestSubmitAfterEstimateChanged(t *testing.T) {
	e := newEnv(t, true)
	needed := e.estimate()
	if a := e.control("POST", "/faults", `{"kind":"estimate_changed","count":1}`); a.code != 201 {
		t.Fatalf("fault: %d %v", a.code, a.body)
	}
	if a := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed)); a.str("error", "code") != "estimate_changed" {
		t.Fatalf("want estimate_changed, got %v", a.body)
	}
	e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed))
	e.want(map[string]int{"CLIENT-006": 1})
	e.finish()
	e.api("GET", "/generations", "")
	needed = e.estimate()
	e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed))
	e.want(map[string]int{"CLIENT-006": 1})
}

func TestForgedCursor(t *testing.T) {
	e := newEnv(t, true)
	p := e.api("GET", "/voices?limit=1", "")
	e.api("GET", "/voices?limit=1&cursor="+url.QueryEscape(p.str("next_cursor")), "")
	e.api("GET", "/voices?limit=1&cursor=", "") // blank counts as omitted
	e.want(map[string]int{})
	e.api("GET", "/voices?limit=1&cursor=10", "")
	e.want(map[string]int{"CLIENT-007": 1})
}

func TestResubmitWithoutReading(t *testing.T) {
	e := newEnv(t, true)
	needed := e.estimate()
	e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed))
	e.finish()
	e.estimate()
	e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, needed)) // the first answer "lost": never read
	e.want(map[string]int{"SUBMIT-026": 1})
}

func TestExpiredLink(t *testing.T) {
	e := newEnv(t, true)
	gen := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, e.estimate())).str("generation_id")
	e.finish()
	r := e.api("GET", "/generations/"+gen, "")
	outs, _ := r.body["generation"].(map[string]any)["outputs"].([]any)
	if len(outs) == 0 {
		t.Fatalf("no outputs: %v", r.body)
	}
	u, _ := url.Parse(outs[0].(map[string]any)["url"].(string))
	e.do("GET", u.Path+"?"+u.RawQuery, "", "")
	e.want(map[string]int{})
	e.clk.Advance(601 * time.Second)
	if a := e.do("GET", u.Path+"?"+u.RawQuery, "", ""); a.code < 400 {
		t.Fatalf("expired link answered %d", a.code)
	}
	f := e.findings()
	if len(f) != 1 || f[0].RuleID != "LINK-008" || f[0].KeyID == nil || strings.Contains(f[0].Request, "sig=") {
		t.Fatalf("findings %+v", f)
	}
}

func TestWorkflowRunPolledTooOften(t *testing.T) {
	e := newEnv(t, true)
	inv := e.api("POST", "/workflows/templates/hero_image/invoke", `{"inputs":{"prompt":"a mug"},"max_credits":1}`)
	need := inv.num("error", "limit", "required_credits")
	inv = e.api("POST", "/workflows/templates/hero_image/invoke", fmt.Sprintf(`{"inputs":{"prompt":"a mug"},"max_credits":%d}`, need))
	run := inv.str("workflow_run_id")
	if inv.code != 201 || run == "" {
		t.Fatalf("invoke: %d %v", inv.code, inv.body)
	}
	e.control("DELETE", "/audit", "") // the max_credits probe above is not what this test is about
	e.api("GET", "/workflow-runs/"+run, "")
	e.clk.Advance(30 * time.Second)
	e.api("GET", "/workflow-runs/"+run, "")
	e.want(map[string]int{})
	e.clk.Advance(2 * time.Second)
	if a := e.api("GET", "/workflow-runs/"+run, ""); a.body["run"].(map[string]any)["still_running"] != true {
		t.Fatalf("the run finished within 32 s of service time: %v", a.body)
	}
	e.want(map[string]int{"WF-028": 1})
}

// Findings survive a reset (only the recent calls they are judged against are forgotten); DELETE
// clears them; a mock without --audit says the audit is off.
func TestResetClearAndOff(t *testing.T) {
	e := newEnv(t, true)
	e.api("GET", "/capabilities", "", "Origin: https://x.example")
	e.control("POST", "/reset", "")
	e.want(map[string]int{"CORE-014": 1})
	if a := e.control("DELETE", "/audit", ""); a.code != 200 {
		t.Fatalf("DELETE /audit: %d", a.code)
	}
	e.want(map[string]int{})
	if wired.Of(e.s).Audit.HasMust() {
		t.Error("HasMust after clear")
	}

	off := newEnv(t, false)
	off.api("GET", "/capabilities", "", "Origin: https://x.example")
	a := off.control("GET", "/audit", "")
	if a.code != 200 || a.body["enabled"] != false || !strings.Contains(a.str("message"), "--audit") {
		t.Fatalf("audit off: %d %v", a.code, a.body)
	}
	if wired.Of(off.s).Audit != nil {
		t.Fatal("Server.Audit set without Config.Audit")
	}
}

func TestTemplateIDNotFromTheLists(t *testing.T) {
	e := newEnv(t, true)
	tpls := e.api("GET", "/presets/preset_ugc_screenshot/templates", "")
	list, _ := tpls.at("templates").([]any)
	if len(list) == 0 {
		t.Fatalf("no templates: %v", tpls.body)
	}
	listed := list[0].(map[string]any)["template_id"].(string)
	est := func(tpl string) {
		e.api("POST", "/estimates", fmt.Sprintf(`{"capability_id":"preset_ugc_screenshot","config":{"template_id":%q}}`, tpl))
	}
	est(listed)
	e.want(map[string]int{})
	est("captpl_0123456789abcdef0123456789abcdef") // kept from another run, never listed here
	e.want(map[string]int{"PRESET-026": 1})
}

func TestRewordAfterModerationBlocked(t *testing.T) {
	e := newEnv(t, true)
	submit := func(script string) answer {
		e.t.Helper()
		body := fmt.Sprintf(`{"capability_id":"tts","config":{"script":%q},"max_credits":50}`, script)
		return e.api("POST", "/generations", body)
	}
	if a := submit("Buy the BLOCKME bottle that keeps coffee hot today."); a.str("error", "code") != "moderation_blocked" {
		t.Fatalf("want moderation_blocked, got %v", a.body)
	}
	submit("Buy the B.L.O.C.K.M.E bottle that keeps coffee hot today.") // the same ad, reworded
	e.want(map[string]int{"CLIENT-008": 1})
	e.finish()
	e.api("GET", "/generations", "")
	if a := submit("Our BLOCKME mug keeps tea warm."); a.str("error", "code") != "moderation_blocked" {
		t.Fatalf("want moderation_blocked, got %v", a.body)
	}
	submit("A quiet walk in the autumn park.") // an unrelated request is not a rewording
	e.want(map[string]int{"CLIENT-008": 1})
}

// A state change through the control API (as a person makes in the app) is no precedent: the same
// request refused before it may be sent after it. Finalize is safe to repeat.
func TestStateChangesAndFinalizeAreNotRepeats(t *testing.T) {
	e := newEnv(t, true)
	free := e.control("POST", "/workspaces", `{"plan":"free","balance":100}`)
	ws := free.str("workspace_id")
	key := e.control("POST", "/workspaces/"+ws+"/keys", `{"scopes":["read","generate"]}`).str("key")
	if a := e.do("GET", "/credits/balance", key, ""); a.str("error", "code") != "required_plan" {
		t.Fatalf("want required_plan, got %v", a.body)
	}
	if a := e.control("PATCH", "/workspaces/"+ws, `{"plan":"pro"}`); a.code != 200 {
		t.Fatalf("upgrade: %d %v", a.code, a.body)
	}
	if a := e.do("GET", "/credits/balance", key, ""); a.code != 200 {
		t.Fatalf("after the upgrade: %d %v", a.code, a.body)
	}
	for range 2 {
		e.api("POST", "/uploads/ast_0123456789abcdef0123456789abcdef/finalize", "")
	}
	// a refusal that depends on the balance, not the request, may be repeated (after a top-up)
	e.control("POST", "/workspaces/"+e.control("GET", "/state", "").str("default_workspace_id")+"/credits", `{"delta":-10000}`)
	for range 2 {
		if a := e.api("POST", "/generations", fmt.Sprintf(ttsSubmit, 4)); a.str("error", "code") != "insufficient_credits" {
			t.Fatalf("want insufficient_credits, got %v", a.body)
		}
	}
	e.want(map[string]int{})
}
