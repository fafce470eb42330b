package render

import (
	"math/bits"
	"math/rand/v2"
)

// This file is a tiny H.264 encoder (ITU-T H.264, Constrained Baseline
// profile, CAVLC). It never transforms or quantises anything:
//
//   - The first picture is an IDR picture with one I slice. Macroblocks that
//     carry picture content are I_PCM (raw 4:2:0 samples); every other
//     macroblock is I_16x16 with DC prediction and no residual
//     (mb_type I_16x16_2_0_0), so the decoder fills it with the mean of its
//     upper and left neighbours. The top macroblock row and the left
//     macroblock column are I_PCM (a two-colour gradient); a few rectangles
//     are drawn by making their top row and left column I_PCM in a solid
//     colour, which DC prediction then floods into their inside (and, fading,
//     a little beyond). The IDR picture therefore costs 384 bytes per I_PCM
//     macroblock and about one byte per other macroblock, whatever the size.
//   - Every later picture is a P slice whose mb_skip_run covers the whole
//     picture: each macroblock is P_Skip with a zero motion vector, an exact
//     copy of the previous picture, a few bytes each.
//
// Deblocking is disabled (disable_deblocking_filter_idc 1), so the decoded
// pictures are exactly the samples and predictions described above. Picture
// order count type 2 (output order = decoding order) keeps slice headers
// free of order counts; every picture is a reference picture (two
// consecutive non-reference pictures are not allowed with type 2) and
// max_num_ref_frames is 1.

// log2MaxFrameNum is log2(MaxFrameNum); 16 bits means frame_num never wraps
// within MaxVideoDuration.
const log2MaxFrameNum = 16

// bitWriter writes an RBSP most significant bit first.
type bitWriter struct {
	buf   []byte
	cur   byte
	nbits int // bits used in cur
}

func (w *bitWriter) bit(b uint) {
	w.cur = w.cur<<1 | byte(b&1)
	w.nbits++
	if w.nbits == 8 {
		w.buf = append(w.buf, w.cur)
		w.cur, w.nbits = 0, 0
	}
}

// u writes v in n bits (u(n)).
func (w *bitWriter) u(n int, v uint64) {
	for i := n - 1; i >= 0; i-- {
		w.bit(uint(v >> uint(i)))
	}
}

// ue writes v as an unsigned Exp-Golomb code (ue(v)).
func (w *bitWriter) ue(v uint64) {
	n := bits.Len64(v + 1)
	w.u(n-1, 0)
	w.u(n, v+1)
}

// se writes v as a signed Exp-Golomb code (se(v)).
func (w *bitWriter) se(v int64) {
	if v > 0 {
		w.ue(uint64(2*v - 1))
	} else {
		w.ue(uint64(-2 * v))
	}
}

// align writes zero bits up to the next byte boundary.
func (w *bitWriter) align() {
	for w.nbits != 0 {
		w.bit(0)
	}
}

// bytes appends whole bytes; the writer must be byte aligned.
func (w *bitWriter) bytes(b []byte) {
	w.buf = append(w.buf, b...)
}

// trailing writes rbsp_trailing_bits and returns the RBSP.
func (w *bitWriter) trailing() []byte {
	w.bit(1)
	w.align()
	return w.buf
}

// nalUnit wraps an RBSP into a NAL unit (without start code or length):
// the one-byte header, then the payload with emulation prevention bytes
// (0x03 after two zero bytes when the next byte is 0x00..0x03).
func nalUnit(refIdc, nalType byte, rbsp []byte) []byte {
	out := make([]byte, 0, len(rbsp)+len(rbsp)/64+2)
	out = append(out, refIdc<<5|nalType)
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// NAL unit types and reference priorities used.
const (
	nalSlice = 1
	nalIDR   = 5
	nalSPS   = 7
	nalPPS   = 8
)

// Macroblock kinds of the IDR picture.
const (
	mbDC       = 0 // I_16x16, DC prediction, no residual
	mbGradient = 1 // I_PCM sampled from the background gradient
	// mbSolid+k: I_PCM in solid colour k
	mbSolid = 2
)

// yuv is one colour in 8-bit BT.601 limited range; no component is 0, as
// early editions of H.264 require of I_PCM samples.
type yuv struct{ y, u, v uint8 }

// toYUV converts an RGB colour (BT.601, limited range, integer formulas).
func toYUV(r, g, b uint8) yuv {
	R, G, B := int(r), int(g), int(b)
	return yuv{
		y: uint8(((66*R + 129*G + 25*B + 128) >> 8) + 16),
		u: uint8(((-38*R - 74*G + 112*B + 128) >> 8) + 128),
		v: uint8(((112*R - 94*G - 18*B + 128) >> 8) + 128),
	}
}

// videoPicture is the content of the IDR picture, in macroblocks.
type videoPicture struct {
	wMB, hMB int
	gx, gy   int        // gradient weights along x and y (sum gradientSteps-1)
	grad     []yuv      // gradientSteps colours
	solid    []yuv      // rectangle colours
	kinds    []int      // per macroblock, raster order: mbDC, mbGradient or mbSolid+k
	scratch  [384]uint8 // one I_PCM macroblock
}

// newVideoPicture draws the picture of a wMB x hMB macroblock frame from r.
func newVideoPicture(r *rand.ChaCha8, wMB, hMB int) *videoPicture {
	p := &videoPicture{wMB: wMB, hMB: hMB}
	p.gx = intn(r, gradientSteps)
	p.gy = gradientSteps - 1 - p.gx
	from, to := randomColor(r), randomColor(r)
	p.grad = make([]yuv, gradientSteps)
	for i := range p.grad {
		c := mix(from, to, i, gradientSteps-1)
		p.grad[i] = toYUV(c.R, c.G, c.B)
	}
	p.kinds = make([]int, wMB*hMB)
	for x := range wMB {
		p.kinds[x] = mbGradient
	}
	for y := range hMB {
		p.kinds[y*wMB] = mbGradient
	}
	if wMB < 2 || hMB < 2 {
		return p
	}
	for k := range between(r, 2, 4) {
		c := randomColor(r)
		p.solid = append(p.solid, toYUV(c.R, c.G, c.B))
		x0, y0 := between(r, 1, wMB-1), between(r, 1, hMB-1)
		x1 := min(wMB, x0+between(r, 1, max(1, wMB/4)))
		y1 := min(hMB, y0+between(r, 1, max(1, hMB/4)))
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				kind := mbDC
				if y == y0 || x == x0 {
					kind = mbSolid + k
				}
				p.kinds[y*wMB+x] = kind
			}
		}
	}
	return p
}

// gradientAt returns the background colour at coded-frame pixel (x, y).
func (p *videoPicture) gradientAt(x, y int) yuv {
	return p.grad[x*p.gx/(16*p.wMB)+y*p.gy/(16*p.hMB)]
}

// pcm fills p.scratch with the I_PCM samples of macroblock (mx, my) of kind
// kind: 256 luma samples in raster order, then 64 Cb and 64 Cr.
func (p *videoPicture) pcm(mx, my, kind int) []byte {
	s := p.scratch[:]
	if kind >= mbSolid {
		c := p.solid[kind-mbSolid]
		for i := range 256 {
			s[i] = c.y
		}
		for i := range 64 {
			s[256+i], s[320+i] = c.u, c.v
		}
		return s
	}
	for y := range 16 {
		for x := range 16 {
			s[y*16+x] = p.gradientAt(mx*16+x, my*16+y).y
		}
	}
	for y := range 8 {
		for x := range 8 {
			c := p.gradientAt(mx*16+2*x, my*16+2*y)
			s[256+y*8+x], s[320+y*8+x] = c.u, c.v
		}
	}
	return s
}

// h264Params are the sequence-level choices of one stream.
type h264Params struct {
	width, height int // display size (even)
	wMB, hMB      int
}

func newH264Params(width, height int) h264Params {
	return h264Params{width: width, height: height, wMB: (width + 15) / 16, hMB: (height + 15) / 16}
}

// level returns level_idc for the frame size (MaxFS of Table A-1; the
// frame rate is far below every level's macroblock rate).
func (p h264Params) level() uint64 {
	switch n := p.wMB * p.hMB; {
	case n <= 396:
		return 21 // 2.1
	case n <= 1620:
		return 30
	case n <= 3600:
		return 31
	case n <= 5120:
		return 32
	case n <= 8192:
		return 40
	case n <= 22080:
		return 50
	default:
		return 51
	}
}

// sps returns the sequence parameter set NAL unit.
func (p h264Params) sps() []byte {
	var w bitWriter
	w.u(8, 66)        // profile_idc: Baseline
	w.u(1, 1)         // constraint_set0_flag
	w.u(1, 1)         // constraint_set1_flag: Constrained Baseline
	w.u(6, 0)         // constraint_set2..5_flag, reserved_zero_2bits
	w.u(8, p.level()) // level_idc
	w.ue(0)           // seq_parameter_set_id
	w.ue(log2MaxFrameNum - 4)
	w.ue(2) // pic_order_cnt_type
	w.ue(1) // max_num_ref_frames
	w.u(1, 0)
	w.ue(uint64(p.wMB - 1))                                     // pic_width_in_mbs_minus1
	w.ue(uint64(p.hMB - 1))                                     // pic_height_in_map_units_minus1
	w.u(1, 1)                                                   // frame_mbs_only_flag
	w.u(1, 1)                                                   // direct_8x8_inference_flag
	cropR, cropB := (p.wMB*16-p.width)/2, (p.hMB*16-p.height)/2 // CropUnitX = CropUnitY = 2
	if cropR != 0 || cropB != 0 {
		w.u(1, 1) // frame_cropping_flag
		w.ue(0)
		w.ue(uint64(cropR))
		w.ue(0)
		w.ue(uint64(cropB))
	} else {
		w.u(1, 0)
	}
	w.u(1, 0) // vui_parameters_present_flag
	return nalUnit(3, nalSPS, w.trailing())
}

// pps returns the picture parameter set NAL unit.
func (p h264Params) pps() []byte {
	var w bitWriter
	w.ue(0)   // pic_parameter_set_id
	w.ue(0)   // seq_parameter_set_id
	w.u(1, 0) // entropy_coding_mode_flag: CAVLC
	w.u(1, 0) // bottom_field_pic_order_in_frame_present_flag
	w.ue(0)   // num_slice_groups_minus1
	w.ue(0)   // num_ref_idx_l0_default_active_minus1
	w.ue(0)   // num_ref_idx_l1_default_active_minus1
	w.u(1, 0) // weighted_pred_flag
	w.u(2, 0) // weighted_bipred_idc
	w.se(0)   // pic_init_qp_minus26
	w.se(0)   // pic_init_qs_minus26
	w.se(0)   // chroma_qp_index_offset
	w.u(1, 1) // deblocking_filter_control_present_flag
	w.u(1, 0) // constrained_intra_pred_flag
	w.u(1, 0) // redundant_pic_cnt_present_flag
	return nalUnit(3, nalPPS, w.trailing())
}

// idr returns the IDR slice NAL unit of picture pic.
func (p h264Params) idr(pic *videoPicture) []byte {
	var w bitWriter
	w.buf = make([]byte, 0, 64+400*(p.wMB+p.hMB))
	w.ue(0)                 // first_mb_in_slice
	w.ue(7)                 // slice_type: I (all slices)
	w.ue(0)                 // pic_parameter_set_id
	w.u(log2MaxFrameNum, 0) // frame_num
	w.ue(0)                 // idr_pic_id
	w.u(1, 0)               // no_output_of_prior_pics_flag
	w.u(1, 0)               // long_term_reference_flag
	w.se(0)                 // slice_qp_delta
	w.ue(1)                 // disable_deblocking_filter_idc
	for my := range p.hMB {
		for mx := range p.wMB {
			kind := pic.kinds[my*p.wMB+mx]
			if kind != mbDC {
				w.ue(25) // mb_type I_PCM
				w.align()
				w.bytes(pic.pcm(mx, my, kind))
				continue
			}
			w.ue(3) // mb_type I_16x16_2_0_0: DC prediction, no coded residual
			w.ue(0) // intra_chroma_pred_mode: DC
			w.se(0) // mb_qp_delta
			// Intra16x16DCLevel: coeff_token for TotalCoeff 0, TrailingOnes 0
			// in the table chosen by nC (9.2.1). Only I_PCM neighbours count
			// (nN = 16); DC macroblocks have no coefficients (nN = 0).
			var nA, nB, avail int
			if mx > 0 {
				avail++
				if pic.kinds[my*p.wMB+mx-1] != mbDC {
					nA = 16
				}
			}
			if my > 0 {
				avail++
				if pic.kinds[(my-1)*p.wMB+mx] != mbDC {
					nB = 16
				}
			}
			nC := nA + nB
			if avail == 2 {
				nC = (nA + nB + 1) >> 1
			}
			switch {
			case nC < 2:
				w.u(1, 0b1)
			case nC < 4:
				w.u(2, 0b11)
			case nC < 8:
				w.u(4, 0b1111)
			default:
				w.u(6, 0b000011)
			}
		}
	}
	return nalUnit(3, nalIDR, w.trailing())
}

// skip returns the NAL unit of a P picture with frame_num frameNum in which
// every macroblock is P_Skip.
func (p h264Params) skip(frameNum int) []byte {
	var w bitWriter
	w.ue(0)                                                     // first_mb_in_slice
	w.ue(5)                                                     // slice_type: P (all slices)
	w.ue(0)                                                     // pic_parameter_set_id
	w.u(log2MaxFrameNum, uint64(frameNum)%(1<<log2MaxFrameNum)) // frame_num
	w.u(1, 0)                                                   // num_ref_idx_active_override_flag
	w.u(1, 0)                                                   // ref_pic_list_modification_flag_l0
	w.u(1, 0)                                                   // adaptive_ref_pic_marking_mode_flag
	w.se(0)                                                     // slice_qp_delta
	w.ue(1)                                                     // disable_deblocking_filter_idc
	w.ue(uint64(p.wMB * p.hMB))                                 // mb_skip_run
	return nalUnit(2, nalSlice, w.trailing())
}
