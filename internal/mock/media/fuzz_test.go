package media

import (
	"testing"

	fixturemedia "github.com/mediaspec/mediaspec/fixtures/media"
)

// FuzzSniffInspect: any bytes are sniffed and inspected without panicking, the same way twice.
func FuzzSniffInspect(f *testing.F) {
	for _, name := range []string{"image.png", "image.jpg", "audio.ogg", "video.mp4"} {
		if fx, b := fixturemedia.Get(name); b != nil {
			f.Add(fx.ContentType, b[:min(len(b), 4096)])
		}
	}
	f.Add("audio/wav", []byte("RIFF\x00\x00\x00\x00WAVEfmt "))
	f.Add("video/webm", []byte("\x1a\x45\xdf\xa3"))
	f.Add("audio/mpeg", []byte("ID3\x04\x00"))
	f.Fuzz(func(t *testing.T, declared string, b []byte) {
		ct, kind := Sniff(b)
		if ct2, kind2 := Sniff(b); ct2 != ct || kind2 != kind {
			t.Fatalf("Sniff is not stable: %q %q then %q %q", ct, kind, ct2, kind2)
		}
		_ = Matches(declared, b)
		_, _ = Inspect(declared, b)
	})
}
