// Package media inspects uploaded bytes the way upload finalize and
// from-url need: it names the real content type from the file signature,
// compares it with the declared one, reads and bounds image dimensions,
// fully decodes JPEG, PNG and GIF, probes audio and video durations and
// runs the deterministic content scanner.
//
// Everything is pure Go with no state: every function is safe for
// concurrent use and never modifies its input. Nothing here reads video
// or audio contents beyond container headers (the interface spec: "only
// images are content-checked").
//
// Failures are *Error values with a Code; compare with errors.Is against
// the Err* values (ErrSignatureMismatch, ErrPixelBounds, ...). The codes
// are the `reason` strings of fixtures/media/manifest.yaml.
package media

import (
	"github.com/mediaspec/mediaspec/internal/contract"
	"mime"
	"strings"
)

// Kinds.
const (
	KindImage = "image"
	KindVideo = "video"
	KindAudio = "audio"
)

// Upload size ceilings per kind, in bytes (interface spec, Limits).
const (
	MaxImageBytes = contract.MaxImageBytes
	MaxVideoBytes = contract.MaxVideoBytes
	MaxAudioBytes = contract.MaxAudioBytes
)

// Image pixel bounds checked at finalize (interface spec, Limits).
const (
	MaxImageSide   = contract.MaxImageSide
	MaxImagePixels = contract.MaxImagePixels
)

// ScanMarker is the deterministic scanner trigger: Scan flags an image
// whose bytes contain this ASCII string anywhere (a PNG tEXt chunk, a JPEG
// COM segment, a GIF comment extension, a WebP EXIF/XMP chunk...).
const ScanMarker = "MEDIASPEC-FLAG"

// accepted lists the accepted upload content types in interface-spec order,
// aliases included, with their kind.
var accepted = [...]struct{ ct, kind string }{
	{"image/jpeg", KindImage}, {"image/png", KindImage}, {"image/webp", KindImage}, {"image/gif", KindImage},
	{"video/mp4", KindVideo}, {"video/webm", KindVideo}, {"video/quicktime", KindVideo},
	{"audio/mpeg", KindAudio}, {"audio/mp3", KindAudio}, {"audio/wav", KindAudio}, {"audio/x-wav", KindAudio},
	{"audio/webm", KindAudio}, {"audio/ogg", KindAudio},
}

// Accepted returns the accepted upload content types in the interface
// spec's order, aliases (audio/mp3, audio/x-wav) included: the list a
// refusal names in error.accepted_content_types. The slice is new on every
// call.
func Accepted() []string {
	out := make([]string, len(accepted))
	for i, a := range accepted {
		out[i] = a.ct
	}
	return out
}

// Clean strips parameters and surrounding space from a content type and
// lowercases it ("IMAGE/PNG; charset=binary" -> "image/png"). Aliases are
// kept as written: this is the form a reservation echoes.
func Clean(contentType string) string {
	ct := strings.TrimSpace(contentType)
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// Normalize is Clean followed by alias folding: audio/mp3 becomes
// audio/mpeg and audio/x-wav becomes audio/wav. Two declarations name the
// same type exactly when their Normalize values are equal.
func Normalize(contentType string) string {
	ct := Clean(contentType)
	switch ct {
	case "audio/mp3":
		return "audio/mpeg"
	case "audio/x-wav":
		return "audio/wav"
	}
	return ct
}

// KindOf returns the kind of an accepted content type (after Clean), or ""
// when the type is not accepted.
func KindOf(contentType string) string {
	ct := Clean(contentType)
	for _, a := range accepted {
		if a.ct == ct {
			return a.kind
		}
	}
	return ""
}

// MaxBytes returns the upload size ceiling of a kind, or 0 for an unknown
// kind.
func MaxBytes(kind string) int64 {
	switch kind {
	case KindImage:
		return MaxImageBytes
	case KindVideo:
		return MaxVideoBytes
	case KindAudio:
		return MaxAudioBytes
	}
	return 0
}
