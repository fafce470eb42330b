package api_test

import (
	"fmt"
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

func TestAssetListFiltersAndPaging(t *testing.T) {
	h := newUpHarness(t, false)
	var uploaded []string // oldest first
	for _, name := range []string{"image.png", "audio.wav", "video.mp4", "flagged.jpg"} {
		id, fin := h.upload(h.key, name)
		if fin.code != 200 {
			t.Fatal(fin.raw)
		}
		uploaded = append(uploaded, id)
		h.clk.Advance(time.Second)
	}
	// An output asset (as the jobs package records them) is listed with source output.
	ws := h.s.DefaultWorkspaceID()
	out := "ast_" + strings.Repeat("f", 32)
	wired.Of(h.s).Blob.Put(blob.Object{AssetID: out, WorkspaceID: ws, ContentType: "image/png", FileName: "out.png", Bytes: []byte("\x89PNG")})
	wired.Of(h.s).Assets.Put(assets.Asset{ID: out, WorkspaceID: ws, Kind: "image", Source: assets.SourceOutput, FileName: "out.png",
		ContentType: "image/png", SizeBytes: 4, Usable: true, GenerationID: "gen_" + strings.Repeat("1", 32), Listed: true, CreatedAt: h.clk.Now()})
	// A reservation is not listed.
	h.mustReserve(h.key, "r.png", "image/png", 5)

	all := h.mustGet(h.key, "/assets")
	want := []string{out, uploaded[3], uploaded[2], uploaded[1], uploaded[0]}
	if got := all.ids("assets", "asset_id"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("list %v, want newest first %v", got, want)
	}
	if all.body["next_cursor"] != nil {
		t.Errorf("next_cursor %v on the only page", all.body["next_cursor"])
	}
	for _, row := range all.list("assets") {
		if _, has := row["url"]; has {
			t.Errorf("a list row carries a link: %v", row)
		}
	}
	if row := all.list("assets")[0]; row["source"] != "output" || row["scan_status"] != nil || row["generation_id"] == nil {
		t.Errorf("output row %v", row)
	}
	for q, n := range map[string]int{
		"?kind=image": 3, "?kind=audio": 1, "?kind=video": 1, "?kind=text": 0, "?source=upload": 4,
		"?source=output": 1, "?kind=image&source=upload": 2, "?kind=&source=": 5,
	} {
		if got := h.mustGet(h.key, "/assets"+q).list("assets"); len(got) != n {
			t.Errorf("%s: %d rows, want %d", q, len(got), n)
		}
	}
	wantError(t, h.get(h.key, "/assets?kind=pdf"), 400, "invalid_config", "field", "kind")
	wantError(t, h.get(h.key, "/assets?source=library"), 400, "invalid_config", "field", "source")

	// Paging: limit 2 walks 2+2+1 with a cursor.
	var walked []string
	cursor := ""
	for i := 0; i < 5; i++ {
		p := h.mustGet(h.key, "/assets?limit=2&cursor="+cursor)
		walked = append(walked, p.ids("assets", "asset_id")...)
		c, ok := nextCursor(p)
		if !ok {
			break
		}
		cursor = c
	}
	if fmt.Sprint(walked) != fmt.Sprint(want) {
		t.Errorf("walked %v", walked)
	}
	// Read key allowed; the download of the output.
	rws, _ := wired.Of(h.s).Registry.Get(ws)
	read := h.newKey(rws, workspace.ScopeRead)
	h.mustGet(read, "/assets")
	if d := h.mustGet(read, "/assets/"+out+"/download"); d.body["file_name"] != "out.png" {
		t.Errorf("download %s", d.raw)
	}
	// A file whose bytes are gone has no link and its download is 404.
	wired.Of(h.s).Blob.Delete(out)
	if a := h.mustGet(h.key, "/assets/"+out); a.body["asset"].(map[string]any)["url"] != nil {
		t.Errorf("link to a gone file: %s", a.raw)
	}
	wantError(t, h.get(h.key, "/assets/"+out+"/download"), 404, "not_found")
	wantError(t, h.get(h.key, "/assets/ast_"+strings.Repeat("0", 32)), 404, "not_found")
}

func TestAssetListLimitClamp(t *testing.T) {
	h := newUpHarness(t, false)
	ws := h.s.DefaultWorkspaceID()
	for i := 0; i < 60; i++ {
		wired.Of(h.s).Assets.Put(assets.Asset{ID: fmt.Sprintf("ast_%032x", i), WorkspaceID: ws, Kind: "text", Source: assets.SourceOutput,
			SizeBytes: 3, Usable: true, GenerationID: fmt.Sprintf("gen_%032x", i), Listed: true, CreatedAt: h.clk.Now()})
	}
	for q, n := range map[string]int{"": 25, "?limit=0": 25, "?limit=abc": 25, "?limit=10": 10, "?limit=51": 50, "?limit=500": 50} {
		if got := h.mustGet(h.key, "/assets"+q).list("assets"); len(got) != n {
			t.Errorf("%q: %d rows, want %d", q, len(got), n)
		}
	}
}

// Estimates see uploads through the catalogue's AssetLookup.
func TestEstimateSeesUploads(t *testing.T) {
	h := newUpHarness(t, false)
	est := func(key, id string) answer {
		return h.post(key, "/estimates", map[string]any{"capability_id": "auto_caption", "config": map[string]any{"source_video": []string{id}}})
	}
	id, fin := h.upload(h.key, "video.mp4")
	if fin.code != 200 {
		t.Fatal(fin.raw)
	}
	a := est(h.key, id)
	if a.code != 200 || a.body["seconds"] != float64(1) {
		t.Fatalf("estimate of a 1 s video: %d %s", a.code, a.raw)
	}
	reserved := h.mustReserve(h.key, "v.mp4", "video/mp4", 10).body["asset_id"].(string)
	a = est(h.key, reserved)
	wantError(t, a, 409, "input_not_ready")
	if ids := a.body["error"].(map[string]any)["asset_ids"].([]any); len(ids) != 1 || ids[0] != reserved {
		t.Errorf("asset_ids %v", ids)
	}
	flagged, fin := h.upload(h.key, "flagged.png")
	if fin.body["scan_status"] != "flagged" {
		t.Fatal(fin.raw)
	}
	a = est(h.key, flagged)
	wantError(t, a, 422, "moderation_blocked")
	if ids := a.body["error"].(map[string]any)["asset_ids"].([]any); len(ids) != 1 || ids[0] != flagged {
		t.Errorf("asset_ids %v", ids)
	}
	other := upKey(t, h.s, wired.Of(h.s).Registry.Create(workspace.CreateParams{Plan: workspace.PlanPro, Balance: 100}))
	a = est(other, id)
	wantError(t, a, 404, "not_found")
	if ids := a.body["error"].(map[string]any)["asset_ids"].([]any); len(ids) != 1 || ids[0] != id {
		t.Errorf("asset_ids %v", ids)
	}
	// A clean audio file is ready with its measured length.
	audio, _ := h.upload(h.key, "audio.wav")
	if got, ok := wired.Of(h.s).Uploads.LookupUpload(h.s.DefaultWorkspaceID(), audio); !ok || !got.Ready || got.Kind != "audio" || got.DurationMS == nil || *got.DurationMS != 2000 {
		t.Errorf("lookup %+v", got)
	}
}
