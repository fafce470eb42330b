package media

import "encoding/binary"

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// box is one ISO BMFF box: its type and payload (header excluded).
type box struct {
	typ     string
	payload []byte
}

// boxes splits b into boxes. It stops at the first box that does not fit
// and reports complete=false then (a truncated file).
func boxes(b []byte) (out []box, complete bool) {
	for len(b) > 0 {
		if len(b) < 8 {
			return out, false
		}
		size := uint64(be32(b))
		hdr := uint64(8)
		switch size {
		case 0:
			size = uint64(len(b))
		case 1:
			if len(b) < 16 {
				return out, false
			}
			size, hdr = be64(b[8:]), 16
		}
		if size < hdr || size > uint64(len(b)) {
			return out, false
		}
		out = append(out, box{typ: string(b[4:8]), payload: b[hdr:size]})
		b = b[size:]
	}
	return out, true
}

// findBox returns the payload of the first box of type typ among the
// boxes of b (top level only).
func findBox(b []byte, typ string) ([]byte, bool) {
	bs, _ := boxes(b)
	for _, x := range bs {
		if x.typ == typ {
			return x.payload, true
		}
	}
	return nil, false
}

// bmffInfo reads the movie header (mvhd) duration and the first visual
// track's size (tkhd) from an MP4 or QuickTime file.
func bmffInfo(b []byte) (ms int64, w, h int, ok bool) {
	moov, found := findBox(b, "moov")
	if !found {
		return 0, 0, 0, false
	}
	kids, _ := boxes(moov)
	var timescale, duration uint64
	var mdhdMax int64
	for _, k := range kids {
		switch k.typ {
		case "mvhd":
			timescale, duration = fullBoxTimes(k.payload)
		case "trak":
			tk, _ := boxes(k.payload)
			for _, t := range tk {
				switch t.typ {
				case "tkhd":
					if tw, th := tkhdSize(t.payload); w == 0 && tw > 0 && th > 0 {
						w, h = tw, th
					}
				case "mdia":
					if p, ok := findBox(t.payload, "mdhd"); ok {
						if ts, d := fullBoxTimes(p); ts > 0 && d > 0 && d != 1<<32-1 && d != 1<<64-1 {
							mdhdMax = max(mdhdMax, scaleMS(d, ts))
						}
					}
				}
			}
		}
	}
	switch {
	case timescale > 0 && duration > 0 && duration != 1<<32-1 && duration != 1<<64-1:
		return scaleMS(duration, timescale), w, h, true
	case mdhdMax > 0:
		return mdhdMax, w, h, true
	}
	return 0, w, h, false
}

// fullBoxTimes reads timescale and duration of an mvhd or mdhd payload
// (version 0 or 1); zeros when it is too short.
func fullBoxTimes(p []byte) (timescale, duration uint64) {
	if len(p) < 1 {
		return 0, 0
	}
	if p[0] == 1 {
		if len(p) < 4+8+8+4+8 {
			return 0, 0
		}
		return uint64(be32(p[20:])), be64(p[24:])
	}
	if len(p) < 4+4+4+4+4 {
		return 0, 0
	}
	return uint64(be32(p[12:])), uint64(be32(p[16:]))
}

// tkhdSize reads the 16.16 fixed-point width and height of a tkhd payload.
func tkhdSize(p []byte) (w, h int) {
	if len(p) < 1 {
		return 0, 0
	}
	off := 4 + 4 + 4 + 4 + 4 + 4 // version/flags, ctime, mtime, track id, reserved, duration
	if p[0] == 1 {
		off = 4 + 8 + 8 + 4 + 4 + 8
	}
	off += 8 + 2 + 2 + 2 + 2 + 36 // reserved, layer, group, volume, reserved, matrix
	if len(p) < off+8 {
		return 0, 0
	}
	return int(be32(p[off:]) >> 16), int(be32(p[off+4:]) >> 16)
}

// scaleMS converts units of 1/timescale seconds to rounded milliseconds.
func scaleMS(units, timescale uint64) int64 {
	if units > (1<<63-1)/1000 {
		return int64(units / timescale * 1000)
	}
	return int64((units*1000 + timescale/2) / timescale)
}
