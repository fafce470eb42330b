package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec"
)

// upHarness is a mock with a manual clock behind strict response validation, and a
// generate+read key whose upload buckets do not get in the way.
type upHarness struct {
	*harness
	clk *clock.Manual
}

func newUpHarness(t *testing.T, allowLoopback bool) *upHarness {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 4, 2, 8, 0, 0, 0, time.UTC))
	s, err := mock.New(mock.Config{Seed: 5, ControlToken: ctlToken, Clock: clk, Logger: slog.New(slog.DiscardHandler),
		AllowLoopbackFetch: allowLoopback})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	validatorOnce.Do(func() { validator, validatorErr = spec.NewEmbeddedValidator(context.Background()) })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	h := &harness{t: t, s: s}
	h.h = validator.Middleware(s, func(v spec.Violation) {
		if v.Kind == "response" {
			t.Errorf("%v", v)
		}
	})
	ws, _ := wired.Of(s).Registry.Get(s.DefaultWorkspaceID())
	h.key = upKey(t, s, ws)
	return &upHarness{harness: h, clk: clk}
}

// upKey makes a generate+read key with roomy buckets.
func upKey(t testing.TB, s *mock.Server, ws *workspace.Workspace) string {
	t.Helper()
	_, secret, err := wired.Of(s).Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead, workspace.ScopeGenerate},
		Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 100000, ratelimit.AgentEstimate: 100000,
			ratelimit.Uploads: 100000, ratelimit.Reservations: 100000},
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func jsonBody(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *upHarness) post(key, path string, body any) answer {
	h.t.Helper()
	s := ""
	if body != nil {
		s = jsonBody(h.t, body)
	}
	return h.do(key, http.MethodPost, "/api/v1"+path, s)
}

func (h *upHarness) reserve(key, name, ct string, size int, extra ...any) answer {
	h.t.Helper()
	b := map[string]any{"filename": name, "content_type": ct, "size_bytes": size}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return h.post(key, "/uploads", b)
}

func (h *upHarness) mustReserve(key, name, ct string, size int, extra ...any) answer {
	h.t.Helper()
	a := h.reserve(key, name, ct, size, extra...)
	if a.code != http.StatusCreated {
		h.t.Fatalf("reserve %s %s %d: %d %s", name, ct, size, a.code, a.raw)
	}
	return a
}

// put sends the PUT to an upload link on the mock's own listener (no key).
func (h *upHarness) put(link string, body []byte, ct string) int {
	h.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		h.t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPut, u.RequestURI(), bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	rec := httptest.NewRecorder()
	h.s.ServeHTTP(rec, req)
	return rec.Code
}

func (h *upHarness) finalize(key, id string) answer {
	h.t.Helper()
	return h.post(key, "/uploads/"+id+"/finalize", nil)
}

// upload reserves, PUTs and finalizes a fixture declared as its manifest type.
func (h *upHarness) upload(key, name string) (id string, fin answer) {
	h.t.Helper()
	f, b := fixtures.Get(name)
	r := h.mustReserve(key, f.Name, f.ContentType, len(b))
	id = r.body["asset_id"].(string)
	if code := h.put(r.body["upload_url"].(string), b, f.ContentType); code != http.StatusOK {
		h.t.Fatalf("PUT %s: %d", name, code)
	}
	return id, h.finalize(key, id)
}

func TestReserveAnswer(t *testing.T) {
	h := newUpHarness(t, false)
	now := h.clk.Now()
	for _, c := range []struct {
		ct, echo, kind string
		max            float64
	}{
		{"image/jpeg", "image/jpeg", "image", 20971520}, {"image/png", "image/png", "image", 20971520},
		{"image/webp", "image/webp", "image", 20971520}, {"image/gif", "image/gif", "image", 20971520},
		{"video/mp4", "video/mp4", "video", 104857600}, {"video/webm", "video/webm", "video", 104857600},
		{"video/quicktime", "video/quicktime", "video", 104857600},
		{"audio/mpeg", "audio/mpeg", "audio", 26214400}, {"audio/mp3", "audio/mp3", "audio", 26214400},
		{"audio/wav", "audio/wav", "audio", 26214400}, {"audio/x-wav", "audio/x-wav", "audio", 26214400},
		{"audio/webm", "audio/webm", "audio", 26214400}, {"audio/ogg", "audio/ogg", "audio", 26214400},
		{"IMAGE/PNG; charset=binary", "image/png", "image", 20971520},
		{" Audio/X-WAV ", "audio/x-wav", "audio", 26214400},
	} {
		a := h.mustReserve(h.key, "f", c.ct, 10)
		if a.hdr.Get("Location") != "" {
			t.Errorf("%s: Location %q on a reservation", c.ct, a.hdr.Get("Location"))
		}
		b := a.body
		if b["ok"] != true || b["kind"] != c.kind || b["content_type"] != c.echo || b["size_bytes"] != float64(10) ||
			b["max_bytes_for_kind"] != c.max || b["content_checked"] != (c.kind == "image") ||
			b["upload_expires_in_seconds"] != float64(300) || b["next_action"] == "" {
			t.Errorf("%s: %s", c.ct, a.raw)
		}
		if exp, err := time.Parse(time.RFC3339, b["upload_expires_at"].(string)); err != nil || !exp.Equal(now.Add(300*time.Second)) {
			t.Errorf("%s: upload_expires_at %v (%v), want %v", c.ct, b["upload_expires_at"], err, now.Add(300*time.Second))
		}
		if !strings.Contains(b["upload_url"].(string), "/upload-slots/"+b["asset_id"].(string)) {
			t.Errorf("upload_url %v", b["upload_url"])
		}
	}
	// A reservation is not an asset yet.
	id := h.mustReserve(h.key, "r.png", "image/png", 10).body["asset_id"].(string)
	if got := h.mustGet(h.key, "/assets").ids("assets", "asset_id"); slices.Contains(got, id) {
		t.Errorf("a reserved upload is listed: %v", got)
	}
	wantError(t, h.get(h.key, "/assets/"+id), 404, "not_found")
	wantError(t, h.get(h.key, "/assets/"+id+"/download"), 404, "not_found")
}

func TestReserveRefusals(t *testing.T) {
	h := newUpHarness(t, false)
	sum := sha256.Sum256([]byte("x"))
	good := base64.StdEncoding.EncodeToString(sum[:])
	for _, c := range []struct {
		name, body, field string
	}{
		{"unknown key", `{"filename":"a.png","content_type":"image/png","size_bytes":1,"bogus":1}`, "bogus"},
		{"no filename", `{"content_type":"image/png","size_bytes":1}`, "filename"},
		{"empty filename", `{"filename":"","content_type":"image/png","size_bytes":1}`, "filename"},
		{"256 filename", `{"filename":"` + strings.Repeat("a", 256) + `","content_type":"image/png","size_bytes":1}`, "filename"},
		{"no type", `{"filename":"a","size_bytes":1}`, "content_type"},
		{"pdf", `{"filename":"a","content_type":"application/pdf","size_bytes":1}`, "content_type"},
		{"html", `{"filename":"a","content_type":"text/html","size_bytes":1}`, "content_type"},
		{"no size", `{"filename":"a","content_type":"image/png"}`, "size_bytes"},
		{"zero size", `{"filename":"a","content_type":"image/png","size_bytes":0}`, "size_bytes"},
		{"negative size", `{"filename":"a","content_type":"image/png","size_bytes":-1}`, "size_bytes"},
		{"fraction", `{"filename":"a","content_type":"image/png","size_bytes":1.5}`, "size_bytes"},
		{"image over", `{"filename":"a","content_type":"image/png","size_bytes":20971521}`, "size_bytes"},
		{"video over", `{"filename":"a","content_type":"video/mp4","size_bytes":104857601}`, "size_bytes"},
		{"audio over", `{"filename":"a","content_type":"audio/wav","size_bytes":26214401}`, "size_bytes"},
		{"checksum not base64", `{"filename":"a","content_type":"image/png","size_bytes":1,"checksum_sha256":"!!"}`, "checksum_sha256"},
		{"checksum short", `{"filename":"a","content_type":"image/png","size_bytes":1,"checksum_sha256":"` + good[:20] + `"}`, "checksum_sha256"},
		{"checksum hex", `{"filename":"a","content_type":"image/png","size_bytes":1,"checksum_sha256":"` + fmt.Sprintf("%x", sum) + `"}`, "checksum_sha256"},
		{"not json", `{"filename":`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := h.do(h.key, http.MethodPost, "/api/v1/uploads", c.body)
			wantError(t, a, 400, "invalid_config", "field", c.field)
			if c.field == "content_type" {
				e := a.body["error"].(map[string]any)
				list, _ := e["accepted_content_types"].([]any)
				if len(list) != 13 || !strings.Contains(e["message"].(string), "audio/x-wav") {
					t.Errorf("refused type without the accepted list: %s", a.raw)
				}
			}
		})
	}
	for _, ok := range []string{
		`{"filename":"` + strings.Repeat("é", 255) + `","content_type":"image/png","size_bytes":20971520,"checksum_sha256":"` + good + `"}`,
		`{"filename":"v","content_type":"video/mp4","size_bytes":104857600}`,
		`{"filename":"a","content_type":"audio/ogg","size_bytes":26214400,"checksum_sha256":"` + strings.TrimRight(good, "=") + `"}`,
	} {
		if a := h.do(h.key, http.MethodPost, "/api/v1/uploads", ok); a.code != 201 {
			t.Errorf("%.80s: %d %s", ok, a.code, a.raw)
		}
	}
	// Scope: a read key may not reserve.
	ws, _ := wired.Of(h.s).Registry.Get(h.s.DefaultWorkspaceID())
	read := h.newKey(ws, workspace.ScopeRead)
	wantError(t, h.reserve(read, "a.png", "image/png", 1), 403, "insufficient_scope")
	wantError(t, h.post(read, "/uploads/ast_"+strings.Repeat("0", 32)+"/finalize", nil), 403, "insufficient_scope")
	wantError(t, h.post(read, "/uploads/from-url", map[string]any{"url": "https://example.com/a.png"}), 403, "insufficient_scope")
}

// Every fixture that can be reserved goes through reserve, PUT and finalize with its manifest
// outcome; a repeat finalize answers the same; a refused one is deleted (404 afterwards).
func TestFinalizeEveryFixture(t *testing.T) {
	h := newUpHarness(t, false)
	for _, f := range fixtures.Files() {
		if f.SizeBytes == 0 || fixtures.OutcomeRefused == f.Outcome && f.Reason == "not_accepted" {
			continue // empty.png cannot be reserved, page.html has no accepted type: both are from-url cases
		}
		t.Run(f.Name, func(t *testing.T) {
			id, fin := h.upload(h.key, f.Name)
			switch f.Outcome {
			case fixtures.OutcomeRefused:
				wantError(t, fin, 400, "invalid_config")
				if msg := fin.errString("message"); !strings.Contains(msg, f.Reason) {
					t.Errorf("refusal does not name %s: %s", f.Reason, msg)
				}
				wantError(t, h.finalize(h.key, id), 404, "not_found")
				wantError(t, h.get(h.key, "/assets/"+id), 404, "not_found")
				return
			case fixtures.OutcomeClean, fixtures.OutcomeFlagged:
				if fin.code != 200 {
					t.Fatalf("finalize: %d %s", fin.code, fin.raw)
				}
			}
			b := fin.body
			if b["scan_status"] != f.Outcome || b["usable"] != (f.Outcome == fixtures.OutcomeClean) || b["kind"] != f.Kind || b["asset_id"] != id {
				t.Errorf("finalize %s", fin.raw)
			}
			checkMS(t, b["duration_ms"], f.DurationMS)
			again := h.finalize(h.key, id)
			if again.code != 200 || again.raw != fin.raw {
				t.Errorf("repeat finalize: %d %s, first %s", again.code, again.raw, fin.raw)
			}
			row := h.mustGet(h.key, "/assets/"+id)
			asset := row.body["asset"].(map[string]any)
			if asset["source"] != "upload" || asset["kind"] != f.Kind || asset["scan_status"] != f.Outcome ||
				asset["file_name"] != f.Name || asset["size_bytes"] != float64(f.SizeBytes) || asset["generation_id"] != nil {
				t.Errorf("asset %s", row.raw)
			}
			if f.Width > 0 && (asset["width"] != float64(f.Width) || asset["height"] != float64(f.Height)) {
				t.Errorf("asset size %v x %v, want %d x %d", asset["width"], asset["height"], f.Width, f.Height)
			}
			dl := h.get(h.key, "/assets/"+id+"/download")
			if f.Outcome == fixtures.OutcomeFlagged {
				if asset["url"] != nil || row.body["output_urls_expire_in_seconds"] != nil {
					t.Errorf("a flagged file has a link: %s", row.raw)
				}
				wantError(t, dl, 422, "moderation_blocked")
				return
			}
			if row.body["output_urls_expire_in_seconds"] != float64(600) || asset["url"] == nil {
				t.Errorf("no link: %s", row.raw)
			}
			if dl.code != 200 || dl.body["expires_in_seconds"] != float64(600) || dl.body["file_name"] != f.Name {
				t.Fatalf("download %d %s", dl.code, dl.raw)
			}
			_, want := fixtures.Get(f.Name)
			got := h.fetchLink(dl.body["url"].(string))
			if !bytes.Equal(got, want) {
				t.Errorf("the link serves %d bytes, want the %d uploaded", len(got), len(want))
			}
		})
	}
}

func checkMS(t *testing.T, got any, want *int64) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("duration_ms %v, want null", got)
		}
		return
	}
	g, ok := got.(float64)
	if !ok || g < float64(*want-50) || g > float64(*want+50) {
		t.Errorf("duration_ms %v, want %d ± 50", got, *want)
	}
}

func (h *upHarness) fetchLink(link string) []byte {
	h.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		h.t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
	if rec.Code != 200 {
		h.t.Fatalf("GET link: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

func TestFinalizeSlotOutcomes(t *testing.T) {
	h := newUpHarness(t, false)
	_, png := fixtures.Get("image.png")

	// Finalize before the PUT: 409 (retryable) while the link lives; then the PUT and a clean finalize.
	r := h.mustReserve(h.key, "a.png", "image/png", len(png))
	id := r.body["asset_id"].(string)
	wantError(t, h.finalize(h.key, id), 409, "input_not_ready")
	if h.finalize(h.key, id).body["error"].(map[string]any)["retryable"] != true {
		t.Error("input_not_ready is not retryable")
	}
	h.put(r.body["upload_url"].(string), png, "image/png")
	if a := h.finalize(h.key, id); a.code != 200 || a.body["usable"] != true {
		t.Fatalf("%d %s", a.code, a.raw)
	}

	broken := func(name string, put func(link string)) {
		t.Run(name, func(t *testing.T) {
			r := h.mustReserve(h.key, "a.png", "image/png", len(png))
			id := r.body["asset_id"].(string)
			put(r.body["upload_url"].(string))
			a := h.finalize(h.key, id)
			wantError(t, a, 400, "invalid_config")
			if a.body["error"].(map[string]any)["retryable"] != false {
				t.Error("retryable refusal")
			}
			wantError(t, h.finalize(h.key, id), 404, "not_found")
		})
	}
	broken("short", func(l string) { h.put(l, png[:10], "image/png") })
	broken("long", func(l string) { h.put(l, append(bytes.Clone(png), 0), "image/png") })
	broken("wrong type", func(l string) { h.put(l, png, "image/jpeg") })
	broken("never arrived", func(string) { h.clk.Advance(300 * time.Second) })
	broken("late", func(l string) {
		h.clk.Advance(301 * time.Second)
		if code := h.put(l, png, "image/png"); code == 200 {
			t.Errorf("a late PUT was accepted")
		}
	})

	// Checksum: right passes, wrong fails at finalize.
	sum := sha256.Sum256(png)
	r = h.mustReserve(h.key, "a.png", "image/png", len(png), "checksum_sha256", base64.StdEncoding.EncodeToString(sum[:]))
	h.put(r.body["upload_url"].(string), png, "image/png")
	if a := h.finalize(h.key, r.body["asset_id"].(string)); a.code != 200 {
		t.Fatalf("matching checksum: %d %s", a.code, a.raw)
	}
	other := sha256.Sum256([]byte("other"))
	r = h.mustReserve(h.key, "a.png", "image/png", len(png), "checksum_sha256", base64.StdEncoding.EncodeToString(other[:]))
	h.put(r.body["upload_url"].(string), png, "image/png")
	a := h.finalize(h.key, r.body["asset_id"].(string))
	wantError(t, a, 400, "invalid_config")
	if !strings.Contains(a.errString("message"), "checksum_sha256") {
		t.Errorf("message %q", a.errString("message"))
	}

	// A second PUT does not replace the first file.
	r = h.mustReserve(h.key, "a.png", "image/png", len(png))
	h.put(r.body["upload_url"].(string), png, "image/png")
	if code := h.put(r.body["upload_url"].(string), bytes.Repeat([]byte("x"), len(png)), "image/png"); code == 200 {
		t.Error("a second PUT was accepted")
	}
	if a := h.finalize(h.key, r.body["asset_id"].(string)); a.code != 200 || a.body["scan_status"] != "clean" {
		t.Errorf("after a second PUT: %d %s", a.code, a.raw)
	}
}

func TestFinalizeNotFoundAndFaults(t *testing.T) {
	h := newUpHarness(t, false)
	for _, id := range []string{"ast_" + strings.Repeat("a", 32), "gen_" + strings.Repeat("a", 32), "ast_nothex", "x"} {
		wantError(t, h.finalize(h.key, id), 404, "not_found")
	}
	other := wired.Of(h.s).Registry.Create(workspace.CreateParams{Plan: workspace.PlanPro, Balance: 100})
	otherKey := upKey(t, h.s, other)
	id, fin := h.upload(h.key, "image.png")
	if fin.code != 200 {
		t.Fatal(fin.raw)
	}
	wantError(t, h.finalize(otherKey, id), 404, "not_found")
	wantError(t, h.get(otherKey, "/assets/"+id), 404, "not_found")
	wantError(t, h.get(otherKey, "/assets/"+id+"/download"), 404, "not_found")
	if got := h.mustGet(otherKey, "/assets").ids("assets", "asset_id"); len(got) != 0 {
		t.Errorf("another workspace lists %v", got)
	}

	// A queued provider_unavailable fault answers 502 once and changes nothing.
	_, png := fixtures.Get("image.png")
	r := h.mustReserve(h.key, "a.png", "image/png", len(png))
	h.put(r.body["upload_url"].(string), png, "image/png")
	if _, err := wired.Of(h.s).Faults.Queue(faults.ProviderUnavailable, "", "", 1); err != nil {
		t.Fatal(err)
	}
	a := h.finalize(h.key, r.body["asset_id"].(string))
	wantError(t, a, 502, "provider_unavailable")
	if a.body["error"].(map[string]any)["retryable"] != true {
		t.Error("provider_unavailable not retryable")
	}
	if a := h.finalize(h.key, r.body["asset_id"].(string)); a.code != 200 {
		t.Fatalf("after the fault: %d %s", a.code, a.raw)
	}
	// A finalized file answers from its stored status even with a fault queued.
	_, _ = wired.Of(h.s).Faults.Queue(faults.ProviderUnavailable, "", "", 1)
	if a := h.finalize(h.key, r.body["asset_id"].(string)); a.code != 200 {
		t.Fatalf("stored answer: %d %s", a.code, a.raw)
	}
}

func TestPendingCap(t *testing.T) {
	h := newUpHarness(t, false)
	ws := wired.Of(h.s).Registry.Create(workspace.CreateParams{Plan: workspace.PlanPro, Balance: 100})
	key := upKey(t, h.s, ws)
	var first, lastID string
	for i := 0; i < 50; i++ {
		id := h.mustReserve(key, "a.png", "image/png", 217).body["asset_id"].(string)
		if i == 0 {
			first = id
		}
		lastID = id
		h.clk.Advance(10 * time.Second)
	}
	wantError(t, h.reserve(key, "a.png", "image/png", 217), 429, "quota_exceeded")
	a := h.post(key, "/uploads/from-url", map[string]any{"url": "https://example.com/a.png"})
	wantError(t, a, 429, "quota_exceeded")
	if a.body["error"].(map[string]any)["retryable"] != false {
		t.Error("quota_exceeded retryable")
	}
	// Another workspace is not affected.
	h.mustReserve(h.key, "a.png", "image/png", 217)
	// The first reservation stops counting 15 minutes after it was made.
	h.clk.Advance(15*time.Minute - 50*10*time.Second)
	h.mustReserve(key, "a.png", "image/png", 217)
	wantError(t, h.reserve(key, "a.png", "image/png", 217), 429, "quota_exceeded")
	// A reservation spent by a refused finalize stops counting at once...
	last := h.mustGet(key, "/assets").ids("assets", "asset_id")
	if len(last) != 0 {
		t.Fatalf("reservations are listed: %v", last)
	}
	wantError(t, h.finalize(key, lastID), 400, "invalid_config") // its link expired without bytes
	r := h.mustReserve(key, "a.png", "image/png", 217)
	wantError(t, h.reserve(key, "a.png", "image/png", 217), 429, "quota_exceeded")
	// ...and so does a finalized one.
	_, png := fixtures.Get("image.png")
	h.put(r.body["upload_url"].(string), png, "image/png")
	if a := h.finalize(key, r.body["asset_id"].(string)); a.code != 200 {
		t.Fatalf("%d %s", a.code, a.raw)
	}
	h.mustReserve(key, "a.png", "image/png", 217)
	_ = first
}

// fixtureServer serves the fixture media files on a loopback listener for from-url:
//
//	/f/{name}             the file with its manifest content type (?type=X overrides, ?type=none sends none)
//	/r/{n}/{name}         n redirects, then /f/{name}
//	/to?u=URL             a redirect to URL
//	/big                  an image/png stream one byte over the image ceiling, without Content-Length
//	/missing              404
func fixtureServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /f/{name}", func(w http.ResponseWriter, r *http.Request) {
		f, b, err := fixtures.Lookup(r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		switch ct := r.URL.Query().Get("type"); ct {
		case "":
			w.Header().Set("Content-Type", f.ContentType)
		case "none":
			w.Header()["Content-Type"] = nil
		default:
			w.Header().Set("Content-Type", ct)
		}
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /r/{n}/{name}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		next := "/f/" + r.PathValue("name")
		if n > 1 {
			next = fmt.Sprintf("/r/%d/%s", n-1, r.PathValue("name"))
		}
		http.Redirect(w, r, next, http.StatusFound)
	})
	mux.HandleFunc("GET /to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		_, png := fixtures.Get("image.png")
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
		chunk := make([]byte, 1<<20)
		for left := 20971521 - len(png); left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFromURL(t *testing.T) {
	h := newUpHarness(t, true)
	base := fixtureServer(t)
	imp := func(body map[string]any) answer { return h.post(h.key, "/uploads/from-url", body) }

	for _, f := range fixtures.Files() {
		t.Run(f.Name, func(t *testing.T) {
			link := base + "/f/" + f.Name
			a := imp(map[string]any{"url": link})
			if f.Outcome == fixtures.OutcomeRefused {
				wantError(t, a, 400, "invalid_config", "field", "url")
				return
			}
			if a.code != 201 || a.hdr.Get("Location") != "" {
				t.Fatalf("%d %s (Location %q)", a.code, a.raw, a.hdr.Get("Location"))
			}
			b := a.body
			if b["source_url"] != link || b["kind"] != f.Kind || b["content_type"] != f.ContentType ||
				b["size_bytes"] != float64(f.SizeBytes) || b["scan_status"] != f.Outcome || b["usable"] != (f.Outcome == "clean") {
				t.Errorf("%s", a.raw)
			}
			checkMS(t, b["duration_ms"], f.DurationMS)
			id := b["asset_id"].(string)
			row := h.mustGet(h.key, "/assets/"+id).body["asset"].(map[string]any)
			if row["file_name"] != f.Name || row["source"] != "upload" || row["scan_status"] != f.Outcome {
				t.Errorf("asset %v", row)
			}
			fin := h.finalize(h.key, id)
			if fin.code != 200 || fin.body["scan_status"] != f.Outcome {
				t.Errorf("finalize of an imported file: %d %s", fin.code, fin.raw)
			}
		})
	}

	ok := func(name string, body map[string]any, check func(a answer)) {
		t.Run(name, func(t *testing.T) {
			a := imp(body)
			if a.code != 201 {
				t.Fatalf("%d %s", a.code, a.raw)
			}
			if check != nil {
				check(a)
			}
		})
	}
	refused := func(name string, status int, code, field string, body map[string]any) {
		t.Run(name, func(t *testing.T) {
			a := imp(body)
			wantError(t, a, status, code, "field", field)
		})
	}
	ok("filename given", map[string]any{"url": base + "/f/image.png", "filename": "product shot.png"}, func(a answer) {
		row := h.mustGet(h.key, "/assets/"+a.body["asset_id"].(string)).body["asset"].(map[string]any)
		if row["file_name"] != "product shot.png" {
			t.Errorf("file_name %v", row["file_name"])
		}
	})
	ok("content_type alias matches", map[string]any{"url": base + "/f/audio-bare.mp3", "content_type": "audio/mpeg"}, nil)
	ok("content_type given, none served", map[string]any{"url": base + "/f/image.jpg?type=none", "content_type": "image/jpeg"}, func(a answer) {
		if a.body["content_type"] != "image/jpeg" {
			t.Errorf("%s", a.raw)
		}
	})
	ok("octet-stream is sniffed", map[string]any{"url": base + "/f/audio.ogg?type=application/octet-stream"}, func(a answer) {
		if a.body["content_type"] != "audio/ogg" || a.body["kind"] != "audio" {
			t.Errorf("%s", a.raw)
		}
	})
	ok("3 redirects", map[string]any{"url": base + "/r/3/video.mp4"}, func(a answer) {
		if a.body["source_url"] != base+"/r/3/video.mp4" || a.body["kind"] != "video" {
			t.Errorf("%s", a.raw)
		}
		row := h.mustGet(h.key, "/assets/"+a.body["asset_id"].(string)).body["asset"].(map[string]any)
		if row["file_name"] != "video.mp4" {
			t.Errorf("default file_name %v", row["file_name"])
		}
	})
	refused("content_type differs", 400, "invalid_config", "content_type", map[string]any{"url": base + "/f/image.png", "content_type": "image/jpeg"})
	refused("content_type not accepted", 400, "invalid_config", "content_type", map[string]any{"url": base + "/f/image.png", "content_type": "image/tiff"})
	refused("served type not accepted", 400, "invalid_config", "url", map[string]any{"url": base + "/f/image.png?type=application/pdf"})
	refused("web page", 400, "invalid_config", "url", map[string]any{"url": base + "/f/page.html"})
	refused("sniffed web page", 400, "invalid_config", "url", map[string]any{"url": base + "/f/page.html?type=none"})
	refused("signature mismatch", 400, "invalid_config", "url", map[string]any{"url": base + "/f/wav-named.mp4"})
	refused("pixel bounds", 400, "invalid_config", "url", map[string]any{"url": base + "/f/too-wide-16385x10.png"})
	refused("over the ceiling", 400, "invalid_config", "url", map[string]any{"url": base + "/big"})
	refused("redirect to a private address", 400, "invalid_config", "url", map[string]any{"url": base + "/to?u=http://10.1.2.3/a.png"})
	refused("redirect to ftp", 400, "invalid_config", "url", map[string]any{"url": base + "/to?u=ftp://example.com/a.png"})
	refused("4 redirects", 502, "provider_unavailable", "", map[string]any{"url": base + "/r/4/image.png"})
	refused("404", 502, "provider_unavailable", "", map[string]any{"url": base + "/missing"})
	ln, _ := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String() + "/a.png"
	ln.Close()
	refused("connection refused", 502, "provider_unavailable", "", map[string]any{"url": closed})
	refused("unknown key", 400, "invalid_config", "bogus", map[string]any{"url": base + "/f/image.png", "bogus": 1})
	refused("no url", 400, "invalid_config", "url", map[string]any{"filename": "a.png"})
	refused("empty url", 400, "invalid_config", "url", map[string]any{"url": ""})
	refused("long url", 400, "invalid_config", "url", map[string]any{"url": base + "/f/image.png?" + strings.Repeat("a", 2049)})
	refused("long filename", 400, "invalid_config", "filename", map[string]any{"url": base + "/f/image.png", "filename": strings.Repeat("a", 256)})
	refused("empty filename", 400, "invalid_config", "filename", map[string]any{"url": base + "/f/image.png", "filename": ""})
	// Loopback is the only private range the flag admits.
	for _, u := range []string{"http://10.0.0.1/a.png", "http://169.254.169.254/latest", "http://[fe80::1]/a.png", "http://100.64.0.1/a.png",
		"http://0.0.0.0/a.png", "http://192.168.1.1/a.png", "http://[fd00::1]/a.png", "http://[::ffff:10.0.0.1]/a.png"} {
		refused("private "+u, 400, "invalid_config", "url", map[string]any{"url": u})
	}
	// Every import is listed.
	if got := len(h.mustGet(h.key, "/assets?limit=50").list("assets")); got < 20 {
		t.Errorf("%d assets listed after the imports", got)
	}
}

func TestFromURLRefusesLocalAddresses(t *testing.T) {
	h := newUpHarness(t, false)
	base := fixtureServer(t)
	for _, u := range []string{
		base + "/f/image.png", "http://127.0.0.1/a.png", "http://127.8.9.10:8080/a.png", "http://localhost/a.png",
		"http://LOCALHOST./a.png", "http://[::1]/a.png", "http://10.0.0.1/a.png", "http://169.254.169.254/", "http://[::]/a",
		"ftp://example.com/a.png", "file:///etc/passwd", "data:image/png;base64,AAAA", "https://user:pw@example.com/a.png",
		"https://user@example.com/a.png", "//example.com/a.png", "http:///a.png", "not a url at all",
	} {
		a := h.post(h.key, "/uploads/from-url", map[string]any{"url": u})
		wantError(t, a, 400, "invalid_config", "field", "url")
	}
}
