package media

import "bytes"

// Scan is the deterministic content scanner: it flags an image (JPEG, PNG,
// GIF or WebP by signature) whose bytes contain ScanMarker. Video, audio and
// anything else are never flagged, whatever they contain ("only images are
// content-checked").
func Scan(b []byte) (flagged bool) {
	_, kind := Sniff(b)
	return kind == KindImage && bytes.Contains(b, []byte(ScanMarker))
}

// Result is what an inspection measured from the bytes.
type Result struct {
	// ContentType is the real type (normalized: audio/mpeg, audio/wav).
	ContentType string
	// Kind is measured from the bytes: image, video or audio.
	Kind string
	// Width and Height in pixels: images, and videos whose container
	// header names them (MP4/QuickTime tkhd, WebM PixelWidth/Height);
	// 0 otherwise.
	Width, Height int
	// DurationMS is the probed duration of audio and video; nil for
	// images and when the file cannot be probed (duration_ms null).
	DurationMS *int64
	// Flagged is the scanner verdict (images only; see Scan).
	Flagged bool
}

// ScanStatus is the finalize scan_status of the result: "flagged" or
// "clean".
func (r Result) ScanStatus() string {
	if r.Flagged {
		return "flagged"
	}
	return "clean"
}

// Usable reports whether the file may be used: only clean files are.
func (r Result) Usable() bool { return !r.Flagged }

// Inspect runs every finalize check on b, declared as declared (from-url
// with no content_type passes ""; the sniffed type is then used):
//
//   - ErrEmpty: no bytes.
//   - ErrNotAccepted: declared is not an accepted type; or nothing was
//     declared and the bytes are no accepted type (a web page).
//   - ErrSignatureMismatch: the real signature is not the declared type
//     (aliases fold: audio/mp3 = audio/mpeg, audio/x-wav = audio/wav;
//     WebM whose tracks cannot be read takes the declared kind).
//   - images: CheckImage (ErrPixelBounds, ErrTruncated, ErrCorrupt), then
//     Scan decides Flagged.
//   - audio and video: contents are not checked; Duration fills
//     DurationMS when it can be probed.
//
// A refusal (any error) means the service deletes the file and spends the
// reservation (400 invalid_config); a flagged image is not an error. The
// size ceilings per kind are the caller's (MaxBytes).
func Inspect(declared string, b []byte) (Result, error) {
	if len(b) == 0 {
		return Result{}, ErrEmpty
	}
	decl := Normalize(declared)
	if decl != "" && KindOf(decl) == "" {
		return Result{}, newErr(CodeNotAccepted, nil, "%s is not an accepted upload type", decl)
	}
	s := sniff(b)
	switch {
	case s.kind == "" && decl == "":
		return Result{}, newErr(CodeNotAccepted, nil, "bytes are %s, not an accepted upload type", orUnknown(s.ct))
	case decl != "" && !matches(decl, s):
		return Result{}, newErr(CodeSignatureMismatch, nil, "declared %s, bytes are %s", decl, orUnknown(s.ct))
	}
	r := Result{ContentType: s.ct, Kind: s.kind}
	if s.webmOpen && decl != "" {
		r.ContentType, r.Kind = decl, KindOf(decl)
	}
	switch r.Kind {
	case KindImage:
		w, h, err := CheckImage(r.ContentType, b)
		if err != nil {
			return Result{}, err
		}
		r.Width, r.Height = w, h
		r.Flagged = Scan(b)
	case KindVideo, KindAudio:
		if ms, ok := Duration(r.ContentType, b); ok {
			r.DurationMS = &ms
		}
		r.Width, r.Height = videoSize(r.ContentType, b)
	}
	return r, nil
}

// videoSize reads the pixel size a video container names (0, 0 when none
// or for audio).
func videoSize(ct string, b []byte) (w, h int) {
	switch ct {
	case "video/mp4", "video/quicktime":
		_, w, h, _ = bmffInfo(b)
	case "video/webm":
		info, _ := parseEBML(b)
		w, h = info.w, info.h
	}
	return w, h
}
