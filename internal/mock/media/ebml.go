package media

import (
	"math"
)

// EBML / Matroska element ids used here.
const (
	idEBML          = 0x1A45DFA3
	idDocType       = 0x4282
	idSegment       = 0x18538067
	idInfo          = 0x1549A966
	idTimecodeScale = 0x2AD7B1
	idDuration      = 0x4489
	idTracks        = 0x1654AE6B
	idTrackEntry    = 0xAE
	idTrackType     = 0x83
	idVideo         = 0xE0
	idPixelWidth    = 0xB0
	idPixelHeight   = 0xBA
	idCluster       = 0x1F43B675
)

// ebmlInfo is what the WebM parser finds.
type ebmlInfo struct {
	docType      string
	tracksRead   bool // a complete Tracks element was read
	video, audio bool // track types present
	w, h         int  // first video track's pixel size
	durationMS   int64
	hasDuration  bool
}

// vint reads an EBML variable-size integer. With keepMarker (element ids)
// the length marker stays in the value. unknown reports an all-ones size.
func vint(b []byte, keepMarker bool) (v uint64, n int, unknown, ok bool) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0, false, false
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n || keepMarker && n > 4 {
		return 0, 0, false, false
	}
	v = uint64(b[0])
	if !keepMarker {
		v &= uint64(0xFF >> n)
	}
	allOnes := v == uint64(0xFF>>n)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
		allOnes = allOnes && b[i] == 0xFF
	}
	return v, n, !keepMarker && allOnes, true
}

// element is one EBML element; size -1 means unknown (runs to the end of
// its parent); cut means the element runs past the end of the buffer.
type element struct {
	id   uint64
	data []byte
	cut  bool
}

// elements splits b into EBML elements, stopping at a malformed header.
// An element whose size runs past b is returned with the bytes that are
// there and cut set, and ends the list.
func elements(b []byte) []element {
	var out []element
	for len(b) > 0 {
		id, n, _, ok := vint(b, true)
		if !ok {
			return out
		}
		size, m, unknown, ok := vint(b[n:], false)
		if !ok {
			return out
		}
		b = b[n+m:]
		if unknown || size > uint64(len(b)) {
			return append(out, element{id: id, data: b, cut: !unknown})
		}
		out = append(out, element{id: id, data: b[:size]})
		b = b[size:]
	}
	return out
}

func ebmlUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// parseEBML reads the EBML header, Segment Info and Tracks.
func parseEBML(b []byte) (ebmlInfo, bool) {
	var info ebmlInfo
	top := elements(b)
	if len(top) == 0 || top[0].id != idEBML || top[0].cut {
		return info, false
	}
	for _, e := range elements(top[0].data) {
		if e.id == idDocType {
			info.docType = string(trimNUL(e.data))
		}
	}
	for _, seg := range top[1:] {
		if seg.id != idSegment {
			continue
		}
		scale := uint64(1000000)
		var dur float64
		for _, e := range elements(seg.data) {
			switch e.id {
			case idInfo:
				for _, f := range elements(e.data) {
					switch f.id {
					case idTimecodeScale:
						if v := ebmlUint(f.data); v > 0 {
							scale = v
						}
					case idDuration:
						switch len(f.data) {
						case 4:
							dur = float64(math.Float32frombits(uint32(ebmlUint(f.data))))
						case 8:
							dur = math.Float64frombits(ebmlUint(f.data))
						}
					}
				}
			case idTracks:
				if e.cut {
					break
				}
				info.tracksRead = true
				for _, t := range elements(e.data) {
					if t.id != idTrackEntry {
						continue
					}
					for _, f := range elements(t.data) {
						switch f.id {
						case idTrackType:
							switch ebmlUint(f.data) {
							case 1:
								info.video = true
							case 2:
								info.audio = true
							}
						case idVideo:
							var w, h int
							for _, v := range elements(f.data) {
								switch v.id {
								case idPixelWidth:
									w = int(min(ebmlUint(v.data), math.MaxInt32))
								case idPixelHeight:
									h = int(min(ebmlUint(v.data), math.MaxInt32))
								}
							}
							if info.w == 0 && w > 0 && h > 0 {
								info.w, info.h = w, h
							}
						}
					}
				}
			}
		}
		if dur > 0 && !math.IsInf(dur, 0) && !math.IsNaN(dur) {
			v := dur * float64(scale) / 1e6
			if v < math.MaxInt64/2 {
				info.durationMS, info.hasDuration = int64(math.Round(v)), true
			}
		}
		break
	}
	return info, true
}

func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// sniffEBML names a file that starts with the EBML magic.
func sniffEBML(b []byte) sniffed {
	info, ok := parseEBML(b)
	switch {
	case !ok:
		return sniffed{ct: "application/octet-stream"}
	case info.docType == "webm":
		switch {
		case info.video:
			return sniffed{ct: "video/webm", kind: KindVideo}
		case info.audio:
			return sniffed{ct: "audio/webm", kind: KindAudio}
		}
		return sniffed{ct: "video/webm", kind: KindVideo, webmOpen: true}
	case info.docType == "matroska":
		return sniffed{ct: "video/x-matroska"}
	}
	return sniffed{ct: "application/octet-stream"}
}
