package framework

import "testing"

// TestAreaOf: a spec file's area is its name up to an underscore, so an area spread over several
// files (uploads.go, uploads_finalize.go) reports as one.
func TestAreaOf(t *testing.T) {
	for file, want := range map[string]string{
		"/src/conformance/internal/specs/uploads.go":          "uploads",
		"/src/conformance/internal/specs/uploads_finalize.go": "uploads",
		"specs/lists_generations.go":                          "lists",
		"uploadnames.go":                                      "uploadnames",
	} {
		if got := AreaOf(file); got != want {
			t.Errorf("AreaOf(%q) = %q, want %q", file, got, want)
		}
	}
}
