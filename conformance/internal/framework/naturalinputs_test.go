package framework

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// loadProfile loads the profile text written to dir/name.
func loadProfile(t *testing.T, dir, name, text string) (Config, error) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fl := RegisterFlags(fs)
	if err := fs.Parse([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	return Load(fl, func(string) string { return "" })
}

// flagged_upload is read relative to the profile file, and Load refuses one that is no image the
// text accepts, in one line naming the setting.
func TestFlaggedUploadBesideProfile(t *testing.T) {
	dir := t.TempDir()
	_, png := fixtures.Get("flagged.png")
	if err := os.WriteFile(filepath.Join(dir, "flag.png"), png, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an image"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "base_url: http://h\nkey: sk_live_a\nrefused_prompt: a BLOCKME poster\n"
	cfg, err := loadProfile(t, dir, "p.yaml", base+"flagged_upload: flag.png\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FlaggedUpload != filepath.Join(dir, "flag.png") || cfg.RefusedPrompt != "a BLOCKME poster" {
		t.Errorf("flagged_upload %q, refused_prompt %q", cfg.FlaggedUpload, cfg.RefusedPrompt)
	}
	if data, ct, err := readFlaggedUpload(cfg.FlaggedUpload); err != nil || ct != "image/png" || len(data) != len(png) {
		t.Errorf("read %d bytes of %s: %v", len(data), ct, err)
	}
	if d := cfg.Declared(); !strings.Contains(strings.Join(d, " "), "refused_prompt flagged_upload") {
		t.Errorf("declared %v", d)
	}
	for _, bad := range []string{"notes.txt", "missing.png"} {
		_, err := loadProfile(t, dir, "q.yaml", base+"flagged_upload: "+bad+"\n")
		if err == nil || !strings.Contains(err.Error(), "flagged_upload") || strings.Contains(err.Error(), "\n") {
			t.Errorf("flagged_upload %s: %v, want one line naming the setting", bad, err)
		}
	}
}
