package render

import (
	"encoding/binary"
	"hash/fnv"
	"strings"
)

// Tone sequence of a rendered clip.
const (
	toneAmplitude = 9000 // peak sample value (of 32767)
	toneGapMS     = 40   // silence after each tone
	toneRampMS    = 10   // linear fade in and out
	toneMinHz     = 220
	toneSpanHz    = 660 // pitches lie in [toneMinHz, toneMinHz+toneSpanHz)
)

// renderAudio makes a WAV file: 16-bit little-endian PCM, mono,
// AudioSampleRate Hz, exactly AudioSampleRate*DurationMS/1000 samples (the
// duration clamped to MaxAudioDuration). The content is one short tone per
// word of req.Text (pitch from the word, length from its letters), repeated
// until the clip is full, with a short silence after each tone; text with
// no words gets tones drawn from the request's stream.
func renderAudio(req Request) (Output, error) {
	ms, err := checkDuration(req.DurationMS, MaxAudioDuration)
	if err != nil {
		return Output{}, err
	}
	n := int(int64(AudioSampleRate) * ms / 1000)
	r := stream(req)
	base := uint32(intn(r, toneSpanHz))

	type tone struct{ hz, samples int }
	var tones []tone
	for _, w := range strings.Fields(req.Text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		hz := toneMinHz + int((h.Sum32()+base)%toneSpanHz)
		lenMS := 120 + 20*min(len(w), 12)
		tones = append(tones, tone{hz: hz, samples: AudioSampleRate * lenMS / 1000})
	}
	if len(tones) == 0 {
		for range between(r, 3, 6) {
			tones = append(tones, tone{hz: toneMinHz + intn(r, toneSpanHz), samples: AudioSampleRate * between(r, 150, 400) / 1000})
		}
	}

	const header = 44
	buf := make([]byte, header+2*n)
	writeWAVHeader(buf, n)
	pcm := buf[header:]
	gap := AudioSampleRate * toneGapMS / 1000
	ramp := AudioSampleRate * toneRampMS / 1000
	pos := 0
	for t := 0; pos < n; t = (t + 1) % len(tones) {
		tn := tones[t]
		inc := uint32((uint64(tn.hz) << 32) / AudioSampleRate)
		var phase uint32
		for i := 0; i < tn.samples && pos < n; i++ {
			env := int64(toneAmplitude)
			if d := min(i, tn.samples-1-i); d < ramp {
				env = env * int64(d) / int64(ramp)
			}
			s := int16(sine(phase, env))
			binary.LittleEndian.PutUint16(pcm[2*pos:], uint16(s))
			phase += inc
			pos++
		}
		pos += gap // the buffer is zero: silence
	}
	return Output{
		ContentType: ContentTypeWAV,
		FileName:    FileName(req.CapabilityID, req.Index, "wav"),
		Bytes:       buf,
		DurationMS:  ms,
	}, nil
}

// writeWAVHeader writes the 44-byte RIFF/WAVE header of a clip of n samples
// (16-bit mono PCM at AudioSampleRate) into b.
func writeWAVHeader(b []byte, n int) {
	le := binary.LittleEndian
	data := uint32(2 * n)
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], 36+data)
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	le.PutUint32(b[16:], 16)                // fmt chunk size
	le.PutUint16(b[20:], 1)                 // PCM
	le.PutUint16(b[22:], 1)                 // mono
	le.PutUint32(b[24:], AudioSampleRate)   // sample rate
	le.PutUint32(b[28:], AudioSampleRate*2) // byte rate
	le.PutUint16(b[32:], 2)                 // block align
	le.PutUint16(b[34:], 16)                // bits per sample
	copy(b[36:], "data")
	le.PutUint32(b[40:], data)
}

// sine returns amp*sin(phase) for a 32-bit phase (2^32 = one cycle), with
// Bhaskara I's rational approximation in integers (error under 0.2 %), so
// every platform computes the same samples.
func sine(phase uint32, amp int64) int64 {
	const p = 1 << 15 // half a cycle
	x := int64(phase>>16) & (p - 1)
	q := x * (p - x)
	v := 16 * q * amp / (5*p*p - 4*q)
	if phase>>31 == 1 {
		return -v
	}
	return v
}
