package media

import (
	"encoding/binary"
)

// Duration probes the playing time of audio or video bytes in
// milliseconds (rounded to the nearest): WAV from the fmt byte rate and
// the data chunk size; MP3 from the Xing/Info frame count when present,
// else by summing every MPEG frame; MP4 and QuickTime from the mvhd box
// (timescale, duration), or the longest mdhd when mvhd has none; WebM from
// Segment Info Duration x TimecodeScale; Ogg from the last granule position
// of the first stream over the Vorbis sample rate, or for Opus over 48 kHz
// after subtracting the pre-skip.
//
// contentType chooses the parser (Normalize applies; "" means Sniff it).
// ok is false when the bytes cannot be probed: wrong format for the type,
// no duration header (e.g. an MP4 cut before its moov box, a live WebM
// without Duration), or an image. Then the finalize answer's duration_ms
// is null.
func Duration(contentType string, b []byte) (ms int64, ok bool) {
	ct := Normalize(contentType)
	if ct == "" {
		ct, _ = Sniff(b)
	}
	switch ct {
	case "audio/wav":
		return wavDuration(b)
	case "audio/mpeg":
		return mp3Duration(b)
	case "video/mp4", "video/quicktime":
		if s, ok := sniffBMFF(b); !ok || s.kind != KindVideo {
			return 0, false
		}
		ms, _, _, ok := bmffInfo(b)
		return ms, ok
	case "video/webm", "audio/webm":
		info, ok := parseEBML(b)
		if !ok || info.docType != "webm" || !info.hasDuration {
			return 0, false
		}
		return info.durationMS, true
	case "audio/ogg":
		return oggDuration(b)
	}
	return 0, false
}

// wavDuration walks the RIFF chunks of a WAVE file.
func wavDuration(b []byte) (int64, bool) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, false
	}
	var byteRate, sampleRate, factSamples uint64
	var format uint16
	var dataSize uint64
	haveData := false
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := uint64(binary.LittleEndian.Uint32(b[off+4:]))
		body := b[off+8:]
		avail := uint64(len(body))
		switch id {
		case "fmt ":
			if size < 16 || avail < 16 {
				return 0, false
			}
			format = binary.LittleEndian.Uint16(body)
			sampleRate = uint64(binary.LittleEndian.Uint32(body[4:]))
			byteRate = uint64(binary.LittleEndian.Uint32(body[8:]))
		case "fact":
			if size >= 4 && avail >= 4 {
				factSamples = uint64(binary.LittleEndian.Uint32(body))
			}
		case "data":
			// A cut file (or a streamed one with size 0xFFFFFFFF) plays
			// what is there.
			dataSize, haveData = min(size, avail), true
		}
		if haveData && byteRate > 0 {
			break
		}
		next := uint64(off) + 8 + size + size&1
		if next > uint64(len(b)) {
			break
		}
		off = int(next)
	}
	if !haveData {
		return 0, false
	}
	const pcm, extensible = 1, 0xFFFE
	if format != pcm && format != extensible && factSamples > 0 && sampleRate > 0 {
		return scaleMS(factSamples, sampleRate), true
	}
	if byteRate == 0 {
		return 0, false
	}
	return scaleMS(dataSize, byteRate), true
}

// mpegHeader is one parsed MPEG audio frame header.
type mpegHeader struct {
	version    int // 1, 2, or 25 (MPEG 2.5)
	layer      int // 1, 2, 3
	sampleRate int
	samples    int // per frame
	size       int // frame bytes, header included
	mono       bool
}

var (
	mpegRates   = [3][3]int{{44100, 48000, 32000}, {22050, 24000, 16000}, {11025, 12000, 8000}}
	mpegBitrate = map[[2]int][16]int{ // {version1?1:2, layer} -> kb/s by index
		{1, 1}: {0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, -1},
		{1, 2}: {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, -1},
		{1, 3}: {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, -1},
		{2, 1}: {0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, -1},
		{2, 2}: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
		{2, 3}: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
	}
)

// parseMPEGHeader parses the 4-byte frame header at the start of b. Free
// format (bitrate index 0) and reserved values are refused.
func parseMPEGHeader(b []byte) (mpegHeader, bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return mpegHeader{}, false
	}
	var h mpegHeader
	vi := 0 // row of mpegRates
	switch (b[1] >> 3) & 3 {
	case 0:
		h.version, vi = 25, 2
	case 2:
		h.version, vi = 2, 1
	case 3:
		h.version, vi = 1, 0
	default:
		return mpegHeader{}, false
	}
	switch (b[1] >> 1) & 3 {
	case 1:
		h.layer = 3
	case 2:
		h.layer = 2
	case 3:
		h.layer = 1
	default:
		return mpegHeader{}, false
	}
	bi, si, pad := int(b[2]>>4), int(b[2]>>2)&3, int(b[2]>>1)&1
	if si == 3 || bi == 0 || bi == 15 {
		return mpegHeader{}, false
	}
	tv := 2
	if h.version == 1 {
		tv = 1
	}
	br := mpegBitrate[[2]int{tv, h.layer}][bi] * 1000
	h.sampleRate = mpegRates[vi][si]
	h.mono = b[3]>>6 == 3
	switch {
	case h.layer == 1:
		h.samples = 384
		h.size = (12*br/h.sampleRate + pad) * 4
	case h.layer == 3 && h.version != 1:
		h.samples = 576
		h.size = 72*br/h.sampleRate + pad
	default:
		h.samples = 1152
		h.size = 144*br/h.sampleRate + pad
	}
	return h, h.size > 4
}

// skipID3v2 returns b after any leading ID3v2 tags.
func skipID3v2(b []byte) []byte {
	for len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7F)<<21 | int(b[7]&0x7F)<<14 | int(b[8]&0x7F)<<7 | int(b[9]&0x7F)
		size += 10
		if b[5]&0x10 != 0 {
			size += 10 // footer
		}
		if size > len(b) {
			return nil
		}
		b = b[size:]
	}
	return b
}

// mp3Duration finds the first frame (after ID3v2 tags and any padding,
// two consecutive headers confirming it), uses its Xing/Info frame count
// when there is one, and otherwise sums the samples of every frame up to
// the first non-frame (an ID3v1 or APE tag, or the cut end).
func mp3Duration(b []byte) (int64, bool) {
	b = skipID3v2(b)
	start := -1
	for i := 0; i+4 <= len(b) && i < 1<<16; i++ {
		if b[i] == 0xFF && mp3Starts(b[i:]) {
			start = i
			break
		}
	}
	if start < 0 {
		return 0, false
	}
	b = b[start:]
	first, _ := parseMPEGHeader(b)
	var samples, frames uint64
	off := 0
	if n, isTag, ok := xingFrames(b, first); isTag {
		if ok && n > 0 {
			return scaleMS(n*uint64(first.samples), uint64(first.sampleRate)), true
		}
		off = first.size // an Info frame without a count carries no audio
	}
	for off+4 <= len(b) {
		h, ok := parseMPEGHeader(b[off:])
		if !ok || off+h.size > len(b) {
			break
		}
		samples += uint64(h.samples)
		frames++
		off += h.size
	}
	if frames == 0 {
		return 0, false
	}
	return scaleMS(samples, uint64(first.sampleRate)), true
}

// xingFrames looks for a Xing or Info tag in the first frame. isTag says
// whether the frame is such a tag frame; ok whether it carries a frame
// count (which excludes the tag frame itself). A VBRI tag is read too.
func xingFrames(b []byte, h mpegHeader) (frames uint64, isTag, ok bool) {
	side := 32
	switch {
	case h.version == 1 && h.mono:
		side = 17
	case h.version != 1 && !h.mono:
		side = 17
	case h.version != 1 && h.mono:
		side = 9
	}
	if h.layer != 3 {
		return 0, false, false
	}
	frame := b[:min(h.size, len(b))]
	if o := 4 + side; len(frame) >= o+8 {
		tag := string(frame[o : o+4])
		if tag == "Xing" || tag == "Info" {
			flags := be32(frame[o+4:])
			if flags&1 != 0 && len(frame) >= o+12 {
				return uint64(be32(frame[o+8:])), true, true
			}
			return 0, true, false
		}
	}
	if o := 4 + 32; len(frame) >= o+18 && string(frame[o:o+4]) == "VBRI" {
		return uint64(be32(frame[o+14:])), true, true
	}
	return 0, false, false
}
