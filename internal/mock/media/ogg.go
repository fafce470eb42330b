package media

import (
	"bytes"
	"encoding/binary"
)

// oggPage is one Ogg page header and its body.
type oggPage struct {
	granule int64
	serial  uint32
	bos     bool
	body    []byte
	size    int // header + body bytes
}

// readOggPage parses the page at the start of b.
func readOggPage(b []byte) (oggPage, bool) {
	if len(b) < 27 || string(b[:4]) != "OggS" || b[4] != 0 {
		return oggPage{}, false
	}
	nseg := int(b[26])
	if len(b) < 27+nseg {
		return oggPage{}, false
	}
	bodyLen := 0
	for _, l := range b[27 : 27+nseg] {
		bodyLen += int(l)
	}
	hdr := 27 + nseg
	if len(b) < hdr+bodyLen {
		return oggPage{}, false
	}
	return oggPage{
		granule: int64(binary.LittleEndian.Uint64(b[6:])),
		serial:  binary.LittleEndian.Uint32(b[14:]),
		bos:     b[5]&0x02 != 0,
		body:    b[hdr : hdr+bodyLen],
		size:    hdr + bodyLen,
	}, true
}

// oggVideoCodecs are first-packet magics of video codecs in Ogg.
var oggVideoCodecs = [][]byte{[]byte("\x80theora"), []byte("BBCD\x00"), []byte("\x80daala")}

// sniffOgg names a file that starts with OggS: video/ogg (not accepted)
// when its first stream is a video codec, else audio/ogg.
func sniffOgg(b []byte) sniffed {
	if p, ok := readOggPage(b); ok {
		for _, m := range oggVideoCodecs {
			if bytes.HasPrefix(p.body, m) {
				return sniffed{ct: "video/ogg"}
			}
		}
	}
	return sniffed{ct: "audio/ogg", kind: KindAudio}
}

// oggDuration reads the first logical stream's codec from its ID header
// (Vorbis: sample rate; Opus: 48 kHz granules and pre-skip) and divides the
// last granule position of that stream by the rate.
func oggDuration(b []byte) (int64, bool) {
	first, ok := readOggPage(b)
	if !ok {
		return 0, false
	}
	var rate, preskip int64
	id := first.body
	switch {
	case len(id) >= 16 && bytes.HasPrefix(id, []byte("\x01vorbis")):
		rate = int64(binary.LittleEndian.Uint32(id[12:]))
	case len(id) >= 12 && bytes.HasPrefix(id, []byte("OpusHead")):
		rate, preskip = 48000, int64(binary.LittleEndian.Uint16(id[10:]))
	default:
		return 0, false
	}
	if rate <= 0 {
		return 0, false
	}
	last := int64(-1)
	for off := 0; off < len(b); {
		p, ok := readOggPage(b[off:])
		if !ok {
			// Skip to the next capture pattern (a damaged or cut page).
			i := bytes.Index(b[off+1:], []byte("OggS"))
			if i < 0 {
				break
			}
			off += 1 + i
			continue
		}
		if p.serial == first.serial && p.granule >= 0 {
			last = p.granule
		}
		off += p.size
	}
	samples := last - preskip
	if last < 0 || samples <= 0 {
		return 0, false
	}
	return (samples*1000 + rate/2) / rate, true
}
