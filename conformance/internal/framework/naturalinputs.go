package framework

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Natural inputs: what a real server's own content checks refuse, with no test mechanism at all,
// which its operator knows and declares in the profile (refused_prompt, flagged_upload), as the
// payment sandboxes document their test card numbers, but with no test mode: a prompt its
// moderation refuses, an image its upload scan flags. A spec of a moderation refusal or a flagged
// upload takes the declared input when the profile has it, else forces the outcome (Spec.Force:
// test-mode inputs or control's /faults), else skips naming the setting: its need is the profile
// tier.

// MaxFlaggedUploadBytes is the largest flagged_upload: the text's bound on an image upload.
const MaxFlaggedUploadBytes = 20971520

// flaggedTypes are the image types the text accepts, as net/http sniffs them from the bytes.
var flaggedTypes = []string{"image/png", "image/jpeg", "image/webp", "image/gif"}

// besideFile is path made relative to the directory of the profile file it was read from: a path
// the file gives relative to itself, so a profile and its flagged image move together.
func besideFile(path, file string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	joined := filepath.Join(filepath.Dir(file), path)
	if abs, err := filepath.Abs(joined); err == nil {
		return abs // the processes of a split run read it too, from the same directory or not
	}
	return joined
}

// checkFlaggedUpload refuses a flagged_upload that cannot be uploaded as the text's image: a file
// that cannot be read, is empty or larger than the image bound, or whose bytes are no PNG, JPEG,
// WebP or GIF.
func (c Config) checkFlaggedUpload() error {
	if c.FlaggedUpload == "" {
		return nil
	}
	_, _, err := readFlaggedUpload(c.FlaggedUpload)
	return err
}

// readFlaggedUpload reads the file at path and its content type, sniffed from its bytes.
func readFlaggedUpload(path string) (data []byte, contentType string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("conformance: flagged_upload: %v", err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxFlaggedUploadBytes+1))
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("conformance: flagged_upload: %v", err)
	case len(data) == 0:
		return nil, "", fmt.Errorf("conformance: flagged_upload %s is empty: want an image the server's content check flags", path)
	case len(data) > MaxFlaggedUploadBytes:
		return nil, "", fmt.Errorf("conformance: flagged_upload %s is larger than an image upload may be (%d bytes)", path, MaxFlaggedUploadBytes)
	}
	ct := http.DetectContentType(data)
	for _, t := range flaggedTypes {
		if ct == t {
			return data, ct, nil
		}
	}
	return nil, "", fmt.Errorf("conformance: flagged_upload %s is %s: want an image (%s) the server's content check flags",
		path, ct, strings.Join(flaggedTypes, ", "))
}

// CanForce reports whether the run can force an outcome (Spec.Force): it offers test-mode inputs
// or the control API.
func (s *Spec) CanForce() bool {
	caps := s.f.Capabilities()
	return caps.Control || caps.TestInputs
}

// RefusedPrompt is the profile's refused_prompt, a text the target's moderation refuses as a
// prompt or a script, and true; "" and false when the profile declares none.
func (s *Spec) RefusedPrompt() (string, bool) {
	return s.f.cfg.RefusedPrompt, s.f.cfg.RefusedPrompt != ""
}

// FlaggedUpload is the profile's flagged_upload, an image the target's content check flags: a
// file name to upload it as, its content type (sniffed from its bytes) and its bytes; ok is false
// when the profile declares none.
func (s *Spec) FlaggedUpload() (name, contentType string, data []byte, ok bool) {
	GinkgoHelper()
	path := s.f.cfg.FlaggedUpload
	if path == "" {
		return "", "", nil, false
	}
	data, ct, err := readFlaggedUpload(path)
	if err != nil {
		Fail(err.Error()) // Load checked it: the file changed during the run
	}
	return filepath.Base(path), ct, data, true
}

// LacksNaturalInput skips the spec, naming setting (refused_prompt or flagged_upload) and what it
// is, when the profile declares no such input and the run cannot force the outcome kind instead.
// A spec calls it before its path with neither.
func (s *Spec) LacksNaturalInput(setting, what, kind string) {
	GinkgoHelper()
	if s.CanForce() {
		return
	}
	SkipFor(NotDeclared(fmt.Sprintf("unsupported: needs %s: set %s in the profile (--%s), or offer test-mode inputs or the control API to force %s",
		what, setting, strings.ReplaceAll(setting, "_", "-"), kind)))
}

// HasFlaggedUpload reports whether the profile declares flagged_upload.
func (s *Spec) HasFlaggedUpload() bool { return s.f.cfg.FlaggedUpload != "" }
