// Package render is the mock's fake renderer: it turns a generation request
// into a real, small media file — PNG for images, WAV for audio, H.264 in MP4
// for video — or a text / JSON answer for text capabilities.
//
// Determinism: every byte of an Output is a function of the Request alone.
// The request's fields are hashed (SHA-256) into the key of a ChaCha8 stream,
// and all choices (colours, shapes, tone pitches, wording) are drawn from it
// with integer arithmetic only, so the same Request renders byte-identical
// output on every run, machine and architecture built from the same sources
// (PNG bytes also depend on the Go release's compress/flate); a different
// Seed, Text, Index or CapabilityID gives different bytes. Nothing reads the
// clock, no map is iterated and no goroutine is started.
//
// Bounds (requests beyond them are clamped, and the Output reports the size
// and length actually rendered, which the caller must use):
//
//   - image: each side 1..MaxImageSide (4096) pixels.
//   - video: even sides (an odd side is rounded up), each side at most
//     MaxVideoSide (4096), at most MaxVideoMacroblocks 16x16 macroblocks (the
//     H.264 level 5.1 frame size; 3840x2160 fits, larger frames are scaled
//     down keeping the aspect ratio); duration 1 ms..MaxVideoDuration (15 min),
//     VideoFPS (5) frames per second.
//   - audio: 8 kHz 16-bit mono PCM (AudioSampleRate; 16 KB per second, so the
//     longest clip, MaxAudioDuration = 15 min, is 14.4 MB); duration
//     1 ms..MaxAudioDuration.
//
// Render is safe for concurrent use: it keeps no state between calls.
package render

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Output kinds accepted in Request.Kind (the capability's output_kind).
const (
	KindImage = "image"
	KindVideo = "video"
	KindAudio = "audio"
	KindText  = "text"
)

// Bounds of rendered media; see the package comment.
const (
	MaxImageSide        = 4096
	MaxVideoSide        = 4096
	MaxVideoMacroblocks = 36864 // H.264 level 5.1 MaxFS
	MaxVideoDuration    = 15 * 60 * 1000
	MaxAudioDuration    = 15 * 60 * 1000
	VideoFPS            = 5
	AudioSampleRate     = 8000
	// DefaultListItems is the number of items of a JSON list answer (hooks)
	// when Request.Count is 0.
	DefaultListItems = 5
	// MaxListItems bounds Request.Count.
	MaxListItems = 50
)

// Content types of the outputs.
const (
	ContentTypePNG  = "image/png"
	ContentTypeMP4  = "video/mp4"
	ContentTypeWAV  = "audio/wav"
	ContentTypeText = "text/plain; charset=utf-8"
	ContentTypeJSON = "application/json"
)

// ErrInvalidRequest is wrapped by the error Render returns for a request it
// cannot render: an unknown kind, or a size or duration that is zero or
// negative. Render has no other expected failure (everything is encoded in
// memory); an encoder error would be returned wrapped, without it.
var ErrInvalidRequest = errors.New("render: invalid request")

// Request describes one output to render.
type Request struct {
	// Seed is the mock's seed; with the other fields it fixes every byte.
	Seed uint64
	// Kind is image, video, audio or text (the capability's output_kind).
	Kind string
	// Width and Height are the wanted size in pixels (image and video).
	Width, Height int
	// DurationMS is the wanted length in milliseconds (audio and video).
	DurationMS int64
	// Text is the prompt or script; it shapes the content (tones per word,
	// the wording of a text answer, and through the hash every pattern).
	Text string
	// Index is the output's index within its generation (0-based); it is
	// part of the file name and of the hash, so variants differ.
	Index int
	// JSON asks a text capability for a JSON answer as well (Output.Result).
	JSON bool
	// CapabilityID names the capability; it prefixes the file name and
	// chooses the shape of a text answer.
	CapabilityID string
	// Count is the number of items of a JSON list answer (e.g. hook_ideas'
	// `ideas`); 0 means DefaultListItems, larger than MaxListItems is clamped.
	// Other kinds ignore it.
	Count int
}

// Output is one rendered file or text answer.
type Output struct {
	// ContentType is the MIME type of Bytes (ContentTypePNG, ...).
	ContentType string
	// FileName is "<capability_id>_<index>.<ext>" with ext png, mp4, wav,
	// txt or json; the capability id is reduced to [a-z0-9_-] and is
	// "output" when empty.
	FileName string
	// Bytes is the file. For text it is Text (UTF-8).
	Bytes []byte
	// Width and Height are the rendered size (0 for audio and text).
	Width, Height int
	// DurationMS is the rendered length (0 for images and text).
	DurationMS int64
	// Text is the text answer (output_text): plain text, or for a JSON
	// request the JSON document itself. Empty for media.
	Text string
	// Result is the JSON answer (result); nil unless the request set JSON.
	Result json.RawMessage
}

// Render makes the output for req. The same req always gives an identical
// Output. A request it cannot render answers an error wrapping
// ErrInvalidRequest.
func Render(req Request) (Output, error) {
	switch req.Kind {
	case KindImage:
		return renderImage(req)
	case KindVideo:
		return renderVideo(req)
	case KindAudio:
		return renderAudio(req)
	case KindText:
		return renderText(req)
	default:
		return Output{}, fmt.Errorf("%w: unknown kind %q", ErrInvalidRequest, req.Kind)
	}
}

// FileName returns the file name Render gives the output of capabilityID at
// index with extension ext (without the dot).
func FileName(capabilityID string, index int, ext string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(capabilityID) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" {
		name = "output"
	}
	return name + "_" + strconv.Itoa(index) + "." + ext
}

// stream returns the ChaCha8 stream of req: its key is the SHA-256 of a
// length-prefixed encoding of every field, so no two distinct requests share
// a stream.
func stream(req Request) *rand.ChaCha8 {
	h := sha256.New()
	h.Write([]byte("mediaspec/mock/render/v1\x00"))
	var n [8]byte
	putInt := func(v uint64) {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	putStr := func(s string) {
		putInt(uint64(len(s)))
		h.Write([]byte(s))
	}
	putInt(req.Seed)
	putStr(req.Kind)
	putInt(uint64(int64(req.Width)))
	putInt(uint64(int64(req.Height)))
	putInt(uint64(req.DurationMS))
	putStr(req.Text)
	putInt(uint64(int64(req.Index)))
	if req.JSON {
		putInt(1)
	} else {
		putInt(0)
	}
	putStr(req.CapabilityID)
	putInt(uint64(int64(req.Count)))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.NewChaCha8(key)
}

// intn returns a number in [0, n) from r (n > 0). It uses only the
// ChaCha8 output, whose values are fixed by its specification, never a
// helper whose algorithm a Go release could change.
func intn(r *rand.ChaCha8, n int) int {
	return int(r.Uint64() % uint64(n))
}

// between returns a number in [lo, hi].
func between(r *rand.ChaCha8, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + intn(r, hi-lo+1)
}

// checkDuration validates a media duration and clamps it to limit.
func checkDuration(ms, limit int64) (int64, error) {
	if ms <= 0 {
		return 0, fmt.Errorf("%w: duration_ms must be positive, got %d", ErrInvalidRequest, ms)
	}
	return min(ms, limit), nil
}

// checkSize validates a width and height.
func checkSize(w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: width and height must be positive, got %dx%d", ErrInvalidRequest, w, h)
	}
	return nil
}
