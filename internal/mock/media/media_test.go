package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// refusedBySignature are manifest reasons that Matches must also refuse.
var refusedBySignature = map[string]bool{"signature_mismatch": true, "not_accepted": true, "empty": true}

// TestFixtures runs every fixture of fixtures/media through every function
// and compares with the manifest.
func TestFixtures(t *testing.T) {
	m, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	if m.ScannerMarker != ScanMarker {
		t.Fatalf("manifest scanner_marker %q, package ScanMarker %q", m.ScannerMarker, ScanMarker)
	}
	tol := int64(m.DurationToleranceMS)
	for _, f := range m.Files {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			_, b := fixtures.Get(f.Name)

			ct, kind := Sniff(b)
			if ct != f.SniffedType || kind != f.Kind {
				t.Errorf("Sniff = %q, %q; manifest %q, %q", ct, kind, f.SniffedType, f.Kind)
			}
			wantMatch := !(f.Outcome == fixtures.OutcomeRefused && refusedBySignature[f.Reason])
			if got := Matches(f.ContentType, b); got != wantMatch {
				t.Errorf("Matches(%q) = %v, want %v", f.ContentType, got, wantMatch)
			}

			res, err := Inspect(f.ContentType, b)
			switch f.Outcome {
			case fixtures.OutcomeRefused:
				if got := CodeOf(err); string(got) != f.Reason {
					t.Errorf("Inspect error %v (code %q), want reason %q", err, got, f.Reason)
				}
			case fixtures.OutcomeClean, fixtures.OutcomeFlagged:
				if err != nil {
					t.Fatalf("Inspect: %v", err)
				}
				if res.Kind != f.Kind || res.ContentType != f.SniffedType {
					t.Errorf("Inspect kind/type %q %q, want %q %q", res.Kind, res.ContentType, f.Kind, f.SniffedType)
				}
				if want := f.Outcome == fixtures.OutcomeFlagged; res.Flagged != want || res.Usable() == want || res.ScanStatus() != f.Outcome {
					t.Errorf("Inspect flagged=%v usable=%v status=%s, want outcome %s", res.Flagged, res.Usable(), res.ScanStatus(), f.Outcome)
				}
				if res.Width != f.Width || res.Height != f.Height {
					t.Errorf("Inspect size %dx%d, want %dx%d", res.Width, res.Height, f.Width, f.Height)
				}
				checkDuration(t, "Inspect", res.DurationMS, f.DurationMS, tol)
			default:
				t.Fatalf("unknown outcome %q", f.Outcome)
			}

			if got := Scan(b); got != (f.Outcome == fixtures.OutcomeFlagged) {
				t.Errorf("Scan = %v for outcome %s", got, f.Outcome)
			}

			if f.Kind == KindImage {
				format, w, h, err := ImageConfig(b)
				if err != nil || "image/"+format != f.SniffedType || w != f.Width || h != f.Height {
					t.Errorf("ImageConfig = %s %dx%d %v; want %s %dx%d", format, w, h, err, f.SniffedType, f.Width, f.Height)
				}
				_, _, err = CheckImage(f.ContentType, b)
				if f.Outcome == fixtures.OutcomeRefused {
					if string(CodeOf(err)) != f.Reason {
						t.Errorf("CheckImage error %v, want reason %s", err, f.Reason)
					}
				} else if err != nil {
					t.Errorf("CheckImage: %v", err)
				}
				if _, ok := Duration(f.SniffedType, b); ok {
					t.Errorf("Duration of an image is ok")
				}
			}

			if f.Kind == KindAudio || f.Kind == KindVideo {
				ms, ok := Duration(f.SniffedType, b)
				var got *int64
				if ok {
					got = &ms
				}
				checkDuration(t, "Duration", got, f.DurationMS, tol)
				// "" sniffs the type first.
				if ms2, ok2 := Duration("", b); ms2 != ms || ok2 != ok {
					t.Errorf(`Duration("") = %d %v, Duration(%q) = %d %v`, ms2, ok2, f.SniffedType, ms, ok)
				}
				if _, _, err := CheckImage("", b); !errors.Is(err, ErrNotAccepted) {
					t.Errorf("CheckImage of %s: %v, want not_accepted", f.Kind, err)
				}
			}
		})
	}
}

func checkDuration(t *testing.T, what string, got, want *int64, tol int64) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s duration %d ms, want none", what, *got)
	case want != nil && got == nil:
		t.Errorf("%s duration none, want %d ms", what, *want)
	case want != nil && (*got < *want-tol || *got > *want+tol):
		t.Errorf("%s duration %d ms, want %d ± %d", what, *got, *want, tol)
	}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	_, b := fixtures.Get(name)
	return b
}

// pngHeader is a PNG signature and IHDR (8-bit grey) with no image data.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	c := binary.BigEndian.AppendUint32(nil, 13)
	c = append(c, "IHDR"...)
	c = binary.BigEndian.AppendUint32(c, w)
	c = binary.BigEndian.AppendUint32(c, h)
	c = append(c, 8, 0, 0, 0, 0)
	c = binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
	return append(b, c...)
}

func TestCheckBoundsEdges(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want error
	}{
		{16384, 1, nil},
		{1, 16384, nil},
		{16384, 2441, nil}, // 39,993,344 px
		{16385, 1, ErrPixelBounds},
		{1, 16385, ErrPixelBounds},
		{8000, 5000, nil},  // exactly 40,000,000
		{10000, 4000, nil}, // exactly 40,000,000
		{10000, 4001, ErrPixelBounds},
		{6325, 6325, ErrPixelBounds}, // 40,005,625
		{0, 10, ErrCorrupt},
		{10, -1, ErrCorrupt},
	} {
		if err := CheckBounds(tc.w, tc.h); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("CheckBounds(%d, %d) = %v, want %v", tc.w, tc.h, err, tc.want)
		}
	}
}

func TestCheckImageHeaderOnly(t *testing.T) {
	// Bounds are checked from the header before any pixel data is read.
	for _, tc := range []struct {
		w, h uint32
		want Code
	}{
		{16385, 10, CodePixelBounds},
		{10, 16385, CodePixelBounds},
		{8000, 6000, CodePixelBounds},
		{100000, 100000, CodePixelBounds},
		{16384, 10, CodeTruncated}, // within bounds, so it is decoded, and the data is missing
		{8000, 5000, CodeTruncated},
	} {
		b := pngHeader(tc.w, tc.h)
		format, w, h, err := ImageConfig(b)
		if err != nil || format != "png" || w != int(tc.w) || h != int(tc.h) {
			t.Errorf("ImageConfig(%dx%d header) = %s %dx%d %v", tc.w, tc.h, format, w, h, err)
		}
		if _, _, err := CheckImage("image/png", b); CodeOf(err) != tc.want {
			t.Errorf("CheckImage(%dx%d header) = %v, want %s", tc.w, tc.h, err, tc.want)
		}
	}
	// A header cut inside IHDR.
	if _, _, _, err := ImageConfig(pngHeader(64, 48)[:20]); !errors.Is(err, ErrTruncated) {
		t.Errorf("ImageConfig(cut IHDR) = %v, want truncated", err)
	}
}

func TestMatchesDeclarations(t *testing.T) {
	png := fixture(t, "image.png")
	mp3 := fixture(t, "audio.mp3")
	bare := fixture(t, "audio-bare.mp3")
	wav := fixture(t, "audio.wav")
	vwebm := fixture(t, "video.webm")
	awebm := fixture(t, "audio.webm")
	for _, tc := range []struct {
		declared string
		b        []byte
		want     bool
	}{
		{"image/png", png, true},
		{"IMAGE/PNG; charset=binary", png, true},
		{"  image/png ", png, true},
		{"image/jpeg", png, false},
		{"image/webp", png, false},
		{"video/mp4", png, false},
		{"image/x-png", png, false}, // not accepted
		{"", png, false},
		{"audio/mpeg", mp3, true},
		{"audio/mp3", mp3, true},
		{"Audio/MP3", bare, true},
		{"audio/wav", mp3, false},
		{"audio/wav", wav, true},
		{"audio/x-wav", wav, true},
		{"audio/wave", wav, false}, // not accepted
		{"video/webm", vwebm, true},
		{"audio/webm", vwebm, false}, // has a video track
		{"audio/webm", awebm, true},
		{"video/webm", awebm, false}, // audio only
		{"video/quicktime", fixture(t, "video.mp4"), false},
		{"video/mp4", fixture(t, "video.mov"), false},
		{"text/html", fixture(t, "page.html"), false},
	} {
		if got := Matches(tc.declared, tc.b); got != tc.want {
			t.Errorf("Matches(%q) = %v, want %v", tc.declared, got, tc.want)
		}
	}
}

func TestWebMWithUnreadableTracksTakesDeclaredKind(t *testing.T) {
	b := fixture(t, "audio.webm")
	info, _ := parseEBML(b)
	if !info.tracksRead || !info.audio || info.video {
		t.Fatalf("audio.webm tracks: %+v", info)
	}
	// Cut inside the Tracks element: the kind can no longer be read. The
	// first occurrence of the Tracks id is in the SeekHead, the second is
	// the element.
	id := []byte{0x16, 0x54, 0xAE, 0x6B}
	first := bytes.Index(b, id)
	i := bytes.Index(b[first+4:], id) + first + 4
	if first < 0 || i < first+4 {
		t.Fatal("no Tracks element in audio.webm")
	}
	cut := b[:i+12]
	if ct, kind := Sniff(cut); ct != "video/webm" || kind != KindVideo {
		t.Errorf("Sniff(cut webm) = %s %s, want video/webm video", ct, kind)
	}
	for _, decl := range []string{"audio/webm", "video/webm"} {
		if !Matches(decl, cut) {
			t.Errorf("Matches(%s, cut webm) = false", decl)
		}
		r, err := Inspect(decl, cut)
		if err != nil || r.ContentType != decl || r.Kind != KindOf(decl) {
			t.Errorf("Inspect(%s, cut webm) = %+v, %v", decl, r, err)
		}
		if r.DurationMS == nil || *r.DurationMS != 2008 {
			t.Errorf("Inspect(%s, cut webm) duration %v, want 2008 (Info precedes Tracks)", decl, r.DurationMS)
		}
	}
}

func TestEmptyInput(t *testing.T) {
	for _, b := range [][]byte{nil, {}} {
		if ct, kind := Sniff(b); ct != "" || kind != "" {
			t.Errorf("Sniff(empty) = %q %q", ct, kind)
		}
		if Matches("image/png", b) {
			t.Error("Matches(empty)")
		}
		if _, _, _, err := ImageConfig(b); !errors.Is(err, ErrEmpty) {
			t.Errorf("ImageConfig(empty) = %v", err)
		}
		if _, _, err := CheckImage("image/png", b); !errors.Is(err, ErrEmpty) {
			t.Errorf("CheckImage(empty) = %v", err)
		}
		for _, ct := range Accepted() {
			if _, ok := Duration(ct, b); ok {
				t.Errorf("Duration(%s, empty) ok", ct)
			}
		}
		if Scan(b) {
			t.Error("Scan(empty)")
		}
		if _, err := Inspect("audio/wav", b); !errors.Is(err, ErrEmpty) {
			t.Errorf("Inspect(empty) = %v", err)
		}
	}
}

// TestRandomBytes: random input never panics, is never accepted as the
// declared image type, and a random-bytes "WAV" or "MP3" is refused.
func TestRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		b := make([]byte, 1+r.IntN(4096))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		ct, kind := Sniff(b)
		if kind != "" {
			t.Errorf("random %d sniffed as %s %s", i, ct, kind)
		}
		for _, decl := range []string{"image/png", "image/webp", "audio/wav", "audio/mpeg", "video/mp4", "audio/ogg", "video/webm"} {
			if _, err := Inspect(decl, b); !errors.Is(err, ErrSignatureMismatch) {
				t.Errorf("Inspect(%s, random %d) = %v, want signature_mismatch", decl, i, err)
			}
		}
		if _, err := Inspect("", b); !errors.Is(err, ErrNotAccepted) {
			t.Errorf(`Inspect("", random %d) = %v, want not_accepted`, i, err)
		}
		for _, c := range Accepted() {
			Duration(c, b) // must not panic
		}
		if Scan(append(b, ScanMarker...)) {
			t.Errorf("Scan flagged random bytes %d", i)
		}
	}
}

// TestPrefixesNeverPanic cuts every small fixture at many points: every
// function must answer without panicking, and a cut image is never clean
// unless its data survived.
func TestPrefixesNeverPanic(t *testing.T) {
	for _, f := range fixtures.Files() {
		if f.SizeBytes > 20000 || f.Width*f.Height > 1<<20 {
			continue
		}
		_, b := fixtures.Get(f.Name)
		step := max(1, len(b)/97)
		for n := 0; n < len(b); n += step {
			p := b[:n]
			Sniff(p)
			Matches(f.ContentType, p)
			ImageConfig(p)
			CheckImage(f.ContentType, p)
			Duration(f.SniffedType, p)
			Scan(p)
			r, err := Inspect(f.ContentType, p)
			if err == nil && r.Kind == KindImage && f.Outcome == fixtures.OutcomeClean && f.SniffedType != "image/jpeg" && n < len(b)-16 {
				// JPEG decoders tolerate a missing tail; the others must refuse.
				t.Errorf("%s cut to %d/%d bytes passed Inspect", f.Name, n, len(b))
			}
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"IMAGE/PNG; charset=binary": "image/png",
		"audio/mp3":                 "audio/mpeg",
		"Audio/X-WAV":               "audio/wav",
		" video/webm ":              "video/webm",
		"text/html; charset=utf-8":  "text/html",
		"":                          "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Clean("AUDIO/MP3;x=1"); got != "audio/mp3" {
		t.Errorf("Clean kept %q", got)
	}
	want := []string{"image/jpeg", "image/png", "image/webp", "image/gif", "video/mp4", "video/webm", "video/quicktime",
		"audio/mpeg", "audio/mp3", "audio/wav", "audio/x-wav", "audio/webm", "audio/ogg"}
	if got := Accepted(); !slices.Equal(got, want) {
		t.Errorf("Accepted() = %v", got)
	}
	for _, ct := range want {
		k := KindOf(ct)
		if k == "" || ct[:len(k)] != k {
			t.Errorf("KindOf(%s) = %q", ct, k)
		}
	}
	if KindOf("application/pdf") != "" || KindOf("audio/flac") != "" {
		t.Error("KindOf accepts an unaccepted type")
	}
	if MaxBytes(KindImage) != 20971520 || MaxBytes(KindVideo) != 104857600 || MaxBytes(KindAudio) != 26214400 || MaxBytes("text") != 0 {
		t.Error("MaxBytes ceilings differ from the interface spec")
	}
}

func TestInspectRefusesUnacceptedDeclaration(t *testing.T) {
	if _, err := Inspect("image/bmp", fixture(t, "image.png")); !errors.Is(err, ErrNotAccepted) {
		t.Errorf("Inspect(image/bmp) = %v", err)
	}
	if _, err := Inspect("", fixture(t, "page.html")); !errors.Is(err, ErrNotAccepted) {
		t.Errorf(`Inspect("", page.html) = %v`, err)
	}
	// from-url with no declared type takes the sniffed one.
	r, err := Inspect("", fixture(t, "audio.ogg"))
	if err != nil || r.ContentType != "audio/ogg" || r.Kind != KindAudio || r.DurationMS == nil {
		t.Errorf(`Inspect("", audio.ogg) = %+v, %v`, r, err)
	}
	if _, _, err := CheckImage("audio/wav", fixture(t, "image.png")); !errors.Is(err, ErrNotAccepted) {
		t.Errorf("CheckImage(audio/wav) = %v", err)
	}
	if _, _, err := CheckImage("image/png", fixture(t, "audio.wav")); !errors.Is(err, ErrSignatureMismatch) {
		t.Errorf("CheckImage(image/png, wav) = %v", err)
	}
}

func TestErrorType(t *testing.T) {
	_, err := Inspect("image/png", fixture(t, "too-wide-16385x10.png"))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodePixelBounds || e.Detail == "" {
		t.Fatalf("error %#v", err)
	}
	if !errors.Is(err, ErrPixelBounds) || errors.Is(err, ErrTruncated) {
		t.Error("errors.Is compares codes")
	}
	_, err = Inspect("image/png", fixture(t, "truncated.png"))
	if !errors.Is(err, ErrTruncated) || CodeOf(err) != CodeTruncated {
		t.Errorf("truncated.png: %v", err)
	}
	if CodeOf(errors.New("other")) != "" || CodeOf(nil) != "" {
		t.Error("CodeOf of a foreign error")
	}
	if got := (&Error{Code: CodeCorrupt, Detail: "d", Err: errors.New("c")}).Error(); got != "media: corrupt: d: c" {
		t.Errorf("Error() = %q", got)
	}
}

func TestScanOnlyImages(t *testing.T) {
	if !Scan(fixture(t, "flagged.png")) || !Scan(fixture(t, "flagged.jpg")) {
		t.Error("marker images not flagged")
	}
	if Scan(fixture(t, "image.png")) {
		t.Error("clean image flagged")
	}
	wav := fixture(t, "marker.wav")
	if !bytes.Contains(wav, []byte(ScanMarker)) || Scan(wav) {
		t.Error("marker.wav must contain the marker and not be flagged")
	}
	if Scan([]byte("<html>" + ScanMarker + "</html>")) {
		t.Error("text flagged")
	}
	// The marker in a GIF comment or WebP metadata flags too: any image bytes.
	gif := slices.Clone(fixture(t, "image.gif"))
	gif = append(gif[:len(gif)-1], append([]byte{0x21, 0xFE, byte(len(ScanMarker))}, append([]byte(ScanMarker), 0, 0x3B)...)...)
	if !Scan(gif) {
		t.Error("GIF comment marker not flagged")
	}
	if r, err := Inspect("image/gif", gif); err != nil || !r.Flagged {
		t.Errorf("Inspect(gif with marker) = %+v %v", r, err)
	}
}

func TestSniffOtherContainers(t *testing.T) {
	ftyp := func(major string, compat ...string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(16+4*len(compat)))
		b = append(b, "ftyp"+major+"\x00\x00\x02\x00"...)
		for _, c := range compat {
			b = append(b, c...)
		}
		return append(b, 0, 0, 0, 8, 'm', 'd', 'a', 't')
	}
	ebml := func(doc string) []byte {
		body := append([]byte{0x42, 0x82, 0x80 | byte(len(doc))}, doc...)
		return append([]byte{0x1A, 0x45, 0xDF, 0xA3, 0x80 | byte(len(body))}, body...)
	}
	oggPage := func(packet string) []byte {
		b := []byte("OggS\x00\x02")
		b = append(b, make([]byte, 8+4+4+4)...)
		b = append(b, 1, byte(len(packet)))
		return append(b, packet...)
	}
	for _, tc := range []struct {
		name     string
		b        []byte
		ct, kind string
	}{
		{"mp42", ftyp("mp42", "isom"), "video/mp4", KindVideo},
		{"M4V", ftyp("M4V ", "M4A "), "video/mp4", KindVideo},
		{"avc1 compat", ftyp("XXXX", "avc1"), "video/mp4", KindVideo},
		{"qt major", ftyp("qt  "), "video/quicktime", KindVideo},
		{"qt compat", ftyp("abcd", "qt  "), "video/quicktime", KindVideo},
		{"M4A", ftyp("M4A ", "isom"), "audio/mp4", ""},
		{"heic", ftyp("heic", "mif1"), "application/mp4", ""},
		{"webm no tracks", ebml("webm"), "video/webm", KindVideo},
		{"matroska", ebml("matroska"), "video/x-matroska", ""},
		{"ogg vorbis", oggPage("\x01vorbis"), "audio/ogg", KindAudio},
		{"ogg theora", oggPage("\x80theora"), "video/ogg", ""},
		{"gif87a", []byte("GIF87a\x01\x00\x01\x00"), "image/gif", KindImage},
		{"pdf", []byte("%PDF-1.7\n"), "application/pdf", ""},
		{"aac adts", []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC}, "application/octet-stream", ""},
	} {
		if ct, kind := Sniff(tc.b); ct != tc.ct || kind != tc.kind {
			t.Errorf("%s: Sniff = %s %q, want %s %q", tc.name, ct, kind, tc.ct, tc.kind)
		}
	}
}

func TestMP3DurationIgnoresTags(t *testing.T) {
	bare := fixture(t, "audio-bare.mp3")
	want, ok := Duration("audio/mpeg", bare)
	if !ok {
		t.Fatal("audio-bare.mp3 not probed")
	}
	id3v1 := append(slices.Clone(bare), append([]byte("TAG"), make([]byte, 125)...)...)
	if got, ok := Duration("audio/mpeg", id3v1); !ok || got != want {
		t.Errorf("with ID3v1: %d %v, want %d", got, ok, want)
	}
	// Xing/Info count and frame summing agree on the tagged file.
	tagged := fixture(t, "audio.mp3")
	if got, _ := Duration("audio/mpeg", tagged); got != want {
		t.Errorf("audio.mp3 (Info frame count) %d ms, audio-bare.mp3 (frames summed) %d ms", got, want)
	}
	// Half a file plays half as long.
	if got, ok := Duration("audio/mpeg", bare[:len(bare)/2]); !ok || got < want/2-60 || got > want/2+60 {
		t.Errorf("half mp3: %d ms", got)
	}
}

func TestWAVCut(t *testing.T) {
	wav := fixture(t, "audio.wav")
	// 8000 bytes per second: a file cut to 44 + 4000 data bytes plays 500 ms.
	if got, ok := Duration("audio/wav", wav[:44+4000]); !ok || got != 500 {
		t.Errorf("cut wav: %d %v", got, ok)
	}
	if _, ok := Duration("audio/wav", wav[:30]); ok {
		t.Error("wav without data chunk probed")
	}
}

func BenchmarkSniff(b *testing.B) {
	names := []string{"image.jpg", "image.png", "image.webp", "video.mp4", "video.webm", "audio.mp3", "audio-bare.mp3", "audio.ogg", "page.html"}
	files := make([][]byte, len(names))
	for i, n := range names {
		files[i] = fixture(b, n)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		Sniff(files[i%len(files)])
	}
}

func BenchmarkDuration(b *testing.B) {
	for _, name := range []string{"audio.wav", "audio.mp3", "audio-bare.mp3", "audio.ogg", "audio-opus.ogg", "audio.webm", "video.mp4", "video.mov", "video.webm"} {
		f, data := fixtures.Get(name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, ok := Duration(f.SniffedType, data); !ok {
					b.Fatal("not probed")
				}
			}
		})
	}
}
