package render

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/Eyevinn/mp4ff/avc"
	"github.com/Eyevinn/mp4ff/mp4"
)

// videoCases are the sizes the MP4 tests render; want is the size the
// renderer must report (odd sides rounded up, oversize frames scaled).
var videoCases = []struct {
	name         string
	w, h         int
	ms           int64
	wantW, wantH int
	wantMS       int64
}{
	{"64x64 1s", 64, 64, 1000, 64, 64, 1000},
	{"320x240 3s", 320, 240, 3000, 320, 240, 3000},
	{"1080x1920 portrait 2s", 1080, 1920, 2000, 1080, 1920, 2000},
	{"odd 33x17 1234ms", 33, 17, 1234, 34, 18, 1234},
	{"tiny 2x2 1ms", 2, 2, 1, 2, 2, 1},
	{"16x16 one frame", 16, 16, 200, 16, 16, 200},
	{"1680x720 wide 2.5s", 1680, 720, 2500, 1680, 720, 2500},
	{"3840x2160 1s", 3840, 2160, 1000, 3840, 2160, 1000},
}

func renderVideoCase(t testing.TB, w, h int, ms int64) Output {
	t.Helper()
	o, err := Render(Request{Seed: 42, Kind: KindVideo, Width: w, Height: h, DurationMS: ms, Text: "a golden retriever on a beach", CapabilityID: "video_fast"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestVideoSize(t *testing.T) {
	for _, c := range []struct{ w, h, wantW, wantH int }{
		{1280, 720, 1280, 720},
		{1, 1, 2, 2},
		{33, 17, 34, 18},
		{3840, 2160, 3840, 2160},
		{4095, 100, 4096, 100},
		{9000, 9000, 3072, 3072}, // 4096x4096, then scaled to fit 36864 macroblocks
		{7680, 4320, 4096, 2304}, // 8K UHD: halved to the side limit, fits exactly
		{20000, 10, 4096, 2},
		{10, 20000, 2, 4096},
		{4096, 4096, 3072, 3072},
	} {
		w, h := videoSize(c.w, c.h)
		if w != c.wantW || h != c.wantH {
			t.Errorf("videoSize(%d, %d) = %dx%d, want %dx%d", c.w, c.h, w, h, c.wantW, c.wantH)
		}
		if mbs := ((w + 15) / 16) * ((h + 15) / 16); mbs > MaxVideoMacroblocks || w%2 != 0 || h%2 != 0 {
			t.Errorf("videoSize(%d, %d) = %dx%d: %d macroblocks or odd side", c.w, c.h, w, h, mbs)
		}
	}
}

func TestVideoFrames(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want []uint32
	}{
		{1, []uint32{1}},
		{200, []uint32{200}},
		{201, []uint32{200, 1}},
		{1000, []uint32{200, 200, 200, 200, 200}},
		{1234, []uint32{200, 200, 200, 200, 200, 200, 34}},
	} {
		if got := videoFrames(c.ms); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("videoFrames(%d) = %v, want %v", c.ms, got, c.want)
		}
	}
}

// TestVideoMP4Structure parses each file back with mp4ff: one video track,
// an avc1 entry whose SPS states the size, durations in the millisecond
// timescale, one sample per frame, an IDR frame then P frames.
func TestVideoMP4Structure(t *testing.T) {
	for _, c := range videoCases {
		t.Run(c.name, func(t *testing.T) {
			o := renderVideoCase(t, c.w, c.h, c.ms)
			if o.ContentType != ContentTypeMP4 || o.Width != c.wantW || o.Height != c.wantH || o.DurationMS != c.wantMS {
				t.Fatalf("output %q %dx%d %d ms, want %dx%d %d ms", o.ContentType, o.Width, o.Height, o.DurationMS, c.wantW, c.wantH, c.wantMS)
			}
			f, err := mp4.DecodeFile(bytes.NewReader(o.Bytes))
			if err != nil {
				t.Fatal(err)
			}
			if f.Moov == nil || f.Mdat == nil || f.Moov.Mvex != nil {
				t.Fatal("not a progressive file with moov and mdat")
			}
			if n := len(f.Moov.Traks); n != 1 {
				t.Fatalf("%d tracks, want 1", n)
			}
			trak := f.Moov.Trak
			if trak.Mdia.Hdlr.HandlerType != "vide" {
				t.Errorf("handler %q, want vide", trak.Mdia.Hdlr.HandlerType)
			}
			stbl := trak.Mdia.Minf.Stbl
			entry := stbl.Stsd.AvcX
			if entry == nil || entry.Type() != "avc1" || entry.AvcC == nil {
				t.Fatal("no avc1 sample entry with avcC")
			}
			if int(entry.Width) != c.wantW || int(entry.Height) != c.wantH {
				t.Errorf("avc1 size %dx%d", entry.Width, entry.Height)
			}
			sps, err := avc.ParseSPSNALUnit(entry.AvcC.SPSnalus[0], true)
			if err != nil {
				t.Fatal(err)
			}
			if int(sps.Width) != c.wantW || int(sps.Height) != c.wantH || sps.Profile != 66 {
				t.Errorf("SPS: profile %d, %dx%d", sps.Profile, sps.Width, sps.Height)
			}
			pps, err := avc.ParsePPSNALUnit(entry.AvcC.PPSnalus[0], map[uint32]*avc.SPS{0: sps})
			if err != nil {
				t.Fatal(err)
			}
			if ts := trak.Mdia.Mdhd.Timescale; ts != 1000 {
				t.Errorf("mdhd timescale %d, want 1000", ts)
			}
			frames := videoFrames(c.wantMS)
			for name, d := range map[string]uint64{"mdhd": trak.Mdia.Mdhd.Duration, "tkhd": trak.Tkhd.Duration, "mvhd": f.Moov.Mvhd.Duration * 1000 / uint64(f.Moov.Mvhd.Timescale)} {
				if int64(d) != c.wantMS {
					t.Errorf("%s duration %d ms, want %d", name, d, c.wantMS)
				}
			}
			n := trak.GetNrSamples()
			if int(n) != len(frames) {
				t.Fatalf("%d samples, want %d", n, len(frames))
			}
			samples, err := trak.GetSampleData(1, n)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for i, s := range samples {
				total += int64(s.Dur)
				if sync := s.Flags&(1<<16) == 0; sync != (i == 0) {
					t.Errorf("sample %d: sync %v", i+1, sync)
				}
			}
			if total != c.wantMS {
				t.Errorf("sample durations add up to %d ms, want %d", total, c.wantMS)
			}
			ranges, err := trak.GetRangesForSampleInterval(1, n)
			if err != nil {
				t.Fatal(err)
			}
			var data []byte
			for _, r := range ranges {
				data = append(data, o.Bytes[r.Offset:r.Offset+r.Size]...)
			}
			spsMap, ppsMap := map[uint32]*avc.SPS{0: sps}, map[uint32]*avc.PPS{0: pps}
			for i, s := range samples {
				sample := data[:s.Size]
				data = data[s.Size:]
				size := binary.BigEndian.Uint32(sample)
				if int(size) != len(sample)-4 {
					t.Fatalf("sample %d: NAL length %d in a %d-byte sample", i+1, size, len(sample))
				}
				sh, err := avc.ParseSliceHeader(sample[4:], spsMap, ppsMap)
				if err != nil {
					t.Fatalf("sample %d: %v", i+1, err)
				}
				wantType := avc.SLICE_P + 5 // P, every slice of the picture
				if i == 0 {
					wantType = avc.SLICE_I + 5
					if !avc.IsIDRSample(sample) {
						t.Error("first sample is not IDR")
					}
				}
				if sh.SliceType != wantType || sh.FrameNum != uint32(i) || sh.DisableDeblockingFilterIDC != 1 {
					t.Errorf("sample %d: slice %v frame_num %d deblocking %d", i+1, sh.SliceType, sh.FrameNum, sh.DisableDeblockingFilterIDC)
				}
			}
		})
	}
}

func TestVideoIsSmall(t *testing.T) {
	o := renderVideoCase(t, 1920, 1080, 60_000)
	if len(o.Bytes) > 256<<10 {
		t.Errorf("a 1080p minute is %d bytes, want under 256 KiB", len(o.Bytes))
	}
}

func TestVideoDurationClamp(t *testing.T) {
	o := renderVideoCase(t, 32, 32, MaxVideoDuration+5000)
	if o.DurationMS != MaxVideoDuration {
		t.Errorf("duration %d, want %d", o.DurationMS, MaxVideoDuration)
	}
}

// tools returns the paths of ffprobe and ffmpeg, skipping the test when
// either is missing.
func tools(t *testing.T) (ffprobe, ffmpeg string) {
	t.Helper()
	ffprobe, err := exec.LookPath("ffprobe")
	if err != nil {
		t.Skip("ffprobe is not on PATH: install ffmpeg to check the MP4 files with a real decoder")
	}
	ffmpeg, err = exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg is not on PATH: install ffmpeg to check the MP4 files with a real decoder")
	}
	return ffprobe, ffmpeg
}

// TestVideoFFprobe checks every case with ffprobe (codec, size, duration)
// and decodes it fully with ffmpeg, which must print no error.
func TestVideoFFprobe(t *testing.T) {
	ffprobe, ffmpeg := tools(t)
	dir := t.TempDir()
	for i, c := range videoCases {
		t.Run(c.name, func(t *testing.T) {
			o := renderVideoCase(t, c.w, c.h, c.ms)
			path := filepath.Join(dir, strconv.Itoa(i)+".mp4")
			if err := os.WriteFile(path, o.Bytes, 0o600); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(ffprobe, "-v", "error", "-show_streams", "-show_format", "-of", "json", path)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("ffprobe: %v: %s", err, stderr.String())
			}
			var probe struct {
				Streams []struct {
					CodecType string `json:"codec_type"`
					CodecName string `json:"codec_name"`
					Width     int    `json:"width"`
					Height    int    `json:"height"`
					Duration  string `json:"duration"`
					NbFrames  string `json:"nb_frames"`
				} `json:"streams"`
				Format struct {
					Duration string `json:"duration"`
				} `json:"format"`
			}
			if err := json.Unmarshal(out, &probe); err != nil {
				t.Fatal(err)
			}
			if len(probe.Streams) != 1 {
				t.Fatalf("%d streams, want 1", len(probe.Streams))
			}
			s := probe.Streams[0]
			if s.CodecType != "video" || s.CodecName != "h264" || s.Width != c.wantW || s.Height != c.wantH {
				t.Errorf("stream %s %s %dx%d, want video h264 %dx%d", s.CodecType, s.CodecName, s.Width, s.Height, c.wantW, c.wantH)
			}
			if s.NbFrames != strconv.Itoa(len(videoFrames(c.wantMS))) {
				t.Errorf("nb_frames %s, want %d", s.NbFrames, len(videoFrames(c.wantMS)))
			}
			for name, d := range map[string]string{"stream": s.Duration, "format": probe.Format.Duration} {
				sec, err := strconv.ParseFloat(d, 64)
				if err != nil {
					t.Fatalf("%s duration %q: %v", name, d, err)
				}
				if diff := sec*1000 - float64(c.wantMS); diff > 200 || diff < -200 {
					t.Errorf("%s duration %s s, want %d ms within one frame", name, d, c.wantMS)
				}
			}
			stderr.Reset()
			cmd = exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", path, "-f", "null", "-")
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil || stderr.Len() > 0 {
				t.Fatalf("ffmpeg decode: %v: %s", err, stderr.String())
			}
		})
	}
}

// TestVideoDecodesToTheModel decodes every frame with ffmpeg and compares
// it, sample for sample, with a model of the H.264 decoding process written
// independently of the encoder: I_PCM macroblocks hold their samples,
// I_16x16 DC macroblocks the rounded mean of their neighbours (8.3.3 and
// 8.3.4), and P_Skip frames repeat the IDR frame.
func TestVideoDecodesToTheModel(t *testing.T) {
	_, ffmpeg := tools(t)
	dir := t.TempDir()
	for i, c := range videoCases[:5] {
		t.Run(c.name, func(t *testing.T) {
			o := renderVideoCase(t, c.w, c.h, c.ms)
			path := filepath.Join(dir, strconv.Itoa(i)+".mp4")
			if err := os.WriteFile(path, o.Bytes, 0o600); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
			cmd.Stderr = &stderr
			raw, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("ffmpeg: %v: %s", err, stderr.String())
			}
			want := modelFrame(c.wantW, c.wantH, Request{Seed: 42, Kind: KindVideo, Width: c.w, Height: c.h, DurationMS: c.ms, Text: "a golden retriever on a beach", CapabilityID: "video_fast"})
			frames := len(videoFrames(c.wantMS))
			if len(raw) != frames*len(want) {
				t.Fatalf("decoded %d bytes, want %d frames of %d", len(raw), frames, len(want))
			}
			for f := range frames {
				got := raw[f*len(want) : (f+1)*len(want)]
				if !bytes.Equal(got, want) {
					for j := range got {
						if got[j] != want[j] {
							t.Fatalf("frame %d differs from the model first at byte %d: %d, want %d", f, j, got[j], want[j])
						}
					}
				}
			}
		})
	}
}

// modelFrame returns the planar yuv420p frame (cropped to w x h) that a
// conforming decoder outputs for the IDR picture of req.
func modelFrame(w, h int, req Request) []byte {
	par := newH264Params(w, h)
	pic := newVideoPicture(stream(req), par.wMB, par.hMB)
	cw, ch := par.wMB*16, par.hMB*16
	planes := [3][]byte{make([]byte, cw*ch), make([]byte, cw*ch/4), make([]byte, cw*ch/4)}
	strides := [3]int{cw, cw / 2, cw / 2}
	for my := range par.hMB {
		for mx := range par.wMB {
			kind := pic.kinds[my*par.wMB+mx]
			if kind != mbDC {
				s := pic.pcm(mx, my, kind)
				for y := range 16 {
					copy(planes[0][(my*16+y)*cw+mx*16:], s[y*16:y*16+16])
				}
				for y := range 8 {
					copy(planes[1][(my*8+y)*cw/2+mx*8:], s[256+y*8:256+y*8+8])
					copy(planes[2][(my*8+y)*cw/2+mx*8:], s[320+y*8:320+y*8+8])
				}
				continue
			}
			// Every DC macroblock of this encoder has both neighbours.
			for p, n := range [3]int{16, 8, 8} {
				pl, st := planes[p], strides[p]
				x0, y0 := mx*n, my*n
				top := func(i int) int { return int(pl[(y0-1)*st+x0+i]) }
				left := func(i int) int { return int(pl[(y0+i)*st+x0-1]) }
				fill := func(bx, by, size int, v int) {
					for y := range size {
						for x := range size {
							pl[(y0+by+y)*st+x0+bx+x] = byte(v)
						}
					}
				}
				if n == 16 { // luma, 8.3.3.3
					sum := 16
					for i := range 16 {
						sum += top(i) + left(i)
					}
					fill(0, 0, 16, sum>>5)
					continue
				}
				// chroma, 8.3.4.1-3: per 4x4 block
				sum := func(f func(int) int, from int) int { return f(from) + f(from+1) + f(from+2) + f(from+3) }
				fill(0, 0, 4, (sum(top, 0)+sum(left, 0)+4)>>3)
				fill(4, 0, 4, (sum(top, 4)+2)>>2)
				fill(0, 4, 4, (sum(left, 4)+2)>>2)
				fill(4, 4, 4, (sum(top, 4)+sum(left, 4)+4)>>3)
			}
		}
	}
	out := make([]byte, 0, w*h*3/2)
	for y := range h {
		out = append(out, planes[0][y*cw:y*cw+w]...)
	}
	for p := 1; p < 3; p++ {
		for y := range h / 2 {
			out = append(out, planes[p][y*cw/2:y*cw/2+w/2]...)
		}
	}
	return out
}
