package render

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

func TestImageIsPNGOfExactSize(t *testing.T) {
	for _, c := range []struct{ w, h, wantW, wantH int }{
		{1, 1, 1, 1},
		{17, 5, 17, 5},
		{1024, 1024, 1024, 1024},
		{768, 1344, 768, 1344},
		{5000, 300, MaxImageSide, 300},
	} {
		o, err := Render(Request{Seed: 3, Kind: KindImage, Width: c.w, Height: c.h, Text: "mug", CapabilityID: "image_fast"})
		if err != nil {
			t.Fatal(err)
		}
		if o.ContentType != ContentTypePNG || o.DurationMS != 0 || o.Text != "" || o.Result != nil {
			t.Errorf("%dx%d: unexpected output fields %+v", c.w, c.h, o)
		}
		if o.Width != c.wantW || o.Height != c.wantH {
			t.Errorf("%dx%d: output says %dx%d, want %dx%d", c.w, c.h, o.Width, o.Height, c.wantW, c.wantH)
		}
		img, err := png.Decode(bytes.NewReader(o.Bytes))
		if err != nil {
			t.Fatalf("%dx%d: decode: %v", c.w, c.h, err)
		}
		if got := img.Bounds(); got != image.Rect(0, 0, c.wantW, c.wantH) {
			t.Errorf("%dx%d: decoded bounds %v", c.w, c.h, got)
		}
	}
}

func TestImageHasAPattern(t *testing.T) {
	o, err := Render(Request{Seed: 11, Kind: KindImage, Width: 256, Height: 256, Text: "pattern"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(o.Bytes))
	if err != nil {
		t.Fatal(err)
	}
	colors := map[[4]uint32]bool{}
	for y := 0; y < 256; y += 4 {
		for x := 0; x < 256; x += 4 {
			r, g, b, a := img.At(x, y).RGBA()
			colors[[4]uint32{r, g, b, a}] = true
		}
	}
	if len(colors) < 20 {
		t.Fatalf("only %d distinct colours: no gradient", len(colors))
	}
	if len(o.Bytes) > 64<<10 {
		t.Errorf("256x256 image is %d bytes, want a small file", len(o.Bytes))
	}
}
