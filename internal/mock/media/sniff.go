package media

import (
	"bytes"
	"net/http"
)

// sniffed is the full result of looking at a signature.
type sniffed struct {
	ct   string // accepted (normalized) type, or a best guess for other bytes
	kind string // "" when ct is not accepted
	// webmOpen is true for WebM whose tracks could not be read: it may be
	// video/webm or audio/webm, and the declaration decides.
	webmOpen bool
}

// Sniff names the content type and kind of b from its real file signature.
//
// Accepted types come back normalized (audio/mpeg, audio/wav): JPEG
// (FF D8 FF), PNG, GIF87a/GIF89a, RIFF....WEBP (image/webp); an ISO BMFF
// ftyp box whose major or compatible brand is isom, iso2..iso6, mp41, mp42,
// avc1, dash, M4V (video/mp4) or qt (video/quicktime), and legacy
// QuickTime that starts with a moov/mdat/wide/free box; EBML with DocType
// webm: video/webm when it has a video track, audio/webm when it has only
// audio tracks, and video/webm when the tracks cannot be read (Inspect and
// Matches then let the declaration decide); RIFF....WAVE (audio/wav); an
// ID3v2 tag or two consecutive MPEG audio frame headers (audio/mpeg); OggS
// whose first packet is not a video codec (audio/ogg).
//
// For anything else kind is "" and contentType is a best guess:
// "video/x-matroska", "video/ogg", "audio/mp4", or else net/http's
// DetectContentType without parameters ("text/html", "text/plain",
// "application/pdf", "application/octet-stream"); empty input gives
// ("", "").
func Sniff(b []byte) (contentType string, kind string) {
	s := sniff(b)
	return s.ct, s.kind
}

func sniff(b []byte) sniffed {
	if len(b) == 0 {
		return sniffed{}
	}
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return sniffed{ct: "image/jpeg", kind: KindImage}
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return sniffed{ct: "image/png", kind: KindImage}
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return sniffed{ct: "image/gif", kind: KindImage}
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return sniffed{ct: "image/webp", kind: KindImage}
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return sniffed{ct: "audio/wav", kind: KindAudio}
	case bytes.HasPrefix(b, []byte("\x1A\x45\xDF\xA3")):
		return sniffEBML(b)
	case bytes.HasPrefix(b, []byte("OggS")):
		return sniffOgg(b)
	case bytes.HasPrefix(b, []byte("ID3")):
		return sniffed{ct: "audio/mpeg", kind: KindAudio}
	}
	if s, ok := sniffBMFF(b); ok {
		return s
	}
	if mp3Starts(b) {
		return sniffed{ct: "audio/mpeg", kind: KindAudio}
	}
	return sniffed{ct: Clean(http.DetectContentType(b))}
}

// Matches reports whether b really is the declared content type. The
// declaration is cleaned (parameters stripped, lowercased) and aliases
// fold (audio/mp3 = audio/mpeg, audio/x-wav = audio/wav). A type that is
// not accepted never matches. WebM whose tracks cannot be read matches both
// video/webm and audio/webm.
func Matches(declaredContentType string, b []byte) bool {
	return matches(Normalize(declaredContentType), sniff(b))
}

func matches(declared string, s sniffed) bool {
	if KindOf(declared) == "" || s.kind == "" {
		return false
	}
	if s.webmOpen && (declared == "video/webm" || declared == "audio/webm") {
		return true
	}
	return declared == s.ct
}

// mp3Starts reports whether b starts with an MPEG audio frame header that
// is followed by another one (or by the end of b), which rules out most
// text and random bytes.
func mp3Starts(b []byte) bool {
	h, ok := parseMPEGHeader(b)
	if !ok {
		return false
	}
	if h.size >= len(b) {
		return h.size == len(b)
	}
	_, ok = parseMPEGHeader(b[h.size:])
	return ok
}

// bmffVideoBrands are ftyp brands of MP4 video.
var bmffVideoBrands = map[string]bool{
	"isom": true, "iso2": true, "iso3": true, "iso4": true, "iso5": true, "iso6": true,
	"mp41": true, "mp42": true, "avc1": true, "dash": true, "M4V ": true, "M4VH": true, "M4VP": true,
	"mmp4": true, "msnv": true, "f4v ": true,
}

// sniffBMFF recognises ISO BMFF / QuickTime files by their first box.
func sniffBMFF(b []byte) (sniffed, bool) {
	if len(b) < 8 {
		return sniffed{}, false
	}
	size := be32(b)
	typ := string(b[4:8])
	switch typ {
	case "ftyp":
		if size < 16 || len(b) < 12 {
			return sniffed{}, false
		}
		end := min(int(size), len(b))
		major := string(b[8:12])
		brands := []string{major}
		for i := 16; i+4 <= end; i += 4 {
			brands = append(brands, string(b[i:i+4]))
		}
		switch {
		case major == "qt  ":
			return sniffed{ct: "video/quicktime", kind: KindVideo}, true
		case major == "M4A " || major == "M4B " || major == "M4P ":
			return sniffed{ct: "audio/mp4"}, true
		}
		for _, br := range brands {
			if bmffVideoBrands[br] {
				return sniffed{ct: "video/mp4", kind: KindVideo}, true
			}
		}
		for _, br := range brands {
			if br == "qt  " {
				return sniffed{ct: "video/quicktime", kind: KindVideo}, true
			}
		}
		return sniffed{ct: "application/mp4"}, true
	case "moov", "mdat", "wide", "free", "skip", "pnot":
		// Legacy QuickTime without ftyp: accept only when a moov box is
		// among the first top-level boxes, so random bytes do not pass.
		if _, ok := findBox(b, "moov"); ok {
			return sniffed{ct: "video/quicktime", kind: KindVideo}, true
		}
	}
	return sniffed{}, false
}
