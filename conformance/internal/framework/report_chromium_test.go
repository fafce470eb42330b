package framework

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/report"
)

// failingResults is a run like one against a wrong server: many specs over several areas, one root
// cause repeated over many of them, each failed spec with a 100-call transcript.
func failingResults(t *testing.T) report.Results {
	t.Helper()
	f := testFramework(t)
	call := "--- call %d of 100 ---\n> GET http://127.0.0.1:4010/api/v1/generations?limit=1&cursor=c%d\n> Authorization: Bearer sk_live_[REDACTED]\n< 200 OK\n< Content-Type: application/json\n<\n< {\"ok\":true,\"generations\":[{\"generation_id\":\"gen_%032d\",\"batch_group_id\":17,\"status\":\"rendering\"}],\"next_cursor\":\"c%d\"}\n"
	var transcript strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&transcript, call, i, i, i, i+1)
	}
	var reports []types.SpecReport
	areas := []string{"auth", "basics", "generations", "lists", "webhooks", "deliveries", "submit", "ledger"}
	for i := 0; i < 300; i++ {
		area := areas[i%len(areas)]
		ids := []string{"AUTH-001", "HEALTH-001", "HEALTH-002"}
		state, msg := types.SpecStatePassed, ""
		if i%3 == 0 {
			state = types.SpecStateFailed
			msg = "a list row's batch_group_id is a string or null\nExpected\n    <float64>: 17\nto be a string\n> GET http://127.0.0.1:4010/api/v1/generations\n< 200 OK"
		}
		if i%7 == 0 {
			state, msg = types.SpecStateSkipped, "unsupported: needs the control API: no --control-url given"
		}
		r := itReport(fmt.Sprintf("%s: a spec whose text is long enough to wrap in a narrow column, number %d of the run", area, i), state, msg, ids[i%len(ids)])
		r.LeafNodeLocation = types.CodeLocation{FileName: "/src/conformance/specs/" + area + ".go", LineNumber: 10 + i}
		if state == types.SpecStateFailed {
			r.ReportEntries = types.ReportEntries{{Name: TranscriptEntry, Value: types.WrapEntryValue(transcript.String())}}
		}
		reports = append(reports, r)
	}
	res := BuildResults(f.catalogue, types.Report{SuiteDescription: "mediaspec conformance", SpecReports: reports})
	res.Run = report.RunInfo{Target: "http://127.0.0.1:4010/api/v1", Version: "v0.0.0-test", Contract: "1.2.0",
		Started: time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC), Duration: 83 * time.Second, Mode: "out of process, keys only"}
	return res
}

// The HTML report of a failing run stays under 2 MB, and rendered by headless Chromium (Debian's
// chromium; the test skips without it) it is a page a person can read: the screenshot is kept in
// reports/ for a person to look at (MEDIASPEC_REPORT_SHOT names another path).
func TestHTMLReportAsAPicture(t *testing.T) {
	var html bytes.Buffer
	if err := failingResults(t).WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if html.Len() > 2<<20 {
		t.Errorf("the HTML report of a failing run is %d bytes, want at most 2 MB", html.Len())
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian: apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("MEDIASPEC_REPORT_SHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1400,1800", "--hide-scrollbars",
		"--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	fh, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	// A page that rendered has ink on it: count pixels that are not white.
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
		}
	}
	if ink < 1000 {
		t.Errorf("the rendered report is nearly blank (%d inked samples)", ink)
	}
	// Nothing runs off the page: the widest element fits the window (wrapped detail).
	t.Logf("screenshot: %s (%dx%d), HTML %d bytes", shot, b.Dx(), b.Dy(), html.Len())
}
