package render

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/Eyevinn/mp4ff/mp4"
)

// videoTimescale is the media and movie timescale: milliseconds, so every
// duration is exact.
const videoTimescale = 1000

// videoSize applies the video bounds to a requested size (both positive):
// a side longer than MaxVideoSide scales the frame down to it, a frame of
// more than MaxVideoMacroblocks macroblocks is scaled down until it fits
// (both keep the aspect ratio), and odd sides are rounded up to even.
func videoSize(w, h int) (int, int) {
	if w > MaxVideoSide || h > MaxVideoSide {
		if w >= h {
			w, h = MaxVideoSide, max(1, int(int64(h)*MaxVideoSide/int64(w)))
		} else {
			w, h = max(1, int(int64(w)*MaxVideoSide/int64(h))), MaxVideoSide
		}
	}
	even := func(v int) int { return min((v+1)&^1, MaxVideoSide) }
	mbs := func(w, h int) int { return ((w + 15) / 16) * ((h + 15) / 16) }
	// Largest scale k/1024 that fits (k = 1024: as requested).
	for k := 1024; k > 0; k-- {
		sw, sh := even(max(1, w*k/1024)), even(max(1, h*k/1024))
		if mbs(sw, sh) <= MaxVideoMacroblocks {
			return sw, sh
		}
	}
	return 2, 2 // not reached: 2x2 is one macroblock
}

// videoFrames returns the sample durations (ms) of a clip of ms
// milliseconds: frames of 1000/VideoFPS ms, the last one shortened so that
// they add up to ms exactly.
func videoFrames(ms int64) []uint32 {
	const frame = 1000 / VideoFPS
	n := (ms + frame - 1) / frame
	d := make([]uint32, n)
	for i := range d {
		d[i] = frame
	}
	d[n-1] = uint32(ms - frame*(n-1))
	return d
}

// renderVideo makes a progressive MP4 (ftyp, moov, mdat; moov first, so it
// plays while downloading) with one H.264 video track (avc1 sample entry,
// SPS and PPS in avcC, 4-byte NAL lengths): an IDR frame, then P frames that
// repeat it, VideoFPS per second, summing to exactly the (clamped) duration.
func renderVideo(req Request) (Output, error) {
	if err := checkSize(req.Width, req.Height); err != nil {
		return Output{}, err
	}
	ms, err := checkDuration(req.DurationMS, MaxVideoDuration)
	if err != nil {
		return Output{}, err
	}
	w, h := videoSize(req.Width, req.Height)
	par := newH264Params(w, h)
	pic := newVideoPicture(stream(req), par.wMB, par.hMB)
	durs := videoFrames(ms)

	samples := make([][]byte, len(durs))
	samples[0] = par.idr(pic)
	for i := 1; i < len(durs); i++ {
		samples[i] = par.skip(i) // identical but for frame_num
	}
	data, err := muxMP4(par.sps(), par.pps(), samples, durs, ms)
	if err != nil {
		return Output{}, err
	}
	return Output{
		ContentType: ContentTypeMP4,
		FileName:    FileName(req.CapabilityID, req.Index, "mp4"),
		Bytes:       data,
		Width:       w,
		Height:      h,
		DurationMS:  ms,
	}, nil
}

// muxMP4 writes a progressive MP4 with one video track whose samples are
// the given NAL units (one per sample) with durations durs (ms); total is
// their sum.
func muxMP4(sps, pps []byte, nalus [][]byte, durs []uint32, total int64) ([]byte, error) {
	ftyp := mp4.NewFtyp("isom", 0x200, []string{"isom", "iso2", "avc1", "mp41"})

	moov := mp4.NewMoovBox()
	mvhd := mp4.CreateMvhd()
	mvhd.Timescale = videoTimescale
	mvhd.Duration = uint64(total)
	moov.AddChild(mvhd)
	trak := mp4.CreateEmptyTrak(1, videoTimescale, "video", "und")
	moov.AddChild(trak)
	if err := trak.SetAVCDescriptor("avc1", [][]byte{sps}, [][]byte{pps}, true); err != nil {
		return nil, fmt.Errorf("render: avc1 sample entry: %w", err)
	}
	trak.Tkhd.Duration = uint64(total)
	trak.Mdia.Mdhd.Duration = uint64(total)

	stbl := trak.Mdia.Minf.Stbl
	for _, d := range durs {
		n := len(stbl.Stts.SampleCount)
		if n > 0 && stbl.Stts.SampleTimeDelta[n-1] == d {
			stbl.Stts.SampleCount[n-1]++
			continue
		}
		stbl.Stts.SampleCount = append(stbl.Stts.SampleCount, 1)
		stbl.Stts.SampleTimeDelta = append(stbl.Stts.SampleTimeDelta, d)
	}
	stbl.AddChild(&mp4.StssBox{SampleNumber: []uint32{1}})
	if err := stbl.Stsc.AddEntry(1, uint32(len(nalus)), 1); err != nil {
		return nil, fmt.Errorf("render: stsc: %w", err)
	}
	var size int
	for _, n := range nalus {
		stbl.Stsz.SampleSize = append(stbl.Stsz.SampleSize, uint32(4+len(n)))
		size += 4 + len(n)
	}
	stbl.Stsz.SampleNumber = uint32(len(nalus))
	stbl.Stco.ChunkOffset = []uint32{0}
	// All samples are one chunk right after the mdat header; the offset does
	// not change the size of moov, so it can be set after measuring.
	stbl.Stco.ChunkOffset[0] = uint32(ftyp.Size() + moov.Size() + 8)

	mdat := make([]byte, 0, size)
	for _, n := range nalus {
		mdat = binary.BigEndian.AppendUint32(mdat, uint32(len(n)))
		mdat = append(mdat, n...)
	}

	var buf bytes.Buffer
	buf.Grow(int(ftyp.Size()+moov.Size()) + 8 + size)
	for _, b := range []mp4.Box{ftyp, moov, &mp4.MdatBox{Data: mdat}} {
		if err := b.Encode(&buf); err != nil {
			return nil, fmt.Errorf("render: encode %s: %w", b.Type(), err)
		}
	}
	return buf.Bytes(), nil
}
