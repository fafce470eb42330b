package mock

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	fixturemedia "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/uploads"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// An upload whose bytes arrived but that was never finalized is forgotten, bytes included, once
// its slot expired and the grace passed; until then it can still be finalized.
func TestAbandonedUploadIsFreed(t *testing.T) {
	e := newEnv(t)
	key := e.s.Info().GenerateKey
	data := strings.Repeat("x", 1000)
	reserve := func() (string, string) {
		r := e.call("POST", "/api/v1/uploads", `{"filename":"a.wav","content_type":"audio/wav","size_bytes":1000}`, bearer(key),
			"Content-Type: application/json")
		if r.code != 200 && r.code != 201 {
			t.Fatalf("reserve: %d %s", r.code, r.raw)
		}
		u, _ := url.Parse(r.body["upload_url"].(string))
		id := r.body["asset_id"].(string)
		if p := e.call("PUT", u.RequestURI(), data, "Content-Type: audio/wav"); p.code != 200 {
			t.Fatalf("put: %d %s", p.code, p.raw)
		}
		return id, u.RequestURI()
	}
	id, _ := reserve()
	if _, ok := e.s.svc.Blob.Get(id); !ok {
		t.Fatal("the PUT bytes are not stored")
	}
	e.clk.Advance(uploads.PendingWindow - time.Second)
	if _, ok := e.s.svc.Blob.Get(id); !ok {
		t.Fatal("bytes freed before the grace ended")
	}
	e.clk.Advance(time.Second)
	if _, ok := e.s.svc.Blob.Get(id); ok {
		t.Fatal("an abandoned upload's bytes are still resident after slot expiry + grace")
	}
	if _, ok := e.s.svc.Assets.Get(e.s.DefaultWorkspaceID(), id); ok {
		t.Fatal("its asset record is still listed")
	}
	if r := e.call("POST", "/api/v1/uploads/"+id+"/finalize", "", bearer(key)); r.code != 404 || r.errField("code") != "not_found" {
		t.Fatalf("finalize after the grace: %d %s, want 404 not_found", r.code, r.raw)
	}
}

// retainEnv is a server with the shortest retention and a helper that submits through the API.
type retainEnv struct {
	*env
	key string
}

func newRetainEnv(t *testing.T) *retainEnv {
	t.Helper()
	e := newEnv(t, func(c *Config) { c.Retain = MinRetain; c.Balance = 1 << 40 })
	return &retainEnv{env: e, key: e.s.Info().GenerateKey}
}

// submit posts a generation (max_credits from an estimate) and returns the answer's body.
func (e *retainEnv) submit(key, body string) map[string]any {
	e.t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		e.t.Fatal(err)
	}
	estimate := fmt.Sprintf(`{"capability_id":%q,"config":%s}`, req["capability_id"], mustJSON(e.t, req["config"]))
	est := e.call("POST", "/api/v1/estimates", estimate, bearer(key))
	if est.code != 200 {
		e.t.Fatalf("estimate: %d %s", est.code, est.raw)
	}
	req["max_credits"] = est.body["max_credits_needed"]
	r := e.call("POST", "/api/v1/generations", mustJSON(e.t, req), bearer(key))
	if r.code == 402 && r.errField("code") == "max_credits_exceeded" { // variants: the hold of every take
		req["max_credits"] = r.body["error"].(map[string]any)["limit"].(map[string]any)["required_credits"]
		r = e.call("POST", "/api/v1/generations", mustJSON(e.t, req), bearer(key))
	}
	if r.code != 201 {
		e.t.Fatalf("submit: %d %s", r.code, r.raw)
	}
	return r.body
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// read answers GET path with the key; gone reports a 404 not_found in the envelope.
func (e *retainEnv) read(path string) (body map[string]any, gone bool) {
	e.t.Helper()
	r := e.call("GET", "/api/v1"+path, "", bearer(e.key))
	switch {
	case r.code == 200:
		return r.body, false
	case r.code == 404 && r.errField("code") == "not_found":
		return nil, true
	}
	e.t.Fatalf("GET %s: %d %s", path, r.code, r.raw)
	return nil, false
}

func (e *retainEnv) endedAt(genID string) time.Time {
	e.t.Helper()
	b, gone := e.read("/generations/" + genID)
	if gone {
		e.t.Fatalf("%s is gone", genID)
	}
	g := b["generation"].(map[string]any)
	at, ok := g["completed_at"].(string)
	if !ok {
		e.t.Fatalf("%s has not ended: %v", genID, g["status"])
	}
	ts, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		e.t.Fatal(err)
	}
	return ts
}

// advanceTo moves the manual clock to at (it must not be in the past).
func (e *retainEnv) advanceTo(at time.Time) {
	e.t.Helper()
	d := at.Sub(e.clk.Now())
	if d < 0 {
		e.t.Fatalf("advance to %s: the clock is at %s already", at, e.clk.Now())
	}
	e.clk.Advance(d)
}

func (e *retainEnv) listed(query, genID string) bool {
	e.t.Helper()
	b, _ := e.read("/generations?limit=50" + query)
	for _, row := range b["generations"].([]any) {
		if row.(map[string]any)["generation_id"] == genID {
			return true
		}
	}
	return false
}

// A generation finished at T is readable at T+retain-1s and answers 404 not_found at T+retain+1s,
// with its output asset record; a job in flight across the same span is kept; the balance and the
// credit history do not move; lists skip the forgotten row; a link handed out before keeps working
// for its lifetime, then the bytes are gone too.
func TestRetainForgetsFinishedGeneration(t *testing.T) {
	e := newRetainEnv(t)
	other := e.newKey(e.s.DefaultWorkspaceID(), `{"scopes":["read","generate"]}`)
	// A job that stays in flight across the whole span, submitted before the other one.
	if _, err := e.s.svc.Faults.Add(faults.Spec{Kind: faults.SlowRender, CapabilityID: "tts", Seconds: faults.MaxSlowSeconds}); err != nil {
		t.Fatal(err)
	}
	running := e.submit(other, `{"capability_id":"tts","config":{"script":"Still rendering."}}`)["generation_id"].(string)
	done := e.submit(e.key, `{"capability_id":"image_fast","config":{"prompt":"a red mug"}}`)["generation_id"].(string)
	e.clk.Advance(time.Hour)
	ended := e.endedAt(done)
	b, _ := e.read("/generations/" + done)
	out := b["generation"].(map[string]any)["outputs"].([]any)[0].(map[string]any)
	assetID := out["asset_id"].(string)
	if _, gone := e.read("/assets/" + assetID); gone {
		t.Fatal("the output asset is not readable")
	}
	balance := func() string {
		r := e.call("GET", "/api/v1/credits/balance", "", bearer(e.key))
		return string(r.raw)
	}
	history := func() [3]int64 {
		ws, _ := e.s.svc.Registry.Get(e.s.DefaultWorkspaceID())
		ws.Lock()
		defer ws.Unlock()
		w := ws.Wallet()
		return [3]int64{w.Available(), w.Held(), w.Captured()}
	}

	e.advanceTo(ended.Add(MinRetain - time.Second))
	if _, gone := e.read("/generations/" + done); gone {
		t.Fatal("forgotten a second before its retention")
	}
	if !e.listed("", done) {
		t.Fatal("not listed a second before its retention")
	}
	b, _ = e.read("/generations/" + done)
	link := b["generation"].(map[string]any)["outputs"].([]any)[0].(map[string]any)["url"].(string)
	bal, hist := balance(), history()

	e.clk.Advance(2 * time.Second)
	if _, gone := e.read("/generations/" + done); !gone {
		t.Fatal("still readable a second after its retention")
	}
	if e.listed("", done) || e.listed("&status=completed", done) {
		t.Fatal("still listed after its retention")
	}
	if _, gone := e.read("/assets/" + assetID); !gone {
		t.Fatal("its output asset record is still readable")
	}
	if r, gone := e.read("/generations/" + running); gone || r["generation"].(map[string]any)["status"] == "completed" {
		t.Fatalf("the job in flight was forgotten or finished: gone %v", gone)
	}
	if !e.listed("", running) {
		t.Fatal("the job in flight is not listed")
	}
	if b, h := balance(), history(); b != bal || h != hist {
		t.Fatalf("the ledger moved: balance %s -> %s, wallet %v -> %v", bal, b, hist, h)
	}
	u, _ := url.Parse(link)
	if r := e.call("GET", u.RequestURI(), ""); r.code != 200 {
		t.Fatalf("a link handed out before the retention: %d, want 200 for its lifetime", r.code)
	}
	e.clk.Advance(jobs.LinkTTL)
	if _, ok := e.s.svc.Blob.Get(assetID); ok {
		t.Fatal("the output's bytes outlived the last link")
	}
	if r := e.call("POST", "/_control/v1/generations/"+done+"/recover", "", ctl()); r.code != 404 {
		t.Fatalf("recover of a forgotten generation: %d %s, want 404", r.code, r.raw)
	}
}

// The siblings of a batch are kept until the last of them ended retain ago, then the batch and
// every sibling answer 404.
func TestRetainForgetsBatchTogether(t *testing.T) {
	e := newRetainEnv(t)
	if _, err := e.s.svc.Faults.Add(faults.Spec{Kind: faults.SlowRender, CapabilityID: "video_fast", Seconds: 3600}); err != nil {
		t.Fatal(err)
	}
	sub := e.submit(e.key, `{"capability_id":"video_fast","config":{"prompt":"a dog"},"variants":2}`)
	bg := sub["batch_group_id"].(string)
	ids := sub["generation_ids"].([]any)
	e.clk.Advance(10 * time.Minute)
	first := e.endedAt(ids[1].(string)) // the sibling without the slow render
	e.advanceTo(first.Add(MinRetain + time.Second))
	if _, gone := e.read("/batches/" + bg); gone {
		t.Fatal("the batch went before its last sibling's retention")
	}
	if _, gone := e.read("/generations/" + ids[1].(string)); gone {
		t.Fatal("an early sibling went before the batch")
	}
	last := e.endedAt(ids[0].(string))
	e.advanceTo(last.Add(MinRetain - time.Second))
	if _, gone := e.read("/batches/" + bg); gone {
		t.Fatal("the batch went a second early")
	}
	e.clk.Advance(2 * time.Second)
	if _, gone := e.read("/batches/" + bg); !gone {
		t.Fatal("the batch is kept after its retention")
	}
	for _, id := range ids {
		if _, gone := e.read("/generations/" + id.(string)); !gone {
			t.Fatalf("sibling %s kept after the batch went", id)
		}
	}
}

// A list cursor naming a forgotten row still pages on from that row's place.
func TestRetainCursorOverForgottenRow(t *testing.T) {
	e := newRetainEnv(t)
	other := e.newKey(e.s.DefaultWorkspaceID(), `{"scopes":["read","generate"]}`)
	if _, err := e.s.svc.Faults.Add(faults.Spec{Kind: faults.SlowRender, CapabilityID: "tts", Seconds: 7200}); err != nil {
		t.Fatal(err)
	}
	older := e.submit(e.key, `{"capability_id":"tts","config":{"script":"The older, slow one."}}`)["generation_id"].(string)
	e.clk.Advance(time.Second)
	newer := e.submit(other, `{"capability_id":"tts","config":{"script":"The newer, quick one."}}`)["generation_id"].(string)
	e.clk.Advance(time.Minute)
	b, _ := e.read("/generations?limit=1")
	rows := b["generations"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["generation_id"] != newer {
		t.Fatalf("first page %v, want %s", rows, newer)
	}
	cur := b["next_cursor"].(string)
	e.advanceTo(e.endedAt(newer).Add(MinRetain + time.Second))
	if _, gone := e.read("/generations/" + newer); !gone {
		t.Fatal("the newer row is not forgotten")
	}
	b, _ = e.read("/generations?limit=1&cursor=" + url.QueryEscape(cur))
	rows = b["generations"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["generation_id"] != older {
		t.Fatalf("page after a forgotten row: %v, want %s", rows, older)
	}
}

func TestRetainBelowMinimumRefused(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Second, MinRetain - time.Second} {
		_, err := New(Config{Retain: d, Clock: clock.NewManual(t0), Logger: slog.New(slog.DiscardHandler)})
		if err == nil || !strings.Contains(err.Error(), MinRetain.String()) {
			t.Errorf("retain %s: %v, want a refusal naming %s", d, err, MinRetain)
		}
	}
}

// An ended workflow run is readable until its retention and then answers 404 not_found and leaves
// the run list.
func TestRetainForgetsEndedRun(t *testing.T) {
	e := newRetainEnv(t)
	invoke := func() string {
		body := `{"inputs":{"prompt":"a mug on a desk"},"max_credits":%d}`
		r := e.call("POST", "/api/v1/workflows/templates/hero_image/invoke", fmt.Sprintf(body, 1), bearer(e.key))
		need := int(r.body["error"].(map[string]any)["limit"].(map[string]any)["required_credits"].(float64))
		r = e.call("POST", "/api/v1/workflows/templates/hero_image/invoke", fmt.Sprintf(body, need), bearer(e.key))
		if r.code != 201 && r.code != 202 {
			t.Fatalf("invoke: %d %s", r.code, r.raw)
		}
		return r.body["workflow_run_id"].(string)
	}
	id := invoke()
	e.clk.Advance(time.Hour)
	b, _ := e.read("/workflow-runs/" + id)
	run := b["run"].(map[string]any)
	if run["finished_at"] == nil {
		t.Fatalf("the run has not ended: %s", mustJSON(t, b))
	}
	ended, err := time.Parse(time.RFC3339Nano, run["finished_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	listed := func() bool {
		b, _ := e.read("/workflow-runs?limit=50")
		for _, r := range b["runs"].([]any) {
			if r.(map[string]any)["workflow_run_id"] == id {
				return true
			}
		}
		return false
	}
	e.advanceTo(ended.Add(MinRetain - time.Second))
	if _, gone := e.read("/workflow-runs/" + id); gone || !listed() {
		t.Fatal("the run went before its retention")
	}
	e.clk.Advance(2 * time.Second)
	if _, gone := e.read("/workflow-runs/" + id); !gone || listed() {
		t.Fatal("the run is kept after its retention")
	}
}

// A finalized upload stays while it is used: it is forgotten Retain after its last use (finalize
// or an estimate naming it), then answers 404 not_found like an unknown upload.
func TestRetainForgetsUnusedUpload(t *testing.T) {
	e := newRetainEnv(t)
	_, data := fixturemedia.Get("image.png")
	reserve := fmt.Sprintf(`{"filename":"a.png","content_type":"image/png","size_bytes":%d}`, len(data))
	r := e.call("POST", "/api/v1/uploads", reserve, bearer(e.key))
	if r.code != 201 {
		t.Fatalf("reserve: %d %s", r.code, r.raw)
	}
	id := r.body["asset_id"].(string)
	u, _ := url.Parse(r.body["upload_url"].(string))
	if p := e.call("PUT", u.RequestURI(), string(data), "Content-Type: image/png"); p.code != 200 {
		t.Fatalf("put: %d %s", p.code, p.raw)
	}
	if f := e.call("POST", "/api/v1/uploads/"+id+"/finalize", "", bearer(e.key)); f.code != 200 || f.body["usable"] != true {
		t.Fatalf("finalize: %d %s", f.code, f.raw)
	}
	use := func() {
		t.Helper()
		r := e.call("POST", "/api/v1/estimates", `{"capability_id":"upscale","config":{"source_image":["`+id+`"]}}`, bearer(e.key))
		if r.code != 200 {
			t.Fatalf("estimate naming the upload: %d %s", r.code, r.raw)
		}
	}
	e.clk.Advance(MinRetain / 2)
	use()
	used := e.clk.Now()
	e.advanceTo(used.Add(MinRetain - time.Second))
	if _, gone := e.read("/assets/" + id); gone {
		t.Fatal("an upload used within the retention was forgotten")
	}
	dl, _ := e.read("/assets/" + id + "/download")
	link, _ := url.Parse(dl["url"].(string))
	e.clk.Advance(2 * time.Second)
	if r := e.call("GET", link.RequestURI(), ""); r.code != 200 {
		t.Fatalf("a link handed out before the upload was forgotten: %d, want 200 for its lifetime", r.code)
	}
	if _, gone := e.read("/assets/" + id); !gone {
		t.Fatal("an upload unused for the retention is still readable")
	}
	if r := e.call("POST", "/api/v1/uploads/"+id+"/finalize", "", bearer(e.key)); r.code != 404 || r.errField("code") != "not_found" {
		t.Fatalf("finalize of a forgotten upload: %d %s, want 404 not_found", r.code, r.raw)
	}
	e.clk.Advance(jobs.LinkTTL)
	if _, ok := e.s.svc.Blob.Get(id); ok {
		t.Fatal("the upload's bytes outlived its links")
	}
}
