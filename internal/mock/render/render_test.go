package render

import (
	"bytes"
	"errors"
	"reflect"
	"sync"
	"testing"
)

// sampleRequests covers every kind with small sizes.
func sampleRequests() []Request {
	return []Request{
		{Seed: 7, Kind: KindImage, Width: 96, Height: 64, Text: "a ceramic mug", CapabilityID: "image_fast"},
		{Seed: 7, Kind: KindVideo, Width: 64, Height: 48, DurationMS: 1000, Text: "a beach", CapabilityID: "video_fast"},
		{Seed: 7, Kind: KindAudio, DurationMS: 1500, Text: "Meet the bottle that keeps coffee hot", CapabilityID: "tts"},
		{Seed: 7, Kind: KindText, Text: "A 30 second ad for an insulated coffee bottle", CapabilityID: "ad_script_writer"},
		{Seed: 7, Kind: KindText, JSON: true, Text: "Insulated coffee bottle", CapabilityID: "hook_ideas"},
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, req := range sampleRequests() {
		t.Run(req.CapabilityID, func(t *testing.T) {
			a, err := Render(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Render(req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatal("two renders of the same request differ")
			}
			for name, change := range map[string]func(*Request){
				"seed":  func(r *Request) { r.Seed++ },
				"index": func(r *Request) { r.Index++ },
				"text":  func(r *Request) { r.Text += " now with more words" },
			} {
				other := req
				change(&other)
				c, err := Render(other)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(a.Bytes, c.Bytes) {
					t.Errorf("changing the %s did not change the bytes", name)
				}
			}
		})
	}
}

func TestRenderIsDeterministicConcurrently(t *testing.T) {
	reqs := sampleRequests()
	want := make([]Output, len(reqs))
	for i, req := range reqs {
		o, err := Render(req)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = o
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(reqs))
	for range 4 {
		for i, req := range reqs {
			wg.Go(func() {
				o, err := Render(req)
				if err != nil || !reflect.DeepEqual(o, want[i]) {
					errs <- req.CapabilityID
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for id := range errs {
		t.Errorf("concurrent render of %s differs", id)
	}
}

func TestRenderRefusesInvalidRequests(t *testing.T) {
	for name, req := range map[string]Request{
		"unknown kind":       {Kind: "hologram", Width: 10, Height: 10, DurationMS: 10},
		"empty kind":         {},
		"image zero width":   {Kind: KindImage, Width: 0, Height: 10},
		"image neg height":   {Kind: KindImage, Width: 10, Height: -1},
		"video zero size":    {Kind: KindVideo, DurationMS: 1000},
		"video zero length":  {Kind: KindVideo, Width: 64, Height: 64},
		"audio zero length":  {Kind: KindAudio},
		"audio neg duration": {Kind: KindAudio, DurationMS: -5},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Render(req)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want ErrInvalidRequest", err)
			}
		})
	}
}

func TestFileName(t *testing.T) {
	for _, c := range []struct {
		id    string
		index int
		ext   string
		want  string
	}{
		{"image_fast", 0, "png", "image_fast_0.png"},
		{"video_fast", 3, "mp4", "video_fast_3.mp4"},
		{"", 1, "wav", "output_1.wav"},
		{"../Evil Name/x", 0, "txt", "evilnamex_0.txt"},
	} {
		if got := FileName(c.id, c.index, c.ext); got != c.want {
			t.Errorf("FileName(%q, %d, %q) = %q, want %q", c.id, c.index, c.ext, got, c.want)
		}
	}
	for _, req := range sampleRequests() {
		o, err := Render(req)
		if err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{ContentTypePNG: "png", ContentTypeMP4: "mp4", ContentTypeWAV: "wav", ContentTypeText: "txt", ContentTypeJSON: "json"}[o.ContentType]
		if want := FileName(req.CapabilityID, req.Index, ext); o.FileName != want {
			t.Errorf("%s: file name %q, want %q", req.CapabilityID, o.FileName, want)
		}
	}
}
