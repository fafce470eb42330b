package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
)

// ImageConfig reads the format and pixel size of an image from its header
// without decoding the pixels: image/jpeg, image/png and image/gif through
// the standard library decoders, WebP by a small parser of the first chunk
// (VP8 key-frame header, VP8L header, or VP8X canvas size).
//
// format is "jpeg", "png", "gif" or "webp" (the content type is "image/" +
// format). Errors: ErrEmpty for no bytes; ErrNotAccepted when b is not one
// of these formats; ErrTruncated when the header is cut; ErrCorrupt when it
// is malformed.
func ImageConfig(b []byte) (format string, w, h int, err error) {
	if len(b) == 0 {
		return "", 0, 0, ErrEmpty
	}
	ct, kind := Sniff(b)
	if kind != KindImage {
		return "", 0, 0, newErr(CodeNotAccepted, nil, "bytes are %s, not a JPEG, PNG, GIF or WebP image", orUnknown(ct))
	}
	format = ct[len("image/"):]
	var cfg image.Config
	switch format {
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(b))
	case "png":
		cfg, err = png.DecodeConfig(bytes.NewReader(b))
	case "gif":
		cfg, err = gif.DecodeConfig(bytes.NewReader(b))
	case "webp":
		w, h, err = webpConfig(b)
		return format, w, h, err
	}
	if err != nil {
		return format, 0, 0, decodeErr(format, "header", err)
	}
	return format, cfg.Width, cfg.Height, nil
}

// CheckBounds refuses a pixel size over the finalize bounds: more than
// MaxImageSide on either side or more than MaxImagePixels in all (exactly
// 16384 px and exactly 40000000 px pass). Non-positive sizes are
// ErrCorrupt.
func CheckBounds(w, h int) error {
	switch {
	case w <= 0 || h <= 0:
		return newErr(CodeCorrupt, nil, "image is %dx%d px", w, h)
	case w > MaxImageSide || h > MaxImageSide:
		return newErr(CodePixelBounds, nil, "image is %dx%d px, a side is over %d", w, h, MaxImageSide)
	case int64(w)*int64(h) > MaxImagePixels:
		return newErr(CodePixelBounds, nil, "image is %dx%d = %d px, over %d", w, h, int64(w)*int64(h), MaxImagePixels)
	}
	return nil
}

// CheckImage runs the finalize checks of an image, in this order:
// ErrEmpty (no bytes); ErrNotAccepted (declared is given and is not an
// image type, or b is no image and nothing was declared);
// ErrSignatureMismatch (the signature is not the declared type, e.g. PNG
// bytes declared image/jpeg); the header (ErrTruncated, ErrCorrupt);
// ErrPixelBounds (CheckBounds, before any pixel is decoded, so a huge image
// costs nothing); then a full decode of JPEG, PNG and GIF (the first
// frame), whose format and size must agree with the header (ErrTruncated
// when the data ends early, ErrCorrupt otherwise).
//
// WebP is not decoded: that needs golang.org/x/image, which the project
// does not depend on. Its RIFF and chunk sizes are checked against the
// bytes present (ErrTruncated) and the bitstream header must be valid.
//
// declared "" skips the declaration checks. It returns the pixel size.
func CheckImage(declared string, b []byte) (w, h int, err error) {
	if len(b) == 0 {
		return 0, 0, ErrEmpty
	}
	declared = Normalize(declared)
	if declared != "" && KindOf(declared) != KindImage {
		return 0, 0, newErr(CodeNotAccepted, nil, "%s is not an accepted image type", declared)
	}
	ct, kind := Sniff(b)
	if kind != KindImage {
		if declared == "" {
			return 0, 0, newErr(CodeNotAccepted, nil, "bytes are %s, not an image", orUnknown(ct))
		}
		return 0, 0, newErr(CodeSignatureMismatch, nil, "declared %s, bytes are %s", declared, orUnknown(ct))
	}
	if declared != "" && declared != ct {
		return 0, 0, newErr(CodeSignatureMismatch, nil, "declared %s, bytes are %s", declared, ct)
	}
	format, w, h, err := ImageConfig(b)
	if err != nil {
		return 0, 0, err
	}
	if err := CheckBounds(w, h); err != nil {
		return 0, 0, err
	}
	var img image.Image
	switch format {
	case "webp":
		return w, h, webpCheck(b)
	case "jpeg":
		img, err = jpeg.Decode(bytes.NewReader(b))
	case "png":
		if err := pngComplete(b); err != nil {
			return 0, 0, err
		}
		img, err = png.Decode(bytes.NewReader(b))
	case "gif":
		img, err = gif.Decode(bytes.NewReader(b))
	}
	if err != nil {
		return 0, 0, decodeErr(format, "data", err)
	}
	if r := img.Bounds(); r.Dx() > w || r.Dy() > h {
		return 0, 0, newErr(CodeCorrupt, nil, "decoded %dx%d px, header says %dx%d", r.Dx(), r.Dy(), w, h)
	}
	return w, h, nil
}

// decodeErr classifies a standard library decoder error.
func decodeErr(format, what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return newErr(CodeTruncated, err, "%s %s ends early", format, what)
	}
	return newErr(CodeCorrupt, err, "%s %s is malformed", format, what)
}

func orUnknown(ct string) string {
	if ct == "" {
		return "unrecognised"
	}
	return ct
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le24(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// webpChunks splits the RIFF payload of a WebP file into chunks. It
// reports ErrTruncated when the RIFF size or a chunk runs past the bytes.
func webpChunks(b []byte) ([]box, error) {
	if len(b) < 12 {
		return nil, newErr(CodeTruncated, nil, "webp RIFF header ends early")
	}
	riff := int64(le32(b[4:]))
	if riff < 4 {
		return nil, newErr(CodeCorrupt, nil, "webp RIFF size %d", riff)
	}
	if 8+riff > int64(len(b)) {
		return nil, newErr(CodeTruncated, nil, "webp RIFF size %d, %d bytes present", riff, len(b)-8)
	}
	p := b[12 : 8+riff]
	var out []box
	for len(p) > 0 {
		if len(p) < 8 {
			return nil, newErr(CodeTruncated, nil, "webp chunk header ends early")
		}
		size := int64(le32(p[4:]))
		if 8+size > int64(len(p)) {
			return nil, newErr(CodeTruncated, nil, "webp %q chunk of %d bytes, %d present", p[:4], size, len(p)-8)
		}
		out = append(out, box{typ: string(p[:4]), payload: p[8 : 8+size]})
		next := 8 + size + size&1
		if next > int64(len(p)) {
			next = int64(len(p)) // a missing final pad byte is tolerated
		}
		p = p[next:]
	}
	if len(out) == 0 {
		return nil, newErr(CodeTruncated, nil, "webp has no chunks")
	}
	return out, nil
}

// vp8Size reads a VP8 key frame header.
func vp8Size(p []byte) (w, h int, err error) {
	if len(p) < 10 {
		return 0, 0, newErr(CodeTruncated, nil, "webp VP8 header ends early")
	}
	if p[0]&1 != 0 || p[3] != 0x9D || p[4] != 0x01 || p[5] != 0x2A {
		return 0, 0, newErr(CodeCorrupt, nil, "webp VP8 chunk is not a key frame")
	}
	return int(le16(p[6:]) & 0x3FFF), int(le16(p[8:]) & 0x3FFF), nil
}

// vp8lSize reads a VP8L (lossless) header.
func vp8lSize(p []byte) (w, h int, err error) {
	if len(p) < 5 {
		return 0, 0, newErr(CodeTruncated, nil, "webp VP8L header ends early")
	}
	if p[0] != 0x2F {
		return 0, 0, newErr(CodeCorrupt, nil, "webp VP8L signature is %#x", p[0])
	}
	v := le32(p[1:])
	if v>>29 != 0 {
		return 0, 0, newErr(CodeCorrupt, nil, "webp VP8L version %d", v>>29)
	}
	return int(v&0x3FFF) + 1, int((v>>14)&0x3FFF) + 1, nil
}

// webpConfig reads the canvas size from the first chunk.
func webpConfig(b []byte) (w, h int, err error) {
	chunks, err := webpChunks(b)
	if err != nil {
		return 0, 0, err
	}
	c := chunks[0]
	switch c.typ {
	case "VP8 ":
		return vp8Size(c.payload)
	case "VP8L":
		return vp8lSize(c.payload)
	case "VP8X":
		if len(c.payload) < 10 {
			return 0, 0, newErr(CodeTruncated, nil, "webp VP8X header ends early")
		}
		return int(le24(c.payload[4:])) + 1, int(le24(c.payload[7:])) + 1, nil
	}
	return 0, 0, newErr(CodeCorrupt, nil, "webp starts with a %q chunk", c.typ)
}

// webpCheck is the WebP stand-in for a full decode: the extended format
// must hold a bitstream (VP8/VP8L) or an animation whose valid header size
// fits the canvas.
func webpCheck(b []byte) error {
	chunks, err := webpChunks(b)
	if err != nil {
		return err
	}
	if chunks[0].typ != "VP8X" {
		return nil // webpConfig already parsed the only bitstream header
	}
	cw, ch, _ := webpConfig(b)
	for _, c := range chunks[1:] {
		var w, h int
		switch c.typ {
		case "VP8 ":
			w, h, err = vp8Size(c.payload)
		case "VP8L":
			w, h, err = vp8lSize(c.payload)
		case "ANMF":
			if len(c.payload) < 16 {
				return newErr(CodeTruncated, nil, "webp ANMF header ends early")
			}
			w, h = int(le24(c.payload[6:]))+1, int(le24(c.payload[9:]))+1
		default:
			continue
		}
		if err != nil {
			return err
		}
		if w > cw || h > ch {
			return newErr(CodeCorrupt, nil, "webp frame %dx%d is larger than the %dx%d canvas", w, h, cw, ch)
		}
		return nil
	}
	return newErr(CodeCorrupt, nil, "webp extended file has no VP8, VP8L or ANMF chunk")
}

// pngComplete walks the PNG chunks: each must fit in b and an IEND chunk
// must be reached, else the file is ErrTruncated.
func pngComplete(b []byte) error {
	for off := 8; ; {
		if off+12 > len(b) {
			return newErr(CodeTruncated, nil, "png ends after %d bytes without an IEND chunk", len(b))
		}
		n := int64(be32(b[off:]))
		typ := string(b[off+4 : off+8])
		end := int64(off) + 12 + n
		if end > int64(len(b)) {
			return newErr(CodeTruncated, nil, "png %q chunk of %d bytes, %d present", typ, n, len(b)-off-12)
		}
		if typ == "IEND" {
			return nil
		}
		off = int(end)
	}
}
