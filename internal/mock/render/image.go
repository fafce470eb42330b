package render

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"sync"
)

// Palette layout of a rendered image: gradientSteps entries of a two-colour
// gradient, then one entry per shape.
const (
	gradientSteps = 240
	maxShapes     = 6
)

// shape is one filled circle or rectangle of a picture.
type shape struct {
	circle bool
	// x0, y0, x1, y1 bound the shape (inclusive-exclusive); cx, cy, r2 define
	// a circle (centre and squared radius).
	x0, y0, x1, y1 int
	cx, cy, r2     int64
}

// picture is the pattern of an image: a diagonal two-colour gradient and a
// few shapes drawn over it, all chosen from the request's stream.
type picture struct {
	w, h    int
	gx, gy  int // gradient weights along x and y; gx + gy = gradientSteps-1
	palette color.Palette
	shapes  []shape
}

// newPicture draws a picture of w x h pixels from r.
func newPicture(r *rand.ChaCha8, w, h int) *picture {
	p := &picture{w: w, h: h}
	p.gx = intn(r, gradientSteps)
	p.gy = gradientSteps - 1 - p.gx
	from := randomColor(r)
	to := randomColor(r)
	p.palette = make(color.Palette, 0, gradientSteps+maxShapes)
	for i := range gradientSteps {
		p.palette = append(p.palette, mix(from, to, i, gradientSteps-1))
	}
	n := between(r, 3, maxShapes)
	short := min(w, h)
	for range n {
		s := shape{circle: intn(r, 2) == 0}
		size := between(r, max(1, short/12), max(1, short/4))
		cx, cy := intn(r, w), intn(r, h)
		if s.circle {
			s.cx, s.cy, s.r2 = int64(cx), int64(cy), int64(size)*int64(size)
			s.x0, s.y0, s.x1, s.y1 = cx-size, cy-size, cx+size+1, cy+size+1
		} else {
			hw, hh := size, between(r, max(1, size/2), size)
			if intn(r, 2) == 0 {
				hw, hh = hh, hw
			}
			s.x0, s.y0, s.x1, s.y1 = cx-hw, cy-hh, cx+hw, cy+hh
		}
		s.x0, s.y0 = max(s.x0, 0), max(s.y0, 0)
		s.x1, s.y1 = min(s.x1, w), min(s.y1, h)
		p.shapes = append(p.shapes, s)
		p.palette = append(p.palette, randomColor(r))
	}
	return p
}

// randomColor draws an opaque colour whose channels avoid the extremes.
func randomColor(r *rand.ChaCha8) color.RGBA {
	return color.RGBA{R: uint8(between(r, 16, 240)), G: uint8(between(r, 16, 240)), B: uint8(between(r, 16, 240)), A: 255}
}

// mix returns the colour i/n of the way from a to b.
func mix(a, b color.RGBA, i, n int) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8((int(x)*(n-i) + int(y)*i) / n) }
	return color.RGBA{R: f(a.R, b.R), G: f(a.G, b.G), B: f(a.B, b.B), A: 255}
}

// paint draws the picture into a paletted image. A row of the gradient is the row of column
// terms (x*gx/w, the same for every row) plus the row's own term; a circle covers, on each row it
// crosses, one run of pixels, whose half-width is the integer square root of r2-dy*dy: every
// pixel gets the index the per-pixel formulas give, with one division per column instead of per
// pixel and no per-pixel test.
func (p *picture) paint() *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, p.w, p.h), p.palette)
	cols := make([]uint8, p.w)
	for x := range cols {
		cols[x] = uint8(x * p.gx / p.w)
	}
	for y := 0; y < p.h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+p.w]
		ty := uint8(y * p.gy / p.h) // x*gx/w + y*gy/h <= gradientSteps-1: the sum never wraps
		for x, c := range cols {
			row[x] = c + ty
		}
	}
	for i, s := range p.shapes {
		idx := uint8(gradientSteps + i)
		for y := s.y0; y < s.y1; y++ {
			x0, x1 := s.x0, s.x1
			if s.circle {
				dy := int64(y) - s.cy
				rest := s.r2 - dy*dy
				if rest < 0 {
					continue
				}
				half := isqrt(rest) // dx*dx <= rest exactly when |dx| <= half
				x0, x1 = max(x0, int(s.cx-half)), min(x1, int(s.cx+half)+1)
			}
			if x0 >= x1 {
				continue
			}
			row := img.Pix[y*img.Stride+x0 : y*img.Stride+x1]
			for x := range row {
				row[x] = idx
			}
		}
	}
	return img
}

// isqrt is the largest r with r*r <= n (n >= 0).
func isqrt(n int64) int64 {
	r := int64(math.Sqrt(float64(n)))
	for r*r > n {
		r--
	}
	for (r+1)*(r+1) <= n {
		r++
	}
	return r
}

// renderImage makes a PNG of exactly the requested size (each side clamped
// to MaxImageSide): paletted (8 bits per pixel), encoded with
// png.BestSpeed, so a 1024x1024 image is a few tens of kilobytes.
func renderImage(req Request) (Output, error) {
	if err := checkSize(req.Width, req.Height); err != nil {
		return Output{}, err
	}
	w, h := min(req.Width, MaxImageSide), min(req.Height, MaxImageSide)
	img := newPicture(stream(req), w, h).paint()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngBuffers}
	if err := enc.Encode(&buf, img); err != nil {
		return Output{}, fmt.Errorf("render: encode png: %w", err)
	}
	return Output{
		ContentType: ContentTypePNG,
		FileName:    FileName(req.CapabilityID, req.Index, "png"),
		Bytes:       buf.Bytes(),
		Width:       w,
		Height:      h,
	}, nil
}

// pngBuffers lends the PNG encoder's row buffers and zlib writer from one image to the next (a
// zlib writer at BestSpeed is about 1 MB to make); safe for concurrent use.
var pngBuffers pngPool

type pngPool struct{ p sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer  { b, _ := p.p.Get().(*png.EncoderBuffer); return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }
