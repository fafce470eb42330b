package media

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// TestDurationsAgreeWithFFprobe measures every probeable audio and video
// fixture with ffprobe and requires this package to agree within 50 ms.
func TestDurationsAgreeWithFFprobe(t *testing.T) {
	ffprobe, err := exec.LookPath("ffprobe")
	if err != nil {
		t.Skip("ffprobe is not on PATH: cannot cross-check durations (install ffmpeg to run this test)")
	}
	dir := t.TempDir()
	checked := 0
	for _, f := range fixtures.Files() {
		if (f.Kind != KindAudio && f.Kind != KindVideo) || f.DurationMS == nil {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			_, b := fixtures.Get(f.Name)
			path := filepath.Join(dir, f.Name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, ffprobe, "-v", "error", "-show_entries", "format=duration",
				"-of", "default=noprint_wrappers=1:nokey=1", path).Output()
			if err != nil {
				t.Fatalf("ffprobe: %v", err)
			}
			sec, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				t.Fatalf("ffprobe duration %q: %v", out, err)
			}
			want := int64(sec*1000 + 0.5)
			got, ok := Duration(f.SniffedType, b)
			if !ok {
				t.Fatalf("Duration not probed; ffprobe says %d ms", want)
			}
			if d := got - want; d < -50 || d > 50 {
				t.Errorf("Duration %d ms, ffprobe %d ms", got, want)
			}
			t.Logf("%s: %d ms (ffprobe %d ms)", f.Name, got, want)
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no audio or video fixture with a duration")
	}
}
