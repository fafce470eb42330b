package render

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestAudioIsWAVOfExactLength(t *testing.T) {
	for _, c := range []struct{ ms, want int64 }{
		{1, 1},
		{999, 999},
		{8000, 8000},
		{60_000, 60_000},
		{MaxAudioDuration + 1, MaxAudioDuration},
	} {
		o, err := Render(Request{Seed: 1, Kind: KindAudio, DurationMS: c.ms, Text: "keeps coffee hot for twelve hours", CapabilityID: "tts"})
		if err != nil {
			t.Fatal(err)
		}
		if o.ContentType != ContentTypeWAV || o.Width != 0 || o.Height != 0 || o.DurationMS != c.want {
			t.Fatalf("%d ms: output fields %q %dx%d %d ms", c.ms, o.ContentType, o.Width, o.Height, o.DurationMS)
		}
		b := o.Bytes
		le := binary.LittleEndian
		samples := uint32(AudioSampleRate * c.want / 1000)
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"RIFF", string(b[0:4]), "RIFF"},
			{"RIFF size", le.Uint32(b[4:]), uint32(len(b) - 8)},
			{"WAVE", string(b[8:12]), "WAVE"},
			{"fmt ", string(b[12:16]), "fmt "},
			{"fmt size", le.Uint32(b[16:]), uint32(16)},
			{"format", le.Uint16(b[20:]), uint16(1)},
			{"channels", le.Uint16(b[22:]), uint16(1)},
			{"rate", le.Uint32(b[24:]), uint32(AudioSampleRate)},
			{"byte rate", le.Uint32(b[28:]), uint32(2 * AudioSampleRate)},
			{"block align", le.Uint16(b[32:]), uint16(2)},
			{"bits", le.Uint16(b[34:]), uint16(16)},
			{"data", string(b[36:40]), "data"},
			{"data size", le.Uint32(b[40:]), 2 * samples},
			{"file size", len(b), 44 + 2*int(samples)},
		} {
			if f.got != f.want {
				t.Errorf("%d ms: %s = %v, want %v", c.ms, f.name, f.got, f.want)
			}
		}
	}
}

func TestAudioHasTonesAndSilence(t *testing.T) {
	o, err := Render(Request{Seed: 1, Kind: KindAudio, DurationMS: 2000, Text: "one two three"})
	if err != nil {
		t.Fatal(err)
	}
	var loud, silent int
	peak := 0
	for i := 44; i < len(o.Bytes); i += 2 {
		s := int(int16(binary.LittleEndian.Uint16(o.Bytes[i:])))
		peak = max(peak, s, -s)
		if s == 0 {
			silent++
		} else if s > 1000 || s < -1000 {
			loud++
		}
	}
	if loud == 0 || silent == 0 || peak > toneAmplitude {
		t.Fatalf("loud %d, silent %d, peak %d: want tones with gaps, peak at most %d", loud, silent, peak, toneAmplitude)
	}
}

func TestSine(t *testing.T) {
	const amp = 10000
	for _, c := range []struct {
		phase uint32
		want  int64
	}{
		{0, 0},
		{1 << 30, amp},     // 90°
		{1 << 31, 0},       // 180°
		{3 << 30, -amp},    // 270°
		{1 << 29, 7071},    // 45°: sin = 0.7071
		{0x15555555, 5000}, // 30°: sin = 0.5
	} {
		got := sine(c.phase, amp)
		if d := got - c.want; d > 20 || d < -20 {
			t.Errorf("sine(%#x) = %d, want %d ± 20", c.phase, got, c.want)
		}
	}
}

// TestAudioFFprobe reads a clip back with ffprobe: 16-bit PCM, mono,
// AudioSampleRate, the exact duration.
func TestAudioFFprobe(t *testing.T) {
	ffprobe, _ := tools(t)
	o, err := Render(Request{Seed: 5, Kind: KindAudio, DurationMS: 2345, Text: "twelve hours hot", CapabilityID: "tts"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), o.FileName)
	if err := os.WriteFile(path, o.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(ffprobe, "-v", "error", "-show_streams", "-of", "json", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffprobe: %v: %s", err, stderr.String())
	}
	var probe struct {
		Streams []struct {
			CodecName  string `json:"codec_name"`
			SampleRate string `json:"sample_rate"`
			Channels   int    `json:"channels"`
			Duration   string `json:"duration"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		t.Fatal(err)
	}
	if len(probe.Streams) != 1 {
		t.Fatalf("%d streams", len(probe.Streams))
	}
	s := probe.Streams[0]
	if s.CodecName != "pcm_s16le" || s.SampleRate != "8000" || s.Channels != 1 || s.Duration != "2.345000" {
		t.Errorf("ffprobe: %+v, want pcm_s16le 8000 Hz mono 2.345000 s", s)
	}
}
