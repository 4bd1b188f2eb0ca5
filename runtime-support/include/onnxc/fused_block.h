// An inverted-residual block computed band by band (pass fuse-block):
//   expanded  = act1(W1 * x + b1)                 1x1 Conv, C_in -> C channels (the expansion)
//   depthwise = act2(depthwise k_h x k_w (expanded)) any stride, padding, dilation
//   y         = act3(W2 * depthwise + b2) [+ r]   1x1 Conv, C -> C_out (the projection), optional
// The expanded tensor (and with a projection the depthwise one) never exists whole: for each
// band of `band` depthwise output rows, the expansion computes the input rows the band reads
// into a small buffer (the rows the previous band already computed are kept: moved to the
// buffer's start, not recomputed), the depthwise kernel reads them at once, and the projection
// reads the band's depthwise rows. The buffers are sized to stay in L2 (the compiler's cost
// model, ops/fused_block.cpp), where the unfused steps wrote and re-read megabytes.
//
// The expansion and the projection are rt::packed_gemm over NCHW planes (B's rows are
// H x W apart); the depthwise band is rt::conv_depthwise_in_place over one channel's buffered
// rows, with the geometry of the band: its input rows are those buffered, and the padding above
// the band is what lies above the input's first row.
#ifndef ONNXC_FUSED_BLOCK_H
#define ONNXC_FUSED_BLOCK_H

#include "onnxc/conv.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {

struct FusedBlockParams {
  ConvParams depthwise;  // the depthwise Conv (in_channels == out_channels == group: the expanded channels)
  index_t in_channels;   // the expansion's input channels
  index_t out_channels;  // the projection's output channels; 0: no projection (y is the depthwise output)
  index_t band;          // depthwise output rows per band
  index_t tasks;         // with a parallel-for, the rows are cut into this many tasks (one scratch slot each)
};

// The operands: the expansion's and projection's weights packed by rt::pack_weights, the
// depthwise weights [C, 1, k_h, k_w] as they are; a bias may be null, and so may the residual
// (an output-shaped tensor added after the projection's activation).
struct FusedBlockOperands {
  const float* expand_w;
  const float* expand_bias;
  const float* depthwise_w;
  const float* depthwise_bias;
  const float* project_w;
  const float* project_bias;
  const float* residual;
};

struct FusedBlockEpilogues {
  Epilogue expand, depthwise, project;
};

// Input rows buffered for a band of `band` depthwise output rows.
inline index_t fused_block_band_rows(const ConvParams& p, index_t band) {
  const index_t rows = (band - 1) * p.stride_h + depthwise_span_h(p);
  return rows < p.in_h ? rows : p.in_h;
}

// Floats of one task's scratch: the band's expanded rows, and with a projection the band's
// depthwise rows; rounded up to whole 64-byte lines.
inline index_t fused_block_slot_floats(const FusedBlockParams& f) {
  const ConvParams& p = f.depthwise;
  index_t floats = p.in_channels * fused_block_band_rows(p, f.band) * p.in_w;
  if (f.out_channels) floats += p.in_channels * f.band * p.out_w;
  return (floats + 15) / 16 * 16;
}

inline index_t fused_block_scratch_floats(const FusedBlockParams& f) { return f.tasks * fused_block_slot_floats(f); }

namespace fused_block_detail {

// The input rows [begin, end) depthwise output rows [o0, o1) read, clipped to the input.
inline Range input_rows(const ConvParams& p, index_t o0, index_t o1) {
  index_t lo = o0 * p.stride_h - p.pad_h;
  index_t hi = (o1 - 1) * p.stride_h - p.pad_h + depthwise_span_h(p);
  if (lo < 0) lo = 0;
  if (hi > p.in_h) hi = p.in_h;
  return {lo, hi > lo ? hi : lo};
}

// One channel of a band (q: one plane), by the kernel conv_depthwise_in_place would take for the
// whole plane where that one reads a band as well: AVX-512's 3x3 stride-2 kernel, else the rows
// kernel (AVX2, AVX-512: any stride-1 or -2 band; the flat planes, the in-place kernel's choice
// for 'same' stride-1 planes, need the whole plane), else the in-place kernel itself (on AArch64
// depthwise_rows_neon.h, which reads bands too).
constexpr index_t kZeroRowFloats = 1024;
inline void band_plane(const ConvParams& q, const float* xc, const float* wc, const float* bias, float* yc,
                       const float* zero_row, const Epilogue& e) {
#if defined(ONNXC_DEPTHWISE_STRIDE2)
  if (depthwise_stride2_detail::applies(q)) return depthwise_stride2_detail::planes(q, xc, wc, bias, yc, {0, 1}, e);
#endif
#if defined(ONNXC_DEPTHWISE_ROWS)
  if (depthwise_rows_detail::applies(q) && q.in_w <= kZeroRowFloats) {
    const float b = bias ? *bias : 0.0f;
    if (q.stride_w == 1) return depthwise_rows_detail::plane<1>(q, xc, wc, b, yc, zero_row, e);
    return depthwise_rows_detail::plane<2>(q, xc, wc, b, yc, zero_row, e);
  }
#endif
  (void)zero_row;
  conv_depthwise_in_place(q, xc, wc, bias, yc, e);
}

#if defined(ONNXC_SIMD)
// A band of 'same' stride-1 planes (depthwise_in_place_detail::uses_flat_plane: the whole
// plane's kernel) the same way: output rows [o0, o0 + count / in_w) of every channel from the
// buffered rows [lo, lo + q.in_h) (channel c at expanded + c * buffer_plane), out(c) their
// destination. The taps' offsets are shifted by the rows buffered above the band's first.
template <int K, class Out>
inline void flat_band(const ConvParams& q, index_t above, const float* expanded, index_t buffer_plane,
                      const float* w, const float* bias, index_t count, const Out& out, const Epilogue& e) {
  using namespace depthwise_in_place_detail;
  const index_t taps_count = K ? K * K : q.k_h * q.k_w;
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  FlatTaps<K> taps;
  flat_taps_of<K>(q, above * q.in_w, taps);
  for (index_t ch = 0; ch < q.in_channels; ++ch) {
    vfloat wv[FlatTaps<K>::kTaps];
    for (index_t t = 0; t < taps_count; ++t) wv[t] = vfloat(w[ch * taps_count + t]);
    float* yc = out(ch);
    flat_plane_outputs<K>(q, taps, expanded + ch * buffer_plane, wv, bias ? bias[ch] : 0.0f, count, yc, c);
    if (!activates_in_registers(e)) activate_row(e, yc, count);
  }
}
#endif

// Depthwise output rows [first, last) of one image (x: its input, y: its output), band by band
// in `slot`.
inline void image_rows(const FusedBlockParams& f, const FusedBlockOperands& o, const FusedBlockEpilogues& e,
                       const float* x, float* y, index_t first, index_t last, float* slot) {
  const ConvParams& p = f.depthwise;
  const index_t channels = p.in_channels, taps = p.k_h * p.k_w;
  const index_t width = p.in_w, plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const index_t buffer_rows = fused_block_band_rows(p, f.band), buffer_plane = buffer_rows * width;
  float* expanded = slot;
  float* depthwise = slot + channels * buffer_plane;  // with a projection: [channels][band][out_w]
  index_t have_lo = 0, have_hi = 0;                 // the input rows in the buffer, row have_lo first
  alignas(64) float zero_row[kZeroRowFloats] = {};
#if defined(ONNXC_DEPTHWISE_NEON)
  // AArch64: band_plane's in-place kernel (depthwise_rows_neon.h) for 'same' stride-1 planes too.
  const bool flat = !depthwise_neon_detail::applies(p) && depthwise_in_place_detail::uses_flat_plane(p);
#elif defined(ONNXC_SIMD)
  const bool flat = depthwise_in_place_detail::uses_flat_plane(p);
#endif
  for (index_t o0 = first; o0 < last; o0 += f.band) {
    const index_t o1 = last - o0 < f.band ? last : o0 + f.band;
    const Range rows = input_rows(p, o0, o1);
    // Keep the buffered rows this band reads again, moved to the buffer's start.
    if (rows.begin >= have_hi || rows.begin < have_lo) {
      have_lo = have_hi = rows.begin;
    } else if (rows.begin > have_lo) {
      const index_t keep = (have_hi - rows.begin) * width, shift = (rows.begin - have_lo) * width;
      for (index_t c = 0; c < channels; ++c) {
        float* at = expanded + c * buffer_plane;
        for (index_t i = 0; i < keep; ++i) at[i] = at[i + shift];
      }
      have_lo = rows.begin;
    }
    if (rows.end > have_hi) {
      packed_gemm(channels, (rows.end - have_hi) * width, f.in_channels, o.expand_w, x + have_hi * width, plane,
                  expanded + (have_hi - have_lo) * width, buffer_plane, o.expand_bias, e.expand);
      have_hi = rows.end;
    }
    // The band as a Conv of its own: the buffered rows are its input, the padding above them
    // the rows above the input's first (none below the first band).
    auto out = [&](index_t c) {
      return f.out_channels ? depthwise + c * f.band * p.out_w : y + c * out_plane + o0 * p.out_w;
    };
    ConvParams q = p;
    q.in_h = rows.end - rows.begin;
#if defined(ONNXC_SIMD)
    if (flat) {
      const index_t above = o0 - rows.begin, count = (o1 - o0) * p.out_w;
      if (p.k_h == 3 && p.k_w == 3)
        flat_band<3>(q, above, expanded, buffer_plane, o.depthwise_w, o.depthwise_bias, count, out, e.depthwise);
      else if (p.k_h == 5 && p.k_w == 5)
        flat_band<5>(q, above, expanded, buffer_plane, o.depthwise_w, o.depthwise_bias, count, out, e.depthwise);
      else
        flat_band<0>(q, above, expanded, buffer_plane, o.depthwise_w, o.depthwise_bias, count, out, e.depthwise);
    } else
#endif
    {
      q.batch = q.in_channels = q.out_channels = q.group = 1;
      q.out_h = o1 - o0;
      q.pad_h = rows.begin - (o0 * p.stride_h - p.pad_h);
      for (index_t c = 0; c < channels; ++c)
        band_plane(q, expanded + c * buffer_plane, o.depthwise_w + c * taps,
                   o.depthwise_bias ? o.depthwise_bias + c : nullptr, out(c), zero_row, e.depthwise);
    }
    if (!f.out_channels) continue;
    const index_t cols = (o1 - o0) * p.out_w;
    float* yb = y + o0 * p.out_w;
    packed_gemm(f.out_channels, cols, channels, o.project_w, depthwise, f.band * p.out_w, yb, out_plane,
                o.project_bias, e.project);
    if (!o.residual) continue;
    const float* rb = o.residual + o0 * p.out_w;
    for (index_t c = 0; c < f.out_channels; ++c) {
      const float* rc = rb + c * out_plane;
      float* yc = yb + c * out_plane;
      for (index_t i = 0; i < cols; ++i) yc[i] += rc[i];
    }
  }
}

}  // namespace fused_block_detail

// The block over every image. scratch: fused_block_scratch_floats(f) floats. With a parallel-for
// the depthwise output rows are cut into f.tasks ranges, each computed band by band in its own
// slot (a task's first band computes its rows above anew).
inline void fused_block(const FusedBlockParams& f, const float* x, const FusedBlockOperands& o,
                        const FusedBlockEpilogues& e, float* y, float* scratch, Parallel parallel = nullptr) {
  const ConvParams& p = f.depthwise;
  const index_t in_image = f.in_channels * p.in_h * p.in_w;
  const index_t out_image = (f.out_channels ? f.out_channels : p.in_channels) * p.out_h * p.out_w;
  const index_t slot_floats = fused_block_slot_floats(f);
  for (index_t b = 0; b < p.batch; ++b) {
    FusedBlockOperands ob = o;
    if (o.residual) ob.residual = o.residual + b * out_image;
    const float* xb = x + b * in_image;
    float* yb = y + b * out_image;
    if (!parallel || f.tasks < 2) {
      fused_block_detail::image_rows(f, ob, e, xb, yb, 0, p.out_h, scratch);
      continue;
    }
    parallel_for(parallel, f.tasks, [&](index_t t) {
      const Range rows = part_of(p.out_h, f.tasks, t);
      if (rows.end > rows.begin)
        fused_block_detail::image_rows(f, ob, e, xb, yb, rows.begin, rows.end, scratch + t * slot_floats);
    });
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_FUSED_BLOCK_H
