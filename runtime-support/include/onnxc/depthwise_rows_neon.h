// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise convolution on AArch64 NEON, read in place (no scratch): any kernel size, dilation and
// padding, any stride; 3x3 and 5x5 kernels of stride 1 or 2 (dilation 1) in register tiles whose
// taps are unrolled at compile time. Included by conv.h (which defines ConvParams and
// DepthwisePlane); conv_depthwise and conv_depthwise_in_place take it on AArch64 wherever
// applies(p).
//
// Output columns are in the lanes. A tile is R output rows x V vectors of 4 columns: the R rows'
// (R - 1) * S + K input rows are each read once per tile, and every vector loaded from one feeds
// the FMLA (by element: the kernel's weights stay in K * K / 4 registers) of each output row whose
// window holds that input row, so a 3x3 stride-1 tile of 4 rows loads 6 x 3 vectors for 36 FMLA.
// Stride 2 loads with LD2, whose two registers are the even and the odd columns: one load serves
// two kernel columns. A tile whose reads all lie in the input row reads it in place; one that
// reaches past either end of the row (the borders, a row's last partial vector) reads its input
// rows from a strip on the stack, zero outside the row; an input row above or below the plane is a
// row of zeros. Other kernels (any size, dilation, stride) take a tile of one row whose taps are
// loops, broadcasting each weight. Tested against rt::conv (tests/unit/depthwise_phases_test.cpp,
// cross-built: unit.neon).
#ifndef ONNXC_DEPTHWISE_ROWS_NEON_H
#define ONNXC_DEPTHWISE_ROWS_NEON_H

#include <limits>
#include <utility>
#if defined(ONNXC_SIMD) && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace onnxc {
namespace rt {
namespace depthwise_neon_detail {

constexpr index_t kStripFloats = 96;  // a tile's reads of one input row (a strip, the zero row)
constexpr int kTileRows = 4, kTileVectors = 2;
constexpr index_t kMaxTileInputRows = 16;  // (R - 1) * S + K of the fixed tiles, k_h of the loop tile

// The columns a tile of `vectors` vectors reads from its first input column on (LD2's last load
// reads one column past the last even one).
inline index_t span_of(const ConvParams& p, index_t vectors) {
  return 4 * vectors * p.stride_w + (p.k_w - 1) * p.dilation_w + (p.stride_w == 2 ? 1 : 0);
}

inline bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.k_h <= kMaxTileInputRows &&
         span_of(p, kTileVectors) <= kStripFloats;
}

#if defined(ONNXC_SIMD) && defined(__aarch64__)
#define ONNXC_DEPTHWISE_NEON 1  // conv_depthwise(_in_place) take depthwise_neon_detail

struct Clamp {
  bool clamps;
  float32x4_t lo, hi;
};

// Columns [0, cols) of v stored at y (cols < 4).
ONNXC_INLINE void store_part(float32x4_t v, float* y, index_t cols) {
  if (cols >= 2) {
    vst1_f32(y, vget_low_f32(v));
    if (cols == 3) vst1q_lane_f32(y + 2, v, 2);
  } else {
    vst1q_lane_f32(y, v, 0);
  }
}

template <int R, int V>
ONNXC_INLINE void store_tile(float32x4_t (&acc)[R][V], float* y, index_t out_w, index_t cols, const Clamp& c) {
  ONNXC_UNROLL for (int r = 0; r < R; ++r) {
    ONNXC_UNROLL for (int v = 0; v < V; ++v) {
      float32x4_t o = acc[r][v];
      if (c.clamps) o = vminq_f32(vmaxq_f32(o, c.lo), c.hi);
      if (v + 1 < V || cols == 4) vst1q_f32(y + r * out_w + 4 * v, o);
      else store_part(o, y + r * out_w + 4 * v, cols);
    }
  }
}

// One kernel column pair's taps (S = 2: columns 2Q and 2Q + 1 from one LD2; S = 1: column Q) of
// input row I of a fixed tile: the multiply-adds of each output row r whose kernel row I - r * S
// lies in the kernel.
template <int S, int K, int R, int V, int I, int Q>
ONNXC_INLINE void fixed_taps(const float* row, const float32x4_t* w, float32x4_t (&acc)[R][V]) {
  ONNXC_UNROLL for (int v = 0; v < V; ++v) {
    float32x4_t x0, x1;
    if (S == 1) {
      x0 = vld1q_f32(row + Q + 4 * v);
      x1 = x0;
    } else {
      const float32x4x2_t xx = vld2q_f32(row + 2 * Q + 8 * v);
      x0 = xx.val[0], x1 = xx.val[1];
    }
    constexpr int kw0 = S == 1 ? Q : 2 * Q;
    ONNXC_UNROLL for (int r = 0; r < R; ++r) {
      const int kh = I - r * S;
      if (kh < 0 || kh >= K) continue;
      // The lanes are constants after unrolling; spelled out so that no compiler needs it to.
      switch ((kh * K + kw0) % 4) {
        case 0: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 0); break;
        case 1: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 1); break;
        case 2: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 2); break;
        default: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 3); break;
      }
      if (S == 2 && kw0 + 1 < K) {
        const int t = kh * K + kw0 + 1;
        switch (t % 4) {
          case 0: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 0); break;
          case 1: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 1); break;
          case 2: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 2); break;
          default: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 3); break;
        }
      }
    }
  }
}

template <int S, int K, int R, int V, int... T>
ONNXC_INLINE void fixed_all_taps(const float* const* in, const float32x4_t* w, float32x4_t (&acc)[R][V],
                                 std::integer_sequence<int, T...>) {
  constexpr int kPairs = S == 1 ? K : (K + 1) / 2;
  (fixed_taps<S, K, R, V, T / kPairs, T % kPairs>(in[T / kPairs], w, acc), ...);
}

// A fixed tile: output rows [0, R) x columns [0, 4 V) from input rows in[0 .. (R - 1) S + K),
// each pointing at the tile's first input column.
template <int S, int K, int R, int V>
inline void fixed_tile(const float* const* in, const float32x4_t* w, float bias, float* y, index_t out_w, index_t cols,
                       const Clamp& c) {
  float32x4_t acc[R][V];
  ONNXC_UNROLL for (int r = 0; r < R; ++r) ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[r][v] = vdupq_n_f32(bias);
  constexpr int kPairs = S == 1 ? K : (K + 1) / 2;
  fixed_all_taps<S, K, R, V>(in, w, acc, std::make_integer_sequence<int, ((R - 1) * S + K) * kPairs>{});
  store_tile<R, V>(acc, y, out_w, cols, c);
}

// The loop tile: one output row, columns [0, 4 V), kernel row kh from in[kh].
template <int V>
inline void loop_tile(const ConvParams& p, const float* const* in, const float* wc, float bias, float* y, index_t cols,
                      const Clamp& c) {
  float32x4_t acc[1][V];
  ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[0][v] = vdupq_n_f32(bias);
  const index_t s = p.stride_w;
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const float wv = wc[kh * p.k_w + kw];
      const float* at = in[kh] + kw * p.dilation_w;
      ONNXC_UNROLL for (int v = 0; v < V; ++v) {
        const float* a = at + 4 * v * s;
        float32x4_t x;
        if (s == 1) {
          x = vld1q_f32(a);
        } else if (s == 2) {
          x = vld2q_f32(a).val[0];
        } else {
          const float lanes[4] = {a[0], a[s], a[2 * s], a[3 * s]};
          x = vld1q_f32(lanes);
        }
        acc[0][v] = vfmaq_n_f32(acc[0][v], x, wv);
      }
    }
  store_tile<1, V>(acc, y, p.out_w, cols, c);
}

// Input row ih of plane xc from column c0 on, `span` columns: the row itself where they all lie
// in it, else a copy in `strip` zero outside the row; a row outside the plane is the zero row.
inline const float* tile_row(const ConvParams& p, const float* xc, index_t ih, index_t c0, index_t span,
                             const float* zero_row, float* strip) {
  if (ih < 0 || ih >= p.in_h) return zero_row;
  const float* row = xc + ih * p.in_w;
  if (c0 >= 0 && c0 + span <= p.in_w) return row + c0;
  for (index_t j = 0; j < span; ++j) {
    const index_t col = c0 + j;
    strip[j] = col >= 0 && col < p.in_w ? row[col] : 0.0f;
  }
  return strip;
}

struct Plane {
  const float* x;
  const float* w;
  float bias;
  float* y;
};

// Output rows [oh, oh + R) of a fixed plane (S, K: stride and kernel, dilation 1).
template <int S, int K, int R>
inline void fixed_rows(const ConvParams& p, const Plane& d, const float32x4_t* w, index_t oh, const float* zero_row,
                       float* strips, const Clamp& c) {
  constexpr int kIn = (R - 1) * S + K;
  const index_t ih0 = oh * S - p.pad_h;
  const float* in[kIn];
  float* y = d.y + oh * p.out_w;
  for (index_t ow = 0; ow < p.out_w; ow += 4 * kTileVectors) {
    const index_t left = p.out_w - ow;
    const index_t vectors = left >= 4 * kTileVectors ? kTileVectors : (left + 3) / 4;
    const index_t cols = left >= 4 * kTileVectors ? 4 : left - 4 * (vectors - 1);
    const index_t c0 = ow * S - p.pad_w, span = span_of(p, vectors);
    for (int i = 0; i < kIn; ++i) in[i] = tile_row(p, d.x, ih0 + i, c0, span, zero_row, strips + i * kStripFloats);
    if (vectors == kTileVectors) fixed_tile<S, K, R, kTileVectors>(in, w, d.bias, y + ow, p.out_w, cols, c);
    else fixed_tile<S, K, R, 1>(in, w, d.bias, y + ow, p.out_w, cols, c);
  }
}

template <int S, int K>
inline void fixed_plane(const ConvParams& p, const Plane& d, const float* zero_row, float* strips, const Clamp& c) {
  constexpr int kWeightVectors = (K * K + 3) / 4;
  float wpad[4 * kWeightVectors] = {};
  for (int t = 0; t < K * K; ++t) wpad[t] = d.w[t];
  float32x4_t w[kWeightVectors];
  for (int q = 0; q < kWeightVectors; ++q) w[q] = vld1q_f32(wpad + 4 * q);
  index_t oh = 0;
  for (; oh + kTileRows <= p.out_h; oh += kTileRows) fixed_rows<S, K, kTileRows>(p, d, w, oh, zero_row, strips, c);
  if (oh + 2 <= p.out_h) {
    fixed_rows<S, K, 2>(p, d, w, oh, zero_row, strips, c);
    oh += 2;
  }
  if (oh < p.out_h) fixed_rows<S, K, 1>(p, d, w, oh, zero_row, strips, c);
}

inline void loop_plane(const ConvParams& p, const Plane& d, const float* zero_row, float* strips, const Clamp& c) {
  const float* in[kMaxTileInputRows];
  for (index_t oh = 0; oh < p.out_h; ++oh) {
    float* y = d.y + oh * p.out_w;
    for (index_t ow = 0; ow < p.out_w; ow += 4 * kTileVectors) {
      const index_t left = p.out_w - ow;
      const index_t vectors = left >= 4 * kTileVectors ? kTileVectors : (left + 3) / 4;
      const index_t cols = left >= 4 * kTileVectors ? 4 : left - 4 * (vectors - 1);
      const index_t c0 = ow * p.stride_w - p.pad_w, span = span_of(p, vectors);
      for (index_t kh = 0; kh < p.k_h; ++kh)
        in[kh] = tile_row(p, d.x, oh * p.stride_h - p.pad_h + kh * p.dilation_h, c0, span, zero_row,
                          strips + kh * kStripFloats);
      if (vectors == kTileVectors) loop_tile<kTileVectors>(p, in, d.w, d.bias, y + ow, cols, c);
      else loop_tile<1>(p, in, d.w, d.bias, y + ow, cols, c);
    }
  }
}

// The planes [range) (images x channels). No scratch: the zero row and the strips are on the
// stack (6.5 KB).
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   const Epilogue& e) {
  float zero_row[kStripFloats] = {};
  float strips[kMaxTileInputRows * kStripFloats];
  const bool clamps = packed_gemm_detail::is_clamp(e) && e.activation != Activation::None;
  const float inf = std::numeric_limits<float>::infinity();
  const Clamp c{clamps, vdupq_n_f32(e.activation == Activation::Clip ? e.alpha : e.activation == Activation::Relu ? 0.0f : -inf),
                vdupq_n_f32(e.activation == Activation::Clip ? e.beta : inf)};
  const bool dense = p.dilation_h == 1 && p.dilation_w == 1 && p.k_h == p.k_w && p.stride_h == p.stride_w;
  for (index_t i = range.begin; i < range.end; ++i) {
    const DepthwisePlane dp = depthwise_plane(p, i, x, w, bias, y);
    const Plane d{dp.x, dp.w, dp.bias, dp.y};
    if (dense && p.k_h == 3 && p.stride_w == 1) fixed_plane<1, 3>(p, d, zero_row, strips, c);
    else if (dense && p.k_h == 3 && p.stride_w == 2) fixed_plane<2, 3>(p, d, zero_row, strips, c);
    else if (dense && p.k_h == 5 && p.stride_w == 1) fixed_plane<1, 5>(p, d, zero_row, strips, c);
    else if (dense && p.k_h == 5 && p.stride_w == 2) fixed_plane<2, 5>(p, d, zero_row, strips, c);
    else loop_plane(p, d, zero_row, strips, c);
    if (!packed_gemm_detail::is_clamp(e)) activate_row(e, d.y, p.out_h * p.out_w);
  }
}

#endif  // ONNXC_SIMD && __aarch64__

}  // namespace depthwise_neon_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEPTHWISE_ROWS_NEON_H
