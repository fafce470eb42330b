package uploads

import (
	"context"
	"encoding/binary"
	"fmt"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// WAV synthesizes a PCM WAVE file (8 kHz, mono, 8 bit: 8 bytes a millisecond) lasting ms
// milliseconds, so a spec can upload audio of exactly the length it needs.
func WAV(ms int) []byte { return WAVSized(44 + 8*ms) }

// WAVSized synthesizes a PCM WAVE file as WAV does, size bytes long in all (header included),
// so a spec can upload audio of exactly the size it needs; it lasts (size-44)/8 milliseconds.
func WAVSized(size int) []byte {
	const rate = 8000
	n := size - 44
	b := make([]byte, 44+n)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], 1) // mono
	le.PutUint32(b[24:], rate)
	le.PutUint32(b[28:], rate) // byte rate
	le.PutUint16(b[32:], 1)    // block align
	le.PutUint16(b[34:], 8)    // bits a sample
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(n))
	for i := 0; i < n; i++ {
		b[44+i] = byte(128 + (i%16)*4) // a quiet sawtooth
	}
	return b
}

// WithMarkerBox returns a copy of an ISO BMFF file (MP4, QuickTime) with a top-level free box
// appended holding the scanner marker: a valid file of the same type whose bytes carry the marker.
func WithMarkerBox(b []byte) []byte {
	m, err := fixtures.Load()
	Expect(err).NotTo(HaveOccurred())
	Expect(m.ScannerMarker).NotTo(BeEmpty(), "the sample media manifest names the scanner marker")
	payload := []byte(" " + m.ScannerMarker + " ")
	box := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(box, uint32(8+len(payload)))
	copy(box[4:], "free")
	return append(append(append([]byte(nil), b...), box...), payload...)
}

// Sample returns a file of kind to upload: a synthesized WAV of ms milliseconds for audio, the
// sample MP4 for video, the sample PNG otherwise.
func Sample(kind string, ms int) (name, ct string, data []byte) {
	switch kind {
	case "audio":
		return "voice.wav", "audio/wav", WAV(ms)
	case "video":
		f, b := fixtures.Get("video.mp4")
		return f.Name, f.ContentType, b
	}
	f, b := fixtures.Get("image.png")
	return f.Name, f.ContentType, b
}

// Recording uploads seconds of audio as audio/wav and returns its asset id. It checks the
// service measured the length it was sent (within 50 ms).
func Recording(ctx context.Context, s *framework.Spec, c *framework.Client, seconds int) string {
	GinkgoHelper()
	id, fin := Clean(ctx, s, c, fmt.Sprintf("voice-%ds.wav", seconds), "audio/wav", WAV(seconds*1000))
	Expect(fin.String("kind")).To(Equal("audio"), fin.Describe())
	Expect(fin.Int("duration_ms")).To(BeNumerically("~", seconds*1000, 50), "the service measures the recording's length"+fin.Describe())
	return id
}

// Face uploads the sample PNG and returns its asset id.
func Face(ctx context.Context, s *framework.Spec, c *framework.Client) string {
	GinkgoHelper()
	f, data := fixtures.Get("image.png")
	id, _ := Clean(ctx, s, c, f.Name, f.ContentType, data)
	return id
}
