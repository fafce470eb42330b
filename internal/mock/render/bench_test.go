package render

import "testing"

func BenchmarkRenderImage(b *testing.B) {
	req := Request{Seed: 1, Kind: KindImage, Width: 1024, Height: 1024, Text: "a ceramic mug", CapabilityID: "image_fast"}
	for b.Loop() {
		o, err := Render(req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(o.Bytes)))
	}
}

func BenchmarkRenderVideo(b *testing.B) {
	req := Request{Seed: 1, Kind: KindVideo, Width: 1280, Height: 720, DurationMS: 10_000, Text: "a beach", CapabilityID: "video_fast"}
	for b.Loop() {
		o, err := Render(req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(o.Bytes)))
	}
}

func BenchmarkRenderAudio(b *testing.B) {
	req := Request{Seed: 1, Kind: KindAudio, DurationMS: 10_000, Text: "meet the bottle that keeps coffee hot", CapabilityID: "tts"}
	for b.Loop() {
		if _, err := Render(req); err != nil {
			b.Fatal(err)
		}
	}
}
